/* SPDX-License-Identifier: Apache-2.0 */
/* Handle lifetime: double frees, uses after free, calls after finalize,
 * host calls from kernels and launches from two threads are each a clear
 * PLD_ERR_ARG naming the call and the handle -- never a crash, a hang, or a
 * write into a newer object that reused the memory. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

static pld_world *world_on(const char *transport)
{
    pld_config cfg = {.transport = transport, .devices = "0,1"};
    return tu_world_cfg(&cfg);
}

/* ---- tiles ------------------------------------------------------------ */

static void tile_free_twice(pld_ctx *c, void *arg)
{
    (void)arg;
    pld_tile *t = pld_tile_create(c, PLD_FP32, 1, 4);
    pld_tile_free(c, t);
    pld_tile_free(c, t);
}

Test(lifetime, tile_freed_twice, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    TU_LAUNCH_FAILS(w, tile_free_twice, NULL, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_tile_free: the tile t0 (fp32 [1,4]");
    TU_EXPECT_CONTAINS(pld_world_error(w), "was freed by pld_tile_free");
    pld_world_finalize(w);
}

static void tile_used_after_free(pld_ctx *c, void *arg)
{
    pld_dtensor *data = arg;
    pld_tile *t = pld_tile_create(c, PLD_FP32, 1, 4);
    pld_tile_free(c, t);
    pld_remote_store(c, t, *data, 0, PLD_IDX(0, 0), PLD_ATOMIC_NONE);
}

static pld_tile *stale_tile; /* a tile kept past its launch (thread transport) */

static void tile_kept(pld_ctx *c, void *arg)
{
    (void)arg;
    if (pld_rank(c) == 0)
        stale_tile = pld_tile_create(c, PLD_FP32, 1, 4);
}

static void tile_of_last_launch(pld_ctx *c, void *arg)
{
    (void)arg;
    if (pld_rank(c) == 0)
        pld_tile_data(stale_tile);
}

static void tile_of_another_rank(pld_ctx *c, void *arg)
{
    (void)arg;
    if (pld_rank(c) == 1)
        pld_tile_free(c, stale_tile);
}

Test(lifetime, tile_used_after_free_after_its_launch_or_on_another_rank, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    pld_dtensor data = tu_window(w, "data", PLD_FP32, 2, PLD_IDX(2, 4));
    TU_LAUNCH_FAILS(w, tile_used_after_free, &data, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_remote_store: src tile t0");
    TU_EXPECT_CONTAINS(pld_world_error(w), "was freed by pld_tile_free");
    TU_LAUNCH_OK(w, tile_kept, NULL); /* freed when the kernel returned */
    TU_LAUNCH_FAILS(w, tile_of_last_launch, NULL, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank 0 (device 0): pld_tile_data: the tile t0");
    TU_EXPECT_CONTAINS(pld_world_error(w), "was freed");
    TU_LAUNCH_OK(w, tile_kept, NULL);
    TU_LAUNCH_FAILS(w, tile_of_another_rank, NULL, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank 1 (device 1): pld_tile_free: the tile");
    TU_EXPECT_CONTAINS(pld_world_error(w), "is not a tile of rank 1");
    pld_world_finalize(w);
}

/* A freed tile handle is reused only after many others were freed: a
 * kernel that churns tiles keeps working, and the old handle of the first
 * round still reads as freed while it waits. */
static void tile_churn(pld_ctx *c, void *arg)
{
    (void)arg;
    pld_tile *first = pld_tile_create(c, PLD_FP32, 1, 4);
    pld_tile_free(c, first);
    for (int i = 0; i < 1000; i++)
        pld_tile_free(c, pld_tile_create(c, PLD_FP32, 1, 4));
    pld_tile_free(c, first);
}

Test(lifetime, tile_handles_wait_before_reuse, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    TU_LAUNCH_FAILS(w, tile_churn, NULL, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_tile_free: the tile t0");
    pld_world_finalize(w);
}

/* ---- windows ---------------------------------------------------------- */

static void put_one(pld_ctx *c, void *arg)
{
    pld_dtensor *data = arg;
    pld_tile *t = pld_tile_create(c, PLD_FP32, 1, 4);
    pld_remote_store(c, t, *data, 1 - pld_rank(c), PLD_IDX(pld_rank(c), 0), PLD_ATOMIC_NONE);
}

static void window_freed_twice_and_used(const char *transport)
{
    pld_world *w = world_on(transport);
    pld_window_buffer *buf = NULL;
    TU_ASSERT_STATUS(pld_alloc_window_buffer(w, 64, "data", &buf), PLD_OK);
    pld_dtensor *view = tu_host_alloc(w, sizeof *view);
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, 2, PLD_IDX(2, 4), view), PLD_OK);
    pld_free_window_buffer(w, buf);
    pld_free_window_buffer(w, buf);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_free_window_buffer: window 'data'");
    TU_EXPECT_CONTAINS(pld_world_error(w), "was freed");
    pld_dtensor again;
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, 1, PLD_IDX(4), &again), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_window: window 'data'");
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, buf), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_window_buffer_reset: window 'data'");
    pld_tensor host;
    TU_ASSERT_STATUS(pld_window_host_view(w, *view, 0, &host), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_window_host_view: window 'data'");
    /* a new window of the same size: the stale view must not reach it */
    pld_window_buffer *fresh = NULL;
    TU_ASSERT_STATUS(pld_alloc_window_buffer(w, 64, "fresh", &fresh), PLD_OK);
    TU_LAUNCH_FAILS(w, put_one, view, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_remote_store: dst window 'data'");
    TU_EXPECT_CONTAINS(pld_world_error(w), "was freed by pld_free_window_buffer");
    pld_tensor fv;
    TU_ASSERT_STATUS(
        pld_window_host_view(
            w, (pld_dtensor){.buf = fresh, .dtype = PLD_FP32, .ndim = 1, .shape = {16}}, 1, &fv),
        PLD_OK);
    for (int i = 0; i < 16; i++)
        cr_expect_eq(((float *)fv.data)[i], 0.0f, "the new window was written at %d", i);
    pld_world_finalize(w);
}

Test(lifetime, window_freed_twice_and_used_after_free_thread, .timeout = 30)
{
    window_freed_twice_and_used("thread");
}

Test(lifetime, window_freed_twice_and_used_after_free_process, .timeout = 30)
{
    window_freed_twice_and_used("process");
}

/* What a kernel needs to call host functions (it must not). */
typedef struct host_args {
    pld_world *w;
    pld_window_buffer *buf;
    void *block;
    pld_dtensor data;
    _Atomic int go, started;
} host_args;

static host_args *host_args_on(pld_world *w)
{
    host_args *a = tu_host_alloc(w, sizeof *a);
    a->w = w;
    cr_assert_eq(pld_alloc_window_buffer(w, 64, "data", &a->buf), PLD_OK);
    cr_assert_eq(pld_window(a->buf, PLD_FP32, 2, PLD_IDX(2, 4), &a->data), PLD_OK);
    return a;
}

static void free_window_inside(pld_ctx *c, void *arg)
{
    host_args *a = arg;
    if (pld_rank(c) == 1)
        pld_free_window_buffer(a->w, a->buf);
    else
        for (int i = 0; i < 100; i++)
            put_one(c, &a->data);
}

static void finalize_inside(pld_ctx *c, void *arg)
{
    host_args *a = arg;
    if (pld_rank(c) == 0)
        pld_world_finalize(a->w);
}

static void launch_inside(pld_ctx *c, void *arg)
{
    host_args *a = arg;
    if (pld_rank(c) == 1)
        pld_launch(a->w, launch_inside, arg);
}

static void host_alloc_inside(pld_ctx *c, void *arg)
{
    host_args *a = arg;
    if (pld_rank(c) == 0)
        pld_host_free(a->w, a->block);
}

static void host_calls_inside_a_kernel(const char *transport)
{
    pld_world *w = world_on(transport);
    host_args *a = host_args_on(w);
    a->block = tu_host_alloc(w, 64);
    TU_LAUNCH_FAILS(w, free_window_inside, a, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank 1 (device 1): pld_free_window_buffer: called "
                                           "inside a kernel");
    TU_LAUNCH_FAILS(w, finalize_inside, a, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank 0 (device 0): pld_world_finalize: called inside "
                                           "a kernel");
    TU_LAUNCH_FAILS(w, launch_inside, a, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank 1 (device 1): pld_launch: called inside a "
                                           "kernel: launches do not nest");
    TU_LAUNCH_FAILS(w, host_alloc_inside, a, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank 0 (device 0): pld_host_free: called inside a "
                                           "kernel");
    /* the world, its window and the block survived all of it */
    TU_LAUNCH_OK(w, tile_kept, NULL);
    pld_free_window_buffer(w, a->buf);
    pld_host_free(w, a->block);
    cr_expect_str_empty(pld_world_error(w));
    pld_world_finalize(w);
}

Test(lifetime, host_calls_inside_a_kernel_thread, .timeout = 30)
{
    host_calls_inside_a_kernel("thread");
}

Test(lifetime, host_calls_inside_a_kernel_process, .timeout = 30)
{
    host_calls_inside_a_kernel("process");
}

/* ---- worlds ----------------------------------------------------------- */

Test(lifetime, calls_after_finalize, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    pld_window_buffer *buf = NULL;
    TU_ASSERT_STATUS(pld_alloc_window_buffer(w, 64, "data", &buf), PLD_OK);
    pld_world_finalize(w);
    pld_world_finalize(w);
    TU_EXPECT_CONTAINS(pld_last_error(), "pld_world_finalize: world #");
    TU_EXPECT_CONTAINS(pld_last_error(), "was finalized");
    TU_ASSERT_STATUS(pld_launch(w, tile_kept, NULL), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_last_error(), "pld_launch: world #");
    pld_window_buffer *again = NULL;
    TU_ASSERT_STATUS(pld_alloc_window_buffer(w, 64, "again", &again), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_last_error(), "pld_alloc_window_buffer: world #");
    pld_dtensor t;
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, 1, PLD_IDX(4), &t), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_last_error(), "pld_window: buffer");
    TU_EXPECT_CONTAINS(pld_last_error(), "its world finalized");
    cr_expect_eq(pld_world_size(w), 0);
    cr_expect_eq(pld_device_id(w, 0), -1);
    cr_expect_str_empty(pld_world_platform(w));
    cr_expect_eq(pld_host_alloc(w, 64), NULL);
    TU_EXPECT_CONTAINS(pld_world_error(w), "was finalized");
    pld_free_window_buffer(w, buf);
    pld_host_free(w, buf);
}

/* ---- host blocks ------------------------------------------------------ */

static void host_blocks(const char *transport)
{
    pld_world *w = world_on(transport);
    void *mine = malloc(64);
    pld_host_free(w, mine);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_host_free: ");
    TU_EXPECT_CONTAINS(pld_world_error(w), "is not a block of pld_host_alloc on this world");
    free(mine);
    void *p = tu_host_alloc(w, 100);
    pld_host_free(w, p);
    pld_host_free(w, p);
    TU_EXPECT_CONTAINS(pld_world_error(w), "(allocation #1, 100 bytes) was already freed");
    pld_world_finalize(w);
}

Test(lifetime, host_free_of_malloc_memory_or_twice_thread, .timeout = 30)
{
    host_blocks("thread");
}

Test(lifetime, host_free_of_malloc_memory_or_twice_process, .timeout = 30)
{
    host_blocks("process");
}

/* ---- two host threads ------------------------------------------------- */

static void hold_until_go(pld_ctx *c, void *arg)
{
    host_args *a = arg;
    if (pld_rank(c) == 0)
        atomic_store(&a->started, 1);
    while (!atomic_load(&a->go))
        tu_sleep_ms(1);
}

static void *launch_on_thread(void *arg)
{
    host_args *a = arg;
    static pld_status st;
    st = pld_launch(a->w, hold_until_go, a);
    return &st;
}

static void two_threads_launch(const char *transport)
{
    pld_world *w = world_on(transport);
    host_args *a = host_args_on(w);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, launch_on_thread, a), 0);
    /* once the first launch is inside its kernel */
    for (int i = 0; i < 20000 && !atomic_load(&a->started); i++)
        tu_sleep_ms(1);
    cr_assert(atomic_load(&a->started), "the first launch never started its kernel");
    pld_status st = pld_launch(w, tile_kept, NULL);
    cr_expect_eq(st, PLD_ERR_ARG, "second launch: %s", pld_status_name(st));
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_launch: another host thread is running a launch "
                                           "on this world");
    pld_window_buffer *b = NULL;
    TU_ASSERT_STATUS(pld_alloc_window_buffer(w, 64, "during", &b), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_alloc_window_buffer: a launch is running on this "
                                           "world");
    pld_world_finalize(w); /* refused, said on stderr */
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_world_finalize: a launch is running");
    atomic_store(&a->go, 1);
    void *ret;
    pthread_join(th, &ret);
    cr_expect_eq(*(pld_status *)ret, PLD_OK);
    TU_LAUNCH_OK(w, tile_kept, NULL);
    pld_world_finalize(w);
}

Test(lifetime, two_host_threads_launch_on_one_world_thread, .timeout = 60)
{
    two_threads_launch("thread");
}

Test(lifetime, two_host_threads_launch_on_one_world_process, .timeout = 60)
{
    two_threads_launch("process");
}

/* ---- windows of another world ----------------------------------------- */

static void other_world(const char *transport)
{
    pld_world *a = world_on(transport), *b = world_on(transport);
    pld_dtensor *theirs = tu_host_alloc(a, sizeof *theirs);
    *theirs = tu_window(b, "theirs", PLD_FP32, 2, PLD_IDX(2, 4));
    TU_LAUNCH_FAILS(a, put_one, theirs, PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(a), "pld_remote_store: dst window");
    TU_EXPECT_CONTAINS(pld_world_error(a), "is not a window of this world");
    TU_LAUNCH_OK(b, tile_kept, NULL); /* the other world is unharmed */
    pld_world_finalize(b);
    pld_world_finalize(a);
}

Test(lifetime, window_of_another_world_thread, .timeout = 30)
{
    other_world("thread");
}

Test(lifetime, window_of_another_world_process, .timeout = 30)
{
    other_world("process");
}

/* ---- kernel-side calls from the host ---------------------------------- */

/* Runs fn in a child with stderr to a pipe: the child must die of SIGABRT
 * and have said `words`. */
static void expect_abort_saying(void (*fn)(void), const char *words)
{
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(fd[1], 2);
        fn();
        _exit(0);
    }
    close(fd[1]);
    char out[1024] = "";
    size_t n = 0;
    ssize_t k;
    while (n < sizeof out - 1 && (k = read(fd[0], out + n, sizeof out - 1 - n)) > 0)
        n += (size_t)k;
    out[n] = '\0';
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status 0x%x", status);
    TU_EXPECT_CONTAINS(out, words);
}

static void barrier_on_host(void)
{
    pld_dtensor none = {0};
    pld_barrier(NULL, none);
}

static void rank_on_host(void)
{
    (void)pld_rank(NULL);
}

Test(lifetime, kernel_calls_with_a_null_context_say_so, .timeout = 30)
{
    expect_abort_saying(barrier_on_host, "pld: pld_barrier: the context is NULL");
    expect_abort_saying(rank_on_host, "pld: pld_rank: the context is NULL");
}

Test(lifetime, every_world_call_after_finalize_is_refused, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    pld_dtensor sig = tu_signal(w, "sig", 1);
    pld_world_finalize(w);
    pld_counters k;
    TU_ASSERT_STATUS(pld_rank_counters(w, 0, &k), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_last_error(), "pld_rank_counters: world #");
    TU_ASSERT_STATUS(pld_host_barrier(w, &sig), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_last_error(), "pld_host_barrier: world #");
    TU_ASSERT_STATUS(pld_host_allreduce(w, sig, NULL, PLD_SUM, PLD_MESH, 1), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_last_error(), "pld_host_allreduce: world #");
    TU_ASSERT_STATUS(pld_ir_dump(w, stdout), PLD_ERR_ARG);
    pld_ir_enable(w, 1);
    cr_expect_str_empty(pld_ir_text(w));
}
