/* SPDX-License-Identifier: Apache-2.0 */
/* Teams in kernels under mpirun (ctest runs it at np 4 and 6): the suite
 * of tests/team with one rank per process -- grids, strided and keyed
 * splits, teams of teams, every builtin in groups of 1 to 4 ranks, the
 * primitives with group-rank peers, 200 mixed builtins on two teams and
 * every misuse, whose status and message all processes agree on. Deadlock
 * detection is not a feature of the mpi transport, so the deadlock cases
 * stay in the unit test. Plain C (Criterion forks, which does not mix with
 * MPI); rank 0 prints "OK" when every process passed every case. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "pld/pld.h"
#include "suite.h"

static int me, np, failures;

static pld_world *mpi_world(const char *platform, int p, char *why, size_t n)
{
    if (p != np) {
        snprintf(why, n, "a world of %d ranks asked for under %d processes", p, np);
        return NULL;
    }
    pld_config cfg = {.platform = platform, .transport = "mpi", .wait_timeout_ms = 20000};
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    if (st != PLD_OK) {
        snprintf(why, n, "pld_world_init(%s, mpi) = %s: %s", platform, pld_status_name(st),
                 pld_last_error());
        return NULL;
    }
    return w;
}

static void run(const char *name, ts_param prm)
{
    char why[4096];
    double t0 = MPI_Wtime();
    if (ts_run(name, &prm, why, sizeof why)) {
        fprintf(stderr, "rank %d: case %s, P=%d: %s\n", me, name, prm.p, why);
        failures++;
    } else if (me == 0) {
        printf("case %s passed (%.2f s)\n", name, MPI_Wtime() - t0);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    ts_set_world_fn(mpi_world);

    /* grids: 2x2 at 4; 2x3 and 3x2 at 6 (and 2x4, 4x2 at 8) */
    for (int x = 2; x < np; x++)
        if (np % x == 0)
            run("grid", (ts_param){.p = np, .x = x});
    run("strided", (ts_param){.p = np});
    run("team_of_team", (ts_param){.p = np});
    if (np == 4) {
        run("split", (ts_param){.p = np, .sizes = {2, 1}, .ngroups = 2});
        run("builtins", (ts_param){.p = np, .sizes = {1, 3}, .ngroups = 2});
        run("builtins", (ts_param){.p = np, .sizes = {2, 2}, .ngroups = 2});
    } else {
        run("split", (ts_param){.p = np, .sizes = {3, 2}, .ngroups = 2});
        run("builtins", (ts_param){.p = np, .sizes = {1, 2, 3}, .ngroups = 3});
        run("builtins", (ts_param){.p = np, .sizes = {4, 2}, .ngroups = 2});
    }
    run("mixed", (ts_param){.p = np, .x = np % 3 == 0 ? 3 : 2, .calls = 200});
    static const char *const errors[] = {"err_other_world", "err_freed",  "err_stale",
                                         "err_peer",        "err_signal", "err_names"};
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        run(errors[i], (ts_param){.p = np});

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && total == 0)
        printf("OK\n");
    MPI_Finalize();
    return total ? 1 : 0;
}
