/* SPDX-License-Identifier: Apache-2.0 */
/* Host twins (pld_host_*): every one against a plain C reference at P = 1,
 * 3 and 4, pld_host_allreduce with a NULL signal (pld allocates one private
 * signal and reuses it), core_num bounds, and the twins' argument errors.
 * Inputs are written and results read through pld_window_host_view. */
#include <stdio.h>
#include <stdlib.h>

#include "coll_util.h"

#define S 37 /* elements per row: odd */

static pld_world *g_w;

static void *view(pld_dtensor t, int r)
{
    return tu_view(g_w, t, r).data;
}

static void expect_bytes(const char *what, int r, const void *p, size_t n, uint32_t tag)
{
    int64_t at = cu_mismatch(p, n, tag, 0);
    cr_expect_eq(at, -1, "%s on rank %d: byte %lld differs from the reference (0x%02x vs 0x%02x)",
                 what, r, (long long)at, at >= 0 ? ((const uint8_t *)p)[at] : 0,
                 at >= 0 ? cu_byte(tag, (uint64_t)at) : 0);
}

static void host_twins(int p)
{
    pld_world *w = g_w = cu_world(p);
    pld_dtensor sig = tu_signal(w, "sig", 1);
    int salt = 0;

    /* barrier */
    TU_ASSERT_STATUS(pld_host_barrier(w, &sig), PLD_OK);
    cu_assert_signal_zero(w, sig);

    /* broadcast from every root, fp16 [3, S] */
    pld_dtensor data = tu_window(w, "data", PLD_FP16, 2, PLD_IDX(3, S));
    size_t nb = 3 * S * 2;
    for (int root = 0; root < p; root++) {
        salt++;
        for (int r = 0; r < p; r++)
            cu_fill(view(data, r), nb,
                    r == root ? cu_tag(root, CU_ALL, salt) : cu_tag(CU_GARBAGE, r, salt), 0);
        pld_status st = pld_host_broadcast(w, data, &sig, root);
        cr_assert_eq(st, PLD_OK, "pld_host_broadcast root %d: %s: %s", root, pld_status_name(st),
                     pld_world_error(w));
        for (int r = 0; r < p; r++)
            expect_bytes("pld_host_broadcast data", r, view(data, r), nb,
                         cu_tag(root, CU_ALL, salt));
    }
    cu_free(w, data);

    /* allgather: stage [1,S] int8 slices -> target [P,S] */
    pld_dtensor stage = tu_window(w, "stage", PLD_INT8, 2, PLD_IDX(1, S));
    pld_dtensor tgt = tu_window(w, "tgt", PLD_INT8, 2, PLD_IDX(p, S));
    salt++;
    for (int r = 0; r < p; r++) {
        cu_fill(view(stage, r), S, cu_tag(r, CU_ALL, salt), 0);
        cu_fill(view(tgt, r), (size_t)p * S, cu_tag(CU_GARBAGE, r, salt), 0);
    }
    TU_ASSERT_STATUS(pld_host_allgather(w, stage, tgt, &sig), PLD_OK);
    for (int r = 0; r < p; r++)
        for (int s = 0; s < p; s++)
            expect_bytes("pld_host_allgather target row", r, (char *)view(tgt, r) + s * S, S,
                         cu_tag(s, CU_ALL, salt));
    cu_free(w, stage);
    cu_free(w, tgt);

    /* all_to_all: input [P,S] int64 windows */
    pld_dtensor in = tu_window(w, "in", PLD_INT64, 2, PLD_IDX(p, S));
    tgt = tu_window(w, "tgt", PLD_INT64, 2, PLD_IDX(p, S));
    salt++;
    size_t row = S * 8;
    for (int r = 0; r < p; r++)
        for (int d = 0; d < p; d++)
            cu_fill((char *)view(in, r) + d * row, row, cu_tag(r, d, salt), 0);
    TU_ASSERT_STATUS(pld_host_all_to_all(w, in, tgt, &sig), PLD_OK);
    for (int r = 0; r < p; r++)
        for (int s = 0; s < p; s++)
            expect_bytes("pld_host_all_to_all target row", r, (char *)view(tgt, r) + s * row, row,
                         cu_tag(s, r, salt));
    cu_free(w, in);
    cu_free(w, tgt);

    /* all_to_all_v: M = 3 rows per block, counts (s + 2d) % 5 clamped to 3 */
    int m = 3;
    in = tu_window(w, "in", PLD_FP32, 2, PLD_IDX(p * m, S));
    tgt = tu_window(w, "tgt", PLD_FP32, 2, PLD_IDX(p * m, S));
    pld_dtensor sc = tu_window(w, "send_counts", PLD_INT32, 2, PLD_IDX(p, 1));
    pld_dtensor rc = tu_window(w, "recv_counts", PLD_INT32, 2, PLD_IDX(p, 1));
    salt++;
    size_t block = (size_t)m * S * 4;
    for (int r = 0; r < p; r++) {
        int32_t *cnt = view(sc, r), *rcv = view(rc, r);
        for (int d = 0; d < p; d++) {
            cu_fill((char *)view(in, r) + d * block, block, cu_tag(r, d, salt), 0);
            cnt[d] = (r + 2 * d) % 5;
            rcv[d] = -7;
        }
    }
    TU_ASSERT_STATUS(pld_host_all_to_all_v(w, in, tgt, &sig, sc, rc), PLD_OK);
    for (int r = 0; r < p; r++) {
        const int32_t *rcv = view(rc, r);
        for (int s = 0; s < p; s++) {
            int want = (s + 2 * r) % 5 > m ? m : (s + 2 * r) % 5;
            cr_expect_eq(rcv[s], want,
                         "pld_host_all_to_all_v rank %d recv_counts[%d] = %d, "
                         "expected %d",
                         r, s, rcv[s], want);
            expect_bytes("pld_host_all_to_all_v block", r, (char *)view(tgt, r) + s * block,
                         (size_t)want * S * 4, cu_tag(s, r, salt));
        }
    }
    cu_free(w, in);
    cu_free(w, tgt);
    cu_free(w, sc);
    cu_free(w, rc);

    /* reduce_scatter: Sum on bf16 [P,S]; Max is unsupported */
    data = tu_window(w, "data", PLD_BF16, 2, PLD_IDX(p, S));
    for (int r = 0; r < p; r++)
        for (int64_t i = 0; i < p * S; i++)
            tu_set(PLD_BF16, view(data, r), i, cu_rval(r, i, PLD_SUM, p));
    TU_ASSERT_STATUS(pld_host_reduce_scatter(w, data, &sig, PLD_SUM), PLD_OK);
    for (int r = 0; r < p; r++)
        for (int64_t j = 0; j < S; j++) {
            double got = tu_get(PLD_BF16, view(data, r), r * S + j);
            double want = cu_ref(p, r * S + j, PLD_SUM);
            cr_expect_eq(got, want,
                         "pld_host_reduce_scatter rank %d row %d [%lld] = %g, "
                         "expected %g",
                         r, r, (long long)j, got, want);
        }
    pld_status st = pld_host_reduce_scatter(w, data, &sig, PLD_MAX);
    cr_expect_eq(st, PLD_ERR_UNSUPPORTED, "pld_host_reduce_scatter Max: %s: %s",
                 pld_status_name(st), pld_world_error(w));
    TU_EXPECT_CONTAINS(pld_world_error(w), "Sum only");
    TU_ASSERT_STATUS(pld_window_buffer_reset(w, sig.buf), PLD_OK);
    cu_free(w, data);

    /* allreduce with a caller's signal: every op, every dtype, both modes */
    static const pld_dtype dts[] = {PLD_FP32, PLD_FP16, PLD_BF16, PLD_INT32};
    int64_t rows = p > 1 ? 2 * (p - 1) : 1;
    pld_dtensor ring = p > 1 ? tu_window(w, "ring", PLD_INT32, 2, PLD_IDX(rows, p)) : sig;
    for (size_t k = 0; k < 4; k++) {
        data = tu_window(w, "data", dts[k], 1, PLD_IDX(S));
        for (int op = PLD_SUM; op <= PLD_PROD; op++)
            for (int mode = PLD_MESH; mode <= PLD_RING; mode++) {
                for (int r = 0; r < p; r++)
                    for (int64_t i = 0; i < S; i++)
                        tu_set(dts[k], view(data, r), i, cu_rval(r, i, (pld_reduce_op)op, p));
                st = pld_host_allreduce(w, data, mode == PLD_RING ? &ring : &sig, (pld_reduce_op)op,
                                        (pld_allreduce_mode)mode, 1);
                cr_assert_eq(st, PLD_OK, "pld_host_allreduce %s %s mode %d: %s: %s",
                             pld_dtype_name(dts[k]), cu_op_name((pld_reduce_op)op), mode,
                             pld_status_name(st), pld_world_error(w));
                for (int r = 0; r < p; r++)
                    for (int64_t i = 0; i < S; i++) {
                        double got = tu_get(dts[k], view(data, r), i);
                        double want = cu_ref(p, i, (pld_reduce_op)op);
                        cr_expect_eq(got, want,
                                     "pld_host_allreduce %s %s mode %d rank %d [%lld] = %g, "
                                     "expected %g",
                                     pld_dtype_name(dts[k]), cu_op_name((pld_reduce_op)op), mode, r,
                                     (long long)i, got, want);
                    }
            }
        cu_free(w, data);
    }
    cu_assert_signal_zero(w, sig);
    cu_assert_signal_zero(w, ring);
    cu_finalize(w);
}

Test(host_twins, match_reference_p1, .timeout = 60)
{
    host_twins(1);
}
Test(host_twins, match_reference_p3, .timeout = 60)
{
    host_twins(3);
}
Test(host_twins, match_reference_p4, .timeout = 60)
{
    host_twins(4);
}

/* ---- pld_host_allreduce with a NULL signal -------------------------------- */

/* Number in an unnamed window buffer's name ("window7" -> 7). */
static int window_number(pld_world *w)
{
    pld_window_buffer *b = NULL;
    TU_ASSERT_STATUS(pld_alloc_window_buffer(w, 64, NULL, &b), PLD_OK);
    const char *name = pld_window_buffer_name(b);
    int n = -1;
    cr_assert(sscanf(name, "window%d", &n) == 1,
              "an unnamed window buffer is called '%s', expected 'window<N>'", name);
    return n;
}

static void null_signal(int p)
{
    pld_world *w = g_w = cu_world(p);
    int64_t n = 1001;
    pld_dtensor data = tu_window(w, "data", PLD_FP32, 1, PLD_IDX(n));
    int before = window_number(w);
    for (int call = 0; call < 60; call++) {
        pld_reduce_op op = (pld_reduce_op)(call % 4);
        pld_allreduce_mode mode = (pld_allreduce_mode)((call / 4) % 2);
        for (int r = 0; r < p; r++)
            for (int64_t i = 0; i < n; i++)
                tu_set(PLD_FP32, view(data, r), i, cu_rval(r, i + call, op, p));
        pld_status st = pld_host_allreduce(w, data, NULL, op, mode, 1);
        cr_assert_eq(st, PLD_OK, "call %d: pld_host_allreduce(NULL signal, %s, mode %d): %s: %s",
                     call, cu_op_name(op), mode, pld_status_name(st), pld_world_error(w));
        for (int r = 0; r < p; r++) {
            const float *d = view(data, r);
            for (int64_t i = 0; i < n; i++)
                if (d[i] != (float)cu_ref(p, i + call, op))
                    cr_assert_fail("call %d (%s, mode %d): rank %d [%lld] = %g, expected %g", call,
                                   cu_op_name(op), mode, r, (long long)i, (double)d[i],
                                   cu_ref(p, i + call, op));
        }
    }
    /* 60 calls allocated at most one window: the private signal, reused */
    int after = window_number(w);
    cr_expect_leq(after - before, 2,
                  "60 calls with a NULL signal created %d window buffers; expected one private "
                  "signal reused by every call",
                  after - before - 1);
    cu_finalize(w);
}

Test(host_allreduce, null_signal_allocated_once_and_reused_p1, .timeout = 60)
{
    null_signal(1);
}
Test(host_allreduce, null_signal_allocated_once_and_reused_p3, .timeout = 60)
{
    null_signal(3);
}
Test(host_allreduce, null_signal_allocated_once_and_reused_p4, .timeout = 60)
{
    null_signal(4);
}

/* ---- core_num bounds ------------------------------------------------------ */

static void core_num_bounds(const char *platform, int aiv)
{
    pld_world *w = g_w = cu_world_on(3, platform);
    pld_info_limits lim;
    pld_world_limits(w, &lim);
    cr_assert_eq(lim.aiv_cores, aiv, "%s has %d AIV cores per rank, the profile says %d", platform,
                 lim.aiv_cores, aiv);
    pld_dtensor sig = tu_signal(w, "sig", 1);
    pld_dtensor data = tu_window(w, "data", PLD_FP32, 1, PLD_IDX(8));
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 8; i++)
            ((float *)view(data, r))[i] = (float)(r + 1);
    const int bad[] = {0, -1, aiv + 1, 1000};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        for (int with_sig = 0; with_sig <= 1; with_sig++) {
            pld_status st =
                pld_host_allreduce(w, data, with_sig ? &sig : NULL, PLD_SUM, PLD_MESH, bad[k]);
            cr_expect_eq(st, PLD_ERR_ARG, "%s core_num %d (%s signal): %s, expected PLD_ERR_ARG",
                         platform, bad[k], with_sig ? "a" : "NULL", pld_status_name(st));
            char needle[32];
            snprintf(needle, sizeof needle, "core_num %d", bad[k]);
            TU_EXPECT_CONTAINS(pld_world_error(w), needle);
            snprintf(needle, sizeof needle, "%d", aiv);
            TU_EXPECT_CONTAINS(pld_world_error(w), needle);
            TU_EXPECT_CONTAINS(pld_world_error(w), "pld_host_allreduce");
        }
    }
    /* nothing ran: the data is untouched */
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 8; i++)
            cr_expect_eq(((float *)view(data, r))[i], (float)(r + 1),
                         "rank %d [%d] changed by a rejected call", r, i);
    /* core_num 1 is valid */
    TU_ASSERT_STATUS(pld_host_allreduce(w, data, &sig, PLD_SUM, PLD_MESH, 1), PLD_OK);
    for (int r = 0; r < 3; r++)
        cr_expect_eq(((float *)view(data, r))[0], 6.0f, "rank %d after core_num 1", r);
    cu_finalize(w);
}

Test(host_allreduce, core_num_bounds_a2a3sim, .timeout = 30)
{
    core_num_bounds("a2a3sim", 48);
}
Test(host_allreduce, core_num_bounds_a5sim, .timeout = 30)
{
    core_num_bounds("a5sim", 36);
}

/* ---- argument errors ------------------------------------------------------ */

Test(host_twins, null_signal_is_arg_error_except_allreduce, .timeout = 30)
{
    pld_world *w = g_w = cu_world(2);
    pld_dtensor a = tu_window(w, "a", PLD_FP32, 2, PLD_IDX(2, 4));
    pld_dtensor b = tu_window(w, "b", PLD_FP32, 2, PLD_IDX(2, 4));
    pld_dtensor st1 = tu_window(w, "stage", PLD_FP32, 2, PLD_IDX(1, 4));
    pld_dtensor c1 = tu_window(w, "sc", PLD_INT32, 2, PLD_IDX(2, 1));
    pld_dtensor c2 = tu_window(w, "rc", PLD_INT32, 2, PLD_IDX(2, 1));
    struct {
        const char *api;
        pld_status st;
    } calls[] = {
        {"pld_host_barrier", pld_host_barrier(w, NULL)},
        {"pld_host_broadcast", pld_host_broadcast(w, a, NULL, 0)},
        {"pld_host_allgather", pld_host_allgather(w, st1, a, NULL)},
        {"pld_host_reduce_scatter", pld_host_reduce_scatter(w, a, NULL, PLD_SUM)},
        {"pld_host_all_to_all", pld_host_all_to_all(w, a, b, NULL)},
        {"pld_host_all_to_all_v", pld_host_all_to_all_v(w, a, b, NULL, c1, c2)},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        cr_expect_eq(calls[i].st, PLD_ERR_ARG, "%s(NULL signal) = %s, expected PLD_ERR_ARG",
                     calls[i].api, pld_status_name(calls[i].st));
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_host_all_to_all_v");
    TU_EXPECT_CONTAINS(pld_world_error(w), "NULL");
    cu_finalize(w);
}

Test(host_twins, aliased_windows_are_alias_errors, .timeout = 30)
{
    pld_world *w = g_w = cu_world(3);
    pld_dtensor sig = tu_signal(w, "sig", 1);
    pld_dtensor tgt = tu_window(w, "tgt", PLD_FP32, 2, PLD_IDX(3, 4));
    pld_dtensor row;
    cr_assert_eq(pld_window(tgt.buf, PLD_FP32, 2, PLD_IDX(1, 4), &row), PLD_OK);
    pld_status st = pld_host_allgather(w, row, tgt, &sig);
    cr_expect_eq(st, PLD_ERR_ALIAS, "pld_host_allgather(stage in target): %s: %s",
                 pld_status_name(st), pld_world_error(w));
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_host_allgather");
    st = pld_host_all_to_all(w, tgt, tgt, &sig);
    cr_expect_eq(st, PLD_ERR_ALIAS, "pld_host_all_to_all(input = target): %s: %s",
                 pld_status_name(st), pld_world_error(w));
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_all_to_all");
    cu_finalize(w);
}
