/* SPDX-License-Identifier: Apache-2.0 */
/* Flow arrows and the merge of per-rank traces (trace_merge.h).
 *
 * Pairing a wait with the notify that released it. Recording the pairing
 * as it happens would need a shared per-cell sequence number updated with
 * every notify -- a second atomic on the hot path and shared state the mpi
 * transport does not have. Instead each traced notify says which cell it
 * changed and the value it left there, each wait that blocked says which
 * cell it waited on and the value it then read (one extra load, only when
 * tracing), and the pairs are drawn afterwards, here: the wait's notify is
 * the latest notify on the same cell that started before the wait ended
 * and left the value the wait read; when none left exactly that value (a
 * later notify changed the cell before the wait read it back), the latest
 * notify on the cell before the wait ended. Approximations: a wait released
 * by several AtomicAdds together gets an arrow from the last of them only;
 * waits that found their value at once have no slice and no arrow; across
 * machines (mpi) the clocks of different hosts are compared as if they were
 * one. */
#include "trace_merge.h"
#include "text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct sig_ev {
    int64_t key[3]; /* window, rank, cell */
    int64_t val;
    double ts, end; /* microseconds, as in the file */
    long pid, tid;
} sig_ev;

/* The first occurrence of the key text k inside [p, end), or NULL. */
static const char *find(const char *p, const char *end, const char *k)
{
    size_t n = strlen(k);
    for (; p + n <= end; p++)
        if (*p == *k && !memcmp(p, k, n))
            return p;
    return NULL;
}

/* The number after key k in the object [p, end); 0 when absent. */
static int num(const char *p, const char *end, const char *k, double *out)
{
    const char *at = find(p, end, k);
    if (!at)
        return 0;
    char *stop;
    *out = strtod(at + strlen(k), &stop);
    return stop != at + strlen(k);
}

/* The end of the JSON object starting at p ('{'), strings respected; NULL
 * when it is cut off. */
static const char *object_end(const char *p, const char *end)
{
    int depth = 0, str = 0;
    for (; p < end; p++) {
        if (str) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                str = 0;
        } else if (*p == '"') {
            str = 1;
        } else if (*p == '{') {
            depth++;
        } else if (*p == '}' && --depth == 0) {
            return p + 1;
        }
    }
    return NULL;
}

/* Reads the flow record of the event [p, end): 0 notify, 1 wait, -1 none. */
static int flow_of(const char *p, const char *end, sig_ev *e)
{
    /* the record is the last key of the object's args: after any text the
     * user named (team names are escaped, so their quotes never match) */
    const char *at = find(p, end, "\"flow\":[");
    if (!at)
        return -1;
    long long v[5];
    char *q = (char *)at + 8;
    for (int i = 0; i < 5; i++) {
        char *stop;
        v[i] = strtoll(q, &stop, 10);
        if (stop == q || (i < 4 && *stop != ',') || (i == 4 && *stop != ']'))
            return -1;
        q = stop + 1;
    }
    double ts, dur, pid, tid;
    if (!num(p, end, "\"ts\":", &ts) || !num(p, end, "\"dur\":", &dur) ||
        !num(p, end, "\"pid\":", &pid) || !num(p, end, "\"tid\":", &tid))
        return -1;
    e->key[0] = v[1], e->key[1] = v[2], e->key[2] = v[3];
    e->val = v[4];
    e->ts = ts;
    e->end = ts + dur;
    e->pid = (long)pid;
    e->tid = (long)tid;
    return v[0] == 0 ? 0 : v[0] == 1 ? 1 : -1;
}

static int key_cmp(const sig_ev *a, const sig_ev *b)
{
    for (int i = 0; i < 3; i++)
        if (a->key[i] != b->key[i])
            return a->key[i] < b->key[i] ? -1 : 1;
    return 0;
}

static int by_key_ts(const void *pa, const void *pb)
{
    const sig_ev *a = pa, *b = pb;
    int k = key_cmp(a, b);
    if (k)
        return k;
    return (a->ts > b->ts) - (a->ts < b->ts);
}

typedef struct vec {
    sig_ev *v;
    size_t n, cap;
} vec;

static int push(vec *x, const sig_ev *e)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 256;
        sig_ev *g = realloc(x->v, cap * sizeof *g);
        if (!g)
            return -1;
        x->v = g;
        x->cap = cap;
    }
    x->v[x->n++] = *e;
    return 0;
}

/* A point inside the slice [ts, end] near its end: the flow binds to the
 * innermost slice around it, and the end is when the notify had landed and
 * the wait had been released. */
static double near_end(double ts, double end)
{
    double back = (end - ts) / 2 < 0.001 ? (end - ts) / 2 : 0.001;
    return end - back;
}

long pld__trace_flows(const char *text, size_t len, uint64_t *next_id, FILE *out)
{
    vec nt = {0}, wt = {0};
    const char *end = text + len;
    long pairs = -1;
    for (const char *p = text; p < end;) {
        const char *o = memchr(p, '{', (size_t)(end - p));
        const char *oe = o ? object_end(o, end) : NULL;
        if (!oe)
            break;
        sig_ev e;
        int k = flow_of(o, oe, &e);
        if ((k == 0 && push(&nt, &e)) || (k == 1 && push(&wt, &e)))
            goto out;
        p = oe;
    }
    pairs = 0;
    if (!nt.n)
        goto out;
    qsort(nt.v, nt.n, sizeof *nt.v, by_key_ts);
    for (size_t i = 0; i < wt.n; i++) {
        const sig_ev *w = &wt.v[i];
        /* the last notify on the cell that started before the wait ended */
        size_t lo = 0, hi = nt.n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            int k = key_cmp(&nt.v[mid], w);
            if (k < 0 || (k == 0 && nt.v[mid].ts <= w->end))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == 0 || key_cmp(&nt.v[lo - 1], w) != 0)
            continue; /* its notify is in no file here (or before the trace) */
        const sig_ev *n = &nt.v[lo - 1];
        /* prefer the one that left the value the wait read (a few back:
         * self-clearing credits bring the same values round again) */
        for (size_t j = lo, seen = 0; j-- > 0 && seen < 64 && !key_cmp(&nt.v[j], w); seen++)
            if (nt.v[j].val == w->val) {
                n = &nt.v[j];
                break;
            }
        uint64_t id = (*next_id)++;
        /* the arrow leaves the notify no later than it reaches the wait:
         * the cell changed somewhere inside the notify's slice */
        double f_ts = near_end(w->ts, w->end), s_ts = near_end(n->ts, n->end);
        if (s_ts > f_ts)
            s_ts = f_ts > n->ts ? f_ts : n->ts;
        fprintf(out,
                ",\n{\"name\":\"notify\",\"cat\":\"pld.signal\",\"ph\":\"s\",\"id\":%llu,"
                "\"pid\":%ld,\"tid\":%ld,\"ts\":%.3f}"
                ",\n{\"name\":\"notify\",\"cat\":\"pld.signal\",\"ph\":\"f\",\"bp\":\"e\","
                "\"id\":%llu,\"pid\":%ld,\"tid\":%ld,\"ts\":%.3f}",
                (unsigned long long)id, n->pid, n->tid, s_ts, (unsigned long long)id, w->pid,
                w->tid, f_ts);
        pairs++;
    }
out:
    free(nt.v);
    free(wt.v);
    return pairs;
}

/* ---- merge --------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    pld__text t = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (pld__text_add(&t, chunk, got)) {
            free(t.s);
            fclose(f);
            errno = ENOMEM;
            return NULL;
        }
    int bad = ferror(f);
    fclose(f);
    if (bad || !t.s) {
        free(t.s);
        errno = bad ? EIO : 0;
        if (!bad) { /* an empty file */
            *len = 0;
            return calloc(1, 1);
        }
        return NULL;
    }
    *len = t.n;
    return t.s;
}

/* 1 when meta (the whole text of metadata events, ",\n"-separated) holds
 * exactly this object already: every input names pid 0 "pld". */
static int has_object(const pld__text *meta, const char *o, size_t n)
{
    for (const char *p = meta->s; p && (p = find(p, meta->s + meta->n, "{")) != NULL; p++) {
        const char *e = object_end(p, meta->s + meta->n);
        if (!e)
            break;
        if ((size_t)(e - p) == n && !memcmp(p, o, n))
            return 1;
        p = e - 1;
    }
    return 0;
}

int pld__trace_merge(const char *out, const char *const *ins, int n, char *err, size_t errsz)
{
    pld__text meta = {0}, events = {0};
    int rc = -1;
    for (int i = 0; i < n; i++) {
        size_t len;
        char *s = slurp(ins[i], &len);
        if (!s) {
            snprintf(err, errsz, "'%s' cannot be read: %s", ins[i], strerror(errno ? errno : EIO));
            goto done;
        }
        const char *arr = find(s, s + len, "\"traceEvents\":[");
        if (!arr) {
            snprintf(err, errsz, "'%s' is not a trace: no \"traceEvents\" array", ins[i]);
            free(s);
            goto done;
        }
        const char *end = s + len;
        for (const char *p = arr + 15; p < end;) {
            while (p < end && *p != '{' && *p != ']')
                p++;
            if (p >= end || *p == ']')
                break;
            const char *oe = object_end(p, end);
            if (!oe) {
                snprintf(err, errsz, "'%s' is cut off: an event is not closed", ins[i]);
                free(s);
                goto done;
            }
            size_t on = (size_t)(oe - p);
            int nomem = 0;
            if (find(p, oe, "\"ph\":\"M\"")) {
                if (!has_object(&meta, p, on))
                    nomem =
                        (meta.n && pld__text_add(&meta, ",\n", 2)) || pld__text_add(&meta, p, on);
            } else if (!find(p, oe, "\"ph\":\"s\"") && !find(p, oe, "\"ph\":\"f\"")) {
                /* (the inputs' arrows are drawn again across all of them) */
                nomem = pld__text_add(&events, ",\n", 2) || pld__text_add(&events, p, on);
            }
            if (nomem) {
                snprintf(err, errsz, "out of memory merging '%s'", ins[i]);
                free(s);
                goto done;
            }
            p = oe;
        }
        free(s);
    }
    FILE *f = fopen(out, "w");
    if (!f) {
        snprintf(err, errsz, "'%s' cannot be written: %s", out, strerror(errno));
        goto done;
    }
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
    if (meta.n)
        fwrite(meta.s, 1, meta.n, f);
    /* events follow with a leading ",\n": with no metadata, the first
     * event's separator goes */
    if (events.n)
        fwrite(events.s + (meta.n ? 0 : 2), 1, events.n - (meta.n ? 0 : 2), f);
    uint64_t id = 1;
    long pairs = pld__trace_flows(events.s ? events.s : "", events.n, &id, f);
    fputs("\n]}\n", f);
    int werr = ferror(f);
    if (fclose(f) != 0 || werr) {
        snprintf(err, errsz, "'%s' cannot be written: %s", out, strerror(errno ? errno : EIO));
        goto done;
    }
    if (pairs < 0) {
        snprintf(err, errsz, "out of memory drawing the flow arrows of '%s'", out);
        goto done;
    }
    rc = 0;
done:
    free(meta.s);
    free(events.s);
    return rc;
}
