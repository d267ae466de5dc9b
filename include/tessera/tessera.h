/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file tessera.h
 * @brief Tessera's C API (C99): B2ND arrays on any storage, a thin layer over the C++ API (tessera/array.hpp).
 *
 * Conventions:
 *  - Every fallible call returns a ::tessera_status: code 0 (::TESSERA_OK) on success, else a stable
 *    ::tessera_errc number and a message. Messages are static (valid for the program's life), except those of an
 *    array call's argument errors that name values ("array_slice_read: dimension 1: stop 40 outside 0..32"):
 *    they live in the array handle until the next call on it or its close. No global state: nothing is
 *    remembered between calls.
 *  - The library never allocates except through the ::tessera_allocator the caller passes (the array handle
 *    itself comes from it too), and never does I/O except through the ::tessera_storage the caller passes. With
 *    an arena allocator over a static buffer and ::tessera_buffer_storage over another, nothing touches a heap.
 *  - Ownership, one rule: every struct a call takes by pointer (storage, directory, executor, plugins, params,
 *    options, fill, target) is copied or used before the call returns; the caller may free or reuse it at once.
 *    What outlives the call is what those structs point to: callbacks' contexts, allocator contexts, the bytes
 *    of metalayer contents until the call returns. The only handles that refer to another handle are those made
 *    from it without a copy of their own: ::tessera_array_open_again readers, and arrays made by the copies or
 *    save that take their user codecs and filters from the source (params without plugins): close them first.
 *  - An array handle serves one call at a time. Calls that take a const array neither change it nor use its
 *    scratch; reading calls that take a mutable array decode with the handle's decoder and its scratch.
 *  - Buffers of items are in C order; sizes are in bytes and checked (::TESSERA_ERR_BUFFER_TOO_SMALL).
 */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The largest number of dimensions of an array: 16 on hosts (c-blosc2's B2ND_MAX_DIM), 8 on bare metal by
 * default. The library's build sets it (CMake cache variable TESSERA_MAX_DIMS) and passes it to every consumer
 * (its CMake package and pkg-config Cflags). A caller compiled with another value has other struct layouts:
 * the calls that take or fill such structs refuse it with ::TESSERA_ERR_INVALID_ARGUMENT (see ::TESSERA_LAYOUT).
 */
#ifndef TESSERA_MAX_DIMS
#define TESSERA_MAX_DIMS 16
#endif

/** Pipeline slots of the filters (the Blosc2 chunk format's six). */
#define TESSERA_MAX_FILTERS 6
/** The most fixed metalayers an array may have besides "b2nd". */
#define TESSERA_MAX_METALAYERS 15

/** Version of this API (the header's; ::tessera_version gives the library's). */
#define TESSERA_VERSION_MAJOR 0
#define TESSERA_VERSION_MINOR 1 /**< Version of this API: minor. */
#define TESSERA_VERSION_PATCH 0 /**< Version of this API: patch. */
/** The version as one number: major * 10000 + minor * 100 + patch. */
#define TESSERA_VERSION_NUMBER (TESSERA_VERSION_MAJOR * 10000 + TESSERA_VERSION_MINOR * 100 + TESSERA_VERSION_PATCH)

/* ---- Errors --------------------------------------------------------------------------------------------- */

/** Error codes: stable numbers (the same as tessera::errc), never renumbered. */
typedef enum tessera_errc {
  TESSERA_OK = 0,                       /**< success */
  TESSERA_ERR_INVALID_ARGUMENT = 1,     /**< the caller passed something the API does not accept */
  TESSERA_ERR_OUT_OF_MEMORY = 2,        /**< the allocator refused a request */
  TESSERA_ERR_BUFFER_TOO_SMALL = 3,     /**< a caller buffer cannot hold the output */
  TESSERA_ERR_TRUNCATED = 4,            /**< the input ends before the structure it announces */
  TESSERA_ERR_MALFORMED = 5,            /**< the input is not the structure it claims to be */
  TESSERA_ERR_UNSUPPORTED = 6,          /**< valid input this build or version does not handle */
  TESSERA_ERR_OUT_OF_RANGE = 7,         /**< an index, slice or coordinate outside the array */
  TESSERA_ERR_OVERFLOW = 8,             /**< a size or product does not fit its integer type */
  TESSERA_ERR_IO = 9,                   /**< a storage callback failed */
  TESSERA_ERR_NO_SPACE = 10,            /**< the storage is full */
  TESSERA_ERR_CODEC_UNAVAILABLE = 11,   /**< the data needs a codec this build does not include */
  TESSERA_ERR_CORRUPT = 12,             /**< a checksum, offset or size inside stored data is inconsistent */
  TESSERA_ERR_RESOURCE_LIMIT = 13,      /**< the input asks for more memory than the call's budget allows */
  TESSERA_ERR_UNCOMMITTED = 14,         /**< a close dropped changes that were never committed */
  TESSERA_ERR_READ_ONLY = 15            /**< a write on an array, frame or storage opened read-only */
} tessera_errc;

/** The outcome of a call: a ::tessera_errc code and a message saying what went wrong ("" when ok). */
typedef struct tessera_status {
  int32_t code;         /**< ::TESSERA_OK or a ::tessera_errc value */
  const char* message;  /**< never NULL; static, or in the array handle (see the conventions above) */
} tessera_status;

/** The short name of an error code ("ok", "truncated", ...; "unknown" outside the enum). Never NULL. */
const char* tessera_errc_name(int32_t code);

/* ---- Version and layout ----------------------------------------------------------------------------------- */

/** The library's version as "MAJOR.MINOR.PATCH" (static storage). Compare with the TESSERA_VERSION_* macros. */
const char* tessera_version(void);

/** The library's version as one number (major * 10000 + minor * 100 + patch), as ::TESSERA_VERSION_NUMBER. */
int32_t tessera_version_number(void);

/** The library's TESSERA_MAX_DIMS (the header's may differ when a caller is compiled with another value). */
int32_t tessera_max_dims(void);

/**
 * Checks a caller's struct layout (::TESSERA_LAYOUT as the caller's compiler sees it) against the library's:
 * ::TESSERA_OK when they agree, else ::TESSERA_ERR_INVALID_ARGUMENT (e.g. the caller was compiled with another
 * TESSERA_MAX_DIMS). The inline functions of this header pass it for you.
 */
tessera_status tessera_layout_check(uint32_t layout);

/* ---- Allocator ------------------------------------------------------------------------------------------- */

/** Where every byte the library uses comes from (the C mirror of tessera::allocator, the same callbacks). */
typedef struct tessera_allocator {
  /** Returns a block of size bytes aligned to alignment (a power of two), or NULL when it cannot. */
  void* (*allocate)(void* context, size_t size, size_t alignment);
  /** Frees a block; receives exactly the size and alignment it was allocated with. Never called with NULL. */
  void (*deallocate)(void* context, void* block, size_t size, size_t alignment);
  /** Passed to both callbacks. */
  void* context;
} tessera_allocator;

/* ---- Storage --------------------------------------------------------------------------------------------- */

/**
 * The bytes a frame lives in (the C mirror of tessera::storage): a struct of callbacks and a context, e.g. a
 * file, a flash partition or a RAM buffer (::tessera_buffer_storage). Callbacks return a ::tessera_status;
 * their message must be static.
 */
typedef struct tessera_storage {
  /** Reads exactly size bytes at offset into dst; ::TESSERA_ERR_TRUNCATED when the range passes the end. */
  tessera_status (*read)(void* context, uint64_t offset, uint8_t* dst, size_t size);
  /** Writes size bytes at offset, growing the storage; ::TESSERA_ERR_NO_SPACE when full. NULL: read-only. */
  tessera_status (*write)(void* context, uint64_t offset, const uint8_t* src, size_t size);
  /** Stores the current size in bytes in *out. */
  tessera_status (*size)(void* context, uint64_t* out);
  /** Cuts (or extends with zeros) the storage to size bytes. NULL when it cannot. */
  tessera_status (*truncate)(void* context, uint64_t size);
  /** Makes every write so far durable. NULL when writes are durable anyway. */
  tessera_status (*sync)(void* context);
  /**
   * Optional (may be NULL): the storage's bytes when it already is memory (frames are then read in place);
   * stores their number in *size. Returns NULL when it cannot. Valid until the next write or truncate.
   */
  const uint8_t* (*view)(void* context, size_t* size);
  /** Passed to every callback; must outlive the arrays using the storage. */
  void* context;
  /**
   * Optional (may be NULL; both or neither): called before and after each array read (slice, item, selection),
   * on the calling thread; handles sharing the storage may overlap them from several threads. A storage whose
   * view is safe only for a while returns it only while one is open; an array asks only inside its own.
   */
  void (*reads_begin)(void* context);
  void (*reads_end)(void* context); /**< closes the bracket reads_begin opened */
} tessera_storage;

/**
 * A caller's fixed buffer as a storage (no heap): capacity bytes at data, of which the first size are the
 * content. Writes past the capacity fail with ::TESSERA_ERR_NO_SPACE (nothing written).
 */
typedef struct tessera_buffer {
  uint8_t* data;    /**< the caller's memory */
  size_t capacity;  /**< bytes at data */
  size_t size;      /**< bytes of content (grows as frames are written; the serialized array's length) */
} tessera_buffer;

/** Initializes b over capacity bytes at data holding size bytes of content (0 for a new array). */
void tessera_buffer_init(tessera_buffer* b, void* data, size_t capacity, size_t size);

/** The storage over b (its context is b: b must outlive the storage's users). Has a view. */
tessera_storage tessera_buffer_storage(tessera_buffer* b);

/* ---- Parameters ------------------------------------------------------------------------------------------ */

/** A parallel executor (defined in "Executors" below). */
typedef struct tessera_executor tessera_executor;

/** Codecs (the Blosc2 API numbers). */
typedef enum tessera_codec {
  TESSERA_CODEC_BLOSCLZ = 0,
  TESSERA_CODEC_LZ4 = 1,
  TESSERA_CODEC_LZ4HC = 2,
  TESSERA_CODEC_ZLIB = 4,
  TESSERA_CODEC_ZSTD = 5,
  TESSERA_CODEC_NDLZ = 32, /**< c-blosc2's registered NDLZ: 2-D blocks of bytes, compcode_meta 4 or 8 (the cell edge) */
  TESSERA_CODEC_ZFP_ACC = 33,  /**< ZFP, fixed accuracy: tolerance 10^compcode_meta (a signed byte); builds with libzfp */
  TESSERA_CODEC_ZFP_PREC = 34, /**< ZFP, fixed precision: compcode_meta + 2 * ndim + 3 bit planes (at most 64) */
  TESSERA_CODEC_ZFP_RATE = 35  /**< ZFP, fixed rate: compcode_meta percent of the items' bits */
} tessera_codec;

/** Filters (the Blosc2 filter ids). */
typedef enum tessera_filter {
  TESSERA_FILTER_NONE = 0,
  TESSERA_FILTER_SHUFFLE = 1,
  TESSERA_FILTER_BITSHUFFLE = 2,
  TESSERA_FILTER_DELTA = 3,
  TESSERA_FILTER_TRUNC_PREC = 4,
  TESSERA_FILTER_NDCELL = 32,  /**< c-blosc2's registered NDCELL (meta: the cell edge) */
  TESSERA_FILTER_NDMEAN = 33,  /**< c-blosc2's registered NDMEAN (meta: the cell edge; float32, float64; lossy) */
  TESSERA_FILTER_BYTEDELTA = 35,
  TESSERA_FILTER_INT_TRUNC = 36
} tessera_filter;

/** Split modes: whether a block's bytes are compressed as one stream per byte of the item (the Blosc2 values). */
typedef enum tessera_split_mode {
  TESSERA_SPLIT_ALWAYS = 1,         /**< always split (BLOSC_ALWAYS_SPLIT) */
  TESSERA_SPLIT_NEVER = 2,          /**< never split (BLOSC_NEVER_SPLIT) */
  TESSERA_SPLIT_AUTO = 3,           /**< the codec decides (BLOSC_AUTO_SPLIT) */
  TESSERA_SPLIT_FORWARD_COMPAT = 4  /**< the reference's default (BLOSC_FORWARD_COMPAT_SPLIT) */
} tessera_split_mode;

/** The first codec or filter id a user implementation may take (the reference's registered ids 32..159). */
#define TESSERA_USER_ID_FIRST 32
/** The first id the reference leaves to applications (BLOSC2_USER_REGISTERED_CODECS_START, 160..255). */
#define TESSERA_USER_ID_PRIVATE 160

/**
 * A codec the application implements (the C mirror of tessera::chunk_user_codec). Selected for writing by
 * putting its id in a params' codec; chunks store codec format 6 and the id, as c-blosc2 does. The callbacks
 * run on the executor's workers, possibly several at once: thread-safe, no allocation (give them what they need
 * through context). Their status is passed on as it is; its message must be static.
 */
typedef struct tessera_user_codec {
  uint8_t id;  /**< TESSERA_USER_ID_FIRST..255 */
  /**
   * Compresses in_size bytes at in into out (at most out_size bytes) and stores the length in *written; 0 (or
   * in_size) means "does not shrink" and the stream is stored raw. meta is the chunk's codec meta. NULL: the
   * program only reads.
   */
  tessera_status (*encode)(void* context, const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size,
                           uint8_t meta, size_t* written);
  /** Decompresses in into all of out (out_size is the stream's decoded size); *written must become out_size. */
  tessera_status (*decode)(void* context, const uint8_t* in, size_t in_size, uint8_t* out, size_t out_size,
                           uint8_t meta, size_t* written);
  void* context;  /**< passed to encode and decode */
} tessera_user_codec;

/**
 * A filter the application implements (the C mirror of tessera::chunk_user_filter): forward when writing,
 * backward when reading, each from size bytes at in to size bytes at out (one block; typesize is the chunk's,
 * meta the filter slot's). Either may be NULL. Same rules as ::tessera_user_codec.
 */
typedef struct tessera_user_filter {
  uint8_t id;  /**< TESSERA_USER_ID_FIRST..255, not an id the library implements (0..4, 35, 36) */
  /** Applies the filter (writing). */
  tessera_status (*forward)(void* context, const uint8_t* in, uint8_t* out, size_t size, uint8_t meta,
                            uint8_t typesize);
  /** Undoes it (reading). */
  tessera_status (*backward)(void* context, const uint8_t* in, uint8_t* out, size_t size, uint8_t meta,
                             uint8_t typesize);
  void* context;  /**< passed to forward and backward */
} tessera_user_filter;

/**
 * The user codecs and filters an array may need (the C mirror of tessera::chunk_plugins; no global registry).
 * An array copies the tables into its handle (from its allocator): the tables may go once the call returns;
 * the contexts must outlive the array. The first entry with an id wins.
 */
typedef struct tessera_plugins {
  const tessera_user_codec* codecs;    /**< ncodecs entries (NULL when none) */
  size_t ncodecs;                      /**< entries at codecs */
  const tessera_user_filter* filters;  /**< nfilters entries (NULL when none) */
  size_t nfilters;                     /**< entries at filters */
} tessera_plugins;

/** A fixed metalayer: a name (NUL-terminated, 1..31 bytes) and its content (msgpack by convention). */
typedef struct tessera_metalayer {
  const char* name;     /**< NUL-terminated */
  const void* content;  /**< size bytes */
  size_t size;          /**< fixed for the array's life */
} tessera_metalayer;

/** The parameters of a new array. Start from ::tessera_array_params_init, then set what differs. */
typedef struct tessera_array_params {
  /**
   * Set by ::tessera_array_params_init (::TESSERA_LAYOUT): the calls that take params refuse a struct without it
   * (not initialized, or compiled with another TESSERA_MAX_DIMS than the library's). First, so that its place is
   * the same in every layout.
   */
  uint32_t layout;
  int32_t ndim;                              /**< 0..TESSERA_MAX_DIMS; 0 is a scalar (one item) */
  int64_t shape[TESSERA_MAX_DIMS];           /**< items per dimension */
  int32_t chunkshape[TESSERA_MAX_DIMS];      /**< all zero (over ndim): chosen automatically */
  int32_t blockshape[TESSERA_MAX_DIMS];      /**< all zero (over ndim): chosen automatically */
  const char* dtype;     /**< NumPy dtype string ("<f8"), NUL-terminated; NULL: "|u1" or "|V<itemsize>" */
  int32_t itemsize;      /**< bytes per item (1..255); 0: from the dtype */
  int32_t codec;         /**< a ::tessera_codec (default BloscLZ), or a user codec's id (in plugins) */
  int32_t clevel;        /**< 0..9 (default 5) */
  /** ::tessera_filter ids or user filters' ids (in plugins); default: shuffle in the last slot */
  uint8_t filters[TESSERA_MAX_FILTERS];
  uint8_t filters_meta[TESSERA_MAX_FILTERS];  /**< each filter's meta byte */
  int32_t splitmode;     /**< a ::tessera_split_mode (default ::TESSERA_SPLIT_FORWARD_COMPAT) */
  const tessera_metalayer* metalayers;  /**< fixed metalayers besides "b2nd" (NULL when none) */
  uint32_t nmetalayers;                 /**< at most TESSERA_MAX_METALAYERS */
  uint64_t base_offset;  /**< where the frame starts in the storage (default 0) */
  /**
   * Nonzero (default): the crash-safe write order (each commit appends, then rewrites the header). Zero: the
   * reference's in-place layout, the compact choice for RAM buffers.
   */
  int32_t durable;
  /**
   * Decoding and encoding run on this executor (NULL, the default: serially in the calling thread). The struct
   * is copied into the handle; its context must outlive the array.
   */
  const tessera_executor* executor;
  /** Nonzero: a dictionary in every chunk (LZ4, LZ4HC, Zstd; the reference's use_dict). Default 0. */
  int32_t use_dict;
  /**
   * Nonzero: never write over bytes an older commit used, so that readers that do not refresh keep reading the
   * array they opened (the storage keeps every version of rewritten chunks). Default 0: rewrites reuse the space
   * no committed frame references (frame_open_options::keep_old_frames in tessera/frame.hpp).
   */
  int32_t keep_old_frames;
  /** User codecs and filters for writing and reading the array (NULL, the default: none); copied. */
  const tessera_plugins* plugins;
  /**
   * The codec's meta byte, 0..255 (default 0), kept in the frame and every chunk: a user codec's parameter (for
   * c-blosc2's ZFP codecs the accuracy, precision or rate; for NDLZ the cell edge). ::tessera_array_params_get
   * returns it, so a copy made with those params keeps it.
   */
  int32_t compcode_meta;
} tessera_array_params;

/**
 * What ::tessera_array_params_init calls with the caller's ::TESSERA_LAYOUT: the defaults when layout is the
 * library's; else only p->layout is set (to the caller's layout), and the calls given p refuse it.
 */
void tessera_array_params_init_layout(tessera_array_params* p, uint32_t layout);

/** How the items of a new array start. */
typedef enum tessera_fill_kind {
  TESSERA_FILL_ZEROS = 0,   /**< zeros (index entries only, no chunk bytes) */
  TESSERA_FILL_UNINIT = 1,  /**< unspecified (index entries only) */
  TESSERA_FILL_NANS = 2,    /**< NaNs (itemsize 4 or 8) */
  TESSERA_FILL_VALUE = 3,   /**< every item is the itemsize bytes at data */
  TESSERA_FILL_BUFFER = 4   /**< the C-order items of the whole array at data (size: prod(shape) * itemsize) */
} tessera_fill_kind;

/** The initial contents of a new array. */
typedef struct tessera_fill {
  int32_t kind;      /**< a ::tessera_fill_kind */
  const void* data;  /**< VALUE: one item; BUFFER: the items; else unused */
  size_t size;       /**< bytes at data */
} tessera_fill;

/** Options of ::tessera_array_open. Start from ::tessera_open_options_init. */
typedef struct tessera_open_options {
  uint64_t base_offset;  /**< where the frame starts in the storage (default 0) */
  int32_t writable;      /**< nonzero: allow writes (the storage needs write); default 0 */
  int32_t durable;       /**< as in ::tessera_array_params (default nonzero) */
  const tessera_executor* executor;  /**< as in ::tessera_array_params (default NULL: serial) */
  int32_t keep_old_frames;           /**< as in ::tessera_array_params (default 0) */
  /**
   * User codecs and filters the array's chunks may need (default NULL; copied). Without them a chunk that needs
   * one fails with ::TESSERA_ERR_CODEC_UNAVAILABLE (a codec) or ::TESSERA_ERR_UNSUPPORTED (a filter).
   */
  const tessera_plugins* plugins;
} tessera_open_options;

/** Sets o to the defaults (offset 0, read-only, durable). */
void tessera_open_options_init(tessera_open_options* o);

/* ---- The array ------------------------------------------------------------------------------------------- */

/** An open array (opaque). Allocated from the allocator given at create or open; freed by close. */
typedef struct tessera_array tessera_array;

/** What an array is. */
typedef struct tessera_array_info {
  int32_t ndim;                          /**< number of dimensions */
  int64_t shape[TESSERA_MAX_DIMS];       /**< items per dimension */
  int32_t chunkshape[TESSERA_MAX_DIMS];  /**< items per chunk per dimension */
  int32_t blockshape[TESSERA_MAX_DIMS];  /**< items per block per dimension */
  int32_t itemsize;                      /**< bytes per item */
  int64_t nitems;                        /**< prod(shape) */
  int64_t nbytes;                        /**< prod(shape) * itemsize */
  int64_t nchunks;                       /**< chunks in the array */
  /**
   * The dtype string, dtype_len bytes. For an array (::tessera_array_info_get) it is NUL-terminated and valid
   * until the handle is closed; for a view (::tessera_array_view_info_get) it points into the frame and is NOT
   * NUL-terminated: use dtype_len.
   */
  const char* dtype;
  size_t dtype_len;                      /**< bytes at dtype (the terminating NUL excluded) */
  int32_t extchunkshape[TESSERA_MAX_DIMS];  /**< chunkshape rounded up to a multiple of blockshape (b2nd's) */
  /**
   * Compressed bytes of the chunks, as the frame's header records them (the reference's cbytes; in a contiguous
   * frame whose chunks were rewritten it includes dead bytes until ::tessera_array_compact)
   */
  int64_t cbytes;
  int64_t chunks_nbytes;                 /**< decoded bytes of the stored chunks (padding included): nchunks * prod(extchunkshape) * itemsize */
  double ratio;                          /**< chunks_nbytes / cbytes, the reference's compression ratio (0 when cbytes is 0) */
} tessera_array_info;

/**
 * The layout of this header's structs as the including program compiles them: TESSERA_MAX_DIMS and the sizes
 * of ::tessera_array_params and ::tessera_array_info. The inline functions below pass it to the library, which
 * refuses a layout other than its own (a caller compiled with another TESSERA_MAX_DIMS) instead of reading or
 * writing past the caller's structs.
 */
#define TESSERA_LAYOUT                                                                                  \
  TESSERA_LAYOUT_U32_(TESSERA_MAX_DIMS | (sizeof(tessera_array_params) & 0xfffu) << 8 |                 \
                      (sizeof(tessera_array_info) & 0xfffu) << 20)
/** \cond internal: a conversion to uint32_t that C and C++ (without old-style casts) both accept. */
#ifdef __cplusplus
#define TESSERA_LAYOUT_U32_(x) static_cast<uint32_t>(x)
#else
#define TESSERA_LAYOUT_U32_(x) ((uint32_t)(x))
#endif
/** \endcond */

/**
 * Sets p to the defaults (the reference's: BloscLZ, level 5, shuffle; ndim 0, automatic shapes, durable), with
 * p->layout the caller's ::TESSERA_LAYOUT.
 */
static inline void tessera_array_params_init(tessera_array_params* p) { tessera_array_params_init_layout(p, TESSERA_LAYOUT); }

/**
 * Creates an array in storage (a new contiguous frame at params->base_offset) and commits it; *out receives the
 * handle (allocated from alloc). The storage struct is copied; its context and alloc's context must outlive
 * the array. fill may be NULL (zeros). Errors: INVALID_ARGUMENT (parameters, a VALUE fill that is not one
 * item), BUFFER_TOO_SMALL (a BUFFER fill smaller than the array), UNSUPPORTED (itemsize > 255), OVERFLOW,
 * OUT_OF_MEMORY, NO_SPACE and the storage's.
 */
tessera_status tessera_array_create(tessera_array** out, const tessera_storage* storage,
                                    const tessera_allocator* alloc, const tessera_array_params* params,
                                    const tessera_fill* fill);

/**
 * Opens the array whose frame is at options->base_offset of storage (options may be NULL: the defaults,
 * read-only). Errors: TRUNCATED, MALFORMED, CORRUPT, UNSUPPORTED, OUT_OF_MEMORY, and the storage's.
 */
tessera_status tessera_array_open_layout(tessera_array** out, const tessera_storage* storage,
                                         const tessera_allocator* alloc, const tessera_open_options* options,
                                         uint32_t layout);
/** ::tessera_array_open_layout with the caller's ::TESSERA_LAYOUT (INVALID_ARGUMENT when it is not the library's). */
static inline tessera_status tessera_array_open(tessera_array** out, const tessera_storage* storage,
                                                const tessera_allocator* alloc, const tessera_open_options* options) {
  return tessera_array_open_layout(out, storage, alloc, options, TESSERA_LAYOUT);
}

/**
 * Closes the array and frees its handle (NULL is a no-op). Changes not committed (auto-commit off, or a writing
 * call that failed) are dropped, and then UNCOMMITTED is returned: commit first (tessera_array_dirty tells).
 */
tessera_status tessera_array_close(tessera_array* a);

/** Nonzero when the array has changes not committed yet (closing would drop them). */
int32_t tessera_array_dirty(const tessera_array* a);

/**
 * Rewrites the array's contiguous frame tight (frame_compact in tessera/frame.hpp): pending changes are
 * committed, then the chunks past the first hole are copied past the frame, committed, copied down and committed
 * again; a crash leaves the old frame or the new one. The storage needs room for that copy meanwhile. Sparse
 * arrays: commits pending changes only. Errors: INVALID_ARGUMENT (read-only), NO_SPACE, UNSUPPORTED, the storage's.
 */
tessera_status tessera_array_compact(tessera_array* a);

/** Nonzero (the default): commit the frame after each successful writing call. Zero: group them. */
void tessera_array_set_auto_commit(tessera_array* a, int32_t on);

/** Commits pending changes (only needed with auto-commit off). */
tessera_status tessera_array_commit(tessera_array* a);

/** Fills *out (a struct of the given ::TESSERA_LAYOUT: INVALID_ARGUMENT when not the library's) with what a is. */
tessera_status tessera_array_info_get_layout(const tessera_array* a, tessera_array_info* out, uint32_t layout);
/** Fills *out with what the array is (::tessera_array_info_get_layout with the caller's ::TESSERA_LAYOUT). */
static inline tessera_status tessera_array_info_get(const tessera_array* a, tessera_array_info* out) {
  return tessera_array_info_get_layout(a, out, TESSERA_LAYOUT);
}

/* ---- Reading and writing --------------------------------------------------------------------------------- */

/** The whole array into out (size bytes, at least nbytes), C order. */
tessera_status tessera_array_read(tessera_array* a, void* out, size_t size);

/**
 * The slice [start, stop) into out (C order over stop - start; size bytes). start and stop have ndim entries
 * (may be NULL for ndim 0). Errors: OUT_OF_RANGE (bounds), BUFFER_TOO_SMALL, decoding errors.
 */
tessera_status tessera_array_slice_get(tessera_array* a, const int64_t* start, const int64_t* stop, void* out,
                                       size_t size);

/**
 * Writes src (C order over stop - start; size bytes, at least that many) into the slice [start, stop). Needs
 * a writable array. Errors: OUT_OF_RANGE, BUFFER_TOO_SMALL (src smaller than the slice), INVALID_ARGUMENT
 * (read-only array), encoding and storage errors.
 */
tessera_status tessera_array_slice_set(tessera_array* a, const int64_t* start, const int64_t* stop,
                                       const void* src, size_t size);

/**
 * Appends count items along axis (src: C order, the array's shape with count along axis; size bytes):
 * appending along axis 0 of an array chunked along it adds whole chunks. Needs a writable array.
 * Errors: BUFFER_TOO_SMALL (src smaller than the items), INVALID_ARGUMENT (axis, read-only array).
 */
tessera_status tessera_array_append(tessera_array* a, int32_t axis, int64_t count, const void* src, size_t size);

/** Grows or shrinks dimensions at their ends (new items are zero). new_shape has ndim entries. */
tessera_status tessera_array_resize(tessera_array* a, const int64_t* new_shape);

/* ---- Metalayers ------------------------------------------------------------------------------------------ */

/**
 * Fixed metalayer name: *content receives a view of its bytes (valid until the next change of the array) and
 * *size their number. Errors: OUT_OF_RANGE (no such metalayer), INVALID_ARGUMENT (bad name).
 */
tessera_status tessera_array_meta_get(const tessera_array* a, const char* name, const void** content,
                                      size_t* size);

/** Replaces fixed metalayer name's content with size bytes (its size is fixed: the same size). */
tessera_status tessera_array_meta_set(tessera_array* a, const char* name, const void* content, size_t size);

/**
 * Adds fixed metalayer name with size bytes of content (blosc2_meta_add), to an array with chunks too: pending
 * changes are committed first, then the header grows in commits that each leave the old array or the new one.
 * Needs a writable array. Errors: INVALID_ARGUMENT (a bad name, one that exists), OUT_OF_RANGE (16 metalayers),
 * UNSUPPORTED (keep_old_frames; a durable frame whose longer header would leave the storage's first 512 bytes).
 */
tessera_status tessera_array_meta_add(tessera_array* a, const char* name, const void* content, size_t size);

/** The number of fixed metalayers ("b2nd" included, as blosc2's schunk->nmetalayers) into *count. */
tessera_status tessera_array_meta_count(const tessera_array* a, uint32_t* count);

/**
 * The name of fixed metalayer i (header order) into name (size bytes, NUL-terminated; 32 always suffice);
 * *len (may be NULL) receives its length without the NUL. Errors: OUT_OF_RANGE (i >= count), BUFFER_TOO_SMALL.
 */
tessera_status tessera_array_meta_name(const tessera_array* a, uint32_t i, char* name, size_t size, size_t* len);

/** *exists receives 1 when fixed metalayer name exists, else 0 (blosc2_meta_exists). Errors: a bad name. */
tessera_status tessera_array_meta_exists(const tessera_array* a, const char* name, int32_t* exists);

/** The number of variable-length metalayers (blosc2's schunk->nvlmetalayers) into *count. */
tessera_status tessera_array_vlmeta_count(const tessera_array* a, uint32_t* count);

/** The name of variable-length metalayer i, as ::tessera_array_meta_name (blosc2_vlmeta_get_names, one by one). */
tessera_status tessera_array_vlmeta_name(const tessera_array* a, uint32_t i, char* name, size_t size, size_t* len);

/** *exists receives 1 when variable-length metalayer name exists, else 0 (blosc2_vlmeta_exists). */
tessera_status tessera_array_vlmeta_exists(const tessera_array* a, const char* name, int32_t* exists);

/** The decoded size of variable-length metalayer name into *size. Errors: OUT_OF_RANGE (no such metalayer). */
tessera_status tessera_array_vlmeta_size(const tessera_array* a, const char* name, size_t* size);

/**
 * Decodes variable-length metalayer name into out (size bytes); *written (may be NULL) receives its length, or,
 * with BUFFER_TOO_SMALL, the size out needs (grow it and call again). Errors: BUFFER_TOO_SMALL, OUT_OF_RANGE (no
 * such metalayer). The array is not const (unlike
 * ::tessera_array_vlmeta_size): the content is a compressed chunk, decoded with the handle's decoder and its
 * scratch (no allocation per call).
 */
tessera_status tessera_array_vlmeta_get(tessera_array* a, const char* name, void* out, size_t size,
                                        size_t* written);

/** Adds or replaces variable-length metalayer name (any size). Needs a writable array. */
tessera_status tessera_array_vlmeta_set(tessera_array* a, const char* name, const void* content, size_t size);

/** Deletes variable-length metalayer name. Needs a writable array. */
tessera_status tessera_array_vlmeta_delete(tessera_array* a, const char* name);

/* ---- Executors ------------------------------------------------------------------------------------------- */

/** A task: index in [0, ntasks); worker in [0, executor.workers) names the worker running it. */
typedef void (*tessera_executor_task)(void* task_context, size_t index, uint32_t worker);

/**
 * Runs independent tasks, possibly in parallel (the C mirror of tessera::executor): run calls
 * task(task_context, i, w) once for every i in [0, ntasks) and returns when all have finished; no two tasks run
 * at the same time with the same w, and w < workers. run NULL: serial. Tasks never call the allocator.
 */
struct tessera_executor {
  /** Runs the tasks (see above); NULL: serial. */
  void (*run)(void* context, size_t ntasks, tessera_executor_task task, void* task_context);
  void* context;     /**< passed to run */
  uint32_t workers;  /**< distinct worker indices run may use (>= 1) */
};

/* ---- Storage directories (sparse frames) ------------------------------------------------------------------ */

/** How a directory entry is opened. */
typedef enum tessera_storage_open_mode {
  TESSERA_STORAGE_OPEN_READ = 0,        /**< an existing entry, read-only (write/truncate may be NULL) */
  TESSERA_STORAGE_OPEN_READ_WRITE = 1,  /**< an existing entry */
  TESSERA_STORAGE_OPEN_REPLACE = 2      /**< read-write; created when missing, emptied when present */
} tessera_storage_open_mode;

/** The longest entry name ("chunks.b2frame", "0000001F.chunk"), NUL excluded. */
#define TESSERA_STORAGE_NAME_MAX 31

/**
 * What a directory's list callback calls for each entry name (NUL-terminated, at most ::TESSERA_STORAGE_NAME_MAX
 * bytes, valid during the call only). A status other than ::TESSERA_OK stops the listing; list returns it.
 */
typedef tessera_status (*tessera_storage_visit)(void* arg, const char* name);

/**
 * A directory of named storages, the home of a sparse frame (the C mirror of tessera::storage_directory).
 * Callbacks return a ::tessera_status with a static message.
 */
typedef struct tessera_storage_directory {
  /**
   * Opens entry name with a ::tessera_storage_open_mode; *out receives a storage the directory keeps (at a
   * stable address) until close. A missing entry with READ or READ_WRITE is ::TESSERA_ERR_IO.
   */
  tessera_status (*open)(void* context, const char* name, int32_t mode, const tessera_storage** out);
  /** Releases a storage from open (no sync); called exactly once per successful open. */
  tessera_status (*close)(void* context, const tessera_storage* storage);
  /** Removes entry name (::TESSERA_ERR_IO when missing). */
  tessera_status (*remove)(void* context, const char* name);
  /** Atomically replaces entry to with entry from (POSIX rename). */
  tessera_status (*rename)(void* context, const char* from, const char* to);
  void* context;  /**< passed to every callback */
  /**
   * Optional (NULL: none): calls visit(arg, name) once for each entry, in any order, in memory that does not grow
   * with the number of entries; visit may remove the entry it is given. A writable open of a sparse array
   * (::tessera_array_open_sparse) removes, through it, the chunk entries no committed index references (left by a crash) and a stale
   * `chunks.b2frame.tmp`; without it they stay. Last, so that initializers of the first five members stay valid.
   */
  tessera_status (*list)(void* context, tessera_storage_visit visit, void* arg);
} tessera_storage_directory;

/**
 * Creates an array as a sparse frame in dir (its durable and base_offset parameters are unused). The directory
 * struct is copied into the handle, like a storage; its context must outlive the array. Errors as
 * ::tessera_array_create.
 */
tessera_status tessera_array_create_sparse(tessera_array** out, const tessera_storage_directory* dir,
                                           const tessera_allocator* alloc, const tessera_array_params* params,
                                           const tessera_fill* fill);

/** Opens the sparse frame in dir (options may be NULL; base_offset unused). dir is copied; its context must outlive the array. */
tessera_status tessera_array_open_sparse_layout(tessera_array** out, const tessera_storage_directory* dir,
                                                const tessera_allocator* alloc, const tessera_open_options* options,
                                                uint32_t layout);
/** ::tessera_array_open_sparse_layout with the caller's ::TESSERA_LAYOUT. */
static inline tessera_status tessera_array_open_sparse(tessera_array** out, const tessera_storage_directory* dir,
                                                       const tessera_allocator* alloc,
                                                       const tessera_open_options* options) {
  return tessera_array_open_sparse_layout(out, dir, alloc, options, TESSERA_LAYOUT);
}

/* ---- Readers that follow a writer ------------------------------------------------------------------------- */

/**
 * Another read-only handle on what a reads (same storage or directory and geometry, a's user codecs and
 * filters), with its own frame state, decoder and executor (exec NULL: serial; copied): one handle per thread.
 * It reads through a's storage adapter: close it before a. Picks up what was committed.
 */
tessera_status tessera_array_open_again(tessera_array** out, const tessera_array* a,
                                        const tessera_allocator* alloc, const tessera_executor* exec);

/**
 * Picks up what a writer (another handle, thread or process) committed since a was opened or last refreshed:
 * new chunks, shape, metalayers. Read-only arrays only (else INVALID_ARGUMENT); on error a stays as it was.
 */
tessera_status tessera_array_refresh(tessera_array* a);

/* ---- Items, selections, shape changes --------------------------------------------------------------------- */

/** One item at coords (ndim entries) into out (size >= itemsize). */
tessera_status tessera_array_element_get(tessera_array* a, const int64_t* coords, void* out, size_t size);

/** Writes one item (size == itemsize) at coords. Needs a writable array. */
tessera_status tessera_array_element_set(tessera_array* a, const int64_t* coords, const void* item, size_t size);

/**
 * Orthogonal selection: for each dimension d, counts[d] indices (any order, repeats allowed) at indices[d];
 * out receives the items of every combination, C order over (counts[0], ..., counts[ndim-1]).
 */
tessera_status tessera_array_orthogonal_get(tessera_array* a, const int64_t* const* indices, const int64_t* counts,
                                            void* out, size_t size);

/**
 * Writes an orthogonal selection (c-blosc2's b2nd_set_orthogonal_selection): src (size bytes) holds the items of
 * every combination of the indices, C order over (counts[0], ..., counts[ndim-1]), as ::tessera_array_orthogonal_get
 * reads them. An index listed twice in one dimension receives the item listed last. Every index is checked before
 * anything is written; each touched chunk is decoded and written once. Needs a writable array; commits when
 * auto-commit is on. Errors: OUT_OF_RANGE (an index outside the array), BUFFER_TOO_SMALL (src smaller than the
 * selection), INVALID_ARGUMENT (null pointers, negative count, read-only array).
 */
tessera_status tessera_array_orthogonal_set(tessera_array* a, const int64_t* const* indices, const int64_t* counts,
                                            const void* src, size_t size);

/** \cond internal: b2nd's selection (int64_t* sel[]) as the const one; C++ converts it implicitly. */
#ifdef __cplusplus
#define TESSERA_SELECTION_(s) (s)
#else
#define TESSERA_SELECTION_(s) ((const int64_t* const*)(s))
#endif
/** \endcond */

/**
 * ::tessera_array_orthogonal_get for b2nd's selection idiom, `int64_t* selection[ndim]` (b2nd_get_orthogonal_selection's
 * `int64_t **selection`), which C does not pass as `const int64_t* const*` without a warning.
 */
static inline tessera_status tessera_array_orthogonal_get_b2nd(tessera_array* a, int64_t* const* selection,
                                                               const int64_t* counts, void* out, size_t size) {
  return tessera_array_orthogonal_get(a, TESSERA_SELECTION_(selection), counts, out, size);
}

/** ::tessera_array_orthogonal_set for b2nd's selection idiom (see ::tessera_array_orthogonal_get_b2nd). */
static inline tessera_status tessera_array_orthogonal_set_b2nd(tessera_array* a, int64_t* const* selection,
                                                               const int64_t* counts, const void* src, size_t size) {
  return tessera_array_orthogonal_set(a, TESSERA_SELECTION_(selection), counts, src, size);
}

/* ---- The "b2nd" metalayer on its own ------------------------------------------------------------------- */

/**
 * b2nd_serialize_meta: the "b2nd" metalayer for this geometry and dtype (NUL-terminated NumPy string;
 * dtype_format 0), byte for byte as c-blosc2 writes it, into out (size bytes). *written receives its length, or,
 * with BUFFER_TOO_SMALL, the size out needs. shape, chunkshape and blockshape hold ndim entries (0..TESSERA_MAX_DIMS).
 * Errors: INVALID_ARGUMENT (null pointers, a geometry or dtype_format out of range), BUFFER_TOO_SMALL.
 */
tessera_status tessera_b2nd_meta_serialize(int32_t ndim, const int64_t* shape, const int32_t* chunkshape,
                                           const int32_t* blockshape, const char* dtype, int32_t dtype_format,
                                           void* out, size_t size, size_t* written);

/**
 * b2nd_deserialize_meta: reads a "b2nd" (or the older "caterva") metalayer. shape, chunkshape and blockshape hold
 * `capacity` entries and receive *ndim of them; *dtype views the dtype inside meta (dtype_len bytes, not
 * NUL-terminated; "|u1" for the caterva form). Errors: TRUNCATED, MALFORMED (naming the field), UNSUPPORTED (ndim
 * above the library's TESSERA_MAX_DIMS), BUFFER_TOO_SMALL (ndim above capacity), INVALID_ARGUMENT (null pointers).
 */
tessera_status tessera_b2nd_meta_deserialize(const void* meta, size_t size, int32_t capacity, int32_t* ndim,
                                             int64_t* shape, int32_t* chunkshape, int32_t* blockshape,
                                             const char** dtype, size_t* dtype_len, int32_t* dtype_format);

/**
 * The slice [start, stop) into the box of the same extent at buffer_start of buffer, a C-order array of
 * buffer_shape (size bytes, at least prod(buffer_shape) items); buffer_start NULL is the leading corner (c-blosc2's
 * b2nd_get_slice_cbuffer with a larger buffershape). Items outside the box are left as they are (the reference
 * zeroes them), so several slices can be gathered into one buffer. Errors:
 * OUT_OF_RANGE (bounds, or the box outside buffer_shape), BUFFER_TOO_SMALL, OVERFLOW, INVALID_ARGUMENT (null
 * pointers with ndim > 0, negative buffer_shape), decoding errors.
 */
tessera_status tessera_array_slice_get_into(tessera_array* a, const int64_t* start, const int64_t* stop, void* buffer,
                                            size_t size, const int64_t* buffer_shape, const int64_t* buffer_start);

/**
 * Writes the slice [start, stop) from the box at buffer_start of buffer, a C-order array of buffer_shape (as
 * ::tessera_array_slice_get_into; c-blosc2's b2nd_set_slice_cbuffer with a larger buffershape). Needs a writable
 * array; commits when auto-commit is on. Errors: those of ::tessera_array_slice_get_into and ::tessera_array_slice_set.
 */
tessera_status tessera_array_slice_set_from(tessera_array* a, const int64_t* start, const int64_t* stop,
                                            const void* buffer, size_t size, const int64_t* buffer_shape,
                                            const int64_t* buffer_start);

/**
 * Inserts count items before position pos of axis (src: C order, the array's shape with count along axis).
 * At the end any count works; elsewhere pos and count must be multiples of the chunk extent along axis.
 */
tessera_status tessera_array_insert(tessera_array* a, int32_t axis, int64_t pos, int64_t count, const void* src,
                                    size_t size);

/** Deletes items [pos, pos + count) along axis (same rule as ::tessera_array_insert). */
tessera_status tessera_array_delete(tessera_array* a, int32_t axis, int64_t pos, int64_t count);

/**
 * Resizes with the change at start (c-blosc2's b2nd_resize; start NULL: at the ends, as ::tessera_array_resize).
 * Per dimension, growing inserts zero items before start[d] and shrinking removes the items from start[d] on. At
 * the end any change works; elsewhere start[d] and the change must be multiples of the chunk extent
 * (INVALID_ARGUMENT). OUT_OF_RANGE: start[d] outside 0..shape[d], or removed items past the end. Checked before
 * anything changes; commits when auto-commit is on.
 */
tessera_status tessera_array_resize_at(tessera_array* a, const int64_t* new_shape, const int64_t* start);

/* ---- New arrays from arrays ------------------------------------------------------------------------------- */

/** Where a new array goes: a contiguous frame in storage or a sparse frame in directory (either copied). */
typedef struct tessera_array_target {
  const tessera_storage* storage;                /**< contiguous frame at base_offset; or NULL */
  const tessera_storage_directory* directory;    /**< sparse frame; or NULL */
  uint64_t base_offset;                          /**< contiguous only */
  int32_t durable;                               /**< as in ::tessera_array_params */
} tessera_array_target;

/** A target in storage at offset 0, durable. */
tessera_array_target tessera_array_target_contiguous(const tessera_storage* storage);
/** A target in dir. */
tessera_array_target tessera_array_target_sparse(const tessera_storage_directory* dir);

/**
 * Fills *out (of the given ::TESSERA_LAYOUT: INVALID_ARGUMENT when not the library's) with a's parameters
 * (shape, chunk and block shapes, compression, itemsize, dtype: a NUL-terminated copy the handle owns, valid
 * until a is closed; metalayers none; executor NULL): a start for the copies below or for
 * ::tessera_array_create of an array like a.
 */
tessera_status tessera_array_params_get_layout(const tessera_array* a, tessera_array_params* out, uint32_t layout);
/** ::tessera_array_params_get_layout with the caller's ::TESSERA_LAYOUT. */
static inline tessera_status tessera_array_params_get(const tessera_array* a, tessera_array_params* out) {
  return tessera_array_params_get_layout(a, out, TESSERA_LAYOUT);
}

/*
 * In the functions below, params (may be NULL: the source's own) gives the new array's chunk and block shapes,
 * compression, executor and extra metalayers; its ndim, shape, dtype, itemsize, base_offset and durable are
 * ignored. Chunk and block shapes must have the new array's ndim (or be all zero: automatic). *out receives a
 * writable handle from alloc.
 */

/** The whole of src, e.g. with other chunk and block shapes (rechunking) or compression. */
tessera_status tessera_array_copy(tessera_array** out, const tessera_array_target* target,
                                  const tessera_allocator* alloc, tessera_array* src,
                                  const tessera_array_params* params);

/** The slice [start, stop) of src as a new array. */
tessera_status tessera_array_slice_copy(tessera_array** out, const tessera_array_target* target,
                                        const tessera_allocator* alloc, tessera_array* src, const int64_t* start,
                                        const int64_t* stop, const tessera_array_params* params);

/** src1 then src2 along axis (other extents, itemsizes and dtypes must agree). */
tessera_status tessera_array_concatenate(tessera_array** out, const tessera_array_target* target,
                                         const tessera_allocator* alloc, tessera_array* src1, tessera_array* src2,
                                         int32_t axis, const tessera_array_params* params);

/** src without its dimensions of extent 1 (all when axes is NULL, else those with axes[d] nonzero). */
tessera_status tessera_array_squeeze(tessera_array** out, const tessera_array_target* target,
                                     const tessera_allocator* alloc, tessera_array* src, const uint8_t* axes);

/** src with new dimensions of extent 1: the result has new_ndim dimensions, the new ones where axes[d] != 0. */
tessera_status tessera_array_expand_dims(tessera_array** out, const tessera_array_target* target,
                                         const tessera_allocator* alloc, tessera_array* src, const uint8_t* axes,
                                         int32_t new_ndim);

/** A copy of src's frame elsewhere (e.g. RAM to a file): chunks as they are, all metalayers and vlmetalayers. */
tessera_status tessera_array_save(tessera_array** out, const tessera_array_target* target,
                                  const tessera_allocator* alloc, tessera_array* src);

/* ---- Chunks ----------------------------------------------------------------------------------------------- */

/** How a Blosc2 chunk is encoded. Start from ::tessera_chunk_params_init or ::tessera_array_chunk_params_get. */
typedef struct tessera_chunk_params {
  int32_t typesize;      /**< 1..255 (default 1) */
  int32_t clevel;        /**< 0..9 (default 5); 0 stores the data verbatim */
  int32_t codec;         /**< a ::tessera_codec (default BloscLZ) */
  uint8_t filters[TESSERA_MAX_FILTERS];       /**< default: shuffle in the last slot */
  uint8_t filters_meta[TESSERA_MAX_FILTERS];  /**< each slot's meta */
  int32_t splitmode;     /**< a ::tessera_split_mode (default ::TESSERA_SPLIT_FORWARD_COMPAT) */
  int32_t blocksize;     /**< bytes per block; 0 (default): automatic */
  int32_t use_dict;      /**< nonzero: a dictionary in the chunk (LZ4, LZ4HC, Zstd). Default 0. */
  int32_t compcode_meta; /**< the codec's meta byte, 0..255 (default 0): NDLZ's cell edge (4 or 8), a user codec's */
  /**
   * The blocks' n-d shape, which the NDLZ codec and the NDCELL and NDMEAN filters need (c-blosc2 reads it from
   * the array's b2nd metalayer): nd_ndim (1..TESSERA_MAX_DIMS) items per block per dimension at nd_blockshape,
   * whose product times typesize must be blocksize. nd_ndim 0 (default, nd_blockshape NULL): no geometry, and
   * a chunk with those plugins is refused (UNSUPPORTED). Read during the call only.
   * ::tessera_array_chunk_params_get points it at the array's block shape (valid until the array is closed).
   */
  int32_t nd_ndim;
  const int32_t* nd_blockshape; /**< nd_ndim items per block per dimension (see nd_ndim); NULL when nd_ndim is 0 */
} tessera_chunk_params;

/** Sets p to the reference's defaults. */
void tessera_chunk_params_init(tessera_chunk_params* p);

/** The parameters a's chunks are encoded with (typesize, block size in bytes, codec, filters, split). */
tessera_status tessera_array_chunk_params_get(const tessera_array* a, tessera_chunk_params* out);

/** The largest chunk ::tessera_chunk_encode writes for n bytes: an out of this size always suffices. */
#define TESSERA_CHUNK_ENCODE_BOUND(n) ((n) + 32u)

/** Special-value chunks: the whole chunk is one value (the Blosc2 special kinds). */
typedef enum tessera_chunk_special {
  TESSERA_CHUNK_SPECIAL_NONE = 0,   /**< a regular chunk */
  TESSERA_CHUNK_SPECIAL_ZEROS = 1,  /**< every byte zero */
  TESSERA_CHUNK_SPECIAL_NAN = 2,    /**< every item a NaN (float32 or float64) */
  TESSERA_CHUNK_SPECIAL_VALUE = 3,  /**< one value repeated */
  TESSERA_CHUNK_SPECIAL_UNINIT = 4  /**< unspecified content (read as zeros) */
} tessera_chunk_special;

/** What a chunk's header says. */
typedef struct tessera_chunk_info {
  int32_t nbytes;     /**< decoded bytes */
  int32_t cbytes;     /**< bytes of the chunk */
  int32_t blocksize;  /**< bytes per block */
  int32_t typesize;   /**< bytes per item */
  int32_t special;    /**< a ::tessera_chunk_special */
} tessera_chunk_info;

/** Reads the header at the start of chunk (size bytes: at least 16 or 32). Errors: TRUNCATED, MALFORMED. */
tessera_status tessera_chunk_info_get(const void* chunk, size_t size, tessera_chunk_info* out);

/**
 * Encodes size bytes at src into one chunk at out (out_size bytes) and stores its length in *written, as the
 * reference does for the same parameters. Scratch from alloc, freed before returning.
 */
tessera_status tessera_chunk_encode(const tessera_allocator* alloc, const tessera_chunk_params* params,
                                    const void* src, size_t size, void* out, size_t out_size, size_t* written);

/** Decodes a chunk (chunk_size bytes) into out (size bytes); *written (may be NULL) receives nbytes. */
tessera_status tessera_chunk_decode(const tessera_allocator* alloc, const void* chunk, size_t chunk_size, void* out,
                                    size_t size, size_t* written);

/**
 * ::tessera_chunk_decode for chunks whose filters need the blocks' n-d shape (NDCELL, NDMEAN; NDLZ decodes
 * without it): nd_ndim (1..TESSERA_MAX_DIMS) items per block per dimension at nd_blockshape, as in
 * ::tessera_chunk_params. Without it such a chunk is UNSUPPORTED.
 */
tessera_status tessera_chunk_decode_nd(const tessera_allocator* alloc, int32_t nd_ndim, const int32_t* nd_blockshape,
                                       const void* chunk, size_t chunk_size, void* out, size_t size,
                                       size_t* written);

/**
 * Copies a's compressed chunk nchunk (special index entries: a 32-byte special-value chunk) into out (size
 * bytes); *written receives its length. When out is too small: BUFFER_TOO_SMALL and *written is the length
 * needed (call with out NULL and size 0 to learn it).
 */
tessera_status tessera_array_chunk_read(tessera_array* a, int64_t nchunk, void* out, size_t size, size_t* written);

/**
 * Decodes a's chunk nchunk (padding included: prod(extchunkshape) * itemsize bytes) into out; *written (may be
 * NULL) receives that length. When out is too small: BUFFER_TOO_SMALL and *written is the length needed (call
 * with out NULL and size 0 to learn it, as with ::tessera_array_chunk_read; nothing is decoded).
 */
tessera_status tessera_array_chunk_decode(tessera_array* a, int64_t nchunk, void* out, size_t size,
                                          size_t* written);

/**
 * Replaces a's chunk nchunk with chunk (size bytes: a complete Blosc2 chunk of the array's chunk size, e.g. from
 * ::tessera_chunk_encode with ::tessera_array_chunk_params_get over prod(extchunkshape) items). Needs a writable
 * array; commits when auto-commit is on. (Appending or inserting single chunks would break the B2ND geometry:
 * use ::tessera_array_append / ::tessera_array_insert.)
 */
tessera_status tessera_array_chunk_update(tessera_array* a, int64_t nchunk, const void* chunk, size_t size);

/* ---- Codec libraries ------------------------------------------------------------------------------------ */

/**
 * On bare metal a program links LZ4, Zlib and Zstd only when it asks (tessera/codecs.hpp has one function per
 * codec and direction); calling this once links every codec of the build, both ways. A no-op on hosts, which
 * link them all.
 */
void tessera_codec_link_all(void);
/** Filters the same way (tessera/codecs.hpp): shuffle is always linked; on bare metal the others only when called. */
void tessera_filter_link_bitshuffle(void);
void tessera_filter_link_delta(void);      /**< delta (tessera::filter_link_delta) */
void tessera_filter_link_bytedelta(void);  /**< bytedelta (tessera::filter_link_bytedelta) */
void tessera_filter_link_trunc(void);      /**< trunc_prec and int_trunc, writing only */
void tessera_filter_link_ndcell(void);     /**< ndcell, both directions (tessera::filter_link_ndcell) */
void tessera_filter_link_ndmean(void);     /**< ndmean, both directions (tessera::filter_link_ndmean) */
void tessera_filter_link_all(void);        /**< every filter of the build */
/** The automatic chunk, block shapes and block size the same way (tessera/codecs.hpp: partition_link_auto). */
void tessera_partition_link_auto(void);
/** The chunk encoder's parallel blocks the same way (tessera/codecs.hpp: encoder_link_parallel). */
void tessera_encoder_link_parallel(void);
/**
 * Writing with user codecs and filters (::tessera_plugins) the same way (tessera/codecs.hpp:
 * encoder_link_plugins): on bare metal a write that needs one is UNSUPPORTED unless the program calls this.
 * Reading needs no call.
 */
void tessera_encoder_link_plugins(void);
/** One codec, one direction (LZ4 decoding covers LZ4HC data). */
void tessera_codec_link_lz4_decoder(void);
void tessera_codec_link_lz4_encoder(void);         /**< writing LZ4 */
void tessera_codec_link_lz4hc_encoder(void);       /**< writing LZ4HC */
void tessera_codec_link_lz4_dict_encoder(void);    /**< writing LZ4 with dictionaries (use_dict) */
void tessera_codec_link_lz4hc_dict_encoder(void);  /**< writing LZ4HC with dictionaries (use_dict) */
void tessera_codec_link_zlib_decoder(void);        /**< reading Zlib */
void tessera_codec_link_zlib_encoder(void);        /**< writing Zlib */
void tessera_codec_link_zstd_decoder(void);        /**< reading Zstd */
void tessera_codec_link_zstd_encoder(void);        /**< writing Zstd */
void tessera_codec_link_ndlz_decoder(void);        /**< reading NDLZ (c-blosc2's codec 32) */
void tessera_codec_link_ndlz_encoder(void);        /**< writing NDLZ */

/* ---- The decode-only reader over a frame in memory (tessera/array_view.hpp) ---------------------------------- */

/**
 * A read-only array over a contiguous frame that is already in memory (memory-mapped flash, a const array in
 * the image, a buffer): nothing of the frame is copied, reads decode only the blocks they touch. Opaque; the
 * handle and the decoder's scratch come from the allocator given at open.
 */
typedef struct tessera_array_view tessera_array_view;

/**
 * Opens the frame at frame[0, frame_len) (it must stay in place, unchanged, until close). max_alloc bounds any
 * single allocation (0: the default of tessera_open_options). Errors: TRUNCATED, MALFORMED, CORRUPT,
 * UNSUPPORTED (a sparse frame), RESOURCE_LIMIT, OUT_OF_MEMORY.
 */
tessera_status tessera_array_view_open_layout(tessera_array_view** out, const void* frame, size_t frame_len,
                                              const tessera_allocator* alloc, uint64_t max_alloc, uint32_t layout);
/** ::tessera_array_view_open_layout with the caller's ::TESSERA_LAYOUT. */
static inline tessera_status tessera_array_view_open(tessera_array_view** out, const void* frame, size_t frame_len,
                                                     const tessera_allocator* alloc, uint64_t max_alloc) {
  return tessera_array_view_open_layout(out, frame, frame_len, alloc, max_alloc, TESSERA_LAYOUT);
}
/** Fills *out (of the given ::TESSERA_LAYOUT) with what the array is (its dtype points into the frame). */
tessera_status tessera_array_view_info_get_layout(const tessera_array_view* v, tessera_array_info* out,
                                                  uint32_t layout);
/** ::tessera_array_view_info_get_layout with the caller's ::TESSERA_LAYOUT. */
static inline tessera_status tessera_array_view_info_get(const tessera_array_view* v, tessera_array_info* out) {
  return tessera_array_view_info_get_layout(v, out, TESSERA_LAYOUT);
}
/** The slice [start, stop) into out, as ::tessera_array_slice_get. */
tessera_status tessera_array_view_slice_get(tessera_array_view* v, const int64_t* start, const int64_t* stop,
                                            void* out, size_t size);
/** One item at coords (ndim entries) into out (size >= itemsize). */
tessera_status tessera_array_view_element_get(tessera_array_view* v, const int64_t* coords, void* out, size_t size);
/** Frees the view and its scratch (NULL is a no-op). */
void tessera_array_view_close(tessera_array_view* v);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* TESSERA_TESSERA_H */
