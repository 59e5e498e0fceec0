/* The pld command-line tool. */
#include <stdio.h>
#include <string.h>

#include "pld/pld.h"

static int usage(FILE *out)
{
    fprintf(out, "usage: pld info [-p PLATFORM]\n"
                 "  info   version, transports compiled in, profiles and their limits\n");
    return out == stderr ? 2 : 0;
}

static int cmd_info(int argc, char **argv)
{
    static const char *const platforms[] = {"a2a3sim", "a5sim"};
    static const char *const transports[] = {"thread", "process", "mpi"};
    printf("pld %s\n", pld_version());
    printf("transports:");
    for (size_t i = 0; i < sizeof transports / sizeof transports[0]; i++) {
        pld_config cfg = {.transport = transports[i], .devices = "0"};
        pld_world *w = NULL;
        if (pld_world_init(&w, &cfg) == PLD_OK) {
            printf(" %s", transports[i]);
            pld_world_finalize(w);
        }
    }
    printf("\nprofiles:\n");
    for (size_t i = 0; i < sizeof platforms / sizeof platforms[0]; i++) {
        pld_config cfg = {.platform = platforms[i], .devices = "0"};
        pld_world *w = NULL;
        if (pld_world_init(&w, &cfg) != PLD_OK) {
            printf("  %-8s unavailable: %s\n", platforms[i], pld_last_error());
            continue;
        }
        pld_info_limits lim;
        pld_world_limits(w, &lim);
        printf("  %-8s UB %zu bytes per core, %d AIV cores per rank, URMA %s", platforms[i],
               lim.ub_bytes, lim.aiv_cores, lim.urma ? "yes" : "no");
        if (lim.urma)
            printf(" (SQ depth %lld WQEBBs)", (long long)lim.sq_depth);
        printf("\n");
        pld_world_finalize(w);
    }
    (void)argc, (void)argv;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    if (!strcmp(argv[1], "info"))
        return cmd_info(argc - 1, argv + 1);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
        return usage(stdout);
    fprintf(stderr, "pld: unknown command '%s'\n", argv[1]);
    return usage(stderr);
}
