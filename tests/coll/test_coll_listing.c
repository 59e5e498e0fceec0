/* SPDX-License-Identifier: Apache-2.0 */
/* The lowering listing (pld_ir_enable + pld_ir_text) shows the seeds' IR
 * comparison:
 *   hand allgather    = stage (tile.store into my row), notify/wait barrier,
 *                       P remote_loads -- my own row included;
 *   builtin allgather = P puts (self included), the barrier after them, the
 *                       self-clearing epilogue ("+= -1"), no remote_load;
 *   builtin all_to_all ends with the barrier and epilogue: no loads;
 *   a builtin row larger than the UB is chunked through a staging tile
 *   ("chunks N of [r,c] staging B B").
 * Assertions are on stable substrings and on the order of lines. These are
 * the credit rounds: ctest runs the suite with PLD_LL_BYTES=0 (the
 * one-round path's listing is in test_coll.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "coll_util.h"

#define P 4
#define S 64

typedef struct lst {
    pld_dtensor data, tgt, sig;
    int which;
    int64_t s;
    float *x; /* inputs: P*s floats per rank, pld_host_alloc memory (on the process
               * transport a kernel's malloc is not a tensor) */
} lst;

enum { HAND_ALLGATHER, BUILTIN_ALLGATHER, BUILTIN_ALL_TO_ALL, BUILTIN_BARRIER };

static void k_listing(pld_ctx *c, void *arg)
{
    lst *a = arg;
    int me = pld_rank(c), p = pld_nranks(c);
    int64_t s = a->s;
    float *x = a->x + (size_t)me * (size_t)(p * s);
    pld_tensor local = pld_tensor_make(x, PLD_FP32, 2, PLD_IDX(1, s));
    switch (a->which) {
    case HAND_ALLGATHER: {
        pld_tile *t = pld_tile_create(c, PLD_FP32, 1, s);
        /* phase 1: stage my slice into my row */
        pld_load(c, t, local, PLD_IDX(0, 0));
        pld_store(c, t, pld_local(c, a->data), PLD_IDX(me, 0));
        /* phase 2: barrier */
        for (int q = 0; q < p; q++)
            if (q != me)
                pld_notify(c, a->sig, q, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
        for (int q = 0; q < p; q++)
            if (q != me)
                pld_wait(c, a->sig, PLD_IDX(q, 0), 1, PLD_WAIT_GE);
        /* phase 3: remote_load every row, mine included */
        for (int q = 0; q < p; q++)
            pld_remote_load(c, t, a->data, q, PLD_IDX(q, 0));
        break;
    }
    case BUILTIN_ALLGATHER:
        pld_allgather(c, local, a->tgt, a->sig);
        break;
    case BUILTIN_ALL_TO_ALL:
        pld_all_to_all(c, pld_tensor_make(x, PLD_FP32, 2, PLD_IDX(p, s)), a->tgt, a->sig);
        break;
    case BUILTIN_BARRIER:
        pld_barrier(c, a->sig);
        break;
    }
}

/* ---- reading the listing --------------------------------------------------- */

typedef struct listing {
    char *lines[256];
    int n;
    char *text;
} listing;

static void split(listing *l, const char *ir)
{
    l->text = strdup(ir);
    l->n = 0;
    for (char *save = NULL, *t = strtok_r(l->text, "\n", &save); t && l->n < 256;
         t = strtok_r(NULL, "\n", &save))
        l->lines[l->n++] = t;
}

/* Index of the first line at or after `from` containing `needle`, or -1. */
static int find(const listing *l, int from, const char *needle)
{
    for (int i = from < 0 ? 0 : from; i < l->n; i++)
        if (strstr(l->lines[i], needle))
            return i;
    return -1;
}

static int indent(const char *line)
{
    int n = 0;
    while (line[n] == ' ')
        n++;
    return n;
}

/* The set of peers in "<prefix>{1,2,3,0}" / "<prefix>{0..3}" / "<prefix>2" as
 * a bit mask. */
static unsigned peer_set(const char *line, const char *prefix)
{
    const char *p = strstr(line, prefix);
    if (!p)
        return 0;
    p += strlen(prefix);
    if (*p != '{')
        return 1u << atoi(p);
    unsigned mask = 0;
    for (p++; *p && *p != '}';) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            break;
        if (end[0] == '.' && end[1] == '.')
            b = strtol(end + 2, &end, 10);
        for (long i = a; i <= b && i < 32; i++)
            mask |= 1u << i;
        p = *end == ',' ? end + 1 : end;
    }
    return mask;
}

static pld_world *listing_of(int which, int64_t s, listing *l)
{
    pld_world *w = cu_world(P);
    lst *a = cu_alloc(w, sizeof *a);
    a->which = which;
    a->s = s;
    a->x = cu_alloc(w, sizeof(float) * (size_t)(P * P * s));
    a->data = tu_window(w, "data", PLD_FP32, 2, PLD_IDX(P, s));
    a->tgt = tu_window(w, "tgt", PLD_FP32, 2, PLD_IDX(P, s));
    a->sig = tu_signal(w, "sig", 1);
    pld_ir_enable(w, 1);
    TU_LAUNCH_OK(w, k_listing, a);
    split(l, pld_ir_text(w));
    cr_assert_gt(l->n, 1, "empty listing: \"%s\"", pld_ir_text(w));
    return w;
}

#define EXPECT_LINE(l, idx, what)                                                                  \
    cr_assert_geq((idx), 0, "no %s in the listing:\n%s", (what), pld_ir_text(w))

Test(listing, hand_allgather_stages_barriers_then_loads_every_row, .timeout = 30)
{
    listing l;
    pld_world *w = listing_of(HAND_ALLGATHER, S, &l);
    int stage = find(&l, 0, "tile.store");
    EXPECT_LINE(l, stage, "stage (tile.store)");
    int notify = find(&l, stage, "notify sig@peer");
    EXPECT_LINE(l, notify, "barrier notify after the stage");
    cr_expect(strstr(l.lines[notify], "+= 1") && strstr(l.lines[notify], "x3"),
              "barrier notifies: \"%s\"", l.lines[notify]);
    int wait = find(&l, notify, "wait sig");
    EXPECT_LINE(l, wait, "barrier wait after the notifies");
    cr_expect(strstr(l.lines[wait], ">= 1") && strstr(l.lines[wait], "x3"), "barrier waits: \"%s\"",
              l.lines[wait]);
    int load = find(&l, wait, "tile.remote_load");
    EXPECT_LINE(l, load, "remote_load after the barrier");
    cr_expect(strstr(l.lines[load], "x4"), "P = 4 remote_loads folded: \"%s\"", l.lines[load]);
    cr_expect_eq(peer_set(l.lines[load], "data@peer"), 0xfu,
                 "the remote_loads read every rank, its own included: \"%s\"", l.lines[load]);
    cr_expect_eq(find(&l, 0, "remote_load"), load, "no remote_load before the barrier:\n%s",
                 pld_ir_text(w));
    cr_expect_eq(find(&l, 0, "call pld_"), -1, "a hand kernel lists no builtin call:\n%s",
                 pld_ir_text(w));
    cr_expect_eq(find(&l, 0, "tile.put"), -1, "the hand allgather pulls, it has no put:\n%s",
                 pld_ir_text(w));
    free(l.text);
    cu_finalize(w);
}

Test(listing, builtin_allgather_puts_self_included_then_barrier_and_epilogue, .timeout = 30)
{
    listing l;
    pld_world *w = listing_of(BUILTIN_ALLGATHER, S, &l);
    int call = find(&l, 0, "call pld_allgather(tgt, sig)");
    EXPECT_LINE(l, call, "\"call pld_allgather(tgt, sig)\"");
    int put = find(&l, call, "tile.put");
    EXPECT_LINE(l, put, "tile.put");
    cr_expect(strstr(l.lines[put], "x4"), "P = 4 puts folded into one line: \"%s\"", l.lines[put]);
    cr_expect_eq(peer_set(l.lines[put], "tgt@peer"), 0xfu,
                 "the puts reach every rank, self included: \"%s\"", l.lines[put]);
    cr_expect(strstr(l.lines[put], "[0,0]+[1,64]"), "rank 0 puts into row 0: \"%s\"", l.lines[put]);
    cr_expect_gt(indent(l.lines[put]), indent(l.lines[call]),
                 "the expansion is nested under the call:\n%s", pld_ir_text(w));
    int notify = find(&l, put, "notify sig@peer");
    EXPECT_LINE(l, notify, "barrier notify after the puts");
    int wait = find(&l, notify, "wait sig");
    EXPECT_LINE(l, wait, "barrier wait after the puts");
    cr_expect_eq(find(&l, 0, "wait sig"), wait, "no wait before the puts:\n%s", pld_ir_text(w));
    int epi = find(&l, wait, "+= -1");
    EXPECT_LINE(l, epi, "self-clearing epilogue \"+= -1\" after the wait");
    cr_expect(strstr(l.lines[epi], "sig@peer0"), "the epilogue notifies rank 0 itself: \"%s\"",
              l.lines[epi]);
    cr_expect_eq(find(&l, 0, "remote_load"), -1, "the push allgather has no remote_load:\n%s",
                 pld_ir_text(w));
    free(l.text);
    cu_finalize(w);
}

Test(listing, builtin_all_to_all_ends_after_barrier_and_epilogue, .timeout = 30)
{
    listing l;
    pld_world *w = listing_of(BUILTIN_ALL_TO_ALL, S, &l);
    int call = find(&l, 0, "call pld_all_to_all(tgt, sig)");
    EXPECT_LINE(l, call, "\"call pld_all_to_all(tgt, sig)\"");
    int put = find(&l, call, "tile.put");
    EXPECT_LINE(l, put, "tile.put");
    cr_expect(strstr(l.lines[put], "x4"), "one put per destination: \"%s\"", l.lines[put]);
    cr_expect_eq(peer_set(l.lines[put], "tgt@peer"), 0xfu, "every destination: \"%s\"",
                 l.lines[put]);
    int wait = find(&l, put, "wait sig");
    EXPECT_LINE(l, wait, "barrier wait after the puts");
    int epi = find(&l, wait, "+= -1");
    EXPECT_LINE(l, epi, "epilogue");
    cr_expect_eq(epi, l.n - 1, "the builtin stops after the epilogue; last line is \"%s\":\n%s",
                 l.lines[l.n - 1], pld_ir_text(w));
    cr_expect_eq(find(&l, 0, "load"), -1, "the builtin reads nothing back (no load):\n%s",
                 pld_ir_text(w));
    cr_expect_eq(find(&l, 0, "get"), -1, "the builtin reads nothing back (no get):\n%s",
                 pld_ir_text(w));
    free(l.text);
    cu_finalize(w);
}

Test(listing, builtin_barrier_expansion, .timeout = 30)
{
    listing l;
    pld_world *w = listing_of(BUILTIN_BARRIER, S, &l);
    int call = find(&l, 0, "call pld_barrier(sig)");
    EXPECT_LINE(l, call, "\"call pld_barrier(sig)\"");
    int notify = find(&l, call, "notify sig@peer{1..3}[0,0] += 1  x3");
    EXPECT_LINE(l, notify, "one +1 credit to every peer");
    int wait = find(&l, notify, "wait sig[{1..3},0] >= 1  x3");
    EXPECT_LINE(l, wait, "a Ge wait on every peer's cell");
    int epi = find(&l, wait, "notify sig@peer0[{1..3},0] += -1  x3");
    EXPECT_LINE(l, epi, "the epilogue on rank 0's own cells");
    free(l.text);
    cu_finalize(w);
}

/* A row larger than the UB: the builtin's puts are chunked through a staging
 * tile that fits the budget. */
Test(listing, builtin_allgather_chunks_a_row_larger_than_the_ub, .timeout = 30)
{
    int64_t s = 100003; /* fp32: 400012 bytes per row */
    listing l;
    pld_world *w = listing_of(BUILTIN_ALLGATHER, s, &l);
    pld_info_limits lim;
    pld_world_limits(w, &lim);
    cr_assert_gt((size_t)s * 4, lim.ub_bytes, "the row must exceed the UB (%zu bytes)",
                 lim.ub_bytes);
    int put = find(&l, 0, "tile.put");
    EXPECT_LINE(l, put, "tile.put");
    const char *ch = strstr(l.lines[put], "chunks ");
    cr_assert_not_null(ch, "the put of a %lld-element row is not chunked: \"%s\"", (long long)s,
                       l.lines[put]);
    long long n = 0, r = 0, cols = 0, bytes = 0;
    cr_assert_eq(sscanf(ch, "chunks %lld of [%lld,%lld] staging %lld B", &n, &r, &cols, &bytes), 4,
                 "\"chunks N of [r,c] staging B B\" not found in \"%s\"", l.lines[put]);
    cr_expect_eq(r, 1, "one row per chunk: \"%s\"", l.lines[put]);
    cr_expect_eq(n, (s + cols - 1) / cols, "%lld chunks of %lld columns for a %lld-element row", n,
                 cols, (long long)s);
    cr_expect_geq(n, 2, "a row larger than the UB takes several chunks");
    cr_expect_leq((size_t)bytes, lim.ub_bytes, "staging %lld B exceeds the UB %zu B", bytes,
                  lim.ub_bytes);
    cr_expect_geq(bytes, cols * 4, "staging %lld B holds less than one chunk", bytes);
    /* and a small row is one plain put */
    free(l.text);
    cu_finalize(w);
    w = listing_of(BUILTIN_ALLGATHER, S, &l);
    cr_expect_eq(find(&l, 0, "chunks"), -1, "a %d-element row is not chunked:\n%s", S,
                 pld_ir_text(w));
    free(l.text);
    cu_finalize(w);
}
