/* SPDX-License-Identifier: Apache-2.0 */
/* `pld trace merge OUT IN...`: the per-rank trace files an mpi run writes
 * (<trace>.rank<N>, one process per rank) into one Chrome/Perfetto trace,
 * with the flow arrows from each notify to the wait it released drawn
 * across ranks. Rank 0 does the same at pld_world_finalize when it can
 * read every rank's file; this is for runs whose files end up on
 * different machines (copy them together first). The merge itself is the
 * library's (src/trace/trace_merge.c), so both give the same file. */
#include <stdio.h>
#include <string.h>

#include "../src/trace/trace_merge.h"
#include "trace_merge.h"

static int usage(FILE *out)
{
    fprintf(out, "usage: pld trace merge OUT IN...\n"
                 "  merge the per-rank traces IN (PLD_TRACE=t.json under mpi writes "
                 "t.json.rank0,\n"
                 "  t.json.rank1, ...) into the trace OUT: one process per rank, flow arrows\n"
                 "  from each notify to the wait it released, across ranks\n");
    return out == stderr ? 2 : 0;
}

int trace_main(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
        return usage(stdout);
    if (argc < 2 || strcmp(argv[1], "merge")) {
        if (argc >= 2)
            fprintf(stderr, "pld trace: unknown subcommand '%s'\n", argv[1]);
        return usage(stderr);
    }
    if (argc >= 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")))
        return usage(stdout);
    if (argc < 4) {
        fprintf(stderr, "pld trace merge: expected OUT and at least one IN\n");
        return usage(stderr);
    }
    const char *out = argv[2];
    for (int i = 3; i < argc; i++)
        if (!strcmp(argv[i], out)) { /* it would be read and then overwritten: say so */
            fprintf(stderr, "pld trace merge: OUT '%s' is also an input\n", out);
            return 2;
        }
    char err[1024];
    if (pld__trace_merge(out, (const char *const *)(argv + 3), argc - 3, err, sizeof err) != 0) {
        fprintf(stderr, "pld trace merge: %s\n", err);
        return 1;
    }
    return 0;
}
