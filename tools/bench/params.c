/* SPDX-License-Identifier: Apache-2.0 */
/* The parameter file of `pld cost --params` and the projection of the cost
 * cards onto the machine it describes: see params.h. */
#include "params.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARAMS_TAG "pld_params"
#define PARAMS_VERSION 1
#define PARAMS_LINE_MAX 512
#define PROJ_MAX_RANKS 65536 /* the most PLD_MAX_RANKS allows a world */
#define AUTO_FANOUT 16       /* PLD_TREE_FANOUT=auto while every rank has a CPU */
#define LL_MAX_RANKS 64      /* the one-round path's largest group */
#define LL_DEFAULT 4096      /* PLD_LL_BYTES unset */
#define LL_SETTING_MAX 65536 /* the most PLD_LL_BYTES takes */
#define LL_INBOX 262144      /* a rank's inboxes, both parities */

/* ---- the parameter file ------------------------------------------------ */

enum { K_RANKS, K_CPUS, K_INTRA_ALPHA, K_INTER_ALPHA, K_INTRA_BETA, K_INTER_BETA, K_OVERHEAD, NK };

static const struct key {
    const char *name;
    int integer, required;
    const char *what; /* for messages: the unit and range */
} keys[NK] = {
    [K_RANKS] = {"ranks_per_node", 1, 1, "a whole number of ranks from 1 to 65536"},
    [K_CPUS] = {"cpus_per_node", 1, 0, "a whole number of CPUs from 1 to 65536"},
    [K_INTRA_ALPHA] = {"intra_alpha_us", 0, 1, "a number of microseconds >= 0"},
    [K_INTER_ALPHA] = {"inter_alpha_us", 0, 1, "a number of microseconds >= 0"},
    [K_INTRA_BETA] = {"intra_beta_ns_per_byte", 0, 1, "a number of nanoseconds per byte >= 0"},
    [K_INTER_BETA] = {"inter_beta_ns_per_byte", 0, 1, "a number of nanoseconds per byte >= 0"},
    [K_OVERHEAD] = {"message_overhead_us", 0, 1, "a number of microseconds >= 0"},
};

static int fail(char *msg, size_t msgsz, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int fail(char *msg, size_t msgsz, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msgsz, fmt, ap);
    va_end(ap);
    return -1;
}

/* The value as a number of the key's kind: 0 and *out, or -1. A whole
 * string, finite, not negative; integers 1 to 65536. */
static int key_value(const struct key *k, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v) || v < 0)
        return -1;
    if (k->integer && (v != floor(v) || v < 1 || v > PROJ_MAX_RANKS))
        return -1;
    *out = v;
    return 0;
}

/* Splits a line (comment cut off) into at most 3 whitespace-separated
 * words; returns how many there were (3 meaning 3 or more). */
static int words(char *line, char *w[3])
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    int n = 0;
    for (char *t = strtok(line, " \t\r\n"); t && n < 3; t = strtok(NULL, " \t\r\n"))
        w[n++] = t;
    return n;
}

/* Line 1: "pld_params 1". */
static int check_tag(const char *path, char *line, char *msg, size_t msgsz)
{
    char copy[PARAMS_LINE_MAX], *w[3];
    snprintf(copy, sizeof copy, "%s", line);
    copy[strcspn(copy, "\r\n")] = '\0';
    int n = words(line, w);
    if (n != 2 || strcmp(w[0], PARAMS_TAG))
        return fail(msg, msgsz,
                    "%s:1: the first line is '%s'; a parameter file starts with '%s %d'", path,
                    copy, PARAMS_TAG, PARAMS_VERSION);
    if (strcmp(w[1], "1"))
        return fail(msg, msgsz, "%s:1: format version '%s'; this pld reads version %d", path, w[1],
                    PARAMS_VERSION);
    return 0;
}

/* One `key value` line into v[]; line_of[] remembers where each key was. */
static int key_line(const char *path, int ln, char *line, double v[NK], int line_of[NK], char *msg,
                    size_t msgsz)
{
    char *w[3];
    int n = words(line, w);
    if (n == 0)
        return 0;
    int k = 0;
    while (k < NK && strcmp(w[0], keys[k].name))
        k++;
    if (k == NK)
        return fail(msg, msgsz,
                    "%s:%d: unknown key '%s' (value '%s'); the keys are ranks_per_node, "
                    "cpus_per_node, intra_alpha_us, inter_alpha_us, intra_beta_ns_per_byte, "
                    "inter_beta_ns_per_byte, message_overhead_us",
                    path, ln, w[0], n > 1 ? w[1] : "");
    if (n != 2)
        return fail(msg, msgsz, "%s:%d: %s takes one value, not %s", path, ln, w[0],
                    n < 2 ? "none" : "several");
    if (line_of[k])
        return fail(msg, msgsz, "%s:%d: %s '%s': given twice (first on line %d)", path, ln, w[0],
                    w[1], line_of[k]);
    if (key_value(&keys[k], w[1], &v[k]))
        return fail(msg, msgsz, "%s:%d: %s '%s' is not %s", path, ln, w[0], w[1], keys[k].what);
    line_of[k] = ln;
    return 0;
}

/* Every required key given (cpus_per_node has a default: fill). */
static int check_complete(const char *path, int lines, const int line_of[NK], char *msg,
                          size_t msgsz)
{
    for (int k = 0; k < NK; k++)
        if (keys[k].required && !line_of[k])
            return fail(msg, msgsz,
                        "%s:%d: end of file, and no %s (%s): every key but %s is "
                        "required",
                        path, lines, keys[k].name, keys[k].what, keys[K_CPUS].name);
    return 0;
}

static void fill(const double v[NK], const int line_of[NK], proj_params *out)
{
    out->ranks_per_node = (int)v[K_RANKS];
    out->cpus_per_node = line_of[K_CPUS] ? (int)v[K_CPUS] : out->ranks_per_node;
    out->alpha_us[PROJ_INTRA] = v[K_INTRA_ALPHA];
    out->alpha_us[PROJ_INTER] = v[K_INTER_ALPHA];
    out->beta_ns[PROJ_INTRA] = v[K_INTRA_BETA];
    out->beta_ns[PROJ_INTER] = v[K_INTER_BETA];
    out->overhead_us = v[K_OVERHEAD];
}

/* Reads the lines of an open file: the tag, then `key value` lines. */
static int read_lines(const char *path, FILE *f, proj_params *out, char *msg, size_t msgsz)
{
    char line[PARAMS_LINE_MAX];
    double v[NK] = {0};
    int line_of[NK] = {0}, ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        if (!strchr(line, '\n') && !feof(f))
            return fail(msg, msgsz, "%s:%d: line longer than %d characters", path, ln,
                        PARAMS_LINE_MAX - 2);
        int rc = ln == 1 ? check_tag(path, line, msg, msgsz)
                         : key_line(path, ln, line, v, line_of, msg, msgsz);
        if (rc)
            return rc;
    }
    if (ferror(f))
        return fail(msg, msgsz, "%s:%d: read error: %s", path, ln, strerror(errno));
    if (ln == 0)
        return fail(msg, msgsz, "%s:1: empty file; a parameter file starts with '%s %d'", path,
                    PARAMS_TAG, PARAMS_VERSION);
    if (check_complete(path, ln, line_of, msg, msgsz))
        return -1;
    fill(v, line_of, out);
    return 0;
}

int proj_params_load(const char *path, proj_params *out, char *msg, size_t msgsz)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(msg, msgsz, "%s: %s", path, strerror(errno));
    int rc = read_lines(path, f, out, msg, msgsz);
    fclose(f);
    return rc;
}

/* ---- what a world would take from its configuration -------------------- */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* One id: 1 and *out, 0 when there is no digit, -1 when it is too large. */
static int device_id(const char **s, long *out)
{
    if (!isdigit((unsigned char)**s))
        return 0;
    char *end;
    errno = 0;
    *out = strtol(*s, &end, 10);
    *s = end;
    return errno == ERANGE || *out > 2147483647L ? -1 : 1;
}

/* Appends lo..hi to ids; -1 when the list grows beyond PROJ_MAX_RANKS. */
static int add_range(int *ids, int *n, long lo, long hi)
{
    if (hi - lo + 1 > PROJ_MAX_RANKS - *n)
        return -1;
    for (long d = lo; d <= hi; d++)
        ids[(*n)++] = (int)d;
    return 0;
}

/* The ranges of the list into ids (the grammar of pld_config.devices). */
static int parse_ranges(const char *list, int *ids, int *n, char *msg, size_t msgsz)
{
    const char *s = list;
    for (;;) {
        long lo = 0, hi = 0;
        int got = device_id(&s, &lo);
        hi = lo;
        if (got > 0 && *s == '-') {
            s++;
            got = device_id(&s, &hi);
        }
        if (got <= 0 || hi < lo || (*s && *s != ','))
            return fail(msg, msgsz,
                        "bad device list '%s' at position %d (expected ids like '0,1', '0-3' "
                        "or '4,5', ascending ranges)",
                        list, (int)(s - list));
        if (add_range(ids, n, lo, hi))
            return fail(msg, msgsz, "device list '%s' has more than %d devices", list,
                        PROJ_MAX_RANKS);
        if (!*s++)
            return 0;
    }
}

int proj_devices_count(const char *list, int *n, char *msg, size_t msgsz)
{
    int *ids = malloc(sizeof *ids * PROJ_MAX_RANKS), count = 0, rc;
    if (!ids)
        return fail(msg, msgsz, "out of memory");
    rc = parse_ranges(list, ids, &count, msg, msgsz);
    if (!rc) { /* sorted: a duplicate is next to its twin */
        qsort(ids, (size_t)count, sizeof *ids, cmp_int);
        for (int i = 1; i < count && !rc; i++)
            if (ids[i] == ids[i - 1])
                rc = fail(msg, msgsz, "device %d appears twice in '%s'", ids[i], list);
    }
    free(ids);
    if (!rc)
        *n = count;
    return rc;
}

/* The profiles' UB per core (src/core/profile.c): no call reads it
 * without a world. */
size_t proj_ub_bytes(const char *platform)
{
    if (!platform || !strcmp(platform, "a2a3sim") || !strcmp(platform, "sim"))
        return 192 * 1024;
    if (!strcmp(platform, "a5sim"))
        return 192 * 1024;
    return 0;
}

/* The slot size src/coll/ll.c gives a group of p: the setting rounded up
 * to 64 bytes, within a rank's 256 KiB of inboxes (2 p slots). */
int proj_ll_bytes(int p, size_t *out, char *msg, size_t msgsz)
{
    const char *env = getenv("PLD_LL_BYTES");
    int64_t setting = LL_DEFAULT;
    if (env && *env && (bench_size_parse(env, &setting) || setting > LL_SETTING_MAX))
        return fail(msg, msgsz, "PLD_LL_BYTES=%s: not a size of 0 to 64K bytes", env);
    *out = 0;
    if (setting == 0 || p < 2 || p > LL_MAX_RANKS)
        return 0;
    size_t want = ((size_t)setting + 63) & ~(size_t)63;
    size_t room = ((size_t)LL_INBOX / (2 * (size_t)p)) & ~(size_t)63;
    *out = want < room ? want : room;
    return 0;
}

static int nodes_of(const proj_params *pp, int p)
{
    return (p + pp->ranks_per_node - 1) / pp->ranks_per_node;
}

int proj_fanout(const proj_params *pp, int p)
{
    long cpus = (long)nodes_of(pp, p) * pp->cpus_per_node;
    return p > cpus ? (p > 1 ? p - 1 : 1) : AUTO_FANOUT;
}

/* ---- the projection ------------------------------------------------------ */

int proj_alg_own_sync(bench_coll c, const proj_alg *a)
{
    return a->one_round || (c == BENCH_ALLREDUCE && a->mode == BENCH_MODE_RING);
}

/* Notifies of one ring allreduce on a rank (src/coll/allreduce_ring.c):
 * progress to both neighbours at each of its 2(P-1) steps, the "done"
 * credit, and the epilogue taking back what each neighbour sent. */
static uint64_t ring_notifies(int p)
{
    uint64_t steps = 2 * (uint64_t)(p - 1), per = p > 2 ? 2 : 1;
    return p < 2 ? 0 : steps * per + 1 + steps * per;
}

/* Puts and gets of the rank to its peers: one per peer it writes or reads
 * in each round that moves data (the builtins' C files). */
static uint64_t peer_transfers(bench_coll c, const proj_alg *a, int p, int rank, int root,
                               const bench_shape *sh, const bench_card *k)
{
    uint64_t peers = (uint64_t)(p - 1);
    if (p < 2)
        return 0;
    if (a->one_round) /* into every peer's inbox; the broadcast's non-roots send flags only */
        return c == BENCH_BROADCAST && rank != root ? 0 : peers;
    switch (c) {
    case BENCH_BARRIER:
        return 0;
    case BENCH_BROADCAST:
        return rank == root ? 0 : 1;
    case BENCH_ALLGATHER:
        if (a->mode == BENCH_MODE_DOUBLING) { /* a put per step, two where rows wrap */
            uint64_t n = 0;
            for (long h = 1; h < p; h *= 2)
                n += 1 + (rank + (h < p - h ? h : p - h) > p);
            return n;
        }
        return peers;
    case BENCH_ALLREDUCE:
        if (a->mode == BENCH_MODE_RING)
            return (uint64_t)k->rounds;           /* one pull from the left neighbour per step */
        if (a->mode == BENCH_MODE_RABENSEIFNER) { /* a get per step that reads anything */
            bench_rab_step st[BENCH_RAB_MAX_STEPS];
            uint64_t n = 0;
            for (int i = 0, ns = bench_rab_steps(p, rank, sh->count, st); i < ns; i++)
                n += st[i].elems > 0;
            return n;
        }
        if (a->mode == BENCH_MODE_RS_AG) { /* an owner: its segment from each peer, then
                                            * each other owner's; the rest: each owner's */
            uint64_t m = (uint64_t)pld_tune_rs_ag_owners(p, (size_t)sh->bytes);
            return (uint64_t)rank < m ? peers + m - 1 : m;
        }
        return (uint64_t)(k->rounds - 1) * peers; /* mesh: every peer in each chunk's round */
    case BENCH_ALL_TO_ALL: /* Bruck: one packed put per step; the unpacking reads my own rows */
        return a->mode == BENCH_MODE_BRUCK ? (uint64_t)bench_bruck_steps(p) : peers;
    default: /* allgather, reduce_scatter, all_to_all_v: each peer once */
        return peers;
    }
}

/* Ranks on the node of `rank` (the last node may be partly filled). */
static int node_size(const proj_params *pp, int p, int rank)
{
    int first = rank / pp->ranks_per_node * pp->ranks_per_node;
    return p - first < pp->ranks_per_node ? p - first : pp->ranks_per_node;
}

static int same_node(const proj_params *pp, int a, int b)
{
    return a / pp->ranks_per_node == b / pp->ranks_per_node;
}

/* The bytes of the card to and from peers that cross nodes. */
static uint64_t inter_bytes(const proj_params *pp, bench_coll c, const proj_alg *a, int p, int rank,
                            int root, const bench_shape *sh, size_t elt, uint64_t peer_bytes)
{
    if (p < 2 || !peer_bytes)
        return 0;
    if (c == BENCH_BROADCAST && !a->one_round) /* pulled whole from the root */
        return same_node(pp, rank, root) ? 0 : peer_bytes;
    if (c == BENCH_ALLREDUCE && a->mode == BENCH_MODE_RING) /* from the left neighbour */
        return same_node(pp, rank, (rank + p - 1) % p) ? 0 : peer_bytes;
    if (c == BENCH_ALLGATHER && a->mode == BENCH_MODE_DOUBLING) { /* step k: to rank - 2^k */
        uint64_t rows = 0;
        for (long h = 1; h < p; h *= 2)
            if (!same_node(pp, rank, (int)((rank - h + p) % p)))
                rows += (uint64_t)(h < p - h ? h : p - h);
        return peer_bytes / (uint64_t)(p - 1) * rows;
    }
    if (c == BENCH_ALL_TO_ALL && a->mode == BENCH_MODE_BRUCK) { /* step k: to rank + 2^k */
        uint64_t chunks = 0;
        for (int k = 0; k < bench_bruck_steps(p); k++)
            if (!same_node(pp, rank, (int)((rank + ((int64_t)1 << k)) % p)))
                chunks += (uint64_t)bench_bruck_step_chunks(p, k);
        return chunks * (uint64_t)sh->cols * elt;
    }
    if (c == BENCH_ALLREDUCE && a->mode == BENCH_MODE_RABENSEIFNER) { /* the steps' partners */
        bench_rab_step st[BENCH_RAB_MAX_STEPS];
        uint64_t away = 0;
        for (int i = 0, ns = bench_rab_steps(p, rank, sh->count, st); i < ns; i++)
            if (!same_node(pp, rank, st[i].peer))
                away += (uint64_t)st[i].elems * elt;
        return away;
    }
    uint64_t away = (uint64_t)(p - node_size(pp, p, rank)); /* peers on other nodes */
    return (uint64_t)((double)peer_bytes * (double)away / (double)(p - 1) + 0.5);
}

/* The bytes peers on other nodes read from this rank's windows in a pull
 * broadcast: the root serves every non-root in the pull form, a rank of
 * the binomial tree its children. They leave through the node's link.
 * Within a node the readers copy with their own CPUs, at the bytes their
 * cards already count. Every other algorithm's card already counts what
 * crosses a rank's link (each byte a peer reads from me, I also read from
 * a peer, or write to it). */
static void served_bytes(const proj_params *pp, bench_coll c, const proj_alg *a, int p, int rank,
                         int root, uint64_t n, uint64_t out[PROJ_NLEVELS])
{
    out[PROJ_INTRA] = out[PROJ_INTER] = 0;
    if (c != BENCH_BROADCAST || a->one_round || p < 2)
        return;
    if (a->mode == BENCH_MODE_BINOMIAL) { /* my children v + 2^k, 2^k > v */
        int v = ((rank - root) % p + p) % p;
        for (long b = 1; b < p; b <<= 1)
            if (b > v && v + b < p && !same_node(pp, rank, (int)((v + b + root) % p)))
                out[PROJ_INTER] += n;
        return;
    }
    if (rank == root) /* every non-root on another node */
        out[PROJ_INTER] = (uint64_t)(p - node_size(pp, p, rank)) * n;
}

/* One rank's share of the prediction: its messages and bytes, and their
 * time (before the oversubscription factor). A link carries both ways at
 * once: what the rank receives and what peers read from it overlap. */
static double rank_share(const proj_params *pp, bench_coll c, const proj_alg *a, pld_sync_form form,
                         int fanout, int p, int rank, int root, const bench_shape *sh, size_t elt,
                         size_t ub, proj_result *r)
{
    /* explicit modes only; the in-place allgather asks for auto's pick, and
     * with no parameters (every prediction 0: a tie) keeps the push */
    static const pld_tune no_tune;
    bench_card k;
    pld_sync_info si = {0};
    bench_card_make_path(c, a->mode, p, rank, root, sh, elt, ub, a->one_round, &no_tune, &k);
    /* rs_ag's owner rounds (k.owners) are direct: one hop each */
    int own_sync = proj_alg_own_sync(c, a) || k.owners;
    if (!own_sync)
        pld_sync_plan(form, p, rank, fanout, &si);
    bench_card_sync(c, a->mode, p, rank, root, a->one_round, &si, &k);
    if (k.notifies == BENCH_CARD_UNCOUNTED)
        k.notifies = ring_notifies(p);
    uint64_t peer = k.to_peers + k.from_peers;
    r->rounds = k.rounds;
    r->hops = own_sync ? 1 : si.hops;
    r->messages = k.notifies + peer_transfers(c, a, p, rank, root, sh, &k);
    r->bytes[PROJ_INTER] = inter_bytes(pp, c, a, p, rank, root, sh, elt, peer);
    r->bytes[PROJ_INTRA] = peer - r->bytes[PROJ_INTER] + k.self;
    uint64_t served[PROJ_NLEVELS];
    served_bytes(pp, c, a, p, rank, root, (uint64_t)sh->bytes, served);
    double in_ns = (double)r->bytes[PROJ_INTRA] * pp->beta_ns[PROJ_INTRA] +
                   (double)r->bytes[PROJ_INTER] * pp->beta_ns[PROJ_INTER],
           out_ns = (double)served[PROJ_INTRA] * pp->beta_ns[PROJ_INTRA] +
                    (double)served[PROJ_INTER] * pp->beta_ns[PROJ_INTER];
    if (out_ns > in_ns) {
        r->bytes[PROJ_INTRA] = served[PROJ_INTRA];
        r->bytes[PROJ_INTER] = served[PROJ_INTER];
        in_ns = out_ns;
    }
    return (double)r->messages * pp->overhead_us + in_ns / 1000.0;
}

void proj_predict(const proj_params *pp, bench_coll c, const proj_alg *a, pld_sync_form form, int p,
                  int root, const bench_shape *sh, size_t elt, size_t ub_bytes, proj_result *out)
{
    int fanout = proj_fanout(pp, p);
    double worst = -1;
    proj_result busiest = {0};
    for (int rank = 0; rank < p; rank++) {
        proj_result r = {0};
        double us = rank_share(pp, c, a, form, fanout, p, rank, root, sh, elt, ub_bytes, &r);
        if (us > worst) {
            worst = us;
            busiest = r;
        }
    }
    double f = pp->ranks_per_node > pp->cpus_per_node
                   ? (double)pp->ranks_per_node / pp->cpus_per_node
                   : 1.0;
    int level = nodes_of(pp, p) > 1 ? PROJ_INTER : PROJ_INTRA;
    /* the binomial broadcast's flags pass down the tree one level at a time,
     * the doubling allgather's from step to step, the Rabenseifner
     * allreduce's through the fold, its 2 log2 Q steps and the unfold,
     * Bruck's all-to-all's ready and data flags from step to step */
    busiest.chain = bench_chain(c, a->mode, p, a->one_round);
    busiest.us = (busiest.rounds * busiest.hops + busiest.chain) * pp->alpha_us[level] + f * worst;
    *out = busiest;
}
