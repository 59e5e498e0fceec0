/* SPDX-License-Identifier: Apache-2.0 */
/* The process transport: every rank is a forked worker process, created
 * once per world and reused by every launch. Windows, signals, counters and
 * the error/abort state live in one shared arena (memfd) mapped before the
 * fork, so addresses agree everywhere and the shared-memory primitives of
 * the thread transport apply unchanged (futexes in shared mode).
 *
 * Launch protocol (control block in the arena):
 *   host:   write kernel/arg/world fields; launch_gen++ ; wake
 *   worker: run the kernel; finished_gen[rank] = gen; done_seq++ ; wake
 *   host:   wait until every rank finished (or died), reaping dead workers
 *           every few milliseconds: a death aborts the group (PLD_ERR_PEER
 *           naming the rank and the signal or exit code).
 * Workers die with the host (PR_SET_PDEATHSIG, and a parent check while
 * idle); finalize asks them to exit and reaps them.
 *
 * Stuck workers: once the group has failed (abort_status set: a timeout, a
 * kernel error, a death), every rank in a pld call leaves at once. A worker
 * that is still inside the kernel PLD__STUCK_GRACE_MS later is looping in
 * user code (or stopped: SIGSTOP, a debugger) and would hold the launch
 * for ever. The host kills it, reaps it, and forks a replacement for the
 * same rank, so the world stays usable; the launch returns PLD_ERR_TIMEOUT
 * naming the killed worker, followed by the failure that came first. A
 * launch that has not failed is never cut short: a long computation looks
 * exactly like a loop that never ends. The replacement is forked from the
 * host as it is now, not as it was at world init; it starts like the
 * others (worker_main), and the world it sees is in the arena. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/process/arena.h"
#include "transport/process/private_mem.h"
#include "trace/trace.h"
#include "transport/shm/shm.h"

#define ARENA_BYTES ((size_t)64 << 30) /* virtual; pages are used on touch */
/* the least a file size limit may leave: world init takes ~2 MiB, the rest is for windows */
#define ARENA_MIN_BYTES ((size_t)64 << 20)
#define IR_TEXT_BYTES ((size_t)1 << 20)
#define REAP_MS 5

typedef struct tp_proc_rank {
    _Atomic uint32_t finished_gen;
    int32_t pid;
} tp_proc_rank;

/* In the arena: what a worker needs to run a launch. */
typedef struct tp_proc_ctl {
    _Atomic uint32_t launch_gen; /* futex: bumped by the host to start a launch */
    _Atomic uint32_t done_seq;   /* futex: bumped by each worker that finishes */
    _Atomic int32_t quit;
    int32_t host_pid;
    /* written by the host before launch_gen is bumped (release) */
    pld_kernel kernel;
    void *arg;
    int ir_on, nwindows, nteams;
    pld_window_buffer **windows;
    struct pld_team **teams; /* the team table (teams live in the arena) */
    pld_dtensor check_signal;
    tp_proc_rank rank[];
} tp_proc_ctl;

typedef struct tp_proc_state {
    pld__arena arena;
    tp_proc_ctl *ctl;
    int *dead; /* 1 once the rank's worker has died */
    char death[PLD__ERRMSG_MAX];
    int started;
} tp_proc_state;

static tp_proc_state *state(const pld_world *w)
{
    return w->tp_state;
}

static PLD__NORETURN void worker_main(pld_world *w, int rank, uint32_t seen);

/* ---- worker --------------------------------------------------------------- */

static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* `seen` is the launch generation when the host forked us: read before the
 * fork, so a launch that starts before this process runs is not missed. */
static PLD__NORETURN void worker_main(pld_world *w, int rank, uint32_t seen)
{
    tp_proc_ctl *ctl = state(w)->ctl;
    pld__private_mem_worker_begin(); /* kernels' stack arrays are the rank's own */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != ctl->host_pid)
        _exit(1); /* the host died before we could ask to die with it */
    if (w->pin)
        pld__pin_rank(rank);
    for (;;) {
        uint32_t gen;
        while ((gen = atomic_load_explicit(&ctl->launch_gen, memory_order_acquire)) == seen &&
               !atomic_load(&ctl->quit)) {
            pld__futex_wait(&ctl->launch_gen, seen, 200, 1);
            if (getppid() != ctl->host_pid)
                _exit(1);
        }
        if (atomic_load(&ctl->quit))
            _exit(0); /* _exit: never run the host's atexit handlers here */
        seen = gen;
        w->kernel = ctl->kernel;
        w->kernel_arg = ctl->arg;
        w->windows = ctl->windows;
        w->nwindows = ctl->nwindows;
        w->teams = ctl->teams;
        w->nteams = ctl->nteams;
        w->check_signal = ctl->check_signal;
        atomic_store(&w->ir_on, ctl->ir_on);
        pld__rank_main(w, rank);
        if (rank == 0 && ctl->ir_on && w->ir_shared)
            copy_text(w->ir_shared, IR_TEXT_BYTES, pld__ir_render(w->ir));
        atomic_store_explicit(&ctl->rank[rank].finished_gen, gen, memory_order_release);
        atomic_fetch_add(&ctl->done_seq, 1);
        pld__futex_wake(&ctl->done_seq, 1);
    }
}

/* ---- host: deaths ----------------------------------------------------------- */

static void describe_status(int status, char *out, size_t n)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *name = sigabbrev_np(sig);
        snprintf(out, n, "killed by signal %d (SIG%s)", sig, name ? name : "?");
    } else if (WIFEXITED(status)) {
        snprintf(out, n, "exited with status %d", WEXITSTATUS(status));
    } else {
        snprintf(out, n, "stopped (status 0x%x)", status);
    }
}

/* Reaps dead workers; returns how many died now. */
static int reap(pld_world *w)
{
    tp_proc_state *s = state(w);
    int died = 0;
    for (int r = 0; r < w->nranks; r++) {
        if (s->dead[r])
            continue;
        int status = 0;
        pid_t p = waitpid(s->ctl->rank[r].pid, &status, WNOHANG);
        if (p == 0 || (p < 0 && errno == EINTR))
            continue;
        char how[96];
        if (p < 0)
            snprintf(how, sizeof how, "is gone (waitpid: %s)", strerror(errno));
        else
            describe_status(status, how, sizeof how);
        s->dead[r] = 1;
        died++;
        if (!s->death[0])
            snprintf(s->death, sizeof s->death, "rank %d (device %d) died: %s (pid %d)", r,
                     w->device_ids[r], how, (int)s->ctl->rank[r].pid);
    }
    return died;
}

/* ---- host: stuck workers -------------------------------------------------- */

/* Forks a worker for `rank` in place of one that is gone (reaped); it
 * joins at the next launch (it starts from launch generation `gen`, the
 * current one). 0, or -1 with errno. */
static int respawn(pld_world *w, int rank, uint32_t gen)
{
    tp_proc_state *s = state(w);
    atomic_store(&w->sh->rank[rank].sleepers, 0); /* its agents died with it */
    fflush(NULL);                                 /* buffered output must not be written twice */
    pid_t pid = fork();
    if (pid == 0)
        worker_main(w, rank, gen);
    if (pid < 0)
        return -1;
    s->ctl->rank[rank].pid = (int32_t)pid;
    return 0;
}

/* Forks a new worker for every rank whose worker died (reaped); appends
 * "; a new worker replaces it ..." to the death message, or why not.
 * `gen`: the launch generation the new workers start from. */
static void replace_dead(pld_world *w, uint32_t gen)
{
    tp_proc_state *s = state(w);
    int lost = 0, err = 0;
    for (int r = 0; r < w->nranks; r++) {
        if (!s->dead[r])
            continue;
        if (respawn(w, r, gen) == 0)
            s->dead[r] = 0;
        else
            lost++, err = errno;
    }
    size_t k = strlen(s->death);
    if (lost)
        snprintf(s->death + k, sizeof s->death - k,
                 "; no new worker could replace it (fork: %s): finalize this world and create "
                 "a new one",
                 strerror(err));
    else
        snprintf(s->death + k, sizeof s->death - k,
                 "; a new worker replaces it for the next launch");
}

/* The group failed PLD__STUCK_GRACE_MS ago and these workers are still in
 * the kernel of launch `gen`: kill each, reap it, start a new one. Writes
 * "rank 1 (device 1, pid N) did not return ..." into msg; returns how many
 * were killed. */
static int kill_stuck(pld_world *w, uint32_t gen, char *msg, size_t size)
{
    tp_proc_state *s = state(w);
    tp_proc_ctl *ctl = s->ctl;
    char who[512] = "", lost[256] = "";
    size_t n = 0, nl = 0;
    int killed = 0;
    for (int r = 0; r < w->nranks; r++) {
        if (s->dead[r] ||
            atomic_load_explicit(&ctl->rank[r].finished_gen, memory_order_acquire) == gen)
            continue;
        pid_t pid = ctl->rank[r].pid;
        /* SIGKILL ends a stopped process too; waitpid cannot block long */
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        if (n < sizeof who)
            n += (size_t)snprintf(who + n, sizeof who - n, "%srank %d (device %d, pid %d)",
                                  killed ? ", " : "", r, w->device_ids[r], (int)pid);
        killed++;
        if (respawn(w, r, gen) != 0) {
            int err = errno;
            s->dead[r] = 1;
            if (!s->death[0])
                snprintf(s->death, sizeof s->death,
                         "rank %d (device %d) was killed after it did not return from a failed "
                         "launch, and no worker could replace it (fork: %s)",
                         r, w->device_ids[r], strerror(err));
            if (nl < sizeof lost)
                nl += (size_t)snprintf(lost + nl, sizeof lost - nl, " rank %d", r);
        }
    }
    if (killed)
        snprintf(msg, size,
                 "%s did not return from %s kernel within %d ms after the group failed or "
                 "another rank returned (%s in user code, not in a pld call that would have "
                 "left, or stopped); %s killed%s%s. "
                 "The group failed first: ",
                 who, killed > 1 ? "their" : "its", PLD__STUCK_GRACE_MS,
                 killed > 1 ? "they were" : "it was",
                 killed > 1 ? "the workers were" : "the worker was",
                 nl ? " and could not be replaced:" : " and replaced for the next launch", lost);
    return killed;
}

/* ---- ops -------------------------------------------------------------------- */

static pld_status tp_proc_world_init(pld_world *w)
{
    tp_proc_state *s = calloc(1, sizeof *s);
    if (!s)
        return pld__world_fail(w, PLD_ERR_NOMEM, "out of memory");
    s->dead = calloc((size_t)w->nranks, sizeof *s->dead);
    if (!s->dead || pld__arena_open(&s->arena, ARENA_BYTES, ARENA_MIN_BYTES) != 0) {
        pld_status st = s->dead ? PLD_ERR_SYSTEM : PLD_ERR_NOMEM;
        pld__world_fail(w, st, "cannot create the shared arena: %s",
                        s->dead ? s->arena.why : "out of memory");
        free(s->dead);
        free(s);
        return st;
    }
    w->tp_state = s;
    w->sh_bytes = pld__world_shared_bytes(w->nranks, w->profile.aiv_cores);
    w->sh = pld__arena_alloc(&s->arena, w->sh_bytes);
    s->ctl = pld__arena_alloc(&s->arena, sizeof *s->ctl + sizeof(tp_proc_rank) * (size_t)w->nranks);
    w->ir_shared = pld__arena_alloc(&s->arena, IR_TEXT_BYTES);
    if (!w->sh || !s->ctl || !w->ir_shared) {
        pld__arena_close(&s->arena);
        free(s->dead);
        free(s);
        w->tp_state = NULL;
        return pld__world_fail(w, PLD_ERR_NOMEM, "shared arena exhausted");
    }
    pld__world_shared_init(w->sh, w->nranks, w->profile.aiv_cores);
    s->ctl->host_pid = (int32_t)getpid();
    fflush(NULL); /* buffered output must not be written twice */
    uint32_t gen0 = atomic_load(&s->ctl->launch_gen);
    for (int r = 0; r < w->nranks; r++) {
        pid_t pid = fork();
        if (pid == 0)
            worker_main(w, r, gen0);
        if (pid < 0) {
            int err = errno;
            atomic_store(&s->ctl->quit, 1);
            for (int k = 0; k < r; k++) {
                kill(s->ctl->rank[k].pid, SIGKILL);
                waitpid(s->ctl->rank[k].pid, NULL, 0);
            }
            pld__arena_close(&s->arena);
            free(s->dead);
            free(s);
            w->tp_state = NULL;
            return pld__world_fail(w, PLD_ERR_SYSTEM, "fork for rank %d failed: %s", r,
                                   strerror(err));
        }
        s->ctl->rank[r].pid = (int32_t)pid;
        s->started++;
    }
    return PLD_OK;
}

static void tp_proc_world_fini(pld_world *w)
{
    tp_proc_state *s = state(w);
    if (!s)
        return;
    atomic_store(&s->ctl->quit, 1);
    atomic_fetch_add(&s->ctl->launch_gen, 1);
    pld__futex_wake(&s->ctl->launch_gen, 1);
    uint64_t deadline = pld__now_ns() + 2000000000ull;
    for (int r = 0; r < s->started; r++) {
        while (!s->dead[r]) {
            pid_t p = waitpid(s->ctl->rank[r].pid, NULL, WNOHANG);
            if (p != 0 && !(p < 0 && errno == EINTR)) {
                s->dead[r] = 1;
                break;
            }
            if (pld__now_ns() > deadline) { /* a stuck worker: no orphan survives us */
                kill(s->ctl->rank[r].pid, SIGKILL);
                waitpid(s->ctl->rank[r].pid, NULL, 0);
                s->dead[r] = 1;
                break;
            }
            usleep(1000);
        }
    }
    pld__arena_close(&s->arena);
    free(s->dead);
    free(s);
    w->tp_state = NULL;
    w->sh = NULL;
    w->ir_shared = NULL;
}

/* fork_each_launch: every idle worker makes way for a fork of the host as
 * it is now (its kernel may be code that did not exist at the last fork).
 * An idle worker holds nothing shared: it only waits for a launch. */
static void refork_idle(pld_world *w)
{
    tp_proc_state *s = state(w);
    uint32_t gen = atomic_load(&s->ctl->launch_gen);
    for (int r = 0; r < w->nranks; r++) {
        if (s->dead[r])
            continue;
        pid_t pid = s->ctl->rank[r].pid;
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        if (respawn(w, r, gen) != 0) {
            s->dead[r] = 1;
            if (!s->death[0])
                snprintf(s->death, sizeof s->death,
                         "rank %d (device %d): no new worker for this launch (fork: %s)", r,
                         w->device_ids[r], strerror(errno));
        }
    }
}

static pld_status tp_proc_launch(pld_world *w)
{
    tp_proc_state *s = state(w);
    tp_proc_ctl *ctl = s->ctl;
    reap(w);
    if (w->fork_each_launch)
        refork_idle(w);
    for (int r = 0; r < w->nranks; r++)
        if (s->dead[r]) {
            /* a worker died since the last launch (or could not be replaced
             * then): this launch reports it, the next one runs */
            size_t k = strlen(s->death);
            snprintf(s->death + k, sizeof s->death - k, ", after the last launch");
            replace_dead(w, atomic_load(&ctl->launch_gen));
            pld__world_fail(w, PLD_ERR_PEER, "%s", s->death);
            if (!s->dead[r])
                s->death[0] = '\0';
            return PLD_ERR_PEER;
        }
    ctl->kernel = w->kernel;
    ctl->arg = w->kernel_arg;
    ctl->ir_on = atomic_load(&w->ir_on);
    ctl->windows = w->windows;
    ctl->nwindows = w->nwindows;
    ctl->teams = w->teams;
    ctl->nteams = w->nteams;
    ctl->check_signal = w->check_signal;
    if (w->ir_shared)
        w->ir_shared[0] = '\0';
    uint32_t gen = atomic_fetch_add_explicit(&ctl->launch_gen, 1, memory_order_release) + 1;
    pld__futex_wake(&ctl->launch_gen, 1);
    int died = 0, killed = 0;
    uint64_t failed_at = 0;
    int seen = w->nranks + 1;
    char stuck[1024] = "";
    for (;;) {
        uint32_t seq = atomic_load(&ctl->done_seq);
        int left = 0;
        for (int r = 0; r < w->nranks; r++)
            if (!s->dead[r] &&
                atomic_load_explicit(&ctl->rank[r].finished_gen, memory_order_acquire) != gen)
                left++;
        if (left == 0)
            break;
        /* the grace period runs from the first time the host sees the
         * failure (within REAP_MS of it), and again from each rank that
         * returns meanwhile: many ranks on few CPUs unwind one by one */
        if (atomic_load_explicit(&w->sh->abort_status, memory_order_seq_cst) != 0) {
            uint64_t now = pld__now_ns();
            if (!failed_at || left < seen)
                failed_at = now;
            seen = left;
            if (now - failed_at >= (uint64_t)PLD__STUCK_GRACE_MS * 1000000u) {
                killed = kill_stuck(w, gen, stuck, sizeof stuck);
                break;
            }
        }
        pld__futex_wait(&ctl->done_seq, seq, REAP_MS, 1);
        if (reap(w)) {
            died = 1;
            pld__group_fail(w, PLD_ERR_PEER, s->death); /* releases every waiting rank */
        }
    }
    /* the death is the root cause, whatever the survivors reported */
    const char *first = died ? s->death : w->sh->errmsg;
    if (killed) {
        /* the launch outlived its failure: say so first, then the cause */
        char *msg = malloc(sizeof w->sh->errmsg);
        if (msg) {
            snprintf(msg, sizeof w->sh->errmsg, "%s%s", stuck, first);
            snprintf(w->sh->errmsg, sizeof w->sh->errmsg, "%s", msg);
            free(msg);
        } else {
            snprintf(w->sh->errmsg, sizeof w->sh->errmsg, "%s", stuck);
        }
        atomic_store(&w->sh->abort_status, PLD_ERR_TIMEOUT);
    } else if (died) {
        replace_dead(w, gen);
        snprintf(w->sh->errmsg, sizeof w->sh->errmsg, "%s", s->death);
        atomic_store(&w->sh->abort_status, PLD_ERR_PEER);
    }
    int lost = 0;
    for (int r = 0; r < w->nranks; r++)
        lost |= s->dead[r];
    if (!lost)
        s->death[0] = '\0'; /* reported; the next death is a new story */
    return PLD_OK;
}

static void tp_proc_hosted(const pld_world *w, int *first, int *count)
{
    *first = 0;
    *count = w->nranks;
}

static pld_status tp_proc_window_alloc(pld_world *w, pld_window_buffer *buf)
{
    size_t total = buf->stride * (size_t)w->nranks;
    buf->base = pld__arena_alloc(&state(w)->arena, total);
    buf->map_bytes = total;
    return buf->base ? PLD_OK : PLD_ERR_NOMEM;
}

static void tp_proc_window_free(pld_world *w, pld_window_buffer *buf)
{
    pld__arena_free(&state(w)->arena, buf->base);
    buf->base = NULL;
}

static void *tp_proc_host_alloc(pld_world *w, size_t bytes)
{
    return pld__arena_alloc(&state(w)->arena, bytes);
}

static void tp_proc_host_free(pld_world *w, void *p)
{
    if (pld__arena_contains(&state(w)->arena, p, 1))
        pld__arena_free(&state(w)->arena, p);
}

static int tp_proc_host_visible(pld_world *w, const void *p, size_t bytes)
{
    return pld__arena_contains(&state(w)->arena, p, bytes);
}

static int tp_proc_rank_mem_ok(pld_ctx *c, const void *p, size_t bytes)
{
    return pld__arena_contains(&state(c->w)->arena, p, bytes) || pld__private_mem_rank_ok(p, bytes);
}

static pld_status tp_proc_signal_update(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                                        int32_t value, pld_notify_op op, int32_t *old_out)
{
    return pld__shm_signal_update(c, buf, peer, off, value, op, 1, old_out);
}

static int tp_proc_sleep(pld_ctx *c, uint32_t ticket, uint64_t timeout_ns)
{
    return pld__shm_sleep(c, ticket, timeout_ns, 1);
}

static void tp_proc_abort(pld_world *w)
{
    pld__shm_abort(w, 1);
}

static int tp_proc_rank_pid(const pld_world *w, int rank)
{
    return state(w)->ctl->rank[rank].pid;
}

const pld_transport_ops pld__tp_process_ops = {
    .size = sizeof(pld_transport_ops),
    .name = "process",
    .launcher_size = pld__tp_program_sized,
    .world_init = tp_proc_world_init,
    .world_fini = tp_proc_world_fini,
    .launch = tp_proc_launch,
    .hosted_ranks = tp_proc_hosted,
    .rank_pid = tp_proc_rank_pid,
    .threads_ok = pld__tp_threads_always_ok,
    .window_alloc = tp_proc_window_alloc,
    .window_free = tp_proc_window_free,
    .window_peer_ptr = pld__shm_window_peer_ptr,
    .host_alloc = tp_proc_host_alloc,
    .host_free = tp_proc_host_free,
    .host_visible = tp_proc_host_visible,
    .rank_mem_ok = tp_proc_rank_mem_ok,
    .put = pld__shm_put,
    .get = pld__shm_get,
    .accumulate = pld__shm_accumulate,
    .signal_update = tp_proc_signal_update,
    .signal_load = pld__shm_signal_load,
    .sleep_prepare = pld__shm_sleep_prepare,
    .sleep = tp_proc_sleep,
    .sleep_end = pld__shm_sleep_end,
    .fence = pld__shm_fence,
    .abort = tp_proc_abort,
    /* a dead worker reaches abort_status through the host's reaper */
    .peer_failed = pld__tp_no_peer_failure,
    .host_agree = pld__tp_one_host_agrees,
    .host_union = pld__tp_one_host_union,
    .caps = PLD__TP_CAP_WAKE | PLD__TP_CAP_DEADLOCK,
};
