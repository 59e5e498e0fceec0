/* SPDX-License-Identifier: Apache-2.0 */
/* The builtins' one-round forms (the path of ll.h): each rank sends its
 * payload for every peer into that peer's inbox with the flag of the call,
 * waits for every peer's flag, and builds its output from its own inbox.
 *
 * Cost cards (per rank, S = row bytes, N = the whole window, P ranks):
 *   allgather       (P-1)*S to peers (inboxes); S self (own row; none in
 *                   place) + (P-1)*S self (copy-out); 1 round
 *   all_to_all      (P-1)*S to peers; S + (P-1)*S self; 1 round
 *   broadcast       root: (P-1)*N to peers; non-root: N self (copy-out);
 *                   1 round (non-roots send empty flags)
 *   reduce_scatter  (P-1)*S to peers; (P-1)*S self (reducing the inbox
 *                   and its own row in rank order); 1 round
 *   allreduce       (P-1)*N to peers; (P-1)*N self; 1 round
 * Every one waits P-1 times and notifies P-1 times; no epilogue, and the
 * user's signal is not touched. */
#include "coll/ll.h"

/* Every peer's row out of the inbox into its row of the [P,S] window t2,
 * left neighbour first (allgather, all_to_all). */
static void copy_out_rows(pld_ctx *c, const char *api, const pld__ll *ll, pld_dtensor t2)
{
    int me = c->rank, p = c->nranks;
    for (int i = 1; i < p; i++) {
        int src = (me + p - i) % p;
        pld__ll_copy_out(c, api, ll, src, t2, src, t2.shape[1]);
    }
}

int pld__ll_allgather(pld_ctx *c, const char *api, pld_dtensor t2, pld_tensor l2, int inplace)
{
    pld__ll ll;
    size_t row = (size_t)t2.shape[1] * pld_dtype_size(t2.dtype);
    if (!pld__ll_begin(c, row, PLD__LL_PUSH, &ll))
        return 0;
    int me = c->rank, p = c->nranks;
    const unsigned char *mine = (const unsigned char *)l2.data + (inplace ? (size_t)me * row : 0);
    for (int i = 1; i < p; i++)
        pld__ll_send(c, &ll, (me + i) % p, mine, row, t2.dtype);
    pld__ll_wait_all(c, &ll);
    if (!inplace) /* my own row */
        pld__coll_put_rows(c, api, t2, me, me, l2, 0, 1);
    copy_out_rows(c, api, &ll, t2);
    return 1;
}

int pld__ll_all_to_all(pld_ctx *c, const char *api, pld_dtensor t2, pld_tensor in2)
{
    pld__ll ll;
    size_t row = (size_t)t2.shape[1] * pld_dtype_size(t2.dtype);
    if (!pld__ll_begin(c, row, PLD__LL_PUSH, &ll))
        return 0;
    int me = c->rank, p = c->nranks;
    const unsigned char *in = in2.data;
    for (int i = 1; i < p; i++) {
        int d = (me + i) % p;
        pld__ll_send(c, &ll, d, in + (size_t)d * row, row, t2.dtype);
    }
    pld__ll_wait_all(c, &ll);
    pld__coll_put_rows(c, api, t2, me, me, in2, me, 1);
    copy_out_rows(c, api, &ll, t2);
    return 1;
}

/* A window of broadcast or allreduce, seen whole: one row of n elements,
 * this rank's slice of it, and its bytes (the payload for each peer). */
typedef struct whole {
    pld_dtensor flat;
    pld_tensor mine;
    int64_t n;
    size_t bytes;
} whole;

static whole whole_of(pld_ctx *c, pld_dtensor data)
{
    whole w = {.flat = pld__dtensor_flat(data)};
    w.n = w.flat.shape[1];
    w.mine = pld__tensor_2d(pld_local(c, data), 1, w.n);
    w.bytes = (size_t)w.n * pld_dtype_size(data.dtype);
    return w;
}

int pld__ll_broadcast(pld_ctx *c, const char *api, pld_dtensor data, int root)
{
    pld__ll ll;
    whole w = whole_of(c, data);
    if (!pld__ll_begin(c, w.bytes, PLD__LL_COPY, &ll))
        return 0;
    int me = c->rank, p = c->nranks;
    /* the root's data to every non-root; from the others an empty flag to
     * everyone: every rank hears from every peer in the round */
    for (int i = 1; i < p; i++)
        pld__ll_send(c, &ll, (me + i) % p, w.mine.data, me == root ? w.bytes : 0, data.dtype);
    if (PLD__MUTANT(ll_no_wait)) { /* the planted bug: hear from the root only */
        if (me != root)
            pld__ll_wait_from(c, &ll, root);
    } else {
        pld__ll_wait_all(c, &ll);
    }
    if (me != root)
        pld__ll_copy_out(c, api, &ll, root, w.flat, 0, w.n);
    return 1;
}

int pld__ll_reduce_scatter(pld_ctx *c, const char *api, pld_dtensor d2, pld_reduce_op op)
{
    pld__ll ll;
    int64_t s = d2.shape[1];
    size_t row = (size_t)s * pld_dtype_size(d2.dtype);
    if (!pld__ll_begin(c, row, PLD__LL_REDUCE, &ll))
        return 0;
    int me = c->rank, p = c->nranks;
    pld_tensor mine = pld__tensor_2d(pld_local(c, d2), 1, (int64_t)p * s);
    for (int i = 1; i < p; i++) {
        int d = (me + i) % p;
        pld__ll_send(c, &ll, d, (const unsigned char *)mine.data + (size_t)d * row, row, d2.dtype);
    }
    pld__ll_wait_all(c, &ll);
    pld__ll_reduce(c, api, &ll, mine, pld__dtensor_flat(d2), (int64_t)me * s, s, op);
    return 1;
}

int pld__ll_allreduce(pld_ctx *c, const char *api, pld_dtensor data, pld_reduce_op op)
{
    pld__ll ll;
    whole w = whole_of(c, data);
    if (!pld__ll_begin(c, w.bytes, PLD__LL_REDUCE, &ll))
        return 0;
    int me = c->rank, p = c->nranks;
    for (int i = 1; i < p; i++)
        pld__ll_send(c, &ll, (me + i) % p, w.mine.data, w.bytes, data.dtype);
    pld__ll_wait_all(c, &ll);
    pld__ll_reduce(c, api, &ll, w.mine, w.flat, 0, w.n, op);
    return 1;
}
