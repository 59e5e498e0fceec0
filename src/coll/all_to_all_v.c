/* SPDX-License-Identifier: Apache-2.0 */
/* All-to-all-v, push form with published counts.
 *
 * input/target [P*M, S]; send_counts INT32 [P] or [P,1] (plain tensor);
 * recv_counts window INT32 [P,1]. Rank r sends rows r_d = input[d*M ..
 * d*M+count_d) to rank d, landing at target_d[r*M ..]. Counts are clamped to
 * M; a negative count is a data error.
 *
 * Algorithm: push the full M-row block per destination (fixed-size blocks
 * keep the transfer shape static), publish the clamped count with Set into
 * the sender's own 64-byte line of the destination's count lines (the
 * group's internal window, coll/ll.h: several ranks Set-writing cells of
 * one line, as recv_counts [P,1] would have them, is a hazard on the NPU),
 * then one completion barrier; each rank copies the counts from its lines
 * into its own recv_counts, and the epilogue.
 * Cost card: bytes_to_peers = (P-1) * M * S * elt; 1 round. */
#include "coll/coll_util.h"
#include "coll/ll.h"

/* Cell [row + me, 1] of d's count lines = the count for d, clamped to M. */
static void publish_count(pld_ctx *c, pld_dtensor lines, int64_t row, int d, int32_t count,
                          int64_t m)
{
    int32_t n = count > m ? (int32_t)m : count;
    pld__notify_checked(c, lines, d, row + c->rank, 1, n, PLD_NOTIFY_SET);
}

/* After the barrier: my recv_counts[s] = what s published in my lines
 * (my own count directly), written by me alone. */
static void copy_counts(pld_ctx *c, pld_dtensor lines, int64_t row, pld_dtensor recv_counts,
                        int32_t own)
{
    int32_t *rc = c->tp->window_peer_ptr(c->w, recv_counts.buf, c->wrank);
    for (int s = 0; s < c->nranks; s++)
        rc[s] = s == c->rank
                    ? own
                    : c->tp->signal_load(
                          c, lines.buf, (size_t)((row + s) * lines.shape[1] + 1) * sizeof(int32_t));
}

void pld_all_to_all_v(pld_ctx *c, pld_tensor input, pld_dtensor target, pld_dtensor signal,
                      pld_tensor send_counts, pld_dtensor recv_counts)
{
    PLD__CTX_CHECK(c, "pld_all_to_all_v");
    static const char api[] = "pld_all_to_all_v";
    char dims[96];
    int p = c->nranks;
    pld__check_live(c);
    pld__check_dtensor(c, api, "target", target);
    pld__check_tensor(c, api, "input", input);
    pld__check_tensor(c, api, "send_counts", send_counts);
    pld__check_dtensor(c, api, "recv_counts", recv_counts);
    pld__coll_check_signal(c, api, signal, 1);
    if (target.ndim != 2 || target.shape[0] % p != 0)
        pld__kraise(c, PLD_ERR_ARG, api, "target '%s' is %s; it must be [P*M, S] with %s=%d",
                    target.buf->name, pld__fmt_dims(dims, sizeof dims, target.shape, target.ndim),
                    pld__pname(c), p);
    int64_t m = target.shape[0] / p, s = target.shape[1];
    if (input.dtype != target.dtype || input.ndim != 2 || input.shape[0] != target.shape[0] ||
        input.shape[1] != s)
        pld__kraise(c, PLD_ERR_ARG, api, "input %s %s must match target '%s' %s %s",
                    pld_dtype_name(input.dtype),
                    pld__fmt_dims(dims, sizeof dims, input.shape, input.ndim), target.buf->name,
                    pld_dtype_name(target.dtype),
                    pld__fmt_dims((char[96]){0}, 96, target.shape, target.ndim));
    if (send_counts.dtype != PLD_INT32 || pld_tensor_numel(send_counts) != p ||
        (send_counts.ndim == 2 && send_counts.shape[1] != 1) || send_counts.ndim > 2)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "send_counts must be INT32 [P] or [P,1] with %s=%d (got %s %s)", pld__pname(c),
                    p, pld_dtype_name(send_counts.dtype),
                    pld__fmt_dims(dims, sizeof dims, send_counts.shape, send_counts.ndim));
    if (recv_counts.dtype != PLD_INT32 || recv_counts.ndim != 2 || recv_counts.shape[0] != p ||
        recv_counts.shape[1] != 1)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "recv_counts '%s' must be INT32 [P,1] with %s=%d (got %s %s)",
                    recv_counts.buf->name, pld__pname(c), p, pld_dtype_name(recv_counts.dtype),
                    pld__fmt_dims(dims, sizeof dims, recv_counts.shape, recv_counts.ndim));
    if (pld__tensor_in_window(c, input, target.buf))
        pld__kraise(c, PLD_ERR_ALIAS, api, "input lies inside target window '%s'",
                    target.buf->name);
    if (recv_counts.buf == signal.buf || target.buf == signal.buf || target.buf == recv_counts.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api,
                    "signal '%s', recv_counts '%s' and target '%s' must be distinct windows",
                    signal.buf->name, recv_counts.buf->name, target.buf->name);
    if (pld__tensor_in_window(c, send_counts, signal.buf) ||
        pld__tensor_in_window(c, send_counts, recv_counts.buf))
        pld__kraise(c, PLD_ERR_ALIAS, api,
                    "send_counts lies inside the signal or recv_counts window");
    const int32_t *counts = send_counts.data;
    for (int d = 0; d < p; d++)
        if (counts[d] < 0)
            pld__kraise(c, PLD_ERR_DATA, api, "send_counts[%d] = %d is negative", d,
                        (int)counts[d]);
    pld__coll_fp fp;
    pld__fp_init(&fp, PLD__K_ALL_TO_ALL_V, api, signal);
    fp.wire.m = m;
    pld__fp_window(&fp, target);
    pld__fp_window(&fp, recv_counts);
    pld__fp_tensor(&fp, input, 0);
    pld__coll_enter(c, api, signal, &fp, "%s, %s, M=%lld", target.buf->name, signal.buf->name,
                    (long long)m);
    pld_dtensor lines = {0};
    int64_t row = 0;
    int peers = pld__ll_count_line(c, &lines, &row);
    int32_t own = counts[c->rank] > m ? (int32_t)m : counts[c->rank];
    /* the planted bug publishes the counts and completes the barrier first */
    int counts_first = PLD__MUTANT(a2av_count_first);
    if (counts_first) {
        for (int i = 1; i < p && peers; i++)
            publish_count(c, lines, row, (c->rank + i) % p, counts[(c->rank + i) % p], m);
        pld__credit_barrier(c, signal, 0, 1);
    }
    /* step 1: push the M-row block and publish the clamped count */
    for (int i = 1; i <= p; i++) {
        int d = (c->rank + i) % p;
        pld__coll_put_rows(c, api, target, d, (int64_t)c->rank * m, input, (int64_t)d * m, m);
        if (!counts_first && d != c->rank && peers)
            publish_count(c, lines, row, d, counts[d], m);
    }
    /* step 2: completion barrier; then my counts from my lines */
    if (!counts_first)
        pld__credit_barrier(c, signal, 0, 1);
    copy_counts(c, lines, row, recv_counts, own);
    pld__credit_epilogue(c, signal, 0, 1);
    pld__coll_leave(c, signal);
}
