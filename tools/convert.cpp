// SPDX-License-Identifier: BSD-3-Clause
// tessera convert IN OUT [--chunks ...] [--blocks ...] [--codec ...] [--codec-meta N] [--clevel ...] [--filters ...] [--split ...]
// [--sparse]: IN as a new array with other compression and/or chunk and block shapes (unset options keep IN's;
// new chunks without new blocks get automatic blocks), as a cframe file or (--sparse) an sframe directory.
// Streamed like create: one slab of whole output chunks at a time is read from IN (array_slice_read, its blocks
// decoded on the thread pool), its chunks encoded on the pool and appended in order. IN's other metalayers and
// its vlmetalayers are kept. OUT is written under a temporary name and renamed at the end.
#include <cstdio>
#include <cstring>

#include "cli.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "target.hpp"
#include "writer.hpp"

namespace tessera::cli {

namespace {

constexpr const char* kCmd = "convert";

}  // namespace

int cmd_convert(int argc, char** argv) noexcept {
  const char* in_path = nullptr;
  const char* out_path = nullptr;
  bool sparse = false;
  array_params given;  // what the options set (applied over IN's parameters below)
  write_options wo;
  run_options ro;
  for (int i = 0; i < argc; ++i) {
    const char* arg = argv[i];
    if (int rc = write_option_take(kCmd, argc, argv, i, given, wo); rc >= 0) {
      if (rc != 0) return rc;
    } else if (int rc2 = run_option_take(kCmd, argc, argv, i, ro); rc2 >= 0) {
      if (rc2 != 0) return rc2;
    } else if (std::strcmp(arg, "--sparse") == 0) {
      sparse = true;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      return fail(kExitUsage, kCmd, "unknown option '%s'", arg);
    } else if (in_path == nullptr) {
      in_path = arg;
    } else if (out_path == nullptr) {
      out_path = arg;
    } else {
      return fail(kExitUsage, kCmd, "unexpected argument '%s' (IN and OUT only)", arg);
    }
  }
  if (in_path == nullptr) return fail(kExitUsage, kCmd, "no IN given");
  if (out_path == nullptr || out_path[0] == '\0') return fail(kExitUsage, kCmd, "no OUT given");

  run_workers rw;
  if (int rc = run_workers_start(kCmd, ro, rw); rc != 0) return rc;
  opened_array o;
  if (int rc = array_open_path(kCmd, in_path, o, rw.exec); rc != 0) return rc;

  array_params p = array_params_get(o.a);
  if (wo.codec_set) {
    p.compressor = given.compressor;
    p.compcode_meta = given.compcode_meta;  // ndlz:N's cell edge (--codec-meta: codec_finish); else 0
  }
  if (wo.clevel_set) p.clevel = given.clevel;
  if (wo.split_set) p.split = given.split;
  if (wo.dict_set) p.use_dict = true;
  if (wo.filters_set) {
    for (int i = 0; i < kChunkMaxFilters; ++i) {
      p.filters[i] = given.filters[i];
      p.filters_meta[i] = given.filters_meta[i];
    }
    filters_finish(p);
  }
  if (wo.chunks != nullptr && wo.blocks == nullptr)
    for (int d = 0; d < kMaxDims; ++d) p.blockshape[d] = 0;  // IN's blocks may not fit the new chunks
  if (int rc = shapes_apply(kCmd, wo, p); rc != 0) return rc;
  if (int rc = codec_finish(kCmd, wo, p); rc != 0) return rc;
  // IN's other fixed metalayers go along.
  frame& src = array_frame(o.a);
  const frame_info* fi = frame_info_get(src);
  if (fi == nullptr) return fail(kExitFailure, kCmd, "%s: the frame is not open", in_path);
  frame_metalayer_init metas[kFrameMaxMetalayers];
  uint32_t nmetas = 0;
  for (uint32_t i = 0; i < fi->nmetalayers; ++i) {
    auto name = frame_meta_name(src, i);
    if (!name.ok()) return fail_error(kCmd, in_path, name.err());
    if ((name->size() == 4 && std::memcmp(name->data(), "b2nd", 4) == 0) ||
        (name->size() == 7 && std::memcmp(name->data(), "caterva", 7) == 0))
      continue;
    auto content = frame_meta_find(src, *name);
    if (!content.ok()) return fail_error(kCmd, in_path, content.err());
    if (nmetas + 1 >= kFrameMaxMetalayers) break;
    metas[nmetas++] = frame_metalayer_init{*name, *content};
  }
  p.metalayers = metas;
  p.nmetalayers = nmetas;

  slab_plan plan;
  owned_array<uint8_t> slab;
  if (int rc = slabs_prepare(kCmd, out_path, p, rw.threads, kMaxDims, plan, slab); rc != 0) return rc;

  output_target t;
  writer_handle w;
  if (int rc = writer_start(kCmd, t, out_path, sparse, p, rw.threads, w); rc != 0) return rc;

  struct slab_source {
    array* a;
    const char* path;
  } source{&o.a, in_path};
  const slab_fill fill = [](void* c, const slab_plan&, const int64_t* start, const int64_t* stop,
                            bytes_mut items) noexcept {
    const auto* in = static_cast<const slab_source*>(c);
    if (auto e = array_slice_read(*in->a, start, stop, items); !e.ok()) return fail_error(kCmd, in->path, e);
    return 0;
  };
  if (int rc = writer_put_slabs(kCmd, *w, rw.exec, plan, bytes_mut(slab.data(), slab.size()),
                                static_cast<uint64_t>(array_nbytes(o.a)), ro.quiet, fill, &source);
      rc != 0)
    return rc;
  // vlmetalayers as stored (their chunks need no re-encoding).
  for (uint32_t i = 0; i < fi->nvlmetalayers; ++i) {
    auto name = frame_vlmeta_name(src, i);
    if (!name.ok()) return fail_error(kCmd, in_path, name.err());
    auto raw = frame_vlmeta_raw(src, *name);
    if (!raw.ok()) return fail_error(kCmd, in_path, raw.err());
    if (auto e = frame_vlmeta_set_chunk(writer_frame(*w), *name, *raw); !e.ok()) return fail_error(kCmd, out_path, e);
  }
  if (int rc = writer_finish(*w); rc != 0) return rc;
  return target_commit(kCmd, t);
}

}  // namespace tessera::cli
