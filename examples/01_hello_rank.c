/* SPDX-License-Identifier: Apache-2.0 */
/* Step 01 — hello_rank: who am I, how many of us, on which device.
 *
 * The same kernel runs on every rank (SPMD). Each rank asks pld for its rank,
 * the world size and its device id, and records them in host-visible memory.
 * The host prints one line per rank afterwards, in rank order: ranks run
 * concurrently, so lines printed from inside the kernel would interleave.
 *
 *   build/examples/01_hello_rank -p a2a3sim -d 0,1
 */
#include <stdio.h>

#include "example_util.h"

typedef struct identity {
    int seen; /* written last by the rank itself: proves the kernel ran there */
    int rank, nranks, device;
} identity;

typedef struct hello_args {
    int nranks;         /* what the host expects the kernel to see */
    const int *devices; /* [nranks] device id of each rank, from the host's view */
    identity *ids;      /* [nranks] one entry per rank */
} hello_args;

static void hello_kernel(pld_ctx *ctx, void *arg) {
    hello_args *a = arg;
    int me = pld_rank(ctx);

    /* Each rank writes only its own entry, so no two ranks touch the same
     * memory and no synchronisation is needed. */
    identity *id = &a->ids[me];
    id->rank = me;
    id->nranks = pld_nranks(ctx);
    id->device = pld_device(ctx);
    id->seen = 1;

    /* Golden: the kernel's view of the world must match the host's. */
    if (id->nranks != a->nranks) pld_fail(ctx, "pld_nranks got %d want %d", id->nranks, a->nranks);
    if (id->device != a->devices[me])
        pld_fail(ctx, "pld_device got %d want %d", id->device, a->devices[me]);
}

int main(int argc, char **argv) {
    pld_world *w;
    pld_status st = pld_world_init_from_args(&w, &argc, &argv);
    if (st != PLD_OK) return ex_init_failed(argv[0], st);
    int mode;
    int rc = ex_setup(w, argc, argv, NULL, &mode);
    if (rc != EX_RUN) {
        pld_world_finalize(w);
        return rc;
    }

    int nranks = pld_world_size(w);

    /* Kernel arguments live in pld_host_alloc memory: on the process
     * transport the ranks are other processes and only this memory (and
     * windows) is shared with the host. */
    hello_args *a = pld_host_alloc(w, sizeof *a);
    int *devices = pld_host_alloc(w, (size_t)nranks * sizeof *devices);
    identity *ids = pld_host_alloc(w, (size_t)nranks * sizeof *ids);
    if (!a || !devices || !ids) {
        st = PLD_ERR_NOMEM;
        goto out;
    }
    for (int r = 0; r < nranks; r++)
        devices[r] = pld_device_id(w, r);
    a->nranks = nranks;
    a->devices = devices;
    a->ids = ids;

    st = pld_launch(w, hello_kernel, a);
    if (st != PLD_OK) goto out;

    /* The host prints the ranks it hosts, in rank order: all of them here,
     * its own one under mpi (where every process prints its line). */
    for (int r = 0; r < nranks; r++) {
        if (!pld_world_hosts_rank(w, r)) continue;
        if (!ids[r].seen) {
            fprintf(stderr, "host check: rank %d never ran the kernel\n", r);
            st = PLD_ERR_CHECK;
            goto out;
        }
        if (ids[r].rank != r) {
            fprintf(stderr, "host check: entry %d holds rank %d\n", r, ids[r].rank);
            st = PLD_ERR_CHECK;
            goto out;
        }
        printf("rank %d/%d on device %d\n", ids[r].rank, ids[r].nranks, ids[r].device);
    }

out:
    pld_host_free(w, ids);
    pld_host_free(w, devices);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
