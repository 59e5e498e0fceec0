/* SPDX-License-Identifier: Apache-2.0 */
/* Builtin collectives against plain C references, back-to-back on one
 * signal window, their cost cards (byte counters) and their listings. */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <pld/pld.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Value rank r contributes at flat index i: small integers, exact in fp32
 * sums over up to 32 ranks. */
static int val(int r, int64_t i)
{
    return (int)((r * 7 + i * 3) % 11) - 3;
}

enum {
    C_BARRIER,
    C_ALLGATHER,
    C_ALL_TO_ALL,
    C_MESH,
    C_RING,
    C_REDUCE_SCATTER,
    C_BROADCAST,
    C_AUTO,
    C_RSAG,
    C_RAB,
    C_N
};

typedef struct fixture {
    pld_world *w;
    pld_dtensor sig, ring, data, tgt;
    int64_t s;
    int iters, which;
} fixture;

static void check_eq(pld_ctx *c, const char *what, int it, int64_t j, float got, float want)
{
    if (got != want)
        pld_fail(c, "%s iteration %d index %lld: got %g want %g", what, it, (long long)j, got,
                 want);
}

static void mixed_kernel(pld_ctx *c, void *arg)
{
    fixture *a = arg;
    int me = pld_rank(c), p = pld_nranks(c);
    int64_t s = a->s;
    float *in = malloc(sizeof(float) * (size_t)(p * s));
    float *d = pld_local(c, a->data).data, *t = pld_local(c, a->tgt).data;
    for (int it = 0; it < a->iters; it++) {
        int which = a->which >= 0 ? a->which : it % C_N;
        switch (which) {
        case C_BARRIER:
            pld_barrier(c, a->sig);
            break;
        case C_ALLGATHER:
            for (int64_t j = 0; j < s; j++)
                in[j] = (float)(val(me, j) + it);
            pld_allgather(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(1, s)), a->tgt, a->sig);
            for (int r = 0; r < p; r++)
                for (int64_t j = 0; j < s; j++)
                    check_eq(c, "allgather", it, r * s + j, t[r * s + j], (float)(val(r, j) + it));
            break;
        case C_ALL_TO_ALL:
            for (int dst = 0; dst < p; dst++)
                for (int64_t j = 0; j < s; j++)
                    in[dst * s + j] = (float)(me * 1000 + dst * 100 + j % 100 + it);
            pld_all_to_all(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(p, s)), a->tgt, a->sig);
            for (int r = 0; r < p; r++)
                for (int64_t j = 0; j < s; j++)
                    check_eq(c, "all_to_all", it, r * s + j, t[r * s + j],
                             (float)(r * 1000 + me * 100 + j % 100 + it));
            break;
        case C_MESH:
        case C_RING:
        case C_AUTO:
        case C_RSAG:
        case C_RAB: {
            static const char *const names[C_N] = {[C_MESH] = "allreduce mesh",
                                                   [C_RING] = "allreduce ring",
                                                   [C_AUTO] = "allreduce auto",
                                                   [C_RSAG] = "allreduce rs_ag",
                                                   [C_RAB] = "allreduce rabenseifner"};
            pld_allreduce_mode mode = which == C_MESH   ? PLD_MESH
                                      : which == C_RING ? PLD_RING
                                      : which == C_AUTO ? PLD_AUTO
                                      : which == C_RSAG ? PLD_RS_AG
                                                        : PLD_RABENSEIFNER;
            for (int64_t j = 0; j < p * s; j++)
                d[j] = (float)val(me, j);
            pld_allreduce(c, a->data, which == C_RING ? a->ring : a->sig, PLD_SUM, mode);
            for (int64_t j = 0; j < p * s; j++) {
                float e = 0;
                for (int r = 0; r < p; r++)
                    e += (float)val(r, j);
                check_eq(c, names[which], it, j, d[j], e);
            }
            break;
        }
        case C_REDUCE_SCATTER:
            for (int64_t j = 0; j < p * s; j++)
                d[j] = (float)val(me, j);
            pld_reduce_scatter(c, a->data, a->sig, PLD_SUM);
            for (int64_t j = 0; j < s; j++) {
                float e = 0;
                for (int r = 0; r < p; r++)
                    e += (float)val(r, me * s + j);
                check_eq(c, "reduce_scatter", it, j, d[me * s + j], e);
            }
            break;
        case C_BROADCAST: {
            int root = it % p;
            if (me == root)
                for (int64_t j = 0; j < p * s; j++)
                    d[j] = (float)(val(root, j) + it);
            pld_broadcast(c, a->data, a->sig, root);
            for (int64_t j = 0; j < p * s; j++)
                check_eq(c, "broadcast", it, j, d[j], (float)(val(root, j) + it));
            break;
        }
        }
        /* results are read in place: nobody restages before everyone checked */
        pld_barrier(c, a->sig);
    }
    free(in);
}

static void setup(fixture *f, const char *devices, int64_t s)
{
    pld_config cfg = {.devices = devices};
    cr_assert_eq(pld_world_init(&f->w, &cfg), PLD_OK, "%s", pld_last_error());
    int p = pld_world_size(f->w);
    int64_t rows = 2 * (p - 1) > p ? 2 * (p - 1) : p;
    pld_window_buffer *sb, *db, *tb;
    cr_assert_eq(pld_alloc_window_buffer(f->w, sizeof(int32_t) * (size_t)(rows * p), "sig", &sb),
                 PLD_OK);
    cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(p, 1), &f->sig), PLD_OK);
    f->ring = f->sig;
    if (p > 1)
        cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(2 * (p - 1), p), &f->ring), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(f->w, sizeof(float) * (size_t)(p * s), "data", &db),
                 PLD_OK);
    cr_assert_eq(pld_window(db, PLD_FP32, 2, PLD_IDX(p, s), &f->data), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(f->w, sizeof(float) * (size_t)(p * s), "tgt", &tb),
                 PLD_OK);
    cr_assert_eq(pld_window(tb, PLD_FP32, 2, PLD_IDX(p, s), &f->tgt), PLD_OK);
    f->s = s;
}

static void assert_signal_zero(fixture *f)
{
    int p = pld_world_size(f->w);
    pld_tensor v;
    for (int r = 0; r < p; r++) {
        cr_assert_eq(pld_window_host_view(f->w, f->ring, r, &v), PLD_OK);
        const int32_t *cells = v.data;
        for (int64_t i = 0; i < pld_tensor_numel(v); i++)
            cr_assert_eq(cells[i], 0, "rank %d signal cell %lld holds %d after the calls", r,
                         (long long)i, cells[i]);
    }
}

static void run_mixed(const char *devices, int64_t s, int iters, int which)
{
    fixture f = {.iters = iters, .which = which};
    setup(&f, devices, s);
    pld_status st = pld_launch(f.w, mixed_kernel, &f);
    cr_assert_eq(st, PLD_OK, "P=%d S=%lld: %s: %s", pld_world_size(f.w), (long long)s,
                 pld_status_name(st), pld_world_error(f.w));
    assert_signal_zero(&f);
    pld_world_finalize(f.w);
}

Test(coll, mixed_p1, .timeout = 60)
{
    run_mixed("0", 64, 2 * C_N, -1);
}
Test(coll, mixed_p2, .timeout = 60)
{
    run_mixed("0,1", 64, 20 * C_N, -1);
}
Test(coll, mixed_p3, .timeout = 60)
{
    run_mixed("0-2", 64, 20 * C_N, -1);
}
Test(coll, mixed_p4, .timeout = 60)
{
    run_mixed("0-3", 64, 20 * C_N, -1);
}
Test(coll, mixed_p8, .timeout = 120)
{
    run_mixed("0-7", 33, 4 * C_N, -1);
}
Test(coll, mixed_p32, .timeout = 300)
{
    run_mixed("0-31", 16, C_N, -1);
}
Test(coll, one_element_p4, .timeout = 60)
{
    run_mixed("0-3", 1, 4 * C_N, -1);
}
/* rows larger than the UB staging tile, and not a multiple of the chunk */
Test(coll, ragged_chunked_p3, .timeout = 300)
{
    run_mixed("0-2", 100003, 2 * C_N, -1);
}
Test(coll, thousand_mixed_calls_one_signal, .timeout = 300)
{
    run_mixed("0-3", 16, 1001, -1);
}

/* ---- cost cards: the byte counters equal the cost cards exactly ------------ */

typedef struct one_call {
    fixture *f;
    int which;
} one_call;

static void one_call_kernel(pld_ctx *c, void *arg)
{
    one_call *o = arg;
    fixture *f = o->f;
    int p = pld_nranks(c);
    float *in = calloc((size_t)(p * f->s), sizeof(float));
    switch (o->which) {
    case C_ALLGATHER:
        pld_allgather(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(1, f->s)), f->tgt, f->sig);
        break;
    case C_ALL_TO_ALL:
        pld_all_to_all(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(p, f->s)), f->tgt, f->sig);
        break;
    case C_MESH:
        pld_allreduce(c, f->data, f->sig, PLD_SUM, PLD_MESH);
        break;
    case C_RING:
        pld_allreduce(c, f->data, f->ring, PLD_SUM, PLD_RING);
        break;
    case C_REDUCE_SCATTER:
        pld_reduce_scatter(c, f->data, f->sig, PLD_SUM);
        break;
    case C_BROADCAST:
        pld_broadcast(c, f->data, f->sig, 0);
        break;
    case C_AUTO:
        pld_allreduce(c, f->data, f->sig, PLD_SUM, PLD_AUTO);
        break;
    case C_RSAG:
        pld_allreduce(c, f->data, f->sig, PLD_SUM, PLD_RS_AG);
        break;
    case C_RAB:
        pld_allreduce(c, f->data, f->sig, PLD_SUM, PLD_RABENSEIFNER);
        break;
    }
    free(in);
}

/* Elements rank r reads from its peers in a Rabenseifner allreduce of
 * `elems` over p ranks (src/coll/allreduce_rabenseifner.c): Q the largest
 * power of two <= p, X = p - Q; an extra rank (even, below 2X) reads the
 * result from r+1; a folding rank (odd, below 2X) reads r-1's data; then
 * virtual rank v reads, at each halving step (half = Q/2 .. 1), the half of
 * its block that holds it, and at each doubling step (half = 1 .. Q/2) its
 * partner v^half's block of `half` segments; segment s starts at
 * elems*s/Q. */
static uint64_t rab_reads(int p, int r, uint64_t elems)
{
    int q = 1, x, v, lo = 0;
    while (q <= p / 2)
        q *= 2;
    x = p - q;
    if (p < 2)
        return 0;
    if (r < 2 * x && r % 2 == 0)
        return elems;
    uint64_t got = r < 2 * x ? elems : 0, Q = (uint64_t)q;
    v = r < 2 * x ? r / 2 : r - x;
    for (int half = q / 2; half >= 1; half /= 2) {
        int keep = (v & half) ? lo + half : lo;
        got += elems * (uint64_t)(keep + half) / Q - elems * (uint64_t)keep / Q;
        lo = keep;
    }
    for (int half = 1; half < q; half *= 2) {
        int theirs = (v ^ half) & ~(half - 1);
        got += elems * (uint64_t)(theirs + half) / Q - elems * (uint64_t)theirs / Q;
    }
    return got;
}

/* Bytes to and from peers, and self copies, of one call on rank r: the
 * credit rounds' card, or (one_round) the one-round path's. N = P*S fp32. */
static void card_of(int which, int p, int r, uint64_t n, int one_round, pld_allreduce_mode pick,
                    uint64_t *moved, uint64_t *self)
{
    uint64_t P = (uint64_t)p, row = n / P;
    *self = 0;
    if (one_round) {
        switch (which) {
        case C_ALLGATHER:
        case C_ALL_TO_ALL: /* my row to every inbox; own row + copy-out */
            *moved = (P - 1) * row;
            *self = n;
            break;
        case C_REDUCE_SCATTER: /* row d to d's inbox; the inbox reduced in */
            *moved = *self = (P - 1) * row;
            break;
        case C_BROADCAST: /* the root's data to every inbox; copy-out */
            *moved = r == 0 ? (P - 1) * n : 0;
            *self = r == 0 ? 0 : n;
            break;
        default: /* allreduce auto: all of it to every inbox, reduced in */
            *moved = *self = (P - 1) * n;
            break;
        }
        return;
    }
    switch (which) {
    case C_ALLGATHER:
    case C_ALL_TO_ALL:
        *moved = (P - 1) * row;
        *self = row;
        break;
    case C_REDUCE_SCATTER:
        *moved = (P - 1) * row;
        break;
    case C_AUTO: /* above the one-round size: the cost model's pick */
        if (pick == PLD_MESH) {
            *moved = (P - 1) * n;
            break;
        }
        if (pick == PLD_RABENSEIFNER) {
            *moved = rab_reads(p, r, n / sizeof(float)) * sizeof(float);
            break;
        }
        /* fall through */
    case C_RSAG: { /* my segment from P-1 peers, every other segment once;
                    * only the first m ranks own one (segments >= 4 KiB) */
        uint64_t elems = n / sizeof(float), m = (uint64_t)pld_tune_rs_ag_owners(p, n),
                 mine =
                     (uint64_t)r < m ? elems * (uint64_t)(r + 1) / m - elems * (uint64_t)r / m : 0;
        *moved = ((P - 1) * mine + (elems - mine)) * sizeof(float);
        break;
    }
    case C_RAB:
        *moved = rab_reads(p, r, n / sizeof(float)) * sizeof(float);
        break;
    case C_MESH:
        *moved = (P - 1) * n;
        break;
    case C_RING:
        *moved = 2 * (P - 1) * n / P;
        break;
    case C_BROADCAST:
        *moved = r == 0 ? 0 : n;
        break;
    }
}

static void check_card(int p, int which, int64_t s)
{
    char devices[16];
    snprintf(devices, sizeof devices, "0-%d", p - 1);
    fixture f = {0};
    setup(&f, devices, s);
    one_call o = {.f = &f, .which = which};
    cr_assert_eq(pld_launch(f.w, one_call_kernel, &o), PLD_OK, "%s", pld_world_error(f.w));
    uint64_t n = (uint64_t)(p * s) * sizeof(float); /* total payload N */
    /* the payload per peer: a row, or all of it for broadcast and allreduce */
    uint64_t per_peer = which == C_BROADCAST || which == C_AUTO ? n : n / (uint64_t)p;
    /* the rule of the one-round path: the payload fits the slot; the P-1
     * copies a reduction adds stay within 4 slots; allgather and all_to_all
     * (one round already) only when PLD_LL_BYTES is set */
    uint64_t slot = pld_world_ll_bytes(f.w);
    const char *set = getenv("PLD_LL_BYTES");
    int one_round =
        which != C_MESH && which != C_RING && which != C_RSAG && which != C_RAB && per_peer <= slot;
    if (which == C_REDUCE_SCATTER || which == C_AUTO)
        one_round = one_round && (uint64_t)(p - 1) * per_peer <= 4 * slot;
    if (which == C_ALLGATHER || which == C_ALL_TO_ALL)
        one_round = one_round && set && *set;
    /* allreduce auto above the one-round size: what the world's cost model
     * predicts faster, with the profile's UB */
    pld_tune tune;
    pld_info_limits lim;
    cr_assert_eq(pld_world_tune(f.w, &tune), PLD_OK);
    pld_world_limits(f.w, &lim);
    pld_allreduce_mode pick =
        pld_tune_allreduce_auto(&tune, p, n, sizeof(float), lim.ub_bytes, NULL);
    for (int r = 0; r < p; r++) {
        pld_counters k;
        cr_assert_eq(pld_rank_counters(f.w, r, &k), PLD_OK);
        uint64_t moved = k.bytes_to_peers + k.bytes_from_peers, want, self;
        card_of(which, p, r, n, one_round, pick, &want, &self);
        cr_expect_eq(moved, want,
                     "collective %d P=%d S=%lld rank %d (%s) moved %llu bytes, card "
                     "says %llu",
                     which, p, (long long)s, r, one_round ? "one round" : "credit",
                     (unsigned long long)moved, (unsigned long long)want);
        cr_expect_eq(k.bytes_self, self,
                     "collective %d P=%d S=%lld rank %d (%s) copied %llu "
                     "bytes to itself, card says %llu",
                     which, p, (long long)s, r, one_round ? "one round" : "credit",
                     (unsigned long long)k.bytes_self, (unsigned long long)self);
    }
    assert_signal_zero(&f);
    pld_world_finalize(f.w);
}

/* small (one round where the builtin has it) and large (credit rounds) */
static void check_cards(void)
{
    static const int ps[] = {2, 3, 4, 8};
    static const int which[] = {C_ALLGATHER, C_ALL_TO_ALL, C_MESH, C_RING, C_REDUCE_SCATTER,
                                C_BROADCAST, C_AUTO,       C_RSAG, C_RAB};
    static const int64_t sizes[] = {24, 3000};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        for (size_t k = 0; k < sizeof which / sizeof which[0]; k++)
            for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
                check_card(ps[i], which[k], sizes[z]);
}

Test(cost_card, every_builtin_p2_3_4_8, .timeout = 240)
{
    check_cards();
}

/* the same with the one-round path off: the credit rounds' cards */
Test(cost_card, every_builtin_credit_rounds, .timeout = 240)
{
    setenv("PLD_LL_BYTES", "0", 1);
    check_cards();
}

/* and with PLD_LL_BYTES set: allgather and all_to_all go through the inbox */
Test(cost_card, every_builtin_ll_bytes_set, .timeout = 240)
{
    setenv("PLD_LL_BYTES", "4K", 1);
    check_cards();
}

/* ---- the listing: builtin allgather = P puts, barrier after, no remote_load */

Test(listing, builtin_allgather_pushes_then_barriers, .timeout = 60)
{
    setenv("PLD_LL_BYTES", "0", 1); /* the credit rounds */
    fixture f = {0};
    setup(&f, "0-3", 64);
    pld_ir_enable(f.w, 1);
    one_call o = {.f = &f, .which = C_ALLGATHER};
    cr_assert_eq(pld_launch(f.w, one_call_kernel, &o), PLD_OK, "%s", pld_world_error(f.w));
    const char *ir = pld_ir_text(f.w);
    cr_assert(strstr(ir, "call pld_allgather(tgt, sig)") != NULL, "%s", ir);
    const char *put = strstr(ir, "tile.put");
    const char *wait = strstr(ir, "wait sig");
    cr_assert(put && wait && put < wait, "puts must come before the barrier:\n%s", ir);
    cr_assert(strstr(ir, "x4") != NULL, "four puts (self included) folded:\n%s", ir);
    cr_assert(strstr(ir, "remote_load") == NULL, "push allgather has no remote_load:\n%s", ir);
    cr_assert(strstr(ir, "+= -1") != NULL, "the self-clearing epilogue is listed:\n%s", ir);
    pld_world_finalize(f.w);
}

/* ---- error paths ----------------------------------------------------------- */

typedef struct bad {
    fixture *f;
    int kind;
} bad;

static void bad_kernel(pld_ctx *c, void *arg)
{
    bad *b = arg;
    fixture *f = b->f;
    int p = pld_nranks(c);
    float in[4 * 64] = {0};
    switch (b->kind) {
    case 0: /* source inside the target window */
        pld_all_to_all(c, pld_local(c, f->tgt), f->tgt, f->sig);
        break;
    case 1: /* reduce_scatter only sums */
        pld_reduce_scatter(c, f->data, f->sig, PLD_MAX);
        break;
    case 2: /* ring needs [2(P-1), P] */
        pld_allreduce(c, f->data, f->sig, PLD_SUM, PLD_RING);
        break;
    case 3: /* allgather local of the wrong size */
        pld_allgather(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(1, 63)), f->tgt, f->sig);
        break;
    case 4: /* broadcast root outside the world */
        pld_broadcast(c, f->data, f->sig, p);
        break;
    case 5: /* broadcast mode that is none */
        pld_broadcast_with(c, f->data, f->sig, 0, (pld_broadcast_mode)7);
        break;
    case 6: /* allgather mode that is none */
        pld_allgather_with(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(1, 64)), f->tgt, f->sig,
                           (pld_allgather_mode)-1);
        break;
    case 7: /* all_to_all mode that is none */
        pld_all_to_all_with(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(p, 64)), f->tgt, f->sig,
                            (pld_all_to_all_mode)3);
        break;
    }
}

static void expect_bad(int kind, pld_status want, const char *needle)
{
    fixture f = {0};
    setup(&f, "0-3", 64);
    bad b = {.f = &f, .kind = kind};
    pld_status st = pld_launch(f.w, bad_kernel, &b);
    cr_assert_eq(st, want, "kind %d: got %s: %s", kind, pld_status_name(st), pld_world_error(f.w));
    cr_assert(strstr(pld_world_error(f.w), needle) != NULL, "kind %d: '%s' not in: %s", kind,
              needle, pld_world_error(f.w));
    pld_world_finalize(f.w);
}

Test(coll_errors, input_aliases_target)
{
    expect_bad(0, PLD_ERR_ALIAS, "pld_all_to_all");
}
Test(coll_errors, reduce_scatter_max)
{
    expect_bad(1, PLD_ERR_UNSUPPORTED, "Sum only");
}
Test(coll_errors, ring_signal_too_small)
{
    expect_bad(2, PLD_ERR_ARG, "[6,4]");
}
Test(coll_errors, allgather_local_size)
{
    expect_bad(3, PLD_ERR_ARG, "63 elements");
}
Test(coll_errors, allgather_mode)
{
    expect_bad(6, PLD_ERR_ARG, "pld_allgather: mode -1 is not a pld_allgather_mode");
}
Test(coll_errors, all_to_all_mode)
{
    expect_bad(7, PLD_ERR_ARG, "pld_all_to_all: mode 3 is not a pld_all_to_all_mode");
}
Test(coll_errors, broadcast_mode)
{
    expect_bad(5, PLD_ERR_ARG, "pld_broadcast: mode 7 is not a pld_broadcast_mode");
}
Test(coll_errors, broadcast_root)
{
    expect_bad(4, PLD_ERR_ARG, "root 4");
}

/* ---- allreduce: every op on every dtype, mesh and ring -------------------- */

typedef struct typed {
    pld_dtensor data, sig, ring;
    pld_dtype dtype;
    pld_reduce_op op;
    pld_allreduce_mode mode;
    int64_t n;
} typed;

/* fp32 <-> 16-bit patterns for test values: small integers are exact. */
static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t to_fp16(float f) /* exact for small integers only */
{
    if (f == 0)
        return 0;
    uint16_t sign = f < 0 ? 0x8000 : 0;
    float a = f < 0 ? -f : f;
    int e = 0;
    while (a >= 2) {
        a /= 2;
        e++;
    }
    return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | (uint16_t)((a - 1) * 1024));
}

static float from_fp16(uint16_t h)
{
    if ((h & 0x7fff) == 0)
        return 0;
    float m = 1 + (float)(h & 0x3ff) / 1024;
    int e = ((h >> 10) & 0x1f) - 15;
    while (e-- > 0)
        m *= 2;
    return h & 0x8000 ? -m : m;
}

static float typed_val(int r, int64_t i, pld_reduce_op op)
{
    /* products stay small: values in {1, 2, -1} */
    if (op == PLD_PROD)
        return (float)((r + i) % 3 == 0 ? 2 : ((r + i) % 3 == 1 ? 1 : -1));
    return (float)val(r, i);
}

static void put_typed(void *base, pld_dtype t, int64_t i, float v)
{
    switch (t) {
    case PLD_FP32:
        ((float *)base)[i] = v;
        break;
    case PLD_INT32:
        ((int32_t *)base)[i] = (int32_t)v;
        break;
    case PLD_BF16:
        ((uint16_t *)base)[i] = to_bf16(v);
        break;
    default:
        ((uint16_t *)base)[i] = to_fp16(v);
        break;
    }
}

static float get_typed(const void *base, pld_dtype t, int64_t i)
{
    switch (t) {
    case PLD_FP32:
        return ((const float *)base)[i];
    case PLD_INT32:
        return (float)((const int32_t *)base)[i];
    case PLD_BF16:
        return from_bf16(((const uint16_t *)base)[i]);
    default:
        return from_fp16(((const uint16_t *)base)[i]);
    }
}

static void typed_kernel(pld_ctx *c, void *arg)
{
    typed *t = arg;
    int me = pld_rank(c), p = pld_nranks(c);
    void *d = pld_local(c, t->data).data;
    for (int64_t i = 0; i < t->n; i++)
        put_typed(d, t->dtype, i, typed_val(me, i, t->op));
    pld_allreduce(c, t->data, t->mode == PLD_RING ? t->ring : t->sig, t->op, t->mode);
    for (int64_t i = 0; i < t->n; i++) {
        float e = typed_val(0, i, t->op);
        for (int r = 1; r < p; r++) {
            float x = typed_val(r, i, t->op);
            switch (t->op) {
            case PLD_SUM:
                e += x;
                break;
            case PLD_MAX:
                e = x > e ? x : e;
                break;
            case PLD_MIN:
                e = x < e ? x : e;
                break;
            case PLD_PROD:
                e *= x;
                break;
            }
        }
        float got = get_typed(d, t->dtype, i);
        if (got != e)
            pld_fail(c, "%s op %d mode %d index %lld: got %g want %g", pld_dtype_name(t->dtype),
                     (int)t->op, (int)t->mode, (long long)i, got, e);
    }
}

Test(allreduce, every_op_dtype_mode_p3, .timeout = 120)
{
    static const pld_dtype dtypes[] = {PLD_FP32, PLD_FP16, PLD_BF16, PLD_INT32};
    pld_world *w;
    pld_config cfg = {.devices = "0-2"};
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK);
    int p = 3;
    int64_t n = 1001;
    pld_window_buffer *sb, *db;
    typed t = {.n = n};
    cr_assert_eq(pld_alloc_window_buffer(w, sizeof(int32_t) * 4 * 3, "sig", &sb), PLD_OK);
    cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(p, 1), &t.sig), PLD_OK);
    cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(2 * (p - 1), p), &t.ring), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, sizeof(float) * (size_t)n, "data", &db), PLD_OK);
    for (size_t k = 0; k < sizeof dtypes / sizeof dtypes[0]; k++) {
        for (int op = PLD_SUM; op <= PLD_PROD; op++) {
            for (int mode = PLD_MESH; mode <= PLD_RING; mode++) {
                t.dtype = dtypes[k];
                t.op = (pld_reduce_op)op;
                t.mode = (pld_allreduce_mode)mode;
                cr_assert_eq(pld_window(db, t.dtype, 1, PLD_IDX(n), &t.data), PLD_OK);
                pld_status st = pld_launch(w, typed_kernel, &t);
                cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_world_error(w));
            }
        }
    }
    pld_world_finalize(w);
}

/* The listing of one call of `which` at P = 4, S = 64 fp32, with
 * PLD_LL_BYTES as given (NULL: unset); the caller frees it. */
static char *listing_of(const char *ll_bytes, int which)
{
    if (ll_bytes)
        setenv("PLD_LL_BYTES", ll_bytes, 1);
    else
        unsetenv("PLD_LL_BYTES");
    fixture f = {0};
    setup(&f, "0-3", 64);
    pld_ir_enable(f.w, 1);
    one_call o = {.f = &f, .which = which};
    cr_assert_eq(pld_launch(f.w, one_call_kernel, &o), PLD_OK, "%s", pld_world_error(f.w));
    char *ir = strdup(pld_ir_text(f.w));
    pld_world_finalize(f.w);
    return ir;
}

/* a small allgather in one round (the push is one round already: opt in):
 * puts into the peers' inboxes, each followed by its flag, then waits for
 * every peer's flag and copies out; the user's signal is not touched */
Test(listing, builtin_allgather_one_round, .timeout = 60)
{
    char *ir = listing_of("4K", C_ALLGATHER);
    cr_assert(strstr(ir, "path: one round (256 B per peer <= ") != NULL, "%s", ir);
    const char *put = strstr(ir, "-> pld.inbox@peer{");
    const char *flag = strstr(ir, "notify pld.inbox_flags@peer{");
    const char *wait = strstr(ir, "wait pld.inbox_flags[");
    cr_assert(put && flag && wait && put < flag && flag < wait,
              "each payload, then its flag, then the waits:\n%s", ir);
    cr_assert(strstr(ir, "wait sig") == NULL, "the user's signal is not waited on:\n%s", ir);
    cr_assert(strstr(ir, "+= -1") == NULL, "no epilogue:\n%s", ir);
    free(ir);
}

/* without PLD_LL_BYTES the allgather stays a push, and says why */
Test(listing, builtin_allgather_push_by_default, .timeout = 60)
{
    char *ir = listing_of(NULL, C_ALLGATHER);
    cr_assert(strstr(ir, "path: credit rounds (the push is one round already") != NULL, "%s", ir);
    cr_assert(strstr(ir, "wait sig") != NULL, "%s", ir);
    free(ir);
}

/* a small broadcast takes the one-round path by default; the non-roots
 * send empty flags, so every rank waits for every peer */
Test(listing, builtin_broadcast_one_round_by_default, .timeout = 60)
{
    char *ir = listing_of(NULL, C_BROADCAST);
    cr_assert(strstr(ir, "path: one round (1024 B per peer <= ") != NULL, "%s", ir);
    cr_assert(strstr(ir, "wait pld.inbox_flags[") != NULL && strstr(ir, "x3") != NULL, "%s", ir);
    cr_assert(strstr(ir, "wait sig") == NULL, "%s", ir);
    free(ir);
}
