/* SPDX-License-Identifier: Apache-2.0 */
/* What `pld bench`, `pld cost` and bench/mpi_coll share: collective names,
 * size arguments (K/M/G suffixes), the buffer shape a requested size maps
 * to, nccl-tests' bus-bandwidth factors and the table layout.
 *
 * Size semantics follow nccl-tests: the size of a row is the total bytes of
 * the collective's buffer on one rank (the gathered output of allgather,
 * the [P,S] input of reduce_scatter, the whole [P,S] send buffer of
 * all_to_all, the data of allreduce and broadcast). A requested size is
 * rounded down to what the shape can hold (at least one element per rank).
 *
 * Plain C, no libpld: bench/mpi_coll links it too. */
#ifndef PLD_TOOLS_SWEEP_H
#define PLD_TOOLS_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum bench_coll {
    BENCH_BARRIER,
    BENCH_BROADCAST,
    BENCH_ALLGATHER,
    BENCH_REDUCE_SCATTER,
    BENCH_ALLREDUCE,
    BENCH_ALL_TO_ALL,
    BENCH_ALL_TO_ALL_V,
    BENCH_NCOLL
} bench_coll;

/* "allgather"; NULL outside the enum. */
const char *bench_coll_name(bench_coll c);
/* 0 and *out on success, -1 for an unknown name. */
int bench_coll_parse(const char *s, bench_coll *out);
/* 1 for allreduce and reduce_scatter (they take --op). */
int bench_coll_reduces(bench_coll c);

/* "64M", "4K", "1G", "4096", "1.5M" -> bytes (K = 1024). 0 and *out on
 * success, -1 when s is not a size. */
int bench_size_parse(const char *s, int64_t *out);
/* "64 MiB", "4 KiB", "8 B" into buf. */
const char *bench_size_fmt(char *buf, size_t n, int64_t bytes);

/* Requested sizes from -b/-e with factor f (f >= 2) or increment inc
 * (inc > 0 wins). Returns the count (at most cap); -1 if b > e. */
int bench_sweep(int64_t b, int64_t e, int f, int64_t inc, int64_t *out, int cap);

/* The buffers one size maps to. */
typedef struct bench_shape {
    int64_t bytes; /* effective size: total bytes of the buffer (the size column) */
    int64_t count; /* elements of it (the count column) */
    int64_t rows;  /* window rows: P (allgather, reduce_scatter, all_to_all), P*M (v), 1 */
    int64_t cols;  /* row length S in elements */
    int64_t m;     /* rows per destination block (all_to_all_v), else 1 */
} bench_shape;
/* The shape for `req` bytes of elements of `elt` bytes at P ranks:
 *   barrier            nothing (bytes 0)
 *   broadcast, allreduce   data [1, n],   n = req/elt
 *   allgather, reduce_scatter, all_to_all   [P, S],   S = req/(P elt)
 *   all_to_all_v       [P*M, S]: per destination a block of M rows (M = 4,
 *                      2 or 1, whichever divides the block), S = block/M
 * with at least one element per rank. */
void bench_shape_make(bench_coll c, int p, size_t elt, int64_t req, bench_shape *out);

/* nccl-tests' busbw = algbw * factor: allreduce 2(P-1)/P; allgather,
 * reduce_scatter, all_to_all(_v) (P-1)/P; broadcast 1; barrier 0 (n/a). */
double bench_busbw_factor(bench_coll c, int p);

/* The nccl-tests style table. `extended` adds pld's columns (%peak, memcpy
 * peak, measured peer bytes, cost card, self bytes). */
void bench_table_header(FILE *out, int extended);
typedef struct bench_row {
    int64_t bytes, count;
    const char *type, *redop;
    int root; /* -1: not a rooted collective */
    double time_us, algbw, busbw;
    int64_t wrong; /* -1: not checked */
    /* extended */
    double peak_pct, memcpy_gbs;
    uint64_t peer_bytes, card_bytes, self_bytes;
    int card_ok;
    /* pld bench --team: the option ("x=2") and how many groups of this
     * row's size ran (the CSV's P is then the group size); NULL: the world */
    const char *team;
    int groups;
    /* pld bench: "out" (out-of-place) or "in" (in-place), the column group
     * of the table this measurement is in; NULL: not said (mpi_coll) */
    const char *place;
} bench_row;
void bench_table_row(FILE *out, const bench_row *r, int extended);

/* pld bench's table: nccl-tests' layout -- size count type redop root,
 * then time algbw busbw #wrong out-of-place, the same four in-place --
 * followed by pld's columns: %peak of each group, the memcpy reference,
 * and peer bytes / card / self bytes of the row's first group (its
 * out-of-place one where it has one). A group the collective does not
 * have is four N/A; #wrong is N/A when not checked (nccl-tests' -c 0). */
typedef struct bench_cell {
    int present;
    double time_us, algbw, busbw; /* algbw, busbw: N/A for 0 bytes (barrier) */
    int64_t wrong;                /* -1: not checked */
    double peak_pct;
} bench_cell;
enum { BENCH_OUT_OF_PLACE, BENCH_IN_PLACE };
typedef struct bench_pair {
    int64_t bytes, count;
    const char *type, *redop;
    int root;
    bench_cell cell[2]; /* [BENCH_OUT_OF_PLACE], [BENCH_IN_PLACE] */
    double memcpy_gbs;
    uint64_t peer_bytes, card_bytes, self_bytes;
    int card_ok; /* both groups equal their cards */
} bench_pair;
void bench_pair_header(FILE *out);
void bench_pair_print(FILE *out, const bench_pair *r);

/* CSV: one header, one line per row (pld bench: per column group, `place`
 * out or in); tool is "pld" or "mpi". pld-only fields are left empty for
 * MPI, and team and groups for world runs. */
void bench_csv_header(FILE *out);
void bench_csv_row(FILE *out, const char *tool, const char *coll, const char *mode,
                   const char *transport, int p, const bench_row *r, int extended);

/* Monotonic clock, nanoseconds. */
uint64_t bench_now_ns(void);

#endif
