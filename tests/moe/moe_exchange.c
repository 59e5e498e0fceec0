/* SPDX-License-Identifier: Apache-2.0 */
/* pld_moe_dispatch and pld_moe_combine against a plain-C reference, on any
 * transport (thread, process, and mpi under mpirun):
 *
 *   moe_exchange [pld options] [--rounds N] [--seed S] [--team]
 *
 * For E = 1, 2 and 4 experts per rank, N back-to-back dispatch -> expert
 * -> combine rounds on one signal with no barrier between calls, cycling
 * through every payload dtype. Each round draws a new layout from the
 * seed (counts 0, M and in between, a source with no rows, one hot expert);
 * every rank knows the whole layout, so each checks on its own what it
 * received: expert_offsets, recv_counts, the packed rows and the rows
 * around them (not written), and after the combine its out (the expert
 * flips every bit). The counters of the last round of each E are checked
 * against the counted-rows card. --team runs the same inside two
 * expert-parallel groups (even and odd world ranks; P >= 4).
 * Prints OK when every rank passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pld/pld.h>

#define MAXP 64
#define MAXE 4
#define M 5 /* rows per (destination, expert) block */
#define H 6 /* hidden size */
#define SENTINEL 0xA5

static const pld_dtype dtypes[] = {PLD_FP32, PLD_FP16, PLD_BF16, PLD_INT8, PLD_INT32};
#define NDTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

typedef struct run {
    int e, rounds, team_on;
    unsigned seed;
    pld_team *team;
    /* window buffers, viewed per dtype in the kernel */
    pld_window_buffer *target, *expert_out, *out;
    pld_dtensor recv, signal;
    /* per world rank plain memory */
    unsigned char *input[MAXP];
    int32_t *send[MAXP], *offsets[MAXP];
} run;

static uint32_t mix(uint32_t h, uint32_t v)
{
    h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
    return h * 0x85ebca6bu;
}

/* Byte b of element k of row j of the block source s sends (d, e). */
static unsigned char byte_of(int round, int s, int d, int e, int64_t j, int64_t k, int b)
{
    uint32_t h =
        mix(mix(mix(mix((uint32_t)round, (uint32_t)s), (uint32_t)d), (uint32_t)e), (uint32_t)j);
    return (unsigned char)(mix(mix(h, (uint32_t)k), (uint32_t)b) >> 13);
}

/* cnt[s][d][e] of a round: every rank draws the same. */
static int32_t count_of(const run *r, int round, int p, int s, int d, int e)
{
    uint32_t h = mix(mix(r->seed, (uint32_t)round), 77);
    int idle = (int)(h % (uint32_t)(p + 1)); /* this source sends nothing (p: none idle) */
    int hot = (int)((h >> 8) % (uint32_t)r->e);
    if (s == idle)
        return 0;
    uint32_t v = mix(mix(mix(mix(h, (uint32_t)s), (uint32_t)d), (uint32_t)e), 5);
    if (e == hot && v % 3 != 0)
        return M;
    switch (v % 5) {
    case 0:
        return 0;
    case 1:
        return M;
    default:
        return (int32_t)((v >> 4) % (M + 1));
    }
}

/* Packed row of block (s, e) on rank d. */
static int64_t place_of(const run *r, int round, int p, int d, int s, int e)
{
    int64_t row = 0;
    for (int e2 = 0; e2 < e; e2++)
        for (int s2 = 0; s2 < p; s2++)
            row += count_of(r, round, p, s2, d, e2);
    for (int s2 = 0; s2 < s; s2++)
        row += count_of(r, round, p, s2, d, e);
    return row;
}

static pld_dtensor view(pld_ctx *c, pld_window_buffer *b, pld_dtype t, int64_t rows)
{
    pld_dtensor v;
    if (pld_window(b, t, 2, PLD_IDX(rows, H), &v) != PLD_OK)
        pld_fail(c, "view of %s as %s [%lld,%d]", "window", pld_dtype_name(t), (long long)rows, H);
    return v;
}

static void check_byte(pld_ctx *c, const char *what, int round, int64_t row, int64_t at,
                       unsigned got, unsigned want)
{
    if (got != want)
        pld_fail(c, "round %d: %s row %lld byte %lld: got 0x%02x want 0x%02x", round, what,
                 (long long)row, (long long)at, got, want);
}

static void one_round(pld_ctx *c, run *r, int round, int world_rank)
{
    int me = pld_rank(c), p = pld_nranks(c), ne = r->e;
    pld_dtype t = dtypes[round % NDTYPES];
    size_t elt = pld_dtype_size(t), row = H * elt;
    int64_t rows = (int64_t)p * ne * M;
    pld_moe_layout l = {.experts_per_rank = ne, .max_rows = M};
    pld_dtensor target = view(c, r->target, t, rows), eout = view(c, r->expert_out, t, rows),
                out = view(c, r->out, t, rows);
    unsigned char *in = r->input[world_rank];
    int32_t *send = r->send[world_rank], *off = r->offsets[world_rank];
    /* my input: the counted rows of every block, the sentinel after them */
    memset(in, SENTINEL, (size_t)rows * row);
    for (int d = 0; d < p; d++)
        for (int e = 0; e < ne; e++) {
            send[d * ne + e] = count_of(r, round, p, me, d, e);
            for (int64_t j = 0; j < send[d * ne + e]; j++)
                for (size_t b = 0; b < row; b++)
                    in[((d * ne + e) * M + j) * row + b] =
                        byte_of(round, me, d, e, j, (int64_t)(b / elt), (int)(b % elt));
        }
    /* nobody writes my target before I enter the dispatch: the sentinel shows
       that rows past the total are left alone */
    unsigned char *tg = pld_local(c, target).data;
    memset(tg, SENTINEL, (size_t)rows * row);
    pld_moe_dispatch(c, &l, pld_tensor_make(in, t, 2, PLD_IDX(rows, H)), target, r->signal,
                     pld_tensor_make(send, PLD_INT32, 2, PLD_IDX(p, ne)), r->recv,
                     pld_tensor_make(off, PLD_INT32, 1, PLD_IDX(ne + 1)));
    const int32_t *rc = pld_local(c, r->recv).data;
    int64_t total = 0;
    for (int e = 0; e < ne; e++) {
        if (off[e] != total)
            pld_fail(c, "round %d: expert_offsets[%d] = %d want %lld", round, e, (int)off[e],
                     (long long)total);
        for (int s = 0; s < p; s++) {
            int32_t n = count_of(r, round, p, s, me, e);
            if (rc[s * ne + e] != n)
                pld_fail(c, "round %d: recv_counts[%d][%d] = %d want %d", round, s, e,
                         (int)rc[s * ne + e], (int)n);
            int64_t at = place_of(r, round, p, me, s, e);
            for (int64_t j = 0; j < n; j++)
                for (size_t b = 0; b < row; b++)
                    check_byte(c, "target", round, at + j, (int64_t)b, tg[(at + j) * row + b],
                               byte_of(round, s, me, e, j, (int64_t)(b / elt), (int)(b % elt)));
            total += n;
        }
    }
    if (off[ne] != total)
        pld_fail(c, "round %d: expert_offsets[E] = %d want %lld", round, (int)off[ne],
                 (long long)total);
    for (int64_t i = total * (int64_t)row; i < rows * (int64_t)row; i++)
        check_byte(c, "target (past the total)", round, i / (int64_t)row, i % (int64_t)row, tg[i],
                   SENTINEL);
    /* the expert: flips every bit of the received rows */
    unsigned char *eo = pld_local(c, eout).data, *o = pld_local(c, out).data;
    for (int64_t i = 0; i < total * (int64_t)row; i++)
        eo[i] = (unsigned char)~tg[i];
    memset(o, SENTINEL, (size_t)rows * row); /* only I write my out */
    pld_moe_combine(c, &l, eout, out, r->signal,
                    pld_tensor_make(send, PLD_INT32, 2, PLD_IDX(p, ne)), r->recv);
    for (int d = 0; d < p; d++)
        for (int e = 0; e < ne; e++)
            for (int64_t j = 0; j < M; j++)
                for (size_t b = 0; b < row; b++) {
                    int64_t at = (d * ne + e) * M + j;
                    unsigned want =
                        j < send[d * ne + e]
                            ? (unsigned char)~byte_of(round, me, d, e, j, (int64_t)(b / elt),
                                                      (int)(b % elt))
                            : SENTINEL;
                    check_byte(c, "out", round, at, (int64_t)b, o[at * row + b], want);
                }
}

/* The counted-rows card of the last round, against this rank's counters:
 * dispatch + combine. */
static void check_counters(pld_ctx *c, const run *r, int round, size_t elt, pld_counters k)
{
    int me = pld_rank(c), p = pld_nranks(c), ne = r->e;
    uint64_t row = H * elt, counts = (uint64_t)p * ne * 4, sent_peers = 0, sent_self = 0;
    for (int d = 0; d < p; d++)
        for (int e = 0; e < ne; e++)
            *(d == me ? &sent_self : &sent_peers) +=
                (uint64_t)count_of(r, round, p, me, d, e) * row;
    /* dispatch: rows to peers, the count matrices from peers, own rows and
       staging + recv self; combine: the rows back from peers and every
       recv_counts (own one self) */
    uint64_t to = sent_peers,
             from = (uint64_t)(p - 1) * counts + sent_peers + (uint64_t)(p - 1) * counts;
    uint64_t self = sent_self + 2 * counts + sent_self + counts;
    if (k.bytes_to_peers != to || k.bytes_from_peers != from || k.bytes_self != self)
        pld_fail(c,
                 "round %d: counters to/from/self = %llu/%llu/%llu, the counted-rows card says "
                 "%llu/%llu/%llu",
                 round, (unsigned long long)k.bytes_to_peers,
                 (unsigned long long)k.bytes_from_peers, (unsigned long long)k.bytes_self,
                 (unsigned long long)to, (unsigned long long)from, (unsigned long long)self);
    /* two full rounds per call, (P-1) notifies each, plus the epilogue */
    if (k.waits != (uint64_t)4 * (p - 1))
        pld_fail(c, "round %d: %llu waits, want 4 x (P-1) = %d", round, (unsigned long long)k.waits,
                 4 * (p - 1));
}

static void kernel(pld_ctx *c, void *arg)
{
    run *r = arg;
    int wr = pld_rank(c);
    pld_ctx *g = c;
    if (r->team_on && !(g = pld_team_ctx(c, r->team)))
        pld_fail(c, "rank %d is in no group of the team", wr);
    for (int round = 0; round < r->rounds; round++) {
        pld_counters before = pld_ctx_counters(c);
        one_round(g, r, round, wr);
        if (round == r->rounds - 1) {
            pld_counters k = pld_ctx_counters(c);
            k.bytes_to_peers -= before.bytes_to_peers;
            k.bytes_from_peers -= before.bytes_from_peers;
            k.bytes_self -= before.bytes_self;
            k.waits -= before.waits;
            check_counters(g, r, round, pld_dtype_size(dtypes[round % NDTYPES]), k);
        }
    }
}

static pld_window_buffer *alloc(pld_world *w, const char *name, size_t bytes)
{
    pld_window_buffer *b;
    if (pld_alloc_window_buffer(w, bytes, name, &b) != PLD_OK) {
        fprintf(stderr, "window %s: %s\n", name, pld_world_error(w));
        exit(1);
    }
    return b;
}

static int run_e(pld_world *w, run *r)
{
    int n = pld_world_size(w), p = n;
    if (r->team_on) {
        int color[MAXP], key[MAXP];
        for (int i = 0; i < n; i++)
            color[i] = i % 2, key[i] = i;
        if (pld_team_split(w, NULL, color, key, "ep", &r->team) != PLD_OK) {
            fprintf(stderr, "team: %s\n", pld_world_error(w));
            return 1;
        }
        p = (n + 1) / 2; /* the larger group */
    }
    size_t rows = (size_t)p * r->e * M, bytes = rows * H * 4;
    r->target = alloc(w, "target", bytes);
    r->expert_out = alloc(w, "expert_out", bytes);
    r->out = alloc(w, "out", bytes);
    pld_window_buffer *rb = alloc(w, "recv_counts", (size_t)p * r->e * 4);
    pld_window_buffer *sb = alloc(w, "signal", (size_t)p * 4);
    for (int i = 0; i < n; i++) {
        r->input[i] = pld_host_alloc(w, bytes);
        r->send[i] = pld_host_alloc(w, (size_t)p * r->e * 4);
        r->offsets[i] = pld_host_alloc(w, (size_t)(r->e + 1) * 4);
    }
    int status = 0;
    /* a team group smaller than the largest (odd P) sees its own shapes */
    int gp = p;
    if (pld_window(rb, PLD_INT32, 2, PLD_IDX(gp, r->e), &r->recv) != PLD_OK ||
        pld_window(sb, PLD_INT32, 2, PLD_IDX(gp, 1), &r->signal) != PLD_OK)
        status = 1;
    pld_status st = status ? PLD_ERR_ARG : pld_launch(w, kernel, r);
    if (st != PLD_OK) {
        fprintf(stderr, "E=%d: FAILED %s: %s\n", r->e, pld_status_name(st), pld_world_error(w));
        status = 1;
    }
    pld_free_window_buffer(w, sb);
    pld_free_window_buffer(w, rb);
    pld_free_window_buffer(w, r->out);
    pld_free_window_buffer(w, r->expert_out);
    pld_free_window_buffer(w, r->target);
    if (r->team)
        pld_team_free(w, r->team);
    r->team = NULL;
    return status;
}

int main(int argc, char **argv)
{
    pld_world *w;
    pld_status st = pld_world_init_from_args(&w, &argc, &argv);
    if (st != PLD_OK) {
        fprintf(stderr, "moe_exchange: %s\n", pld_last_error());
        return 2;
    }
    run *r = pld_host_alloc(w, sizeof *r);
    memset(r, 0, sizeof *r);
    r->rounds = 200;
    r->seed = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            r->rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            r->seed = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--team") == 0)
            r->team_on = 1;
        else {
            fprintf(stderr, "moe_exchange: unexpected argument '%s'\n", argv[i]);
            return 2;
        }
    }
    int n = pld_world_size(w), failed = 0;
    if (n > MAXP || (r->team_on && (n < 4 || n % 2))) {
        fprintf(stderr, "moe_exchange: needs P <= %d (and an even P >= 4 with --team)\n", MAXP);
        return 2;
    }
    const int es[] = {1, 2, MAXE};
    for (int i = 0; i < 3; i++) {
        r->e = es[i];
        failed |= run_e(w, r);
    }
    if (!failed && pld_is_root_process(w))
        printf("OK\n");
    pld_world_finalize(w);
    return failed;
}
