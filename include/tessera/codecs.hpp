// SPDX-License-Identifier: BSD-3-Clause
/// \file
/// Which codec libraries, filters and automatic partition a program links. On bare metal
/// (TESSERA_CODECS_ON_DEMAND) the core refers to LZ4, Zlib and Zstd only weakly: a firmware links one, in one
/// direction, by calling its function below once, anywhere (the call is what links it; it does nothing at run time). A chunk that needs a codec the program did not link
/// fails with codec_unavailable, naming the function. On hosts every codec of the build is linked and these are
/// no-ops. BloscLZ is always there.
#pragma once

namespace tessera {

/// \name Codecs
/// One function per codec library and direction (see above).
///@{
void codec_link_lz4_decoder() noexcept;    ///< LZ4 and LZ4HC data (one format)
void codec_link_lz4_encoder() noexcept;    ///< writing LZ4
void codec_link_lz4hc_encoder() noexcept;  ///< writing LZ4HC
void codec_link_lz4_dict_encoder() noexcept;    ///< writing LZ4 with dictionaries (use_dict)
void codec_link_lz4hc_dict_encoder() noexcept;  ///< writing LZ4HC with dictionaries (use_dict)
void codec_link_zlib_decoder() noexcept;  ///< reading Zlib
void codec_link_zlib_encoder() noexcept;  ///< writing Zlib
void codec_link_zstd_decoder() noexcept;  ///< reading Zstd
void codec_link_zstd_encoder() noexcept;  ///< writing Zstd
void codec_link_ndlz_decoder() noexcept;  ///< reading NDLZ (c-blosc2's codec 32, codec::ndlz)
void codec_link_ndlz_encoder() noexcept;  ///< writing NDLZ
/// Every codec of the build, both directions (tests, tools, and firmware that has the room).
void codec_link_all() noexcept;
///@}

/// \name Filters
/// Filters, the same way: shuffle is always linked; on bare metal the others only when the program calls their
/// function (a chunk that needs one it did not link is unsupported, naming the function). Hosts link them all.
///@{
void filter_link_bitshuffle() noexcept;  ///< bitshuffle, both directions
void filter_link_delta() noexcept;       ///< delta, both directions
void filter_link_bytedelta() noexcept;   ///< bytedelta, both directions
void filter_link_trunc() noexcept;  ///< trunc_prec and int_trunc: writing only (chunks that used them always read)
void filter_link_ndcell() noexcept;  ///< ndcell (c-blosc2's filter 32), both directions
void filter_link_ndmean() noexcept;  ///< ndmean (c-blosc2's filter 33), both directions
void filter_link_all() noexcept;         ///< every filter of the build
///@}

/// The automatic partition, the same way: array_frame_setup_make (and array_create) choosing the chunk or block
/// shape a program does not give (tessera/array_partition.hpp), and chunk_encode choosing the block size when
/// params.blocksize is 0. On bare metal linked only by this call; without it those are `unsupported`, naming it
/// (a program that gives its shapes never needs it). Hosts link it always.
void partition_link_auto() noexcept;

/// The chunk encoder's parallel blocks (an executor with more than one worker: chunk_encoder_options::exec, and
/// the array's and packer's executors), the same way: on bare metal chunk_encoder_init refuses a parallel
/// executor unless the program calls this (the chunks are the same either way). Hosts link it always.
void encoder_link_parallel() noexcept;

/// User codecs and filters in chunk_encode (chunk_encode_params::plugins, and the array's and packer's plugins),
/// the same way: on bare metal chunk_encode refuses a user codec or filter (unsupported) unless the program
/// calls this. Reading chunks that used them needs no call. Hosts link it always.
void encoder_link_plugins() noexcept;

}  // namespace tessera
