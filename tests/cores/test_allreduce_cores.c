/* SPDX-License-Identifier: Apache-2.0 */
/* Multi-core allreduce (core_num > 1): block-cyclic 256-element tiles,
 * lane b of a [P, S >= core_num] signal per core, results identical to the
 * one-core mesh, cost card summed over cores, and failures inside a core. */
#include <criterion/criterion.h>
#include <pld/pld.h>
#include <stdio.h>
#include <string.h>

static float val(int r, int64_t i)
{
    return (float)((r * 5 + i * 7) % 13 - 6);
}

typedef struct env {
    pld_world *w;
    pld_window_buffer *db, *sb;
    pld_dtensor data, sig;
    int64_t n;
} env;

static void make(env *e, const char *devices, int64_t n, int lanes)
{
    pld_config cfg = {.devices = devices};
    cr_assert_eq(pld_world_init(&e->w, &cfg), PLD_OK, "%s", pld_last_error());
    int p = pld_world_size(e->w);
    cr_assert_eq(pld_alloc_window_buffer(e->w, sizeof(float) * (size_t)n, "data", &e->db), PLD_OK);
    cr_assert_eq(pld_window(e->db, PLD_FP32, 1, PLD_IDX(n), &e->data), PLD_OK);
    cr_assert_eq(
        pld_alloc_window_buffer(e->w, sizeof(int32_t) * (size_t)(p * lanes), "sig", &e->sb),
        PLD_OK);
    cr_assert_eq(pld_window(e->sb, PLD_INT32, 2, PLD_IDX(p, lanes), &e->sig), PLD_OK);
    e->n = n;
}

static void stage(env *e)
{
    for (int r = 0; r < pld_world_size(e->w); r++) {
        pld_tensor t;
        cr_assert_eq(pld_window_host_view(e->w, e->data, r, &t), PLD_OK);
        for (int64_t i = 0; i < e->n; i++)
            ((float *)t.data)[i] = val(r, i);
    }
}

static void verify(env *e)
{
    int p = pld_world_size(e->w);
    for (int r = 0; r < p; r++) {
        pld_tensor t;
        cr_assert_eq(pld_window_host_view(e->w, e->data, r, &t), PLD_OK);
        for (int64_t i = 0; i < e->n; i++) {
            float want = 0;
            for (int q = 0; q < p; q++)
                want += val(q, i);
            cr_assert_eq(((float *)t.data)[i], want, "rank %d index %lld: got %g want %g", r,
                         (long long)i, ((float *)t.data)[i], want);
        }
        pld_tensor s;
        cr_assert_eq(pld_window_host_view(e->w, e->sig, r, &s), PLD_OK);
        for (int64_t i = 0; i < pld_tensor_numel(s); i++)
            cr_assert_eq(((int32_t *)s.data)[i], 0, "rank %d signal cell %lld left at %d", r,
                         (long long)i, ((int32_t *)s.data)[i]);
    }
}

static void sweep(const char *devices)
{
    static const int64_t sizes[] = {1, 255, 256, 257, 4096, 100003};
    static const int cores[] = {1, 2, 3, 4, 7, 48};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (size_t k = 0; k < sizeof cores / sizeof cores[0]; k++) {
            env e = {0};
            make(&e, devices, sizes[i], 48);
            stage(&e);
            pld_status st = pld_host_allreduce(e.w, e.data, &e.sig, PLD_SUM, PLD_MESH, cores[k]);
            cr_assert_eq(st, PLD_OK, "n=%lld core_num=%d: %s: %s", (long long)sizes[i], cores[k],
                         pld_status_name(st), pld_world_error(e.w));
            verify(&e);
            int p = pld_world_size(e.w);
            for (int r = 0; r < p; r++) {
                pld_counters k2;
                cr_assert_eq(pld_rank_counters(e.w, r, &k2), PLD_OK);
                uint64_t want = (uint64_t)(p - 1) * (uint64_t)sizes[i] * sizeof(float);
                cr_assert_eq(k2.bytes_from_peers, want,
                             "n=%lld core_num=%d rank %d pulled %llu bytes, card says %llu",
                             (long long)sizes[i], cores[k], r,
                             (unsigned long long)k2.bytes_from_peers, (unsigned long long)want);
            }
            pld_world_finalize(e.w);
        }
    }
}

Test(allreduce_cores, matches_reference_p2, .timeout = 300)
{
    sweep("0,1");
}
Test(allreduce_cores, matches_reference_p3, .timeout = 300)
{
    sweep("0-2");
}

Test(allreduce_cores, null_signal_and_repeats, .timeout = 120)
{
    env e = {0};
    make(&e, "0-3", 10000, 1);
    for (int i = 0; i < 5; i++) {
        stage(&e);
        pld_status st = pld_host_allreduce(e.w, e.data, NULL, PLD_SUM, PLD_MESH, 1 + 3 * i);
        cr_assert_eq(st, PLD_OK, "%s", pld_world_error(e.w));
        verify(&e);
    }
    pld_world_finalize(e.w);
}

Test(allreduce_cores, core_num_bounds_and_signal_width, .timeout = 60)
{
    env e = {0};
    make(&e, "0,1", 512, 2);
    cr_assert_eq(pld_host_allreduce(e.w, e.data, &e.sig, PLD_SUM, PLD_MESH, 0), PLD_ERR_ARG);
    cr_assert_eq(pld_host_allreduce(e.w, e.data, &e.sig, PLD_SUM, PLD_MESH, 49), PLD_ERR_ARG);
    cr_assert(strstr(pld_world_error(e.w), "49"), "%s", pld_world_error(e.w));
    /* 4 cores need 4 lanes; this signal has 2 */
    pld_status st = pld_host_allreduce(e.w, e.data, &e.sig, PLD_SUM, PLD_MESH, 4);
    cr_assert_eq(st, PLD_ERR_ARG, "%s", pld_world_error(e.w));
    cr_assert(strstr(pld_world_error(e.w), "[2,4]"), "%s", pld_world_error(e.w));
    st = pld_host_allreduce(e.w, e.data, &e.sig, PLD_SUM, PLD_RING, 2);
    cr_assert_eq(st, PLD_ERR_UNSUPPORTED, "%s", pld_world_error(e.w));
    stage(&e);
    cr_assert_eq(pld_host_allreduce(e.w, e.data, &e.sig, PLD_SUM, PLD_MESH, 2), PLD_OK);
    verify(&e);
    pld_world_finalize(e.w);
}

Test(allreduce_cores, a5sim_bounds_core_num_by_36, .timeout = 60)
{
    pld_config cfg = {.devices = "0,1", .platform = "a5sim"};
    pld_world *w;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK);
    pld_window_buffer *db;
    pld_dtensor d;
    cr_assert_eq(pld_alloc_window_buffer(w, 4096, "data", &db), PLD_OK);
    cr_assert_eq(pld_window(db, PLD_FP32, 1, PLD_IDX(1024), &d), PLD_OK);
    cr_assert_eq(pld_host_allreduce(w, d, NULL, PLD_SUM, PLD_MESH, 37), PLD_ERR_ARG);
    cr_assert_eq(pld_host_allreduce(w, d, NULL, PLD_SUM, PLD_MESH, 36), PLD_OK, "%s",
                 pld_world_error(w));
    pld_world_finalize(w);
}

/* A core that fails mid-call aborts the group; every core is joined, the
 * launch returns the root cause naming the core, and the world still works. */
typedef struct fail_arg {
    env *e;
    int kind;
} fail_arg;

static void fail_kernel(pld_ctx *c, void *p)
{
    fail_arg *a = p;
    if (a->kind == 0) {
        pld_allreduce_cores(c, a->e->data, a->e->sig, PLD_SUM, PLD_MESH, 4);
        return;
    }
    /* kind 1: rank 1 skips the call, so every core of rank 0 waits forever */
    if (pld_rank(c) == 0)
        pld_allreduce_cores(c, a->e->data, a->e->sig, PLD_SUM, PLD_MESH, 4);
}

Test(allreduce_cores, deadlock_lists_every_blocked_core, .timeout = 60)
{
    env e = {0};
    make(&e, "0,1", 4096, 4);
    fail_arg a = {.e = &e, .kind = 1};
    pld_status st = pld_launch(e.w, fail_kernel, &a);
    cr_assert_eq(st, PLD_ERR_DEADLOCK, "%s: %s", pld_status_name(st), pld_world_error(e.w));
    const char *m = pld_world_error(e.w);
    cr_assert(strstr(m, "rank 0 (device 0): pld_wait") && strstr(m, "rank 0 (device 0) core 3"),
              "%s", m);
    cr_assert(strstr(m, "rank 1 (device 1): finished"), "%s", m);
    cr_assert_eq(pld_window_buffer_reset(e.w, e.sb), PLD_OK);
    a.kind = 0;
    stage(&e);
    st = pld_launch(e.w, fail_kernel, &a);
    cr_assert_eq(st, PLD_OK, "%s", pld_world_error(e.w));
    verify(&e);
    pld_world_finalize(e.w);
}
