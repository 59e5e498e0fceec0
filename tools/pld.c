/* SPDX-License-Identifier: Apache-2.0 */
/* The pld command-line tool.
 *
 *   pld info [--env]               version, transports, profiles and limits;
 *                                  --env: every PLD_* setting and its value in effect
 *   pld bench <collective|all> ... nccl-tests style measurement (tools/bench/bench.c)
 *   pld cost <collective> -s SIZE  the cost card (tools/bench/cost_cmd.c)
 *   pld explore PROGRAM [ARGS]     many seeds of the schedule explorer (tools/explore.c)
 *   pld trace merge OUT IN...      per-rank traces into one (tools/trace_merge.c)
 *   pld --version                  the version of the library it runs with
 *
 * Exit status: 0 success, 1 failure, 2 usage error. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/core/settings.h" /* the PLD_* table: pld info --env prints it */
#include "bench.h"
#include "explore.h"
#include "pld/pld.h"
#include "trace_merge.h"
#include "tune.h"

static int usage(FILE *out)
{
    fprintf(out, "usage: pld <command> [options]\n"
                 "  info [--env]                  version, transports compiled in, profiles and "
                 "their limits;\n"
                 "                                --env: the PLD_* settings and their values\n"
                 "  bench <collective|all> ...    measure collectives (nccl-tests style table)\n"
                 "  cost <collective> -s SIZE ... the cost card: bytes per rank, barrier rounds\n"
                 "  moe [-E N -k K -t T ...]      an MoE dispatch in three forms: bytes, queues,\n"
                 "                                predicted time; --run measures them\n"
                 "  explore PROGRAM [ARGS] ...    run PROGRAM under many schedule-explorer seeds\n"
                 "  tune [--show]                 measure the cost model's parameters (PLD_AUTO)\n"
                 "  trace merge OUT IN...         merge per-rank traces (mpi) into one\n"
                 "  help                          this text; 'pld <command> --help' for more\n"
                 "  --version                     the version of libpld this tool runs with\n");
    return out == stderr ? 2 : 0;
}

/* `pld info --env`: the settings table with the values in effect, one
 * block per variable. Every row is printed, a bad value included; each bad
 * value is then reported on stderr as pld_world_init reports it, and the
 * exit status is 2 (as `pld bench` with that environment). */
static int cmd_info_env(void)
{
    int bad = 0;
    printf("# PLD_* environment settings: value in effect (where it comes from), what it\n"
           "# does, the accepted forms and the default. An empty value is the same as unset.\n");
    for (int i = 0; i < PLD__S_COUNT_; i++) {
        pld__setting_id id = (pld__setting_id)i;
        const pld__setting *s = pld__setting_get(id);
        pld__setting_value v;
        char msg[512], val[128], acc[256];
        if (pld__setting_read(id, &v, msg, sizeof msg) != PLD_OK) {
            printf("%s = INVALID (environment: %s=%.64s)\n", s->name, s->name,
                   pld__setting_str(id));
            fprintf(stderr, "pld info: PLD_ERR_ARG: %s\n", msg);
            bad = 1;
        } else if (v.from_env) {
            printf("%s = %s (environment: %s=%.64s)\n", s->name,
                   pld__setting_format(id, &v, val, sizeof val), s->name, v.str);
        } else {
            printf("%s = %s (default)\n", s->name, s->dflt_text);
        }
        printf("    %s%s\n", s->test_only ? "[not user-facing] " : "", s->doc);
        printf("    accepted: %s; default %s\n", pld__setting_accepted(id, acc, sizeof acc),
               s->dflt_text);
    }
    return bad ? 2 : 0;
}

static int cmd_info(int argc, char **argv)
{
    static const char *const platforms[] = {"a2a3sim", "a5sim"};
    static const char *const transports[] = {"thread", "process", "mpi"};
    int env = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: pld info [--env]\n  version, transports compiled in, profiles and "
                   "their limits (after PLD_UB_BYTES / PLD_URMA_SQ_DEPTH)\n"
                   "  --env  every PLD_* environment setting: the value in effect, whether it "
                   "comes\n         from the environment or is the default, the accepted "
                   "forms and what it does\n");
            return 0;
        }
        if (!strcmp(argv[i], "--env")) {
            env = 1;
            continue;
        }
        fprintf(stderr, "pld info: unexpected argument '%s'\ntry 'pld info --help'\n", argv[i]);
        return 2;
    }
    if (env)
        return cmd_info_env();
    /* a bad setting would make every world below "unavailable": say why once */
    char msg[512];
    if (pld__settings_check(msg, sizeof msg) != PLD_OK) {
        fprintf(stderr, "pld info: PLD_ERR_ARG: %s\n", msg);
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
        if (lim.urma)
            printf(" (SQ depth %lld WQEBBs)", (long long)lim.sq_depth);
        printf("\n");
        pld_world_finalize(w);
    }
    const char *ub = pld__setting_str(PLD__S_UB_BYTES),
               *sq = pld__setting_str(PLD__S_URMA_SQ_DEPTH);
    if (ub || sq)
        printf("  (environment: %s%s%s%s%s)\n", ub ? "PLD_UB_BYTES=" : "", ub ? ub : "",
               ub && sq ? ", " : "", sq ? "PLD_URMA_SQ_DEPTH=" : "", sq ? sq : "");
    printf("collectives: barrier broadcast allgather reduce_scatter allreduce all_to_all "
           "all_to_all_v (pld bench, pld cost)\n");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("this machine: %ld online cores\n", cores);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "info"))
        return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return bench_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "cost"))
        return cost_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "moe"))
        return moe_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "explore"))
        return explore_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "tune"))
        return tune_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "trace"))
        return trace_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "help") || !strcmp(cmd, "-h") || !strcmp(cmd, "--help"))
        return usage(stdout);
    /* the library's own answer (pld_version), not this file's PLD_VERSION_STRING:
     * with a shared libpld the two can differ, and the library is what runs */
    if (!strcmp(cmd, "--version")) {
        printf("pld %s\n", pld_version());
        return 0;
    }
    fprintf(stderr, "pld: unknown command '%s'\n", cmd);
    return usage(stderr);
}
