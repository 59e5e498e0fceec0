/* SPDX-License-Identifier: Apache-2.0 */
/* mpi_coll: MPI's own collectives over the sweep of `pld bench`, with the
 * same sizes, the same table and the same CSV, so bench/compare.sh can put
 * them side by side.
 *
 *   mpirun -np 4 --oversubscribe bench/mpi_coll <collective|all> [-b 8] [-e 64M]
 *          [-f 2] [-i N] [-n 20] [-w 5] [--warmup-ms 50] [-c 0|1] [--csv FILE]
 *
 * fp32 and Sum only. The pld collective each one stands for (size = total
 * bytes of the buffer, as in pld bench and nccl-tests):
 *   barrier         MPI_Barrier
 *   broadcast       MPI_Bcast, root 0, n floats
 *   allgather       MPI_Allgather, S floats in, P*S out (size = P*S*4)
 *   reduce_scatter  MPI_Reduce_scatter_block in place on P*S (like pld's)
 *   allreduce       MPI_Allreduce in place (pld's allreduce is in place)
 *   all_to_all      MPI_Alltoall, S floats per destination
 *   all_to_all_v    MPI_Alltoallv, blocks of M rows of S floats per destination;
 *                   timed calls send full blocks (counts M*S), checked calls
 *                   the same varying row counts as pld bench
 * Timing is pld bench's: warmup calls (at least -w, and for at least
 * --warmup-ms, default 50), MPI_Barrier, then every rank times
 * `iters` calls back to back; the row shows the maximum over ranks / iters.
 * With -c 1, iters more calls are each filled, run and verified. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_ref.h"
#include "sweep.h"

#define MAX_SIZES 256

typedef struct opts {
    int ncoll;
    bench_coll coll[BENCH_NCOLL];
    int64_t b, e, inc, f, iters, warmup, warmup_ms, check;
    const char *csv;
} opts;

static int rank, nranks;

static float val(int src, int dst, int64_t it, int64_t i)
{
    return (float)(((uint64_t)src * 131u + (uint64_t)dst * 31u + (uint64_t)it * 17u +
                    (uint64_t)i * 7u) %
                   16u);
}

static int usage(int code)
{
    if (rank == 0)
        fprintf(code ? stderr : stdout,
                "usage: mpi_coll <collective|all> [-b 8] [-e 64M] [-f 2] [-i N] [-n 20] "
                "[-w 5] [--warmup-ms 50] [-c 0|1] [--csv FILE]\n"
                "  collectives: barrier broadcast allgather reduce_scatter allreduce all_to_all "
                "all_to_all_v\n");
    return code;
}

static int parse_int(const char *s, int64_t lo, int64_t *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v < lo)
        return -1;
    *out = v;
    return 0;
}

static int parse(opts *o, int argc, char **argv)
{
    *o = (opts){.b = 8, .e = (int64_t)64 << 20, .f = 2, .iters = 20, .warmup = 5, .warmup_ms = 50};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return -1;
        if (!strcmp(a, "-b") && v)
            bad = bench_size_parse(v, &o->b), i++;
        else if (!strcmp(a, "-e") && v)
            bad = bench_size_parse(v, &o->e), i++;
        else if (!strcmp(a, "-i") && v)
            bad = bench_size_parse(v, &o->inc), i++;
        else if (!strcmp(a, "-f") && v)
            bad = parse_int(v, 2, &o->f), i++;
        else if (!strcmp(a, "-n") && v)
            bad = parse_int(v, 1, &o->iters), i++;
        else if (!strcmp(a, "-w") && v)
            bad = parse_int(v, 0, &o->warmup), i++;
        else if (!strcmp(a, "--warmup-ms") && v)
            bad = parse_int(v, 0, &o->warmup_ms), i++;
        else if (!strcmp(a, "-c") && v)
            bad = parse_int(v, 0, &o->check) || o->check > 1, i++;
        else if (!strcmp(a, "--csv") && v)
            o->csv = v, i++;
        else if (!strcmp(a, "all") && !o->ncoll)
            for (int c = 0; c < BENCH_NCOLL; c++)
                o->coll[o->ncoll++] = (bench_coll)c;
        else if (a[0] != '-' && !o->ncoll && !bench_coll_parse(a, &o->coll[0]))
            o->ncoll = 1;
        else
            bad = 1;
        if (bad) {
            if (rank == 0)
                fprintf(stderr, "mpi_coll: bad argument '%s'%s\n", a, v ? "" : " (or its value)");
            return 2;
        }
    }
    if (!o->ncoll || o->b > o->e)
        return 2;
    /* like pld bench: sizes are whole fp32 elements, at least one */
    if (o->b < 4 || o->b % 4 || o->e % 4 || (o->inc && o->inc % 4)) {
        if (rank == 0)
            fprintf(stderr, "mpi_coll: -b, -e and -i are whole numbers of 4-byte elements "
                            "(-b at least 4)\n");
        return 2;
    }
    return 0;
}

typedef bench_mpi_bufs bufs;

/* Rows rank s sent to this rank in the current (checked) iteration. */
static int64_t rows_from(const bufs *b, int s)
{
    return b->rcount[s] / b->sh.cols;
}

static void fill(bench_coll c, bufs *b, int64_t it)
{
    int64_t s = b->sh.cols, n = b->sh.count, m = b->sh.m;
    float *in = b->in, *out = b->out;
    switch (c) {
    case BENCH_BROADCAST:
        for (int64_t i = 0; i < n; i++)
            out[i] = rank == 0 ? val(0, 0, it, i) : -3.0f;
        break;
    case BENCH_ALLGATHER:
        for (int64_t i = 0; i < s; i++)
            in[i] = val(rank, 0, it, i);
        break;
    case BENCH_REDUCE_SCATTER: /* in place: all P rows staged in out */
        for (int d = 0; d < nranks; d++)
            for (int64_t i = 0; i < s; i++)
                out[d * s + i] = val(rank, d, it, i);
        break;
    case BENCH_ALL_TO_ALL:
        for (int d = 0; d < nranks; d++)
            for (int64_t i = 0; i < s; i++)
                in[d * s + i] = val(rank, d, it, i);
        break;
    case BENCH_ALLREDUCE:
        for (int64_t i = 0; i < n; i++)
            out[i] = val(rank, 0, it, i);
        break;
    case BENCH_ALL_TO_ALL_V:
        bench_mpi_counts(b, rank, nranks, it);
        for (int d = 0; d < nranks; d++)
            for (int64_t i = 0; i < m * s; i++)
                in[d * m * s + i] = val(rank, d, it, i);
        break;
    default:
        break;
    }
}

static int64_t verify(bench_coll c, const bufs *b, int64_t it)
{
    int64_t s = b->sh.cols, n = b->sh.count, wrong = 0;
    const float *out = b->out;
    switch (c) {
    case BENCH_BROADCAST:
        for (int64_t i = 0; i < n; i++)
            wrong += out[i] != val(0, 0, it, i);
        break;
    case BENCH_ALLGATHER:
        for (int r = 0; r < nranks; r++)
            for (int64_t i = 0; i < s; i++)
                wrong += out[r * s + i] != val(r, 0, it, i);
        break;
    case BENCH_REDUCE_SCATTER: /* MPI_IN_PLACE: the result is the first row */
        for (int64_t i = 0; i < s; i++) {
            float x = 0;
            for (int r = 0; r < nranks; r++)
                x += val(r, rank, it, i);
            wrong += out[i] != x;
        }
        break;
    case BENCH_ALLREDUCE:
        for (int64_t i = 0; i < n; i++) {
            float x = 0;
            for (int r = 0; r < nranks; r++)
                x += val(r, 0, it, i);
            wrong += out[i] != x;
        }
        break;
    case BENCH_ALL_TO_ALL:
        for (int r = 0; r < nranks; r++)
            for (int64_t i = 0; i < s; i++)
                wrong += out[r * s + i] != val(r, rank, it, i);
        break;
    case BENCH_ALL_TO_ALL_V:
        for (int r = 0; r < nranks; r++)
            for (int64_t i = 0; i < rows_from(b, r) * s; i++)
                wrong += out[r * b->sh.m * s + i] != val(r, rank, it, i);
        break;
    default:
        break;
    }
    return wrong;
}

/* One size: returns the row (on every rank; printed by rank 0). */
static int run_size(const opts *o, bench_coll c, int64_t req, bench_row *row)
{
    bufs b = {.type = MPI_FLOAT, .op = MPI_SUM, .root = 0};
    bench_shape_make(c, nranks, sizeof(float), req, &b.sh);
    if (b.sh.count > INT32_MAX) {
        if (rank == 0)
            fprintf(stderr, "mpi_coll: %lld elements do not fit MPI's int counts\n",
                    (long long)b.sh.count);
        return -1;
    }
    size_t n = (size_t)(b.sh.count > 0 ? b.sh.count : 1);
    b.in = malloc(n * sizeof(float));
    b.out = malloc(n * sizeof(float));
    b.scount = malloc(sizeof(int) * 4 * (size_t)nranks);
    if (!b.in || !b.out || !b.scount) {
        fprintf(stderr, "mpi_coll: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    b.sdispl = b.scount + nranks;
    b.rcount = b.sdispl + nranks;
    b.rdispl = b.rcount + nranks;
    memset(b.in, 0, n * sizeof(float)); /* touch every page before timing */
    memset(b.out, 0, n * sizeof(float));
    bench_mpi_counts(&b, rank, nranks, -1);

    double t = bench_mpi_time(c, &b, o->iters, o->warmup, (uint64_t)o->warmup_ms * 1000000u,
                              MPI_COMM_WORLD);
    long long wrong = 0, wrong_all = 0;
    if (o->check) {
        for (int64_t it = 0; it < o->iters; it++) {
            fill(c, &b, it);
            bench_mpi_call(c, &b, MPI_COMM_WORLD);
            wrong += verify(c, &b, it);
        }
        bench_mpi_counts(&b, rank, nranks, -1);
        MPI_Allreduce(&wrong, &wrong_all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    *row = (bench_row){.bytes = b.sh.bytes,
                       .count = b.sh.count,
                       .type = c == BENCH_BARRIER ? "-" : "fp32",
                       .redop = bench_coll_reduces(c) ? "sum" : "none",
                       .root = c == BENCH_BROADCAST ? 0 : -1,
                       .time_us = t / 1e3,
                       .wrong = o->check ? wrong_all : -1};
    if (row->time_us > 0 && b.sh.bytes > 0) {
        row->algbw = (double)b.sh.bytes / (row->time_us * 1e3);
        row->busbw = row->algbw * bench_busbw_factor(c, nranks);
    }
    free(b.in);
    free(b.out);
    free(b.scount);
    return t < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    opts o;
    int rc = parse(&o, argc, argv);
    if (rc) {
        MPI_Finalize();
        return usage(rc < 0 ? 0 : 2);
    }
    int64_t sizes[MAX_SIZES];
    int nsizes = bench_sweep(o.b, o.e, (int)o.f, o.inc, sizes, MAX_SIZES);
    FILE *csv = NULL;
    if (rank == 0 && o.csv) {
        csv = fopen(o.csv, "w");
        if (!csv) {
            perror(o.csv);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        bench_csv_header(csv);
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = '\0'; /* "Open MPI v4.1.4", "MPICH Version: 4.0.2" */
    double busbw_sum = 0;
    int busbw_n = 0, status = 0;
    long long wrong_total = 0;
    for (int k = 0; k < o.ncoll; k++) {
        bench_coll c = o.coll[k];
        if (rank == 0) {
            printf("#\n# mpi_coll: %s, P=%d, %s\n# dtype fp32%s, iters %lld, warmup %lld calls "
                   "and %lld ms, check %lld\n#\n",
                   bench_coll_name(c), nranks, lib, bench_coll_reduces(c) ? ", op sum" : "",
                   (long long)o.iters, (long long)o.warmup, (long long)o.warmup_ms,
                   (long long)o.check);
            bench_table_header(stdout, 0);
        }
        int64_t last = -1;
        double sum = 0;
        int nrows = 0;
        for (int i = 0; i < (c == BENCH_BARRIER ? 1 : nsizes); i++) {
            bench_shape sh;
            bench_shape_make(c, nranks, sizeof(float), sizes[i], &sh);
            if (sh.bytes == last)
                continue;
            last = sh.bytes;
            bench_row row;
            if (run_size(&o, c, sizes[i], &row)) {
                status = 1;
                break;
            }
            if (rank == 0) {
                bench_table_row(stdout, &row, 0);
                fflush(stdout);
                if (csv)
                    bench_csv_row(csv, "mpi", bench_coll_name(c), "mpi", "mpi", nranks, &row, 0);
            }
            if (row.wrong > 0)
                wrong_total += row.wrong;
            if (row.bytes > 0)
                sum += row.busbw, nrows++;
        }
        if (rank == 0 && c != BENCH_BARRIER)
            printf("# avg busbw (%s): %.3f GB/s\n", bench_coll_name(c), nrows ? sum / nrows : 0);
        busbw_sum += sum;
        busbw_n += nrows;
    }
    if (rank == 0) {
        printf("#\n# total #wrong: %s%lld\n# avg busbw: %.3f GB/s\n",
               o.check ? "" : "(not checked) ", wrong_total, busbw_n ? busbw_sum / busbw_n : 0);
        if (csv)
            fclose(csv);
    }
    MPI_Finalize();
    return status || wrong_total ? 1 : 0;
}
