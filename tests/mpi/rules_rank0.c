/* SPDX-License-Identifier: Apache-2.0 */
/* Every process of an mpi job decides with rank 0's PLD_RULES file,
 * whatever its own environment says (tests/mpi/rules_rank0.sh gives the
 * processes different files). Each process checks the world's rule for a
 * 32 KiB allreduce against the line and choice given on the command line,
 * then every rank runs that allreduce (PLD_AUTO: the rule's algorithm) and
 * checks every element. The root prints "OK".
 *
 * usage: rules_rank0 <line> <mode>   (mode: mesh, rs_ag or rabenseifner) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pld/pld.h>
#include <pld/tune.h>

#define N 8192 /* FP32: 32 KiB */

typedef struct args {
    pld_dtensor data, sig;
} args;

static void k_allreduce(pld_ctx *c, void *p)
{
    args *a = p;
    int me = pld_rank(c), np = pld_nranks(c);
    float *d = pld_local(c, a->data).data;
    for (int i = 0; i < N; i++)
        d[i] = (float)(me * 1000 + i % 100);
    pld_allreduce(c, a->data, a->sig, PLD_SUM, PLD_AUTO);
    for (int i = 0; i < N; i++)
        if (d[i] != (float)(1000 * np * (np - 1) / 2 + np * (i % 100)))
            pld_fail(c, "rank %d element %d: %g", me, i, (double)d[i]);
}

static int mode_of(const char *s)
{
    return !strcmp(s, "mesh") ? PLD_MESH : !strcmp(s, "rs_ag") ? PLD_RS_AG : PLD_RABENSEIFNER;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: rules_rank0 <line> <mode>\n");
        return 2;
    }
    int want_line = atoi(argv[1]), want = mode_of(argv[2]);
    pld_config cfg = {.transport = "mpi"};
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    if (st != PLD_OK) {
        printf("pld_world_init: %s: %s\n", pld_status_name(st), pld_last_error());
        return 1;
    }
    int p = pld_world_size(w), choice = -1;
    int line = pld_world_rule(w, PLD_RULE_ALLREDUCE, p, N * 4, &choice);
    if (line != want_line || (line && choice != want)) {
        printf("FAIL: this process sees rule line %d, choice %d; rank 0's file says line %d, "
               "choice %d\n",
               line, choice, want_line, want);
        pld_world_finalize(w);
        return 1;
    }
    pld_window_buffer *db, *sb;
    args *a = pld_host_alloc(w, sizeof *a);
    if (!a || pld_alloc_window_buffer(w, N * 4, "data", &db) != PLD_OK ||
        pld_window(db, PLD_FP32, 1, (const int64_t[]){N}, &a->data) != PLD_OK ||
        pld_alloc_window_buffer(w, (size_t)p * 4, "sig", &sb) != PLD_OK ||
        pld_window(sb, PLD_INT32, 2, (const int64_t[]){p, 1}, &a->sig) != PLD_OK) {
        printf("FAIL: set-up: %s\n", pld_world_error(w));
        pld_world_finalize(w);
        return 1;
    }
    st = pld_launch(w, k_allreduce, a);
    if (st != PLD_OK) {
        printf("FAIL: launch %s: %s\n", pld_status_name(st), pld_world_error(w));
        pld_world_finalize(w);
        return 1;
    }
    if (pld_is_root_process(w))
        printf("OK\n");
    pld_world_finalize(w);
    return 0;
}
