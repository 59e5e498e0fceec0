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
    float *out;   /* where the kernel writes for the host */
    int how;      /* 0: pld_get into out, 1: pld_store into out */
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
        expect_private(w, a, a->how == 0 ? "pld_get: dst tensor data" : "pld_store: dst tensor data");
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

Test(silent, notify_add_overflow_thread, .timeout = 60) { expect_overflow("thread"); }
Test(silent, notify_add_overflow_process, .timeout = 60) { expect_overflow("process"); }

