/* SPDX-License-Identifier: Apache-2.0 */
/** @file
 * pld — a C11 runtime for symmetric-memory collectives.
 *
 * Every rank owns the same window buffers; ranks reach each other's windows
 * with one-sided put/get/remote_load/remote_store and synchronise with
 * signals (notify/wait). Collectives are compositions of those primitives.
 *
 * Host side:   pld_world_init -> pld_alloc_window_buffer -> pld_window -> pld_launch
 * Kernel side: void kernel(pld_ctx *ctx, void *arg), run SPMD on every rank.
 *
 * Error contract: host calls return pld_status. Kernel calls return void; an
 * error inside a kernel ends that rank's kernel at once, aborts the group
 * (every rank blocked in a wait is released with PLD_ERR_PEER), and
 * pld_launch returns the root cause. pld_world_error() then names the rank,
 * the call and the offending values. The world stays usable afterwards. */
#ifndef PLD_PLD_H
#define PLD_PLD_H

#include <stdio.h>

#include "pld/types.h"
#include "pld/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================= */
/* World and launch (host side)                                            */
/* ======================================================================= */

/** Check bits for pld_config.check and the PLD_CHECK environment variable
 * (comma list: "signals,race,hazards"). */
#define PLD_CHECK_SIGNALS 0x1u /**< builtins verify their signal returns to all-zero */
#define PLD_CHECK_RACE 0x2u    /**< happens-before race checker */
#define PLD_CHECK_NOARGS                                                                           \
    0x4u /**< turn OFF the agreement check of builtin arguments (on by                             \
            default: ranks must call the same builtin with agreeing                                \
            arguments, or the call fails with PLD_ERR_ARG) */
#define PLD_CHECK_HAZARDS                                                                          \
    0x8u /**< hardware-hazard lints: what runs on a CPU but breaks on the NPU (signal cells        \
            of several writers on one 64-byte line, Set mixed with AtomicAdd on a cell, Eq on      \
            a cell of several writers, UB/SQ/core limits of the other profile) is                  \
            PLD_ERR_CHECK */

/** How pld_world_init sets up a world; zero-initialise it and set what you need. */
typedef struct pld_config {
    const char *platform;   /**< NULL -> "a2a3sim"; also "a5sim", "sim" (= a2a3sim) */
    const char *transport;  /**< NULL -> "thread" */
    const char *devices;    /**< NULL -> "0,1"; "0,1,2,3", "0-3", "4,5", "0-1,6-7" */
    int wait_timeout_ms;    /**< 0 -> env PLD_WAIT_TIMEOUT_MS, else 60000 */
    const char *trace_path; /**< NULL -> env PLD_TRACE; Chrome/Perfetto JSON */
    unsigned check;         /**< PLD_CHECK_* bits, OR-ed with env PLD_CHECK */
    int ir;                 /**< print rank 0's lowering listing after each launch */
    const char *ir_svg;     /**< NULL -> env PLD_IR_SVG; every rank's lowering as SVG */
    /** process transport: fork fresh workers at every launch, so each starts
     * from the host's memory as it is then (for kernels that exist only
     * after pld_world_init: Python's); 0 -> fork them once, at init */
    int fork_each_launch;
} pld_config;

/** Creates a world. cfg may be NULL (all defaults). Errors:
 * PLD_ERR_ARG (bad device list, unknown platform/transport name),
 * PLD_ERR_UNSUPPORTED (real-hardware platforms a2a3/a5, transport not built),
 * PLD_ERR_NOMEM, PLD_ERR_SYSTEM. On failure *out is untouched and the reason
 * is available from pld_last_error(). */
PLD_API pld_status pld_world_init(pld_world **out, const pld_config *cfg);

/** Like pld_world_init, configured from the command line. Consumes
 * -p/--platform X, -d/--device X, --transport X, --ir and --ir-svg FILE
 * (also in the --opt=X form) and leaves every other argument in place. */
PLD_API pld_status pld_world_init_from_args(pld_world **out, int *argc, char ***argv);
/** The options pld_world_init_from_args reads, set in *cfg (its other
 * fields kept) and removed from argv; cfg's strings then point into argv.
 * For a program that sets more of the configuration before pld_world_init. */
PLD_API pld_status pld_config_from_args(pld_config *cfg, int *argc, char ***argv);

/** Message of the last failed pld_world_init on this thread ("" if none),
 * or of the last call on this thread refused because its world handle was
 * not a live world (finalized, NULL, or never a world). */
PLD_API const char *pld_last_error(void);

/** Ends the world and frees what it still holds.
 *
 * Handle lifetime. Worlds, window buffers, views, tiles and host blocks
 * are checked before use: a double free, a use after free, a call after
 * pld_world_finalize, a host call (launch, alloc, free, reset, finalize)
 * made inside a kernel or while another host thread's launch runs on the
 * world is PLD_ERR_ARG naming the call and the handle. The void calls
 * (pld_free_window_buffer, pld_host_free, pld_world_finalize) do nothing
 * then, print the message on stderr and keep it for pld_world_error (or
 * pld_last_error when the world itself is dead); inside a kernel they fail
 * the launch like any kernel-side error. Freed memory waits before it is
 * reused so that stale handles are recognised: the last 64 finalized
 * worlds, 4096 window descriptors taken round robin, 1024 freed tiles per
 * rank, the last 16 host blocks (64 MiB). A handle older than that may
 * name a newer object of the same kind.
 *
 * Launches of one world run one at a time; a kernel may not launch. */
PLD_API void pld_world_finalize(pld_world *w);
/** The number of ranks of the world. */
PLD_API int pld_world_size(const pld_world *w);
/** The payload per peer, in bytes, up to which a builtin called on the
 * whole world runs in one round through pld's own inboxes instead of its
 * credit rounds: PLD_LL_BYTES rounded up to 64, capped so that a rank's
 * inboxes stay within 256 KiB (256 KiB / (2 P), rounded down to 64); 0
 * when the path is off (PLD_LL_BYTES=0, more than 64 ranks, or w is not a
 * live world). */
PLD_API size_t pld_world_ll_bytes(const pld_world *w);
PLD_API int pld_device_id(const pld_world *w, int rank); /**< -1 if rank is out of range */
PLD_API int pld_is_root_process(const pld_world *w);     /**< print "OK" only here */
/** 1 if this process hosts `rank` (every rank on the thread and process
 * transports, its own one under mpi): only then can the host read or write
 * that rank's windows (pld_window_host_view) and counters. */
PLD_API int pld_world_hosts_rank(const pld_world *w, int rank);
/** The OS process running `rank` (the caller's own pid on the thread
 * transport); -1 if rank is out of range. */
PLD_API int pld_rank_pid(const pld_world *w, int rank);
PLD_API const char *pld_world_platform(const pld_world *w);  /**< "a2a3sim" or "a5sim" */
PLD_API const char *pld_world_transport(const pld_world *w); /**< "thread", ... */
/** The threads the thread transport runs its ranks on as user-level
 * contexts (PLD_FIBERS; rank r on thread r mod the count), or 0 when every
 * rank is a thread or process of its own. */
PLD_API int pld_world_carriers(const pld_world *w);
/** 1 if the transport `name` ("thread", "process", "mpi") is compiled into
 * this library (mpi: when CMake found MPI). Initialises nothing. */
PLD_API int pld_transport_built(const char *name);
/** The simulated hardware limits of the world's platform profile. */
typedef struct pld_info_limits {
    size_t ub_bytes;  /**< on-core buffer (UB) bytes per core */
    int aiv_cores;    /**< AIV cores per rank: bounds every core_num */
    int urma;         /**< 1 if the URMA queue model exists (a5sim) */
    int64_t sq_depth; /**< URMA SQ depth in WQEBBs */
} pld_info_limits;
/** Fills *out with the limits of the world's platform profile. */
PLD_API void pld_world_limits(const pld_world *w, pld_info_limits *out);
/** Message of the last failure on this world, "" if none. */
PLD_API const char *pld_world_error(const pld_world *w);

/** Symmetric allocation of `bytes` on every rank, zero-initialised. `name`
 * appears in error messages and listings. */
PLD_API pld_status pld_alloc_window_buffer(pld_world *w, size_t bytes, const char *name,
                                           pld_window_buffer **out);
/** A typed view of a window buffer; the view must fit the buffer. */
PLD_API pld_status pld_window(pld_window_buffer *buf, pld_dtype dtype, int ndim,
                              const int64_t *shape, pld_dtensor *out);
/** Zeroes the buffer on every rank (e.g. a signal after an aborted launch). */
PLD_API pld_status pld_window_buffer_reset(pld_world *w, pld_window_buffer *buf);
/** Frees a window buffer on every rank (its views are then refused). */
PLD_API void pld_free_window_buffer(pld_world *w, pld_window_buffer *buf);
/** The name given to pld_alloc_window_buffer. */
PLD_API const char *pld_window_buffer_name(const pld_window_buffer *buf);
/** The size of the buffer in bytes (on each rank). */
PLD_API size_t pld_window_buffer_size(const pld_window_buffer *buf);

/** Host memory visible to every rank (on every transport that shares memory
 * with the host). Zeroed. NULL on failure. Blocks not freed with
 * pld_host_free are released by pld_world_finalize. */
PLD_API void *pld_host_alloc(pld_world *w, size_t bytes);
/** Frees a block of pld_host_alloc. */
PLD_API void pld_host_free(pld_world *w, void *p);

/** A kernel: the function pld_launch runs SPMD on every rank. */
typedef void (*pld_kernel)(pld_ctx *ctx, void *arg);
/** Runs kernel on every rank this process hosts and returns when all have
 * finished: PLD_OK or the root-cause status of the first failure.
 *
 * Crashes: on the thread transport every rank is a thread of this
 * process, so a segmentation fault, abort() or exit() in a kernel ends
 * the program, as in any multithreaded program; a rank thread's stack is
 * PLD_STACK_BYTES (4 MiB by default: a large array on a kernel's stack
 * needs more). Kernels that may crash run safely with the process
 * transport (--transport process), where a dead worker is PLD_ERR_PEER. */
PLD_API pld_status pld_launch(pld_world *w, pld_kernel kernel, void *arg);

/** Reads (and releases) this rank's window slice from the host side:
 * a plain tensor over rank `rank`'s part of `t`. Only valid between launches,
 * on transports where the host shares memory with the ranks. */
PLD_API pld_status pld_window_host_view(pld_world *w, pld_dtensor t, int rank, pld_tensor *out);

/* ======================================================================= */
/* Kernel side (inside pld_launch)                                         */
/* ======================================================================= */

/** This rank's number, 0 .. pld_nranks(c)-1 (the group rank in a team view). */
PLD_API int pld_rank(const pld_ctx *c);
/** The number of ranks (the group size in a team view). */
PLD_API int pld_nranks(const pld_ctx *c);
PLD_API int pld_device(const pld_ctx *c); /**< this rank's device id */
/** Inside a multi-core builtin: this core's index and the core count (0 and 1
 * elsewhere). */
PLD_API int pld_core(const pld_ctx *c);
/** The number of cores of the running multi-core builtin (1 elsewhere). */
PLD_API int pld_ncores(const pld_ctx *c);
/** This rank's slice of a window as a plain tensor. */
PLD_API pld_tensor pld_local(const pld_ctx *c, pld_dtensor t);
/** Reports a failed check: PLD_ERR_CHECK with the formatted message; aborts
 * the group. Does not return. */
PLD_API void pld_fail(pld_ctx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;

/** Plain tensor constructor (no allocation). ndim 1..PLD_MAX_DIMS. */
PLD_API pld_tensor pld_tensor_make(void *data, pld_dtype dtype, int ndim, const int64_t *shape);
/** Element count; -1 when it does not fit an int64_t. */
PLD_API int64_t pld_tensor_numel(pld_tensor t);

/* ---- tiles ------------------------------------------------------------ */
/** A new tile: 2-D [rows, cols] scratch from the rank's UB budget (profile, default
 * 192 KiB, env PLD_UB_BYTES). Exceeding the budget is PLD_ERR_NOMEM. Tiles
 * are freed automatically when the kernel returns. Contents start zeroed. */
PLD_API pld_tile *pld_tile_create(pld_ctx *c, pld_dtype dtype, int64_t rows, int64_t cols);
/** The tile's elements, row-major [rows, cols]. */
PLD_API void *pld_tile_data(pld_tile *t);
/** The tile's number of rows. */
PLD_API int64_t pld_tile_rows(const pld_tile *t);
/** The tile's number of columns. */
PLD_API int64_t pld_tile_cols(const pld_tile *t);
/** The tile's element type. */
PLD_API pld_dtype pld_tile_dtype(const pld_tile *t);
/** Returns a tile to the UB budget before the kernel ends. */
PLD_API void pld_tile_free(pld_ctx *c, pld_tile *t);
/** Bytes of UB in use / available on this rank. */
PLD_API size_t pld_ub_used(const pld_ctx *c);
/** Bytes of UB this rank may hold at once (its budget). */
PLD_API size_t pld_ub_capacity(const pld_ctx *c);

/** tile <-> local tensor; the tile covers the innermost two dims at offsets
 * (one offset per tensor dim). */
PLD_API void pld_load(pld_ctx *c, pld_tile *dst, pld_tensor src, const int64_t *offsets);
/** Writes a tile into a plain tensor at offsets (the reverse of pld_load). */
PLD_API void pld_store(pld_ctx *c, const pld_tile *src, pld_tensor dst, const int64_t *offsets);
/** acc = acc op x, elementwise; same dtype and shape. */
PLD_API void pld_tile_reduce(pld_ctx *c, pld_tile *acc, const pld_tile *x, pld_reduce_op op);
/** acc = acc * x, elementwise; same dtype and shape. */
PLD_API void pld_tile_mul(pld_ctx *c, pld_tile *acc, const pld_tile *x);

/* ---- signals ---------------------------------------------------------- */
/** Updates cell `offsets` of `peer`'s signal window.
 *
 * A signal is an INT32 window. notify updates a cell of `peer`'s window
 * (Set or AtomicAdd); wait blocks until this rank's own cell compares
 * (signed) Eq / Ge to expected. Every put/remote_store/atomic issued before a
 * notify is visible to the rank whose wait observes it (release/acquire).
 * A waiting rank spins briefly, then sleeps until a notify can satisfy it. */
PLD_API void pld_notify(pld_ctx *c, pld_dtensor signal, int peer, const int64_t *offsets,
                        int32_t value, pld_notify_op op);
/** Blocks until this rank's own cell `offsets` compares (signed) Eq / Ge to `expected`. */
PLD_API void pld_wait(pld_ctx *c, pld_dtensor signal, const int64_t *offsets, int32_t expected,
                      pld_wait_cmp cmp);
/** Reads this rank's own cell `offsets` of a signal. */
PLD_API int32_t pld_signal_read(pld_ctx *c, pld_dtensor signal, const int64_t *offsets);

/* ---- tile-level RMA: a 2-D tile lands on the innermost two dims ---------- */
/** Loads the tile-shaped region of `peer`'s window at offsets into a tile. */
PLD_API void pld_remote_load(pld_ctx *c, pld_tile *dst, pld_dtensor src, int peer,
                             const int64_t *offsets);
/** Stores a tile into the tile-shaped region of `peer`'s window at offsets (atomic: add). */
PLD_API void pld_remote_store(pld_ctx *c, const pld_tile *src, pld_dtensor dst, int peer,
                              const int64_t *offsets, pld_atomic atomic);

/** acc = acc op (the tile-shaped region of peer's window at offsets): a
 * remote_load and a tile_reduce in one pass, without the staging copy.
 * Counts as a read from the peer (bytes_from_peers). */
PLD_API void pld_remote_reduce(pld_ctx *c, pld_tile *acc, pld_dtensor src, int peer,
                               const int64_t *offsets, pld_reduce_op op);

/* ---- tensor-level point-to-point ------------------------------------- */
/** Options of pld_put and pld_get; all optional, zero-initialise.
 *
 * Without offsets, src and dst must have the same shape and the whole tensor
 * moves. With offsets, `shape` describes the region; when the two tensors
 * have different ndim, shape has the larger ndim and applies right-aligned to
 * the other (whose missing leading extents must be 1). The transfer is
 * staged through UB: without chunk sizes the whole region must fit the UB
 * budget (else PLD_ERR_NOMEM asking for chunk_rows/chunk_cols). */
typedef struct pld_xfer {
    const int64_t *dst_offsets; /**< region start in dst; all three or none */
    const int64_t *src_offsets; /**< region start in src; all three or none */
    const int64_t *shape;       /**< region shape; all three or none */
    pld_atomic atomic;          /**< PLD_ATOMIC_ADD: add into dst */
    int64_t chunk_rows;         /**< rows per staged chunk; 0 = full extent */
    int64_t chunk_cols;         /**< columns per staged chunk; 0 = full extent */
    int pipeline;               /**< double-buffered; requires both chunk sizes */
} pld_xfer;
/** Writes a plain tensor (or a region of it) into `peer`'s window. */
PLD_API void pld_put(pld_ctx *c, pld_dtensor dst, int peer, pld_tensor src, const pld_xfer *x);
/** Reads `peer`'s window (or a region of it) into a plain tensor. */
PLD_API void pld_get(pld_ctx *c, pld_tensor dst, int peer, pld_dtensor src, const pld_xfer *x);

/* ======================================================================= */
/* Observability                                                           */
/* ======================================================================= */

/** Per-rank counters, from the start of the current launch and kept after it. */
typedef struct pld_counters {
    uint64_t bytes_to_peers;   /**< written into other ranks' windows: put, remote_store */
    uint64_t bytes_from_peers; /**< read from other ranks' windows: get, remote_load */
    uint64_t bytes_self;       /**< the same paths with peer == this rank */
    uint64_t notifies;         /**< notifies issued */
    uint64_t waits;            /**< waits issued */
    uint64_t wait_ns;          /**< time spent blocked in waits */
    /* the URMA queue model of pld_indexed_all_to_all_v (a5sim) */
    uint64_t urma_sqes;      /**< send queue entries built (at most 12 rows each) */
    uint64_t urma_wqebbs;    /**< WQE basic blocks used: 4 per SQE */
    uint64_t urma_nops;      /**< of those, NOP padding */
    uint64_t urma_doorbells; /**< one per segment of at most 64 SQEs */
    uint64_t urma_cqes;      /**< completions waited for: one per non-empty remote send */
    uint64_t merged_ranges;  /**< runs of contiguous source rows moved as one copy */
    uint64_t self_stages;    /**< 8 KiB stages of the self path */
    /** data transfers made: each put, get, remote_store / remote_load and
     * each run a builtin moves is one, whatever its size (what a call costs
     * beyond its bytes; see pld/tune.h) */
    uint64_t transfers;
} pld_counters;
/** This rank's counters since its launch began (in a kernel). */
PLD_API pld_counters pld_ctx_counters(const pld_ctx *c);
/** A rank's counters of the last launch (after it, on the host). */
PLD_API pld_status pld_rank_counters(const pld_world *w, int rank, pld_counters *out);

/** Turns the recording of the lowering listing on or off.
 *
 * The lowering listing of rank 0's last launch (see --ir). Recording is on
 * when the world was created with cfg.ir / --ir / env PLD_IR=1, or after
 * pld_ir_enable(w, 1). */
PLD_API void pld_ir_enable(pld_world *w, int on);
/** Text of the listing; valid until the next launch. "" when not recorded. */
PLD_API const char *pld_ir_text(const pld_world *w);
/** Writes the listing to out (stdout when NULL). */
PLD_API pld_status pld_ir_dump(const pld_world *w, FILE *out);

#ifdef __cplusplus
}
#endif

#include "pld/coll.h"
#include "pld/team.h"
#include "pld/tune.h"

#endif /* PLD_PLD_H */
