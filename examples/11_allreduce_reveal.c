/* SPDX-License-Identifier: Apache-2.0 */
/* Step 11 — allreduce_reveal: pld_allreduce, mesh, two-phase and ring.
 *
 * Steps 08, 09 and 10 wrote three allreduce algorithms by hand.
 * pld_allreduce is all three, behind one call:
 *   --mode mesh:  PLD_MESH, step 08 (ready barrier, pull and reduce every
 *                 peer, read-done barrier, store), signal [P, 1];
 *   --mode rs_ag: PLD_RS_AG, step 09 (reduce my segment from every peer,
 *                 barrier, pull every other segment from its owner, read-done
 *                 barrier), signal [P, 1];
 *   --mode ring:  PLD_RING, step 10 (reduce-scatter then allgather around
 *                 the ring, neighbour progress counters), signal [2(P-1), P].
 * Same input, same golden, same result in place. What differs is the
 * traffic, which the kernel checks against the cost card with
 * pld_ctx_counters, and the lowering, which --ir prints.
 *
 *   build/examples/11_allreduce_reveal -p a2a3sim -d 0,1,2 [--mode mesh|ring|rs_ag] [--ir]
 */
#include "example_util.h"

#define N 1001

enum { MODE_MESH, MODE_RING, MODE_RS_AG };
static const char *const modes[] = {"mesh", "ring", "rs_ag", NULL};

typedef struct reveal_args {
    int mode;
    pld_dtensor data;   /* [1, N] INT32: my vector, then the sum */
    pld_dtensor signal; /* mesh, rs_ag: [P, 1]; ring: [2(P-1), P] */
} reveal_args;

static int32_t input_value(int rank, int64_t j) {
    return rank * 10000 + (int32_t)j;
}

/* Sum over r < P of (r*10000 + j); the owner argument carries P. */
static int32_t golden_sum(int nranks, int64_t i, int64_t j) {
    (void)i;
    return 10000 * (nranks * (nranks - 1) / 2) + nranks * (int32_t)j;
}

/* Elements rank `me` pulls from peers: mesh reads every peer's whole vector;
 * rs_ag reads its own segment from every peer, then every other segment
 * once (a segment is never under 4 KiB: these 4004 bytes have one owner,
 * rank 0, and the other ranks only copy); the ring reads
 * every segment but its own in the reduce-scatter and every segment but
 * (me+1), which it reduced itself, in the allgather. */
static int64_t cost_elems(int mode, int me, int nranks) {
    if (mode == MODE_MESH) return (int64_t)(nranks - 1) * N;
    if (mode == MODE_RS_AG) {
        int owners = pld_tune_rs_ag_owners(nranks, N * sizeof(int32_t));
        int64_t seg =
            me < owners ? ex_seg_begin(N, owners, me + 1) - ex_seg_begin(N, owners, me) : 0;
        return (int64_t)(nranks - 1) * seg + (N - seg);
    }
    int next = (me + 1) % nranks;
    int64_t own = ex_seg_begin(N, nranks, me + 1) - ex_seg_begin(N, nranks, me);
    int64_t reduced = ex_seg_begin(N, nranks, next + 1) - ex_seg_begin(N, nranks, next);
    return 2 * N - own - reduced;
}

static void reveal_kernel(pld_ctx *ctx, void *arg) {
    reveal_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    pld_tensor mine = pld_local(ctx, a->data);

    int32_t *v = mine.data;
    for (int64_t j = 0; j < N; j++)
        v[j] = input_value(me, j);

    /* The whole of steps 08 / 09 / 10: staging barrier, transfers, every hazard. */
    static const pld_allreduce_mode algo[] = {PLD_MESH, PLD_RING, PLD_RS_AG};
    pld_allreduce(ctx, a->data, a->signal, PLD_SUM, algo[a->mode]);

    ex_check_block(ctx, "data", mine.data, 1, N, golden_sum, nranks);

    /* The cost card, from pld's own counters (nothing else moved data). */
    pld_counters k = pld_ctx_counters(ctx);
    int64_t want = cost_elems(a->mode, me, nranks) * (int64_t)sizeof(int32_t);
    if (k.bytes_from_peers != (uint64_t)want || k.bytes_to_peers != 0)
        pld_fail(ctx, "cost card: bytes_from_peers %llu bytes_to_peers %llu, want %lld and 0",
                 (unsigned long long)k.bytes_from_peers, (unsigned long long)k.bytes_to_peers,
                 (long long)want);

    /* Self-clearing: the signal is all zeros again, ready for the next call. */
    for (int64_t i = 0; i < a->signal.shape[0]; i++)
        for (int64_t j = 0; j < a->signal.shape[1]; j++)
            ex_check_i32(ctx, "signal", i, j, pld_signal_read(ctx, a->signal, PLD_IDX(i, j)), 0);
}

int main(int argc, char **argv) {
    pld_world *w;
    pld_status st = pld_world_init_from_args(&w, &argc, &argv);
    if (st != PLD_OK) return ex_init_failed(argv[0], st);
    int mode;
    int rc = ex_setup(w, argc, argv, modes, &mode);
    if (rc != EX_RUN) {
        pld_world_finalize(w);
        return rc;
    }

    int nranks = pld_world_size(w);
    pld_window_buffer *data_buf = NULL, *signal_buf = NULL;
    reveal_args *a = pld_host_alloc(w, sizeof *a);
    if (!a) {
        st = PLD_ERR_NOMEM;
        goto out;
    }
    a->mode = mode;

    st = ex_alloc_window_2d(w, "data", PLD_INT32, 1, N, &data_buf, &a->data);
    /* The ring keeps one row of cells per step: [2(P-1), P]. */
    if (st == PLD_OK && mode != MODE_RING)
        st = ex_alloc_window_2d(w, "signal", PLD_INT32, nranks, 1, &signal_buf, &a->signal);
    else if (st == PLD_OK)
        st = ex_alloc_window_2d(w, "signal", PLD_INT32, 2 * (nranks - 1), nranks, &signal_buf,
                                &a->signal);
    if (st == PLD_OK) st = pld_launch(w, reveal_kernel, a);

out:
    if (signal_buf) pld_free_window_buffer(w, signal_buf);
    if (data_buf) pld_free_window_buffer(w, data_buf);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
