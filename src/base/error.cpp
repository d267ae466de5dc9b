#include "tessera/error.hpp"

namespace tessera {

const char* errc_name(errc code) noexcept {
  switch (code) {
    case errc::ok: return "ok";
    case errc::invalid_argument: return "invalid_argument";
    case errc::out_of_memory: return "out_of_memory";
    case errc::buffer_too_small: return "buffer_too_small";
    case errc::truncated: return "truncated";
    case errc::malformed: return "malformed";
    case errc::unsupported: return "unsupported";
    case errc::out_of_range: return "out_of_range";
    case errc::overflow: return "overflow";
    case errc::io: return "io";
    case errc::no_space: return "no_space";
    case errc::codec_unavailable: return "codec_unavailable";
    case errc::corrupt: return "corrupt";
    case errc::resource_limit: return "resource_limit";
  }
  return "unknown";
}

}  // namespace tessera
