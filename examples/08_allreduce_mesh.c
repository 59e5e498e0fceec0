/* SPDX-License-Identifier: Apache-2.0 */
/* Step 08 — allreduce_mesh: every rank reads every peer.
 *
 * Allreduce: every rank holds a vector; afterwards every rank holds the
 * elementwise sum of all of them. The mesh form is the direct one: every
 * rank stages its vector in a window, crosses a barrier, then remote_loads
 * every peer's vector and adds it into an accumulator tile with
 * pld_tile_reduce.
 *
 * The result goes back into the same window, and that needs a second
 * barrier: a slow peer may still be reading my vector. Both barriers are
 * hand-written on one signal; its counters only grow, so the second barrier
 * waits for >= 2.
 *
 *   build/examples/08_allreduce_mesh -p a2a3sim -d 0,1,2 [--mode hand]
 */
#include "example_util.h"

#define N 1001 /* elements per rank: divides evenly by none of 2, 3, 4, 16 */

enum { MODE_HAND };
static const char *const modes[] = {"hand", NULL};

typedef struct mesh_args {
    pld_dtensor data;   /* [1, N] INT32: my vector, then the sum */
    pld_dtensor signal; /* [P, 1] INT32: cell [s,0] counts rank s's arrivals */
} mesh_args;

/* Element j of rank r's vector: names its owner and position. */
static int32_t input_value(int rank, int64_t j) {
    return rank * 10000 + (int32_t)j;
}

/* Sum over r < P of (r*10000 + j) = 10000 * P(P-1)/2 + P*j. The owner
 * argument of ex_check_block carries P here. */
static int32_t golden_sum(int nranks, int64_t i, int64_t j) {
    (void)i;
    return 10000 * (nranks * (nranks - 1) / 2) + nranks * (int32_t)j;
}

/* The hand-written barrier of step 04: round `round` waits for >= round. */
static void hand_barrier(pld_ctx *ctx, pld_dtensor signal, int32_t round) {
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    for (int peer = 0; peer < nranks; peer++)
        if (peer != me) pld_notify(ctx, signal, peer, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
    for (int src = 0; src < nranks; src++)
        if (src != me) pld_wait(ctx, signal, PLD_IDX(src, 0), round, PLD_WAIT_GE);
}

static void mesh_kernel(pld_ctx *ctx, void *arg) {
    mesh_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    pld_tensor mine = pld_local(ctx, a->data);

    pld_tile *acc = pld_tile_create(ctx, PLD_INT32, 1, N);
    pld_tile *tmp = pld_tile_create(ctx, PLD_INT32, 1, N);
    int32_t *v = pld_tile_data(acc);
    for (int64_t j = 0; j < N; j++)
        v[j] = input_value(me, j);

    /* 1. Stage my vector where peers can read it. */
    pld_store(ctx, acc, mine, PLD_IDX(0, 0));

    /* 2. Ready barrier: after it, every peer's vector is staged. */
    hand_barrier(ctx, a->signal, 1);

    /* 3. acc already holds my vector; add every peer's. Starting at my right
     *    neighbour means the P ranks do not all read rank 0 first. */
    for (int i = 1; i < nranks; i++) {
        int peer = (me + i) % nranks;
        pld_remote_load(ctx, tmp, a->data, peer, PLD_IDX(0, 0));
        pld_tile_reduce(ctx, acc, tmp, PLD_SUM);
    }

    /* 4. Read-done barrier: after it, nobody reads my vector any more, so
     *    the sum may replace it. Same signal, monotonic counters: >= 2. */
    hand_barrier(ctx, a->signal, 2);

    /* 5. The result, in place. */
    pld_store(ctx, acc, mine, PLD_IDX(0, 0));
    ex_check_block(ctx, "data", mine.data, 1, N, golden_sum, nranks);
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
    mesh_args *a = pld_host_alloc(w, sizeof *a);
    if (!a) {
        st = PLD_ERR_NOMEM;
        goto out;
    }

    st = ex_alloc_window_2d(w, "data", PLD_INT32, 1, N, &data_buf, &a->data);
    if (st == PLD_OK)
        st = ex_alloc_window_2d(w, "signal", PLD_INT32, nranks, 1, &signal_buf, &a->signal);
    if (st == PLD_OK) st = pld_launch(w, mesh_kernel, a);

out:
    if (signal_buf) pld_free_window_buffer(w, signal_buf);
    if (data_buf) pld_free_window_buffer(w, data_buf);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
