/* SPDX-License-Identifier: Apache-2.0 */
/* `pld moe`'s routing and cards (see moe_model.h). */
#include "moe_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *x)
{
    return (double)(splitmix(x) >> 11) * (1.0 / 9007199254740992.0);
}

/* k distinct experts out of g by weight (sequential sampling without
 * replacement); w is scratch of g weights, restored afterwards. */
static void pick(uint64_t *rng, double *w, int g, int k, int32_t *out)
{
    double total = 0;
    for (int i = 0; i < g; i++)
        total += w[i];
    for (int j = 0; j < k; j++) {
        double u = uniform01(rng) * total, acc = 0;
        int at = g - 1;
        for (int i = 0; i < g; i++) {
            if (w[i] <= 0)
                continue;
            acc += w[i];
            if (u < acc) {
                at = i;
                break;
            }
        }
        while (w[at] <= 0) /* rounding at the end: the last expert left */
            at--;
        out[j] = at;
        total -= w[at];
        w[at] = -w[at];
    }
    for (int j = 0; j < k; j++)
        w[out[j]] = -w[out[j]];
}

int moe_route(const moe_shape *sh, moe_routing *out)
{
    int p = sh->p, ne = sh->e, g = p * ne, k = sh->k;
    memset(out, 0, sizeof *out);
    out->sh = *sh;
    out->choice = malloc(sizeof(int32_t) * (size_t)p * (size_t)sh->t * (size_t)k);
    out->cnt = calloc((size_t)p * (size_t)p * (size_t)ne, sizeof(int32_t));
    double *w = malloc(sizeof(double) * (size_t)g);
    int *perm = malloc(sizeof(int) * (size_t)g);
    if (!out->choice || !out->cnt || !w || !perm) {
        free(w);
        free(perm);
        moe_routing_free(out);
        return -1;
    }
    /* popularity: a seeded permutation of the experts, Zipf over it */
    uint64_t rng = sh->seed * 0x2545f4914f6cdd1dull + 1;
    for (int i = 0; i < g; i++)
        perm[i] = i;
    for (int i = g - 1; i > 0; i--) {
        int j = (int)(splitmix(&rng) % (uint64_t)(i + 1)), x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    for (int i = 0; i < g; i++)
        w[perm[i]] = sh->zipf > 0 ? 1.0 / pow((double)(i + 1), sh->zipf) : 1.0;
    for (int s = 0; s < p; s++)
        for (int64_t t = 0; t < sh->t; t++) {
            int32_t *c = out->choice + ((size_t)s * (size_t)sh->t + (size_t)t) * (size_t)k;
            pick(&rng, w, g, k, c);
            for (int j = 0; j < k; j++)
                out->cnt[(size_t)s * (size_t)g + (size_t)c[j]]++;
        }
    free(w);
    free(perm);
    return 0;
}

void moe_routing_free(moe_routing *r)
{
    free(r->choice);
    free(r->cnt);
    r->choice = r->cnt = NULL;
}

const char *moe_form_name(int form)
{
    static const char *const names[] = {"blocks", "indexed", "packed"};
    return form >= 0 && form < MOE_NFORMS ? names[form] : "?";
}

int64_t moe_block_rows(const moe_shape *sh)
{
    return (int64_t)(sh->k < sh->e ? sh->k : sh->e) * sh->t;
}

/* The URMA model of one remote send: SQEs of at most 12 rows, 4 WQEBBs
 * each (3 rows per WQEBB, the rest NOPs), a doorbell per 64 SQEs, one
 * completion. */
static void urma_add(moe_urma *u, int64_t rows)
{
    if (rows <= 0)
        return;
    uint64_t sqes = (uint64_t)(rows + 11) / 12;
    u->sqes += sqes;
    u->wqebbs += 4 * sqes;
    u->nops += 4 * sqes - (uint64_t)(rows + 2) / 3;
    u->doorbells += (sqes + 63) / 64;
    u->cqes += 1;
}

/* The indexed form's copies from rank s to rank d: its slots hold s's
 * tokens routed to d, by expert and then by token (as `pld moe --run` lays
 * them out), and each run of consecutive tokens moves as one copy. */
static uint64_t indexed_runs(const moe_routing *r, int s, int d)
{
    const moe_shape *sh = &r->sh;
    uint64_t runs = 0;
    int64_t last = -2;
    for (int e = 0; e < sh->e; e++)
        for (int64_t t = 0; t < sh->t; t++)
            for (int q = 0; q < sh->k; q++)
                if (r->choice[((size_t)s * (size_t)sh->t + (size_t)t) * (size_t)sh->k +
                              (size_t)q] == d * sh->e + e) {
                    runs += t != last + 1;
                    last = t;
                }
    return runs;
}

void moe_card_make(const moe_routing *r, int form, int rank, moe_card *out)
{
    const moe_shape *sh = &r->sh;
    int p = sh->p, ne = sh->e;
    uint64_t row = (uint64_t)sh->h * pld_dtype_size(sh->dtype);
    uint64_t counts = (uint64_t)p * (uint64_t)ne * 4, b = (uint64_t)moe_block_rows(sh);
    memset(out, 0, sizeof *out);
    for (int d = 0; d < p; d++) {
        uint64_t rows = 0, blocks = 0;
        for (int e = 0; e < ne; e++) {
            int32_t n = r->cnt[((size_t)rank * (size_t)p + (size_t)d) * (size_t)ne + e];
            rows += (uint64_t)n;
            blocks += n > 0;
        }
        int self = d == rank;
        switch (form) {
        case MOE_BLOCKS: /* whole blocks, counts by all_to_all first */
            if (self) {
                out->self += b * row + (uint64_t)ne * 4;
            } else {
                out->to_peers += b * row + (uint64_t)ne * 4;
                out->padding += (b - rows) * row;
                urma_add(&out->urma, (int64_t)b); /* as if each block were one URMA send */
            }
            break;
        case MOE_INDEXED:
        case MOE_PACKED:
            out->transfers += form == MOE_PACKED ? blocks : indexed_runs(r, rank, d);
            if (self) {
                out->self += rows * row;
            } else {
                out->to_peers += rows * row;
                urma_add(&out->urma, (int64_t)rows);
            }
            break;
        default:
            break;
        }
    }
    switch (form) {
    case MOE_BLOCKS:
        out->rounds = 2; /* the counts' all_to_all, the blocks' all_to_all_v */
        out->notifies = (uint64_t)(p - 1);
        out->transfers = 2 * (uint64_t)p; /* a row of counts, a block: to every rank */
        out->target_bytes = (uint64_t)p * b * row;
        break;
    case MOE_INDEXED:
        out->rounds = 2;
        out->from_peers = (uint64_t)(p - 1) * 4; /* its count from each peer */
        out->self += 4;
        out->transfers += (uint64_t)p;
        out->target_bytes = (uint64_t)p * b * row;
        break;
    default:
        out->rounds = 2;
        out->from_peers = (uint64_t)(p - 1) * counts;
        out->self += 2 * counts;
        /* my counts staged, each peer's pulled, what I received kept */
        out->transfers += (uint64_t)p + 1;
        out->target_bytes = (uint64_t)p * (uint64_t)ne * (uint64_t)sh->t * row;
        break;
    }
}

double moe_predict_us(const moe_routing *r, int form, const pld_tune *tune)
{
    double worst = 0;
    for (int q = 0; q < r->sh.p; q++) {
        moe_card k;
        moe_card_make(r, form, q, &k);
        double us =
            pld_tune_predict_us(tune, r->sh.p, k.rounds, (double)(k.to_peers + k.self),
                                (double)k.from_peers, 0, (double)r->sh.p * (double)k.target_bytes) +
            pld_tune_transfers_us(tune, r->sh.p, (double)k.transfers);
        worst = us > worst ? us : worst;
    }
    return worst;
}
