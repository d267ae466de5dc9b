// SPDX-License-Identifier: BSD-3-Clause
// The main of a fuzzer built without libFuzzer (every gcc build, every Linux target): runs each file named on the
// command line, and each file of each directory named, through LLVMFuzzerTestOneInput, so the corpora (and the
// golden files) are regression tests under ctest. Each input is also run truncated (empty, one byte, half, all
// but the last byte): cheap extra cases from every seed.
// A path that does not exist, or a directory without files, fails the run: a missing corpus must not pass.
// An invariant the fuzzer checks traps (the process dies, ctest reports the failure); the log's last
// "replay: <file>" line names the input.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool read_file(const std::string& path, std::vector<uint8_t>& out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  out.clear();
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  const bool ok = std::ferror(f) == 0;
  std::fclose(f);
  return ok;
}

// Runs `size` bytes from a heap block of exactly that size, so ASan sees any read past the input.
void run_one(const uint8_t* data, size_t size) {
  auto* copy = static_cast<uint8_t*>(std::malloc(size == 0 ? 1 : size));
  if (copy == nullptr) std::abort();
  if (size > 0) std::memcpy(copy, data, size);
  (void)LLVMFuzzerTestOneInput(size == 0 ? nullptr : copy, size);
  std::free(copy);
}

size_t g_inputs = 0;

bool replay_file(const std::string& path) {
  std::vector<uint8_t> data;
  if (!read_file(path, data)) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return false;
  }
  std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), data.size());
  run_one(data.data(), data.size());
  ++g_inputs;
  const size_t n = data.size();
  const size_t cuts[] = {0, 1, n / 2, n - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
    if (n == 0 || cuts[i] >= n || (i > 0 && cuts[i] == cuts[i - 1])) continue;
    run_one(data.data(), cuts[i]);
    ++g_inputs;
  }
  return true;
}

bool is_directory(const std::string& path, bool* exists) {
  struct stat st;
  *exists = ::stat(path.c_str(), &st) == 0;
  return *exists && S_ISDIR(st.st_mode);
}

bool replay_path(const std::string& path, size_t* files) {
  bool exists = false;
  if (!is_directory(path, &exists)) {
    if (!exists) {
      std::fprintf(stderr, "replay: %s does not exist\n", path.c_str());
      return false;
    }
    ++*files;
    return replay_file(path);
  }
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) {
    std::fprintf(stderr, "replay: cannot open the directory %s\n", path.c_str());
    return false;
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;  // ., .. and hidden files (e.g. an editor's)
    names.emplace_back(e->d_name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  size_t here = 0;
  bool ok = true;
  for (const std::string& name : names) {
    const std::string child = path + "/" + name;
    bool child_exists = false;
    if (is_directory(child, &child_exists)) continue;  // corpora are flat
    ++here;
    ok = replay_file(child) && ok;
  }
  if (here == 0) {
    std::fprintf(stderr, "replay: no files in %s\n", path.c_str());
    return false;
  }
  *files += here;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIRECTORY...\n", argv[0]);
    return 2;
  }
  size_t files = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) ok = replay_path(argv[i], &files) && ok;
  std::printf("replay: %zu inputs from %zu files%s\n", g_inputs, files, ok ? "" : "; some paths FAILED");
  return ok ? 0 : 1;
}
