// SPDX-License-Identifier: BSD-3-Clause
// Test helpers for the POSIX port: a private temporary directory removed (recursively) at scope exit.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <ftw.h>
#include <string>
#include <unistd.h>

namespace posix_test {

class temp_dir {
 public:
  temp_dir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base != nullptr && base[0] != '\0' ? base : "/tmp") + "/tessera-posix-XXXXXX";
    if (mkdtemp(templ.data()) != nullptr) path_ = templ;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    if (!path_.empty()) {
      nftw(path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return std::remove(p); }, 16,
           FTW_DEPTH | FTW_PHYS);
    }
  }
  [[nodiscard]] bool ok() const { return !path_.empty(); }
  [[nodiscard]] std::string file(const char* name) const { return path_ + "/" + name; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace posix_test
