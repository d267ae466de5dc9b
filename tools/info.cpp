// SPDX-License-Identifier: BSD-3-Clause
// tessera info FILE [--json]: what the array is and how it is stored (--json: the same facts as one JSON object).
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "cli.hpp"
#include "flash_image.hpp"

namespace tessera::cli {

namespace {

constexpr const char* kCmd = "info";

void print_dims(const char* label, int ndim, const int64_t* v) {
  std::printf("%s", label);
  for (int d = 0; d < ndim; ++d) std::printf("%s%" PRId64, d ? "," : "", v[d]);
  if (ndim == 0) std::printf("(scalar)");
}

const char* split_name(uint8_t mode) {
  switch (mode) {
    case 1: return "always";
    case 2: return "never";
    case 3: return "auto";
    case 4: return "forward-compat";
    default: return "unknown";
  }
}

// The name of the frame's codec; nullptr for a user codec (or a number no Blosc2 codec has: 3 is unused).
// The bit planes ZFP's fixed precision keeps for meta m in ndim dimensions (the reference's rule).
unsigned zfp_planes(uint8_t m, int ndim) {
  const unsigned planes = m + 2u * static_cast<unsigned>(ndim) + 3u;
  return planes > 64 ? 64 : planes;
}

const char* known_codec_name(const frame_info& fi) {
  return fi.compcode <= 5 && fi.compcode != 3 ? codec_name(static_cast<codec>(fi.compcode)) : nullptr;
}

// The filters in use, in pipeline order, separated by `sep` (each in double quotes when `quoted`, for JSON), with
// their meta where it matters ("trunc:-3"). Whether there was any.
bool filters_print(const frame_info& fi, const char* sep, bool quoted) {
  bool any = false;
  const char* q = quoted ? "\"" : "";
  for (int i = 0; i < kChunkMaxFilters; ++i) {
    const uint8_t f = fi.filters[i];
    const uint8_t m = fi.filters_meta[i];
    if (f == 0) continue;
    std::printf("%s%s", any ? sep : "", q);
    any = true;
    switch (static_cast<filter_id>(f)) {
      case filter_id::shuffle: std::printf("shuffle"); break;
      case filter_id::bitshuffle: std::printf("bitshuffle"); break;
      case filter_id::delta: std::printf("delta"); break;
      case filter_id::trunc_prec: std::printf("trunc:%d", static_cast<int8_t>(m)); break;
      case filter_id::bytedelta: std::printf("bytedelta"); break;
      case filter_id::int_trunc: std::printf("int_trunc:%d", static_cast<int8_t>(m)); break;
      case filter_id::ndcell: std::printf("ndcell:%u", m); break;
      case filter_id::ndmean: std::printf("ndmean:%u", m); break;
      default: std::printf("filter%u(meta %u)", f, m); break;
    }
    std::printf("%s", q);
  }
  return any;
}

void print_filters(const frame_info& fi) {
  std::printf("filters: ");
  const bool any = filters_print(fi, ",", false);
  std::printf("%s\n", any ? "" : "none");
}

// A JSON string: quotes, backslashes and control characters escaped (UTF-8 passes through).
void json_string(const char* s, size_t n) {
  std::putchar('"');
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') std::printf("\\%c", c);
    else if (c < 0x20) std::printf("\\u%04x", c);
    else std::putchar(c);
  }
  std::putchar('"');
}

void json_dims(const char* key, int ndim, const int64_t* v) {
  std::printf("  \"%s\": [", key);
  for (int d = 0; d < ndim; ++d) std::printf("%s%" PRId64, d ? ", " : "", v[d]);
  std::printf("],\n");
}

// The facts of the text form, as one JSON object.
int info_json(const char* path, opened_array& o) {
  const array_layout& l = array_layout_get(o.a);
  frame& f = array_frame(o.a);
  const frame_info* fi = frame_info_get(f);
  const span<const char> dt = array_dtype(o.a);
  std::printf("{\n  \"file\": ");
  json_string(path, std::strlen(path));
  std::printf(",\n  \"frame\": \"%s\",\n  \"ndim\": %d,\n", o.sparse ? "sparse" : "contiguous", l.ndim);
  if (o.flash != nullptr) {
    const flash_image_summary fs = flash_image_summarize(*o.flash);
    std::printf("  \"flash_log\": {\"offset\": %" PRIu64 ", \"size\": %" PRIu64 ", \"chunks\": %" PRId64
                ", \"finalized\": %s, \"damaged\": %s, \"free_bytes\": %" PRIu32 "},\n", g_flash.offset, g_flash.size,
                fs.chunks, fs.finalized ? "true" : "false", fs.damaged ? "true" : "false", fs.free_bytes);
  }
  json_dims("shape", l.ndim, l.shape);
  int64_t v[kMaxDims] = {};
  for (int d = 0; d < l.ndim; ++d) v[d] = l.chunkshape[d];
  json_dims("chunks", l.ndim, v);
  std::printf("  \"nchunks\": %" PRId64 ",\n", l.nchunks);
  for (int d = 0; d < l.ndim; ++d) v[d] = l.blockshape[d];
  json_dims("blocks", l.ndim, v);
  std::printf("  \"blocks_per_chunk\": %" PRId64 ",\n  \"dtype\": ", l.blocks_per_chunk);
  json_string(dt.data(), dt.size());
  std::printf(",\n  \"typesize\": %d,\n", array_itemsize(o.a));
  if (const char* name = known_codec_name(*fi))
    std::printf("  \"codec\": \"%s\",\n", name);
  else if (fi->compcode >= static_cast<uint8_t>(codec::zfp_acc) && fi->compcode <= static_cast<uint8_t>(codec::zfp_rate))
    std::printf("  \"codec\": \"%s\",\n  \"codec_meta\": %d,\n", codec_name(static_cast<codec>(fi->compcode)),
                fi->compcode == static_cast<uint8_t>(codec::zfp_acc) ? static_cast<int8_t>(fi->compcode_meta)
                                                                     : static_cast<int>(fi->compcode_meta));
  else
    std::printf("  \"codec\": %u,\n  \"udcodec\": %u,\n", fi->compcode, fi->udcodec);
  std::printf("  \"clevel\": %u,\n  \"filters\": [", fi->clevel);
  (void)filters_print(*fi, ", ", true);
  std::printf("],\n  \"split\": \"%s\",\n", split_name(fi->splitmode));
  std::printf("  \"dict\": %s,\n", fi->use_dict ? "true" : "false");
  std::printf("  \"items\": %" PRId64 ",\n  \"nbytes\": %" PRId64 ",\n  \"array_nbytes\": %" PRId64
              ",\n  \"cbytes\": %" PRId64 ",\n", l.nitems, fi->nbytes, array_nbytes(o.a), fi->cbytes);
  if (fi->cbytes > 0) std::printf("  \"ratio\": %.6g,\n", static_cast<double>(fi->nbytes) / static_cast<double>(fi->cbytes));
  else std::printf("  \"ratio\": null,\n");
  std::printf("  \"frame_bytes\": %" PRIu64 ",\n  \"format_version\": %u,\n", fi->frame_len, fi->version);
  if (!o.sparse) {
    auto sp = frame_space_get(f);
    if (!sp.ok()) return fail_error(kCmd, path, sp.err());
    std::printf("  \"chunk_bytes\": %" PRIu64 ",\n  \"meta_bytes\": %" PRIu64 ",\n  \"free_bytes\": %" PRIu64 ",\n",
                sp->chunk_bytes, sp->meta_bytes, sp->free_bytes);
  }
  std::printf("  \"metalayers\": [");
  for (uint32_t i = 0; i < fi->nmetalayers; ++i) {
    auto name = frame_meta_name(f, i);
    if (!name.ok()) return fail_error(kCmd, path, name.err());
    auto content = frame_meta_find(f, *name);
    std::printf("%s{\"name\": ", i ? ", " : "");
    json_string(name->data(), name->size());
    std::printf(", \"bytes\": %zu}", content.ok() ? content->size() : size_t{0});
  }
  std::printf("],\n  \"vlmetalayers\": [");
  for (uint32_t i = 0; i < fi->nvlmetalayers; ++i) {
    auto name = frame_vlmeta_name(f, i);
    if (!name.ok()) return fail_error(kCmd, path, name.err());
    auto n = frame_vlmeta_nbytes(f, *name);
    std::printf("%s{\"name\": ", i ? ", " : "");
    json_string(name->data(), name->size());
    std::printf(", \"bytes\": %zu}", n.ok() ? *n : size_t{0});
  }
  std::printf("]\n}\n");
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) return fail(kExitFailure, kCmd, "writing the output failed");
  return 0;
}

}  // namespace

int cmd_info(int argc, char** argv) noexcept {
  const char* path = nullptr;
  bool json = false;
  int npaths = 0;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) json = true;
    else if (argv[i][0] == '-' && argv[i][1] != '\0') return fail(kExitUsage, kCmd, "unknown option '%s'", argv[i]);
    else {
      path = argv[i];
      ++npaths;
    }
  }
  if (npaths != 1) return fail(kExitUsage, kCmd, "expects one FILE, got %d arguments", npaths);
  opened_array o;
  if (int rc = array_open_path(kCmd, path, o, executor_serial()); rc != 0) return rc;
  const array_layout& l = array_layout_get(o.a);
  const frame& f = array_frame(o.a);
  const frame_info* fi = frame_info_get(f);
  if (fi == nullptr) return fail(kExitFailure, kCmd, "%s: the frame is not open", path);
  if (json) return info_json(path, o);
  const span<const char> dt = array_dtype(o.a);

  std::printf("file: %s (%s frame)\n", path, o.sparse ? "sparse" : "contiguous");
  if (o.flash != nullptr) {
    const flash_image_summary fs = flash_image_summarize(*o.flash);
    std::printf("flash log: region of %" PRIu64 " bytes at %" PRIu64 ", %" PRId64 " chunks committed, %s%s, %" PRIu32
                " bytes free\n", g_flash.size, g_flash.offset, fs.chunks,
                fs.finalized ? "finalized" : "not finalized (read as one dimension of the chunks' items)",
                fs.damaged ? ", damaged past the last chunk read" : "", fs.free_bytes);
  }
  std::printf("ndim: %d\n", l.ndim);
  print_dims("shape: ", l.ndim, l.shape);
  std::printf("\n");
  print_dims("chunks: ", l.ndim, l.chunkshape);
  std::printf(" (%" PRId64 " chunks)\n", l.nchunks);
  print_dims("blocks: ", l.ndim, l.blockshape);
  std::printf(" (%" PRId64 " per chunk)\n", l.blocks_per_chunk);
  std::printf("dtype: %.*s\n", static_cast<int>(dt.size()), dt.data());
  std::printf("typesize: %d\n", array_itemsize(o.a));
  if (const char* name = known_codec_name(*fi))
    std::printf("codec: %s\n", name);
  else if (fi->compcode == static_cast<uint8_t>(codec::ndlz))
    std::printf("codec: ndlz:%u (c-blosc2's registered codec 32)\n", fi->compcode_meta);
  else if (fi->compcode == static_cast<uint8_t>(codec::zfp_acc))
    std::printf("codec: zfp_acc, meta %d (c-blosc2's registered codec 33: ZFP, tolerance 10^%d)\n",
                static_cast<int8_t>(fi->compcode_meta), static_cast<int8_t>(fi->compcode_meta));
  else if (fi->compcode == static_cast<uint8_t>(codec::zfp_prec))
    std::printf("codec: zfp_prec, meta %u (c-blosc2's registered codec 34: ZFP, %u bit planes)\n", fi->compcode_meta,
                zfp_planes(fi->compcode_meta, l.ndim));
  else if (fi->compcode == static_cast<uint8_t>(codec::zfp_rate))
    std::printf("codec: zfp_rate, meta %u (c-blosc2's registered codec 35: ZFP, %u%% of the items' bits)\n",
                fi->compcode_meta, fi->compcode_meta);
  else
    std::printf("codec: %u (user codec %u)\n", fi->compcode, fi->udcodec);
  std::printf("clevel: %u\n", fi->clevel);
  print_filters(*fi);
  std::printf("split: %s\n", split_name(fi->splitmode));
  if (fi->use_dict) std::printf("dict: yes (a dictionary in each chunk)\n");
  std::printf("items: %" PRId64 "\n", l.nitems);
  std::printf("nbytes: %" PRId64 " (chunks, padding included; array: %" PRId64 ")\n", fi->nbytes, array_nbytes(o.a));
  std::printf("cbytes: %" PRId64 "\n", fi->cbytes);
  if (fi->cbytes > 0)
    std::printf("ratio: %.3f\n", static_cast<double>(fi->nbytes) / static_cast<double>(fi->cbytes));
  else
    std::printf("ratio: - (no stored chunk bytes)\n");
  std::printf("frame: %" PRIu64 " bytes, format version %u\n", fi->frame_len, fi->version);
  if (!o.sparse) {  // where the frame's bytes go: live chunks, header/index/trailer, and what rewrites freed
    auto sp = frame_space_get(array_frame(o.a));
    if (!sp.ok()) return fail_error(kCmd, path, sp.err());
    std::printf("space: %" PRIu64 " bytes of chunks, %" PRIu64 " of header, index and trailer, %" PRIu64
                " free (%.1f%%; tessera compact reclaims them)\n",
                sp->chunk_bytes, sp->meta_bytes, sp->free_bytes,
                sp->frame_len > 0 ? 100.0 * static_cast<double>(sp->free_bytes) / static_cast<double>(sp->frame_len) : 0.0);
  }

  std::printf("metalayers:");
  for (uint32_t i = 0; i < fi->nmetalayers; ++i) {
    auto name = frame_meta_name(f, i);
    if (!name.ok()) return fail_error(kCmd, path, name.err());
    auto content = frame_meta_find(f, *name);
    std::printf("%s %.*s", i ? "," : "", static_cast<int>(name->size()), name->data());
    if (content.ok()) std::printf(" (%zu bytes)", content->size());
  }
  std::printf("%s\n", fi->nmetalayers ? "" : " none");
  std::printf("vlmetalayers:");
  for (uint32_t i = 0; i < fi->nvlmetalayers; ++i) {
    auto name = frame_vlmeta_name(f, i);
    if (!name.ok()) return fail_error(kCmd, path, name.err());
    auto n = frame_vlmeta_nbytes(f, *name);
    std::printf("%s %.*s", i ? "," : "", static_cast<int>(name->size()), name->data());
    if (n.ok()) std::printf(" (%zu bytes)", *n);
  }
  std::printf("%s\n", fi->nvlmetalayers ? "" : " none");
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) return fail(kExitFailure, kCmd, "writing the output failed");
  return 0;
}

}  // namespace tessera::cli
