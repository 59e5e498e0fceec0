/* SPDX-License-Identifier: Apache-2.0 */
/* Checks and helpers shared by the indexed (MoE) collectives, and the URMA
 * queue model of a remote send. */
#include <stdio.h>

#include "coll/indexed.h"

void pld__indexed_check(pld_ctx *c, const char *api, pld_dtensor signal, pld_dtensor send_counts,
                        pld_tensor index, int64_t nmax, int64_t h, size_t elt, int core_num,
                        pld__indexed *out)
{
    char dims[96];
    int p = c->nranks;
    if (core_num < 1 || core_num > c->w->profile.aiv_cores)
        pld__kraise(c, PLD_ERR_ARG, api, "core_num %d not in [1, %d] (AIV cores of %s)", core_num,
                    c->w->profile.aiv_cores, c->w->profile.name);
    pld__check_tensor(c, api, "index", index);
    pld__check_dtensor(c, api, "send_counts", send_counts);
    pld__check_dtensor(c, api, "signal", signal);
    if (signal.buf == send_counts.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api, "signal and send_counts are the same window '%s'",
                    signal.buf->name);
    pld__coll_check_signal(c, api, signal, core_num);
    if (index.dtype != PLD_INT32 || index.ndim != 2 || index.shape[0] != p)
        pld__kraise(c, PLD_ERR_ARG, api, "index must be INT32 [%s=%d, C] (got %s %s)",
                    pld__pname(c), p, pld_dtype_name(index.dtype),
                    pld__fmt_dims(dims, sizeof dims, index.shape, index.ndim));
    if (send_counts.dtype != PLD_INT32 || send_counts.ndim != 2 || send_counts.shape[0] != p ||
        send_counts.shape[1] != 1)
        pld__kraise(c, PLD_ERR_ARG, api, "send_counts '%s' must be INT32 [%s=%d, 1] (got %s %s)",
                    send_counts.buf->name, pld__pname(c), p, pld_dtype_name(send_counts.dtype),
                    pld__fmt_dims(dims, sizeof dims, send_counts.shape, send_counts.ndim));
    out->nmax = nmax;
    out->h = h;
    out->cap = index.shape[1];
    out->row_bytes = (size_t)h * elt;
    out->counts = pld_local(c, send_counts).data;
    out->index = index.data;
    /* data preconditions: checked, never clamped, before anything moves */
    for (int d = 0; d < p; d++) {
        int32_t n = out->counts[d];
        if (n < 0 || n > out->cap)
            pld__kraise(c, PLD_ERR_DATA, api,
                        "send_counts[%d] = %d for peer %d is outside [0, C=%lld]", d, (int)n, d,
                        (long long)out->cap);
        for (int64_t j = 0; j < n; j++) {
            int32_t v = out->index[d * out->cap + j];
            if (v < 0 || v >= nmax)
                pld__kraise(c, PLD_ERR_DATA, api,
                            "index[%d][%lld] = %d for peer %d is outside [0, Nmax=%lld)", d,
                            (long long)j, (int)v, d, (long long)nmax);
        }
    }
}

int64_t pld__indexed_ranges(const int32_t *idx, int64_t n,
                            void (*fn)(int64_t slot, int64_t row, int64_t rows, void *arg),
                            void *arg)
{
    int64_t runs = 0;
    for (int64_t j = 0; j < n;) {
        int64_t k = j + 1;
        while (k < n && idx[k] == idx[k - 1] + 1)
            k++;
        if (fn)
            fn(j, idx[j], k - j, arg);
        runs++;
        j = k;
    }
    return runs;
}

int64_t pld__urma_wqebbs_needed(int64_t rows)
{
    return (rows + PLD__URMA_ROWS_PER_SQE - 1) / PLD__URMA_ROWS_PER_SQE * PLD__URMA_WQEBB_PER_SQE;
}

void pld__urma_count(pld_ctx *c, int peer, int64_t rows, int64_t ranges, uint64_t t0)
{
    pld__urma_send u;
    pld__urma_plan(rows, &u);
    pld_counters *k = &c->ag->counters;
    k->urma_sqes += (uint64_t)u.sqes;
    k->urma_wqebbs += (uint64_t)u.wqebbs;
    k->urma_nops += (uint64_t)u.nops;
    k->urma_doorbells += (uint64_t)u.doorbells;
    k->urma_cqes += (uint64_t)u.cqes;
    k->merged_ranges += (uint64_t)ranges;
    pld__note_urma(c, peer, rows, ranges, u.sqes, u.wqebbs, u.nops, u.doorbells, u.cqes, t0);
}

void pld__urma_plan(int64_t rows, pld__urma_send *out)
{
    out->sqes = (rows + PLD__URMA_ROWS_PER_SQE - 1) / PLD__URMA_ROWS_PER_SQE;
    out->wqebbs = out->sqes * PLD__URMA_WQEBB_PER_SQE;
    /* full SQEs use all 4 WQEBBs; the last one pads its unused tail with NOPs */
    int64_t last = rows - (out->sqes - 1) * PLD__URMA_ROWS_PER_SQE;
    out->nops = rows ? PLD__URMA_WQEBB_PER_SQE -
                           (last + PLD__URMA_ROWS_PER_WQEBB - 1) / PLD__URMA_ROWS_PER_WQEBB
                     : 0;
    out->doorbells = (out->sqes + PLD__URMA_SQES_PER_DOORBELL - 1) / PLD__URMA_SQES_PER_DOORBELL;
    out->cqes = rows ? 1 : 0; /* only the last WRITE asks for a completion */
}
