/* SPDX-License-Identifier: Apache-2.0 */
/* Step 04 — barrier: notify / wait by hand, then pld_barrier.
 *
 * A barrier is built from signals: every rank adds 1 to a cell named after
 * itself on every peer (notify, AtomicAdd), then waits until the cell of
 * every peer on its own window has reached the round number (wait, Ge).
 * Because data written before a notify is visible to whoever observes it
 * through wait, a barrier also publishes everything staged before it.
 *
 * Each round, every rank stages a row, crosses the barrier, and reads every
 * peer's row back with remote_load. --mode builtin replaces the hand-written
 * barrier by pld_barrier, whose credits clear themselves.
 *
 *   build/examples/04_barrier -p a2a3sim -d 0,1 [--mode hand|builtin]
 */
#include "example_util.h"

#define ROUNDS 3
#define COLS 64

enum { MODE_HAND, MODE_BUILTIN };
static const char *const modes[] = {"hand", "builtin", NULL};

typedef struct barrier_args {
    int mode;
    pld_dtensor data;   /* [ROUNDS, P, COLS] INT32: round k, row s = rank s's row */
    pld_dtensor signal; /* [P, 1] INT32: cell [s,0] counts rank s's arrivals */
} barrier_args;

/* Row j of rank r in round k: names owner, round and element. */
static int32_t golden(int rank, int round, int64_t j) {
    return rank * 1000 + round * 100 + (int32_t)j;
}

/* The hand-written barrier for round `round` (1, 2, ...). */
static void hand_barrier(pld_ctx *ctx, pld_dtensor signal, int32_t round) {
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);

    /* "I have arrived": +1 on cell [me,0] of every peer. AtomicAdd, not Set,
     * so that the count of arrivals is never lost, whatever the order. */
    for (int peer = 0; peer < nranks; peer++)
        if (peer != me) pld_notify(ctx, signal, peer, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);

    /* Wait for every peer's arrival on my own window. The counters only
     * grow, so round k waits for >= k: a fast peer that already arrived for
     * round k+1 must not make round k hang (Eq would). */
    for (int src = 0; src < nranks; src++)
        if (src != me) pld_wait(ctx, signal, PLD_IDX(src, 0), round, PLD_WAIT_GE);
}

static void barrier_kernel(pld_ctx *ctx, void *arg) {
    barrier_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    pld_tensor mine = pld_local(ctx, a->data);
    pld_tile *row = pld_tile_create(ctx, PLD_INT32, 1, COLS);
    int32_t *v = pld_tile_data(row);

    for (int round = 1; round <= ROUNDS; round++) {
        /* 1. Stage my row of this round. Each round has its own slot, so a
         *    fast rank never overwrites a row a slow peer is still reading. */
        for (int64_t j = 0; j < COLS; j++)
            v[j] = golden(me, round, j);
        pld_store(ctx, row, mine, PLD_IDX(round - 1, me, 0));

        /* 2. Barrier: after it, every peer's row of this round is staged. */
        if (a->mode == MODE_HAND)
            hand_barrier(ctx, a->signal, round);
        else
            pld_barrier(ctx, a->signal);

        /* 3. Read every rank's row from its own window, mine included. */
        for (int src = 0; src < nranks; src++) {
            pld_remote_load(ctx, row, a->data, src, PLD_IDX(round - 1, src, 0));
            for (int64_t j = 0; j < COLS; j++)
                ex_check_i32(ctx, "data", src, j, v[j], golden(src, round, j));
        }
    }

    /* The difference between the two barriers, visible in the signal: hand
     * counters are monotonic and end at ROUNDS; pld_barrier takes its
     * credits back on the way out, leaving zeros for the next user. */
    int32_t want = a->mode == MODE_HAND ? ROUNDS : 0;
    for (int src = 0; src < nranks; src++)
        if (src != me)
            ex_check_i32(ctx, "signal", src, 0, pld_signal_read(ctx, a->signal, PLD_IDX(src, 0)),
                         want);
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
    barrier_args *a = pld_host_alloc(w, sizeof *a);
    if (!a) {
        st = PLD_ERR_NOMEM;
        goto out;
    }
    a->mode = mode;

    st = pld_alloc_window_buffer(w, (size_t)ROUNDS * nranks * COLS * sizeof(int32_t), "data",
                                 &data_buf);
    if (st == PLD_OK)
        st = pld_window(data_buf, PLD_INT32, 3, PLD_IDX(ROUNDS, nranks, COLS), &a->data);
    /* One INT32 cell per rank: cell [s,0] is written only by rank s. */
    if (st == PLD_OK)
        st = pld_alloc_window_buffer(w, (size_t)nranks * sizeof(int32_t), "signal", &signal_buf);
    if (st == PLD_OK) st = pld_window(signal_buf, PLD_INT32, 2, PLD_IDX(nranks, 1), &a->signal);
    if (st == PLD_OK) st = pld_launch(w, barrier_kernel, a);

out:
    if (signal_buf) pld_free_window_buffer(w, signal_buf);
    if (data_buf) pld_free_window_buffer(w, data_buf);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
