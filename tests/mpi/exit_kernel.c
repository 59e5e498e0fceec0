/* SPDX-License-Identifier: Apache-2.0 */
/* The last rank calls exit(3) inside a kernel while its peers wait for it
 * (tests/mpi/kernel_exit.sh runs it under mpirun and checks that the job
 * ends within the wait timeout, with a non-zero status, leaving no process
 * and no shared-memory file behind).
 *
 * usage: exit_kernel [--user-mpi] [--stuck]
 *   default     pld initialises MPI itself (and would finalize it at exit)
 *   --user-mpi  the program initialises MPI and finalizes it at exit
 *   --stuck     the last rank loops for ever in its own code instead of
 *               calling exit (tests/mpi/kernel_exit.sh) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pld/pld.h>

typedef struct args {
    pld_dtensor sig;
    int stuck;
} args;

static void exit_kernel(pld_ctx *c, void *p)
{
    args *a = p;
    if (pld_rank(c) == pld_nranks(c) - 1) {
        if (!a->stuck)
            exit(3);
        for (volatile int spin = 1; spin;)
            ; /* user code that never returns nor calls pld */
    }
    pld_wait(c, a->sig, PLD_IDX(pld_rank(c), 0), 1, PLD_WAIT_GE);
}

/* Prints every shared-memory file this process maps ("shm: <path>"), so
 * the script can check that each is gone after the job, whatever other jobs
 * run beside it. */
static void print_shm_files(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096], last[4096] = "";
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *path = strstr(line, "/dev/shm/");
        if (!path)
            continue;
        path[strcspn(path, " \n")] = '\0';
        if (strcmp(path, last))
            printf("shm: %s\n", path);
        snprintf(last, sizeof last, "%s", path);
    }
    fclose(f);
    fflush(stdout);
}

static void finalize(void)
{
    MPI_Finalize();
}

int main(int argc, char **argv)
{
    int user_mpi = 0, stuck = 0;
    for (int i = 1; i < argc; i++) {
        user_mpi |= !strcmp(argv[i], "--user-mpi");
        stuck |= !strcmp(argv[i], "--stuck");
    }
    if (user_mpi) {
        MPI_Init(&argc, &argv);
        atexit(finalize);
    }
    pld_world *w;
    if (pld_world_init(&w, NULL) != PLD_OK) {
        fprintf(stderr, "pld_world_init: %s\n", pld_last_error());
        return 2;
    }
    int p = pld_world_size(w);
    args *a = pld_host_alloc(w, sizeof *a);
    pld_window_buffer *sb;
    if (!a || pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)p, "sig", &sb) != PLD_OK ||
        pld_window(sb, PLD_INT32, 2, PLD_IDX(p, 1), &a->sig) != PLD_OK) {
        fprintf(stderr, "set-up: %s\n", pld_world_error(w));
        return 2;
    }
    a->stuck = stuck;
    print_shm_files();
    pld_status st = pld_launch(w, exit_kernel, a);
    fprintf(stderr, "the launch returned %s: %s\n", pld_status_name(st), pld_world_error(w));
    pld_world_finalize(w);
    return st == PLD_OK ? 0 : 1;
}
