/* SPDX-License-Identifier: Apache-2.0 */
/* pld/ffi.h: kernel calls that return their status instead of leaving the
 * kernel. A kernel keeps running after an error, sees the group's message,
 * and every later call it makes returns at once; the launch reports the
 * root cause as a C kernel's would. Run under the sanitizers too: the
 * guard saves and restores the kernel's error exit around each call. */
#include "pld/ffi.h"

#include "test_util.h"

typedef struct {
    pld_dtensor data, sig;
    pld_status first[4], later[4];
    int returned[4];
    char msg[4][256];
} ffi_args;

/* Rank 1 loads a row outside the window; the others wait for a notify
 * that never comes. Every rank records what its calls returned. */
static void k_bounds(pld_ctx *c, void *p)
{
    ffi_args *a = p;
    int me = pld_rank(c);
    float row[8];
    if (me == 1)
        a->first[me] = pld_ffi_remote_load(c, row, 1, 8, &a->data, 0, PLD_IDX(5, 0));
    else
        a->first[me] = pld_ffi_wait(c, &a->sig, PLD_IDX(1, 0), 1, PLD_WAIT_GE);
    snprintf(a->msg[me], sizeof a->msg[me], "%s", pld_ffi_error(c));
    a->later[me] = pld_ffi_barrier(c, &a->sig);
    a->returned[me] = 1;
}

Test(ffi, an_error_returns_its_status_and_the_kernel_goes_on, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    ffi_args *a = tu_host_alloc(w, sizeof *a);
    a->data = tu_window(w, "data", PLD_FP32, 2, PLD_IDX(3, 8));
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_FAILS(w, k_bounds, a, PLD_ERR_BOUNDS);
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank 1 (device 1): pld_remote_load: src region [5,0]");
    for (int r = 0; r < 3; r++) {
        cr_expect(a->returned[r], "rank %d did not return from its kernel's calls", r);
        pld_status want = r == 1 ? PLD_ERR_BOUNDS : PLD_ERR_PEER;
        cr_expect_eq(a->first[r], want, "rank %d: first call returned %s", r,
                     pld_status_name(a->first[r]));
        cr_expect_neq(a->later[r], PLD_OK, "rank %d: a call after the failure returned OK", r);
        TU_EXPECT_CONTAINS(a->msg[r], "is outside window 'data'");
    }
    /* the world runs the next launch */
    a->first[0] = PLD_ERR_SYSTEM;
    TU_LAUNCH_FAILS(w, k_bounds, a, PLD_ERR_BOUNDS);
    pld_world_finalize(w);
}

typedef struct {
    pld_dtensor data, sig;
    float *x;
    int32_t seen[4];
    pld_status st[4][3];
} ok_args;

static void k_ok(pld_ctx *c, void *p)
{
    ok_args *a = p;
    int me = pld_rank(c), n = pld_nranks(c);
    pld_tensor x = pld_tensor_make(a->x + me * 4, PLD_FP32, 2, PLD_IDX(1, 4));
    a->st[me][0] = pld_ffi_allgather(c, &x, &a->data, &a->sig);
    a->st[me][1] =
        pld_ffi_notify(c, &a->sig, (me + 1) % n, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
    a->st[me][2] = pld_ffi_wait(c, &a->sig, PLD_IDX((me + n - 1) % n, 0), 1, PLD_WAIT_GE);
    pld_ffi_signal_read(c, &a->sig, PLD_IDX((me + n - 1) % n, 0), &a->seen[me]);
}

Test(ffi, calls_that_succeed_return_ok, .timeout = 30)
{
    pld_world *w = tu_world("0-2");
    ok_args *a = tu_host_alloc(w, sizeof *a);
    a->x = tu_host_alloc(w, 3 * 4 * sizeof(float));
    for (int i = 0; i < 12; i++)
        a->x[i] = (float)i;
    a->data = tu_window(w, "data", PLD_FP32, 2, PLD_IDX(3, 4));
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_ok, a);
    for (int r = 0; r < 3; r++) {
        for (int k = 0; k < 3; k++)
            cr_expect_eq(a->st[r][k], PLD_OK, "rank %d call %d: %s", r, k,
                         pld_status_name(a->st[r][k]));
        cr_expect_eq(a->seen[r], 1, "rank %d read %d", r, a->seen[r]);
        pld_tensor v = tu_view(w, a->data, r);
        for (int i = 0; i < 12; i++)
            cr_expect_eq(((float *)v.data)[i], (float)i, "rank %d element %d", r, i);
    }
    pld_world_finalize(w);
}

typedef struct {
    pld_dtensor sig;
    pld_status st[2];
} raise_args;

static void k_raise(pld_ctx *c, void *p)
{
    raise_args *a = p;
    if (pld_rank(c) == 0)
        a->st[0] = pld_ffi_raise(c, PLD_ERR_ARG, "binding_call", "offsets has 1 entries [0]");
    else
        a->st[1] = pld_ffi_barrier(c, &a->sig);
}

Test(ffi, raise_fails_the_group_naming_the_rank_and_the_call, .timeout = 30)
{
    pld_world *w = tu_world("0,1");
    raise_args *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_FAILS(w, k_raise, a, PLD_ERR_ARG);
    cr_expect_eq(a->st[0], PLD_ERR_ARG);
    cr_expect_eq(a->st[1], PLD_ERR_PEER, "rank 1's barrier returned %s", pld_status_name(a->st[1]));
    TU_EXPECT_STARTS(pld_world_error(w),
                     "rank 0 (device 0): binding_call: offsets has 1 entries [0]");
    pld_world_finalize(w);
}

static void k_fail(pld_ctx *c, void *p)
{
    pld_status *st = p;
    st[pld_rank(c)] = pld_ffi_fail(c, "python: ValueError: boom");
}

Test(ffi, fail_is_a_check_error_like_pld_fail, .timeout = 30)
{
    pld_world *w = tu_world("0,1");
    pld_status *st = tu_host_alloc(w, 2 * sizeof *st);
    TU_LAUNCH_FAILS(w, k_fail, st, PLD_ERR_CHECK);
    TU_EXPECT_CONTAINS(pld_world_error(w), ": pld_fail: python: ValueError: boom");
    /* the first to fail is the root cause; the other's fail returns too */
    cr_expect(st[0] == PLD_ERR_CHECK || st[1] == PLD_ERR_CHECK);
    cr_expect(st[0] != PLD_OK && st[1] != PLD_OK);
    pld_world_finalize(w);
}

Test(ffi, a_null_context_is_arg_error)
{
    pld_dtensor d = {0};
    int32_t v;
    cr_expect_eq(pld_ffi_barrier(NULL, &d), PLD_ERR_ARG);
    cr_expect_eq(pld_ffi_signal_read(NULL, &d, NULL, &v), PLD_ERR_ARG);
    cr_expect_str_eq(pld_ffi_error(NULL), "");
}
