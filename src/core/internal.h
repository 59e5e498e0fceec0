/* SPDX-License-Identifier: Apache-2.0 */
/* Internal structures shared by pld's layers. Not installed.
 *
 * Names: pld__ for non-static internals shared across files. */
#ifndef PLD_INTERNAL_H
#define PLD_INTERNAL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "pld/pld.h"
#include "transport/transport.h"

#define PLD__MAX_RANKS 4096        /* PLD_MAX_RANKS when unset */
#define PLD__MAX_RANKS_LIMIT 65536 /* the most PLD_MAX_RANKS allows */
#define PLD__MAX_WINDOWS 4096
#define PLD__NAME_MAX 48
#define PLD__ERRMSG_MAX 16384
#define PLD__CACHELINE 64

#if defined(__GNUC__)
#define PLD__NORETURN __attribute__((noreturn))
#define PLD__PRINTF(a, b) __attribute__((format(printf, a, b)))
#define PLD__LIKELY(x) __builtin_expect(!!(x), 1)
#define PLD__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define PLD__NORETURN
#define PLD__PRINTF(a, b)
#define PLD__LIKELY(x) (x)
#define PLD__UNLIKELY(x) (x)
#endif

/* ---- platform profiles (src/core/profile.c) ----------------------------- */

typedef struct pld__profile {
    const char *name; /* canonical name */
    size_t ub_bytes;  /* on-core buffer per core */
    int aiv_cores;    /* AIV cores per rank: bounds every core_num */
    bool urma;        /* URMA queue model present */
    int64_t sq_depth; /* SQ depth in WQEBBs (URMA only) */
} pld__profile;

/* Operations whose availability depends on the profile. */
typedef enum pld__op { PLD__OP_INDEXED_ALL_TO_ALL_V } pld__op;
pld_status pld__profile_allows(const pld__profile *p, pld__op op, char *msg, size_t msgsz);

/* The i-th built-in profile with its stock limits (no environment
 * overrides), NULL past the last: what the hazard lints compare with. */
const pld__profile *pld__profile_stock(int i);

/* Resolves a platform name (aliases included) into *out with the
 * environment overrides applied. Writes a message into msg on failure. */
pld_status pld__profile_resolve(const char *name, pld__profile *out, char *msg, size_t msgsz);

/* ---- settings: every PLD_* variable (src/core/settings.h) --------------- */

#include "core/settings.h"

/* CPUs this process may run on (its affinity mask). */
int pld__cpus_allowed(void);
/* Pins the calling thread to the (rank mod n)-th allowed CPU; returns that
 * CPU, or -1 when the system refuses (the rank then runs unpinned). */
int pld__pin_rank(int rank);

/* ---- logging (src/core/log.c) ------------------------------------------- */

enum { PLD__LOG_OFF = 0, PLD__LOG_WARN = 1, PLD__LOG_INFO = 2, PLD__LOG_TRACE = 3 };
/* PLD_DEBUG_SUBSYS bits: what a line is about */
enum { PLD__SUB_INIT = 1, PLD__SUB_COLL = 2, PLD__SUB_TRANSPORT = 4, PLD__SUB_CHECK = 8 };
int pld__log_level(void);
/* 1 when lines of this level and subsystem are written */
int pld__log_on(int level, unsigned subsys);
/* rank -1: the host side ([host], or under mpi the process's own rank) */
void pld__log(int level, int rank, const char *fmt, ...) PLD__PRINTF(3, 4);
#define PLD__LOGS(lvl, sub, rank, ...)                                                             \
    do {                                                                                           \
        if (PLD__UNLIKELY(pld__log_on((lvl), (sub))))                                              \
            pld__log((lvl), (rank), __VA_ARGS__);                                                  \
    } while (0)
/* a line of the COLL subsystem (kernels and launches) */
#define PLD__LOG(lvl, rank, ...) PLD__LOGS((lvl), PLD__SUB_COLL, (rank), __VA_ARGS__)
/* World init: PLD_DEBUG and PLD_DEBUG_SUBSYS are read again (the first
 * line of a process read them before). */
void pld__log_reload(void);
/* The rank this process's host side speaks as in log lines (-1: [host]). */
void pld__log_host_rank(int rank);
/* PLD_DEBUG_FILE's name with %h and %p filled in. */
const char *pld__log_path(const char *pattern, char *out, size_t n);
/* -1 with msg set when logging is on and PLD_DEBUG_FILE cannot be opened. */
int pld__log_check_file(char *msg, size_t msgsz);
/* PLD_DEBUG=TRACE: a line per builtin and primitive call naming the call
 * and where it was called from (pld_ctx.log_calls). */
void pld__log_call(const pld_ctx *c, const char *api, const void *ret);

/* ---- shared control state ----------------------------------------------- */

/* Execution state of an agent (one core of one rank), as seen by the
 * deadlock detector. JOINING: core 0 waits for the rank's other cores. */
enum {
    PLD__RS_IDLE = 0,
    PLD__RS_RUNNING = 1,
    PLD__RS_BLOCKED = 2,
    PLD__RS_DONE = 3,
    PLD__RS_JOINING = 4
};

/* What a blocked rank waits for, published for the deadlock report. All
 * fields are atomics because the detector reads them from other ranks. */
typedef struct pld__wait_rec {
    _Atomic int32_t buf_id;
    _Atomic int32_t cmp;
    _Atomic int32_t expected;
    _Atomic int32_t ndim;
    _Atomic int64_t off; /* byte offset of the cell in the rank's slice */
    _Atomic int64_t coords[PLD_MAX_DIMS];
    _Atomic int32_t team;      /* serial of the waiting view's team, -1: the world */
    _Atomic int32_t team_rank; /* the view's group rank */
} pld__wait_rec;

/* Per-rank wake-up word. Lives in memory every rank of the world can reach
 * (heap for threads, shared memory for processes). A notify to a rank wakes
 * every sleeping core of that rank. */
typedef struct pld__rank_shared {
    _Alignas(PLD__CACHELINE) _Atomic uint32_t wake_seq; /* futex word: bumped to wake */
    _Atomic int32_t sleepers;                           /* threads of this rank asleep */
    _Atomic int32_t cores_active;                       /* agents in use: 1 or a core_num */
} pld__rank_shared;

/* Per-agent (rank, core) state: what the deadlock detector reads, and the
 * counters, written only by the agent's own thread. */
typedef struct pld__agent {
    _Alignas(PLD__CACHELINE) _Atomic int32_t state; /* PLD__RS_* */
    _Atomic uint64_t notify_seq;                    /* notifies issued (deadlock check) */
    pld__wait_rec wait;
    /* sched_getcpu() + 1 where the agent last waited, 0 before its first
     * wait: the wait policy (prim/wait.c) leaves a CPU a peer needs */
    _Alignas(PLD__CACHELINE) _Atomic int32_t cpu;
    _Alignas(PLD__CACHELINE) pld_counters counters;
    int32_t spin_cut;   /* the wait policy's spin budget: w->spin >> spin_cut */
    int32_t shared_run; /* waits in a row that found a peer on this CPU */
} pld__agent;

/* A group's inboxes for the one-round path of the builtins (coll/ll.c):
 * window ids of the payload slots and of the flags, the bytes per slot
 * (the group's threshold), the writers per parity (its largest group),
 * and whether the push builtins use it. box_win < 0: the group has no
 * one-round path. */
typedef struct pld__ll_inbox {
    int32_t box_win, flag_win;
    int32_t slot, cap;
    int32_t push;       /* PLD_LL_BYTES was set: allgather and all_to_all use it too */
    int32_t line_cells; /* INT32 cells per writer's line: 16 (one 64-byte line each) up
                           to 64 ranks, 2 (packed) beyond (coll/ll.c) */
} pld__ll_inbox;

/* PLD_RULES (src/tune/rules.c): rank 0's rules, shared with every process. */
#define PLD__RULES_MAX 64
typedef struct pld__rule {
    int32_t coll;   /* pld_rule_coll */
    int32_t choice; /* the mode or form it picks */
    int32_t line;   /* in the file, for messages */
    int32_t min_ranks, max_ranks;
    uint64_t min_bytes, max_bytes;
} pld__rule;
typedef struct pld__rules {
    int32_t n;
    int32_t failed; /* rank 0 could not read them */
    pld__rule r[PLD__RULES_MAX];
    char path[256];
} pld__rules;

typedef struct pld__world_shared {
    int32_t nranks, cores;           /* agents: nranks x cores, after rank[] */
    _Atomic int32_t abort_status;    /* 0 while healthy; root-cause status once aborted */
    _Atomic int32_t err_claimed;     /* first failing rank claims the message slot */
    _Atomic int32_t live;            /* ranks of the launch not yet finished */
    _Atomic uint64_t notify_epoch;   /* bumped by every notify: deadlock checks need it */
    _Atomic int32_t deadlock_claim;  /* one rank writes the deadlock report */
    _Atomic uint64_t detect_next_ns; /* no deadlock check starts before (prim/wait.c) */
    int32_t agree_win;               /* agreement check's window id, -1 when off */
    int32_t hazard_win;              /* hazard lints' cell table window id, -1 when off */
    pld__ll_inbox ll;                /* the world's one-round inboxes (coll/ll.c) */
    _Atomic int32_t ll_used;         /* a one-round call ran since the flags were cleared */
    pld_tune tune;                   /* the cost model's parameters (src/tune/) */
    pld__rules rules;                /* PLD_RULES (src/tune/rules.c) */
    int32_t sync_form;               /* PLD_SYNC (pld_sync_form; coll/sync.c) */
    int32_t tree_fanout;             /* PLD_TREE_FANOUT (0: auto, pld__sync_fanout) */
    uint32_t launch_seq;             /* launches so far (host-written before each) */
    char errmsg[PLD__ERRMSG_MAX];
    pld__rank_shared rank[]; /* nranks entries */
} pld__world_shared;

size_t pld__world_shared_bytes(int nranks, int cores);
/* Lays out a zeroed control block for nranks x cores agents. */
void pld__world_shared_init(pld__world_shared *sh, int nranks, int cores);

static inline pld__agent *pld__agent_at(pld__world_shared *sh, int rank, int core)
{
    pld__agent *base = (pld__agent *)(void *)&sh->rank[sh->nranks];
    return &base[rank * sh->cores + core];
}

/* ---- windows ------------------------------------------------------------ */

struct pld_window_buffer {
    /* what every call's checks read first, on one cache line of its own
     * descriptor: descriptors sit side by side in one array */
    _Alignas(PLD__CACHELINE) int live; /* 0 once freed: stale handles read this
                                          (core/window.c) */
    uint32_t gen;                      /* allocations of this descriptor slot so far */
    pld_world *w;
    int id; /* index in w->windows */
    char name[PLD__NAME_MAX];
    size_t bytes;        /* requested bytes per rank */
    size_t stride;       /* distance between rank slices (>= bytes, cache aligned) */
    unsigned char *base; /* rank r's slice at base + r*stride (when mapped) */
    size_t map_bytes;
    void *tp_priv;          /* transport's own data */
    _Atomic int signal_use; /* a builtin used it as its signal in this launch (the
                               signal checker under the schedule explorer) */
};

/* Window descriptors live in one array after the id table (w->windows), in
 * memory every rank reads; a buffer handle points into it. */
#define PLD__WINDOW_DESCS PLD__MAX_WINDOWS
static inline pld_window_buffer *pld__window_descs(const pld_window_buffer *const *windows)
{
    return (pld_window_buffer *)(void *)(windows + PLD__MAX_WINDOWS);
}
/* The descriptor slot a handle names, or -1 when it is not one of w's
 * (another world's, or not a window at all): decided without reading it. */
int pld__window_slot(const pld_world *w, const pld_window_buffer *buf);
/* Zeroes a live window on the ranks this process hosts (the reset without
 * its checks: the checkers clear their windows at a launch's end). */
void pld__window_zero(pld_world *w, pld_window_buffer *buf);
/* Frees a live window (pld_free_window_buffer after its checks, finalize). */
void pld__window_release(pld_world *w, pld_window_buffer *buf);

/* ---- tiles -------------------------------------------------------------- */

struct pld_tile {
    pld_dtype dtype;
    int64_t rows, cols;
    size_t bytes;
    void *data;
    int id;       /* t0, t1, ... in listings */
    uint32_t gen; /* handles of its pool handed out before it (prim/tile.c) */
    int live;     /* 0 once freed: stale handles read this */
    struct pld_tile *next, *prev;
};

/* Frees the tiles a context keeps for reuse (src/prim/tile.c); called when
 * the context ends, after its live tiles were freed. */
void pld__tile_spares_free(pld_ctx *c);
/* Teams (src/core/team.c): 1 if t is one of w's teams (by address), and
 * the release of all of them at finalize. */
int pld__team_of_world(const pld_world *w, const struct pld_team *t);
void pld__teams_free(pld_world *w);

/* Ends a live tile of c (pld_tile_free after its checks; kernel end). */
void pld__tile_release(pld_ctx *c, pld_tile *t);
/* Frees the tile handles of every agent this process ran (world finalize). */
void pld__tile_pools_free(pld_world *w);

typedef struct pld__race pld__race;           /* src/check/race.c */
typedef struct pld__trace_buf pld__trace_buf; /* src/trace/trace.c */
typedef struct pld__ir pld__ir;               /* src/trace/ir.c */

/* ---- world -------------------------------------------------------------- */

struct pld_world {
    const pld_transport_ops *tp;
    const struct pld__life_hooks *hooks; /* the layers above (core/hooks.h) */
    void *tp_state;
    int nranks;
    int *device_ids;
    pld__profile profile;
    int wait_timeout_ms;
    int spin;             /* spin iterations before a wait yields */
    int yields;           /* sched_yield rounds before it sleeps */
    int pin;              /* pin each rank to one CPU (core/pin.c) */
    int fork_each_launch; /* process transport: new workers for every launch */
    size_t stack_bytes;   /* rank threads' stack, thread transport (PLD_STACK_BYTES) */
    int fibers;           /* thread transport: carrier threads running the ranks as
                           * user-level contexts (PLD_FIBERS); 0: a thread per rank */
    unsigned check;
    int ir_print;         /* print the listing after each launch */
    _Atomic int ir_on;    /* record rank 0's operations */
    char *ir_svg_path;    /* --ir-svg: every rank records, the host draws */
    struct pld__svg *svg; /* the diagrams of past launches (host) */
    char *trace_path;
    char *trace_text; /* events of past launches (host) */
    size_t trace_len, trace_cap;
    unsigned char *trace_cores; /* [rank * cores + core]: 1 once it had events (host) */
    uint64_t trace_flow_id;     /* the next flow arrow's id */
    uint64_t trace_run;         /* this run's id in every per-rank trace (mpi) */

    pld_window_buffer *private_signal; /* pld_host_allreduce with a NULL signal */
    pld_dtensor check_signal;          /* [P,1], PLD_CHECK_SIGNALS' own barriers */
    pld__race *race;                   /* PLD_CHECK_RACE state, NULL when off */
    struct pld__sched *sched;          /* schedule explorer's serial mode, NULL when off */
    uint64_t sched_seed;               /* PLD_SCHED */
    int sched_mode;                    /* 0 off, 1 serial (thread), 2 perturb (process) */
    pld__world_shared *sh;             /* control block every rank reaches */
    size_t sh_bytes;

    pld_window_buffer **windows; /* PLD__MAX_WINDOWS slots by id, in memory every rank
                                    reads; NULL when free; the descriptors follow */
    int nwindows;                /* highest slot in use + 1 */
    int desc_next;               /* next descriptor slot to try (round robin) */

    /* lifetime (core/handles.c) */
    uint64_t gen;                       /* serial number of this world in the process */
    _Atomic int launching;              /* a host thread is inside pld_launch */
    struct pld__host_blocks *hblocks;   /* pld_host_alloc's blocks */
    struct pld__tile_pool **tile_pools; /* per agent (rank x core), made by the agent */
    struct pld_team **teams;            /* every team made, freed ones too (core/team.c), in
                                           memory every rank reads */
    int nteams, teams_cap;
    struct pld__views *agent_views; /* per agent (rank x core): its team views, made by
                                       the agent in its own process (core/team_ctx.c) */

    /* the current launch */
    pld_kernel kernel;
    void *kernel_arg;
    pld__ir *ir;
    char *ir_shared; /* rank 0's rendered listing, when rank 0 runs in
                        another process (1 MiB in shared memory) */

    char errmsg[PLD__ERRMSG_MAX]; /* host-side copy, what pld_world_error returns */

    /* Set by the transport when a rank's kernel did not return after its
     * launch failed and the rank cannot be stopped (a thread): the world's
     * memory may still be in use by that rank, so every later call fails
     * with unusable_why instead of touching it. Host-written, host-read. */
    _Atomic int unusable;
    char unusable_why[512];
};

/* Fills w->errmsg (host-side failures) and returns st. */
pld_status pld__world_fail(pld_world *w, pld_status st, const char *fmt, ...) PLD__PRINTF(3, 4);
/* PLD_OK, or PLD_ERR_ARG naming `api` and why the world is unusable (a rank
 * that never returned, see pld_world.unusable). Host calls that touch the
 * world's ranks or memory check it first. */
static inline pld_status pld__world_usable(pld_world *w, const char *api)
{
    if (PLD__LIKELY(!atomic_load_explicit(&w->unusable, memory_order_acquire)))
        return PLD_OK;
    return pld__world_fail(w, PLD_ERR_ARG, "%s: this world is unusable: %s", api, w->unusable_why);
}
/* Error for pld_world_init, kept per thread for pld_last_error. */
pld_status pld__init_fail(pld_status st, const char *fmt, ...) PLD__PRINTF(2, 3);

/* Runs the kernel on one rank; called by the transport's launch on the
 * rank's own thread/process. */
void pld__rank_main(pld_world *w, int rank);

/* ---- kernel context ----------------------------------------------------- */

struct pld_ctx {
    pld_world *w;
    /* rank, nranks: who this context speaks as -- the world rank and size,
     * or in a team view (core/team_ctx.c) the group rank and size, which is
     * what every `peer` argument means. wrank is always the world rank: the
     * identity of the agent (its memory, its slices, its counters). */
    int rank, nranks, device;
    int wrank;
    const int *members;          /* group rank -> world rank; NULL in a world context */
    const struct pld_team *team; /* the view's team; NULL in a world context */
    pld_ctx *agent;              /* the context that owns the agent's state below --
                                    error exit, tiles, UB, schedule stream: itself,
                                    or for a view the context it was made from */
    struct pld__views *views;    /* the agent's team views (agent context only) */
    int retired;                 /* a view whose kernel has returned */
    pld__rank_shared *rs;        /* the rank's wake-up word */
    pld__agent *ag;              /* this core's state and counters */
    int core, ncores;            /* core b of ncores (0 of 1 outside multi-core calls) */
    pld__world_shared *sh;
    const pld_transport_ops *tp;
    jmp_buf jb; /* any kernel error longjmps here */
    pld_status
        raised; /* what this rank raised itself (pld_ffi_*: its own error, not PLD_ERR_PEER) */
    size_t ub_used, ub_cap;
    pld_tile *tiles;  /* live tiles, freed at kernel end */
    pld_tile *spares; /* freed tiles kept for reuse (src/prim/tile.c) */
    int nspares;
    int next_tile_id;
    const char *scope[4]; /* enclosing builtin calls, for messages */
    int depth;
    pld__ir *ir;           /* non-NULL on rank 0 when recording */
    struct pld__rec *rec;  /* non-NULL on every rank's core 0 under --ir-svg */
    pld__trace_buf *trace; /* non-NULL when tracing */
    uint64_t scope_t0[4];  /* start of each enclosing builtin, for the trace */
    unsigned obs;          /* PLD__OBS_* observers, chosen when the agent starts
                              (src/hook/hook.h) */
    /* agreement check (src/check/agree.c): the current builtin call */
    struct pld__agree_ctx *agree; /* NULL when the check is off */
    /* schedule explorer (src/check/explore.c) */
    int sched_on;         /* this agent stops at every primitive boundary */
    uint64_t sched_rng;   /* process transport: this rank's perturbation stream */
    uint64_t agree_calls; /* builtin calls of this rank in this launch */
    int agree_pending;    /* published, not yet compared */
    int log_calls;        /* PLD_DEBUG=TRACE with COLL: log every call */
    int32_t ll_epoch;     /* one-round builtin calls of this context in this launch */
    int sync;             /* the builtins' synchronisation form for this group
                             (its pld_sync_form; 0: not chosen yet; coll/sync.c) */
    int sync_fanout;      /* and the tree form's children per rank */
    int lib_tensors;      /* a builtin's own put or get goes through the public call (for
                             the listing): its local tensor is the caller's, checked when
                             the builtin began, or the library's own staging memory,
                             private to the rank by design (src/prim/xfer.c) */
};

/* A kernel-side call with a NULL context: there is no rank to fail, so
 * the program stops with a message naming the call. */
PLD__NORETURN void pld__null_ctx(const char *api);
/* A team view used after its kernel returned: the current kernel fails
 * (PLD_ERR_ARG), or with no kernel running the program stops, as for NULL. */
PLD__NORETURN void pld__retired_ctx(const pld_ctx *c, const char *api);
#define PLD__CTX_CHECK(c, api)                                                                     \
    do {                                                                                           \
        if (PLD__UNLIKELY(!(c)))                                                                   \
            pld__null_ctx(api);                                                                    \
        if (PLD__UNLIKELY((c)->retired))                                                           \
            pld__retired_ctx((c), api);                                                            \
        if (PLD__UNLIKELY((c)->log_calls))                                                         \
            pld__log_call((c), api, __builtin_return_address(0));                                  \
    } while (0)

/* The world rank of a peer given in c's terms (a group rank in a view).
 * Every transport call takes world ranks. */
/* The largest power of two <= p (p >= 1): the ranks that take
 * Rabenseifner's steps (src/coll/allreduce_rabenseifner.c, its cost in
 * src/tune/predict.c). */
static inline int pld__floor_pow2(int p)
{
    int b = 1;
    while (b <= p / 2)
        b <<= 1;
    return b;
}

/* ceil(log2 p), 0 for p <= 1: the rounds of the dissemination barrier and
 * the steps of Bruck's all-to-all (and, for a power of two, log2 p). */
static inline int pld__ceil_log2(int p)
{
    int r = 0;
    for (int64_t d = 1; d < p; d <<= 1)
        r++;
    return r;
}

/* How many indices in [0, p) have bit k set: the chunks step k of Bruck's
 * all-to-all moves (src/coll/all_to_all_bruck.c, its cost in
 * src/tune/predict.c). */
static inline int64_t pld__bit_count(int p, int k)
{
    int64_t h = (int64_t)1 << k, rest = p % (2 * h) - h;
    return (p / (2 * h)) * h + (rest > 0 ? rest : 0);
}

static inline int pld__wpeer(const pld_ctx *c, int peer)
{
    return c->members ? c->members[peer] : peer;
}
/* What c's ranks are, for messages: "this world" or "the group of team
 * 'tp'" (core/team_ctx.c). */
const char *pld__ctx_scope(const pld_ctx *c, char *buf, size_t n);
/* The name of c's rank count in messages: T in a team view, P otherwise. */
static inline const char *pld__pname(const pld_ctx *c)
{
    return c->team ? "T" : "P";
}

/* Raises a kernel error: records the message (first error of the group
 * wins), aborts the group and ends this rank's kernel. `api` is the public
 * call that detected it. */
PLD__NORETURN void pld__kraise(pld_ctx *c, pld_status st, const char *api, const char *fmt, ...)
    PLD__PRINTF(4, 5);
/* Records a group failure (first wins) without ending the caller; used by
 * the transport (deadlock/timeout) and by kraise. Returns 1 if this call
 * claimed the root cause. */
int pld__group_fail(pld_world *w, pld_status st, const char *msg);
/* Aborted? (relaxed check used on every primitive) */
static inline int pld__aborted(const pld_ctx *c)
{
    return atomic_load_explicit(&c->sh->abort_status, memory_order_relaxed) != 0;
}
/* Ends this rank's kernel because the group was aborted by someone else. */
PLD__NORETURN void pld__kexit_aborted(pld_ctx *c);

/* Runs fn on ncores cores of this rank at once (core 0 is the caller) and
 * returns when all have finished; 1 <= ncores <= the profile's AIV cores. */
typedef void (*pld_core_fn)(pld_ctx *core_ctx, int core, void *arg);
void pld__run_cores(pld_ctx *c, const char *api, int ncores, pld_core_fn fn, void *arg);

/* Enter/leave a builtin (nesting for messages and the listing). */
void pld__scope_push(pld_ctx *c, const char *name);
void pld__scope_pop(pld_ctx *c);

/* ---- offsets and regions (src/prim/region.c) ---------------------------- */

/* Number of entries of an offsets/shape array made by PLD_IDX, or -1 when
 * unknown (plain array). Consumes the mark. */
int pld__idx_count(const int64_t *v);
/* Formats "[a,b,c]" into buf. */
const char *pld__fmt_dims(char *buf, size_t n, const int64_t *v, int ndim);

/* ---- waits -------------------------------------------------------------- */

typedef struct pld__wait_desc {
    pld_window_buffer *buf;
    size_t off;
    int32_t expected;
    pld_wait_cmp cmp;
    int ndim;
    int64_t coords[PLD_MAX_DIMS];
} pld__wait_desc;

/* One spin-wait step: PAUSE on x86 (~140 cycles on recent cores), YIELD
 * on arm64. */
static inline void pld__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline int pld__wait_satisfied(int32_t v, int32_t expected, pld_wait_cmp cmp)
{
    return cmp == PLD_WAIT_EQ ? v == expected : v >= expected;
}

/* Monotonic clock in nanoseconds. */
uint64_t pld__now_ns(void);

#endif /* PLD_INTERNAL_H */
