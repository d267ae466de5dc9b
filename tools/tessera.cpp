// SPDX-License-Identifier: BSD-3-Clause
// tessera: inspect, extract, create and check B2ND arrays (cframe files and sframe directories).
//   tessera info FILE [--json]
//   tessera dump FILE [--slice A:B,C:D,...] [--format raw|text|npy] [-o OUT|-]
//   tessera create OUT (--dtype DT --shape N,... | a .npy input) [--chunks N,...] [--blocks N,...] [--codec C]
//                      [--clevel L] [--filters F,...] [--split always|never|auto] [--dict] [--sparse] --input FILE|-
//   tessera convert IN OUT [--chunks ...] [--blocks ...] [--codec ...] [--clevel ...] [--filters ...]
//                      [--split ...] [--dict] [--sparse]
//   tessera verify FILE
//   tessera compact FILE
// info, dump, verify and convert take --offset N (a frame inside an image) or --flash-log GEOMETRY (the array
// the flash port's log holds in a raw flash image, finalized or not).
// dump, create, convert and verify take --threads N (default: the online CPUs) and --quiet (no progress line).
// Exit status 0 on success; on failure one line on stderr ("tessera: CMD: what") and a non-zero status
// (1: bad data or I/O, 2: bad command line).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli.hpp"
#include "flash_image.hpp"

namespace {

// One text per command: `tessera --help` prints them all, `tessera help CMD` and `tessera CMD --help` one.
struct command_help {
  const char* name;
  const char* text;
};

constexpr command_help kHelp[] = {
    {"info",
     "  tessera info FILE [--json]\n"
     "      shape, chunks, blocks, dtype, typesize, codec, filters, sizes, ratio, metalayers (--json: as JSON)\n"},
    {"dump",
     "  tessera dump FILE [--slice A:B,C:D,...] [--format raw|text|npy] [-o OUT|-]\n"
     "      the items of the array (or of a slice: start:stop per dimension, empty bounds for the whole\n"
     "      dimension), C order: raw bytes, text values by dtype (strings and records as values), or a NumPy\n"
     "      .npy file; without --format, text to a terminal and raw bytes to a file or a pipe\n"},
    {"create",
     "  tessera create OUT (--dtype DT --shape N,... | --input X.npy) [--chunks N,...] [--blocks N,...]\n"
     "                 [--codec blosclz|lz4|lz4hc|zlib|zstd|ndlz:4|ndlz:8|zfp_acc|zfp_prec|zfp_rate]\n"
     "                 [--codec-meta N] [--clevel 0-9]\n"
     "                 [--filters shuffle,bitshuffle,delta,trunc:BITS,bytedelta,ndcell:EDGE,ndmean:EDGE,none]\n"
     "                 [--split always|never|auto] [--dict] [--sparse] [--format raw|npy] --input FILE|-\n"
     "      a new array (a cframe file, or with --sparse an sframe directory) from C-order bytes or a .npy\n"
     "      file (its dtype and shape; the name ends in .npy, or --format npy)\n"
     "      --codec-meta N: the codec's meta (c-blosc2's compcode_meta), checked before anything is written:\n"
     "        zfp_acc   lossy ZFP, fixed accuracy: error at most 10^N, N in -128..127 (required)\n"
     "        zfp_prec  lossy ZFP, fixed precision: N + 2 * ndim + 3 bit planes (at most 64), N in 1..64 (required)\n"
     "        zfp_rate  lossy ZFP, fixed rate: N percent of the items' bits, N in 1..100 (required)\n"
     "        ndlz      the cell edge, 4 or 8 (as ndlz:4, ndlz:8); other codecs: 0..255, stored as it is\n"
     "      ZFP (tessera builds with libzfp): <f4 or <f8 items, 1 to 4 dimensions, blocks of at least 4 each way,\n"
     "      no filters unless --filters gives some (never shuffle or bitshuffle)\n"},
    {"convert",
     "  tessera convert IN OUT [--chunks N,...] [--blocks N,...] [--codec C] [--codec-meta N] [--clevel L]\n"
     "                 [--filters F,...] [--split S] [--dict] [--sparse]\n"
     "      IN recompressed and/or rechunked (unset options keep IN's), as a cframe (or --sparse an sframe)\n"},
    {"verify",
     "  tessera verify FILE\n"
     "      decodes every chunk and block; reports damage with its chunk and block\n"},
    {"compact",
     "  tessera compact FILE\n"
     "      rewrites the array tight in place: the free bytes rewrites left are reclaimed and the file cut at\n"
     "      the frame's end; a crash leaves the old or the new file, both whole (the file needs room for the\n"
     "      moved chunks meanwhile)\n"},
};

constexpr char kCommon[] =
    "dump, create, convert and verify: --threads N (default: the online CPUs), --quiet (no progress line on a\n"
    "terminal). They stream: memory stays at a slab of about 16 MiB plus a few chunks per thread.\n"
    "FILE is a cframe file or an sframe directory. create and convert write OUT under a temporary name and\n"
    "rename it at the end: a failure leaves nothing under OUT. OUT must be a regular file (or a missing name);\n"
    "a symbolic link is followed: the file it names is replaced, the link kept.\n"
    "  tessera help [COMMAND]    this text, or one command's\n"
    "  tessera --version         the version\n"
    "info, dump, verify and convert: --offset N reads the frame that starts at byte N of FILE (a frame inside a\n"
    "larger image, such as a flash dump; c-blosc2's b2nd_open_offset). --flash-log offset=O,size=S,sector=E,\n"
    "unit=U[,read=R][,erased=V][,dtype=DT]: FILE is a raw image of NOR flash and the array is the one the flash\n"
    "port's log holds in that region, finalized or not (a logger that lost power); the image is only read.\n"
    "Environment: TESSERA_MEMORY_REPORT=PATH writes \"peak_allocated_bytes N\" to PATH at exit (the most bytes\n"
    "the tool's allocator held at once).\n";

const command_help* help_find(const char* name) {
  for (const command_help& h : kHelp)
    if (std::strcmp(h.name, name) == 0) return &h;
  return nullptr;
}

int help_print(const char* name) {
  if (name == nullptr) {
    std::fputs("usage:\n", stdout);
    for (const command_help& h : kHelp) std::fputs(h.text, stdout);
    std::fputs(kCommon, stdout);
    return 0;
  }
  const command_help* h = help_find(name);
  if (h == nullptr)
    return tessera::cli::fail(tessera::cli::kExitUsage, "help",
                              "unknown command '%s' (commands: info, dump, create, convert, verify, compact)", name);
  std::fputs("usage:\n", stdout);
  std::fputs(h->text, stdout);
  return 0;
}

bool is_help(const char* arg) {
  return std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0;
}

int command_run(int argc, char** argv) {
  using namespace tessera::cli;
  if (argc < 2) return fail(kExitUsage, nullptr, "no command (commands: info, dump, create, convert, verify, compact; see --help)");
  const char* cmd = argv[1];
  if (is_help(cmd)) return help_print(nullptr);
  if (std::strcmp(cmd, "help") == 0) {
    if (argc > 3) return fail(kExitUsage, "help", "one COMMAND at most");
    return help_print(argc == 3 ? argv[2] : nullptr);
  }
  if (std::strcmp(cmd, "--version") == 0) {
    std::puts("tessera 0.1.0");
    return 0;
  }
  if (help_find(cmd) != nullptr && argc == 3 && is_help(argv[2])) return help_print(cmd);
  // --offset N: the reading commands open the frame at byte N of FILE (taken out of the arguments here).
  const bool reads = std::strcmp(cmd, "info") == 0 || std::strcmp(cmd, "dump") == 0 || std::strcmp(cmd, "verify") == 0 ||
                     std::strcmp(cmd, "convert") == 0;
  for (int i = 2; i < argc; ++i) {
    const bool joined = std::strncmp(argv[i], "--offset=", 9) == 0;
    if (!joined && std::strcmp(argv[i], "--offset") != 0) continue;
    if (!reads) return fail(kExitUsage, cmd, "--offset is for info, dump, verify and convert");
    char* end = nullptr;
    const char* v = joined ? argv[i] + 9 : (i + 1 < argc ? argv[i + 1] : "");
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (*v < '0' || *v > '9' || end == nullptr || *end != '\0')
      return fail(kExitUsage, cmd, "--offset: '%s' is not a byte offset", v);
    g_read_offset = n;
    const int taken = joined ? 1 : 2;
    for (int k = i; k + taken < argc; ++k) argv[k] = argv[k + taken];
    argc -= taken;
    --i;
  }
  // --flash-log GEOMETRY: FILE is a raw flash image, the array the one the flash port's log holds in the region.
  for (int i = 2; i < argc; ++i) {
    const bool joined = std::strncmp(argv[i], "--flash-log=", 12) == 0;
    if (!joined && std::strcmp(argv[i], "--flash-log") != 0) continue;
    if (!reads) return fail(kExitUsage, cmd, "--flash-log is for info, dump, verify and convert");
    if (!joined && i + 1 >= argc)
      return fail(kExitUsage, cmd, "--flash-log needs a value (e.g. offset=0,size=1M,sector=4096,unit=4)");
    if (int rc = flash_geometry_parse(cmd, joined ? argv[i] + 12 : argv[i + 1], g_flash); rc != 0) return rc;
    const int taken = joined ? 1 : 2;
    for (int k = i; k + taken < argc; ++k) argv[k] = argv[k + taken];
    argc -= taken;
    --i;
  }
  if (g_flash.set && g_read_offset != 0)
    return fail(kExitUsage, cmd, "--offset and --flash-log do not go together (the region's offset= says where)");
  if (std::strcmp(cmd, "info") == 0) return cmd_info(argc - 2, argv + 2);
  if (std::strcmp(cmd, "dump") == 0) return cmd_dump(argc - 2, argv + 2);
  if (std::strcmp(cmd, "create") == 0) return cmd_create(argc - 2, argv + 2);
  if (std::strcmp(cmd, "verify") == 0) return cmd_verify(argc - 2, argv + 2);
  if (std::strcmp(cmd, "convert") == 0) return cmd_convert(argc - 2, argv + 2);
  if (std::strcmp(cmd, "compact") == 0) return cmd_compact(argc - 2, argv + 2);
  return fail(kExitUsage, nullptr, "unknown command '%s' (commands: info, dump, create, convert, verify, compact; see --help)", cmd);
}

}  // namespace

int main(int argc, char** argv) {
  const int status = command_run(argc, argv);
  tessera::cli::tool_memory_report();
  return status;
}
