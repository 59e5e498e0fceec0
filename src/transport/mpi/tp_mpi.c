/* SPDX-License-Identifier: Apache-2.0 */
/* The MPI transport: set-up, launch, windows and host memory. Each MPI
 * process hosts exactly one rank (its rank in MPI_COMM_WORLD); a launch runs
 * the kernel on the calling thread and ends with every process agreeing on
 * the status and on the root cause's message. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "transport/mpi/tp_mpi.h"

/* ---- MPI itself ---------------------------------------------------------- */

static int thread_level = MPI_THREAD_SINGLE;

/* The world whose kernel this process is running, NULL outside a launch.
 * Read by the exit handler, which may run on any thread that calls exit(). */
static _Atomic(pld_world *) kernel_world;

static void finalize_at_exit(void)
{
    int done = 0;
    MPI_Finalized(&done);
    /* exit() inside a kernel: MPI_Finalize would wait for peers that wait
     * for us (exit_in_kernel aborts the job before this runs) */
    if (!done && !atomic_load(&kernel_world))
        MPI_Finalize();
}

/* exit() called inside a kernel. The peers are in the launch, waiting for
 * this rank or about to agree on the launch's status with it; this process
 * will never answer. Finalizing MPI here (our own handler, or the
 * program's) is collective and blocks for ever; leaving without it is seen
 * by Open MPI as a failure only when the process is gone, and the peers'
 * waits would run to their timeout first and then block in the agreement.
 * So the job ends here, at once, with the program's exit status: MPI_Abort
 * kills every process of the job, and the launcher cleans up its shared
 * memory. A crash (a signal) needs nothing from us: the launcher sees the
 * process die and ends the job the same way. */
static void exit_in_kernel(int status)
{
    pld_world *w = atomic_load(&kernel_world);
    int up = 0, down = 0;
    if (!w)
        return;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (!up || down)
        return;
    tp_mpi_state *s = w->tp_state;
    fprintf(stderr,
            "pld: rank %d (device %d, pid %d): exit(%d) was called inside a kernel: its peers "
            "cannot finish the launch without it and MPI cannot be finalized from here, so the "
            "MPI job is aborted (MPI_Abort with error code %d)\n",
            s->rank, w->device_ids[s->rank], (int)getpid(), status, status ? status : 1);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, status ? status : 1);
}

#if defined(__GLIBC__)
static void exit_in_kernel_status(int status, void *unused)
{
    (void)unused;
    exit_in_kernel(status);
}
#else
static void exit_in_kernel_any(void)
{
    exit_in_kernel(1); /* atexit does not see the status */
}
#endif

/* Registered with the first world, after MPI_Init and after the program's
 * own exit handlers registered before it (handlers run in reverse order, so
 * this one runs before a program's atexit(MPI_Finalize) made earlier). */
static void watch_exit(void)
{
    static _Atomic int done;
    if (atomic_exchange(&done, 1))
        return;
#if defined(__GLIBC__)
    on_exit(exit_in_kernel_status, NULL);
#else
    atexit(exit_in_kernel_any);
#endif
}

/* Initialises MPI unless the program already did; a program that lets pld
 * initialise it gets MPI_Finalize at exit (MPI cannot be initialised twice,
 * so several worlds in a row share one MPI). */
static pld_status ensure_mpi(char *msg, size_t n)
{
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (down) {
        snprintf(msg, n, "MPI was already finalized in this process");
        return PLD_ERR_UNSUPPORTED;
    }
    if (up) {
        MPI_Query_thread(&thread_level);
        return PLD_OK;
    }
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &thread_level);
    if (rc != MPI_SUCCESS) {
        char err[MPI_MAX_ERROR_STRING];
        snprintf(msg, n, "MPI_Init_thread failed: %s", pld__mpi_strerror(rc, err, sizeof err));
        return PLD_ERR_SYSTEM;
    }
    atexit(finalize_at_exit);
    return PLD_OK;
}

static int tp_mpi_launcher_size(void)
{
    char msg[256];
    int size = 0;
    if (ensure_mpi(msg, sizeof msg) != PLD_OK)
        return 0; /* world_init reports it */
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

static pld_status mpi_fail(pld_world *w, const char *call, int rc)
{
    char err[MPI_MAX_ERROR_STRING];
    return pld__world_fail(w, PLD_ERR_SYSTEM, "%s failed: %s", call,
                           pld__mpi_strerror(rc, err, sizeof err));
}

/* ---- world ---------------------------------------------------------------- */

static void free_state(pld_world *w)
{
    tp_mpi_state *s = w->tp_state;
    if (s) {
        if (s->ctl) {
            MPI_Win_unlock_all(s->ctl_win);
            MPI_Win_free(&s->ctl_win);
        }
        if (s->comm != MPI_COMM_NULL)
            MPI_Comm_free(&s->comm);
        free(s->pids);
        free(s);
    }
    free(w->sh);
    w->sh = NULL;
    w->tp_state = NULL;
}

static pld_status tp_mpi_world_init(pld_world *w)
{
    char msg[256];
    pld_status st = ensure_mpi(msg, sizeof msg);
    if (st != PLD_OK)
        return pld__world_fail(w, st, "%s", msg);
    tp_mpi_state *s = calloc(1, sizeof *s);
    if (!s)
        return pld__world_fail(w, PLD_ERR_NOMEM, "out of memory");
    s->comm = MPI_COMM_NULL;
    w->tp_state = s;
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &s->comm);
    if (rc != MPI_SUCCESS) {
        free_state(w);
        return mpi_fail(w, "MPI_Comm_dup", rc);
    }
    MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(s->comm, &s->rank);
    MPI_Comm_size(s->comm, &s->size);
    s->thread_multiple = thread_level >= MPI_THREAD_MULTIPLE;
    /* every rank on this node: windows become MPI shared-memory windows,
     * and data moves with plain copies between the mapped slices */
    MPI_Comm node;
    if (MPI_Comm_split_type(s->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        int node_size = 0;
        MPI_Comm_size(node, &node_size);
        s->node_shared = node_size == s->size && pld__setting_num(PLD__S_MPI_SHM) != 0;
        MPI_Comm_free(&node);
    }
    /* one decision for all: the window calls that follow are collective */
    MPI_Allreduce(MPI_IN_PLACE, &s->node_shared, 1, MPI_INT, MPI_MIN, s->comm);
    PLD__LOGS(PLD__LOG_INFO, PLD__SUB_TRANSPORT, s->rank, "mpi: %d processes, windows %s", s->size,
              s->node_shared ? "in this node's shared memory (data by copies)"
                             : "reached with MPI RMA");
    if (s->size != w->nranks) {
        int size = s->size;
        free_state(w);
        return pld__world_fail(w, PLD_ERR_ARG,
                               "the device list names %d ranks but mpirun started %d processes "
                               "(one rank per process: run mpirun -n %d, or leave the device list "
                               "out)",
                               w->nranks, size, w->nranks);
    }
    w->sh_bytes = pld__world_shared_bytes(w->nranks, w->profile.aiv_cores);
    size_t sh_alloc = (w->sh_bytes + PLD__CACHELINE - 1) & ~(size_t)(PLD__CACHELINE - 1);
    w->sh = aligned_alloc(PLD__CACHELINE, sh_alloc);
    s->pids = calloc((size_t)s->size, sizeof *s->pids);
    if (!w->sh || !s->pids) {
        free_state(w);
        return pld__world_fail(w, PLD_ERR_NOMEM, "out of memory");
    }
    memset(w->sh, 0, sh_alloc);
    pld__world_shared_init(w->sh, w->nranks, w->profile.aiv_cores);
    int pid = (int)getpid();
    rc = MPI_Allgather(&pid, 1, MPI_INT, s->pids, 1, MPI_INT, s->comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_allocate(TP_MPI_CTL_CELLS * sizeof(uint32_t), sizeof(uint32_t), MPI_INFO_NULL,
                              s->comm, &s->ctl, &s->ctl_win);
    if (rc != MPI_SUCCESS) {
        s->ctl = NULL;
        free_state(w);
        return mpi_fail(w, "MPI_Win_allocate (control window)", rc);
    }
    MPI_Win_set_errhandler(s->ctl_win, MPI_ERRORS_RETURN);
    memset(s->ctl, 0, TP_MPI_CTL_CELLS * sizeof(uint32_t));
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s->ctl_win);
    MPI_Win_sync(s->ctl_win);
    MPI_Barrier(s->comm);
    watch_exit();
    return PLD_OK;
}

static void tp_mpi_world_fini(pld_world *w)
{
    tp_mpi_state *s = w->tp_state;
    if (s && s->comm != MPI_COMM_NULL)
        MPI_Barrier(s->comm); /* no peer still reaches into our windows */
    free_state(w);
}

/* ---- launch ----------------------------------------------------------------- */

/* The minimum of `key` over the processes, for the status agreement. When
 * the launch failed here, a peer that neither returns from its kernel nor
 * reaches a pld call (it loops in its own code) would keep every other
 * process in this agreement for ever: after PLD__STUCK_GRACE_MS the job is
 * aborted, as no single MPI process can be stopped on its own. Every
 * process uses the nonblocking form: a blocking and a nonblocking
 * collective do not match each other. */
static int allreduce_min(pld_world *w, int *key, int failed)
{
    tp_mpi_state *s = w->tp_state;
    MPI_Request req;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, key, 1, MPI_INT, MPI_MIN, s->comm, &req);
    if (rc != MPI_SUCCESS || !failed)
        return rc == MPI_SUCCESS ? MPI_Wait(&req, MPI_STATUS_IGNORE) : rc;
    uint64_t deadline = pld__now_ns() + (uint64_t)PLD__STUCK_GRACE_MS * 1000000u;
    for (int done = 0;;) {
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done)
            return rc;
        if (pld__now_ns() > deadline) {
            fprintf(stderr,
                    "pld: rank %d (device %d, pid %d): the launch failed (%s) and a peer did not "
                    "leave its kernel within %d ms (it is in its own code, not in a pld call "
                    "that would have left): aborting the job\n",
                    s->rank, w->device_ids[s->rank], (int)getpid(), w->sh->errmsg,
                    PLD__STUCK_GRACE_MS);
            fflush(stderr);
            MPI_Abort(s->comm, PLD_ERR_TIMEOUT);
        }
        struct timespec ms = {0, 1000000}; /* a waiting process does not burn its CPU */
        nanosleep(&ms, NULL);
    }
}

/* Every process learns the launch's status and the root cause's message:
 * the lowest rank that failed on its own (not merely released by a peer's
 * abort or timed out waiting for it), else the lowest that failed at all. */
static pld_status agree_status(pld_world *w)
{
    tp_mpi_state *s = w->tp_state;
    pld__world_shared *sh = w->sh;
    int32_t st = atomic_load(&sh->abort_status);
    int key = INT_MAX;
    if (st != PLD_OK) {
        int secondary = st == PLD_ERR_PEER || st == PLD_ERR_TIMEOUT;
        int claimed = atomic_load(&sh->err_claimed) != 0;
        key = (claimed ? (secondary ? s->size : 0) : 2 * s->size) + s->rank;
    }
    int rc = allreduce_min(w, &key, st != PLD_OK);
    if (rc != MPI_SUCCESS)
        return mpi_fail(w, "MPI_Allreduce (launch status)", rc);
    if (key == INT_MAX)
        return PLD_OK;
    int root = key % s->size;
    if (root == s->rank && !atomic_load(&sh->err_claimed))
        snprintf(sh->errmsg, sizeof sh->errmsg,
                 "rank %d (device %d): the launch was aborted without a recorded cause", root,
                 w->device_ids[root]);
    int32_t agreed = st;
    rc = MPI_Bcast(&agreed, 1, MPI_INT32_T, root, s->comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Bcast(sh->errmsg, (int)sizeof sh->errmsg, MPI_CHAR, root, s->comm);
    if (rc != MPI_SUCCESS)
        return mpi_fail(w, "MPI_Bcast (launch error)", rc);
    sh->errmsg[sizeof sh->errmsg - 1] = '\0';
    atomic_store(&sh->abort_status, agreed);
    return PLD_OK;
}

static pld_status tp_mpi_launch(pld_world *w)
{
    tp_mpi_state *s = w->tp_state;
    /* a new launch starts un-aborted everywhere: every abort of the last one
     * completed before its sender reached the last agreement */
    uint32_t zero = 0;
    int rc = MPI_Accumulate(&zero, 1, MPI_UINT32_T, s->rank, TP_MPI_CTL_ABORT, 1, MPI_UINT32_T,
                            MPI_REPLACE, s->ctl_win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(s->rank, s->ctl_win);
    if (rc != MPI_SUCCESS)
        return mpi_fail(w, "MPI_Accumulate (control window)", rc);
    pld__mpi_sync_windows(w); /* the host's stores into windows, before any peer reads */
    /* no rank's kernel touches a peer before every host is done with the
     * previous results */
    rc = MPI_Barrier(s->comm);
    if (rc != MPI_SUCCESS)
        return mpi_fail(w, "MPI_Barrier (launch)", rc);
    atomic_store(&kernel_world, w);
    pld__rank_main(w, s->rank);
    atomic_store(&kernel_world, (pld_world *)NULL);
    pld__mpi_sync_windows(w); /* results in this rank's windows, for its host */
    return agree_status(w);
}

/* Every process passed the same value: its minimum and maximum agree. */
static int tp_mpi_host_agree(pld_world *w, uint64_t value)
{
    tp_mpi_state *s = w->tp_state;
    uint64_t v[2] = {value, ~value}; /* min of both = min and ~max */
    if (MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_MIN, s->comm) != MPI_SUCCESS)
        return 0;
    return v[0] == value && v[1] == ~value;
}

static int tp_mpi_host_union(pld_world *w, unsigned char *bits, size_t n)
{
    tp_mpi_state *s = w->tp_state;
    if (n > (size_t)INT_MAX)
        return -1;
    return MPI_Allreduce(MPI_IN_PLACE, bits, (int)n, MPI_UNSIGNED_CHAR, MPI_BOR, s->comm) ==
                   MPI_SUCCESS
               ? 0
               : -1;
}

static void tp_mpi_hosted(const pld_world *w, int *first, int *count)
{
    *first = tp_mpi_state_of(w)->rank;
    *count = 1;
}

static int tp_mpi_rank_pid(const pld_world *w, int rank)
{
    return tp_mpi_state_of(w)->pids[rank];
}

/* ---- windows and host memory --------------------------------------------- */

/* Maps every rank's slice of a shared-memory window into mw->peer. */
static int map_peers(tp_mpi_state *s, tp_mpi_win *mw)
{
    mw->peer = calloc((size_t)s->size, sizeof *mw->peer);
    if (!mw->peer)
        return MPI_ERR_NO_MEM;
    for (int r = 0; r < s->size; r++) {
        MPI_Aint size;
        int disp;
        void *p = NULL;
        int rc = MPI_Win_shared_query(mw->win, r, &size, &disp, &p);
        if (rc != MPI_SUCCESS)
            return rc;
        mw->peer[r] = p;
    }
    return MPI_SUCCESS;
}

static pld_status tp_mpi_window_alloc(pld_world *w, pld_window_buffer *buf)
{
    tp_mpi_state *s = w->tp_state;
    tp_mpi_win *mw = calloc(1, sizeof *mw);
    if (!mw)
        return PLD_ERR_NOMEM;
    void *base = NULL;
    int rc = s->node_shared ? MPI_Win_allocate_shared((MPI_Aint)buf->stride, 1, MPI_INFO_NULL,
                                                      s->comm, &base, &mw->win)
                            : MPI_Win_allocate((MPI_Aint)buf->stride, 1, MPI_INFO_NULL, s->comm,
                                               &base, &mw->win);
    if (rc == MPI_SUCCESS && s->node_shared && (rc = map_peers(s, mw)) != MPI_SUCCESS)
        MPI_Win_free(&mw->win);
    if (rc != MPI_SUCCESS) {
        free(mw->peer);
        free(mw);
        char err[MPI_MAX_ERROR_STRING];
        PLD__LOGS(PLD__LOG_WARN, PLD__SUB_TRANSPORT, s->rank,
                  "allocating a window of %zu bytes failed: %s", buf->stride,
                  pld__mpi_strerror(rc, err, sizeof err));
        return PLD_ERR_NOMEM;
    }
    MPI_Win_set_errhandler(mw->win, MPI_ERRORS_RETURN);
    memset(base, 0, buf->stride);
    /* one passive-target epoch for the window's whole life */
    MPI_Win_lock_all(MPI_MODE_NOCHECK, mw->win);
    MPI_Win_sync(mw->win);
    buf->base = base;
    buf->map_bytes = buf->stride;
    buf->tp_priv = mw;
    /* zeroed everywhere before anyone may write into it */
    MPI_Barrier(s->comm);
    return PLD_OK;
}

static void tp_mpi_window_free(pld_world *w, pld_window_buffer *buf)
{
    (void)w;
    tp_mpi_win *mw = buf->tp_priv;
    if (!mw)
        return;
    MPI_Win_unlock_all(mw->win);
    MPI_Win_free(&mw->win); /* collective: waits for every rank */
    free(mw->peer);
    free(mw);
    buf->tp_priv = NULL;
    buf->base = NULL;
}

static void *tp_mpi_window_peer_ptr(pld_world *w, pld_window_buffer *buf, int peer)
{
    /* the own slice always; a peer's only when the node shares memory
     * (otherwise peers are reached with put/get) */
    if (peer == tp_mpi_state_of(w)->rank)
        return buf->base;
    return tp_mpi_peer_of(buf, peer);
}

static void *tp_mpi_host_alloc(pld_world *w, size_t bytes)
{
    (void)w;
    size_t n = (bytes + PLD__CACHELINE - 1) & ~(size_t)(PLD__CACHELINE - 1);
    if (n < bytes)
        return NULL;
    void *p = aligned_alloc(PLD__CACHELINE, n);
    if (p)
        memset(p, 0, n);
    return p;
}

static void tp_mpi_host_free(pld_world *w, void *p)
{
    (void)w;
    free(p);
}

static int tp_mpi_host_visible(pld_world *w, const void *p, size_t bytes)
{
    (void)w, (void)p, (void)bytes;
    return 1; /* the rank runs in the host's own process */
}

static int tp_mpi_rank_mem_ok(pld_ctx *c, const void *p, size_t bytes)
{
    (void)c, (void)p, (void)bytes;
    return 1;
}

static int tp_mpi_threads_ok(const pld_world *w)
{
    return tp_mpi_state_of(w)->thread_multiple;
}

const pld_transport_ops pld__tp_mpi_ops = {
    .size = sizeof(pld_transport_ops),
    .name = "mpi",
    .launcher_size = tp_mpi_launcher_size,
    .world_init = tp_mpi_world_init,
    .world_fini = tp_mpi_world_fini,
    .launch = tp_mpi_launch,
    .hosted_ranks = tp_mpi_hosted,
    .rank_pid = tp_mpi_rank_pid,
    .threads_ok = tp_mpi_threads_ok,
    .window_alloc = tp_mpi_window_alloc,
    .window_free = tp_mpi_window_free,
    .window_peer_ptr = tp_mpi_window_peer_ptr,
    .host_alloc = tp_mpi_host_alloc,
    .host_free = tp_mpi_host_free,
    .host_visible = tp_mpi_host_visible,
    .rank_mem_ok = tp_mpi_rank_mem_ok,
    .put = pld__mpi_put,
    .get = pld__mpi_get,
    .accumulate = pld__mpi_accumulate,
    .signal_update = pld__mpi_signal_update,
    .signal_load = pld__mpi_signal_load,
    /* no wake-up across machines: the policy naps */
    .sleep_prepare = pld__tp_sleep_prepare_none,
    .sleep = pld__tp_sleep_nap,
    .sleep_end = pld__tp_sleep_end_none,
    .fence = pld__mpi_fence,
    .abort = pld__mpi_abort,
    .peer_failed = pld__mpi_peer_failed,
    .host_agree = tp_mpi_host_agree,
    .host_union = tp_mpi_host_union,
    /* no CAP_DEADLOCK: a peer's windows and agent states are not all
     * visible here; CAP_WAKE: none */
    .caps = 0,
};
