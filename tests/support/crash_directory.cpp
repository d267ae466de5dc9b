// SPDX-License-Identifier: BSD-3-Clause
// The directory crash model (crash_directory.hpp).
#include "crash_directory.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "tessera/frame.hpp"

#include "test_allocators.hpp"

namespace crash_model {

using tessera::bytes_mut;
using tessera::bytes_view;
using tessera::errc;
using tessera::make_error;
using tessera::ok_status;
using tessera::status;
using tessera::storage;
using tessera::storage_open;

namespace {

constexpr size_t kMaxViolations = 256;
constexpr uint32_t kMissing = UINT32_MAX;

void put_u64(bytes& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_bytes(bytes& out, const uint8_t* p, size_t n) {
  put_u64(out, n);
  out.insert(out.end(), p, p + n);
}
bool get_u64(const bytes& in, size_t& at, uint64_t* v) {
  if (in.size() - at < 8 || at > in.size()) return false;
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x |= static_cast<uint64_t>(in[at + static_cast<size_t>(i)]) << (8 * i);
  at += 8;
  *v = x;
  return true;
}

bool name_ok(const char* name) {
  if (name == nullptr || name[0] == '\0') return false;
  const size_t n = std::strlen(name);
  return n <= tessera::kStorageNameMax && std::strchr(name, '/') == nullptr;
}

const char* mode_name(storage_open m) {
  switch (m) {
    case storage_open::read: return "read";
    case storage_open::read_write: return "read_write";
    case storage_open::replace: return "replace";
  }
  return "?";
}

// ---- The read-only directory over entries ------------------------------------------------------------------

status ed_open(void* c, const char* name, storage_open mode, storage* out) noexcept {
  if (out == nullptr) return make_error(errc::invalid_argument, "entries directory: no storage");
  *out = storage{};
  const auto* e = static_cast<const entries*>(c);
  if (mode != storage_open::read) return make_error(errc::read_only, "entries directory: read-only");
  if (name == nullptr) return make_error(errc::invalid_argument, "entries directory: no name");
  auto it = e->find(name);
  if (it == e->end()) return make_error(errc::io, "entries directory: no such entry");
  *out = image_storage(&it->second);
  return ok_status();
}
status ed_close(void*, storage* s) noexcept {
  if (s != nullptr) *s = storage{};
  return ok_status();
}
status ed_remove(void*, const char*) noexcept { return make_error(errc::read_only, "entries directory: read-only"); }
status ed_rename(void*, const char*, const char*) noexcept {
  return make_error(errc::read_only, "entries directory: read-only");
}
status ed_list(void* c, tessera::storage_directory_visit visit, void* arg) noexcept {
  const auto* e = static_cast<const entries*>(c);
  for (const auto& kv : *e) {
    const status s = visit(arg, kv.first.c_str());
    if (!s.ok()) return s;
  }
  return ok_status();
}

// The sparse frame whose chunks.b2frame is e's: its referenced names (chunks.b2frame first), each chunk read
// through e (its header gives the chunk's size). error set when it does not open or a chunk is not located.
struct frame_names {
  bool opened = false;
  std::string error;
  std::vector<std::string> names;
};
frame_names sparse_names_of(const entries& e) {
  frame_names out;
  const tessera::storage_directory dir = entries_directory(&e);
  tessera::frame f;
  const status s = tessera::frame_open_sparse(f, dir, tessera::test::system_allocator());
  if (!s.ok()) {
    out.error = s.message;
    return out;
  }
  out.opened = true;
  out.names.push_back(tessera::kSparseIndexName);
  const tessera::frame_info* info = tessera::frame_info_get(f);
  for (int64_t i = 0; info != nullptr && i < info->nchunks; ++i) {
    auto r = tessera::frame_chunk_locate(f, i);
    if (!r.ok()) {
      out.error = "chunk " + std::to_string(i) + " not located: " + r.err().message;
      return out;
    }
    if (r->special != tessera::chunk_special::none) continue;
    char name[16];
    if (!tessera::frame_sparse_chunk_name(r->offset, name, sizeof name).ok()) {
      out.error = "chunk " + std::to_string(i) + ": no entry name for " + std::to_string(r->offset);
      return out;
    }
    out.names.push_back(name);
  }
  return out;
}

}  // namespace

// ---- Images ----------------------------------------------------------------------------------------------------

bytes entries_image(const entries& e) {
  bytes out;
  size_t total = 8;
  for (const auto& kv : e) total += 16 + kv.first.size() + kv.second.size();
  out.reserve(total);
  put_u64(out, e.size());
  for (const auto& kv : e) {
    put_bytes(out, reinterpret_cast<const uint8_t*>(kv.first.data()), kv.first.size());
    put_bytes(out, kv.second.data(), kv.second.size());
  }
  return out;
}

entries image_entries(const bytes& image) {
  entries e;
  size_t at = 0;
  uint64_t n = 0;
  if (!get_u64(image, at, &n)) return {};
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t len = 0;
    if (!get_u64(image, at, &len) || len > image.size() - at) return {};
    std::string name(reinterpret_cast<const char*>(image.data() + at), static_cast<size_t>(len));
    at += static_cast<size_t>(len);
    if (!get_u64(image, at, &len) || len > image.size() - at) return {};
    e[name] = bytes(image.begin() + static_cast<std::ptrdiff_t>(at), image.begin() + static_cast<std::ptrdiff_t>(at + len));
    at += static_cast<size_t>(len);
  }
  return e;
}

tessera::storage_directory entries_directory(const entries* e) noexcept {
  return tessera::storage_directory{ed_open, ed_close, ed_remove, ed_rename, const_cast<entries*>(e), ed_list};
}

bool is_chunk_name(const std::string& name) noexcept {
  if (name.size() != 14 || name.compare(8, 6, ".chunk") != 0) return false;
  for (int i = 0; i < 8; ++i) {
    const char c = name[static_cast<size_t>(i)];
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

const char* dir_call_name(dir_call k) noexcept {
  switch (k) {
    case dir_call::open: return "open";
    case dir_call::close: return "close";
    case dir_call::remove: return "remove";
    case dir_call::rename: return "rename";
    case dir_call::list: return "list";
    case dir_call::read: return "read";
    case dir_call::write: return "write";
    case dir_call::size: return "size";
    case dir_call::truncate: return "truncate";
    case dir_call::sync: return "sync";
  }
  return "?";
}

// ---- The directory ---------------------------------------------------------------------------------------------

tessera::storage_directory crash_directory::directory() noexcept {
  return tessera::storage_directory{cb_open, cb_close, cb_remove, cb_rename, this, cb_list};
}

uint64_t crash_directory::version() const noexcept {
  uint64_t v = version_;
  for (const auto& f : files_) v += f->version();
  return v;
}

entries crash_directory::visible() const {
  entries e;
  for (const auto& kv : visible_) e[kv.first] = files_[kv.second]->visible();
  return e;
}

entries crash_directory::durable() const {
  entries e;
  for (const auto& kv : durable_) e[kv.first] = files_[kv.second]->durable();
  return e;
}

uint32_t crash_directory::new_file(bytes durable) {
  const auto f = static_cast<uint32_t>(files_.size());
  auto pc = std::make_unique<page_cache>(std::move(durable));
  page_cache* raw = pc.get();
  // The file's own calls go through the directory's counter, faults and checks.
  pc->on_call = [this, f, raw](uint64_t n, call_kind kind) {
    const bool fail = file_tick(f, kind);
    raw->faults.fail_calls.clear();
    if (fail) raw->faults.fail_calls.push_back(n);
  };
  file_of_[raw] = f;
  files_.push_back(std::move(pc));
  open_count_.push_back(0);
  return f;
}

void crash_directory::put_durable(const std::string& name, const bytes& content) {
  const uint32_t f = new_file(content);
  visible_[name] = f;
  durable_[name] = f;
  ++version_;
  durable_changed();
}

void crash_directory::restart() {
  if (open_total_ != 0) violation("restart with " + std::to_string(open_total_) + " storages still open");
  visible_ = durable_;
  pending_.clear();
  for (auto& f : files_) f->restart();
  ++version_;
  durable_changed();
}

void crash_directory::durable_changed() noexcept {
  durable_parsed_ = false;
  ++version_;
}

std::string crash_directory::names_of(uint32_t f) const {
  std::string s;
  for (const auto& kv : visible_)
    if (kv.second == f) s += (s.empty() ? "" : ", ") + kv.first;
  for (const auto& kv : durable_)
    if (kv.second == f && (visible_.count(kv.first) == 0 || visible_.at(kv.first) != f))
      s += (s.empty() ? "" : ", ") + kv.first + " (durable name)";
  return "file " + std::to_string(f) + (s.empty() ? " (no name)" : " (" + s + ")");
}

void crash_directory::violation(const std::string& text) {
  if (violations_.size() == kMaxViolations) {
    violations_.push_back("(further violations not recorded)");
    return;
  }
  if (violations_.size() > kMaxViolations) return;
  violations_.push_back("call " + std::to_string(current_call_) + ": " + text);
}

bool crash_directory::tick(dir_call kind, const std::string& what, bool as_sync) {
  if (paused) return true;
  const uint64_t n = ++calls_;
  current_call_ = n;
  if (on_call) on_call(n, kind);
  bool fail = false;
  fail_as_sync_ = false;
  if (faults.fail_from != 0 && n >= faults.fail_from) {
    fail = true;
    crashed_ = true;
  }
  for (uint64_t c : faults.fail_calls) fail = fail || c == n;
  if (as_sync) {
    ++syncs_;
    for (uint64_t c : faults.fail_syncs)
      if (c == syncs_) {
        fail = true;
        fail_as_sync_ = true;
      }
  }
  if (fail) ++failed_;
  if (trace)
    std::fprintf(stderr, "crash dir: call %llu %s %s%s%s\n", static_cast<unsigned long long>(n), dir_call_name(kind),
                 what.c_str(), as_sync ? (" sync " + std::to_string(syncs_)).c_str() : "", fail ? " FAILS" : "");
  return !fail;
}

crash_directory::failure_effect crash_directory::failure_effect_now() const noexcept {
  if (fail_as_sync_) return syncs_ % 2 == 1 ? failure_effect::dropped : failure_effect::pending;
  switch (current_call_ % 3) {
    case 0: return failure_effect::none;
    case 1: return failure_effect::pending;
    default: return failure_effect::dropped;
  }
}

bool crash_directory::file_tick(uint32_t f, call_kind kind) {
  if (paused) return false;
  dir_call k = dir_call::read;
  switch (kind) {
    case call_kind::read: k = dir_call::read; break;
    case call_kind::write: k = dir_call::write; break;
    case call_kind::size: k = dir_call::size; break;
    case call_kind::truncate: k = dir_call::truncate; break;
    case call_kind::sync: k = dir_call::sync; break;
  }
  const bool ok = tick(k, trace ? names_of(f) : std::string(), k == dir_call::sync);
  if (checks_ && (k == dir_call::write || k == dir_call::truncate)) check_file_write(f, k);
  if (k == dir_call::sync) {
    if (ok) {
      // The file's creation becomes durable with its content (storage_directory::open's contract), and with it
      // every namespace operation before it.
      size_t last = pending_.size();
      for (size_t i = 0; i < pending_.size(); ++i)
        if (pending_[i].k == ns_op::kind::link && pending_[i].file == f) last = i;
      if (last < pending_.size()) durable_through(last);
      durable_changed();  // the file's content (synced right after this)
    } else {
      ++lossy_;
    }
  }
  return !ok;
}

void crash_directory::apply(std::map<std::string, uint32_t>& names, const ns_op& op) const {
  switch (op.k) {
    case ns_op::kind::link: names[op.name] = op.file; break;
    case ns_op::kind::unlink: {
      auto it = names.find(op.name);
      if (it != names.end() && it->second == op.file) names.erase(it);
      break;
    }
    case ns_op::kind::rename: {
      auto it = names.find(op.name);
      if (it != names.end() && it->second == op.file) names.erase(it);
      names[op.to] = op.file;
      break;
    }
  }
}

void crash_directory::durable_through(size_t k) {
  for (size_t i = 0; i <= k && i < pending_.size(); ++i) apply(durable_, pending_[i]);
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(std::min(k + 1, pending_.size())));
  durable_changed();
}

// ---- Callbacks ---------------------------------------------------------------------------------------------------

status crash_directory::cb_open(void* c, const char* name, storage_open mode, storage* out) noexcept {
  auto* d = static_cast<crash_directory*>(c);
  if (out == nullptr) return make_error(errc::invalid_argument, "crash directory: no storage to open into");
  *out = storage{};
  if (!name_ok(name)) return make_error(errc::invalid_argument, "crash directory: bad entry name");
  const std::string n(name);
  auto it = d->visible_.find(n);
  const bool exists = it != d->visible_.end();
  const bool creating = mode == storage_open::replace && !exists;
  const bool ok = d->tick(dir_call::open, n + " " + mode_name(mode), creating);
  if (mode == storage_open::replace && exists && d->checks_ && !d->paused) {
    // Replace empties the file: a write of it.
    d->check_file_write(it->second, dir_call::truncate);
  }
  const failure_effect fx = ok ? failure_effect::none : d->failure_effect_now();
  const bool effect = ok || fx != failure_effect::none;
  if (!ok && !effect) return make_error(errc::io, "crash directory: injected open failure (nothing done)");
  if (mode != storage_open::replace && !exists) return ok ? make_error(errc::io, "crash directory: no such entry")
                                                           : make_error(errc::io, "crash directory: injected open failure");
  uint32_t f = 0;
  if (creating) {
    f = d->new_file(bytes{});
    d->visible_[n] = f;
    ++d->version_;
    if (ok || fx == failure_effect::pending) {
      ns_op op;
      op.k = ns_op::kind::link;
      op.name = n;
      op.file = f;
      op.call = d->current_call_;
      d->pending_.push_back(op);
    }
    if (!ok) ++d->lossy_;  // the entry is seen; its directory's fsync failed (dropped: it never becomes durable)
  } else {
    f = it->second;
    if (mode == storage_open::replace) {
      // O_TRUNC: the file's size change, pending until its sync.
      page_cache& pc = *d->files_[f];
      pc.paused = true;
      const storage st = pc.storage();
      (void)st.truncate(st.context, 0);
      pc.paused = false;
    }
  }
  if (!ok) return make_error(errc::io, "crash directory: injected open failure (the entry was made or emptied)");
  *out = d->files_[f]->storage();
  if (mode == storage_open::read) {
    out->write = nullptr;
    out->truncate = nullptr;
  }
  ++d->open_count_[f];
  ++d->open_total_;
  return ok_status();
}

status crash_directory::cb_close(void* c, storage* s) noexcept {
  auto* d = static_cast<crash_directory*>(c);
  if (s == nullptr || s->context == nullptr) {
    d->violation("close of a storage that is not open (no context)");
    return make_error(errc::invalid_argument, "crash directory: close of nothing");
  }
  auto it = d->file_of_.find(s->context);
  if (it == d->file_of_.end()) {
    d->violation("close of a storage this directory did not open");
    return make_error(errc::invalid_argument, "crash directory: close of a foreign storage");
  }
  const uint32_t f = it->second;
  const bool ok = d->tick(dir_call::close, d->trace ? d->names_of(f) : std::string(), false);
  if (d->open_count_[f] == 0) {
    d->violation("close of " + d->names_of(f) + " more often than it was opened");
  } else {
    --d->open_count_[f];
    --d->open_total_;
  }
  *s = storage{};  // released either way (close(2) frees the descriptor even when it reports an error)
  return ok ? ok_status() : make_error(errc::io, "crash directory: injected close failure");
}

status crash_directory::cb_remove(void* c, const char* name) noexcept {
  return static_cast<crash_directory*>(c)->unlink_or_rename(name, nullptr);
}

status crash_directory::cb_rename(void* c, const char* from, const char* to) noexcept {
  return static_cast<crash_directory*>(c)->unlink_or_rename(from, to);
}

// A remove and a rename fail, take effect and become durable alike; only what they do to the names differs.
status crash_directory::unlink_or_rename(const char* from, const char* to) noexcept {
  const bool rename = to != nullptr;
  if (!name_ok(from) || (rename && !name_ok(to))) return make_error(errc::invalid_argument, "crash directory: bad entry name");
  const std::string a(from), b(rename ? to : "");
  const dir_call kind = rename ? dir_call::rename : dir_call::remove;
  const bool ok = tick(kind, rename ? a + " -> " + b : a, true);
  if (checks_ && !paused) {
    if (rename) check_rename(a, b);
    else check_remove(a);
  }
  auto it = visible_.find(a);
  const failure_effect fx = ok ? failure_effect::none : failure_effect_now();
  const bool effect = ok || fx != failure_effect::none;
  const char* failed = rename ? "crash directory: injected rename failure" : "crash directory: injected remove failure";
  if (!ok && !effect)
    return make_error(errc::io, rename ? "crash directory: injected rename failure (nothing done)"
                                       : "crash directory: injected remove failure (nothing done)");
  if (it == visible_.end())
    return make_error(errc::io, !ok ? failed : rename ? "crash directory: no such entry to rename" : "crash directory: no such entry to remove");
  if (rename && a == b) return ok ? ok_status() : make_error(errc::io, failed);
  const uint32_t f = it->second;
  visible_.erase(it);
  if (rename) visible_[b] = f;
  ++version_;
  if (!ok && fx == failure_effect::dropped) {
    ++lossy_;  // done in what reads see, never durably
    return make_error(errc::io, rename ? "crash directory: injected rename failure (renamed, never durably)"
                                       : "crash directory: injected remove failure (the entry is gone, never durably)");
  }
  ns_op op;
  op.k = rename ? ns_op::kind::rename : ns_op::kind::unlink;
  op.name = a;
  op.to = b;
  op.file = f;
  op.call = current_call_;
  pending_.push_back(op);
  if (!ok) {
    ++lossy_;  // done in what reads see, maybe durably
    return make_error(errc::io, rename ? "crash directory: injected rename failure (renamed, maybe durably)"
                                       : "crash directory: injected remove failure (the entry is gone, maybe durably)");
  }
  if (on_call && !paused) on_call(current_call_, kind);  // a crash inside the call
  durable_through(pending_.size() - 1);
  return ok_status();
}

status crash_directory::cb_list(void* c, tessera::storage_directory_visit visit, void* arg) noexcept {
  auto* d = static_cast<crash_directory*>(c);
  if (visit == nullptr) return make_error(errc::invalid_argument, "crash directory: no visit function");
  if (!d->tick(dir_call::list, std::string(), false)) return make_error(errc::io, "crash directory: injected list failure");
  // visit may remove the entry it is given: the names are taken first; entries gone meanwhile are skipped.
  std::vector<std::string> names;
  for (const auto& kv : d->visible_) names.push_back(kv.first);
  for (const std::string& n : names) {
    if (d->visible_.count(n) == 0) continue;
    const status s = visit(arg, n.c_str());
    if (!s.ok()) return s;
  }
  return ok_status();
}

// ---- Crash images --------------------------------------------------------------------------------------------------

namespace {

// The files a crash image may name that have pending operations, in order.
std::vector<uint32_t> image_files(const std::map<std::string, uint32_t>& durable, const std::vector<ns_op>& pending,
                                  const std::vector<std::unique_ptr<page_cache>>& files) {
  std::set<uint32_t> s;
  for (const auto& kv : durable) s.insert(kv.second);
  for (const ns_op& op : pending) s.insert(op.file);
  std::vector<uint32_t> out;
  for (uint32_t f : s)
    if (!files[f]->pending().empty()) out.push_back(f);
  return out;
}

}  // namespace

size_t crash_directory::crash_units(uint32_t sector) const {
  size_t n = pending_.size();
  for (uint32_t f : image_files(durable_, pending_, files_)) n += files_[f]->crash_units(sector);
  return n;
}

bytes crash_directory::image_of(uint32_t sector, const std::vector<uint8_t>& ops, const std::vector<uint32_t>& files,
                                const std::vector<std::vector<uint8_t>>& units,
                                const std::vector<size_t>& prefixes) const {
  std::map<std::string, uint32_t> names = durable_;
  for (size_t i = 0; i < pending_.size(); ++i)
    if (i < ops.size() && ops[i] != 0) apply(names, pending_[i]);
  bytes out;
  put_u64(out, names.size());
  for (const auto& kv : names) {
    put_bytes(out, reinterpret_cast<const uint8_t*>(kv.first.data()), kv.first.size());
    const auto at = std::find(files.begin(), files.end(), kv.second);
    if (at == files.end()) {
      const bytes& b = files_[kv.second]->durable();
      put_bytes(out, b.data(), b.size());
    } else {
      const size_t k = static_cast<size_t>(at - files.begin());
      const bytes b = files_[kv.second]->crash_image_of(sector, units[k], prefixes[k]);
      put_bytes(out, b.data(), b.size());
    }
  }
  return out;
}

uint64_t crash_directory::for_each_crash_image(uint32_t sector, const std::function<bool(const bytes&)>& fn,
                                               uint64_t samples, uint64_t seed, size_t exhaustive_units) const {
  const size_t nops = pending_.size();
  const std::vector<uint32_t> files = image_files(durable_, pending_, files_);
  std::vector<size_t> nunits(files.size()), nchanges(files.size());
  size_t total = nops;
  uint64_t prefix_product = 1;
  for (size_t k = 0; k < files.size(); ++k) {
    nunits[k] = files_[files[k]]->crash_units(sector);
    nchanges[k] = files_[files[k]]->crash_size_changes();
    total += nunits[k];
    prefix_product *= nchanges[k] + 1;
    if (prefix_product > 1000000) prefix_product = 1000000;
  }
  std::vector<uint8_t> ops(nops);
  std::vector<std::vector<uint8_t>> units(files.size());
  std::vector<size_t> prefixes(files.size());
  for (size_t k = 0; k < files.size(); ++k) units[k].assign(nunits[k], 0);
  uint64_t visited = 0;
  auto emit = [&]() {
    ++visited;
    return fn(image_of(sector, ops, files, units, prefixes));
  };
  auto set_all = [&](uint8_t ns, uint8_t data) {
    std::fill(ops.begin(), ops.end(), ns);
    for (size_t k = 0; k < files.size(); ++k) {
      std::fill(units[k].begin(), units[k].end(), data);
      prefixes[k] = data != 0 ? nchanges[k] : 0;
    }
  };
  if (total <= exhaustive_units && total <= 20 && prefix_product <= 64) {
    for (uint64_t mask = 0; mask < (uint64_t{1} << total); ++mask) {
      size_t bit = 0;
      for (size_t i = 0; i < nops; ++i) ops[i] = static_cast<uint8_t>((mask >> bit++) & 1);
      for (size_t k = 0; k < files.size(); ++k)
        for (size_t u = 0; u < nunits[k]; ++u) units[k][u] = static_cast<uint8_t>((mask >> bit++) & 1);
      for (uint64_t p = 0; p < prefix_product; ++p) {
        uint64_t rest = p;
        for (size_t k = 0; k < files.size(); ++k) {
          prefixes[k] = static_cast<size_t>(rest % (nchanges[k] + 1));
          rest /= nchanges[k] + 1;
        }
        if (!emit()) return visited;
      }
    }
    return visited;
  }
  // The extremes.
  set_all(0, 0);
  if (!emit()) return visited;
  set_all(1, 1);
  if (!emit()) return visited;
  // Every subset of a few pending namespace operations, the files at both extremes.
  if (nops >= 1 && nops <= 3) {
    const uint64_t full = (uint64_t{1} << nops) - 1;
    for (uint64_t mask = 0; mask <= full; ++mask)
      for (uint8_t data = 0; data <= 1; ++data) {
        if ((mask == 0 && data == 0) || (mask == full && data == 1)) continue;  // the extremes
        set_all(0, data);
        for (size_t i = 0; i < nops; ++i) ops[i] = static_cast<uint8_t>((mask >> i) & 1);
        if (!emit()) return visited;
      }
  }
  tessera::test::rng r(seed);
  for (uint64_t s = 0; s < samples; ++s) {
    for (size_t i = 0; i < nops; ++i) ops[i] = static_cast<uint8_t>(r.next() & 1);
    for (size_t k = 0; k < files.size(); ++k) {
      for (size_t u = 0; u < nunits[k]; ++u) units[k][u] = static_cast<uint8_t>(r.next() & 1);
      prefixes[k] = static_cast<size_t>(r.range(0, static_cast<int64_t>(nchanges[k])));
    }
    if (!emit()) return visited;
  }
  return visited;
}

// ---- Checks ----------------------------------------------------------------------------------------------------------

const sparse_refs& crash_directory::durable_frame() {
  if (durable_parsed_) return durable_frame_;
  durable_parsed_ = true;
  durable_frame_ = sparse_refs{};
  if (durable_.count(tessera::kSparseIndexName) == 0) {
    durable_frame_.error = "no durable chunks.b2frame";
    return durable_frame_;
  }
  const entries e = durable();
  const frame_names fn = sparse_names_of(e);
  if (!fn.opened) {
    durable_frame_.error = "the durable chunks.b2frame does not open: " + fn.error;
    return durable_frame_;
  }
  durable_frame_.valid = true;
  durable_frame_.error = fn.error;
  for (const std::string& n : fn.names) {
    auto it = durable_.find(n);
    durable_frame_.names[n] = it == durable_.end() ? kMissing : it->second;
  }
  return durable_frame_;
}

bool crash_directory::file_durable(uint32_t f) const {
  const page_cache& pc = *files_[f];
  return pc.pending().empty() && pc.dropped().empty() && pc.durable().size() == pc.visible().size();
}

void crash_directory::check_file_write(uint32_t f, dir_call kind) {
  const sparse_refs& r = durable_frame();
  if (!r.valid) return;
  for (const auto& kv : r.names)
    if (kv.second == f)
      violation(std::string(dir_call_name(kind)) + " of " + names_of(f) + ", which the durable frame references as " +
                kv.first);
}

void crash_directory::check_remove(const std::string& name) {
  const sparse_refs& r = durable_frame();
  if (!r.valid) return;
  auto ref = r.names.find(name);
  auto vis = visible_.find(name);
  if (ref != r.names.end() && ref->second != kMissing && vis != visible_.end() && vis->second == ref->second)
    violation("remove " + name + ", which the durable frame references");
}

void crash_directory::check_rename(const std::string& from, const std::string& to) {
  const sparse_refs& r = durable_frame();
  auto vf = visible_.find(from);
  if (vf == visible_.end()) return;
  if (r.valid) {
    auto ref = r.names.find(from);
    if (ref != r.names.end() && ref->second == vf->second)
      violation("rename " + from + " -> " + to + " moves what the durable frame references as " + from);
    auto rt = r.names.find(to);
    if (to != tessera::kSparseIndexName && rt != r.names.end() && rt->second != kMissing)
      violation("rename " + from + " -> " + to + " replaces what the durable frame references as " + to);
  }
  if (to != tessera::kSparseIndexName) return;
  // The commit point: the new chunks.b2frame, and every entry it references, must be durable.
  const uint32_t f = vf->second;
  const std::string w = "rename " + from + " -> " + to + " (the commit point)";
  if (!file_durable(f)) {
    const page_cache& pc = *files_[f];
    violation(w + " commits " + names_of(f) + ", whose content is not durable (" + std::to_string(pc.pending().size()) +
              " pending operations, " + std::to_string(pc.dropped().size()) + " ranges a failed sync dropped)");
  }
  entries e;
  for (const auto& kv : visible_) e[kv.first] = files_[kv.second]->visible();
  e[tessera::kSparseIndexName] = files_[f]->visible();
  const frame_names fn = sparse_names_of(e);
  if (!fn.opened) {
    violation(w + " commits an index that does not open: " + fn.error);
    return;
  }
  if (!fn.error.empty()) violation(w + " commits an index that does not read whole: " + fn.error);
  std::string problems;
  size_t count = 0;
  for (size_t i = 1; i < fn.names.size(); ++i) {
    const std::string& n = fn.names[i];
    auto d = durable_.find(n);
    auto v = visible_.find(n);
    std::string why;
    if (v == visible_.end()) why = "missing";
    else if (d == durable_.end()) why = "its directory entry is not durable";
    else if (d->second != v->second) why = "its durable entry names another file";
    else if (!file_durable(v->second)) why = "its content is not durable";
    if (why.empty()) continue;
    if (++count <= 4) problems += "; " + n + ": " + why;
  }
  if (count > 0)
    violation(w + " commits an index that references " + std::to_string(count) + " entries not durable" + problems);
}

}  // namespace crash_model
