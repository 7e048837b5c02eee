/**
 * @file convcat.h
 * @brief convcat: a catalog of precompiled implicit-GEMM convolution kernels.
 *
 * Open a catalog file, ask which of its kernels can run a convolution (and
 * why the others cannot), make a plan for one, run it on your stream.
 *
 * Conventions:
 *  - Every function returns a ::convcat_status (0 = success, negative =
 *    error) unless it cannot fail; results come back through `*_out`.
 *  - On failure, convcat_last_error() returns a sentence saying what went
 *    wrong (thread-local, valid until the next failing call on the thread).
 *  - The library never exits, aborts or prints, except the log a user opts
 *    into (CONVCAT_LOG=1, or convcat_set_log_callback: see the end of this file).
 *  - The CUDA driver is loaded on first need with dlopen("libcuda.so.1"):
 *    opening, listing, checking and querying work without a GPU or driver.
 *  - Thread safety: a catalog and its plans may be used from any number of
 *    threads at once.  Kernel code is loaded lazily, once, under a lock.
 *
 * Tensors are channel-innermost and packed: activations x are N x D x H x W
 * x C (NDHWC), filters w are K x T x R x S x C (KTRSC), outputs y are
 * N x Z x P x Q x K.  Fewer spatial dimensions drop D/T/Z (2D) and H/R/P (1D).
 */
#ifndef CONVCAT_H
#define CONVCAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CONVCAT_BUILDING) && defined(__GNUC__)
#define CONVCAT_API __attribute__((visibility("default")))
#else
#define CONVCAT_API
#endif

/* ------------------------------------------------------------------------- */
/**
 * Versions.  The project's version (meson.build) is the one fact; `meson
 * setup` refuses a header whose macros disagree with it.  The library's
 * soname (libconvcat.so.N) changes with every change that breaks binaries
 * built against an older header (a struct's size or layout, a removed or
 * changed function, an enum value's meaning); additions do not change it.
 * Compare convcat_version() with CONVCAT_VERSION to catch a header of one
 * release used with a library of another.
 */
#define CONVCAT_VERSION_MAJOR 0
#define CONVCAT_VERSION_MINOR 2
#define CONVCAT_VERSION_PATCH 0
#define CONVCAT_VERSION "0.2.0"
/** MAJOR * 10000 + MINOR * 100 + PATCH, for `#if CONVCAT_VERSION_NUMBER >= 200`. */
#define CONVCAT_VERSION_NUMBER \
    (CONVCAT_VERSION_MAJOR * 10000 + CONVCAT_VERSION_MINOR * 100 + CONVCAT_VERSION_PATCH)

/** The library's version string, "MAJOR.MINOR.PATCH" (CONVCAT_VERSION of the header it was built with). */
CONVCAT_API const char *convcat_version(void);

/** The catalog file format version this library reads (a catalog of another is refused at open). */
CONVCAT_API unsigned convcat_catalog_format_version(void);

/** The kernel parameter ABI this library passes (a catalog of another ABI is refused at open). */
CONVCAT_API unsigned convcat_kernel_abi_version(void);

/** Status codes.  convcat_status_string() names each. */
typedef enum convcat_status {
    CONVCAT_OK = 0,
    CONVCAT_ERR_INVALID_ARGUMENT = -1, /**< NULL pointer, index out of range, bad enum value */
    CONVCAT_ERR_IO = -2,               /**< the catalog file cannot be opened or read */
    CONVCAT_ERR_CORRUPT = -3,          /**< not a catalog, truncated, checksum or consistency failure */
    CONVCAT_ERR_VERSION = -4,          /**< catalog format or kernel ABI this runtime does not read */
    CONVCAT_ERR_NOT_FOUND = -5,        /**< no entry with that key, or no kernel can run the problem */
    CONVCAT_ERR_UNSUPPORTED = -6,      /**< the kernel cannot run this problem (see why) */
    CONVCAT_ERR_NO_DRIVER = -7,        /**< libcuda.so.1 could not be loaded or initialised */
    CONVCAT_ERR_NO_DEVICE = -8,        /**< no current CUDA context, or the device cannot run the kernel */
    CONVCAT_ERR_CUDA = -9,             /**< a driver call failed: convcat_last_cuda_error() */
    CONVCAT_ERR_NO_MEMORY = -10,       /**< host allocation failed */
    CONVCAT_ERR_MISALIGNED = -11       /**< a tensor pointer breaks the kernel's alignment */
} convcat_status;

typedef enum convcat_op { CONVCAT_FPROP = 0, CONVCAT_DGRAD = 1, CONVCAT_WGRAD = 2 } convcat_op;

typedef enum convcat_dtype {
    CONVCAT_F16 = 1,
    CONVCAT_BF16 = 2,
    CONVCAT_TF32 = 3,
    CONVCAT_F32 = 4,
    CONVCAT_E4M3 = 5,
    CONVCAT_E5M2 = 6
} convcat_dtype;

typedef enum convcat_arch { CONVCAT_ARCH_ANY = 0, CONVCAT_ARCH_SM90A = 1, CONVCAT_ARCH_SM100A = 2 } convcat_arch;

/** sm90a: coop, pingpong, swap, halo, grouped (warpgroup schedules; swap is pingpong with wgmma's
 *  operands swapped, M = the tile's 64 filters, N = its pixels; halo is swap on tiles of output rows x 8
 *  columns whose input pixels load once per channel block, for all filter taps: 2D, unit stride, filters
 *  reaching at most 2 pixels past a block; grouped is coop on grouped fprop, a tile column one group or
 *  a pack of whole groups); sm100a: 1sm, 2sm (tcgen05.mma CTA group).  Both arches:
 *  gather (implicit GEMM whose threads gather the operands, mma.sync: any groups and channel counts)
 *  and direct (depthwise convolution on CUDA cores). */
typedef enum convcat_schedule {
    CONVCAT_COOP = 1,
    CONVCAT_PINGPONG = 2,
    CONVCAT_1SM = 3,
    CONVCAT_2SM = 4,
    CONVCAT_SWAP = 5,
    CONVCAT_HALO = 6,
    CONVCAT_GATHER = 7,
    CONVCAT_DIRECT = 8,
    CONVCAT_GROUPED = 9
} convcat_schedule;

/** Kernel families: how a kernel reads its operands. */
typedef enum convcat_family {
    CONVCAT_FAMILY_TMA = 1,      /**< implicit GEMM, operands by the tensor memory accelerator */
    CONVCAT_FAMILY_GATHER = 2,   /**< implicit GEMM, operands gathered by the threads (any groups and channels) */
    CONVCAT_FAMILY_DIRECT = 3    /**< depthwise direct convolution */
} convcat_family;

typedef enum convcat_mode {
    CONVCAT_CROSS_CORRELATION = 0, /**< y[q] = sum x[q*stride + s*dil - pad] w[s]: what frameworks call convolution */
    CONVCAT_CONVOLUTION = 1        /**< the filter flipped */
} convcat_mode;

/** A convolution, described in forward terms for every op. */
typedef struct convcat_problem {
    convcat_op op;
    int dims;                  /**< spatial dimensions: 1, 2 or 3 */
    int n, d, h, w, c;         /**< activations x: N x D x H x W x C */
    int k, t, r, s;            /**< filters w: K x T x R x S x (C / groups) */
    int pad_lo[3], pad_hi[3];  /**< padding before/after, in D, H, W order */
    int stride[3];             /**< D, H, W */
    int dilation[3];           /**< D, H, W */
    int groups;
    convcat_mode mode;
    convcat_dtype a_type;      /**< GEMM A: x for fprop, dy for dgrad and wgrad */
    convcat_dtype b_type;      /**< GEMM B: w for fprop and dgrad, x for wgrad */
    convcat_dtype out_type;    /**< the op's output: y, dx or dw */
} convcat_problem;

/** A 2D bf16 fprop of 1x1x1x1 tensors, unit strides and dilations, no padding, groups 1. */
CONVCAT_API void convcat_problem_init(convcat_problem *p);

/** Output extents Z, P, Q (1 for absent dimensions); fails if the problem's extents are invalid. */
CONVCAT_API convcat_status convcat_problem_output(const convcat_problem *p, int *z_out, int *p_out,
                                                  int *q_out);

/** FLOPs of the forward convolution, 2 * N*Z*P*Q * K * T*R*S * C/groups, for every op. */
CONVCAT_API double convcat_problem_flops(const convcat_problem *p);

/**
 * The 2D problem that a 3D one is over the same memory, which the 2D kernels run it as (3D
 * kernels take it as given): where its filter is 1 along D with no padding or stride there, N*D
 * images of H x W; else where its filter is 1 x 1 along H and W with no padding or stride there,
 * D x (H*W) images and a T x 1 filter.  CONVCAT_ERR_UNSUPPORTED, with the reason, for a problem
 * that does not fold (any 1D or 2D problem, an invalid one).
 */
CONVCAT_API convcat_status convcat_problem_folded(const convcat_problem *p, convcat_problem *folded_out);

/* ------------------------------------------------------------------------- */
/** An open catalog file. */
typedef struct convcat_catalog convcat_catalog;

/** What the catalog index says about one kernel. Strings live as long as the catalog. */
typedef struct convcat_entry_info {
    const char *key;
    convcat_arch arch;
    convcat_op op;
    int dims;
    convcat_dtype a_type, b_type, acc_type, out_type;
    int tile_m, tile_n, tile_k;
    int stages;
    int cluster_m, cluster_n;
    convcat_schedule schedule;
    int threads;
    int smem_bytes;   /**< dynamic shared memory per CTA */
    int registers;    /**< per thread at entry, from ptxas */
    size_t code_bytes;
    /** Dynamic cluster (sm100a): launched preferring cluster_m x cluster_n, a cluster may
     *  form as fallback_m x fallback_n instead.  0 x 0: a static cluster. */
    int fallback_m, fallback_n;
    convcat_family family;
    /** 1 where the GPU suite has executed kernels of this arch, family and schedule (0: compiled
     *  and statically checked only, as every sm100a kernel: no Blackwell GPU has run them). */
    int verified;
    /** Groups the kernel takes: 0 groups = 1 only; 1 wgrad with K == C and some channel counts
     *  per group; 2 any groups dividing C and K; 3 depthwise (one channel per group); 4 fprop with
     *  groups > 1, a tile column within whole groups (schedule grouped). */
    int groups_mode;
} convcat_entry_info;

/**
 * Map and verify a catalog file (header, index, every code blob's checksum).
 * The file stays mapped until convcat_close and an entry's code is loaded
 * from the mapping when the entry is first used (cuLibraryLoadData takes no
 * length: the driver reads the fatbin by its header).  Replace a catalog
 * that processes have open by renaming a new file over it: they keep the old
 * one.  Rewriting the file in place changes the mapped pages: code read past
 * a shorter file's end raises SIGBUS, and changed code is loaded without a
 * second checksum.  A path that is not a regular file (a FIFO, a device) is
 * refused at once, CONVCAT_ERR_IO.
 */
CONVCAT_API convcat_status convcat_open(const char *path, convcat_catalog **catalog_out);

/** The same from a caller's buffer, which is copied. */
CONVCAT_API convcat_status convcat_open_memory(const void *data, size_t size,
                                               convcat_catalog **catalog_out);

/** Close a catalog; plans made from it must be destroyed first.  NULL is fine. */
CONVCAT_API void convcat_close(convcat_catalog *catalog);

CONVCAT_API size_t convcat_count(const convcat_catalog *catalog);

CONVCAT_API convcat_status convcat_entry_info_get(const convcat_catalog *catalog, size_t index,
                                                  convcat_entry_info *info_out);

/** Index of the entry with this exact key, or CONVCAT_ERR_NOT_FOUND. */
CONVCAT_API convcat_status convcat_find(const convcat_catalog *catalog, const char *key,
                                        size_t *index_out);

/**
 * Can entry `index` compute `problem`?  CONVCAT_OK if so; otherwise
 * CONVCAT_ERR_UNSUPPORTED and the first rule it breaks, as a sentence, in
 * `why` (may be NULL).  Device limits (arch, shared memory, clusters) are
 * checked by convcat_plan_create, not here.
 *
 * Kernels index in 32 bits; the limits they keep, each a rule with a reason:
 * output extents and GEMM extents (with a tile of room) below 2^31, C and K
 * at least a tile (with its cluster) below 2^31; TMA kernels: every axis's
 * padded input (extent + pad_lo + pad_hi) below 2^31, the im2col corner and
 * offset ranges, traversal strides 1..8; gather and direct kernels: extents,
 * padding and filter reach below 2^29; a strided dgrad at most 4096 stride
 * phases (stride_d * stride_h * stride_w, counting the phases with pixels).
 */
CONVCAT_API convcat_status convcat_check(const convcat_catalog *catalog, size_t index,
                                         const convcat_problem *problem, char *why, size_t why_size);

/** One row of a query answer. */
typedef struct convcat_candidate {
    size_t index;          /**< entry index in the catalog */
    int ok;                /**< 1: can run the problem; 0: see reason */
    double predicted_us;   /**< heuristic time estimate (ok rows only); lower ranks first */
    char reason[192];      /**< why not (ok == 0) */
} convcat_candidate;

/**
 * Rank the catalog's entries for `problem`: every entry of `arch`
 * (CONVCAT_ARCH_ANY: all) in `out`, runnable ones first, fastest predicted
 * first, then the rest with their reasons.  `sm_count` sizes the heuristic's
 * machine (0 or negative: 132, an H200; more than 4096:
 * CONVCAT_ERR_INVALID_ARGUMENT).  `*count_out` is the number of rows written
 * (at most `capacity`); `*ok_out` (may be NULL) the number that can run.
 */
CONVCAT_API convcat_status convcat_query(const convcat_catalog *catalog,
                                         const convcat_problem *problem, convcat_arch arch,
                                         int sm_count, convcat_candidate *out, size_t capacity,
                                         size_t *count_out, size_t *ok_out);

/* ------------------------------------------------------------------------- */
/** A kernel bound to a problem and to the device current at creation. */
typedef struct convcat_plan convcat_plan;

/** Pass as `index` to convcat_plan_create to take the query's best pick. */
#define CONVCAT_AUTO ((size_t)-1)

/** Where a plan's split-K slices add their f32 sums. */
typedef enum convcat_split_sums {
    CONVCAT_SPLIT_NONE = 0,     /**< the K loop is not split */
    CONVCAT_SPLIT_REDUCE = 1,   /**< in the workspace, added by a second launch (KEY_reduce) */
    CONVCAT_SPLIT_CLUSTER = 2   /**< a tile's slices are one cluster: through distributed shared memory */
} convcat_split_sums;

/** Launch geometry of a plan. */
typedef struct convcat_plan_info {
    size_t index;            /**< the catalog entry */
    int grid;                /**< CTAs launched (persistent: at most one wave) */
    int cluster;             /**< CTAs per cluster */
    int threads;
    int smem_bytes;
    size_t workspace_bytes;  /**< device scratch the caller passes to convcat_plan_run: split-K
                                  partial sums, tf32 dgrad's filter copy (0: none needed) */
    int groups_per_cta;      /**< adjacent groups a CTA computes as one block-diagonal GEMM (gather
                                  fprop and dgrad of grouped problems; otherwise 1) */
    int splits;              /**< split-K slices of the K loop (1: unsplit) */
    convcat_split_sums split_sums; /**< where the slices' sums are added */
} convcat_plan_info;

/**
 * Make a plan for `problem` on the current CUDA context's device with entry
 * `index` (or CONVCAT_AUTO).  Checks the problem rules and the device (arch,
 * shared memory, cluster size), loads the entry's code if not yet loaded.
 * The sm90a tile order (raster band: tile rows walked column by column, 1 =
 * N-tiles fastest) follows a rule of the problem's size; the environment
 * variable CONVCAT_RASTER_BAND=n (n >= 1) sets it for plans made after.
 * Gather kernels run grouped fprop and dgrad either a group a CTA or packs
 * of adjacent groups a CTA, as the time model prices faster;
 * CONVCAT_GATHER_PACK=1 packs wherever the kernel can, =0 never (in plans
 * and in the query's predicted times).
 */
CONVCAT_API convcat_status convcat_plan_create(const convcat_catalog *catalog,
                                               const convcat_problem *problem, size_t index,
                                               convcat_plan **plan_out);

CONVCAT_API convcat_status convcat_plan_info_get(const convcat_plan *plan, convcat_plan_info *info_out);

CONVCAT_API void convcat_plan_destroy(convcat_plan *plan);

/** Activations the epilogue can apply (fprop). */
typedef enum convcat_activation {
    CONVCAT_ACT_NONE = 0,
    CONVCAT_ACT_RELU = 1,   /**< max(v, 0) */
    CONVCAT_ACT_GELU = 2,   /**< v * Phi(v), the exact (erf) form */
    CONVCAT_ACT_SILU = 3    /**< v / (1 + exp(-v)) */
} convcat_activation;

/**
 * Device tensors, always in forward terms: fprop reads x and w and writes y;
 * dgrad reads y = dy and w, writes x = dx; wgrad reads y = dy and x, writes
 * w = dw.  The output becomes
 *
 *     act(alpha * conv + bias[k] + beta * c)
 *
 * where `bias` (may be NULL) holds one value per output channel in the
 * output's type, `c` has the output's shape and type and is not read when
 * beta == 0 (beta = 1 accumulates gradients), and `act` is `activation`.
 * Bias and activation are fused into fprop only: dgrad and wgrad plans
 * refuse them.  `workspace` holds at least the plan's workspace_bytes
 * (convcat_plan_info) when that is not 0; a plan that splits its K loop
 * (wgrad, and fprop on few-tile layers) writes f32 partial sums there and
 * adds them in a fixed order, so results are deterministic; a tf32 dgrad
 * plan keeps a K-major copy of the filter there.  Pointers are 16-byte aligned device
 * addresses.
 */
typedef struct convcat_tensors {
    const void *x;
    const void *w;
    void *y;
    const void *c;
    float alpha, beta;
    const void *bias;
    convcat_activation activation;
    void *workspace;
    size_t workspace_bytes;
} convcat_tensors;

/**
 * Launch on `stream` (a CUstream; NULL = the legacy default stream). Asynchronous.
 * sm90a kernels launch with programmatic dependent launch: a kernel may start
 * while the stream's previous kernel finishes and waits for it (its writes
 * visible) before it reads or writes any tensor, so stream order holds and
 * back-to-back convolutions hide each launch under the previous one's tail.
 * The environment variable CONVCAT_PDL=0 turns it off for plans made after.
 */
CONVCAT_API convcat_status convcat_plan_run(const convcat_plan *plan, const convcat_tensors *tensors,
                                            void *stream);

/* ------------------------------------------------------------------------- */
CONVCAT_API const char *convcat_status_string(convcat_status status);

/** The last failing call's explanation on this thread ("" if none). */
CONVCAT_API const char *convcat_last_error(void);

/** The CUresult of the last failed driver call on this thread (0 if none). */
CONVCAT_API int convcat_last_cuda_error(void);

/** Names used in keys: "f16", "fprop", "sm90a", "coop"; NULL for unknown values. */
CONVCAT_API const char *convcat_dtype_name(convcat_dtype t);
CONVCAT_API const char *convcat_op_name(convcat_op op);
CONVCAT_API const char *convcat_arch_name(convcat_arch arch);
CONVCAT_API const char *convcat_schedule_name(convcat_schedule s);

/* ------------------------------------------------------------------------- */
/** Remembered autotune winners, keyed by problem, catalog (convcat_catalog_id) and device: its
 *  arch, model name and SM count (an H100 PCIe and an H200 are both sm_90a, and do not share). */
typedef struct convcat_tune_cache convcat_tune_cache;

/**
 * Load an autotune cache file.  A missing file gives an empty cache.  A file
 * that cannot be read as a cache is ignored: the cache starts empty, the call
 * still returns CONVCAT_OK, and `warning` (may be NULL) says why ("" when
 * there was nothing to warn about).
 */
CONVCAT_API convcat_status convcat_tune_cache_load(const char *path, convcat_tune_cache **cache_out,
                                                   char *warning, size_t warning_size);

/** Write the cache (atomically: a temporary file renamed over `path`). */
CONVCAT_API convcat_status convcat_tune_cache_save(const convcat_tune_cache *cache, const char *path);

/** Entries in the cache (every catalog and arch). */
CONVCAT_API size_t convcat_tune_cache_count(const convcat_tune_cache *cache);

CONVCAT_API void convcat_tune_cache_free(convcat_tune_cache *cache);

/**
 * Time every kernel that can run `problem` on the current device, on the
 * caller's tensors and stream (the output is written many times; with
 * beta != 0, c must not alias y), and return the fastest: its index and
 * median milliseconds over `iterations` launches.  With a cache (may be
 * NULL), a winner remembered for this problem, catalog and device (arch,
 * model name, SM count) is returned without timing, and a new winner is
 * remembered.  Candidates the device cannot run, or whose workspace exceeds
 * tensors->workspace_bytes, are skipped (convcat_autotune_results says
 * which and why).  Synchronizes `stream`.  Thread-safe.
 */
CONVCAT_API convcat_status convcat_autotune(const convcat_catalog *catalog, const convcat_problem *problem,
                                            const convcat_tensors *tensors, void *stream, int iterations,
                                            convcat_tune_cache *cache, size_t *index_out, double *ms_out);

/** The arch of the current context's device (CONVCAT_ARCH_ANY if none of ours). */
CONVCAT_API convcat_status convcat_device_arch(convcat_arch *arch_out, int *sm_count_out);

/* ------------------------------------------------------------------------- */
/** A catalog's identity: the CRC-32 of its index, which names its contents (the kernels, their
 *  launch fields and code checksums); tune caches key winners by it.  0 for NULL. */
CONVCAT_API uint32_t convcat_catalog_id(const convcat_catalog *catalog);

/* ------------------------------------------------------------------------- */
/**
 * Finding the catalog.  convcat_default_catalog_path() gives the first of:
 *
 *  1. $CONVCAT_CATALOG, when set and not empty: then the only place looked
 *     at (an explicit choice is never silently replaced by another file);
 *  2. share/convcat/convcat.catalog of the prefix the library was loaded
 *     from (its own file's directory, found with dladdr, up to the prefix:
 *     an install moved or unpacked under DESTDIR still finds its catalog);
 *  3. share/convcat/convcat.catalog of the prefix it was configured for.
 *
 * A place counts when a regular file is there.  If none is, the call fails
 * with CONVCAT_ERR_IO and convcat_last_error() names every place tried and
 * why each failed.  The path is written to `path_out` (`size` bytes; a path
 * that does not fit is CONVCAT_ERR_INVALID_ARGUMENT).
 */
CONVCAT_API convcat_status convcat_default_catalog_path(char *path_out, size_t size);

/** convcat_open() of convcat_default_catalog_path(): the installed catalog, with no path given. */
CONVCAT_API convcat_status convcat_open_default(convcat_catalog **catalog_out);

/* ------------------------------------------------------------------------- */
/**
 * Several catalogs queried as one: a user's regenerated tiles beside the
 * shipped catalog.  A set borrows its catalogs (close them after destroying
 * the set) and holds each key once:
 *
 *  - CONVCAT_SET_UNIQUE (0): convcat_catalog_set_add refuses a catalog that
 *    holds a key already in the set (CONVCAT_ERR_INVALID_ARGUMENT, naming
 *    the key), and the set is unchanged;
 *  - CONVCAT_SET_SHADOW: such entries of the added catalog are shadowed:
 *    the catalog added first wins, as on a search path (add yours first to
 *    prefer your builds of a kernel).  Shadowed entries are not found, and
 *    convcat_query_set lists them as not runnable, saying by which catalog.
 *
 * Adding is not thread-safe; a set that is no longer added to may be
 * queried from any number of threads.
 */
typedef struct convcat_catalog_set convcat_catalog_set;

#define CONVCAT_SET_UNIQUE 0u
#define CONVCAT_SET_SHADOW 1u

CONVCAT_API convcat_status convcat_catalog_set_create(convcat_catalog_set **set_out);

/** Destroy a set (not its catalogs).  NULL is fine. */
CONVCAT_API void convcat_catalog_set_destroy(convcat_catalog_set *set);

CONVCAT_API convcat_status convcat_catalog_set_add(convcat_catalog_set *set, const convcat_catalog *catalog,
                                                   unsigned flags);

/** Catalogs in the set, in the order they were added. */
CONVCAT_API size_t convcat_catalog_set_size(const convcat_catalog_set *set);

/** The set's `position`-th catalog (NULL past the end). */
CONVCAT_API const convcat_catalog *convcat_catalog_set_at(const convcat_catalog_set *set, size_t position);

/** Kernels the set holds, shadowed ones not counted. */
CONVCAT_API size_t convcat_catalog_set_count(const convcat_catalog_set *set);

/** The catalog and index of `key` (CONVCAT_ERR_NOT_FOUND if no catalog of the set has it). */
CONVCAT_API convcat_status convcat_catalog_set_find(const convcat_catalog_set *set, const char *key,
                                                    const convcat_catalog **catalog_out, size_t *index_out);

/** One row of a set's query answer: a convcat_query row and the catalog it indexes. */
typedef struct convcat_set_candidate {
    const convcat_catalog *catalog;   /**< candidate.index is an entry of this catalog */
    size_t position;                  /**< the catalog's position in the set */
    convcat_candidate candidate;
} convcat_set_candidate;

/**
 * convcat_query on every catalog of the set, merged: runnable rows first,
 * fastest predicted first (equal predictions: deeper pipeline, then the
 * earlier catalog), then the rest with their reasons.  The arguments are
 * convcat_query's; make a plan from a row with
 * convcat_plan_create(row.catalog, problem, row.candidate.index, &plan).
 */
CONVCAT_API convcat_status convcat_query_set(const convcat_catalog_set *set, const convcat_problem *problem,
                                             convcat_arch arch, int sm_count, convcat_set_candidate *out,
                                             size_t capacity, size_t *count_out, size_t *ok_out);

/**
 * convcat_plan_create with CONVCAT_AUTO over a set: the best-ranked kernel
 * of any of its catalogs for the current device.  `catalog_out` and
 * `index_out` (may be NULL) say which it took.
 */
CONVCAT_API convcat_status convcat_plan_create_set(const convcat_catalog_set *set, const convcat_problem *problem,
                                                   convcat_plan **plan_out, const convcat_catalog **catalog_out,
                                                   size_t *index_out);

/* ------------------------------------------------------------------------- */
/**
 * Autotuning with every candidate's result, in the manner of cudnnFind: each
 * kernel that can run the problem (or the model's `top_k` best) is planned
 * on the current device and timed on the caller's tensors and stream.  A
 * candidate is skipped, with the reason in its result, when the device
 * cannot run it or its workspace exceeds the caller's (`tensors->workspace_bytes`,
 * 0 when `tensors->workspace` is NULL); a candidate whose timing fails is
 * recorded with its error.  Neither stops the others.
 */
typedef struct convcat_tune_options {
    int iterations;              /**< launches timed per candidate, the median reported (0: 20) */
    size_t top_k;                /**< time only the model's top_k best candidates (0: all of them) */
    convcat_tune_cache *cache;   /**< may be NULL: if set, the winner is remembered in it (never read) */
} convcat_tune_options;

CONVCAT_API void convcat_tune_options_init(convcat_tune_options *options);

typedef struct convcat_tune_result {
    size_t index;              /**< the catalog entry */
    convcat_status status;     /**< CONVCAT_OK: timed; otherwise why it was skipped or failed (see reason) */
    double ms;                 /**< median milliseconds (status CONVCAT_OK) */
    double predicted_us;       /**< the query model's prediction */
    size_t workspace_bytes;    /**< the plan's workspace (0 when no plan was made) */
    char reason[192];          /**< why not timed ("" when timed) */
} convcat_tune_result;

/**
 * Time the candidates; `out` gets the timed ones fastest first, then the
 * skipped and failed ones in the model's order, at most `capacity` rows
 * (`*count_out` of them; `*count_out` is set on failure too).  Succeeds
 * when at least one candidate was timed (then out[0] is the winner);
 * otherwise CONVCAT_ERR_NOT_FOUND (nothing could run: the rows say why) or
 * the first candidate's error when timing failed.  Synchronizes `stream`.
 */
CONVCAT_API convcat_status convcat_autotune_results(const convcat_catalog *catalog, const convcat_problem *problem,
                                                    const convcat_tensors *tensors, void *stream,
                                                    const convcat_tune_options *options, convcat_tune_result *out,
                                                    size_t capacity, size_t *count_out);

/* ------------------------------------------------------------------------- */
/**
 * The opt-in log, the one exception to "the library never prints": one line
 * per decision (the kernel each plan took and why: the model's rank and
 * prediction, or the caller's pin; every autotune candidate's time or skip
 * reason; a tune cache hit; the catalog convcat_open_default found).  With
 * a callback set, lines go to it (no trailing newline; from the thread that
 * made the decision; it must not call back into convcat).  Without one, the
 * environment variable CONVCAT_LOG=1 sends them to stderr.  Otherwise
 * nothing is printed.  convcat_set_log_callback(NULL, NULL) removes the
 * callback.
 */
typedef void (*convcat_log_callback)(void *user_data, const char *line);

CONVCAT_API void convcat_set_log_callback(convcat_log_callback callback, void *user_data);

#ifdef __cplusplus
}
#endif
#endif
