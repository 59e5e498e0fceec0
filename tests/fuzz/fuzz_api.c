/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness over pld's public API on the thread transport.
 *
 * Each input is decoded into one world (P = 2..4, platform, check bits, a
 * short wait timeout) and a sequence of host operations: window buffers,
 * views with fuzzed dtypes/ndim/extents, host views, host blocks, resets,
 * host builtins, queries, and launches of a small kernel program whose every
 * argument comes from the input (tiles, load/store, remote load/store/reduce,
 * put/get with xfer options, notify/wait, every builtin). The world is
 * finalized at the end of the input with whatever is still live, so each
 * input runs alone and replays exactly.
 *
 * What the harness asserts, besides the sanitizers:
 *  - every failed call leaves a non-empty pld_world_error message;
 *  - after a failed launch the world still works: a launch of a known-good
 *    kernel (an allreduce of known values, checked) succeeds;
 *  - memory the library hands back (host views, pld_local, tile data) is
 *    readable and writable over its whole extent.
 *
 * The harness only uses live handles: it keeps tables of window buffers,
 * views, host blocks and (per rank) tiles, and drops views of a freed
 * buffer, and separately (on by default; -DPLD_FUZZ_STALE=0 leaves them
 * out) operates on stale handles: double frees, uses after free, calls
 * after finalize, nested launches.
 *
 * Waits cannot hang a run: the world's wait timeout is 0.5-1 s and the
 * thread transport's deadlock detector ends a launch whose ranks all wait
 * (or have finished) in about 60 ms.
 * Sizes are bounded (windows up to 256 KiB, plain tensors inside a 64 KiB
 * per-rank arena) so an input stays far below libFuzzer's -timeout. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pld/pld.h>

#ifndef PLD_FUZZ_STALE
#define PLD_FUZZ_STALE 1
#endif
/* 1: also run the operations that hit library bugs found and not yet fixed
 * (listed in docs/dev/fuzzing.md, reproducers in tests/fuzz/known/). */
#ifndef PLD_FUZZ_KNOWN_BUGS
#define PLD_FUZZ_KNOWN_BUGS 0
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

/* Huge host_alloc requests must come back as NULL, not as an ASan report:
 * that is what the library's callers see without ASan. */
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1:detect_leaks=1";
}

const char *__ubsan_default_options(void)
{
    return "print_stacktrace=1:halt_on_error=1";
}

/* ---- limits ------------------------------------------------------------- */

enum {
    FZ_MAX_P = 4,
    FZ_WINS = 8,         /* live window buffers per input */
    FZ_VIEWS = 16,       /* live views */
    FZ_HOSTS = 8,        /* live host blocks */
    FZ_TILES = 8,        /* live tiles per rank per launch */
    FZ_KOPS = 16,        /* kernel ops per launch */
    FZ_LAUNCHES = 8,     /* launches (incl. host builtins) per input: bounds timeouts */
    FZ_HOST_OPS = 64,    /* host ops per input */
    FZ_ARENA = 64 * 1024 /* per-rank plain-tensor storage */
};

/* ---- input reader: past the end every read is 0 -------------------------- */

typedef struct fz_rd {
    const uint8_t *p;
    size_t n, i;
} fz_rd;

static uint8_t rd8(fz_rd *r)
{
    return r->i < r->n ? r->p[r->i++] : 0;
}

static uint32_t rd32(fz_rd *r)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++)
        v |= (uint32_t)rd8(r) << (8 * k);
    return v;
}

static int rd_done(const fz_rd *r)
{
    return r->i >= r->n;
}

static const int64_t special64[] = {-1,
                                    -2,
                                    -64,
                                    9,
                                    15,
                                    16,
                                    31,
                                    32,
                                    33,
                                    63,
                                    64,
                                    65,
                                    127,
                                    128,
                                    255,
                                    256,
                                    1000,
                                    1024,
                                    4096,
                                    16384,
                                    65535,
                                    65536,
                                    65537,
                                    INT32_MAX,
                                    (int64_t)INT32_MAX + 1,
                                    INT32_MIN,
                                    (int64_t)1 << 32,
                                    ((int64_t)1 << 32) + 1,
                                    (int64_t)1 << 40,
                                    ((int64_t)1 << 40) + 1,
                                    (int64_t)1 << 60,
                                    (int64_t)1 << 61,
                                    (int64_t)1 << 62,
                                    INT64_MAX,
                                    INT64_MIN,
                                    INT64_MIN + 1,
                                    -((int64_t)1 << 32),
                                    ((int64_t)1 << 62) + ((int64_t)1 << 61)};
#define NSPECIAL ((int)(sizeof special64 / sizeof special64[0]))

/* An extent or offset: mostly small, sometimes a multiple of P, sometimes a
 * value at an edge of int32/int64 or of the library's 2^40 limit. */
static int64_t rd_ext(fz_rd *r, int P)
{
    uint8_t b = rd8(r);
    if (b < 128)
        return b % 9;
    if (b < 160)
        return (int64_t)P * (b % 4 + 1);
    if (b < 208)
        return b - 151; /* 9..56 */
    return special64[b % NSPECIAL];
}

/* An enum value: the valid ones, one past each end, and far-off values. */
static int rd_enum(fz_rd *r, int nvalid)
{
    uint8_t b = rd8(r);
    if (b < 224)
        return b % (nvalid + 2) - 1;
    static const int far[] = {INT_MAX, INT_MIN, 1000, -1000, 255, 256, 65536, 17};
    return far[b % 8];
}

static int rd_int(fz_rd *r, int P)
{
    uint8_t b = rd8(r);
    if (b < 200)
        return b % (P + 2) - 1;
    static const int far[] = {INT_MAX, INT_MIN, 1000, -1000, 48, 36, 37, 49};
    return far[b % 8];
}

/* ---- handles ------------------------------------------------------------- */

typedef struct fz_win {
    pld_window_buffer *buf; /* NULL: slot free */
    size_t bytes;
} fz_win;

typedef struct fz_view {
    int live, win;
    pld_dtensor t;
} fz_view;

/* A dtensor reference in a kernel op: a view of the table, possibly with one
 * field of the public struct overwritten (the library must reject it), or a
 * zeroed dtensor. */
typedef struct fz_vref {
    int8_t view; /* -1: zeroed dtensor (buf NULL) */
    uint8_t mod, dim;
    int64_t val;
} fz_vref;

/* A plain tensor in a kernel op. */
typedef struct fz_tspec {
    uint8_t kind; /* 0 arena, 1 pld_local(view), 2 NULL data */
    int dtype, ndim;
    int64_t shape[PLD_MAX_DIMS];
    size_t off; /* arena byte offset, chosen so valid tensors fit */
    uint8_t mark;
    fz_vref v;
} fz_tspec;

/* An index array passed to the library: always PLD_MAX_DIMS entries, so a
 * library that reads more than ndim of them is caught reading past it. */
typedef struct fz_idx {
    int64_t v[PLD_MAX_DIMS];
    uint8_t mark; /* 0: plain array; k: PLD_IDX-marked with length k-1 */
    uint8_t rel;  /* v[0] += this rank (PLD_IDX(me, ...)) */
} fz_idx;

typedef struct fz_peer {
    uint8_t rel;
    int v;
} fz_peer;

enum {
    K_TILE_CREATE,
    K_TILE_FREE,
    K_TILE_FILL,
    K_LOAD,
    K_STORE,
    K_TILE_REDUCE,
    K_REMOTE_LOAD,
    K_REMOTE_STORE,
    K_REMOTE_REDUCE,
    K_PUT,
    K_GET,
    K_NOTIFY,
    K_WAIT,
    K_SIGNAL_READ,
    K_LOCAL,
    K_BARRIER,
    K_BROADCAST,
    K_ALLGATHER,
    K_REDUCE_SCATTER,
    K_ALLREDUCE,
    K_ALL_TO_ALL,
    K_ALL_TO_ALL_V,
    K_INDEXED,
    K_COMBINE,
    K_FAIL,
    K_QUERY,
    K_MOE_DISPATCH,
    K_MOE_COMBINE,
    K_STALE, /* only with PLD_FUZZ_STALE */
    K_COUNT
};

typedef struct fz_kop {
    uint8_t code;
    uint8_t skew; /* builtins: rank P-1 changes one argument (agreement check) */
    uint8_t tile[2];
    fz_vref v[4];
    fz_tspec ts[4];
    fz_idx idx[3];
    fz_peer peer;
    int e[4]; /* enums and small ints: op, mode, root, core_num, ... */
    int dtype;
    int64_t a, b;
    int32_t value;
    uint8_t has_xfer, xfer_parts;
    int64_t chunk_rows, chunk_cols;
    int pipeline;
} fz_kop;

typedef struct fz_state fz_state;

typedef struct fz_launch {
    fz_state *s;
    int nops;
    fz_kop ops[FZ_KOPS];
    pld_dtensor views[FZ_VIEWS];
} fz_launch;

struct fz_state {
    pld_world *w;
    int P;
    fz_win win[FZ_WINS];
    fz_view view[FZ_VIEWS];
    void *host[FZ_HOSTS];
    size_t host_bytes[FZ_HOSTS];
    unsigned char *arena[FZ_MAX_P];
    pld_dtensor ok_sig, ok_data; /* the harness's own windows for the usability check */
    int launches;
    fz_launch L;
#if PLD_FUZZ_STALE
    pld_window_buffer *dead_win[FZ_WINS];
    pld_dtensor dead_view;
    int have_dead_view;
    void *dead_host;
#endif
};

/* ---- assertions ------------------------------------------------------------ */

static _Noreturn void fz_die(const char *what, pld_status st, const char *msg)
{
    fprintf(stderr, "fuzz_api: %s: %s: '%s'\n", what, pld_status_name(st), msg ? msg : "(null)");
    abort();
}

static int fz_verbose = -1; /* env PLD_FUZZ_VERBOSE=1: every checked call's status on stderr */

/* A failed call must say why. */
static void fz_expect_msg(fz_state *s, const char *call, pld_status st)
{
    if (fz_verbose < 0)
        fz_verbose = getenv("PLD_FUZZ_VERBOSE") != NULL;
    if (fz_verbose)
        fprintf(stderr, "fuzz_api: %s: %s%s%s\n", call, pld_status_name(st), st ? ": " : "",
                st ? pld_world_error(s->w) : "");
    if (st == PLD_OK)
        return;
    const char *m = pld_world_error(s->w);
    if (!m || !*m)
        fz_die(call, st, "error status with an empty pld_world_error message");
}

/* Reads and writes back every byte: ASan flags memory the library handed
 * out that is not really there. */
static void fz_touch(void *p, size_t bytes)
{
    volatile unsigned char *q = p;
    for (size_t i = 0; i < bytes; i++)
        q[i] = q[i];
}

static size_t fz_tensor_bytes(pld_tensor t)
{
    size_t esz = pld_dtype_size(t.dtype);
    if (!t.data || !esz || t.ndim < 1 || t.ndim > PLD_MAX_DIMS)
        return 0;
    size_t n = esz;
    for (int i = 0; i < t.ndim; i++) {
        if (t.shape[i] < 0 || __builtin_mul_overflow(n, (size_t)t.shape[i], &n))
            fz_die("a tensor handed out by the library", PLD_OK, "has a bad shape");
    }
    return n;
}

/* ---- the usability check ------------------------------------------------------ */

static void ok_kernel(pld_ctx *c, void *arg)
{
    fz_state *s = arg;
    int me = pld_rank(c), n = pld_nranks(c);
    /* no barrier around it: the allreduce orders its own window and signal,
     * and a barrier here could hide a world left broken */
    pld_tensor d = pld_local(c, s->ok_data);
    int32_t *v = d.data;
    for (int j = 0; j < 4; j++)
        v[j] = me + 1 + j;
    pld_allreduce(c, s->ok_data, s->ok_sig, PLD_SUM, PLD_MESH);
    for (int j = 0; j < 4; j++)
        if (v[j] != n * (n + 1) / 2 + n * j)
            pld_fail(c, "allreduce element %d is %d, expected %d", j, v[j],
                     n * (n + 1) / 2 + n * j);
}

static void fz_check_usable(fz_state *s, const char *after)
{
    pld_status st = pld_launch(s->w, ok_kernel, s);
    /* A correct kernel's wait can only time out when the machine starves a
     * rank (seen at load 20-28 on 2 cores, 500 ms waits): try again; a world
     * that is really broken fails every time, or with another status. */
    for (int again = 0; again < 2 && st == PLD_ERR_TIMEOUT; again++)
        st = pld_launch(s->w, ok_kernel, s);
    if (st != PLD_OK) {
        char what[128];
        snprintf(what, sizeof what, "world unusable after %s", after);
        fz_die(what, st, pld_world_error(s->w));
    }
}

/* ---- decoding --------------------------------------------------------------------- */

static void rd_idx(fz_rd *r, int P, fz_idx *x)
{
    for (int k = 0; k < PLD_MAX_DIMS; k++)
        x->v[k] = rd_ext(r, P);
    uint8_t b = rd8(r);
    x->mark = b & 7;
    if (x->mark > 5)
        x->mark = 0;
    x->rel = (b >> 3) & 1;
}

static void rd_vref(fz_rd *r, fz_vref *v)
{
    uint8_t b = rd8(r);
    v->view = b == 255 ? -1 : (int8_t)(b % FZ_VIEWS);
    uint8_t m = rd8(r);
    v->mod = m < 224 ? 0 : m % 4 + 1; /* 1 dtype, 2 ndim, 3 extent, 4 buf NULL */
    v->dim = m % PLD_MAX_DIMS;
    v->val = v->mod ? special64[m % NSPECIAL] : 0;
    if (v->mod == 1 || v->mod == 2)
        v->val = (int64_t)(m % 12) - 2;
}

static size_t dtype_size_any(int dtype)
{
    return dtype >= 0 && dtype < PLD_DTYPE_COUNT ? pld_dtype_size((pld_dtype)dtype) : 0;
}

static void rd_tspec(fz_rd *r, int P, fz_tspec *t)
{
    uint8_t b = rd8(r);
    t->kind = b < 160 ? 0 : b < 240 ? 1 : 2;
    t->dtype = rd_enum(r, PLD_DTYPE_COUNT);
    uint8_t nd = rd8(r);
    t->ndim = nd < 240 ? nd % 4 + 1 : (int)(nd % 4) - 1 + (nd & 1) * 5; /* -1..2, 4..7 */
    for (int k = 0; k < PLD_MAX_DIMS; k++)
        t->shape[k] = rd_ext(r, P);
    t->mark = rd8(r) % 6;
    uint32_t off = rd32(r);
    rd_vref(r, &t->v);
    if (t->kind != 0)
        return;
    /* A well-formed tensor must fit its storage (the library cannot check
     * that); malformed ones (bad dtype, ndim or a negative extent) must be
     * rejected before any access, so they keep their extents. */
    size_t esz = dtype_size_any(t->dtype);
    if (!esz || t->ndim < 1 || t->ndim > PLD_MAX_DIMS) {
        t->off = 0;
        return;
    }
    size_t bytes = esz;
    int bad = 0;
    for (int k = 0; k < t->ndim; k++)
        bad |= t->shape[k] < 0;
    if (bad) {
        t->off = 0;
        return;
    }
    for (int k = 0; k < t->ndim; k++)
        if (__builtin_mul_overflow(bytes, (size_t)t->shape[k], &bytes) || bytes > FZ_ARENA) {
            for (int j = 0; j < t->ndim; j++)
                t->shape[j] %= 9; /* 8^4 * 8 bytes = 32 KiB: fits */
            bytes = esz;
            for (int j = 0; j < t->ndim; j++)
                bytes *= (size_t)t->shape[j];
            break;
        }
    t->off = (off % (FZ_ARENA - bytes + 1)) / esz * esz;
}

static void rd_kop(fz_rd *r, int P, fz_kop *o)
{
    memset(o, 0, sizeof *o);
    o->code = rd8(r) % K_COUNT;
    uint8_t sk = rd8(r);
    o->skew = sk < 240 ? 0 : sk % 5 + 1;
    o->tile[0] = rd8(r);
    o->tile[1] = rd8(r);
    for (int k = 0; k < 4; k++)
        rd_vref(r, &o->v[k]);
    for (int k = 0; k < 3; k++)
        rd_idx(r, P, &o->idx[k]);
    uint8_t pb = rd8(r);
    o->peer.rel = pb < 192;
    o->peer.v = o->peer.rel ? pb : rd_int(r, P);
    for (int k = 0; k < 4; k++)
        o->e[k] = rd_enum(r, 4);
    o->dtype = rd_enum(r, PLD_DTYPE_COUNT);
    o->a = rd_ext(r, P);
    o->b = rd_ext(r, P);
    o->value = (int32_t)rd_ext(r, P);
    if (rd8(r) >= 224)
        o->value = (int32_t)rd32(r);
    uint8_t xb = rd8(r);
    o->has_xfer = xb & 1;
    o->xfer_parts = (xb >> 1) & 7;
    o->chunk_rows = (xb & 16) ? rd_ext(r, P) : 0;
    o->chunk_cols = (xb & 32) ? rd_ext(r, P) : 0;
    o->pipeline = (xb & 64) ? rd_enum(r, 1) : 0;
    /* only the ops that use plain tensors read their specs: keeps inputs short */
    int nts = 0;
    switch (o->code) {
    case K_LOAD:
    case K_STORE:
    case K_PUT:
    case K_GET:
    case K_ALLGATHER:
    case K_ALL_TO_ALL:
    case K_QUERY:
        nts = 1;
        break;
    case K_ALL_TO_ALL_V:
        nts = 2;
        break;
    case K_INDEXED:
        nts = 3;
        break;
    case K_COMBINE:
        nts = 3;
        break;
    case K_MOE_DISPATCH: /* input, send_counts, expert_offsets */
        nts = 3;
        break;
    case K_MOE_COMBINE: /* send_counts */
        nts = 1;
        break;
    default:
        break;
    }
    for (int k = 0; k < nts; k++)
        rd_tspec(r, P, &o->ts[k]);
}

/* ---- kernel side ------------------------------------------------------------------ */

typedef struct fz_rank {
    pld_ctx *c;
    int me, n;
    pld_tile *tiles[FZ_TILES];
    int ntiles;
#if PLD_FUZZ_STALE
    pld_tile *dead_tile;
#endif
} fz_rank;

/* e + d for a mode number, saturated: the fuzzer's enums take any int,
 * and an out-of-range mode must reach the library (which names it), not
 * overflow here. */
static int k_shift(int e, int d)
{
    int64_t s = (int64_t)e + d;
    return s < INT_MIN ? INT_MIN : s > INT_MAX ? INT_MAX : (int)s;
}

static pld_dtensor k_view(fz_launch *L, const fz_vref *v)
{
    pld_dtensor t;
    memset(&t, 0, sizeof t);
    if (v->view >= 0 && L->views[v->view].buf)
        t = L->views[v->view];
    switch (v->mod) {
    case 1:
        t.dtype = (pld_dtype)v->val;
        break;
    case 2:
        t.ndim = (int)v->val;
        break;
    case 3:
        t.shape[v->dim] = v->val;
        break;
    case 4:
        t.buf = NULL;
        break;
    default:
        break;
    }
    return t;
}

static const int64_t *k_idx(const fz_rank *R, fz_idx *x, int64_t *tmp)
{
    memcpy(tmp, x->v, sizeof x->v);
    if (x->rel) /* wraps at INT64_MAX instead of overflowing: the library sees a huge value */
        tmp[0] = (int64_t)((uint64_t)tmp[0] + (uint64_t)R->me);
    if (x->mark)
        return pld_idx_mark(tmp, x->mark - 1);
    return tmp;
}

static int k_peer(const fz_rank *R, const fz_peer *p)
{
    return p->rel ? (R->me + p->v) % R->n : p->v;
}

static pld_tensor k_tensor(fz_rank *R, fz_launch *L, fz_tspec *t)
{
    if (t->kind == 1) {
        pld_tensor x = pld_local(R->c, k_view(L, &t->v));
        fz_touch(x.data, fz_tensor_bytes(x));
        return x;
    }
    int64_t shape[PLD_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    const int64_t *sp = shape;
    if (t->mark)
        sp = pld_idx_mark(shape, t->mark - 1);
    void *data = t->kind == 0 ? L->s->arena[R->me] + t->off : NULL;
    return pld_tensor_make(data, (pld_dtype)t->dtype, t->ndim, sp);
}

/* Bytes of a live tile; a tile whose size does not fit a size_t is a bug. */
static size_t k_tile_bytes(const pld_tile *t)
{
    size_t n = 0;
    int64_t r = pld_tile_rows(t), c = pld_tile_cols(t);
    if (r < 0 || c < 0 || __builtin_mul_overflow((size_t)r, (size_t)c, &n) ||
        __builtin_mul_overflow(n, pld_dtype_size(pld_tile_dtype(t)), &n))
        fz_die("a tile the library created", PLD_OK, "has a shape whose size overflows");
    return n;
}

static pld_tile *k_tile(fz_rank *R, uint8_t b)
{
    if (b == 255 || R->ntiles == 0)
        return NULL;
    return R->tiles[b % R->ntiles];
}

static void k_drop_tile(fz_rank *R, pld_tile *t)
{
    for (int i = 0; i < R->ntiles; i++)
        if (R->tiles[i] == t) {
            R->tiles[i] = R->tiles[--R->ntiles];
            return;
        }
}

static void k_run_op(fz_rank *R, fz_launch *L, const fz_kop *src)
{
    pld_ctx *c = R->c;
    fz_kop o = *src;
    int64_t i0[PLD_MAX_DIMS], i1[PLD_MAX_DIMS], i2[PLD_MAX_DIMS];
    /* agreement: the last rank changes one argument of a builtin */
    if (o.skew && R->me == R->n - 1) {
        switch (o.skew) { /* bit flips: no overflow on INT_MAX */
        case 1:
            o.e[0] ^= 1;
            break;
        case 2:
            o.v[1] = o.v[0];
            break;
        case 3:
            o.e[2] ^= 1;
            break;
        case 4:
            o.v[0].view = (int8_t)((o.v[0].view + 1) % FZ_VIEWS);
            break;
        default:
            o.e[3] ^= 1;
            break;
        }
    }
    if (fz_verbose > 0 && R->me == 0)
        fprintf(stderr, "fuzz_api: rank 0: kernel op %d\n", o.code);
    switch (o.code) {
    case K_TILE_CREATE: {
        if (R->ntiles == FZ_TILES)
            break;
        pld_tile *t = pld_tile_create(c, (pld_dtype)o.dtype, o.a, o.b);
        if (!t)
            pld_fail(c, "pld_tile_create returned NULL without ending the kernel");
        if (pld_tile_rows(t) != o.a || pld_tile_cols(t) != o.b)
            pld_fail(c, "tile is [%lld,%lld], asked [%lld,%lld]", (long long)pld_tile_rows(t),
                     (long long)pld_tile_cols(t), (long long)o.a, (long long)o.b);
        fz_touch(pld_tile_data(t), k_tile_bytes(t));
        R->tiles[R->ntiles++] = t;
        break;
    }
    case K_TILE_FREE: {
        pld_tile *t = k_tile(R, o.tile[0]);
        pld_tile_free(c, t);
        k_drop_tile(R, t);
        break;
    }
    case K_TILE_FILL: {
        pld_tile *t = k_tile(R, o.tile[0]);
        if (!t)
            break;
        size_t bytes = k_tile_bytes(t);
        unsigned char *p = pld_tile_data(t);
        for (size_t i = 0; i < bytes; i++)
            p[i] = (unsigned char)(i * 7 + (size_t)o.value + (size_t)R->me);
        break;
    }
    case K_LOAD:
        pld_load(c, k_tile(R, o.tile[0]), k_tensor(R, L, &o.ts[0]), k_idx(R, &o.idx[0], i0));
        break;
    case K_STORE:
        pld_store(c, k_tile(R, o.tile[0]), k_tensor(R, L, &o.ts[0]), k_idx(R, &o.idx[0], i0));
        break;
    case K_TILE_REDUCE:
        if (o.e[1] & 1)
            pld_tile_mul(c, k_tile(R, o.tile[0]), k_tile(R, o.tile[1]));
        else
            pld_tile_reduce(c, k_tile(R, o.tile[0]), k_tile(R, o.tile[1]), (pld_reduce_op)o.e[0]);
        break;
    case K_REMOTE_LOAD:
        pld_remote_load(c, k_tile(R, o.tile[0]), k_view(L, &o.v[0]), k_peer(R, &o.peer),
                        k_idx(R, &o.idx[0], i0));
        break;
    case K_REMOTE_STORE:
        pld_remote_store(c, k_tile(R, o.tile[0]), k_view(L, &o.v[0]), k_peer(R, &o.peer),
                         k_idx(R, &o.idx[0], i0), (pld_atomic)o.e[0]);
        break;
    case K_REMOTE_REDUCE:
        pld_remote_reduce(c, k_tile(R, o.tile[0]), k_view(L, &o.v[0]), k_peer(R, &o.peer),
                          k_idx(R, &o.idx[0], i0), (pld_reduce_op)o.e[0]);
        break;
    case K_PUT:
    case K_GET: {
        pld_xfer x;
        memset(&x, 0, sizeof x);
        /* each of the three region arrays is present or not: all three or
         * none is legal, anything else is PLD_ERR_ARG */
        unsigned parts = o.xfer_parts ^ 7u;
        if (parts & 1)
            x.dst_offsets = k_idx(R, &o.idx[0], i0);
        if (parts & 2)
            x.src_offsets = k_idx(R, &o.idx[1], i1);
        if (parts & 4)
            x.shape = k_idx(R, &o.idx[2], i2);
        x.atomic = (pld_atomic)o.e[0];
        x.chunk_rows = o.chunk_rows;
        x.chunk_cols = o.chunk_cols;
        x.pipeline = o.pipeline;
        const pld_xfer *xp = o.has_xfer ? &x : NULL;
        if (o.code == K_PUT)
            pld_put(c, k_view(L, &o.v[0]), k_peer(R, &o.peer), k_tensor(R, L, &o.ts[0]), xp);
        else
            pld_get(c, k_tensor(R, L, &o.ts[0]), k_peer(R, &o.peer), k_view(L, &o.v[0]), xp);
        break;
    }
    case K_NOTIFY:
        pld_notify(c, k_view(L, &o.v[0]), k_peer(R, &o.peer), k_idx(R, &o.idx[0], i0), o.value,
                   (pld_notify_op)o.e[0]);
        break;
    case K_WAIT:
        pld_wait(c, k_view(L, &o.v[0]), k_idx(R, &o.idx[0], i0), o.value, (pld_wait_cmp)o.e[0]);
        break;
    case K_SIGNAL_READ:
        (void)pld_signal_read(c, k_view(L, &o.v[0]), k_idx(R, &o.idx[0], i0));
        break;
    case K_LOCAL: {
        pld_tensor t = pld_local(c, k_view(L, &o.v[0]));
        fz_touch(t.data, fz_tensor_bytes(t));
        break;
    }
    case K_BARRIER:
        pld_barrier(c, k_view(L, &o.v[1]));
        break;
    case K_BROADCAST: /* e[1] = 0: pld_broadcast; else mode e[1] - 1 (invalid ones too) */
        if (o.e[1] == 0)
            pld_broadcast(c, k_view(L, &o.v[0]), k_view(L, &o.v[1]), o.e[2]);
        else
            pld_broadcast_with(c, k_view(L, &o.v[0]), k_view(L, &o.v[1]), o.e[2],
                               (pld_broadcast_mode)k_shift(o.e[1], -1));
        break;
    case K_ALLGATHER: /* e[1] odd: in place; else e[2] = 0: pld_allgather, or mode
                       * e[2] - 1 (invalid ones too) */
        if (o.e[1] & 1)
            pld_allgather_inplace(c, k_view(L, &o.v[0]), k_view(L, &o.v[1]));
        else if (o.e[2] == 0)
            pld_allgather(c, k_tensor(R, L, &o.ts[0]), k_view(L, &o.v[0]), k_view(L, &o.v[1]));
        else
            pld_allgather_with(c, k_tensor(R, L, &o.ts[0]), k_view(L, &o.v[0]), k_view(L, &o.v[1]),
                               (pld_allgather_mode)k_shift(o.e[2], -1));
        break;
    case K_REDUCE_SCATTER:
        pld_reduce_scatter(c, k_view(L, &o.v[0]), k_view(L, &o.v[1]), (pld_reduce_op)o.e[0]);
        break;
    case K_ALLREDUCE: { /* mode e[1] (mesh, ring), or 15 + e[2] when e[2] != 0 (auto,
                         rs_ag, Rabenseifner; invalid ones too) */
        pld_allreduce_mode m = (pld_allreduce_mode)(o.e[2] == 0 ? o.e[1] : k_shift(o.e[2], 15));
        if (o.e[3] == 1 || o.e[3] < 0)
            pld_allreduce(c, k_view(L, &o.v[0]), k_view(L, &o.v[1]), (pld_reduce_op)o.e[0], m);
        else
            pld_allreduce_cores(c, k_view(L, &o.v[0]), k_view(L, &o.v[1]), (pld_reduce_op)o.e[0], m,
                                o.e[3]);
        break;
    }
    case K_ALL_TO_ALL: /* e[1] = 0: pld_all_to_all, else mode e[1] - 1 (invalid ones too) */
        if (o.e[1] == 0)
            pld_all_to_all(c, k_tensor(R, L, &o.ts[0]), k_view(L, &o.v[0]), k_view(L, &o.v[1]));
        else
            pld_all_to_all_with(c, k_tensor(R, L, &o.ts[0]), k_view(L, &o.v[0]), k_view(L, &o.v[1]),
                                (pld_all_to_all_mode)k_shift(o.e[1], -1));
        break;
    case K_ALL_TO_ALL_V:
        pld_all_to_all_v(c, k_tensor(R, L, &o.ts[0]), k_view(L, &o.v[0]), k_view(L, &o.v[1]),
                         k_tensor(R, L, &o.ts[1]), k_view(L, &o.v[2]));
        break;
    case K_INDEXED:
        pld_indexed_all_to_all_v(c, k_tensor(R, L, &o.ts[0]), k_view(L, &o.v[0]),
                                 k_view(L, &o.v[1]), k_view(L, &o.v[2]), k_tensor(R, L, &o.ts[1]),
                                 k_tensor(R, L, &o.ts[2]), o.e[3]);
        break;
    case K_COMBINE:
        pld_indexed_combine(c, k_view(L, &o.v[0]), k_tensor(R, L, &o.ts[0]), k_view(L, &o.v[1]),
                            k_view(L, &o.v[2]), k_tensor(R, L, &o.ts[1]), k_tensor(R, L, &o.ts[2]),
                            o.e[3]);
        break;
    case K_MOE_DISPATCH:
    case K_MOE_COMBINE: {
        /* E and M from the op's small ints (0 and negatives included); a
         * layout pointer of NULL now and then */
        pld_moe_layout l = {.experts_per_rank = o.e[0], .max_rows = o.a};
        const pld_moe_layout *lp = o.e[1] == 3 ? NULL : &l;
        if (o.code == K_MOE_DISPATCH)
            pld_moe_dispatch(c, lp, k_tensor(R, L, &o.ts[0]), k_view(L, &o.v[0]),
                             k_view(L, &o.v[1]), k_tensor(R, L, &o.ts[1]), k_view(L, &o.v[2]),
                             k_tensor(R, L, &o.ts[2]));
        else
            pld_moe_combine(c, lp, k_view(L, &o.v[0]), k_view(L, &o.v[3]), k_view(L, &o.v[1]),
                            k_tensor(R, L, &o.ts[0]), k_view(L, &o.v[2]));
        break;
    }
    case K_FAIL:
        if (o.peer.v % 4 == 0 || k_peer(R, &o.peer) == R->me)
            pld_fail(c, "fuzz: planted failure on rank %d (%lld)", R->me, (long long)o.a);
        break;
    case K_QUERY: {
        int q = pld_rank(c) + pld_nranks(c) + pld_device(c) + pld_core(c) + pld_ncores(c);
        size_t used = pld_ub_used(c), cap = pld_ub_capacity(c);
        pld_counters k = pld_ctx_counters(c);
        if (q < 0 || used > cap)
            pld_fail(c, "fuzz: queries out of range (ub %zu of %zu)", used, cap);
        (void)k;
        pld_tensor t = k_tensor(R, L, &o.ts[0]);
        (void)pld_tensor_numel(t);
        break;
    }
    case K_STALE:
#if PLD_FUZZ_STALE
        switch (o.e[0] & 3) {
        case 0: /* use a tile after freeing it */
            if (R->dead_tile)
                pld_tile_free(c, R->dead_tile);
            break;
        case 1: { /* free a tile, keep its pointer */
            pld_tile *t = k_tile(R, o.tile[0]);
            if (t) {
                pld_tile_free(c, t);
                k_drop_tile(R, t);
                R->dead_tile = t;
            }
            break;
        }
        case 2:
            if (R->dead_tile)
                pld_remote_load(c, R->dead_tile, k_view(L, &o.v[0]), R->me,
                                k_idx(R, &o.idx[0], i0));
            break;
        default: /* a launch from inside a kernel */
            (void)pld_launch(L->s->w, ok_kernel, L->s);
            break;
        }
#endif
        break;
    default:
        break;
    }
}

static void fuzz_kernel(pld_ctx *c, void *arg)
{
    fz_launch *L = arg;
    fz_rank R;
    memset(&R, 0, sizeof R);
    R.c = c;
    R.me = pld_rank(c);
    R.n = pld_nranks(c);
    if (R.me < 0 || R.me >= L->s->P || R.n != L->s->P)
        pld_fail(c, "fuzz: rank %d of %d in a world of %d", R.me, R.n, L->s->P);
    for (int i = 0; i < L->nops; i++)
        k_run_op(&R, L, &L->ops[i]);
    /* tiles left live are the library's to free when the kernel returns */
}

/* ---- host side ----------------------------------------------------------------------- */

enum {
    H_ALLOC,
    H_FREE,
    H_VIEW,
    H_HOST_VIEW,
    H_HOST_ALLOC,
    H_HOST_FREE,
    H_RESET,
    H_LAUNCH,
    H_LAUNCH_AGAIN, /* launches are the point: two opcodes of the table */
    H_HOST_COLL,
    H_QUERY,
    H_REINIT,
    H_STALE, /* only with PLD_FUZZ_STALE */
    H_COUNT
};

static fz_state S;
static FILE *devnull;

static const char *const device_lists[3][3] = {
    {"0,1", "0-1", "6,3"}, {"0-2", "0,1,2", "5,9,2"}, {"0-3", "0,1,2,3", "4-5,0-1"}};

static pld_status fz_world_init(fz_state *s, fz_rd *r)
{
    uint8_t b0 = rd8(r), b1 = rd8(r);
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    s->P = 2 + b0 % 3;
    cfg.devices = device_lists[s->P - 2][(b0 >> 2) % 3];
    cfg.platform = (b0 >> 4) & 1 ? "a5sim" : "a2a3sim";
    cfg.transport = "thread";
    cfg.ir = (b0 >> 5) & 1;
    cfg.check = (b1 & 1 ? PLD_CHECK_SIGNALS : 0) | ((b1 & 6) == 6 ? PLD_CHECK_RACE : 0) |
                ((b1 & 0x18) == 0x18 ? PLD_CHECK_NOARGS : 0);
    /* A wait nobody can satisfy ends in the deadlock detector's ~60 ms
     * (finished ranks count as blocked); the timeout only bounds the rest,
     * so it costs nothing to keep it well above scheduling noise: on a
     * loaded 2-core machine descheduled ranks made 50 ms and even 200 ms
     * waits time out in correct kernels (the usability check failed). */
    cfg.wait_timeout_ms = 500 + (b1 >> 5) * 70;
    pld_status st = pld_world_init(&s->w, &cfg);
    if (st != PLD_OK) {
        const char *m = pld_last_error();
        if (!m || !*m)
            fz_die("pld_world_init", st, "error status with an empty pld_last_error message");
        fz_die("pld_world_init of a valid configuration", st, m);
    }
    if (pld_world_size(s->w) != s->P)
        fz_die("pld_world_size", PLD_OK, "differs from the device list");
    /* the harness's own windows, for the usability check */
    pld_window_buffer *b;
    if ((st = pld_alloc_window_buffer(s->w, sizeof(int32_t) * (size_t)s->P, "fz.ok_sig", &b)) ||
        (st = pld_window(b, PLD_INT32, 2, (const int64_t[]){s->P, 1}, &s->ok_sig)) ||
        (st = pld_alloc_window_buffer(s->w, 4 * sizeof(int32_t), "fz.ok_data", &b)) ||
        (st = pld_window(b, PLD_INT32, 2, (const int64_t[]){1, 4}, &s->ok_data)))
        fz_die("harness windows", st, pld_world_error(s->w));
    return PLD_OK;
}

/* Finalizes with whatever the input left live: finalize frees it. */
static void fz_world_fini(fz_state *s)
{
    pld_world_finalize(s->w);
    s->w = NULL;
    memset(s->win, 0, sizeof s->win);
    memset(s->view, 0, sizeof s->view);
    memset(s->host, 0, sizeof s->host);
#if PLD_FUZZ_STALE
    memset(s->dead_win, 0, sizeof s->dead_win);
    s->have_dead_view = 0;
    s->dead_host = NULL;
#endif
}

static size_t rd_win_bytes(fz_rd *r, int P)
{
    static const size_t odd[] = {1,    2,     3,     5,     7,      63,    4095,
                                 8192, 16384, 65536, 65537, 196608, 262144};
    uint8_t b = rd8(r);
    if (b < 96)
        return (size_t)(b % 16 + 1) * 4 * (size_t)P; /* INT32 [P, k] signals */
    if (b < 176)
        return (size_t)(b % 64 + 1) * 64;
    if (b < 236)
        return odd[b % (sizeof odd / sizeof odd[0])];
    /* beyond the library's limit: refused before any allocation */
    const size_t cap = ((size_t)1 << 40) / (size_t)P;
    const size_t huge[] = {0,
                           cap + 1,
                           (size_t)1 << 40,
                           SIZE_MAX,
                           SIZE_MAX - 1,
                           SIZE_MAX / 2,
                           (size_t)1 << 63,
                           SIZE_MAX - 63};
    return huge[b % (sizeof huge / sizeof huge[0])];
}

static size_t rd_host_bytes(fz_rd *r)
{
    uint8_t b = rd8(r);
    if (b < 200)
        return (size_t)b * 16 + (b & 3);
    /* 0 and sizes no allocator can serve: NULL, not a crash */
    const size_t huge[] = {0,
                           SIZE_MAX,
                           SIZE_MAX - 1,
                           SIZE_MAX - 63,
                           SIZE_MAX - 64,
                           SIZE_MAX - 100,
                           (size_t)1 << 62,
                           (size_t)1 << 48};
    return huge[b % 8];
}

static int live_win(fz_state *s, uint8_t b)
{
    int k = b % FZ_WINS;
    for (int i = 0; i < FZ_WINS; i++)
        if (s->win[(k + i) % FZ_WINS].buf)
            return (k + i) % FZ_WINS;
    return -1;
}

static pld_dtensor h_view(fz_state *s, const fz_vref *v)
{
    for (int i = 0; i < FZ_VIEWS; i++)
        s->L.views[i] = s->view[i].live ? s->view[i].t : (pld_dtensor){0};
    return k_view(&s->L, v);
}

static void h_free_win(fz_state *s, int k)
{
    pld_free_window_buffer(s->w, s->win[k].buf);
    s->win[k].buf = NULL;
    for (int i = 0; i < FZ_VIEWS; i++)
        if (s->view[i].live && s->view[i].win == k)
            s->view[i].live = 0;
}

static void h_launch(fz_state *s, fz_rd *r)
{
    fz_launch *L = &s->L;
    L->s = s;
    L->nops = 1 + rd8(r) % FZ_KOPS;
    for (int i = 0; i < L->nops; i++)
        rd_kop(r, s->P, &L->ops[i]);
#if !PLD_FUZZ_STALE
    for (int i = 0; i < L->nops; i++)
        if (L->ops[i].code == K_STALE)
            L->ops[i].code = K_QUERY;
#endif
    if (s->launches++ >= FZ_LAUNCHES)
        return;
    for (int i = 0; i < FZ_VIEWS; i++)
        L->views[i] = s->view[i].live ? s->view[i].t : (pld_dtensor){0};
#if PLD_FUZZ_STALE
    if (s->have_dead_view && (L->ops[0].e[3] & 1))
        L->views[0] = s->dead_view; /* a view of a freed window */
#endif
    pld_status st = pld_launch(s->w, fuzz_kernel, L);
    fz_expect_msg(s, "pld_launch", st);
    if (st != PLD_OK)
        fz_check_usable(s, "a failed launch");
}

static void h_host_coll(fz_state *s, fz_rd *r)
{
    uint8_t which = rd8(r) % 8;
    fz_vref v[3];
    for (int k = 0; k < 3; k++)
        rd_vref(r, &v[k]);
    int op = rd_enum(r, 4), mode = rd_enum(r, 2), root = rd_int(r, s->P);
    int cores = rd_int(r, s->P);
    uint8_t nullsig = rd8(r) >= 224;
    if (s->launches++ >= FZ_LAUNCHES)
        return;
    pld_dtensor a = h_view(s, &v[0]), b = h_view(s, &v[1]), sig = h_view(s, &v[2]);
    const pld_dtensor *sp = nullsig ? NULL : &sig;
    pld_status st;
    switch (which) {
    case 0:
        st = pld_host_barrier(s->w, sp);
        break;
    case 1:
        st = pld_host_broadcast(s->w, a, sp, root);
        break;
    case 2:
        st = pld_host_allgather(s->w, a, b, sp);
        break;
    case 3:
        st = pld_host_reduce_scatter(s->w, a, sp, (pld_reduce_op)op);
        break;
    case 4:
        st = pld_host_allreduce(s->w, a, sp, (pld_reduce_op)op, (pld_allreduce_mode)mode, cores);
        break;
    case 5:
        st = pld_host_all_to_all(s->w, a, b, sp);
        break;
    case 6: {
        fz_vref v4;
        rd_vref(r, &v4);
        st = pld_host_all_to_all_v(s->w, a, b, sp, h_view(s, &v[2]), h_view(s, &v4));
        break;
    }
    default:
        st = pld_host_allreduce(s->w, a, NULL, (pld_reduce_op)op, (pld_allreduce_mode)mode, 1);
        break;
    }
    fz_expect_msg(s, "a host builtin", st);
    if (st != PLD_OK)
        fz_check_usable(s, "a failed host builtin");
}

static void h_query(fz_state *s, fz_rd *r)
{
    pld_world *w = s->w;
    int rank = rd_int(r, s->P);
    int e = rd_enum(r, 16);
    (void)pld_device_id(w, rank);
    (void)pld_world_hosts_rank(w, rank);
    (void)pld_rank_pid(w, rank);
    (void)pld_is_root_process(w);
    if (strcmp(pld_world_transport(w), "thread"))
        fz_die("pld_world_transport", PLD_OK, pld_world_transport(w));
    (void)pld_world_platform(w);
    static const char *const names[] = {"thread", "process", "mpi", "", "threads", NULL};
    (void)pld_transport_built(names[(unsigned)e % 6]);
    pld_info_limits lim;
    pld_world_limits(w, &lim);
    pld_counters k;
    uint8_t b = rd8(r);
    pld_status st = pld_rank_counters(w, rank, (b & 1) ? NULL : &k);
    fz_expect_msg(s, "pld_rank_counters", st);
    if (b & 2)
        pld_ir_enable(w, (b >> 2) & 1);
    (void)strlen(pld_ir_text(w));
    if (b & 8) {
        st = pld_ir_dump(w, devnull);
        fz_expect_msg(s, "pld_ir_dump", st);
    }
    (void)strlen(pld_status_name((pld_status)e));
    (void)strlen(pld_dtype_name((pld_dtype)e));
    (void)pld_dtype_size((pld_dtype)e);
    int k2 = live_win(s, b);
    (void)strlen(pld_window_buffer_name(k2 >= 0 && (b & 16) ? s->win[k2].buf : NULL));
    (void)pld_window_buffer_size(k2 >= 0 && (b & 16) ? s->win[k2].buf : NULL);
    /* numel of any shape must not overflow (a user may ask for one) */
    int64_t shape[PLD_MAX_DIMS];
    for (int i = 0; i < PLD_MAX_DIMS; i++)
        shape[i] = rd_ext(r, s->P);
    int nd = 1 + (b >> 5) % 4;
    int64_t prod = 1;
    int overflows = 0;
    for (int i = 0; i < nd; i++)
        overflows |= __builtin_mul_overflow(prod, shape[i], &prod);
    int64_t n = pld_tensor_numel(pld_tensor_make(NULL, PLD_FP32, nd, shape));
    if (n != (overflows ? -1 : prod))
        fz_die("pld_tensor_numel", PLD_OK, "a wrong element count (-1 when it overflows)");
}

#if PLD_FUZZ_STALE
static void h_stale(fz_state *s, fz_rd *r)
{
    uint8_t what = rd8(r) % 7, b = rd8(r);
    pld_dtensor t;
    switch (what) {
    case 0: { /* free a window, keep its pointer and one of its views */
        int k = live_win(s, b);
        if (k < 0)
            break;
        for (int i = 0; i < FZ_VIEWS; i++)
            if (s->view[i].live && s->view[i].win == k) {
                s->dead_view = s->view[i].t;
                s->have_dead_view = 1;
            }
        s->dead_win[k] = s->win[k].buf;
        h_free_win(s, k);
        break;
    }
    case 1: /* double free */
        if (s->dead_win[b % FZ_WINS])
            pld_free_window_buffer(s->w, s->dead_win[b % FZ_WINS]);
        break;
    case 2:
        if (s->dead_win[b % FZ_WINS]) {
            fz_expect_msg(s, "pld_window_buffer_reset of a freed window",
                          pld_window_buffer_reset(s->w, s->dead_win[b % FZ_WINS]));
            fz_expect_msg(
                s, "pld_window of a freed window",
                pld_window(s->dead_win[b % FZ_WINS], PLD_INT32, 1, (const int64_t[]){1}, &t));
        }
        break;
    case 3:
        if (s->have_dead_view) {
            pld_tensor x;
            fz_expect_msg(s, "pld_window_host_view of a freed window",
                          pld_window_host_view(s->w, s->dead_view, 0, &x));
        }
        break;
    case 4: { /* host block double free */
        int k = b % FZ_HOSTS;
        if (s->host[k]) {
            pld_host_free(s->w, s->host[k]);
            s->dead_host = s->host[k];
            s->host[k] = NULL;
        }
        if (s->dead_host)
            pld_host_free(s->w, s->dead_host);
        break;
    }
    case 5: { /* calls after finalize, then a new world for the rest */
        pld_world *old = s->w;
        fz_world_fini(s);
        (void)pld_world_size(old);
        (void)pld_world_error(old);
        pld_window_buffer *wb;
        (void)pld_alloc_window_buffer(old, 64, "late", &wb);
        (void)pld_launch(old, ok_kernel, s);
        fz_world_init(s, r);
        break;
    }
    default: /* a launch whose kernel frees tiles twice or launches again */
        break;
    }
}
#endif

static void fz_fill_arenas(fz_state *s, uint8_t seed)
{
    /* INT32 words in -1..9: plausible counts and indices, some out of range */
    for (int p = 0; p < FZ_MAX_P; p++) {
        int32_t *v = (int32_t *)s->arena[p];
        for (size_t i = 0; i < FZ_ARENA / sizeof(int32_t); i++)
            v[i] = (int32_t)((i * (seed | 1u) + (size_t)p) % 11) - 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_state *s = &S;
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        abort();
    for (int p = 0; p < FZ_MAX_P; p++)
        if (!s->arena[p] && !(s->arena[p] = aligned_alloc(64, FZ_ARENA)))
            abort();
    fz_rd rd = {data, size, 0}, *r = &rd;
    s->launches = 0;
    fz_world_init(s, r);
    fz_fill_arenas(s, rd8(r));
    for (int nop = 0; nop < FZ_HOST_OPS && !rd_done(r); nop++) {
        uint8_t code = rd8(r) % H_COUNT;
        uint8_t b = rd8(r);
        pld_status st;
        switch (code) {
        case H_ALLOC: {
            size_t bytes = rd_win_bytes(r, s->P);
            static const char *const names[] = {"data", "sig", NULL, "",
                                                "a-name-longer-than-the-48-bytes-a-window-name-"
                                                "keeps-in-its-descriptor"};
            const char *name = names[b % 5];
            int k = -1;
            for (int i = 0; i < FZ_WINS && k < 0; i++)
                if (!s->win[i].buf)
                    k = i;
            if (k < 0)
                break;
            pld_window_buffer *wb = NULL;
            st = pld_alloc_window_buffer(s->w, bytes, name, (b & 0xf0) == 0xf0 ? NULL : &wb);
            fz_expect_msg(s, "pld_alloc_window_buffer", st);
            if (st == PLD_OK) {
                if (!wb || pld_window_buffer_size(wb) != bytes)
                    fz_die("pld_alloc_window_buffer", st, "no buffer or a wrong size");
                s->win[k].buf = wb;
                s->win[k].bytes = bytes;
            }
            break;
        }
        case H_FREE: {
            int k = live_win(s, b);
            if (k >= 0)
                h_free_win(s, k);
            break;
        }
        case H_VIEW: {
            int k = live_win(s, b);
            int dtype = rd_enum(r, PLD_DTYPE_COUNT);
            uint8_t nd = rd8(r);
            int ndim = nd < 224 ? nd % 4 + 1 : (int)(nd % 8) - 2;
            fz_idx shape;
            rd_idx(r, s->P, &shape);
            shape.rel = 0;
            int64_t tmp[PLD_MAX_DIMS];
            int slot = rd8(r) % FZ_VIEWS;
            pld_dtensor t;
            pld_window_buffer *wb = k >= 0 && b != 255 ? s->win[k].buf : NULL;
            fz_rank host = {0};
            st = pld_window(wb, (pld_dtype)dtype, ndim,
                            (b & 0xe0) == 0xe0 ? NULL : k_idx(&host, &shape, tmp),
                            (b & 0x1c) == 0x1c ? NULL : &t);
            if (wb)
                fz_expect_msg(s, "pld_window", st);
            if (st == PLD_OK) {
                s->view[slot].live = 1;
                s->view[slot].win = k;
                s->view[slot].t = t;
            }
            break;
        }
        case H_HOST_VIEW: {
            fz_vref v;
            rd_vref(r, &v);
            int rank = rd_int(r, s->P);
            pld_tensor x;
            st = pld_window_host_view(s->w, h_view(s, &v), rank, (b & 0xf0) == 0xf0 ? NULL : &x);
            fz_expect_msg(s, "pld_window_host_view", st);
            if (st == PLD_OK)
                fz_touch(x.data, fz_tensor_bytes(x));
            break;
        }
        case H_HOST_ALLOC: {
            size_t bytes = rd_host_bytes(r);
            int k = b % FZ_HOSTS;
            if (s->host[k])
                break;
            void *p = pld_host_alloc(s->w, bytes);
            if (p) {
                fz_touch(p, bytes);
                s->host[k] = p;
            }
            break;
        }
        case H_HOST_FREE: {
            int k = b % FZ_HOSTS;
            pld_host_free(s->w, s->host[k]); /* NULL when the slot is empty: a no-op */
            s->host[k] = NULL;
            break;
        }
        case H_RESET: {
            int k = live_win(s, b);
            st = pld_window_buffer_reset(s->w, k >= 0 && b != 255 ? s->win[k].buf : NULL);
            fz_expect_msg(s, "pld_window_buffer_reset", st);
            break;
        }
        case H_LAUNCH:
        case H_LAUNCH_AGAIN:
            h_launch(s, r);
            break;
        case H_HOST_COLL:
            h_host_coll(s, r);
            break;
        case H_QUERY:
            h_query(s, r);
            break;
        case H_REINIT:
            if (b < 32) { /* finalize with what is live, start another world */
                fz_world_fini(s);
                fz_world_init(s, r);
            }
            break;
        case H_STALE:
#if PLD_FUZZ_STALE
            h_stale(s, r);
#endif
            break;
        default:
            break;
        }
    }
    fz_check_usable(s, "the input's operations");
    fz_world_fini(s);
    return 0;
}
