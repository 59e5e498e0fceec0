/* Chrome / Perfetto trace export (PLD_TRACE=file.json or cfg.trace_path).
 *
 * Every agent (a core of a rank) records one complete event per primitive
 * and one enclosing event per builtin call, in its own buffer: no sharing,
 * no locks on the hot path. When the agent's kernel ends it writes its
 * events to a part file next to the trace (a core thread lives for one
 * multi-core call, so the second call's core b appends to the part file the
 * first call's core b wrote); after the launch the host folds
 * the parts into its running list and rewrites the JSON file, so the trace
 * is complete after every launch and works for ranks in other processes.
 * A process that hosts only some ranks (one, under mpi) writes the events of
 * those ranks to <trace>.rank<first> instead: processes on other machines
 * cannot share one file. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/team.h"
#include "trace/trace.h"

typedef struct pld__trace_ev {
    const char *name;     /* static string: the public call */
    uint64_t t0, t1;      /* ns, CLOCK_MONOTONIC (the same clock in every process) */
    int64_t bytes;        /* payload, or -1 */
    int64_t urma[6];      /* urma.send: peer, rows, SQEs, WQEBBs, NOPs, doorbells */
    const char *team;     /* the team of the view that made it (its name lives as
                             long as the world), or NULL */
    int team_rank;
} pld__trace_ev;

struct pld__trace_buf {
    pld__trace_ev *ev;
    size_t n, cap;
    int append; /* the part file already holds events of this launch: add to them */
    /* a rank's (core 0's) buffer: seen[b] once core b of a multi-core call
     * of this launch was given a buffer, so the next call's core b appends */
    unsigned char *seen;
    int nseen;
};

uint64_t pld__trace_begin(const pld_ctx *c)
{
    return c->trace ? pld__now_ns() : 0;
}

void pld__trace_end(pld_ctx *c, const char *name, uint64_t t0, int64_t bytes)
{
    pld__trace_buf *b = c->trace;
    if (!b)
        return;
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        pld__trace_ev *grown = realloc(b->ev, sizeof *grown * cap);
        if (!grown)
            return; /* a trace with a gap beats a failed kernel */
        b->ev = grown;
        b->cap = cap;
    }
    b->ev[b->n++] = (pld__trace_ev){.name = name, .t0 = t0, .t1 = pld__now_ns(), .bytes = bytes,
                                    .urma = {-1}, .team = c->team ? c->team->name : NULL,
                                    .team_rank = c->rank};
}

static const char urma_send[] = "urma.send";

void pld__trace_urma(pld_ctx *c, int peer, int64_t rows, int64_t sqes, int64_t wqebbs,
                     int64_t nops, int64_t doorbells, uint64_t t0)
{
    pld__trace_buf *b = c->trace;
    if (!b)
        return;
    pld__trace_end(c, urma_send, t0, -1);
    if (b->n && b->ev[b->n - 1].name == urma_send) { /* appended (not out of memory) */
        int64_t *u = b->ev[b->n - 1].urma;
        u[0] = peer, u[1] = rows, u[2] = sqes, u[3] = wqebbs, u[4] = nops, u[5] = doorbells;
    }
}

pld__trace_buf *pld__trace_open(void)
{
    return calloc(1, sizeof(pld__trace_buf));
}

pld__trace_buf *pld__trace_open_core(pld__trace_buf *rank_buf, int core)
{
    pld__trace_buf *b = pld__trace_open();
    if (!b)
        return NULL;
    if (core >= rank_buf->nseen) {
        int n = core + 1;
        unsigned char *grown = realloc(rank_buf->seen, (size_t)n);
        if (!grown) {
            b->append = 1; /* unknown: keep whatever the file holds rather than lose it */
            return b;
        }
        memset(grown + rank_buf->nseen, 0, (size_t)(n - rank_buf->nseen));
        rank_buf->seen = grown;
        rank_buf->nseen = n;
    }
    b->append = rank_buf->seen[core];
    rank_buf->seen[core] = 1;
    return b;
}

static void part_path(const pld_world *w, int rank, int core, char *out, size_t n)
{
    snprintf(out, n, "%s.part.%d.%d", w->trace_path, rank, core);
}

/* 0 once everything written reached the file, else the errno of the
 * first failure (a full disk shows only at fclose). Closes f. */
static int finish(FILE *f)
{
    int err = ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    return err;
}

/* A user-chosen name (a team's) inside a JSON string. */
static void put_json_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
}

/* Writes the agent's events to its part file; the errno of a failure. */
static int write_part(pld_ctx *c, const pld__trace_buf *b, const char *path)
{
    /* the first writer of a launch truncates: a part file the host did not
     * fold (a run killed mid-launch) must not leak into this trace */
    FILE *f = fopen(path, b->append ? "a" : "w");
    if (!f)
        return errno;
    errno = 0;
    /* tid = rank * 1000 + core: one track per rank (and per core) */
    int tid = c->wrank * 1000 + c->core;
    for (size_t i = 0; i < b->n; i++) {
        const pld__trace_ev *e = &b->ev[i];
        /* a team view's slices carry the team in the name and the args: one
         * track per rank, whichever groups it works in */
        fprintf(f, ",\n{\"name\":\"%s", e->name);
        if (e->team) {
            fputs(" [", f);
            put_json_text(f, e->team);
            fputc(']', f);
        }
        fprintf(f, "\",\"ph\":\"X\",\"pid\":0,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f", tid,
                (double)e->t0 / 1e3, (double)(e->t1 - e->t0) / 1e3);
        const char *sep = ",\"args\":{";
        if (e->team) {
            fprintf(f, "%s\"team\":\"", sep);
            put_json_text(f, e->team);
            fprintf(f, "\",\"team_rank\":%d", e->team_rank);
            sep = ",";
        }
        if (e->bytes >= 0) {
            fprintf(f, "%s\"bytes\":%" PRId64, sep, e->bytes);
            sep = ",";
        } else if (e->urma[0] >= 0) {
            fprintf(f,
                    "%s\"peer\":%" PRId64 ",\"rows\":%" PRId64 ",\"sqes\":%" PRId64
                    ",\"wqebbs\":%" PRId64 ",\"nops\":%" PRId64 ",\"doorbells\":%" PRId64
                    ",\"cqes\":1",
                    sep, e->urma[0], e->urma[1], e->urma[2], e->urma[3], e->urma[4], e->urma[5]);
            sep = ",";
        }
        if (sep[0] == ',' && sep[1] == '\0')
            fputc('}', f); /* closes args */
        fputc('}', f);
    }
    return finish(f);
}

void pld__trace_close(pld_ctx *c)
{
    pld__trace_buf *b = c->trace;
    if (!b)
        return;
    char path[4096];
    part_path(c->w, c->wrank, c->core, path, sizeof path);
    int err = write_part(c, b, path);
    if (err) {
        /* the kernel has ended, so no pld__kraise: the launch fails the way
         * a rank's error does (first failure wins, as always) */
        char msg[PLD__ERRMSG_MAX], who[32] = "";
        if (c->core > 0)
            snprintf(who, sizeof who, " core %d", c->core);
        snprintf(msg, sizeof msg,
                 "rank %d (device %d)%s: pld_launch: trace part file '%s' cannot be written: %s",
                 c->wrank, c->device, who, path, strerror(err));
        PLD__LOGS(PLD__LOG_WARN, PLD__SUB_INIT, c->wrank, "%s", msg);
        pld__group_fail(c->w, PLD_ERR_SYSTEM, msg);
    }
    free(b->ev);
    free(b->seen);
    free(b);
    c->trace = NULL;
}

/* The file this process writes: the trace, or <trace>.rank<first> when it
 * hosts only some of the ranks. */
static void out_path(const pld_world *w, char *out, size_t n)
{
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    if (count == w->nranks)
        snprintf(out, n, "%s", w->trace_path);
    else
        snprintf(out, n, "%s.rank%d", w->trace_path, first);
}

/* Rewrites the whole trace file from the running event text; the errno of
 * a failure. */
static int write_trace(const pld_world *w, const char *path)
{
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    FILE *out = fopen(path, "w");
    if (!out)
        return errno;
    errno = 0;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out);
    fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"pld\"}}", out);
    for (int r = first; r < first + count; r++)
        fprintf(out,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,"
                "\"args\":{\"name\":\"rank %d (device %d)\"}}",
                r * 1000, r, w->device_ids[r]);
    if (w->trace_len)
        fwrite(w->trace_text, 1, w->trace_len, out);
    fputs("\n]}\n", out);
    return finish(out);
}

pld_status pld__trace_world_ready(pld_world *w)
{
    if (!w->trace_path)
        return PLD_OK;
    /* find out now, not after the first launch: an empty trace (valid
     * JSON) in place of the file, and a probe of the part files beside it */
    char path[4096];
    out_path(w, path, sizeof path);
    int err = write_trace(w, path);
    if (err)
        return pld__init_fail(PLD_ERR_ARG, "pld_world_init: trace file '%s' cannot be written: %s",
                              path, strerror(err));
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    part_path(w, first, 0, path, sizeof path);
    FILE *f = fopen(path, "w");
    err = f ? finish(f) : errno;
    if (f)
        unlink(path);
    if (err)
        return pld__init_fail(PLD_ERR_ARG,
                              "pld_world_init: trace part file '%s' (written next to the trace "
                              "by every rank) cannot be written: %s",
                              path, strerror(err));
    return PLD_OK;
}

/* Host, after a launch: fold the parts into the running event text and
 * rewrite the trace file. */
pld_status pld__trace_flush(pld_world *w, pld_status st)
{
    if (!w->trace_path)
        return st;
    char path[4096];
    int first, count, nomem = 0;
    w->tp->hosted_ranks(w, &first, &count);
    for (int r = first; r < first + count; r++) {
        for (int b = 0; b < w->profile.aiv_cores; b++) {
            part_path(w, r, b, path, sizeof path);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            char chunk[65536];
            size_t got;
            while (!nomem && (got = fread(chunk, 1, sizeof chunk, f)) > 0) {
                if (w->trace_len + got + 1 > w->trace_cap) {
                    size_t cap = w->trace_cap ? w->trace_cap : 65536;
                    while (cap < w->trace_len + got + 1)
                        cap *= 2;
                    char *grown = realloc(w->trace_text, cap);
                    if (!grown) {
                        nomem = 1;
                        break;
                    }
                    w->trace_text = grown;
                    w->trace_cap = cap;
                }
                memcpy(w->trace_text + w->trace_len, chunk, got);
                w->trace_len += got;
            }
            fclose(f);
            unlink(path);
        }
    }
    out_path(w, path, sizeof path);
    int err = write_trace(w, path);
    char why[PLD__ERRMSG_MAX / 2];
    if (err)
        snprintf(why, sizeof why, "trace file '%s' cannot be written: %s", path, strerror(err));
    else if (nomem)
        snprintf(why, sizeof why, "out of memory merging the trace parts; '%s' lacks events",
                 path);
    else
        return st;
    if (st != PLD_OK) { /* the launch's own failure stays the status */
        size_t k = strlen(w->errmsg);
        snprintf(w->errmsg + k, sizeof w->errmsg - k, " [%s]", why);
        PLD__LOGS(PLD__LOG_WARN, PLD__SUB_INIT, -1, "%s", why);
        return st;
    }
    return pld__world_fail(w, err ? PLD_ERR_SYSTEM : PLD_ERR_NOMEM, "pld_launch: %s", why);
}
