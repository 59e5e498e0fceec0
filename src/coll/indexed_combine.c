/* SPDX-License-Identifier: Apache-2.0 */
/* Indexed combine: the reverse of the MoE dispatch.
 *
 * After dispatch, rank d's window expert_out holds in rows s*C + j (j <
 * send_counts_s[d]) the rows source s sent it, processed by d's expert.
 * Combine brings them home: on rank s,
 *   output[t] = sum over (d, j) with index_s[d][j] == t, j < send_counts_s[d]
 *               of weights_s[d][j] * expert_out_d[s*C + j]
 * accumulated in fp32; output rows no dispatched row refers to are zero.
 *
 * Algorithm (pull): round 1, every expert's rows are final; each core owns
 * the output rows t with t % B == b, zeroes them and pulls the rows that
 * land there, in (d, j) order, so the sum is the same for every B; round 2,
 * no rank reads expert_out any more (the experts may reuse it). Signal
 * [P, S >= B], lane b per core.
 * Cost card: bytes_from_peers = rows pulled from other ranks * H * 4. */
#include <string.h>

#include "coll/indexed.h"

typedef struct combine {
    const char *api;
    pld_dtensor expert_out, signal;
    pld_tensor output, weights;
    pld__indexed ix;
} combine;

static void combine_core(pld_ctx *c, int b, void *p)
{
    combine *a = p;
    int nb = pld_ncores(c), me = c->rank;
    int64_t h = a->ix.h, cap = a->ix.cap;
    float *out = a->output.data;
    const float *w = a->weights.data;
    int early = PLD__MUTANT(combine_early);
    if (!early)
        pld__credit_barrier(c, a->signal, b, 1); /* round 1: expert rows are final */
    for (int64_t t = b; t < a->ix.nmax; t += nb)
        memset(out + t * h, 0, sizeof(float) * (size_t)h);
    pld_tile *row = pld_tile_create(c, PLD_FP32, 1, h);
    const float *v = pld_tile_data(row);
    for (int d = 0; d < c->nranks; d++) {
        for (int64_t j = 0; j < a->ix.counts[d]; j++) {
            int64_t t = a->ix.index[d * cap + j];
            if (t % nb != b)
                continue;
            int64_t at[2] = {(int64_t)me * cap + j, 0};
            pld_remote_load(c, row, a->expert_out, d, at);
            float wt = w[d * cap + j];
            for (int64_t k = 0; k < h; k++)
                out[t * h + k] += wt * v[k];
        }
    }
    pld_tile_free(c, row);
    pld__credit_barrier(c, a->signal, b, early ? 1 : 2); /* round 2: expert_out may be reused */
    pld__credit_epilogue(c, a->signal, b, early ? 1 : 2);
}

void pld_indexed_combine(pld_ctx *c, pld_dtensor expert_out, pld_tensor output, pld_dtensor signal,
                         pld_dtensor send_counts, pld_tensor index, pld_tensor weights,
                         int core_num)
{
    PLD__CTX_CHECK(c, "pld_indexed_combine");
    static const char api[] = "pld_indexed_combine";
    char dims[96];
    int p = c->nranks;
    combine a = {.api = api,
                 .expert_out = expert_out,
                 .signal = signal,
                 .output = output,
                 .weights = weights};
    pld__check_live(c);
    pld__check_tensor(c, api, "output", output);
    pld__check_tensor(c, api, "weights", weights);
    pld__check_dtensor(c, api, "expert_out", expert_out);
    if (output.dtype != PLD_FP32 || output.ndim != 2)
        pld__kraise(c, PLD_ERR_ARG, api, "output must be fp32 [Nmax, H] (got %s %s)",
                    pld_dtype_name(output.dtype),
                    pld__fmt_dims(dims, sizeof dims, output.shape, output.ndim));
    pld__indexed_check(c, api, signal, send_counts, index, output.shape[0], output.shape[1],
                       sizeof(float), core_num, &a.ix);
    if (expert_out.dtype != PLD_FP32 || expert_out.ndim != 2 ||
        expert_out.shape[0] != (int64_t)p * a.ix.cap || expert_out.shape[1] != a.ix.h)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "expert_out '%s' is %s %s; it must be fp32 [P*C=%lld, H=%lld]",
                    expert_out.buf->name, pld_dtype_name(expert_out.dtype),
                    pld__fmt_dims(dims, sizeof dims, expert_out.shape, expert_out.ndim),
                    (long long)(p * a.ix.cap), (long long)a.ix.h);
    if (weights.dtype != PLD_FP32 || weights.ndim != 2 || weights.shape[0] != p ||
        weights.shape[1] != a.ix.cap)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "weights must be fp32 [%s=%d, C=%lld] like index (got %s %s)", pld__pname(c), p,
                    (long long)a.ix.cap, pld_dtype_name(weights.dtype),
                    pld__fmt_dims(dims, sizeof dims, weights.shape, weights.ndim));
    if (expert_out.buf == signal.buf || expert_out.buf == send_counts.buf)
        pld__kraise(c, PLD_ERR_ALIAS, api,
                    "expert_out '%s' must be separate from signal '%s' and send_counts '%s'",
                    expert_out.buf->name, signal.buf->name, send_counts.buf->name);
    if (pld__tensor_in_window(c, output, expert_out.buf))
        pld__kraise(c, PLD_ERR_ALIAS, api, "output lies inside expert_out window '%s'",
                    expert_out.buf->name);
    pld__coll_fp fp;
    pld__fp_init(&fp, PLD__K_INDEXED_COMBINE, api, signal);
    fp.wire.core_num = core_num;
    pld__fp_window(&fp, expert_out);
    pld__fp_window(&fp, send_counts);
    pld__fp_tensor(&fp, output, 1); /* [Nmax, H]: each rank's own token count */
    pld__coll_enter(c, api, signal, &fp, "%s, %s, core_num=%d", expert_out.buf->name,
                    signal.buf->name, core_num);
    if (PLD__UNLIKELY(c->obs & PLD__OBS_HAZARDS)) /* fits here, not on every profile? */
        pld__hazard_limit_check(c, api, PLD__HZ_CORES, (uint64_t)core_num, "core_num");
    pld__run_cores(c, api, core_num, combine_core, &a);
    pld__coll_leave(c, signal);
}
