/* SPDX-License-Identifier: Apache-2.0 */
/* A table row from a launch's result: see row.h. */
#include "row.h"

#include "cli.h"

double bench_row_time_ns(const bench_class *cl, int average)
{
    switch (average) {
    case 0:
        return cl->time_ns_first;
    case 2:
        return cl->time_ns_min;
    case 3:
        return cl->time_ns;
    default:
        return cl->time_ns_avg;
    }
}

void bench_row_make(const bench_row_spec *rs, const bench_result *res, int k, bench_row *row,
                    uint64_t *moved, int *copiers)
{
    const bench_class *cl = &res->cls[k];
    const bench_shape *sh = &cl->shape;
    bench_coll c = rs->coll;
    size_t esz = pld_dtype_size(rs->dtype);
    *row = (bench_row){.bytes = sh->bytes,
                       .count = sh->count,
                       .type = c == BENCH_BARRIER ? "-" : pld_dtype_name(rs->dtype),
                       .redop = bench_coll_reduces(c) ? cli_op_name(rs->op) : "none",
                       .root = c == BENCH_BROADCAST ? rs->root : -1,
                       .time_us = bench_row_time_ns(cl, rs->average) / 1e3,
                       .wrong = cl->wrong,
                       .card_ok = 1};
    if (row->time_us > 0 && sh->bytes > 0) {
        row->algbw = (double)sh->bytes / (row->time_us * 1e3);
        row->busbw = row->algbw * bench_busbw_factor(c, cl->t);
    }
    *moved = 0;
    *copiers = 0;
    for (int q = 0; q < rs->p; q++) {
        if (res->rank_class[q] != k)
            continue;
        const pld_counters *m = &res->counters[q];
        bench_card card;
        bench_card_make(c, rs->mode, cl->t, res->group_rank[q], rs->root, sh, esz, rs->ub_bytes,
                        rs->ll_bytes, &rs->tune, &card);
        uint64_t n = res->ncalls, peer = (m->bytes_to_peers + m->bytes_from_peers) / n;
        if (m->bytes_to_peers != card.to_peers * n || m->bytes_from_peers != card.from_peers * n ||
            m->bytes_self != card.self * n)
            row->card_ok = 0;
        row->peer_bytes = peer > row->peer_bytes ? peer : row->peer_bytes;
        uint64_t want = card.to_peers + card.from_peers;
        row->card_bytes = want > row->card_bytes ? want : row->card_bytes;
        row->self_bytes = m->bytes_self / n > row->self_bytes ? m->bytes_self / n : row->self_bytes;
        uint64_t all = m->bytes_to_peers + m->bytes_from_peers + m->bytes_self;
        *moved += all;
        *copiers += all > 0;
    }
}
