/* SPDX-License-Identifier: Apache-2.0 */
/* All-to-all by Bruck's algorithm (PLD_A2A_BRUCK): ceil(log2 P) puts per
 * rank instead of P-1, for small chunks and many ranks.
 *
 * Rank r keeps its chunks in host memory, in a work array indexed from
 * itself: entry i starts as the chunk r made for rank r+i (mod P). Step k
 * (h = 2^k, k = 0 .. ceil(log2 P)-1) moves every entry whose index has
 * bit k set from rank r to rank r+h, into the same index; after the last
 * step entry i of rank r holds the chunk rank r-i made for r, so row s of
 * the target is entry (r-s) mod P. The target window doubles as the
 * landing area: an incoming step lands in its last n rows in even steps,
 * its first n rows in odd ones (n = how many indices below P have bit k
 * set, the same on every rank, at most P/2: the two areas never overlap).
 *   ready   Set the call's first epoch into my cell of rank r-h's flag
 *           lines: my landing area of step k is free (sent for steps 0
 *           and 1 on entry, for step k+2 once step k is unpacked)
 *   pack    copy my entries with bit k set into a packed buffer
 *   wait    my cell of rank r+h >= first epoch: its landing area is free
 *   put     the packed entries into r+h's landing area, then Set the
 *           second epoch into my cell of its lines (data before flag)
 *   wait    my cell of rank r-h >= second epoch: its entries have landed
 *   unpack  get my landing rows and scatter them into my entries
 *   final   put the entries, in row order, into my own target
 *   round   (done) every rank has written its final rows, in the group's
 *           synchronisation form
 *   epilogue 1 credit back per cell
 * Within a Bruck call a peer writes my target only after my ready of the
 * same call. Why the round: a rank leaves its last step while others are
 * still unpacking or writing their final rows, and the next builtin may
 * be a push into the same target (only G orders it: every rank has
 * entered this call, not finished it). Without the round that push could
 * land in a landing area a slower rank has not unpacked yet, or in a row
 * its final put then overwrites (the protocol model found both, at P = 2,
 * 3 and 4). The steps alone connect every rank to every rank (each
 * rank's chunk reaches every rank through a chain of steps), and the
 * round keeps the ordering guarantee in its usual form. The left
 * neighbour's step-0 data is this rank's first news of it, which is when
 * the agreement check compares.
 * Flags: the one-round path's lines; the call takes two epochs (ll.h),
 * ready flags carry the first, data flags the second. A rank writes a
 * given rank's ready cell, and its data cell, at most once per call (its
 * partners r-h and r+h differ at every step, as h < P), so Set with
 * rising epochs and Ge waits reuse the lines as allgather_doubling.c does.
 * Cost card (B = chunks sent = sum over k of n, (P/2) log2 P for a power
 * of two; chunk = S x elt bytes): bytes_to_peers = B chunks, bytes_self =
 * B chunks (unpacking) + P chunks (the final rows); 1 round; notifies
 * and waits: the round's plus 2 ceil(log2 P) flags each. */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "coll/ll.h"

/* Copies n rows of `row` bytes. Chunks of a few bytes are what this
 * algorithm is for, and a run is often a single row: the common row sizes
 * get a copy the compiler inlines instead of a call into the C library. */
static void copy_rows(unsigned char *dst, const unsigned char *src, int64_t n, size_t row)
{
    if (n != 1) {
        memcpy(dst, src, (size_t)n * row);
        return;
    }
    switch (row) {
    case 4:
        memcpy(dst, src, 4);
        break;
    case 8:
        memcpy(dst, src, 8);
        break;
    case 16:
        memcpy(dst, src, 16);
        break;
    default:
        memcpy(dst, src, row);
        break;
    }
}

/* Copies the entries of work with bit k set, in index order, to or from
 * the packed rows of buf: runs of h = 2^k entries, one copy per run. */
static void pack_runs(unsigned char *work, unsigned char *buf, int p, int k, size_t row, int out)
{
    int64_t h = (int64_t)1 << k;
    size_t j = 0;
    for (int64_t i = h; i < p; i += 2 * h) {
        int64_t n = i + h <= p ? h : p - i;
        if (out)
            copy_rows(buf + j * row, work + (size_t)i * row, n, row);
        else
            copy_rows(work + (size_t)i * row, buf + j * row, n, row);
        j += (size_t)n;
    }
}

/* Where step k lands in the target: the last n rows in even steps, the
 * first n in odd ones (n <= P/2, so the two areas never overlap). */
static int64_t landing_row(int p, int k)
{
    return k % 2 ? 0 : p - pld__bit_count(p, k);
}

/* Tells rank me - 2^k that my landing area of step k is free. */
static void ready(pld_ctx *c, pld_dtensor lines, int64_t row1, int32_t e1, int k)
{
    int p = c->nranks, from = (c->rank - (1 << k) % p + p) % p;
    pld__notify_checked(c, lines, from, row1 + c->rank, 0, e1, PLD_NOTIFY_SET);
}

/* The steps and the final rows (work, buf: P rows each, on the heap). */
static void run(pld_ctx *c, const char *api, pld_dtensor t2, pld_tensor in2, unsigned char *work,
                unsigned char *buf)
{
    int p = c->nranks, me = c->rank;
    size_t row = (size_t)t2.shape[1] * pld_dtype_size(t2.dtype);
    /* entry i = the chunk for rank me+i: two runs of the input */
    const unsigned char *in = in2.data;
    memcpy(work, in + (size_t)me * row, (size_t)(p - me) * row);
    memcpy(work + (size_t)(p - me) * row, in, (size_t)me * row);
    pld_dtensor lines;
    int64_t row1, row2;
    if (pld__ll_count_line(c, &lines, &row1)) { /* two ranks or more */
        int32_t e1 = c->ll_epoch;
        pld__ll_count_line(c, &lines, &row2);
        int32_t e2 = c->ll_epoch;
        int steps = pld__ceil_log2(p);
        /* both landing areas are free: the last call's rows are read */
        for (int k = 0; k < 2 && k < steps; k++)
            ready(c, lines, row1, e1, k);
        for (int k = 0; k < steps; k++) {
            int h = 1 << k, to = (me + h) % p, from = (me - h + p) % p;
            int64_t n = pld__bit_count(p, k), land = landing_row(p, k);
            pld_tensor packed = pld_tensor_make(buf, t2.dtype, 2, PLD_IDX(n, t2.shape[1]));
            pack_runs(work, buf, p, k, row, 1);
            if (!(k == 0 && PLD__MUTANT(bruck_no_ready)))
                pld__wait_checked(c, lines, row1 + to, 0, e1, PLD_WAIT_GE);
            int early = PLD__MUTANT(bruck_flag_first);
            if (early)
                pld__notify_checked(c, lines, to, row2 + me, 0, e2, PLD_NOTIFY_SET);
            pld__coll_put_rows(c, api, t2, to, land, packed, 0, n);
            if (!early)
                pld__notify_checked(c, lines, to, row2 + me, 0, e2, PLD_NOTIFY_SET);
            pld__wait_checked(c, lines, row2 + from, 0, e2, PLD_WAIT_GE);
            if (k == 0) /* the left neighbour has published its call */
                pld__call_round(c);
            pld__coll_get_rows(c, api, packed, 0, t2, me, land, n);
            pack_runs(work, buf, p, k, row, 0);
            if (k + 2 < steps) /* this landing area is free again */
                ready(c, lines, row1, e1, k + 2);
        }
    }
    /* row s of the target is entry (me - s) mod P: me, me-1, .., 0, then
     * P-1, P-2, .., me+1 */
    for (int s = 0; s < p; s++)
        copy_rows(buf + (size_t)s * row, work + (size_t)(s <= me ? me - s : me - s + p) * row, 1,
                  row);
    pld__coll_put_rows(c, api, t2, me, 0,
                       pld_tensor_make(buf, t2.dtype, 2, PLD_IDX(p, t2.shape[1])), 0, p);
}

void pld__all_to_all_bruck(pld_ctx *c, const char *api, pld_dtensor t2, pld_tensor in2,
                           pld_dtensor signal)
{
    size_t all = (size_t)c->nranks * (size_t)t2.shape[1] * pld_dtype_size(t2.dtype);
    unsigned char *work = malloc(2 * all + 1);
    if (!work)
        pld__kraise(c, PLD_ERR_NOMEM, api,
                    "the Bruck all-to-all needs 2 x %zu bytes of host memory per rank "
                    "(2 x P x S elements); use PLD_A2A_PUSH",
                    all);
    /* an error below leaves through the rank's jump buffer: free the
     * work array on the way out */
    jmp_buf outer;
    memcpy(&outer, &c->agent->jb, sizeof outer);
    if (setjmp(c->agent->jb)) {
        memcpy(&c->agent->jb, &outer, sizeof outer);
        free(work);
        pld__kexit_aborted(c);
    }
    run(c, api, t2, in2, work, work + all);
    memcpy(&c->agent->jb, &outer, sizeof outer);
    free(work);
    if (PLD__MUTANT(bruck_no_done))
        return;
    /* done: every rank's target holds its final rows; nothing of this call
     * lands in any target any more */
    pld__credit_barrier(c, signal, 0, 1);
    pld__credit_epilogue(c, signal, 0, 1);
}
