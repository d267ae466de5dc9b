// tessera: inspect, extract, create and check B2ND arrays (cframe files and sframe directories).
//   tessera info FILE
//   tessera dump FILE [--slice A:B,C:D,...] [--format raw|text] [-o OUT]
//   tessera create OUT --dtype DT --shape N,... [--chunks N,...] [--blocks N,...] [--codec C] [--clevel L]
//                      [--filters F,...] [--split always|never|auto] [--threads N] [--sparse] --input RAW|-
//   tessera verify FILE
// Exit status 0 on success; on failure one line on stderr ("tessera: CMD: what") and a non-zero status
// (1: bad data or I/O, 2: bad command line).
#include <cstdio>
#include <cstring>

#include "cli.hpp"

namespace {

constexpr char kUsage[] =
    "usage:\n"
    "  tessera info FILE\n"
    "      shape, chunks, blocks, dtype, typesize, codec, filters, sizes, ratio, metalayers\n"
    "  tessera dump FILE [--slice A:B,C:D,...] [--format raw|text] [-o OUT]\n"
    "      the items of the array (or of a slice: start:stop per dimension, empty bounds for the whole\n"
    "      dimension), C order; raw bytes (the default) or text values by dtype\n"
    "  tessera create OUT --dtype DT --shape N,... [--chunks N,...] [--blocks N,...]\n"
    "                 [--codec blosclz|lz4|lz4hc|zlib|zstd] [--clevel 0-9]\n"
    "                 [--filters shuffle,bitshuffle,delta,trunc:BITS,bytedelta,none]\n"
    "                 [--split always|never|auto] [--threads N] [--sparse] --input RAW|-\n"
    "      a new array (a cframe file, or with --sparse an sframe directory) from C-order bytes\n"
    "  tessera verify FILE\n"
    "      decodes every chunk and block; reports damage with its chunk and block\n"
    "FILE is a cframe file or an sframe directory.\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace tessera::cli;
  if (argc < 2) return fail(kExitUsage, nullptr, "no command (commands: info, dump, create, verify; see --help)");
  const char* cmd = argv[1];
  if (std::strcmp(cmd, "--help") == 0 || std::strcmp(cmd, "-h") == 0 || std::strcmp(cmd, "help") == 0) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (std::strcmp(cmd, "--version") == 0) {
    std::puts("tessera 0.1.0");
    return 0;
  }
  if (std::strcmp(cmd, "info") == 0) return cmd_info(argc - 2, argv + 2);
  if (std::strcmp(cmd, "dump") == 0) return cmd_dump(argc - 2, argv + 2);
  if (std::strcmp(cmd, "create") == 0) return cmd_create(argc - 2, argv + 2);
  if (std::strcmp(cmd, "verify") == 0) return cmd_verify(argc - 2, argv + 2);
  return fail(kExitUsage, nullptr, "unknown command '%s' (commands: info, dump, create, verify; see --help)", cmd);
}
