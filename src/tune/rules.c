/* SPDX-License-Identifier: Apache-2.0 */
/* PLD_RULES: a file of rules that decide PLD_AUTO's choices where the cost
 * model, measured on one machine, cannot know better (a cluster: its links
 * between nodes, its cost per message). See pld/tune.h for the format.
 *
 * A world reads the file in the process that hosts rank 0 and shares it
 * with every process (host_union, as the cost model's parameters), so
 * every rank of an mpi job decides alike. The rules sit in the world's
 * shared block; a lookup walks them in file order, first match wins. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/handles.h"
#include "core/internal.h"
#include "core/settings.h"
#include "tune/tune.h"

/* Each collective's choices: the names auto can take, and their modes. */
static const pld__setting_word bcast_words[] = {
    {"pull", PLD_BCAST_PULL}, {"binomial", PLD_BCAST_BINOMIAL}, {NULL, 0}};
static const pld__setting_word ag_words[] = {
    {"push", PLD_AG_PUSH}, {"doubling", PLD_AG_DOUBLING}, {NULL, 0}};
static const pld__setting_word ar_words[] = {
    {"mesh", PLD_MESH}, {"rs_ag", PLD_RS_AG}, {"rabenseifner", PLD_RABENSEIFNER}, {NULL, 0}};
static const pld__setting_word a2a_words[] = {
    {"push", PLD_A2A_PUSH}, {"bruck", PLD_A2A_BRUCK}, {NULL, 0}};
/* PLD_SYNC's forms but auto: a rule decides instead of the model */
static const pld__setting_word sync_words[] = {{"full", PLD_SYNC_FULL},
                                               {"dissemination", PLD_SYNC_DISSEMINATION},
                                               {"tree", PLD_SYNC_TREE},
                                               {NULL, 0}};

static const pld__setting_word colls[] = {
    {"broadcast", PLD_RULE_BROADCAST}, {"allgather", PLD_RULE_ALLGATHER},
    {"allreduce", PLD_RULE_ALLREDUCE}, {"all_to_all", PLD_RULE_ALL_TO_ALL},
    {"sync", PLD_RULE_SYNC},           {NULL, 0}};
static const pld__setting_word *const choices[PLD_RULE_NCOLL] = {[PLD_RULE_BROADCAST] = bcast_words,
                                                                 [PLD_RULE_ALLGATHER] = ag_words,
                                                                 [PLD_RULE_ALLREDUCE] = ar_words,
                                                                 [PLD_RULE_ALL_TO_ALL] = a2a_words,
                                                                 [PLD_RULE_SYNC] = sync_words};

/* The entry of `word` in a table, or NULL. */
static const pld__setting_word *find(const pld__setting_word *t, const char *word)
{
    for (; t->word; t++)
        if (!strcmp(t->word, word))
            return t;
    return NULL;
}

/* A table's words, "a, b, c", for messages. */
static const char *listed(const pld__setting_word *t, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const pld__setting_word *w = t; w->word && used < n; w++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", w == t ? "" : ", ", w->word);
    return buf;
}

/* Where a failed read is described: the caller's buffer. */
typedef struct reader {
    const char *path;
    int line;
    char *msg;
    size_t msgsz;
} reader;

static int fail(reader *rd, const char *fmt, ...) PLD__PRINTF(2, 3);
static int fail(reader *rd, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (rd->line)
        snprintf(rd->msg, rd->msgsz, "PLD_RULES %s:%d: %s", rd->path, rd->line, what);
    else /* the whole file */
        snprintf(rd->msg, rd->msgsz, "PLD_RULES %s: %s", rd->path, what);
    return -1;
}

/* A decimal number, for bytes with an optional K, M or G (KiB, MiB, GiB),
 * up to 2^62: 0 and *out, -1 when s is not one. */
static int number(const char *s, int bytes, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    if (!isdigit((unsigned char)*p))
        return -1;
    const uint64_t most = UINT64_C(1) << 62;
    for (; isdigit((unsigned char)*p); p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (most - d) / 10) /* checked before it could wrap */
            return -1;
        v = v * 10 + d;
    }
    int shift = 0;
    if (bytes && *p) {
        shift = *p == 'K' ? 10 : *p == 'M' ? 20 : *p == 'G' ? 30 : -1;
        if (shift < 0)
            return -1;
        p++;
    }
    if (*p || v > most >> shift)
        return -1;
    *out = v << shift;
    return 0;
}

/* "*", "N", "N-M" or "N-*" into [lo, hi]; hi = max for "*". */
static int range(reader *rd, const char *what, const char *s, int bytes, uint64_t max, uint64_t *lo,
                 uint64_t *hi)
{
    const char *forms =
        bytes ? "*, N, N-M or N-* (bytes; K, M, G: KiB, MiB, GiB)" : "*, N, N-M or N-* (ranks)";
    if (!strcmp(s, "*")) {
        *lo = bytes ? 0 : 1;
        *hi = max;
        return 0;
    }
    char first[64];
    const char *dash = strchr(s, '-');
    size_t n = dash ? (size_t)(dash - s) : strlen(s);
    if (n >= sizeof first)
        return fail(rd, "%s '%s' is not %s", what, s, forms);
    memcpy(first, s, n);
    first[n] = '\0';
    if (number(first, bytes, lo) != 0)
        return fail(rd, "%s '%s' is not %s", what, s, forms);
    if (!dash)
        *hi = *lo;
    else if (!strcmp(dash + 1, "*"))
        *hi = max;
    else if (number(dash + 1, bytes, hi) != 0)
        return fail(rd, "%s '%s' is not %s", what, s, forms);
    if (*hi < *lo)
        return fail(rd, "%s '%s': the first is more than the last", what, s);
    if (*lo > max)
        return fail(rd, "%s '%s': more than %llu", what, s, (unsigned long long)max);
    if (!bytes && *lo < 1)
        return fail(rd, "ranks '%s': a group has 1 rank or more", s);
    if (*hi > max)
        *hi = max;
    return 0;
}

/* The words of a line without its comment, at most 5: a rule has 4, and
 * a fifth is how one too many is noticed. */
static int words(char *line, char *w[5])
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    int n = 0;
    for (char *save = NULL, *t = strtok_r(line, " \t\r\n", &save); t && n < 5;
         t = strtok_r(NULL, " \t\r\n", &save))
        w[n++] = t;
    return n;
}

static int rule_line(reader *rd, char *line, pld__rules *out)
{
    char *w[5];
    int n = words(line, w);
    if (n == 0)
        return 0;
    if (n != 4)
        return fail(rd, "%d words; a rule is 'collective ranks bytes choice'", n);
    char names[128];
    const pld__setting_word *cw = find(colls, w[0]);
    if (!cw)
        return fail(rd, "unknown collective '%s'; the collectives are %s", w[0],
                    listed(colls, names, sizeof names));
    int coll = (int)cw->value;
    pld__rule r = {.coll = coll, .line = rd->line};
    uint64_t lo, hi;
    if (range(rd, "ranks", w[1], 0, INT32_MAX, &lo, &hi) != 0)
        return -1;
    r.min_ranks = (int32_t)lo;
    r.max_ranks = (int32_t)hi;
    if (coll == PLD_RULE_SYNC && strcmp(w[2], "*"))
        return fail(rd, "bytes '%s': a sync rule holds for every call, its bytes are *", w[2]);
    if (range(rd, "bytes", w[2], 1, UINT64_MAX, &r.min_bytes, &r.max_bytes) != 0)
        return -1;
    const pld__setting_word *pick = find(choices[coll], w[3]);
    if (!pick)
        return fail(rd, "'%s' is no %s choice; the choices are %s", w[3], w[0],
                    listed(choices[coll], names, sizeof names));
    r.choice = (int32_t)pick->value;
    if (out->n >= PLD__RULES_MAX)
        return fail(rd, "more than %d rules", PLD__RULES_MAX);
    out->r[out->n++] = r;
    return 0;
}

int pld__rules_read(const char *path, pld__rules *out, char *msg, size_t msgsz)
{
    reader rd = {.path = path, .line = 0, .msg = msg, .msgsz = msgsz};
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(&rd, "cannot be read: %s", strerror(errno));
    char line[1024];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        rd.line++;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = fail(&rd, "longer than %zu characters", sizeof line - 2);
            break;
        }
        if (rd.line == 1) {
            char *w[5];
            int n = words(line, w);
            if (n != 2 || strcmp(w[0], "pld_rules") || strcmp(w[1], "1"))
                rc = fail(&rd, "the first line is '%s'; a rules file starts with 'pld_rules 1'",
                          n ? w[0] : "");
            continue;
        }
        rc = rule_line(&rd, line, out);
    }
    if (rc == 0 && rd.line == 0)
        rc = fail(&rd, "empty; a rules file starts with 'pld_rules 1'");
    fclose(f);
    if (rc == 0)
        snprintf(out->path, sizeof out->path, "%s", path);
    return rc;
}

int pld__rules_pick(const pld__rules *rs, pld_rule_coll coll, int nranks, uint64_t bytes,
                    int *choice_out)
{
    for (int i = 0; i < rs->n; i++) {
        const pld__rule *r = &rs->r[i];
        if (r->coll == (int32_t)coll && nranks >= r->min_ranks && nranks <= r->max_ranks &&
            bytes >= r->min_bytes && bytes <= r->max_bytes) {
            *choice_out = r->choice;
            return r->line;
        }
    }
    return 0;
}

pld_status pld__rules_world_init(pld_world *w)
{
    pld__rules *rs = &w->sh->rules;
    memset(rs, 0, sizeof *rs);
    if (pld__settings_are_defaults()) /* a world that measures the parameters */
        return PLD_OK;
    /* every process takes part in the union below, whether or not its own
     * environment names a file: only rank 0's counts */
    const char *path = pld__setting_str(PLD__S_RULES);
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    pld__rules mine;
    char why[1024] = "";
    memset(&mine, 0, sizeof mine);
    if (first == 0 && path && *path && pld__rules_read(path, &mine, why, sizeof why) != 0) {
        memset(&mine, 0, sizeof mine);
        mine.failed = 1;
    }
    /* rank 0's rules for every process: the others contribute zeros */
    if (w->tp->host_union(w, (unsigned char *)&mine, sizeof mine) != 0)
        return pld__world_fail(w, PLD_ERR_SYSTEM,
                               "PLD_RULES: rank 0's rules did not reach this process");
    if (mine.failed)
        return pld__world_fail(
            w, PLD_ERR_ARG, "%s",
            *why ? why
                 : "PLD_RULES: rank 0 refused its rules file (its own message names the line)");
    *rs = mine;
    return PLD_OK;
}

int pld_world_rule(const pld_world *w, pld_rule_coll coll, int nranks, uint64_t bytes,
                   int *choice_out)
{
    if (!pld__world_is_live(w) || (int)coll < 0 || coll >= PLD_RULE_NCOLL || !choice_out)
        return 0;
    return pld__rules_pick(&w->sh->rules, coll, nranks, bytes, choice_out);
}

int pld_world_rules(const pld_world *w, const char **path_out)
{
    if (!pld__world_is_live(w))
        return 0;
    const pld__rules *rs = &w->sh->rules;
    if (path_out && rs->n)
        *path_out = rs->path;
    return rs->n;
}
