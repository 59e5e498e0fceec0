/* SPDX-License-Identifier: Apache-2.0 */
/* The process transport: same results as threads, rank death turned into
 * PLD_ERR_PEER, no orphan workers and no shared-memory objects left behind,
 * private host memory rejected with a clear message. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <pld/pld.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct args {
    pld_dtensor sig, data, tgt;
    int64_t s;
    int rounds, victim, kill_round, how;
    float *out; /* for the private-memory test */
} args;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static pld_world *make(const char *devices, args **a_out, int64_t s)
{
    pld_world *w;
    pld_config cfg = {.devices = devices, .transport = "process"};
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK, "%s", pld_last_error());
    int p = pld_world_size(w);
    args *a = pld_host_alloc(w, sizeof *a); /* ranks read their arguments here */
    cr_assert_not_null(a);
    pld_window_buffer *sb, *db, *tb;
    cr_assert_eq(pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)p, "sig", &sb), PLD_OK);
    cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(p, 1), &a->sig), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, sizeof(float) * (size_t)(p * s), "data", &db), PLD_OK);
    cr_assert_eq(pld_window(db, PLD_FP32, 2, PLD_IDX(p, s), &a->data), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, sizeof(float) * (size_t)(p * s), "tgt", &tb), PLD_OK);
    cr_assert_eq(pld_window(tb, PLD_FP32, 2, PLD_IDX(p, s), &a->tgt), PLD_OK);
    a->s = s;
    *a_out = a;
    return w;
}

/* ---- same kernel, same results ----------------------------------------------- */

static void allgather_loop(pld_ctx *c, void *p)
{
    args *a = p;
    int me = pld_rank(c), n = pld_nranks(c);
    float in[256];
    const float *t = pld_local(c, a->tgt).data;
    for (int it = 0; it < a->rounds; it++) {
        if (me == a->victim && it == a->kill_round) {
            if (a->how == 0)
                kill(getpid(), SIGKILL);
            else if (a->how == 1)
                raise(SIGSEGV);
            else
                abort();
        }
        for (int64_t j = 0; j < a->s; j++)
            in[j] = (float)(me * 1000 + j + it);
        pld_allgather(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(1, a->s)), a->tgt, a->sig);
        for (int r = 0; r < n; r++)
            for (int64_t j = 0; j < a->s; j++)
                if (t[r * a->s + j] != (float)(r * 1000 + j + it))
                    pld_fail(c, "round %d row %d col %lld: got %g", it, r, (long long)j,
                             t[r * a->s + j]);
        pld_barrier(c, a->sig);
    }
}

Test(process, allgather_matches_across_p, .timeout = 120)
{
    static const char *const devs[] = {"0,1", "0-2", "0-3", "0-7"};
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++) {
        args *a;
        pld_world *w = make(devs[i], &a, 64);
        a->rounds = 50;
        a->victim = -1;
        pld_status st = pld_launch(w, allgather_loop, a);
        cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_world_error(w));
        pld_world_finalize(w);
    }
}

/* ---- rank death ---------------------------------------------------------------- */

static int alive(int pid)
{
    return kill(pid, 0) == 0 || errno != ESRCH;
}

static int zombie(int pid)
{
    char path[64], stat[256] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *close = strrchr(stat, ')'); /* "pid (comm) S ..." */
    return close && close[1] == ' ' && close[2] == 'Z';
}

static void death_case(int how, int kill_round, const char *signame)
{
    args *a;
    pld_world *w = make("0-3", &a, 64);
    a->rounds = 40;
    a->victim = 2;
    a->kill_round = kill_round;
    a->how = how;
    int pids[4];
    for (int r = 0; r < 4; r++)
        pids[r] = pld_rank_pid(w, r);
    double t0 = now_s();
    pld_status st = pld_launch(w, allgather_loop, a);
    double dt = now_s() - t0;
    cr_assert_eq(st, PLD_ERR_PEER, "%s: %s", pld_status_name(st), pld_world_error(w));
    cr_assert_lt(dt, 1.0, "the launch took %.3f s to report the death", dt);
    const char *m = pld_world_error(w);
    cr_assert(strstr(m, "rank 2 (device 2) died") && strstr(m, signame), "%s", m);
    /* a new worker takes the dead one's place: the next launch runs */
    cr_assert(strstr(m, "a new worker replaces it for the next launch"), "%s", m);
    cr_assert_neq(pld_rank_pid(w, 2), pids[2]);
    a->victim = -1;
    st = pld_launch(w, allgather_loop, a);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_world_error(w));
    int now[4];
    for (int r = 0; r < 4; r++)
        now[r] = pld_rank_pid(w, r);
    pld_world_finalize(w);
    for (int r = 0; r < 4; r++)
        cr_assert(!alive(pids[r]) && !alive(now[r]), "worker %d (pid %d/%d) survived finalize", r,
                  pids[r], now[r]);
}

Test(process, sigkill_mid_allgather_is_peer_error, .timeout = 60)
{
    death_case(0, 7, "SIGKILL");
}
Test(process, segfault_is_peer_error, .timeout = 60)
{
    death_case(1, 3, "SIGSEGV");
}
Test(process, abort_is_peer_error, .timeout = 60)
{
    death_case(2, 0, "SIGABRT");
}

Test(process, a_worker_killed_between_launches_is_reported_then_replaced, .timeout = 60)
{
    args *a;
    pld_world *w = make("0-3", &a, 16);
    a->rounds = 5;
    a->victim = -1;
    cr_assert_eq(pld_launch(w, allgather_loop, a), PLD_OK, "%s", pld_world_error(w));
    int pid = pld_rank_pid(w, 1);
    kill(pid, SIGKILL);
    /* dead, and left for the host to reap (a zombie until then) */
    for (int i = 0; i < 2000 && !zombie(pid); i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    cr_assert(zombie(pid), "worker %d did not die", pid);
    pld_status st = pld_launch(w, allgather_loop, a);
    cr_assert_eq(st, PLD_ERR_PEER, "%s: %s", pld_status_name(st), pld_world_error(w));
    const char *m = pld_world_error(w);
    cr_assert(strstr(m, "rank 1 (device 1) died: killed by signal 9 (SIGKILL)") &&
                  strstr(m, "after the last launch; a new worker replaces it"),
              "%s", m);
    st = pld_launch(w, allgather_loop, a);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_world_error(w));
    pld_world_finalize(w);
}

Test(process, two_hundred_random_kills_never_hang, .timeout = 600)
{
    srand(12345);
    for (int i = 0; i < 200; i++) {
        args *a;
        pld_world *w = make("0-3", &a, 16);
        a->rounds = 20;
        a->victim = rand() % 4;
        a->kill_round = rand() % 20;
        a->how = 0;
        double t0 = now_s();
        pld_status st = pld_launch(w, allgather_loop, a);
        cr_assert_eq(st, PLD_ERR_PEER, "kill %d: %s: %s", i, pld_status_name(st),
                     pld_world_error(w));
        cr_assert_lt(now_s() - t0, 1.0, "kill %d: slow report", i);
        char want[64];
        snprintf(want, sizeof want, "rank %d (device %d) died", a->victim, a->victim);
        cr_assert(strstr(pld_world_error(w), want), "kill %d: %s", i, pld_world_error(w));
        pld_world_finalize(w);
    }
}

/* ---- the host dies: workers follow, nothing is left in /dev/shm ---------------- */

/* pld objects in /dev/shm (other programs' entries may come and go). */
static int count_dev_shm(void)
{
    DIR *d = opendir("/dev/shm");
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strstr(e->d_name, "pld") != NULL;
    closedir(d);
    return n;
}

/* Shared-memory file descriptors of pld held by this process. */
static int count_arena_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    char path[300], target[256];
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len > 0) {
            target[len] = '\0';
            n += strstr(target, "pld") != NULL;
        }
    }
    closedir(d);
    return n;
}

Test(process, sigkill_host_leaves_no_orphans, .timeout = 60)
{
    int before = count_dev_shm();
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t host = fork();
    if (host == 0) {
        close(fds[0]);
        pld_world *w;
        pld_config cfg = {.devices = "0-3", .transport = "process"};
        if (pld_world_init(&w, &cfg) != PLD_OK)
            _exit(2);
        int pids[4];
        for (int r = 0; r < 4; r++)
            pids[r] = pld_rank_pid(w, r);
        if (write(fds[1], pids, sizeof pids) != (ssize_t)sizeof pids)
            _exit(3);
        pause(); /* until SIGKILL */
        _exit(0);
    }
    close(fds[1]);
    int pids[4];
    cr_assert_eq(read(fds[0], pids, sizeof pids), (ssize_t)sizeof pids);
    for (int r = 0; r < 4; r++)
        cr_assert(alive(pids[r]));
    kill(host, SIGKILL);
    waitpid(host, NULL, 0);
    double t0 = now_s();
    int left = 4;
    /* a killed worker is a zombie until whoever adopted it (init, or a
     * subreaper) reaps it, which a busy machine may put off for seconds:
     * a zombie runs nothing and holds no memory, so it counts as gone */
    while (left > 0 && now_s() - t0 < 2.0) {
        left = 0;
        for (int r = 0; r < 4; r++)
            left += alive(pids[r]) && !zombie(pids[r]);
        usleep(10000);
    }
    cr_assert_eq(left, 0, "%d workers outlived their host", left);
    cr_assert_eq(count_dev_shm(), before, "/dev/shm gained objects");
}

Test(process, finalize_leaves_no_workers_or_shm, .timeout = 60)
{
    int before = count_dev_shm();
    cr_assert_eq(count_arena_fds(), 0);
    args *a;
    pld_world *w = make("0-7", &a, 8);
    cr_assert_eq(count_arena_fds(), 1, "the world holds its arena");
    int pids[8];
    for (int r = 0; r < 8; r++)
        pids[r] = pld_rank_pid(w, r);
    pld_world_finalize(w);
    for (int r = 0; r < 8; r++)
        cr_assert(!alive(pids[r]), "worker %d survived", r);
    cr_assert_eq(count_dev_shm(), before);
    cr_assert_eq(count_arena_fds(), 0, "finalize must close the arena");
}

/* ---- private host memory --------------------------------------------------------- */

static void store_to_out(pld_ctx *c, void *p)
{
    args *a = p;
    pld_tile *t = pld_tile_create(c, PLD_FP32, 1, 64);
    pld_store(c, t, pld_tensor_make(a->out + (size_t)pld_rank(c) * 64, PLD_FP32, 2, PLD_IDX(1, 64)),
              PLD_IDX(0, 0));
}

Test(process, malloced_output_buffer_is_a_clear_error, .timeout = 60)
{
    args *a;
    pld_world *w = make("0-3", &a, 8);
    a->out = malloc(1 << 20); /* private host memory: the ranks never see it */
    cr_assert_not_null(a->out);
    pld_status st = pld_launch(w, store_to_out, a);
    cr_assert_eq(st, PLD_ERR_ARG, "%s: %s", pld_status_name(st), pld_world_error(w));
    cr_assert(strstr(pld_world_error(w), "pld_store") &&
                  strstr(pld_world_error(w), "pld_host_alloc"),
              "%s", pld_world_error(w));
    free(a->out);
    /* the same with shared memory works, and the host sees the result */
    a->out = pld_host_alloc(w, sizeof(float) * 4 * 64);
    cr_assert_eq(pld_launch(w, store_to_out, a), PLD_OK, "%s", pld_world_error(w));
    pld_world_finalize(w);
}

static void noop(pld_ctx *c, void *p)
{
    (void)c, (void)p;
}

Test(process, stack_argument_is_a_clear_error, .timeout = 60)
{
    args *a;
    pld_world *w = make("0,1", &a, 8);
    int local = 0;
    cr_assert_eq(pld_launch(w, noop, &local), PLD_ERR_ARG);
    cr_assert(strstr(pld_world_error(w), "pld_host_alloc"), "%s", pld_world_error(w));
    cr_assert_eq(pld_launch(w, noop, a), PLD_OK);
    pld_world_finalize(w);
}

/* ---- deadlock and timeout across processes ---------------------------------------- */

static void set_ge_mismatch(pld_ctx *c, void *p)
{
    args *a = p;
    int me = pld_rank(c), n = pld_nranks(c);
    /* Set on the peer's own row instead of ours: nobody's wait is satisfied */
    pld_notify(c, a->sig, (me + 1) % n, PLD_IDX((me + 1) % n, 0), 1, PLD_NOTIFY_SET);
    pld_wait(c, a->sig, PLD_IDX((me + n - 1) % n, 0), 1, PLD_WAIT_GE);
}

Test(process, deadlock_report_lists_every_rank, .timeout = 60)
{
    args *a;
    pld_world *w = make("0-3", &a, 8);
    double t0 = now_s();
    pld_status st = pld_launch(w, set_ge_mismatch, a);
    cr_assert_eq(st, PLD_ERR_DEADLOCK, "%s: %s", pld_status_name(st), pld_world_error(w));
    cr_assert_lt(now_s() - t0, 1.0);
    for (int r = 0; r < 4; r++) {
        char want[64];
        snprintf(want, sizeof want, "rank %d (device %d): pld_wait 'sig'", r, r);
        cr_assert(strstr(pld_world_error(w), want), "%s", pld_world_error(w));
    }
    pld_world_finalize(w);
}

static void lonely_wait(pld_ctx *c, void *p)
{
    args *a = p;
    if (pld_rank(c) == 0)
        pld_wait(c, a->sig, PLD_IDX(1, 0), 1, PLD_WAIT_GE);
    else
        usleep(600 * 1000); /* busy elsewhere: not a deadlock, just slow */
}

Test(process, wait_timeout, .timeout = 60)
{
    pld_world *w;
    pld_config cfg = {.devices = "0,1", .transport = "process", .wait_timeout_ms = 200};
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK);
    args *a = pld_host_alloc(w, sizeof *a);
    pld_window_buffer *sb;
    cr_assert_eq(pld_alloc_window_buffer(w, 8, "sig", &sb), PLD_OK);
    cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(2, 1), &a->sig), PLD_OK);
    pld_status st = pld_launch(w, lonely_wait, a);
    cr_assert_eq(st, PLD_ERR_TIMEOUT, "%s: %s", pld_status_name(st), pld_world_error(w));
    cr_assert(strstr(pld_world_error(w), "rank 0 (device 0): pld_wait: 'sig'[1,0] Ge 1 timed out"),
              "%s", pld_world_error(w));
    pld_world_finalize(w);
}
