/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the builtin collectives. */
#include <stdarg.h>
#include <stdio.h>

#include "coll/coll_util.h"
#include "coll/sync.h"
#include "tune/tune.h"

int64_t pld__coll_chunk_elems(pld_ctx *c, const char *api, size_t esz, int tiles)
{
    size_t free_ub = c->agent->ub_cap - c->agent->ub_used;
    int64_t n = (int64_t)(free_ub / ((size_t)tiles * esz));
    if (n >= 64)
        n -= n % 64; /* whole cache lines per chunk */
    if (n < 1)
        pld__kraise(c, PLD_ERR_NOMEM, api,
                    "%d staging tiles of one %zu-byte element do not fit the %zu free UB bytes",
                    tiles, esz, free_ub);
    return n;
}

int pld__tensor_in_window(pld_ctx *c, pld_tensor t, const pld_window_buffer *buf)
{
    uintptr_t lo = (uintptr_t)t.data;
    int64_t n = pld_tensor_numel(t);
    /* a count that does not fit reaches everything (its checks reject it) */
    uintptr_t hi = n < 0 ? UINTPTR_MAX : lo + (uintptr_t)n * pld_dtype_size(t.dtype);
    for (int r = 0; r < c->w->nranks; r++) { /* every slice, in a team view too */
        const unsigned char *p = c->tp->window_peer_ptr(c->w, (pld_window_buffer *)buf, r);
        if (!p)
            continue;
        uintptr_t wlo = (uintptr_t)p, whi = wlo + buf->bytes;
        if (lo < whi && wlo < hi)
            return 1;
    }
    return 0;
}

int64_t pld__dtensor_numel(pld_dtensor t)
{
    int64_t n = 1;
    for (int i = 0; i < t.ndim; i++)
        n *= t.shape[i];
    return n;
}

pld_dtensor pld__dtensor_flat(pld_dtensor t)
{
    pld_dtensor f = t;
    f.ndim = 2;
    f.shape[0] = 1;
    f.shape[1] = pld__dtensor_numel(t);
    f.shape[2] = f.shape[3] = 0;
    return f;
}

void pld__coll_enter(pld_ctx *c, const char *api, pld_dtensor signal, const pld__coll_fp *fp,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pld__call_enter(c, api, signal, fp, fmt, ap);
    va_end(ap);
    /* the listing says when the rounds take a log-depth form (the full
     * form of small groups is what the listing's notifies already show) */
    pld_sync_form form;
    if (PLD__UNLIKELY(c->ir) && (form = pld__sync_form_of(c)) != PLD_SYNC_FULL) {
        pld_sync_info in;
        pld__sync_info(form, c->nranks, c->rank, c->sync_fanout, &in);
        char kids[48] = "";
        if (in.form == PLD_SYNC_TREE)
            snprintf(kids, sizeof kids, ", %d children per rank", in.fanout);
        pld__ir_emit(c->ir, c->depth,
                     "sync: %s rounds%s (%d hops, %lld notifies a round over %d ranks)",
                     pld_sync_form_name(in.form), kids, in.hops, in.group_notifies, c->nranks);
    }
}

void pld__coll_leave(pld_ctx *c, pld_dtensor signal)
{
    pld__call_leave(c, signal);
}

void pld__coll_check_reduce(pld_ctx *c, const char *api, pld_dtype dtype, pld_reduce_op op)
{
    if ((unsigned)op > PLD_PROD)
        pld__kraise(c, PLD_ERR_ARG, api, "op %d is not a pld_reduce_op (Sum, Max, Min, Prod)",
                    (int)op);
    if (dtype != PLD_FP32 && dtype != PLD_FP16 && dtype != PLD_BF16 && dtype != PLD_INT32)
        pld__kraise(c, PLD_ERR_UNSUPPORTED, api,
                    "reductions support fp32, fp16, bf16 and int32, not %s", pld_dtype_name(dtype));
}

/* Chunk sizes for a [rows, cols] block moved through two staging tiles. */
static void plan_chunks(pld_ctx *c, const char *api, size_t esz, int64_t rows, int64_t cols,
                        pld_xfer *x)
{
    if ((uint64_t)rows * (uint64_t)cols * esz <= (c->agent->ub_cap - c->agent->ub_used))
        return; /* fits whole: one staging pass */
    int64_t ch = pld__coll_chunk_elems(c, api, esz, 2);
    x->chunk_cols = cols < ch ? cols : ch;
    x->chunk_rows = ch / x->chunk_cols;
    if (x->chunk_rows > rows)
        x->chunk_rows = rows;
    x->pipeline = 1;
}

void pld__coll_put_rows(pld_ctx *c, const char *api, pld_dtensor dst, int peer, int64_t dst_row,
                        pld_tensor src, int64_t src_row, int64_t rows)
{
    int64_t cols = dst.shape[1];
    int64_t doff[2] = {dst_row, 0}, soff[2] = {src_row, 0}, shape[2] = {rows, cols};
    pld_xfer x = {.dst_offsets = doff, .src_offsets = soff, .shape = shape};
    plan_chunks(c, api, pld_dtype_size(dst.dtype), rows, cols, &x);
    pld__put_rows_checked(c, dst, peer, dst_row, src, src_row, rows, &x);
}

/* Pieces of a fanned-out row: as large as the transports' streaming copies
 * start (src/transport/shm/copy.h), small enough to stay in L2. */
#define PLD__FAN_PIECE ((size_t)1 << 20)

void pld__coll_put_row_to_all(pld_ctx *c, const char *api, pld_dtensor dst, int64_t dst_row,
                              pld_tensor src, int64_t src_row, int with_self)
{
    int last = with_self ? c->nranks : c->nranks - 1;
    size_t row = (size_t)dst.shape[1] * pld_dtype_size(dst.dtype);
    if (pld__observed(c) || row <= PLD__FAN_PIECE || last < 2) {
        for (int i = 1; i <= last; i++)
            pld__coll_put_rows(c, api, dst, (c->rank + i) % c->nranks, dst_row, src, src_row, 1);
        return;
    }
    /* A large row goes out piece by piece, each piece to every rank in turn:
     * it is read from memory once and from cache for the other ranks, where
     * whole-row puts read it once per rank (P=4, 64 MiB allgather 14.2 ->
     * 9.7 ms, in place 11.7 -> 8.0 ms; P=2 64 MiB 6.7 -> 6.2 ms). The bytes,
     * and so the counters, are the same; the listing shows the whole-row
     * puts, and a trace one slice per piece. */
    pld__coll_chunk_elems(c, api, pld_dtype_size(dst.dtype), 2); /* the staging budget rule */
    const unsigned char *from = (const unsigned char *)src.data + (size_t)src_row * row;
    for (size_t off = 0; off < row; off += PLD__FAN_PIECE) {
        size_t n = row - off < PLD__FAN_PIECE ? row - off : PLD__FAN_PIECE;
        for (int i = 1; i <= last; i++)
            pld__put_run(c, "pld_put", dst.buf, (c->rank + i) % c->nranks,
                         (size_t)dst_row * row + off, from + off, n);
    }
}

void pld__coll_get_rows(pld_ctx *c, const char *api, pld_tensor dst, int64_t dst_row,
                        pld_dtensor src, int peer, int64_t src_row, int64_t rows)
{
    int64_t cols = src.shape[1];
    int64_t doff[2] = {dst_row, 0}, soff[2] = {src_row, 0}, shape[2] = {rows, cols};
    pld_xfer x = {.dst_offsets = doff, .src_offsets = soff, .shape = shape};
    plan_chunks(c, api, pld_dtype_size(src.dtype), rows, cols, &x);
    pld__get_rows_checked(c, dst, dst_row, src, peer, src_row, rows, &x);
}

pld_tensor pld__tensor_2d(pld_tensor t, int64_t rows, int64_t cols)
{
    pld_tensor v = t;
    v.ndim = 2;
    v.shape[0] = rows;
    v.shape[1] = cols;
    v.shape[2] = v.shape[3] = 0;
    return v;
}

pld_dtensor pld__dtensor_2d(pld_dtensor t, int64_t rows, int64_t cols)
{
    pld_dtensor v = t;
    v.ndim = 2;
    v.shape[0] = rows;
    v.shape[1] = cols;
    v.shape[2] = v.shape[3] = 0;
    return v;
}

void pld__stage_begin(pld_ctx *c, const char *api, pld__stage *st, pld_dtype dtype, int64_t total,
                      int ntiles)
{
    int64_t ch = pld__coll_chunk_elems(c, api, pld_dtype_size(dtype), ntiles);
    st->ntiles = ntiles;
    st->dtype = dtype;
    st->width = total < ch ? total : ch;
    for (int i = 0; i < 2; i++)
        st->t[i] = i < ntiles ? pld_tile_create(c, dtype, 1, st->width) : NULL;
}

int64_t pld__stage_fit(pld_ctx *c, pld__stage *st, int64_t left)
{
    if (left < st->width) {
        st->width = left;
        for (int i = 0; i < st->ntiles; i++) {
            pld_tile_free(c, st->t[i]);
            st->t[i] = pld_tile_create(c, st->dtype, 1, left);
        }
    }
    return st->width;
}

void pld__stage_end(pld_ctx *c, pld__stage *st)
{
    for (int i = 0; i < st->ntiles; i++)
        pld_tile_free(c, st->t[i]);
}

void pld__load_reduce_first(pld_ctx *c, pld_tile *acc, pld_tensor mine, pld_dtensor src,
                            int64_t row, int64_t col, pld_reduce_op op)
{
    if (c->nranks == 1)
        pld__load_checked(c, acc, mine, row, col);
    else
        pld__load_reduce_checked(c, acc, mine, src, (c->rank + 1) % c->nranks, row, col, op);
}

void pld__coll_pull_range(pld_ctx *c, const char *api, pld_dtensor f, pld_tensor mine, int peer,
                          int64_t e0, int64_t e1, int reduce, pld_reduce_op op)
{
    if (e1 <= e0)
        return;
    if (!reduce && !pld__observed(c)) {
        /* a copy needs no staging here: one get of the range straight into
         * mine (the listing, and the race checker, see the staged tiles) */
        size_t esz = pld_dtype_size(f.dtype);
        pld__check_live(c);
        pld__get_run(c, "pld_remote_load", (unsigned char *)mine.data + (size_t)e0 * esz, f.buf,
                     peer, (size_t)e0 * esz, (size_t)(e1 - e0) * esz);
        return;
    }
    pld__stage st;
    pld__stage_begin(c, api, &st, f.dtype, e1 - e0, 1);
    for (int64_t c0 = e0; c0 < e1; c0 += st.width) {
        pld__stage_fit(c, &st, e1 - c0);
        pld_tile *t = st.t[0];
        if (reduce) { /* my elements op the peer's, in one pass */
            pld__load_reduce_checked(c, t, mine, f, peer, 0, c0, op);
        } else {
            int64_t at[2] = {0, c0};
            pld_remote_load(c, t, f, peer, at);
        }
        pld__store_checked(c, t, mine, 0, c0);
    }
    pld__stage_end(c, &st);
}

void pld__coll_note_push_or(pld_ctx *c, int other, const char *name, const char *trace_name,
                            const double pred[2], size_t bytes, const char *unit, int ruled)
{
    if (!ruled) /* a rule's choice has its own note (pld__coll_rule) */
        pld__note(c, "auto: %s (predicted %.1f us; push %.1f us, %s %.1f us; %zu B %s, %d ranks)",
                  other ? name : "push", pred[other], pred[0], name, pred[1], bytes, unit,
                  c->nranks);
    /* the trace keeps the name, not a copy: a literal */
    pld__trace_choice(c, other ? trace_name : "auto: push", pred[other]);
}

int pld__coll_rule(pld_ctx *c, pld_rule_coll coll, uint64_t bytes, const char *(*name_of)(int32_t),
                   int *choice_out)
{
    const pld__rules *rs = &c->w->sh->rules;
    int line = rs->n ? pld__rules_pick(rs, coll, c->nranks, bytes, choice_out) : 0;
    if (line)
        pld__note(c, "auto: %s (rule %s:%d; %llu B, %d ranks)", name_of(*choice_out), rs->path,
                  line, (unsigned long long)bytes, c->nranks);
    return line;
}
