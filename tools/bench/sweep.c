/* SPDX-License-Identifier: Apache-2.0 */
/* Collective names, sizes, shapes, busbw factors and the table: see sweep.h. */
#define _POSIX_C_SOURCE 200809L
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const coll_names[BENCH_NCOLL] = {
    [BENCH_BARRIER] = "barrier",           [BENCH_BROADCAST] = "broadcast",
    [BENCH_ALLGATHER] = "allgather",       [BENCH_REDUCE_SCATTER] = "reduce_scatter",
    [BENCH_ALLREDUCE] = "allreduce",       [BENCH_ALL_TO_ALL] = "all_to_all",
    [BENCH_ALL_TO_ALL_V] = "all_to_all_v",
};

const char *bench_coll_name(bench_coll c)
{
    return (unsigned)c < BENCH_NCOLL ? coll_names[c] : NULL;
}

int bench_coll_parse(const char *s, bench_coll *out)
{
    for (int i = 0; i < BENCH_NCOLL; i++)
        if (!strcmp(s, coll_names[i])) {
            *out = (bench_coll)i;
            return 0;
        }
    return -1;
}

int bench_coll_reduces(bench_coll c)
{
    return c == BENCH_ALLREDUCE || c == BENCH_REDUCE_SCATTER;
}

int bench_size_parse(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0) || isinf(v))
        return -1;
    double mult = 1;
    switch (*end) {
    case 'k':
    case 'K':
        mult = 1024.0, end++;
        break;
    case 'm':
    case 'M':
        mult = 1024.0 * 1024, end++;
        break;
    case 'g':
    case 'G':
        mult = 1024.0 * 1024 * 1024, end++;
        break;
    default:
        break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0')
        return -1;
    v *= mult;
    if (v > 1099511627776.0 || v != floor(v))
        return -1; /* more than 1 TiB, or a fraction of a byte */
    *out = (int64_t)v;
    return 0;
}

const char *bench_size_fmt(char *buf, size_t n, int64_t bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    int64_t v = bytes;
    while (u < 4 && v >= 1024 && v % 1024 == 0)
        v /= 1024, u++;
    snprintf(buf, n, "%lld %s", (long long)v, unit[u]);
    return buf;
}

int bench_sweep(int64_t b, int64_t e, int f, int64_t inc, int64_t *out, int cap)
{
    if (b > e)
        return -1;
    int n = 0;
    for (int64_t s = b; s <= e && n < cap; n++) {
        out[n] = s;
        int64_t next = inc > 0 ? s + inc : s * f;
        if (next <= s)
            next = s + 1; /* -b 0 with a factor */
        s = next;
    }
    return n;
}

void bench_shape_make(bench_coll c, int p, size_t elt, int64_t req, bench_shape *out)
{
    int64_t e = (int64_t)elt, per;
    bench_shape s = {.rows = 1, .m = 1};
    switch (c) {
    case BENCH_BARRIER:
        s.rows = 0;
        break;
    case BENCH_BROADCAST:
    case BENCH_ALLREDUCE:
        s.cols = req / e > 0 ? req / e : 1;
        s.count = s.cols;
        break;
    case BENCH_ALLGATHER:
    case BENCH_REDUCE_SCATTER:
    case BENCH_ALL_TO_ALL:
        s.rows = p;
        s.cols = req / (e * p) > 0 ? req / (e * p) : 1;
        s.count = s.rows * s.cols;
        break;
    case BENCH_ALL_TO_ALL_V:
        per = req / (e * p) > 0 ? req / (e * p) : 1;
        s.m = per % 4 == 0 ? 4 : per % 2 == 0 ? 2 : 1;
        s.cols = per / s.m;
        s.rows = p * s.m;
        s.count = s.rows * s.cols;
        break;
    default:
        break;
    }
    s.bytes = s.count * e;
    *out = s;
}

double bench_busbw_factor(bench_coll c, int p)
{
    double pp = p;
    switch (c) {
    case BENCH_ALLREDUCE:
        return 2.0 * (pp - 1) / pp;
    case BENCH_ALLGATHER:
    case BENCH_REDUCE_SCATTER:
    case BENCH_ALL_TO_ALL:
    case BENCH_ALL_TO_ALL_V:
        return (pp - 1) / pp;
    case BENCH_BROADCAST:
        return 1.0;
    default:
        return 0.0;
    }
}

void bench_table_header(FILE *out, int extended)
{
    fprintf(out, "#%11s  %12s  %6s  %5s  %4s  %10s  %7s  %7s  %6s", "size", "count", "type",
            "redop", "root", "time", "algbw", "busbw", "#wrong");
    if (extended)
        fprintf(out, "  %6s  %7s  %12s  %12s   %12s", "%peak", "memcpy", "peer bytes", "card",
                "self bytes");
    fprintf(out, "\n#%11s  %12s  %6s  %5s  %4s  %10s  %7s  %7s  %6s", "(B)", "(elements)", "", "",
            "", "(us)", "(GB/s)", "(GB/s)", "");
    if (extended)
        fprintf(out, "  %6s  %7s  %12s  %12s   %12s", "", "(GB/s)", "(B/rank)", "(B/rank)",
                "(B/rank)");
    fprintf(out, "\n");
}

void bench_table_row(FILE *out, const bench_row *r, int extended)
{
    char root[16], wrong[24], algbw[16], busbw[16];
    snprintf(root, sizeof root, "%d", r->root);
    if (r->wrong < 0)
        snprintf(wrong, sizeof wrong, "-");
    else
        snprintf(wrong, sizeof wrong, "%lld", (long long)r->wrong);
    if (r->bytes > 0) {
        snprintf(algbw, sizeof algbw, "%.2f", r->algbw);
        snprintf(busbw, sizeof busbw, "%.2f", r->busbw);
    } else {
        snprintf(algbw, sizeof algbw, "n/a");
        snprintf(busbw, sizeof busbw, "n/a");
    }
    fprintf(out, "%12lld  %12lld  %6s  %5s  %4s  %10.2f  %7s  %7s  %6s", (long long)r->bytes,
            (long long)r->count, r->type, r->redop, root, r->time_us, algbw, busbw, wrong);
    if (extended) {
        char peak[16];
        if (r->bytes > 0)
            snprintf(peak, sizeof peak, "%.1f", r->peak_pct);
        else
            snprintf(peak, sizeof peak, "n/a");
        fprintf(out, "  %6s  %7.1f  %12llu  %12llu%c  %12llu", peak, r->memcpy_gbs,
                (unsigned long long)r->peer_bytes, (unsigned long long)r->card_bytes,
                r->card_ok ? ' ' : '!', (unsigned long long)r->self_bytes);
    }
    fprintf(out, "\n");
}

void bench_csv_header(FILE *out)
{
    fprintf(out,
            "tool,collective,mode,transport,P,size,count,type,redop,root,time_us,algbw_gbs,"
            "busbw_gbs,wrong,peak_pct,memcpy_gbs,peer_bytes,card_bytes,self_bytes,card_ok,team,"
            "groups,place\n");
}

void bench_csv_row(FILE *out, const char *tool, const char *coll, const char *mode,
                   const char *transport, int p, const bench_row *r, int extended)
{
    fprintf(out, "%s,%s,%s,%s,%d,%lld,%lld,%s,%s,%d,%.3f,%.4f,%.4f,", tool, coll, mode, transport,
            p, (long long)r->bytes, (long long)r->count, r->type, r->redop, r->root, r->time_us,
            r->algbw, r->busbw);
    if (r->wrong >= 0)
        fprintf(out, "%lld", (long long)r->wrong);
    if (extended)
        fprintf(out, ",%.2f,%.2f,%llu,%llu,%llu,%d", r->peak_pct, r->memcpy_gbs,
                (unsigned long long)r->peer_bytes, (unsigned long long)r->card_bytes,
                (unsigned long long)r->self_bytes, r->card_ok);
    else
        fprintf(out, ",,,,,,");
    if (r->team)
        fprintf(out, ",%s,%d", r->team, r->groups);
    else
        fprintf(out, ",,");
    fprintf(out, ",%s\n", r->place ? r->place : "");
}

/* Column widths: nccl-tests' order, pld's precision. */
#define PAIR_LEAD "%12s  %12s  %6s  %6s  %6s"
#define PAIR_CELL "  %10s  %7s  %7s  %6s"
#define PAIR_EXT "  %6s  %6s  %7s  %12s  %13s  %12s"

void bench_pair_header(FILE *out)
{
    fprintf(out, "#%11s  %12s  %6s  %6s  %6s  %-34s  %-34s  %s\n", "", "", "", "", "",
            "            out-of-place", "              in-place", "  %peak (out, in)");
    fprintf(out, "#%11s  %12s  %6s  %6s  %6s" PAIR_CELL PAIR_CELL PAIR_EXT "\n", "size", "count",
            "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
            "#wrong", "%peak", "%peak", "memcpy", "peer bytes", "card", "self bytes");
    fprintf(out, "#%11s  %12s  %6s  %6s  %6s" PAIR_CELL PAIR_CELL PAIR_EXT "\n", "(B)",
            "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
            "", "(out)", "(in)", "(GB/s)", "(B/rank)", "(B/rank)", "(B/rank)");
}

static void pair_cell(FILE *out, const bench_cell *c, int64_t bytes)
{
    char t[24] = "N/A", a[24] = "N/A", b[24] = "N/A", w[24] = "N/A";
    if (c->present) {
        snprintf(t, sizeof t, "%.2f", c->time_us);
        if (bytes > 0) {
            snprintf(a, sizeof a, "%.2f", c->algbw);
            snprintf(b, sizeof b, "%.2f", c->busbw);
        }
        if (c->wrong >= 0)
            snprintf(w, sizeof w, "%lld", (long long)c->wrong);
    }
    fprintf(out, PAIR_CELL, t, a, b, w);
}

void bench_pair_print(FILE *out, const bench_pair *r)
{
    char size[24], count[24], root[16], pk[2][16], mc[16], peer[24], card[24], self[24];
    snprintf(size, sizeof size, "%lld", (long long)r->bytes);
    snprintf(count, sizeof count, "%lld", (long long)r->count);
    snprintf(root, sizeof root, "%d", r->root);
    fprintf(out, PAIR_LEAD, size, count, r->type, r->redop, root);
    pair_cell(out, &r->cell[BENCH_OUT_OF_PLACE], r->bytes);
    pair_cell(out, &r->cell[BENCH_IN_PLACE], r->bytes);
    for (int g = 0; g < 2; g++)
        if (r->cell[g].present && r->bytes > 0)
            snprintf(pk[g], sizeof pk[g], "%.1f", r->cell[g].peak_pct);
        else
            snprintf(pk[g], sizeof pk[g], "N/A");
    snprintf(mc, sizeof mc, "%.1f", r->memcpy_gbs);
    snprintf(peer, sizeof peer, "%llu", (unsigned long long)r->peer_bytes);
    snprintf(card, sizeof card, "%llu%c", (unsigned long long)r->card_bytes,
             r->card_ok ? ' ' : '!');
    snprintf(self, sizeof self, "%llu", (unsigned long long)r->self_bytes);
    fprintf(out, PAIR_EXT "\n", pk[0], pk[1], mc, peer, card, self);
}

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
