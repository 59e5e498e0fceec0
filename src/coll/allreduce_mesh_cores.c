/* SPDX-License-Identifier: Apache-2.0 */
/* Allreduce, mesh form on several cores per rank.
 *
 * The data is cut into 256-element tiles dealt block-cyclically: tile i
 * belongs to core i % B on every rank, so core b of every rank handles the
 * same tiles and synchronises only with core b of the peers, on lane b of
 * the signal [P, S >= B].
 *
 * Per core: ready barrier once (round 1); then per chunk of its tiles (as
 * many as its UB holds): load my tiles into accumulators, reduce the same
 * tiles of every peer into them (remote_reduce), read-done barrier (round
 * 2+k), store.
 * Epilogue on lane b takes 1+chunks credits. Cores with no tile still join
 * the ready barrier.
 * Cost card: bytes_from_peers = (P-1) * N per rank (summed over its cores). */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_util.h"

#define PLD__CORE_TILE 256

typedef struct mc_arg {
    pld_dtensor data, signal;
    pld_reduce_op op;
    const char *api;
} mc_arg;

static void mesh_core(pld_ctx *c, int b, void *p)
{
    mc_arg *a = p;
    int nb = pld_ncores(c);
    pld_dtensor f = pld__dtensor_flat(a->data);
    int64_t n = f.shape[1];
    pld_tensor mine = pld__tensor_2d(pld_local(c, a->data), 1, n);
    int64_t ntiles = (n + PLD__CORE_TILE - 1) / PLD__CORE_TILE;
    size_t esz = pld_dtype_size(f.dtype);
    /* accumulators for one chunk, all [1,256] */
    int64_t per_chunk = (int64_t)((c->agent->ub_cap - c->agent->ub_used) / (PLD__CORE_TILE * esz));
    if (per_chunk < 1)
        pld__kraise(c, PLD_ERR_NOMEM, a->api, "UB too small for a %d-element tile", PLD__CORE_TILE);
    int32_t round = 1;
    pld__credit_barrier(c, a->signal, b, round); /* ready */
    pld_tile **acc = calloc((size_t)per_chunk, sizeof *acc);
    if (!acc)
        pld__kraise(c, PLD_ERR_NOMEM, a->api, "out of host memory");
    /* an error below leaves through c->jb: free acc on the way out (the
     * tiles themselves go with the core's context) */
    jmp_buf outer;
    memcpy(&outer, &c->agent->jb, sizeof outer);
    if (setjmp(c->agent->jb)) {
        memcpy(&c->agent->jb, &outer, sizeof outer);
        free(acc);
        pld__kexit_aborted(c);
    }
    for (int64_t first = b; first < ntiles; first += per_chunk * nb) {
        int64_t k = 0;
        for (int64_t t = first; t < ntiles && k < per_chunk; t += nb, k++) {
            int64_t c0 = t * PLD__CORE_TILE;
            int64_t w = n - c0 < PLD__CORE_TILE ? n - c0 : PLD__CORE_TILE;
            acc[k] = pld_tile_create(c, f.dtype, 1, w);
            pld__load_reduce_first(c, acc[k], mine, f, 0, c0, a->op);
            for (int i = 2; i < c->nranks; i++) {
                int peer = (c->rank + i) % c->nranks;
                pld__remote_reduce_checked(c, acc[k], f, peer, 0, c0, a->op);
            }
        }
        pld__credit_barrier(c, a->signal, b, ++round); /* read-done */
        k = 0;
        for (int64_t t = first; t < ntiles && k < per_chunk; t += nb, k++) {
            pld__store_checked(c, acc[k], mine, 0, t * PLD__CORE_TILE);
            pld_tile_free(c, acc[k]);
        }
    }
    memcpy(&c->agent->jb, &outer, sizeof outer);
    free(acc);
    pld__credit_epilogue(c, a->signal, b, round);
}

void pld__allreduce_mesh_cores(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                               pld_reduce_op op, int core_num)
{
    mc_arg a = {.data = data, .signal = signal, .op = op, .api = api};
    pld__note(c, "cores x%d: block-cyclic %d-element tiles, lane = core (core 0 listed)", core_num,
              PLD__CORE_TILE);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_HAZARDS)) /* fits here, not on every profile? */
        pld__hazard_limit_check(c, api, PLD__HZ_CORES, (uint64_t)core_num, "core_num");
    pld__run_cores(c, api, core_num, mesh_core, &a);
}
