/* SPDX-License-Identifier: Apache-2.0 */
/* Misuse and faults that used to pass silently or give a wrong answer:
 * each is now a clear status with a message naming the rank, the call and
 * the values. */
#define _GNU_SOURCE
#include "test_util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- process transport: host memory the ranks cannot share ------------------- */

typedef struct priv_args {
    pld_dtensor data, sig;
    float *out; /* where the kernel writes for the host */
    int how;    /* 0: pld_get into out, 1: pld_store into out */
} priv_args;

static pld_world *process_world(const char *devices)
{
    pld_config cfg = {.devices = devices, .transport = "process"};
    return tu_world_cfg(&cfg);
}

static void write_out(pld_ctx *c, void *p)
{
    priv_args *a = p;
    int me = pld_rank(c);
    pld_tensor out = pld_tensor_make(a->out + me * 16, PLD_FP32, 1, PLD_IDX(16));
    if (a->how == 0) {
        pld_get(c, out, (me + 1) % pld_nranks(c), a->data, NULL);
    } else {
        pld_tile *t = pld_tile_create(c, PLD_FP32, 1, 16);
        pld_store(c, t, out, PLD_IDX(0));
    }
}

static void expect_private(pld_world *w, priv_args *a, const char *api)
{
    TU_LAUNCH_FAILS(w, write_out, a, PLD_ERR_ARG);
    const char *e = pld_world_error(w);
    TU_EXPECT_STARTS(e, "rank ");
    TU_EXPECT_CONTAINS(e, api);
    TU_EXPECT_CONTAINS(e, "(64 bytes) is private memory");
    TU_EXPECT_CONTAINS(e, "'process' transport; allocate it with pld_host_alloc");
}

/* A heap chunk that existed at fork time and is malloc'ed again afterwards
 * is mapped in the workers (a stale copy-on-write snapshot): it used to pass
 * the check, and what the kernel wrote never reached the host. */
Test(silent, process_reused_heap_chunk_is_refused, .timeout = 60)
{
    void *before = malloc(4 * 16 * sizeof(float));
    cr_assert_not_null(before);
    free(before);
    pld_world *w = process_world("0-3");
    priv_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 1, PLD_IDX(16));
    a->out = malloc(4 * 16 * sizeof(float)); /* typically the chunk freed above */
    cr_assert_not_null(a->out);
    for (a->how = 0; a->how < 2; a->how++)
        expect_private(w, a,
                       a->how == 0 ? "pld_get: dst tensor data" : "pld_store: dst tensor data");
    free(a->out);
    /* the same kernel into pld_host_alloc memory works */
    a->out = tu_host_alloc(w, 4 * 16 * sizeof(float));
    a->how = 0;
    TU_LAUNCH_OK(w, write_out, a);
    pld_world_finalize(w);
}

static float host_global[4 * 16]; /* mapped in every worker, never shared */

Test(silent, process_global_array_is_refused, .timeout = 60)
{
    pld_world *w = process_world("0,1");
    priv_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 1, PLD_IDX(16));
    a->out = host_global;
    a->how = 1;
    expect_private(w, a, "pld_store: dst tensor data");
    pld_world_finalize(w);
}

Test(silent, process_host_stack_array_is_refused, .timeout = 60)
{
    float on_main_stack[4 * 16]; /* the host's frame: a stale copy in the workers */
    pld_world *w = process_world("0,1");
    priv_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 1, PLD_IDX(16));
    a->out = on_main_stack;
    a->how = 0;
    expect_private(w, a, "pld_get: dst tensor data");
    pld_world_finalize(w);
}

/* The rank's own memory: a kernel's stack array works; its malloc does not
 * (it cannot be told from a stale host chunk). */
static void own_memory(pld_ctx *c, void *p)
{
    priv_args *a = p;
    int me = pld_rank(c), peer = (me + 1) % pld_nranks(c);
    float *mine = pld_local(c, a->data).data;
    for (int i = 0; i < 16; i++)
        mine[i] = (float)(me * 100 + i);
    pld_barrier(c, a->sig);
    float local[16] = {0};
    pld_get(c, pld_tensor_make(local, PLD_FP32, 1, PLD_IDX(16)), peer, a->data, NULL);
    for (int i = 0; i < 16; i++)
        KCHECK_EQ_I(c, local[i], peer * 100 + i);
    if (a->how) {
        float *heap = malloc(16 * sizeof *heap);
        KCHECK(c, heap != NULL, "malloc");
        pld_get(c, pld_tensor_make(heap, PLD_FP32, 1, PLD_IDX(16)), peer, a->data, NULL);
        free(heap); /* not reached: the get fails */
    }
}

Test(silent, process_kernel_stack_ok_kernel_heap_refused, .timeout = 60)
{
    pld_world *w = process_world("0-2");
    priv_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 1, PLD_IDX(16));
    a->sig = tu_signal(w, "sig", 1);
    a->how = 0;
    TU_LAUNCH_OK(w, own_memory, a);
    a->how = 1;
    TU_LAUNCH_FAILS(w, own_memory, a, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_get: dst tensor data");
    TU_EXPECT_CONTAINS(pld_world_error(w), "allocate it with pld_host_alloc");
    pld_world_finalize(w);
}

/* ---- pld_notify: an AtomicAdd that overflows int32 ------------------------- */

typedef struct ovf_args {
    pld_dtensor sig;
    int32_t add; /* rank 0 adds it twice to peer 1's cell [1,0] */
} ovf_args;

static void add_twice(pld_ctx *c, void *p)
{
    ovf_args *a = p;
    if (pld_rank(c) != 0)
        return;
    pld_notify(c, a->sig, 1, PLD_IDX(1, 0), a->add, PLD_NOTIFY_ATOMIC_ADD);
    pld_notify(c, a->sig, 1, PLD_IDX(1, 0), a->add, PLD_NOTIFY_ATOMIC_ADD);
}

static void expect_overflow(const char *transport)
{
    pld_config cfg = {.devices = "0,1", .transport = transport};
    pld_world *w = tu_world_cfg(&cfg);
    ovf_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    int32_t *cell1 = (int32_t *)tu_view(w, a->sig, 1).data + 1; /* peer 1's cell [1,0] */

    /* +INT32_MAX twice used to wrap the cell to -2 */
    a->add = INT32_MAX;
    TU_LAUNCH_FAILS(w, add_twice, a, PLD_ERR_DATA);
    TU_EXPECT_STARTS(pld_world_error(w),
                     "rank 0 (device 0): pld_notify: AtomicAdd of 2147483647 to 'sig'[1,0] at "
                     "peer 1 overflows int32: the cell holds 2147483647 and 2147483647 + "
                     "2147483647 = 4294967294 is outside [-2147483648, 2147483647]; the add is "
                     "not applied");
    cr_expect_eq(*cell1, INT32_MAX, "the failed add was taken back: cell holds %d", *cell1);

    /* below INT32_MIN, from a cell at zero */
    *cell1 = 0;
    a->add = -INT32_MAX;
    TU_LAUNCH_FAILS(w, add_twice, a, PLD_ERR_DATA);
    TU_EXPECT_CONTAINS(pld_world_error(w),
                       "AtomicAdd of -2147483647 to 'sig'[1,0] at peer 1 overflows int32: the "
                       "cell holds -2147483647 and -2147483647 - 2147483647 = -4294967294 is "
                       "outside [-2147483648, 2147483647]");
    cr_expect_eq(*cell1, -INT32_MAX, "cell holds %d", *cell1);

    /* the edges themselves are fine: 0 + INT32_MAX, then -1 twice, ... */
    *cell1 = INT32_MIN + 1;
    a->add = -1;
    TU_LAUNCH_FAILS(w, add_twice, a, PLD_ERR_DATA); /* MIN+1 -1 = MIN, then MIN-1 */
    TU_EXPECT_CONTAINS(pld_world_error(w), "the cell holds -2147483648 and -2147483648 - 1");
    *cell1 = INT32_MAX - 2;
    a->add = 1;
    TU_LAUNCH_OK(w, add_twice, a);
    cr_expect_eq(*cell1, INT32_MAX, "cell holds %d", *cell1);
    pld_world_finalize(w);
}

Test(silent, notify_add_overflow_thread, .timeout = 60)
{
    expect_overflow("thread");
}
Test(silent, notify_add_overflow_process, .timeout = 60)
{
    expect_overflow("process");
}

/* ---- trace: every call's events of a multi-core builtin ------------------- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no trace at %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

typedef struct mc_args {
    pld_dtensor sig, data;
    int calls;
} mc_args;

static void multicore_calls(pld_ctx *c, void *p)
{
    mc_args *a = p;
    for (int i = 0; i < a->calls; i++)
        pld_allreduce_cores(c, a->data, a->sig, PLD_SUM, PLD_MESH, 2);
}

/* pld_remote_reduce slices of core 1 of rank 0 in a trace of `calls` calls
 * per launch. */
static int core1_slices(const char *transport, int calls)
{
    char path[] = "/tmp/pld-silent-trace-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    pld_config cfg = {.devices = "0-2", .transport = transport, .trace_path = path};
    pld_world *w = tu_world_cfg(&cfg);
    mc_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 2);
    a->data = tu_window(w, "data", PLD_FP32, 1, PLD_IDX(4096));
    a->calls = calls;
    TU_LAUNCH_OK(w, multicore_calls, a);
    TU_LAUNCH_OK(w, multicore_calls, a); /* and a second launch starts its parts afresh */
    pld_world_finalize(w);
    char *s = slurp(path);
    /* a wait is traced only when it blocked: count what every call does */
    int n = count(s, "\"name\":\"pld_remote_reduce\",\"ph\":\"X\",\"pid\":0,\"tid\":1,");
    cr_expect_eq(count(s, "\"name\":\"pld_allreduce\""), 2 * calls * 3,
                 "%s: one pld_allreduce slice per call per rank per launch", transport);
    free(s);
    unlink(path);
    return n;
}

static void expect_every_call_traced(const char *transport)
{
    int one = core1_slices(transport, 1);
    cr_assert_gt(one, 0, "%s: core 1 has slices", transport);
    int three = core1_slices(transport, 3);
    cr_expect_eq(three, 3 * one,
                 "%s: three multi-core calls per launch give %d core-1 slices, one call %d: "
                 "a later call's part file replaced the earlier ones",
                 transport, three, one);
}

Test(silent, trace_keeps_every_multicore_call_thread, .timeout = 60)
{
    expect_every_call_traced("thread");
}

Test(silent, trace_keeps_every_multicore_call_process, .timeout = 60)
{
    expect_every_call_traced("process");
}

/* ---- trace: a path that cannot be written ---------------------------------- */

static void expect_init_refuses_trace(const char *transport, const char *path, const char *words)
{
    pld_config cfg = {.devices = "0,1", .transport = transport, .trace_path = path};
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    cr_expect_eq(st, PLD_ERR_ARG, "%s, trace '%s': %s, expected PLD_ERR_ARG", transport, path,
                 pld_status_name(st));
    if (st == PLD_OK) {
        pld_world_finalize(w);
        return;
    }
    TU_EXPECT_STARTS(pld_last_error(), words);
}

Test(silent, trace_path_in_missing_directory_fails_init, .timeout = 60)
{
    expect_init_refuses_trace("thread", "/nonexistent/x.json",
                              "pld_world_init: trace file '/nonexistent/x.json' cannot be "
                              "written: No such file or directory");
    expect_init_refuses_trace("process", "/nonexistent/x.json",
                              "pld_world_init: trace file '/nonexistent/x.json' cannot be "
                              "written: No such file or directory");
}

Test(silent, trace_env_in_missing_directory_fails_init, .timeout = 60)
{
    setenv("PLD_TRACE", "/nonexistent/y.json", 1);
    pld_config cfg = {.devices = "0,1", .transport = "thread"};
    pld_world *w = NULL;
    TU_ASSERT_STATUS(pld_world_init(&w, &cfg), PLD_ERR_ARG);
    TU_EXPECT_STARTS(pld_last_error(), "pld_world_init: trace file '/nonexistent/y.json' cannot "
                                       "be written: No such file or directory");
}

Test(silent, trace_path_that_is_a_directory_fails_init, .timeout = 60)
{
    char dir[] = "/tmp/pld-silent-dir-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char want[512];
    snprintf(want, sizeof want, "pld_world_init: trace file '%s' cannot be written: Is a directory",
             dir);
    expect_init_refuses_trace("thread", dir, want);
    /* a trace whose parts cannot be written beside it */
    char path[300], part[320];
    snprintf(path, sizeof path, "%s/t.json", dir);
    snprintf(part, sizeof part, "%s.part.0.0", path);
    cr_assert_eq(mkdir(part, 0700), 0);
    snprintf(want, sizeof want, "pld_world_init: trace part file '%s'", part);
    expect_init_refuses_trace("thread", path, want);
    TU_EXPECT_CONTAINS(pld_last_error(), "cannot be written: Is a directory");
    rmdir(part);
    unlink(path);
    rmdir(dir);
}

typedef struct tr_args {
    pld_dtensor sig;
} tr_args;

static void barrier_kernel(pld_ctx *c, void *p)
{
    pld_barrier(c, ((tr_args *)p)->sig);
}

static void expect_failed_write_fails_launch(const char *transport)
{
    char dir[] = "/tmp/pld-silent-dir-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[300], part[320], want[512];
    snprintf(path, sizeof path, "%s/t.json", dir);
    pld_config cfg = {.devices = "0,1", .transport = transport, .trace_path = path};
    pld_world *w = tu_world_cfg(&cfg);
    tr_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, barrier_kernel, a);

    /* the trace file itself: the host's rewrite after the launch fails */
    cr_assert_eq(unlink(path), 0, "init wrote the (empty) trace: %s", strerror(errno));
    cr_assert_eq(mkdir(path, 0700), 0);
    TU_LAUNCH_FAILS(w, barrier_kernel, a, PLD_ERR_SYSTEM);
    snprintf(want, sizeof want, "pld_launch: trace file '%s' cannot be written: Is a directory",
             path);
    TU_EXPECT_STARTS(pld_world_error(w), want);
    rmdir(path);
    TU_LAUNCH_OK(w, barrier_kernel, a);

    /* a rank's part file: the rank fails the launch */
    snprintf(part, sizeof part, "%s.part.1.0", path);
    cr_assert_eq(mkdir(part, 0700), 0);
    TU_LAUNCH_FAILS(w, barrier_kernel, a, PLD_ERR_SYSTEM);
    snprintf(want, sizeof want,
             "rank 1 (device 1): pld_launch: trace part file '%s' cannot be written: Is a "
             "directory",
             part);
    TU_EXPECT_STARTS(pld_world_error(w), want);
    rmdir(part);
    TU_LAUNCH_OK(w, barrier_kernel, a);
    pld_world_finalize(w);
    char *s = slurp(path);
    /* launches 1, 2 (folded, then written by the next), 3 and 5 on both
     * ranks; launch 4 on rank 0 only, if its barrier ended before rank 1's
     * failed write aborted the group */
    int n = count(s, "\"name\":\"pld_barrier\"");
    cr_expect(n == 4 * 2 || n == 4 * 2 + 1,
              "every part that was written is in the trace: %d barriers, expected 8 or 9", n);
    free(s);
    unlink(path);
    rmdir(dir);
}

Test(silent, trace_write_failure_fails_launch_thread, .timeout = 60)
{
    expect_failed_write_fails_launch("thread");
}

Test(silent, trace_write_failure_fails_launch_process, .timeout = 60)
{
    expect_failed_write_fails_launch("process");
}

/* ---- process transport under a file size limit ----------------------------- */

/* World init on the process transport in a child under RLIMIT_FSIZE =
 * limit: the child reports the status and message through a pipe (a
 * SIGXFSZ would kill it instead). */
static int init_under_file_limit(rlim_t limit, char *msg, size_t n)
{
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fd[0]);
        struct rlimit rl = {limit, limit};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(90);
        pld_config cfg = {.devices = "0-3", .transport = "process"};
        pld_world *w = NULL;
        int st = pld_world_init(&w, &cfg);
        char out[1100];
        if (st == PLD_OK) {
            /* the world works, and a window past the limit is NOMEM, not a signal */
            pld_window_buffer *b = NULL;
            st = pld_alloc_window_buffer(w, limit, "big", &b) == PLD_ERR_NOMEM ? 0 : 91;
            snprintf(out, sizeof out, "%s", pld_world_error(w));
            pld_world_finalize(w);
        } else {
            snprintf(out, sizeof out, "%s", pld_last_error());
        }
        if (write(fd[1], out, strlen(out) + 1) < 0)
            _exit(92);
        _exit(st);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], msg, n - 1);
    msg[got > 0 ? got : 0] = '\0';
    close(fd[0]);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(!WIFSIGNALED(status), "world init under RLIMIT_FSIZE=%llu killed by signal %d (%s)",
              (unsigned long long)limit, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
              WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "");
    cr_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

Test(silent, process_world_under_small_file_limit_is_an_error, .timeout = 60)
{
    char msg[1100];
    int st = init_under_file_limit((rlim_t)1 << 20, msg, sizeof msg);
    cr_expect_eq(st, PLD_ERR_SYSTEM, "status %d (%s), expected PLD_ERR_SYSTEM: %s", st,
                 pld_status_name((pld_status)st), msg);
    TU_EXPECT_STARTS(msg, "pld_world_init: transport 'process': cannot create the shared arena: "
                          "the file size limit (RLIMIT_FSIZE, ulimit -f) is 1048576 bytes; the "
                          "shared arena (a memfd) needs at least 67108864 bytes");
    TU_EXPECT_CONTAINS(msg, "raise the limit (ulimit -f unlimited)");
}

Test(silent, process_world_fits_a_larger_file_limit, .timeout = 60)
{
    char msg[1100];
    int st = init_under_file_limit((rlim_t)256 << 20, msg, sizeof msg);
    cr_expect_eq(st, 0, "exit %d: %s", st, msg);
    TU_EXPECT_CONTAINS(msg, "pld_alloc_window_buffer: 'big'");
}

/* ---- rows fixed earlier: the messages they end with ----------------------- */

typedef struct tile_args {
    int64_t rows, cols;
} tile_args;

static void huge_tile(pld_ctx *c, void *p)
{
    tile_args *a = p;
    pld_tile_create(c, PLD_FP64, a->rows, a->cols);
}

/* [INT64_MAX, INT64_MAX] fp64 used to say "needs 8 bytes" (the product
 * wrapped): the size is named as what it is. */
Test(silent, tile_whose_size_overflows_names_it, .timeout = 60)
{
    pld_world *w = tu_world("0");
    tile_args *a = tu_host_alloc(w, sizeof *a);
    a->rows = a->cols = INT64_MAX;
    TU_LAUNCH_FAILS(w, huge_tile, a, PLD_ERR_NOMEM);
    TU_EXPECT_STARTS(pld_world_error(w),
                     "rank 0 (device 0): pld_tile_create: tile fp64 "
                     "[9223372036854775807,9223372036854775807] needs 2^64 bytes or more");
    cr_expect(!tu_contains(pld_world_error(w), "needs 8 bytes"), "%s", pld_world_error(w));
    /* 2^32 x 2^32 fp64: the element count alone wraps 64 bits to 0 */
    a->rows = a->cols = (int64_t)1 << 32;
    TU_LAUNCH_FAILS(w, huge_tile, a, PLD_ERR_NOMEM);
    TU_EXPECT_CONTAINS(pld_world_error(w), "[4294967296,4294967296] needs 2^64 bytes or more");
    pld_world_finalize(w);
}
