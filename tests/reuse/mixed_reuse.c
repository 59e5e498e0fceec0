/* SPDX-License-Identifier: Apache-2.0 */
/* Mixed back-to-back builtin calls with no synchronisation between them.
 *
 * The ordering guarantee (G): when any rank starts builtin k+1 on a
 * signal, every rank has entered builtin k on it. So a rank may read the
 * window outputs of call k right after it returns, with no pld_barrier
 * before the next call, as long as call k+1 does not write the same windows;
 * and a builtin's inputs may be restaged as soon as it returns. This program
 * relies on exactly that and on nothing more:
 *
 *   - both MoE forms run: the indexed dispatch and combine, and the MoE
 *     exchange (per-expert counts, packed target) over every dtype;
 *   - the [P,1]-signal allreduce takes its algorithms in turn (mesh, the
 *     two-phase rs_ag, auto -- one round when small -- and recursive
 *     halving and doubling), the ring has its own
 *     kind; so does the broadcast (auto, the binomial tree, the pull form),
 *     and every rank scribbles over its copy once the call returns; and
 *     the allgather out of place (auto, recursive doubling, the push),
 *     in calls numbered 3 mod 4 right after an unread doubling allgather
 *     into the same target (in place it chooses as auto does: doubling
 *     under dear transfers); and the all_to_all (auto, Bruck's algorithm,
 *     the push), in odd-numbered calls and in every push turn right
 *     after another all_to_all into the same target: before a Bruck turn
 *     a Bruck call or a push, its rows checked first (a Bruck call writes
 *     a peer's target only after that peer entered it); before an auto or
 *     push turn a Bruck call whose rows are not read (the next call
 *     writes that window), so the push may come while a slow rank is
 *     still in the Bruck call;
 *   - one INT32 signal buffer serves every single-core call: a [P,1] view
 *     for the credit-barrier builtins and a [2(P-1),P] view of the same
 *     buffer for the allreduce ring. A second buffer, seen as [P,2], serves
 *     the two-core calls (allreduce_cores, indexed dispatch and combine) and
 *     some one-core indexed calls on its lane 0;
 *   - every builtin kind writes windows of its own, and the seeded draw never
 *     picks the same kind twice in a row. It favours the kind of call k-2,
 *     so that a rank that ran ahead into call k+1 would write the very
 *     window a slow peer is still checking for call k-1; and half the time
 *     it follows a dispatch with its combine at once;
 *   - inputs are restaged right before each call with values keyed by
 *     (call, rank, element), and every result is checked right after the
 *     call returns against a plain C reference: data of an earlier call, or
 *     of a peer's next call, never matches;
 *   - before it checks, a rank sometimes dawdles (sleeps or yields), giving
 *     its peers the time to run ahead;
 *   - as soon as a call returns, a rank overwrites what peers read during
 *     the call (plain-tensor inputs, a broadcast root's data, reduction
 *     windows, expert_out after a combine): a builtin that returned while a
 *     peer still read them would hand that peer garbage;
 *   - right after the last call, with no barrier, both signals must be
 *     all-zero on this rank: every builtin waits for each credit a peer sends
 *     to this rank's cells before it takes the credits back and returns.
 *
 * Plain C rather than Criterion, so that it runs under mpirun, in the TSan
 * build and under a schedule explorer:
 *
 *   mixed_reuse [-p a5sim] [-d 0-3] [--transport thread|process|mpi]
 *               [--iters N] [--seed S] [--teams K]
 *
 * --teams K splits the world into rows of K ranks (team x) and columns
 * (team y) and sends each call to this rank's row or column, in one order
 * drawn alike on every rank: both teams' groups run at once, each with its
 * own signals and windows, and calls of the two teams follow each other
 * with nothing in between.
 *
 * The profile defaults to a5sim (pld_indexed_all_to_all_v needs its URMA
 * model). Prints OK from the root process when every check passed. */
#define _POSIX_C_SOURCE 200809L

#include <pld/pld.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- sizes ------------------------------------------------------------------ */

#define S_SMALL 67       /* elements per row: odd, ragged against every chunk */
#define S_MED 1001       /* fp32 rows of 4 KB */
#define A2AV_M 3         /* rows per (source, destination) block of all_to_all_v */
#define A2AV_S 129       /* fp32 row of the second all_to_all_v view */
#define BIG_BYTES 240004 /* more than the 192 KiB UB: the builtins chunk it */
#define CORES_TINY 100   /* less than one 256-element tile: core 1 has nothing */
#define MOE_C 29         /* dispatch slots per source (more than one 12-row SQE) */
#define MOE_H 5
#define MOE_NMAX 37
#define MX_E 2 /* the MoE exchange: experts per rank, */
#define MX_M 3 /* rows per (destination, expert) block, */
#define MX_H 7 /* elements per row */

enum kind {
    K_BARRIER,
    K_BCAST,
    K_AG,
    K_AG_INPLACE,
    K_RS,
    K_MESH,
    K_RING,
    K_CORES,
    K_A2A,
    K_A2AV,
    K_DISPATCH,
    K_COMBINE,
    K_MX_DISPATCH,
    K_MX_COMBINE,
    K_N
};
static const char *const kind_name[K_N] = {
    [K_BARRIER] = "barrier",
    [K_BCAST] = "broadcast",
    [K_AG] = "allgather",
    [K_AG_INPLACE] = "allgather_inplace",
    [K_RS] = "reduce_scatter",
    [K_MESH] = "allreduce mesh/rs_ag/auto/rabenseifner",
    [K_RING] = "allreduce ring",
    [K_CORES] = "allreduce_cores",
    [K_A2A] = "all_to_all",
    [K_A2AV] = "all_to_all_v",
    [K_DISPATCH] = "indexed_all_to_all_v",
    [K_COMBINE] = "indexed_combine",
    [K_MX_DISPATCH] = "moe_dispatch",
    [K_MX_COMBINE] = "moe_combine",
};

/* The MoE exchange moves rows whatever their type: one buffer, every dtype. */
static const pld_dtype mx_dtype[5] = {PLD_FP32, PLD_BF16, PLD_INT8, PLD_INT32, PLD_FP16};

static const pld_dtype red_dtype[3] = {PLD_FP32, PLD_BF16, PLD_INT32};
static const char *const op_name[4] = {"sum", "max", "min", "prod"};

/* Per-rank host memory (plain-tensor inputs and outputs), one block per rank. */
typedef struct scratch {
    void *ag_local;     /* [1,S] */
    void *a2a_in;       /* [P,S] */
    void *a2av_in;      /* [P*M,S] */
    int32_t *a2av_cnt;  /* [P] */
    void *moe_in;       /* [NMAX,H] fp32 or int8 */
    int32_t *moe_index; /* [P,C] of the last dispatch: combine uses it too */
    int32_t *moe_recv;  /* [P] */
    float *moe_w;       /* [P,C] */
    float *moe_out;     /* [NMAX,H] */
    int32_t *lay_cnt;   /* [P]   another rank's layout, for the references */
    int32_t *lay_index; /* [P,C] */
    void *mx_in;        /* [P*E*M, H] of 4-byte elements at most */
    int32_t *mx_send;   /* [P,E] */
    int32_t *mx_off;    /* [E+1] */
} scratch;

typedef struct args {
    pld_dtensor sig, ring, sig2;       /* sig and ring view one buffer */
    pld_dtensor bcast[2];              /* int8 [S_SMALL], fp32 [big] */
    pld_dtensor ag[2], agi[2], a2a[2]; /* int8 [P,S_SMALL], fp32 [P,S_MED] */
    pld_dtensor a2av[2], a2av_recv;    /* int8 [P*M,S_SMALL], fp32 [P*M,A2AV_S]; [P,1] */
    pld_dtensor rs[3][2];              /* dtype x {[P,S_SMALL], [P,S_MED]} */
    pld_dtensor mesh[3][3], ring_data[3][3], cores[3][3]; /* dtype x {small, med, big} */
    pld_dtensor moe_target[2], moe_send, expert_out;      /* fp32/int8 [P*C,H]; [P,1]; fp32 */
    pld_dtensor mx_target[5], mx_eout[5], mx_out[5];      /* mx_dtype x [P*E*M, H] */
    pld_dtensor mx_recv;                                  /* [P,E] */
    unsigned char *scratch_base;
    size_t scratch_bytes; /* per rank */
    int iters;
    uint32_t seed;
    int dawdle; /* 0 under the schedule explorer: it picks who runs, a sleep only slows it */
    /* --teams K: this team's calls (windows sized for its groups), and the
     * other team's args; NULL: the whole world */
    const pld_team *team;
    const struct args *twin;
} args;

/* ---- hashing and the seeded draw ---------------------------------------------- */

static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static uint32_t hash4(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    uint32_t h = mix32(a ^ 0x9e3779b9U);
    h = mix32(h ^ b);
    h = mix32(h ^ (c * 0x85ebca6bU));
    return mix32(h ^ (d * 0xc2b2ae35U));
}

/* The call sequence: the same stream on every rank (xorshift64*). */
static uint32_t draw(uint64_t *s, uint32_t n)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t)((*s * 0x2545F4914F6CDD1DULL) >> 32) % n;
}

static int draw_kind(uint64_t *s, int prev, int prev2, int have_dispatch, int have_mx)
{
    /* half the time a dispatch is followed at once by its combine: only
     * then can a combine that pulls too early meet an expert step that has
     * not run yet (any call between orders them) */
    if ((prev == K_DISPATCH || prev == K_MX_DISPATCH) && draw(s, 2) == 0)
        return prev == K_DISPATCH ? K_COMBINE : K_MX_COMBINE;
    for (;;) {
        int k = prev2 >= 0 && draw(s, 2) == 0 ? prev2 : (int)draw(s, K_N);
        if (k == prev || (k == K_COMBINE && !have_dispatch) || (k == K_MX_COMBINE && !have_mx))
            continue;
        return k;
    }
}

/* ---- byte patterns for data movement --------------------------------------------- */

/* The chunk `src` makes for `dst` (-1: every rank) in call `call`. */
static uint32_t tag_of(uint32_t seed, int src, int dst, int call)
{
    return hash4(seed, (uint32_t)src, (uint32_t)dst, (uint32_t)call);
}

static uint8_t pat_byte(uint32_t tag, size_t k)
{
    return (uint8_t)(mix32(tag ^ mix32((uint32_t)(k >> 2) + 0x51ed27U)) >> (8 * (k & 3)));
}

static void fill_bytes(void *p, size_t n, uint32_t tag)
{
    uint8_t *b = p;
    for (size_t k = 0; k < n; k++)
        b[k] = pat_byte(tag, k);
}

typedef struct chk {
    pld_ctx *c;
    uint32_t seed;
    int call;
    enum kind kind;
    char what[96]; /* dtype, op, shape of the call */
} chk;

/* Bytes [0,n) of p must be the chunk `src` made for `dst` in this call. On
 * a mismatch the message also says whose chunk is there instead, when it is
 * the same pair's chunk of a nearby call (stale, or a peer ran ahead). */
static void check_bytes(const chk *h, const char *part, int partno, const void *p, size_t n,
                        int src, int dst)
{
    const uint8_t *b = p;
    uint32_t tag = tag_of(h->seed, src, dst, h->call);
    for (size_t k = 0; k < n; k++) {
        if (b[k] == pat_byte(tag, k))
            continue;
        char whose[64] = "";
        for (int other = h->call - 16; other <= h->call + 16; other++) {
            uint32_t t2 = tag_of(h->seed, src, dst, other);
            size_t m = k;
            while (m < n && m < k + 16 && b[m] == pat_byte(t2, m))
                m++;
            if (other != h->call && other >= 0 && m == (n < k + 16 ? n : k + 16)) {
                snprintf(whose, sizeof whose, " (the bytes of call %d are there)", other);
                break;
            }
        }
        pld_fail(h->c, "call %d %s (%s): rank %d %s %d byte %zu of %zu: got 0x%02x, want 0x%02x%s",
                 h->call, kind_name[h->kind], h->what, pld_rank(h->c), part, partno, k, n, b[k],
                 pat_byte(tag, k), whose);
    }
}

/* ---- numbers ---------------------------------------------------------------------- */

static uint16_t f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffU + ((u >> 16) & 1U); /* round to nearest even (no NaN here) */
    return (uint16_t)(u >> 16);
}

static float bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double get_el(pld_dtype t, const void *p, int64_t i)
{
    switch (t) {
    case PLD_FP32:
        return ((const float *)p)[i];
    case PLD_BF16:
        return bf16_to_f32(((const uint16_t *)p)[i]);
    default:
        return ((const int32_t *)p)[i];
    }
}

static void set_el(pld_dtype t, void *p, int64_t i, double v)
{
    switch (t) {
    case PLD_FP32:
        ((float *)p)[i] = (float)v;
        break;
    case PLD_BF16:
        ((uint16_t *)p)[i] = f32_to_bf16((float)v);
        break;
    default:
        ((int32_t *)p)[i] = (int32_t)v;
        break;
    }
}

/* Input of rank r at flat index i in call `call`: small integers, so every
 * partial result is exact in bf16 too, whatever the reduction order. Sum:
 * [-3,7]; Max/Min: a permutation of the ranks per index (one winner that
 * moves with i); Prod: +-1 with at most eight factors of 2. Outside bf16 a
 * per-call offset (Sum/Max/Min) names the call in the value itself. */
static double rv(pld_reduce_op op, pld_dtype t, int call, int r, int64_t i, int np)
{
    int64_t x = i + (int64_t)call * 7;
    double v;
    switch (op) {
    case PLD_SUM:
        v = (double)((r * 7 + x * 3 + (x >> 5)) % 11) - 3;
        break;
    case PLD_MAX:
    case PLD_MIN:
        v = (double)((r + x + x / np) % np) - (double)(np / 2);
        break;
    default:
        if (r < 8 && (r * 3 + x) % 7 == 0)
            return 2;
        return (r + 2 * x) % 5 == 0 ? -1 : 1;
    }
    if (t != PLD_BF16)
        v += (double)(call % 4096) * 32;
    return v;
}

static double rref(pld_reduce_op op, pld_dtype t, int call, int64_t i, int np)
{
    double acc = rv(op, t, call, 0, i, np);
    for (int r = 1; r < np; r++) {
        double x = rv(op, t, call, r, i, np);
        switch (op) {
        case PLD_SUM:
            acc += x;
            break;
        case PLD_MAX:
            acc = x > acc ? x : acc;
            break;
        case PLD_MIN:
            acc = x < acc ? x : acc;
            break;
        default:
            acc *= x;
            break;
        }
    }
    return acc;
}

static void check_reduced(const chk *h, pld_dtype t, pld_reduce_op op, const void *p, int64_t lo,
                          int64_t hi, int np)
{
    for (int64_t i = lo; i < hi; i++) {
        double got = get_el(t, p, i), want = rref(op, t, h->call, i, np);
        if (got != want)
            pld_fail(h->c, "call %d %s (%s): rank %d element %lld: got %g, want %g", h->call,
                     kind_name[h->kind], h->what, pld_rank(h->c), (long long)i, got, want);
    }
}

/* ---- the MoE layout of (call, rank), known to every rank ------------------------------ */

/* Counts in [0,C] (0 and C included); indices scattered with contiguous
 * runs and duplicates; -1 past the count (never read). */
static void moe_layout(uint32_t seed, int call, int s, int np, int32_t *cnt, int32_t *index)
{
    uint32_t st = hash4(seed, 0x40e, (uint32_t)call, (uint32_t)s);
#define NEXT(n) ((st = mix32(st + 0x6d2b79f5U)) % (uint32_t)(n))
    for (int d = 0; d < np; d++) {
        uint32_t pick = NEXT(5);
        cnt[d] = pick == 0 ? 0 : pick == 1 ? MOE_C : (int32_t)NEXT(MOE_C + 1);
        for (int j = 0; j < MOE_C; j++) {
            int32_t *x = &index[d * MOE_C + j];
            if (j >= cnt[d])
                *x = -1;
            else if (j > 0 && NEXT(3) == 0 && x[-1] + 1 < MOE_NMAX)
                *x = x[-1] + 1;
            else if (j > 0 && NEXT(7) == 0)
                *x = x[-1];
            else
                *x = (int32_t)NEXT(MOE_NMAX);
        }
    }
#undef NEXT
}

/* Dispatch payload of rank s, row `row`, column k in call `call`. */
static float moe_in_f32(uint32_t seed, int call, int s, int64_t row, int64_t k)
{
    return (float)((int)(hash4(seed ^ 0xf32U, (uint32_t)call, (uint32_t)s,
                               (uint32_t)(row * MOE_H + k)) %
                         2001U) -
                   1000);
}

static int8_t moe_in_i8(uint32_t seed, int call, int s, int64_t row, int64_t k)
{
    uint32_t v = hash4(seed ^ 0x18U, (uint32_t)call, (uint32_t)s, (uint32_t)(row * MOE_H + k));
    return (int8_t)((int)(v % 256U) - 128);
}

/* The toy expert of rank d: the exact fp32 it writes for payload x. Each
 * combine moves the experts to the next version (they rewrite expert_out as
 * soon as the combine returns, when no peer reads it any more). */
static float expert(float x, int d, int version)
{
    return x * (float)(d + 2) + (float)((d + 16 * version) % 1024);
}

static float moe_weight(uint32_t seed, int call, int d, int j)
{
    return 0.25f * (float)(1 + hash4(seed ^ 0x3e1U, (uint32_t)call, (uint32_t)d, (uint32_t)j) % 4);
}

/* ---- the kernel ------------------------------------------------------------------- */

/* A quarter of the time a rank sleeps 50-250 us before it checks a result,
 * another quarter it yields: long enough for a peer that may run ahead
 * (restage, push its next call's rows) to do so. */
static void dawdle(const args *a, int call, int me)
{
    if (!a->dawdle)
        return;
    uint32_t seed = a->seed;
    uint32_t h = hash4(seed, 0xda, (uint32_t)call, (uint32_t)me);
    if (h % 4 == 0) {
        struct timespec ts = {0, 50000 + (long)((h >> 8) % 200000)};
        nanosleep(&ts, NULL);
    } else if (h % 4 == 1) {
        sched_yield();
    }
}

/* Overwrites n bytes this rank owns with a pattern no check expects. */
static void scribble(void *p, size_t n, uint32_t seed, int call, int me)
{
    fill_bytes(p, n, tag_of(seed, me, -2, call));
}

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Carves one rank's block; with base NULL only sizes it. */
static size_t carve(unsigned char *base, int np, scratch *s)
{
    size_t off = 0;
#define TAKE(field, bytes)                                                                         \
    do {                                                                                           \
        if (base)                                                                                  \
            s->field = (void *)(base + off);                                                       \
        off += align64(bytes);                                                                     \
    } while (0)
    TAKE(ag_local, (size_t)S_MED * 4);
    TAKE(a2a_in, (size_t)np * S_MED * 4);
    TAKE(a2av_in, (size_t)np * A2AV_M * A2AV_S * 4);
    TAKE(a2av_cnt, (size_t)np * 4);
    TAKE(moe_in, (size_t)MOE_NMAX * MOE_H * 4);
    TAKE(moe_index, (size_t)np * MOE_C * 4);
    TAKE(moe_recv, (size_t)np * 4);
    TAKE(moe_w, (size_t)np * MOE_C * 4);
    TAKE(moe_out, (size_t)MOE_NMAX * MOE_H * 4);
    TAKE(lay_cnt, (size_t)np * 4);
    TAKE(lay_index, (size_t)np * MOE_C * 4);
    TAKE(mx_in, (size_t)np * MX_E * MX_M * MX_H * 4);
    TAKE(mx_send, (size_t)np * MX_E * 4);
    TAKE(mx_off, (size_t)(MX_E + 1) * 4);
#undef TAKE
    return off;
}

static int64_t numel(pld_dtensor t)
{
    int64_t n = 1;
    for (int i = 0; i < t.ndim; i++)
        n *= t.shape[i];
    return n;
}

static void describe(chk *h, pld_dtensor t, const char *extra)
{
    int n = snprintf(h->what, sizeof h->what, "%s%s%s [", pld_dtype_name(t.dtype),
                     extra[0] ? " " : "", extra);
    for (int i = 0; i < t.ndim && n > 0 && (size_t)n < sizeof h->what; i++)
        n += snprintf(h->what + n, sizeof h->what - (size_t)n, i ? ",%lld" : "%lld",
                      (long long)t.shape[i]);
    if (n > 0 && (size_t)n < sizeof h->what)
        snprintf(h->what + n, sizeof h->what - (size_t)n, "]");
}

/* The state of the last dispatch, for the expert step and the combines. */
typedef struct moe_state {
    int call; /* -1: none yet */
    int int8;
    int version; /* of the experts: combines since that dispatch */
    /* the same for the MoE exchange */
    int mx_call, mx_dt, mx_version;
} moe_state;

/* ---- the MoE exchange (per-expert counts, packed target) --------------------------- */

/* Rows rank s sends expert e of rank d in call `call`: 0 and M included. */
static int32_t mx_count(uint32_t seed, int call, int s, int d, int e)
{
    uint32_t v = hash4(seed ^ 0x3e2U, (uint32_t)call, (uint32_t)s, (uint32_t)(d * MX_E + e));
    return v % 4 == 0 ? 0 : v % 4 == 1 ? MX_M : (int32_t)((v >> 8) % (MX_M + 1));
}

/* The expert of version v flips these bits of every byte it returns. */
static uint8_t mx_key(int version)
{
    return (uint8_t)(0x5a + 29 * version) | 1u;
}

/* Where block (s, e) starts in rank d's packed target: expert-major, then
 * source. */
static int64_t mx_place(uint32_t seed, int call, int np, int d, int s, int e)
{
    int64_t row = 0;
    for (int e2 = 0; e2 < e; e2++)
        for (int s2 = 0; s2 < np; s2++)
            row += mx_count(seed, call, s2, d, e2);
    for (int s2 = 0; s2 < s; s2++)
        row += mx_count(seed, call, s2, d, e);
    return row;
}

static void run_mx_dispatch(const args *a, pld_ctx *c, chk *h, scratch *s, moe_state *ms,
                            uint64_t *rng)
{
    int me = pld_rank(c), np = pld_nranks(c), call = h->call;
    int dt = (int)draw(rng, 5);
    pld_dtensor tgt = a->mx_target[dt];
    describe(h, tgt, "E 2, M 3");
    size_t row = MX_H * pld_dtype_size(mx_dtype[dt]);
    int64_t rows = (int64_t)np * MX_E * MX_M;
    unsigned char *in = s->mx_in, *t = pld_local(c, tgt).data;
    for (int d = 0; d < np; d++)
        for (int e = 0; e < MX_E; e++) {
            s->mx_send[d * MX_E + e] = mx_count(a->seed, call, me, d, e);
            fill_bytes(in + (size_t)(d * MX_E + e) * MX_M * row, MX_M * row,
                       tag_of(a->seed, me, d * MX_E + e, call));
        }
    /* rows past the total keep what was there; peers write this window only
     * after this rank entered the call */
    uint8_t sentinel = (uint8_t)(call * 7 + 1);
    memset(t, sentinel, (size_t)rows * row);
    pld_moe_layout l = {.experts_per_rank = MX_E, .max_rows = MX_M};
    pld_moe_dispatch(c, &l, pld_tensor_make(in, mx_dtype[dt], 2, PLD_IDX(rows, MX_H)), tgt, a->sig,
                     pld_tensor_make(s->mx_send, PLD_INT32, 2, PLD_IDX(np, MX_E)), a->mx_recv,
                     pld_tensor_make(s->mx_off, PLD_INT32, 1, PLD_IDX(MX_E + 1)));
    scribble(in, (size_t)rows * row, a->seed, call, me);
    scribble(s->mx_send, (size_t)np * MX_E * 4, a->seed, call, me);
    dawdle(a, call, me);
    const int32_t *rc = pld_local(c, a->mx_recv).data;
    int64_t total = 0;
    for (int e = 0; e < MX_E; e++) {
        if (s->mx_off[e] != total)
            pld_fail(c, "call %d %s (%s): rank %d expert_offsets[%d]: got %d, want %lld", call,
                     kind_name[h->kind], h->what, me, e, (int)s->mx_off[e], (long long)total);
        for (int src = 0; src < np; src++) {
            int32_t n = mx_count(a->seed, call, src, me, e);
            if (rc[src * MX_E + e] != n)
                pld_fail(c, "call %d %s (%s): rank %d recv_counts[%d][%d]: got %d, want %d", call,
                         kind_name[h->kind], h->what, me, src, e, (int)rc[src * MX_E + e], (int)n);
            int64_t at = mx_place(a->seed, call, np, me, src, e);
            check_bytes(h, "packed block from rank", src, t + (size_t)at * row, (size_t)n * row,
                        src, me * MX_E + e);
            total += n;
        }
    }
    for (int64_t i = total * (int64_t)row; i < rows * (int64_t)row; i++)
        if (t[i] != sentinel)
            pld_fail(c,
                     "call %d %s (%s): rank %d target byte %lld past the %lld rows: got 0x%02x, "
                     "want 0x%02x",
                     call, kind_name[h->kind], h->what, me, (long long)i, (long long)total, t[i],
                     sentinel);
    /* the expert step: expert_out (same dtype view) = the rows, bits flipped */
    unsigned char *eo = pld_local(c, a->mx_eout[dt]).data;
    for (int64_t i = 0; i < total * (int64_t)row; i++)
        eo[i] = t[i] ^ mx_key(0);
    ms->mx_call = call;
    ms->mx_dt = dt;
    ms->mx_version = 0;
}

static void run_mx_combine(const args *a, pld_ctx *c, chk *h, scratch *s, moe_state *ms)
{
    int me = pld_rank(c), np = pld_nranks(c), call = h->call, dt = ms->mx_dt;
    char extra[64];
    snprintf(extra, sizeof extra, "dispatch of call %d, expert v%d", ms->mx_call, ms->mx_version);
    describe(h, a->mx_out[dt], extra);
    size_t row = MX_H * pld_dtype_size(mx_dtype[dt]);
    int64_t rows = (int64_t)np * MX_E * MX_M;
    for (int d = 0; d < np; d++)
        for (int e = 0; e < MX_E; e++)
            s->mx_send[d * MX_E + e] = mx_count(a->seed, ms->mx_call, me, d, e);
    unsigned char *o = pld_local(c, a->mx_out[dt]).data;
    uint8_t sentinel = (uint8_t)(call * 7 + 3);
    memset(o, sentinel, (size_t)rows * row); /* only this rank writes its out */
    pld_moe_layout l = {.experts_per_rank = MX_E, .max_rows = MX_M};
    pld_moe_combine(c, &l, a->mx_eout[dt], a->mx_out[dt], a->sig,
                    pld_tensor_make(s->mx_send, PLD_INT32, 2, PLD_IDX(np, MX_E)), a->mx_recv);
    scribble(s->mx_send, (size_t)np * MX_E * 4, a->seed, call, me);
    dawdle(a, call, me);
    uint8_t key = mx_key(ms->mx_version);
    for (int d = 0; d < np; d++)
        for (int e = 0; e < MX_E; e++) {
            int32_t n = mx_count(a->seed, ms->mx_call, me, d, e);
            uint32_t tag = tag_of(a->seed, me, d * MX_E + e, ms->mx_call);
            const unsigned char *b = o + (size_t)(d * MX_E + e) * MX_M * row;
            for (size_t k = 0; k < MX_M * row; k++) {
                uint8_t want = k < (size_t)n * row ? (uint8_t)(pat_byte(tag, k) ^ key) : sentinel;
                if (b[k] != want)
                    pld_fail(c,
                             "call %d %s (%s): rank %d out block (%d,%d) byte %zu (%d rows "
                             "back): got 0x%02x, want 0x%02x",
                             call, kind_name[h->kind], h->what, me, d, e, k, (int)n, b[k], want);
            }
        }
    /* no peer reads expert_out any more: the experts move to the next
     * version in place */
    const int32_t *rc = pld_local(c, a->mx_recv).data;
    int64_t total = 0;
    for (int i = 0; i < np * MX_E; i++)
        total += rc[i];
    unsigned char *eo = pld_local(c, a->mx_eout[dt]).data;
    uint8_t step = (uint8_t)(mx_key(ms->mx_version) ^ mx_key(ms->mx_version + 1));
    for (int64_t i = 0; i < total * (int64_t)row; i++)
        eo[i] ^= step;
    ms->mx_version++;
}

static void run_dispatch(const args *a, pld_ctx *c, chk *h, scratch *s, moe_state *ms,
                         uint64_t *rng)
{
    int me = pld_rank(c), np = pld_nranks(c), call = h->call;
    int int8 = (int)draw(rng, 2);
    int core_num = 1 + (int)draw(rng, 2);
    pld_dtensor sig = core_num == 2 || draw(rng, 2) ? a->sig2 : a->sig;
    pld_dtensor tgt = a->moe_target[int8];
    char extra[32];
    snprintf(extra, sizeof extra, "core_num %d", core_num);
    describe(h, tgt, extra);
    /* stage: payload, layout (send_counts is a window peers read) */
    int32_t *send = pld_local(c, a->moe_send).data;
    moe_layout(a->seed, call, me, np, send, s->moe_index);
    for (int64_t r = 0; r < MOE_NMAX; r++)
        for (int64_t k = 0; k < MOE_H; k++) {
            if (int8)
                ((int8_t *)s->moe_in)[r * MOE_H + k] = moe_in_i8(a->seed, call, me, r, k);
            else
                ((float *)s->moe_in)[r * MOE_H + k] = moe_in_f32(a->seed, call, me, r, k);
        }
    for (int i = 0; i < np; i++)
        s->moe_recv[i] = -7;
    /* rows past the counts keep what was there: a sentinel of this call
     * (peers write this window only after this rank entered the call) */
    void *t = pld_local(c, tgt).data;
    float fsent = -0.5f - (float)(call % 1000);
    int8_t isent = (int8_t)(call % 199 - 99);
    for (int64_t i = 0; i < (int64_t)np * MOE_C * MOE_H; i++) {
        if (int8)
            ((int8_t *)t)[i] = isent;
        else
            ((float *)t)[i] = fsent;
    }
    pld_tensor in =
        pld_tensor_make(s->moe_in, int8 ? PLD_INT8 : PLD_FP32, 2, PLD_IDX(MOE_NMAX, MOE_H));
    pld_indexed_all_to_all_v(
        c, in, tgt, sig, a->moe_send, pld_tensor_make(s->moe_recv, PLD_INT32, 2, PLD_IDX(np, 1)),
        pld_tensor_make(s->moe_index, PLD_INT32, 2, PLD_IDX(np, MOE_C)), core_num);
    scribble(s->moe_in, (size_t)MOE_NMAX * MOE_H * 4, a->seed, call, me);
    dawdle(a, call, me);
    /* check: target_me[src*C + j] = input_src[index_src[me][j]] for j < count */
    for (int src = 0; src < np; src++) {
        moe_layout(a->seed, call, src, np, s->lay_cnt, s->lay_index);
        int32_t n = s->lay_cnt[me];
        if (s->moe_recv[src] != n)
            pld_fail(c, "call %d %s (%s): rank %d recv_counts[%d]: got %d, want %d", call,
                     kind_name[h->kind], h->what, me, src, (int)s->moe_recv[src], (int)n);
        for (int64_t j = 0; j < MOE_C; j++)
            for (int64_t k = 0; k < MOE_H; k++) {
                int64_t at = ((int64_t)src * MOE_C + j) * MOE_H + k;
                double got, want;
                if (int8) {
                    got = ((int8_t *)t)[at];
                    want = j < n ? moe_in_i8(a->seed, call, src, s->lay_index[me * MOE_C + j], k)
                                 : isent;
                } else {
                    got = ((float *)t)[at];
                    want = j < n ? moe_in_f32(a->seed, call, src, s->lay_index[me * MOE_C + j], k)
                                 : fsent;
                }
                if (got != want)
                    pld_fail(c,
                             "call %d %s (%s): rank %d target row %lld (source %d slot %lld of "
                             "%d) col %lld: got %g, want %g",
                             call, kind_name[h->kind], h->what, me, (long long)(src * MOE_C + j),
                             src, (long long)j, (int)n, (long long)k, got, want);
            }
    }
    /* the expert step: expert_out rows of the counted slots, the rest a
     * value no correct combine ever reads */
    float *e = pld_local(c, a->expert_out).data;
    for (int src = 0; src < np; src++)
        for (int64_t j = 0; j < MOE_C; j++)
            for (int64_t k = 0; k < MOE_H; k++) {
                int64_t at = ((int64_t)src * MOE_C + j) * MOE_H + k;
                float x = int8 ? (float)((int8_t *)t)[at] : ((float *)t)[at];
                e[at] = j < s->moe_recv[src] ? expert(x, me, 0) : 1e30f;
            }
    ms->call = call;
    ms->int8 = int8;
    ms->version = 0;
}

static void run_combine(const args *a, pld_ctx *c, chk *h, scratch *s, moe_state *ms, uint64_t *rng)
{
    int me = pld_rank(c), np = pld_nranks(c), call = h->call;
    int core_num = 1 + (int)draw(rng, 2);
    pld_dtensor sig = core_num == 2 || draw(rng, 2) ? a->sig2 : a->sig;
    char extra[64];
    snprintf(extra, sizeof extra, "core_num %d, dispatch of call %d", core_num, ms->call);
    describe(h, a->expert_out, extra);
    for (int d = 0; d < np; d++)
        for (int j = 0; j < MOE_C; j++)
            s->moe_w[d * MOE_C + j] = moe_weight(a->seed, call, d, j);
    for (int64_t i = 0; i < (int64_t)MOE_NMAX * MOE_H; i++)
        s->moe_out[i] = 12345.0f; /* the call zeroes every row */
    pld_indexed_combine(
        c, a->expert_out, pld_tensor_make(s->moe_out, PLD_FP32, 2, PLD_IDX(MOE_NMAX, MOE_H)), sig,
        a->moe_send, pld_tensor_make(s->moe_index, PLD_INT32, 2, PLD_IDX(np, MOE_C)),
        pld_tensor_make(s->moe_w, PLD_FP32, 2, PLD_IDX(np, MOE_C)), core_num);
    dawdle(a, call, me);
    char ver[16];
    snprintf(ver, sizeof ver, ", expert v%d", ms->version);
    strncat(h->what, ver, sizeof h->what - strlen(h->what) - 1);
    /* out[t] = sum over (d, j < count[d]) with index[d][j] == t, in (d, j)
     * order, of w[d][j] * expert_d(input_me[t]) */
    const int32_t *cnt = pld_local(c, a->moe_send).data;
    for (int64_t tkn = 0; tkn < MOE_NMAX; tkn++)
        for (int64_t k = 0; k < MOE_H; k++) {
            float want = 0;
            for (int d = 0; d < np; d++)
                for (int j = 0; j < cnt[d]; j++)
                    if (s->moe_index[d * MOE_C + j] == tkn) {
                        float x = ms->int8 ? (float)moe_in_i8(a->seed, ms->call, me, tkn, k)
                                           : moe_in_f32(a->seed, ms->call, me, tkn, k);
                        want += s->moe_w[d * MOE_C + j] * expert(x, d, ms->version);
                    }
            float got = s->moe_out[tkn * MOE_H + k];
            if (got != want)
                pld_fail(c, "call %d %s (%s): rank %d output row %lld col %lld: got %g, want %g",
                         call, kind_name[h->kind], h->what, me, (long long)tkn, (long long)k,
                         (double)got, (double)want);
        }
    /* no peer reads expert_out any more: the experts move to the next
     * version in place (exact: only the integer offset changes) */
    float *e = pld_local(c, a->expert_out).data;
    float step = expert(0, me, ms->version + 1) - expert(0, me, ms->version);
    for (int src = 0; src < np; src++)
        for (int64_t j = 0; j < s->moe_recv[src]; j++)
            for (int64_t k = 0; k < MOE_H; k++)
                e[((int64_t)src * MOE_C + j) * MOE_H + k] += step;
    ms->version++;
    scribble(s->moe_w, (size_t)np * MOE_C * 4, a->seed, call, me);
}

static void run_reduction(const args *a, pld_ctx *c, chk *h, uint64_t *rng)
{
    int me = pld_rank(c), np = pld_nranks(c), call = h->call;
    int dt = (int)draw(rng, 3);
    pld_dtype t = red_dtype[dt];
    pld_reduce_op op = h->kind == K_RS ? PLD_SUM : (pld_reduce_op)draw(rng, 4);
    uint32_t pick = draw(rng, 20);
    int sz = h->kind == K_RS ? (int)(pick % 2) : pick < 8 ? 0 : pick < 15 ? 1 : 2;
    pld_dtensor data = h->kind == K_RS     ? a->rs[dt][sz]
                       : h->kind == K_MESH ? a->mesh[dt][sz]
                       : h->kind == K_RING ? a->ring_data[dt][sz]
                                           : a->cores[dt][sz];
    /* the [P,1]-signal allreduce algorithms take turns by call number (no
     * draw: the seeded stream stays what it was). Auto keeps the calls
     * numbered 2 mod 3: the broadcast's and the allgather's auto turns are
     * 0 mod 3, so one-round calls often follow each other at once, which a
     * single inbox slot per pair (ll_one_slot) needs to show; mesh and
     * recursive halving and doubling share the calls numbered 0 mod 3. */
    static const pld_allreduce_mode mesh_modes[4] = {PLD_MESH, PLD_RS_AG, PLD_AUTO,
                                                     PLD_RABENSEIFNER};
    static const char *const mesh_mode_name[4] = {"mesh", "rs_ag", "auto", "rabenseifner"};
    int mm = call % 3 == 0 && (call / 3) % 2 ? 3 : call % 3;
    char what[32];
    snprintf(what, sizeof what, "%s%s%s", op_name[op], h->kind == K_MESH ? ", " : "",
             h->kind == K_MESH ? mesh_mode_name[mm] : "");
    describe(h, data, what);
    void *p = pld_local(c, data).data;
    int64_t n = numel(data);
    for (int64_t i = 0; i < n; i++)
        set_el(t, p, i, rv(op, t, call, me, i, np));
    switch (h->kind) {
    case K_RS:
        pld_reduce_scatter(c, data, a->sig, op);
        break;
    case K_MESH:
        pld_allreduce(c, data, a->sig, op, mesh_modes[mm]);
        break;
    case K_RING:
        pld_allreduce(c, data, a->ring, op, PLD_RING);
        break;
    default:
        pld_allreduce_cores(c, data, a->sig2, op, PLD_MESH, 2);
        break;
    }
    size_t esz = pld_dtype_size(t), row = (size_t)(n / np) * esz;
    if (h->kind == K_RS) { /* the rows peers read; mine is the result */
        scribble(p, (size_t)me * row, a->seed, call, me);
        scribble((char *)p + (size_t)(me + 1) * row, (size_t)(np - me - 1) * row, a->seed, call,
                 me);
    }
    dawdle(a, call, me);
    if (h->kind == K_RS)
        check_reduced(h, t, op, p, me * (n / np), (me + 1) * (n / np), np);
    else
        check_reduced(h, t, op, p, 0, n, np);
    scribble(p, (size_t)n * esz, a->seed, call, me);
}

static void run_call(const args *a, pld_ctx *c, chk *h, scratch *s, moe_state *ms, uint64_t *rng)
{
    int me = pld_rank(c), np = pld_nranks(c), call = h->call;
    uint32_t seed = a->seed;
    h->what[0] = '\0';
    switch (h->kind) {
    case K_BARRIER:
        snprintf(h->what, sizeof h->what, "-");
        pld_barrier(c, a->sig);
        break;
    case K_BCAST: {
        int root = (int)draw(rng, (uint32_t)np);
        pld_dtensor d = a->bcast[draw(rng, 3) == 0];
        /* the algorithms take turns by call number (no draw: the seeded
         * stream stays what it was) */
        static const pld_broadcast_mode bmodes[3] = {PLD_BCAST_AUTO, PLD_BCAST_BINOMIAL,
                                                     PLD_BCAST_PULL};
        static const char *const bmode_name[3] = {"auto", "binomial", "pull"};
        int bm = call % 3;
        char extra[40];
        snprintf(extra, sizeof extra, "root %d, %s", root, bmode_name[bm]);
        describe(h, d, extra);
        size_t bytes = (size_t)numel(d) * pld_dtype_size(d.dtype);
        void *p = pld_local(c, d).data;
        uint32_t tag = tag_of(seed, root, -1, call);
        if (me == root)
            fill_bytes(p, bytes, tag);
        pld_broadcast_with(c, d, a->sig, root, bmodes[bm]);
        dawdle(a, call, me);
        check_bytes(h, "data from root", root, p, bytes, root, -1);
        /* nobody pulls it any more: not from the root, and in the tree not
         * from an inner rank either */
        scribble(p, bytes, seed, call, me);
        break;
    }
    case K_AG:
    case K_AG_INPLACE: {
        int v = (int)draw(rng, 2);
        pld_dtensor tgt = h->kind == K_AG ? a->ag[v] : a->agi[v];
        /* out of place, the algorithms take turns by call number (no draw:
         * the seeded stream stays what it was) */
        static const pld_allgather_mode agmodes[3] = {PLD_AG_AUTO, PLD_AG_DOUBLING, PLD_AG_PUSH};
        static const char *const agmode_name[3] = {"auto", "doubling", "push"};
        int am = call % 3;
        describe(h, tgt, h->kind == K_AG ? agmode_name[am] : "");
        size_t row = (size_t)tgt.shape[1] * pld_dtype_size(tgt.dtype);
        unsigned char *rows = pld_local(c, tgt).data;
        if (h->kind == K_AG) {
            pld_tensor in = pld_tensor_make(s->ag_local, tgt.dtype, 2, PLD_IDX(1, tgt.shape[1]));
            if (call % 4 == 3) {
                /* calls numbered 3 mod 4: a doubling allgather into the
                 * same target first, its result not read (the next call
                 * writes that window: a peer may already be writing it),
                 * so the call below may push into rows a slow rank is
                 * still forwarding */
                fill_bytes(s->ag_local, row, tag_of(seed, me, -2, call));
                pld_allgather_with(c, in, tgt, a->sig, PLD_AG_DOUBLING);
            }
            fill_bytes(s->ag_local, row, tag_of(seed, me, -1, call));
            pld_allgather_with(c, in, tgt, a->sig, agmodes[am]);
            scribble(s->ag_local, row, seed, call, me);
        } else {
            fill_bytes(rows + (size_t)me * row, row, tag_of(seed, me, -1, call));
            pld_allgather_inplace(c, tgt, a->sig);
        }
        dawdle(a, call, me);
        for (int r = 0; r < np; r++)
            check_bytes(h, "row", r, rows + (size_t)r * row, row, r, -1);
        break;
    }
    case K_A2A: {
        pld_dtensor tgt = a->a2a[draw(rng, 2)];
        /* the algorithms take turns by call number (no draw: the seeded
         * stream stays what it was) */
        static const pld_all_to_all_mode a2amodes[3] = {PLD_A2A_AUTO, PLD_A2A_BRUCK, PLD_A2A_PUSH};
        static const char *const a2amode_name[3] = {"auto", "bruck", "push"};
        int xm = call % 3;
        describe(h, tgt, a2amode_name[xm]);
        size_t row = (size_t)tgt.shape[1] * pld_dtype_size(tgt.dtype);
        unsigned char *in = s->a2a_in, *rows = pld_local(c, tgt).data;
        pld_tensor in2 = pld_tensor_make(in, tgt.dtype, 2, PLD_IDX(np, tgt.shape[1]));
        if (call % 2 == 1 || xm == 2) {
            /* odd-numbered calls and every push turn (so that runs of
             * 100 calls have some too): another all_to_all into the same
             * target first. Before a Bruck call, a Bruck or a push call,
             * its result checked at once: a peer writes this rank's target
             * in a Bruck call only after this rank has entered it. Before
             * a push or auto call, a Bruck call whose result is not read
             * (the next call writes that window: a peer may already be
             * writing it), so the call below may push into a target whose
             * owner has not returned from the Bruck call: its done round
             * keeps that push out until every rank has read its landing
             * rows and written its final rows */
            pld_all_to_all_mode pre = xm == 1 && (call / 6) % 2 ? PLD_A2A_PUSH : PLD_A2A_BRUCK;
            for (int d = 0; d < np; d++)
                fill_bytes(in + (size_t)d * row, row, tag_of(seed ^ 0xb2cU, me, d, call));
            pld_all_to_all_with(c, in2, tgt, a->sig, pre);
            scribble(in, (size_t)np * row, seed, call, me);
            if (xm == 1) {
                chk pre_h = *h; /* its chunks are keyed by another seed */
                pre_h.seed = seed ^ 0xb2cU;
                describe(&pre_h, tgt,
                         pre == PLD_A2A_PUSH ? "push, before a bruck call"
                                             : "bruck, before a bruck call");
                dawdle(a, call, me);
                for (int src = 0; src < np; src++)
                    check_bytes(&pre_h, "row from rank", src, rows + (size_t)src * row, row, src,
                                me);
            }
        }
        for (int d = 0; d < np; d++)
            fill_bytes(in + (size_t)d * row, row, tag_of(seed, me, d, call));
        pld_all_to_all_with(c, in2, tgt, a->sig, a2amodes[xm]);
        scribble(in, (size_t)np * row, seed, call, me);
        dawdle(a, call, me);
        for (int src = 0; src < np; src++)
            check_bytes(h, "row from rank", src, rows + (size_t)src * row, row, src, me);
        break;
    }
    case K_A2AV: {
        pld_dtensor tgt = a->a2av[draw(rng, 2)];
        describe(h, tgt, "M 3");
        size_t row = (size_t)tgt.shape[1] * pld_dtype_size(tgt.dtype);
        unsigned char *in = s->a2av_in, *rows = pld_local(c, tgt).data;
        /* counts in [0, M+2]: 0, and above M (clamped to M), included */
        for (int d = 0; d < np; d++) {
            fill_bytes(in + (size_t)d * A2AV_M * row, A2AV_M * row, tag_of(seed, me, d, call));
            s->a2av_cnt[d] = (int32_t)(hash4(seed, 0xa2a, (uint32_t)call, (uint32_t)(me * np + d)) %
                                       (A2AV_M + 3));
        }
        pld_all_to_all_v(c, pld_tensor_make(in, tgt.dtype, 2, PLD_IDX(np * A2AV_M, tgt.shape[1])),
                         tgt, a->sig, pld_tensor_make(s->a2av_cnt, PLD_INT32, 1, PLD_IDX(np)),
                         a->a2av_recv);
        scribble(in, (size_t)np * A2AV_M * row, seed, call, me);
        scribble(s->a2av_cnt, (size_t)np * 4, seed, call, me);
        dawdle(a, call, me);
        const int32_t *rc = pld_local(c, a->a2av_recv).data;
        for (int src = 0; src < np; src++) {
            int32_t want = (int32_t)(hash4(seed, 0xa2a, (uint32_t)call, (uint32_t)(src * np + me)) %
                                     (A2AV_M + 3));
            want = want > A2AV_M ? A2AV_M : want;
            if (rc[src] != want)
                pld_fail(c, "call %d %s (%s): rank %d recv_counts[%d]: got %d, want %d", call,
                         kind_name[h->kind], h->what, me, src, (int)rc[src], (int)want);
            check_bytes(h, "block from rank", src, rows + (size_t)src * A2AV_M * row,
                        (size_t)want * row, src, me);
        }
        break;
    }
    case K_RS:
    case K_MESH:
    case K_RING:
    case K_CORES:
        run_reduction(a, c, h, rng);
        break;
    case K_DISPATCH:
        run_dispatch(a, c, h, s, ms, rng);
        break;
    case K_COMBINE:
        run_combine(a, c, h, s, ms, rng);
        break;
    case K_MX_DISPATCH:
        run_mx_dispatch(a, c, h, s, ms, rng);
        break;
    case K_MX_COMBINE:
        run_mx_combine(a, c, h, s, ms);
        break;
    case K_N:
        break;
    }
}

static void check_signal_zero(pld_ctx *c, pld_dtensor sig, const char *name)
{
    int64_t rows = sig.shape[0], cols = sig.ndim == 2 ? sig.shape[1] : 1;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            int32_t v = sig.ndim == 2 ? pld_signal_read(c, sig, PLD_IDX(i, j))
                                      : pld_signal_read(c, sig, PLD_IDX(i));
            if (v != 0)
                pld_fail(c, "after the sequence: rank %d signal %s cell [%lld,%lld] = %d, want 0",
                         pld_rank(c), name, (long long)i, (long long)j, (int)v);
        }
}

/* One sequence of calls: over the world, or over one team's groups. */
typedef struct lane {
    const args *a;
    pld_ctx *c;
    scratch s;
    uint64_t rng;
    moe_state ms;
    int prev, prev2, call;
} lane;

static void lane_begin(lane *l, const args *a, pld_ctx *c, int slot)
{
    l->a = a;
    l->c = c;
    /* scratch by world rank: group ranks repeat across groups */
    carve(a->scratch_base + (size_t)slot * a->scratch_bytes, pld_nranks(c), &l->s);
    l->rng = 0x9e3779b97f4a7c15ULL * ((uint64_t)a->seed + 1);
    l->ms = (moe_state){.call = -1, .int8 = 0, .mx_call = -1};
    l->prev = l->prev2 = -1;
    l->call = 0;
}

static void lane_step(lane *l)
{
    chk h = {.c = l->c, .seed = l->a->seed, .call = l->call++};
    h.kind = (enum kind)draw_kind(&l->rng, l->prev, l->prev2, l->ms.call >= 0, l->ms.mx_call >= 0);
    run_call(l->a, l->c, &h, &l->s, &l->ms, &l->rng);
    l->prev2 = l->prev;
    l->prev = (int)h.kind;
}

static void lane_end(lane *l)
{
    /* no barrier first: the last call took back every credit sent to me */
    check_signal_zero(l->c, pld_nranks(l->c) > 1 ? l->a->ring : l->a->sig, "sig");
    check_signal_zero(l->c, l->a->sig2, "sig2");
}

static void k_mixed(pld_ctx *c, void *p)
{
    const args *a = p;
    int me = pld_rank(c);
    lane l[2];
    if (!a->team) {
        lane_begin(&l[0], a, c, me);
        for (int call = 0; call < a->iters; call++)
            lane_step(&l[0]);
        lane_end(&l[0]);
        return;
    }
    /* teams: every call goes to the x team's group or the y team's, in an
     * order drawn alike on every rank (members of a group must call the
     * same builtins in the same order; ranks of different groups interleave
     * the two teams the same way, or a cycle of groups would wait for each
     * other), with nothing between the calls */
    lane_begin(&l[0], a, pld_team_ctx(c, a->team), me);
    lane_begin(&l[1], a->twin, pld_team_ctx(c, a->twin->team), me);
    uint64_t pick = 0x2545f4914f6cdd1dULL * ((uint64_t)a->seed + 7);
    for (int call = 0; call < a->iters; call++)
        lane_step(&l[draw(&pick, 2)]);
    lane_end(&l[0]);
    lane_end(&l[1]);
}

/* ---- host side -------------------------------------------------------------------- */

static pld_world *world;

static void need(pld_status st, const char *what)
{
    if (st != PLD_OK) {
        fprintf(stderr, "mixed_reuse: %s: %s: %s\n", what, pld_status_name(st),
                pld_world_error(world));
        exit(1);
    }
}

static pld_window_buffer *buffer(size_t bytes, const char *name)
{
    pld_window_buffer *b;
    need(pld_alloc_window_buffer(world, bytes, name, &b), name);
    return b;
}

static pld_dtensor view(pld_window_buffer *b, pld_dtype t, int ndim, const int64_t *shape)
{
    pld_dtensor d;
    need(pld_window(b, t, ndim, shape, &d), "pld_window");
    return d;
}

/* Views of one buffer: dtype x {small, medium, big}. */
static void reduction_views(pld_window_buffer *b, int64_t np, int tiny, pld_dtensor out[3][3])
{
    for (int dt = 0; dt < 3; dt++) {
        pld_dtype t = red_dtype[dt];
        out[dt][0] =
            tiny ? view(b, t, 1, PLD_IDX(CORES_TINY)) : view(b, t, 2, PLD_IDX(np, S_SMALL));
        out[dt][1] = view(b, t, 2, PLD_IDX(np, S_MED));
        out[dt][2] = view(b, t, 1, PLD_IDX((int64_t)(BIG_BYTES / pld_dtype_size(t))));
    }
}

/* The signals and one window per kind for groups of np ranks, and each
 * world rank's scratch; buffer names start with prefix. */
static void setup(args *a, int np, const char *prefix)
{
    int64_t p = np, rr = np > 1 ? 2 * (p - 1) : 1;
    char nm[64];
#define NAME(x) (snprintf(nm, sizeof nm, "%s%s", prefix, (x)), nm)
    /* the signals: [P,1] and [2(P-1),P] views of one buffer; [P,2] */
    size_t cells = (size_t)(rr * p > p ? rr * p : p);
    pld_window_buffer *sb = buffer(4 * cells, NAME("sig"));
    a->sig = view(sb, PLD_INT32, 2, PLD_IDX(p, 1));
    a->ring = np > 1 ? view(sb, PLD_INT32, 2, PLD_IDX(rr, p)) : a->sig;
    a->sig2 = view(buffer(4 * (size_t)p * 2, NAME("sig2")), PLD_INT32, 2, PLD_IDX(p, 2));

    /* one buffer per kind */
    pld_window_buffer *b = buffer(BIG_BYTES, NAME("bcast"));
    a->bcast[0] = view(b, PLD_INT8, 1, PLD_IDX(S_SMALL));
    a->bcast[1] = view(b, PLD_FP32, 1, PLD_IDX(BIG_BYTES / 4));
    const char *rowed[3] = {"allgather", "allgather_inplace", "all_to_all"};
    pld_dtensor *rv_out[3] = {a->ag, a->agi, a->a2a};
    for (int k = 0; k < 3; k++) {
        b = buffer((size_t)p * S_MED * 4, NAME(rowed[k]));
        rv_out[k][0] = view(b, PLD_INT8, 2, PLD_IDX(p, S_SMALL));
        rv_out[k][1] = view(b, PLD_FP32, 2, PLD_IDX(p, S_MED));
    }
    b = buffer((size_t)p * A2AV_M * A2AV_S * 4, NAME("all_to_all_v"));
    a->a2av[0] = view(b, PLD_INT8, 2, PLD_IDX(p * A2AV_M, S_SMALL));
    a->a2av[1] = view(b, PLD_FP32, 2, PLD_IDX(p * A2AV_M, A2AV_S));
    a->a2av_recv =
        view(buffer(4 * (size_t)p, NAME("a2av_recv_counts")), PLD_INT32, 2, PLD_IDX(p, 1));
    b = buffer((size_t)p * S_MED * 4, NAME("reduce_scatter"));
    for (int dt = 0; dt < 3; dt++) {
        a->rs[dt][0] = view(b, red_dtype[dt], 2, PLD_IDX(p, S_SMALL));
        a->rs[dt][1] = view(b, red_dtype[dt], 2, PLD_IDX(p, S_MED));
    }
    size_t red_bytes = (size_t)p * S_MED * 4 > BIG_BYTES ? (size_t)p * S_MED * 4 : BIG_BYTES;
    reduction_views(buffer(red_bytes, NAME("allreduce_mesh")), p, 0, a->mesh);
    reduction_views(buffer(red_bytes, NAME("allreduce_ring")), p, 0, a->ring_data);
    reduction_views(buffer(red_bytes, NAME("allreduce_cores")), p, 1, a->cores);
    b = buffer((size_t)p * MOE_C * MOE_H * 4, NAME("moe_target"));
    a->moe_target[0] = view(b, PLD_FP32, 2, PLD_IDX(p * MOE_C, MOE_H));
    a->moe_target[1] = view(b, PLD_INT8, 2, PLD_IDX(p * MOE_C, MOE_H));
    a->moe_send = view(buffer(4 * (size_t)p, NAME("moe_send_counts")), PLD_INT32, 2, PLD_IDX(p, 1));
    a->expert_out = view(buffer((size_t)p * MOE_C * MOE_H * 4, NAME("expert_out")), PLD_FP32, 2,
                         PLD_IDX(p * MOE_C, MOE_H));
    const char *mx_names[3] = {"mx_target", "mx_expert_out", "mx_out"};
    pld_dtensor *mx_views[3] = {a->mx_target, a->mx_eout, a->mx_out};
    for (int k = 0; k < 3; k++) {
        b = buffer((size_t)p * MX_E * MX_M * MX_H * 4, NAME(mx_names[k]));
        for (int dt = 0; dt < 5; dt++)
            mx_views[k][dt] = view(b, mx_dtype[dt], 2, PLD_IDX(p * MX_E * MX_M, MX_H));
    }
    a->mx_recv =
        view(buffer(4 * (size_t)p * MX_E, NAME("mx_recv_counts")), PLD_INT32, 2, PLD_IDX(p, MX_E));
#undef NAME

    /* per-rank inputs and outputs of the plain-tensor arguments, by world rank */
    scratch dummy;
    int world_np = pld_world_size(world);
    a->scratch_bytes = carve(NULL, np, &dummy);
    a->scratch_base = pld_host_alloc(world, a->scratch_bytes * (size_t)world_np);
    if (!a->scratch_base)
        need(PLD_ERR_NOMEM, "pld_host_alloc");
}

static args *new_args(long iters, long seed)
{
    args *a = pld_host_alloc(world, sizeof *a);
    if (!a)
        need(PLD_ERR_NOMEM, "pld_host_alloc");
    memset(a, 0, sizeof *a);
    a->iters = (int)iters;
    a->seed = (uint32_t)seed;
    a->dawdle = getenv("PLD_SCHED") == NULL;
    return a;
}

static int usage(void)
{
    fprintf(stderr, "usage: mixed_reuse [-p a5sim] [-d 0-3] [--transport thread|process|mpi] "
                    "[--iters N] [--seed S] [--teams K]\n");
    return 2;
}

int main(int argc, char **argv)
{
    /* a5sim unless the command line names a profile (the last -p wins) */
    static char opt_p[] = "-p", opt_a5[] = "a5sim";
    char **av = malloc(sizeof *av * (size_t)(argc + 3));
    if (!av)
        return 1;
    av[0] = argv[0];
    av[1] = opt_p;
    av[2] = opt_a5;
    for (int i = 1; i <= argc; i++)
        av[i + 2] = argv[i];
    int ac = argc + 2;
    char **avp = av;
    pld_status st = pld_world_init_from_args(&world, &ac, &avp);
    if (st != PLD_OK) {
        fprintf(stderr, "mixed_reuse: %s: %s\n", pld_status_name(st), pld_last_error());
        free(av);
        return 1;
    }
    long iters = 300, seed = 1, teams = 0;
    for (int i = 1; i < ac; i++) {
        char *end = NULL;
        const char *v = NULL;
        long *dst = NULL;
        if (!strncmp(avp[i], "--iters", 7))
            dst = &iters, v = avp[i] + 7;
        else if (!strncmp(avp[i], "--seed", 6))
            dst = &seed, v = avp[i] + 6;
        else if (!strncmp(avp[i], "--teams", 7))
            dst = &teams, v = avp[i] + 7;
        if (v && *v == '=')
            v++;
        else if (v && !*v && i + 1 < ac)
            v = avp[++i];
        else
            v = NULL; /* not ours, or no value */
        if (v && *v)
            *dst = strtol(v, &end, 10);
        if (!end || *end || iters < 0) {
            pld_world_finalize(world);
            free(av);
            return usage();
        }
    }
    free(av);

    int np = pld_world_size(world);
    args *a = new_args(iters, seed);
    if (teams == 0) {
        setup(a, np, "");
    } else {
        /* rows of `teams` ranks (x) and the columns (y), every group full */
        if (teams < 1 || np % teams) {
            fprintf(stderr, "mixed_reuse: --teams %ld must divide the %d ranks\n", teams, np);
            pld_world_finalize(world);
            return usage();
        }
        pld_team *x, *y;
        need(pld_team_split_2d(world, NULL, (int)teams, "x", &x, "y", &y), "pld_team_split_2d");
        args *b = new_args(iters, seed + 1000003);
        a->team = x;
        b->team = y;
        a->twin = b;
        b->twin = a;
        setup(a, (int)teams, "x.");
        setup(b, np / (int)teams, "y.");
    }

    st = pld_launch(world, k_mixed, a);
    int rc = 0;
    if (st != PLD_OK) {
        fprintf(stderr, "mixed_reuse: %s: %s\n", pld_status_name(st), pld_world_error(world));
        rc = 1;
    } else if (pld_is_root_process(world)) {
        printf("OK\n");
        fflush(stdout);
    }
    pld_world_finalize(world);
    return rc;
}
