/* The pld command-line tool.
 *
 *   pld info                       version, transports, profiles and limits
 *   pld bench <collective|all> ... nccl-tests style measurement (tools/bench/bench.c)
 *   pld cost <collective> -s SIZE  the cost card (tools/bench/cost_cmd.c)
 *   pld explore PROGRAM [ARGS]     many seeds of the schedule explorer (tools/explore.c)
 *
 * Exit status: 0 success, 1 failure, 2 usage error. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "explore.h"
#include "pld/pld.h"

static int usage(FILE *out) {
    fprintf(out, "usage: pld <command> [options]\n"
                 "  info                          version, transports compiled in, profiles and "
                 "their limits\n"
                 "  bench <collective|all> ...    measure collectives (nccl-tests style table)\n"
                 "  cost <collective> -s SIZE ... the cost card: bytes per rank, barrier rounds\n"
                 "  explore PROGRAM [ARGS] ...    run PROGRAM under many schedule-explorer seeds\n"
                 "  help                          this text; 'pld <command> --help' for more\n");
    return out == stderr ? 2 : 0;
}

static int cmd_info(int argc, char **argv) {
    static const char *const platforms[] = {"a2a3sim", "a5sim"};
    static const char *const transports[] = {"thread", "process", "mpi"};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: pld info\n  version, transports compiled in, profiles and their "
                   "limits (after PLD_UB_BYTES / PLD_URMA_SQ_DEPTH)\n");
            return 0;
        }
        fprintf(stderr, "pld info: unexpected argument '%s'\ntry 'pld info --help'\n", argv[i]);
        return 2;
    }
    printf("pld %s\n", pld_version());
    printf("transports:");
    char missing[1024] = "";
    for (size_t i = 0; i < sizeof transports / sizeof transports[0]; i++) {
        pld_config cfg = {.transport = transports[i], .devices = "0"};
        pld_world *w = NULL;
        if (!strcmp(transports[i], "mpi")) {
            /* a world would start MPI; whether it is built in is enough */
            if (pld_transport_built("mpi")) {
                printf(" mpi");
            } else {
                size_t n = strlen(missing);
                snprintf(missing + n, sizeof missing - n,
                         "  %-8s not available: not built into this library (MPI was not found "
                         "at build time)\n",
                         transports[i]);
            }
            continue;
        }
        if (pld_world_init(&w, &cfg) == PLD_OK) {
            printf(" %s", transports[i]);
            pld_world_finalize(w);
        } else {
            size_t n = strlen(missing);
            snprintf(missing + n, sizeof missing - n, "  %-8s not available: %s\n", transports[i],
                     pld_last_error());
        }
    }
    printf("\n%s", missing);
    printf("profiles:\n");
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
        if (lim.urma) printf(" (SQ depth %lld WQEBBs)", (long long)lim.sq_depth);
        printf("\n");
        pld_world_finalize(w);
    }
    const char *ub = getenv("PLD_UB_BYTES"), *sq = getenv("PLD_URMA_SQ_DEPTH");
    if (ub || sq)
        printf("  (environment: %s%s%s%s%s)\n", ub ? "PLD_UB_BYTES=" : "", ub ? ub : "",
               ub && sq ? ", " : "", sq ? "PLD_URMA_SQ_DEPTH=" : "", sq ? sq : "");
    printf("collectives: barrier broadcast allgather reduce_scatter allreduce all_to_all "
           "all_to_all_v (pld bench, pld cost)\n");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("this machine: %ld online cores\n", cores);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage(stderr);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench")) return bench_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "cost")) return cost_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "explore")) return explore_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "help") || !strcmp(cmd, "-h") || !strcmp(cmd, "--help")) return usage(stdout);
    fprintf(stderr, "pld: unknown command '%s'\n", cmd);
    return usage(stderr);
}
