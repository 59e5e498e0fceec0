/* SPDX-License-Identifier: Apache-2.0 */
/* The MoE exchange's shared checks and count helpers (see moe.h). */
#include <stdint.h>

#include "coll/moe.h"

static void check_layout(pld_ctx *c, const char *api, const pld_moe_layout *l)
{
    if (!l)
        pld__kraise(c, PLD_ERR_ARG, api, "layout is NULL");
    if (l->experts_per_rank < 1 || l->max_rows < 1)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "layout experts_per_rank = %d and max_rows = %lld must both be >= 1",
                    l->experts_per_rank, (long long)l->max_rows);
    /* expert_offsets and the places are INT32 rows of the target */
    if ((int64_t)c->nranks * l->experts_per_rank > INT32_MAX / l->max_rows)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "%s*E*M = %d*%d*%lld rows do not fit the INT32 expert_offsets", pld__pname(c),
                    c->nranks, l->experts_per_rank, (long long)l->max_rows);
}

void pld__moe_check_rows(pld_ctx *c, const char *api, const pld__moe *m, pld_dtype dtype,
                         const char *what, pld_tensor t, int64_t rows, int64_t cols)
{
    char dims[96];
    if (t.dtype != dtype || t.ndim != 2 || t.shape[0] != rows || t.shape[1] != cols)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "%s is %s %s; it must be %s [%s*E*M=%lld, H=%lld] (%s=%d, E=%d, M=%lld)", what,
                    pld_dtype_name(t.dtype), pld__fmt_dims(dims, sizeof dims, t.shape, t.ndim),
                    pld_dtype_name(dtype), pld__pname(c), (long long)rows, (long long)cols,
                    pld__pname(c), m->p, m->e, (long long)m->m);
}

static void check_counts_shape(pld_ctx *c, const char *api, const char *what, pld_dtype dtype,
                               int ndim, const int64_t *shape, int ne)
{
    char dims[96];
    if (dtype != PLD_INT32 || ndim != 2 || shape[0] != c->nranks || shape[1] != ne)
        pld__kraise(c, PLD_ERR_ARG, api, "%s must be INT32 [%s=%d, E=%d] (got %s %s)", what,
                    pld__pname(c), c->nranks, ne, pld_dtype_name(dtype),
                    pld__fmt_dims(dims, sizeof dims, shape, ndim));
}

void pld__moe_check(pld_ctx *c, const char *api, const pld_moe_layout *l, pld_dtensor data,
                    const char *data_name, pld_dtensor signal, pld_tensor send_counts,
                    pld_dtensor recv_counts, pld__moe *out)
{
    char dims[96];
    check_layout(c, api, l);
    int p = c->nranks, ne = l->experts_per_rank;
    int64_t m = l->max_rows, rows = (int64_t)p * ne * m;
    pld__check_dtensor(c, api, data_name, data);
    pld__check_tensor(c, api, "send_counts", send_counts);
    pld__check_dtensor(c, api, "recv_counts", recv_counts);
    pld__coll_check_signal(c, api, signal, 1);
    if (data.ndim != 2 || data.shape[0] != rows)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "%s '%s' is %s; it must be [%s*E*M=%lld, H] (%s=%d, E=%d, M=%lld)", data_name,
                    data.buf->name, pld__fmt_dims(dims, sizeof dims, data.shape, data.ndim),
                    pld__pname(c), (long long)rows, pld__pname(c), p, ne, (long long)m);
    check_counts_shape(c, api, "send_counts", send_counts.dtype, send_counts.ndim,
                       send_counts.shape, ne);
    check_counts_shape(c, api, "recv_counts", recv_counts.dtype, recv_counts.ndim,
                       recv_counts.shape, ne);
    if (signal.buf == recv_counts.buf || signal.buf == data.buf || recv_counts.buf == data.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api,
                    "signal '%s', recv_counts '%s' and %s '%s' must be distinct windows",
                    signal.buf->name, recv_counts.buf->name, data_name, data.buf->name);
    if (pld__tensor_in_window(c, send_counts, signal.buf) ||
        pld__tensor_in_window(c, send_counts, recv_counts.buf) ||
        pld__tensor_in_window(c, send_counts, data.buf))
        pld__kraise(c, PLD_ERR_ALIAS, api,
                    "send_counts lies inside the signal, recv_counts or %s window", data_name);
    const int32_t *send = send_counts.data;
    for (int d = 0; d < p; d++)
        for (int e = 0; e < ne; e++) {
            int32_t v = send[(int64_t)d * ne + e];
            if (v < 0 || v > m)
                pld__kraise(c, PLD_ERR_DATA, api,
                            "send_counts[%d][%d] = %d (rows for expert %d of rank %d) is outside "
                            "[0, M=%lld]",
                            d, e, (int)v, e, d, (long long)m);
        }
    *out = (pld__moe){.p = p,
                      .e = ne,
                      .m = m,
                      .h = data.shape[1],
                      .send = send,
                      .send2 = send_counts,
                      .recv2 = recv_counts,
                      .data2 = data};
}

pld_tile *pld__moe_counts_tile(pld_ctx *c, const char *api, const pld__moe *m)
{
    return pld__tile_alloc(c, api, PLD_INT32, m->p, m->e);
}

void pld__moe_pull_counts(pld_ctx *c, const char *api, const pld__moe *m, int peer, int32_t *dst)
{
    int64_t shape[2] = {m->p, m->e};
    pld_tensor t = pld_tensor_make(dst, PLD_INT32, 2, shape);
    pld__coll_get_rows(c, api, t, 0, m->recv2, peer, 0, m->p);
}

void pld__moe_places(const int64_t *tot, const int64_t *before, int ne, int64_t *place)
{
    int64_t start = 0;
    for (int e = 0; e < ne; e++) {
        place[e] = start + before[e];
        start += tot[e];
    }
}
