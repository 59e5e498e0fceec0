/* SPDX-License-Identifier: Apache-2.0 */
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
 * those ranks to <trace>.rank<first> instead, with the rank as its process
 * id: processes on other machines cannot share one file. At finalize rank
 * 0 merges those files into <trace> when it can read them all (a shared
 * filesystem); elsewhere `pld trace merge` does (src/trace/trace_merge.c).
 *
 * Every track is named: "rank R (device D)" and "rank R (device D) core B".
 * A traced notify records the cell it changed and the value it left, a
 * wait that blocked the cell and the value it read: after each launch the
 * host draws a flow arrow from each such wait's notify to it
 * (trace_merge.c says how they are paired, and where that is approximate). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/team.h"
#include "trace/trace.h"
#include "trace/trace_merge.h"

typedef struct pld__trace_ev {
    const char *name; /* static string: the public call */
    uint64_t t0, t1;  /* ns, CLOCK_MONOTONIC (the same clock in every process) */
    int64_t bytes;    /* payload, or -1 */
    int64_t urma[6];  /* urma.send: peer, rows, SQEs, WQEBBs, NOPs, doorbells */
    double pred_us;   /* a choice of PLD_AUTO: its predicted time, else -1 */
    const char *team; /* the team of the view that made it (its name lives as
                         long as the world), or NULL */
    int team_rank;
    int flow;            /* -1, or 0 a notify, 1 a wait that blocked: */
    int32_t fwin, frank; /* the signal cell: window id, world rank, */
    int64_t fcell;       /* cell index, */
    int32_t fval;        /* and the value the notify left or the wait read */
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

/* Appends a complete event ending now; NULL when there is no trace or no
 * memory for it (a trace with a gap beats a failed kernel). */
static pld__trace_ev *append(pld_ctx *c, const char *name, uint64_t t0, int64_t bytes)
{
    pld__trace_buf *b = c->trace;
    if (!b)
        return NULL;
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        pld__trace_ev *grown = realloc(b->ev, sizeof *grown * cap);
        if (!grown)
            return NULL;
        b->ev = grown;
        b->cap = cap;
    }
    pld__trace_ev *e = &b->ev[b->n++];
    *e = (pld__trace_ev){.name = name,
                         .t0 = t0,
                         .t1 = pld__now_ns(),
                         .bytes = bytes,
                         .urma = {-1},
                         .pred_us = -1,
                         .team = c->team ? c->team->name : NULL,
                         .team_rank = c->rank,
                         .flow = -1};
    return e;
}

void pld__trace_end(pld_ctx *c, const char *name, uint64_t t0, int64_t bytes)
{
    append(c, name, t0, bytes);
}

void pld__trace_signal(pld_ctx *c, const char *name, uint64_t t0, int kind,
                       const pld_window_buffer *buf, int wrank, size_t off, int32_t value)
{
    pld__trace_ev *e = append(c, name, t0, -1);
    if (e) {
        e->flow = kind;
        e->fwin = buf->id;
        e->frank = wrank;
        e->fcell = (int64_t)(off / sizeof(int32_t));
        e->fval = value;
    }
}

void pld__trace_urma(pld_ctx *c, int peer, int64_t rows, int64_t sqes, int64_t wqebbs, int64_t nops,
                     int64_t doorbells, uint64_t t0)
{
    pld__trace_ev *e = append(c, "urma.send", t0, -1);
    if (e) {
        int64_t *u = e->urma;
        u[0] = peer, u[1] = rows, u[2] = sqes, u[3] = wqebbs, u[4] = nops, u[5] = doorbells;
    }
}

void pld__trace_choice(pld_ctx *c, const char *name, double predicted_us)
{
    pld__trace_ev *e = append(c, name, c->trace ? pld__now_ns() : 0, -1);
    if (e)
        e->pred_us = predicted_us;
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

/* The trace's process id of a rank: 0 in a trace of every rank, the rank
 * in a per-rank file, so a merge of those has one process per rank. */
static int trace_pid(const pld_world *w, int wrank)
{
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    return count == w->nranks ? 0 : wrank;
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
    int pid = trace_pid(c->w, c->wrank);
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
        fprintf(f, "\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f", pid, tid,
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
        if (e->pred_us >= 0) {
            fprintf(f, "%s\"predicted_us\":%.3f", sep, e->pred_us);
            sep = ",";
        }
        if (e->flow >= 0) { /* last in args: trace_merge.c reads it */
            fprintf(f, "%s\"flow\":[%d,%d,%d,%" PRId64 ",%d]", sep, e->flow, (int)e->fwin,
                    (int)e->frank, e->fcell, (int)e->fval);
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
    if (count == w->nranks) {
        fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"pld\"}}",
              out);
    } else { /* one process per rank; the run id tells rank 0's merge this run's files */
        char host[256];
        if (gethostname(host, sizeof host) != 0)
            snprintf(host, sizeof host, "unknown");
        host[sizeof host - 1] = '\0';
        fprintf(out,
                "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank %d "
                "(",
                first, first);
        put_json_text(out, host);
        fprintf(out, ")\",\"run\":\"%016" PRIx64 "\"}}", w->trace_run);
        fprintf(out,
                ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,"
                "\"args\":{\"sort_index\":%d}}",
                first, first);
    }
    for (int r = first; r < first + count; r++) {
        int pid = trace_pid(w, r), cores = w->profile.aiv_cores;
        fprintf(out,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                "\"args\":{\"name\":\"rank %d (device %d)\"}}",
                pid, r * 1000, r, w->device_ids[r]);
        /* the other cores' tracks, once they have events */
        for (int b = 1; w->trace_cores && b < cores; b++)
            if (w->trace_cores[(size_t)r * (size_t)cores + (size_t)b])
                fprintf(out,
                        ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                        "\"args\":{\"name\":\"rank %d (device %d) core %d\"}}",
                        pid, r * 1000 + b, r, w->device_ids[r], b);
    }
    if (w->trace_len)
        fwrite(w->trace_text, 1, w->trace_len, out);
    fputs("\n]}\n", out);
    return finish(out);
}

pld_status pld__trace_world_ready(pld_world *w)
{
    if (!w->trace_path)
        return PLD_OK;
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    if (count < w->nranks) {
        /* rank 0's run id, to every process (an OR where only rank 0
         * contributes): rank 0's merge takes only files with this id, not
         * a previous run's left on a disk it shares with some ranks only */
        unsigned char id[8] = {0};
        if (first == 0) {
            uint64_t v = pld__now_ns() ^ ((uint64_t)getpid() << 32);
            memcpy(id, &v, sizeof id);
        }
        if (w->tp->host_union(w, id, sizeof id) != 0)
            return pld__init_fail(PLD_ERR_SYSTEM, "pld_world_init: the trace's run id could "
                                                  "not be shared between the processes");
        memcpy(&w->trace_run, id, sizeof id);
    }
    /* find out now, not after the first launch: an empty trace (valid
     * JSON) in place of the file, and a probe of the part files beside it */
    char path[4096];
    out_path(w, path, sizeof path);
    int err = write_trace(w, path);
    if (err)
        return pld__init_fail(PLD_ERR_ARG, "pld_world_init: trace file '%s' cannot be written: %s",
                              path, strerror(err));
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

/* 1 when the per-rank file of rank r is this run's (rank 0 can read it). */
static int rank_file_ready(const pld_world *w, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char head[1024], want[64];
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    snprintf(want, sizeof want, "\"run\":\"%016" PRIx64 "\"", w->trace_run);
    return strstr(head, want) != NULL;
}

void pld__trace_world_end(pld_world *w)
{
    int first, count;
    if (w->trace_path && (w->tp->hosted_ranks(w, &first, &count), count < w->nranks)) {
        /* every process has written its last launch (collective) */
        w->tp->host_agree(w, w->trace_run);
        char **ins = first == 0 ? calloc((size_t)w->nranks, sizeof *ins) : NULL;
        int ready = ins != NULL;
        for (int r = 0; ready && r < w->nranks; r++) {
            char path[4096];
            snprintf(path, sizeof path, "%s.rank%d", w->trace_path, r);
            ready = rank_file_ready(w, path) && (ins[r] = strdup(path)) != NULL;
        }
        if (first == 0) {
            char err[PLD__ERRMSG_MAX / 2];
            if (!ready)
                PLD__LOGS(PLD__LOG_INFO, PLD__SUB_INIT, -1,
                          "trace: the per-rank files %s.rank<N> are not all readable here (no "
                          "shared filesystem?): merge them with 'pld trace merge %s %s.rank*'",
                          w->trace_path, w->trace_path, w->trace_path);
            else if (pld__trace_merge(w->trace_path, (const char *const *)ins, w->nranks, err,
                                      sizeof err) != 0)
                PLD__LOGS(PLD__LOG_WARN, PLD__SUB_INIT, -1, "trace: merging the ranks: %s", err);
            for (int r = 0; ins && r < w->nranks; r++)
                free(ins[r]);
            free(ins);
        }
    }
    free(w->trace_cores);
    w->trace_cores = NULL;
}

/* The flow arrows of this launch's events (trace_text from start on),
 * added to the running text; -1 when out of memory. */
static int append_flows(pld_world *w, size_t start)
{
    char *flows = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&flows, &len);
    if (!m)
        return -1;
    if (!w->trace_flow_id)
        w->trace_flow_id = 1;
    long pairs =
        pld__trace_flows(w->trace_text + start, w->trace_len - start, &w->trace_flow_id, m);
    if (fclose(m) != 0 || pairs < 0) {
        free(flows);
        return -1;
    }
    int rc = 0;
    if (len && w->trace_len + len + 1 > w->trace_cap) {
        size_t cap = w->trace_cap;
        while (cap < w->trace_len + len + 1)
            cap *= 2;
        char *grown = realloc(w->trace_text, cap);
        if (!grown)
            rc = -1;
        else
            w->trace_text = grown, w->trace_cap = cap;
    }
    if (!rc && len) {
        memcpy(w->trace_text + w->trace_len, flows, len);
        w->trace_len += len;
    }
    free(flows);
    return rc;
}

/* Host, after a launch: fold the parts into the running event text and
 * rewrite the trace file. */
pld_status pld__trace_flush(pld_world *w, pld_status st)
{
    if (!w->trace_path)
        return st;
    char path[4096];
    int first, count, nomem = 0, cores = w->profile.aiv_cores;
    size_t start = w->trace_len; /* this launch's events begin here */
    w->tp->hosted_ranks(w, &first, &count);
    if (!w->trace_cores)
        w->trace_cores = calloc((size_t)w->nranks * (size_t)cores, 1);
    for (int r = first; r < first + count; r++) {
        for (int b = 0; b < cores; b++) {
            part_path(w, r, b, path, sizeof path);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            if (w->trace_cores) /* (without it, core tracks go unnamed) */
                w->trace_cores[(size_t)r * (size_t)cores + (size_t)b] = 1;
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
    if (!nomem && w->trace_len > start && append_flows(w, start) != 0)
        nomem = 1;
    out_path(w, path, sizeof path);
    int err = write_trace(w, path);
    char why[PLD__ERRMSG_MAX / 2];
    if (err)
        snprintf(why, sizeof why, "trace file '%s' cannot be written: %s", path, strerror(err));
    else if (nomem)
        snprintf(why, sizeof why, "out of memory merging the trace parts; '%s' lacks events", path);
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
