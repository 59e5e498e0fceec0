/* SPDX-License-Identifier: Apache-2.0 */
#include "example_util.h"

#include <stdio.h>
#include <string.h>

static const char *prog_name(const char *argv0) {
    const char *slash = strrchr(argv0, '/');
    return slash ? slash + 1 : argv0;
}

static void print_usage(FILE *out, const char *prog, const char *const *modes) {
    fprintf(out,
            "usage: %s [-p a2a3sim|a5sim] [-d 0,1,...] [--transport thread|process|mpi] [--ir]",
            prog);
    if (modes) {
        fprintf(out, " [--mode ");
        for (int i = 0; modes[i]; i++)
            fprintf(out, "%s%s", i ? "|" : "", modes[i]);
        fprintf(out, "]  (default %s)", modes[0]);
    }
    fprintf(out, "\n");
}

int ex_init_failed(const char *prog, pld_status st) {
    fprintf(stderr, "%s: %s: %s\n", prog_name(prog), pld_status_name(st), pld_last_error());
    return st == PLD_ERR_ARG ? 2 : 1;
}

/* Looks `name` up in the NULL-terminated list; -1 when absent. */
static int mode_index(const char *const *modes, const char *name) {
    for (int i = 0; modes[i]; i++)
        if (strcmp(modes[i], name) == 0) return i;
    return -1;
}

int ex_setup(pld_world *w, int argc, char **argv, const char *const *modes, int *mode_out) {
    const char *prog = prog_name(argv[0]);
    *mode_out = 0;
    for (int i = 1; i < argc; i++) {
        const char *value = NULL;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            print_usage(stdout, prog, modes);
            return 0;
        }
        if (modes && strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
            value = argv[++i];
        else if (modes && strncmp(argv[i], "--mode=", 7) == 0)
            value = argv[i] + 7;
        if (!value) {
            fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[i]);
            print_usage(stderr, prog, modes);
            return 2;
        }
        if (mode_index(modes, value) < 0) {
            fprintf(stderr, "%s: unknown mode '%s'\n", prog, value);
            print_usage(stderr, prog, modes);
            return 2;
        }
        *mode_out = mode_index(modes, value);
    }
    /* With one rank there is no peer: every lesson below would be vacuous. */
    if (pld_world_size(w) < 2) {
        fprintf(stderr, "%s: the tutorial needs at least 2 ranks (got %d); try -d 0,1\n", prog,
                pld_world_size(w));
        return 2;
    }
    return EX_RUN;
}

void ex_check_i32(pld_ctx *c, const char *what, int64_t i, int64_t j, int32_t got, int32_t want) {
    if (got != want)
        pld_fail(c, "golden mismatch: %s[%lld,%lld] got %d want %d", what, (long long)i,
                 (long long)j, (int)got, (int)want);
}

void ex_check_block(pld_ctx *c, const char *what, const int32_t *got, int64_t rows, int64_t cols,
                    ex_golden_fn golden, int owner) {
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            ex_check_i32(c, what, i, j, got[i * cols + j], golden(owner, i, j));
}

int ex_host_check_block(const char *what, int rank, const int32_t *got, int64_t rows, int64_t cols,
                        ex_golden_fn golden, int owner) {
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t j = 0; j < cols; j++) {
            int32_t want = golden(owner, i, j);
            if (got[i * cols + j] != want) {
                fprintf(stderr, "host check: rank %d: %s[%lld,%lld] got %d want %d\n", rank, what,
                        (long long)i, (long long)j, (int)got[i * cols + j], (int)want);
                return 0;
            }
        }
    }
    return 1;
}

pld_status ex_alloc_window_2d(pld_world *w, const char *name, pld_dtype dtype, int64_t rows,
                              int64_t cols, pld_window_buffer **buf_out, pld_dtensor *view_out) {
    pld_window_buffer *buf;
    pld_dtensor view;
    pld_status st =
        pld_alloc_window_buffer(w, (size_t)(rows * cols) * pld_dtype_size(dtype), name, &buf);
    if (st != PLD_OK) return st;
    st = pld_window(buf, dtype, 2, PLD_IDX(rows, cols), &view);
    if (st != PLD_OK) {
        pld_free_window_buffer(w, buf);
        return st;
    }
    *buf_out = buf;
    *view_out = view;
    return PLD_OK;
}

int64_t ex_seg_begin(int64_t n, int p, int k) {
    return n * k / p;
}

int ex_finish(pld_world *w, pld_status st) {
    if (st == PLD_OK) {
        if (pld_is_root_process(w)) printf("OK\n");
    } else {
        const char *msg = pld_world_error(w);
        fprintf(stderr, "FAILED %s%s%s\n", pld_status_name(st), msg[0] ? ": " : "", msg);
    }
    pld_world_finalize(w);
    return st == PLD_OK ? 0 : 1;
}
