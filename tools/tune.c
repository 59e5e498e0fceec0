/* SPDX-License-Identifier: Apache-2.0 */
/* `pld tune`: measures the parameters of the cost model PLD_AUTO chooses
 * with (pld/tune.h) more thoroughly than a first world does, prints them
 * and rewrites the parameter file; --show prints the file as it is. */
#include <stdio.h>
#include <string.h>

#include "pld/pld.h"
#include "tune.h"

static int usage(FILE *out)
{
    fprintf(out,
            "usage: pld tune [--file F] [--show]\n"
            "  Measures the cost model's parameters on this machine with pld's own builtins\n"
            "  (about a second; run it on a quiet machine) and writes them to the parameter\n"
            "  file, which every world reads at init and PLD_AUTO predicts with.\n"
            "  --file F   that file instead of PLD_TUNE_FILE / the cache path (%s)\n"
            "  --show     print the file's parameters; measure nothing\n"
            "Exit status: 0, 1 if measuring, reading or writing failed, 2 usage.\n",
            pld_tune_path());
    return out == stderr ? 2 : 0;
}

static void print(const char *what, const char *path, const pld_tune *t)
{
    printf("# %s: %s\n", what, path);
    printf("cpus         %d\n", t->cpus);
    printf("round_us     %.4g  (one full credit round, 2 ranks on their own CPUs)\n", t->round_us);
    printf("peer_us      %.4g  (each rank beyond 2 while every rank has a CPU)\n", t->peer_us);
    printf("handover_us  %.4g  (each rank beyond the CPUs, per round)\n", t->handover_us);
    printf("transfer_us  %.4g  (each transfer beyond its bytes: a put of a few rows)\n",
           t->transfer_us);
    printf("%-12s %-12s %-12s %-12s %s\n", "# working set", "copy ns/B", "pull ns/B", "reduce ns/B",
           "(per rank; copy GB/s)");
    for (int i = 0; i < PLD_TUNE_POINTS; i++)
        printf("%-14.0f %-12.4g %-12.4g %-12.4g (%.1f)\n", t->ws_bytes[i], t->copy_ns[i],
               t->pull_ns[i], t->reduce_ns[i], t->copy_ns[i] > 0 ? 1.0 / t->copy_ns[i] : 0.0);
    printf("measured     %s\n", t->measured ? "yes" : "no (built-in)");
}

int tune_main(int argc, char **argv)
{
    const char *file = NULL;
    int show = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return usage(stdout);
        if (!strcmp(argv[i], "--show")) {
            show = 1;
        } else if (!strcmp(argv[i], "--file") && i + 1 < argc) {
            file = argv[++i];
        } else {
            fprintf(stderr, "pld tune: unknown option '%s'\n", argv[i]);
            return usage(stderr);
        }
    }
    const char *path = file ? file : pld_tune_path();
    pld_tune t;
    if (show) {
        if (pld_tune_load(path, &t) != PLD_OK) {
            fprintf(stderr, "pld tune: %s\n", pld_last_error());
            return 1;
        }
        print("parameters", path, &t);
        return 0;
    }
    if (pld_tune_measure(&t, 1) != PLD_OK) {
        fprintf(stderr, "pld tune: %s\n", pld_last_error());
        return 1;
    }
    if (pld_tune_save(path, &t) != PLD_OK) {
        fprintf(stderr, "pld tune: %s\n", pld_last_error());
        return 1;
    }
    print("measured and written", path, &t);
    return 0;
}
