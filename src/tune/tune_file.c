/* SPDX-License-Identifier: Apache-2.0 */
/* The cost model's parameter file (pld/tune.h): where it lives, reading it
 * strictly, writing it atomically. A file pld did not write, or one cut
 * short, is an error naming the line, never parameters half read: PLD_AUTO
 * would choose by them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "tune/tune.h"

#define FORMAT_TAG "pld_tune"
/* 4: measured only when the calls fit the rounds they hold (see
 * pld__tune_rounds_misfit); a file of 3 may hold rates derived from rounds
 * a busy moment inflated, so it is measured again like any other pld's */
#define FORMAT_VERSION 4

const char *pld_tune_path(void)
{
    static _Thread_local char path[4096];
    const char *set = pld__setting_str(PLD__S_TUNE_FILE);
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (set)
        snprintf(path, sizeof path, "%s", set);
    else if (xdg && *xdg == '/')
        snprintf(path, sizeof path, "%s/pld/tune.txt", xdg);
    else if (home && *home)
        snprintf(path, sizeof path, "%s/.cache/pld/tune.txt", home);
    else
        path[0] = '\0';
    return path;
}

/* The keys of the file, in the order pld writes them. */
enum {
    K_CPUS,
    K_ROUND,
    K_PEER,
    K_HANDOVER,
    K_TRANSFER,
    K_WS,
    K_COPY,
    K_PULL,
    K_REDUCE,
    K_MEASURED,
    K_COUNT
};
static const char *const keys[K_COUNT] = {"cpus",        "round_us", "peer_us", "handover_us",
                                          "transfer_us", "ws_bytes", "copy_ns", "pull_ns",
                                          "reduce_ns",   "measured"};

static int values_of(int k)
{
    return k == K_WS || k == K_COPY || k == K_PULL || k == K_REDUCE ? PLD_TUNE_POINTS : 1;
}

/* The doubles of key k (NULL for cpus and measured, which are ints). */
static double *slot_of(pld_tune *t, int k)
{
    switch (k) {
    case K_ROUND:
        return &t->round_us;
    case K_PEER:
        return &t->peer_us;
    case K_HANDOVER:
        return &t->handover_us;
    case K_TRANSFER:
        return &t->transfer_us;
    case K_WS:
        return t->ws_bytes;
    case K_COPY:
        return t->copy_ns;
    case K_PULL:
        return t->pull_ns;
    case K_REDUCE:
        return t->reduce_ns;
    default:
        return NULL;
    }
}

static pld_status bad(const char *path, int line, const char *what, const char *text)
{
    return pld__init_fail(PLD_ERR_ARG,
                          "pld_tune_load: %s line %d: %s ('%.80s'); delete the file or run "
                          "`pld tune` to measure again",
                          path, line, what, text);
}

/* One "key v [v v]" line into t; *seen gets the key's bit. */
static pld_status parse_line(const char *path, int line, char *text, pld_tune *t, unsigned *seen)
{
    char *save = NULL, *key = strtok_r(text, " \t\r\n", &save);
    int k = 0;
    while (k < K_COUNT && strcmp(key, keys[k]))
        k++;
    if (k == K_COUNT)
        return bad(path, line, "unknown key", key);
    if (*seen & (1u << k))
        return bad(path, line, "key given twice", key);
    *seen |= 1u << k;
    double v[PLD_TUNE_POINTS];
    for (int i = 0; i < values_of(k); i++) {
        char *tok = strtok_r(NULL, " \t\r\n", &save), *end = NULL;
        if (!tok)
            return bad(path, line, "too few values", key);
        v[i] = strtod(tok, &end);
        if (*end || !isfinite(v[i]) || v[i] < 0)
            return bad(path, line, "not a finite non-negative number", tok);
    }
    if (strtok_r(NULL, " \t\r\n", &save))
        return bad(path, line, "too many values", key);
    if (k == K_CPUS) {
        if (v[0] < 1 || v[0] > 1 << 20 || v[0] != (int)v[0])
            return bad(path, line, "cpus is not a whole number >= 1", key);
        t->cpus = (int)v[0];
    } else if (k == K_MEASURED) {
        if (v[0] != 0 && v[0] != 1)
            return bad(path, line, "measured is 0 or 1", key);
        t->measured = (int)v[0];
    } else {
        for (int i = 0; i < values_of(k); i++)
            slot_of(t, k)[i] = v[i];
    }
    if (k == K_WS)
        for (int i = 0; i < PLD_TUNE_POINTS; i++)
            if (v[i] <= (i ? v[i - 1] : 0))
                return bad(path, line, "working sets must be positive and ascending", key);
    return PLD_OK;
}

pld_status pld_tune_load(const char *path, pld_tune *out)
{
    if (!out)
        return pld__init_fail(PLD_ERR_ARG, "pld_tune_load: out is NULL");
    if (!path)
        path = pld_tune_path();
    FILE *f = *path ? fopen(path, "r") : NULL;
    if (!f)
        return pld__init_fail(PLD_ERR_SYSTEM, "pld_tune_load: cannot read '%s': %s", path,
                              *path ? strerror(errno) : "no path (set PLD_TUNE_FILE or HOME)");
    pld_tune t = {0};
    unsigned seen = 0;
    char text[512];
    int line = 0, tagged = 0;
    pld_status st = PLD_OK;
    while (st == PLD_OK && fgets(text, sizeof text, f)) {
        line++;
        char *p = text + strspn(text, " \t");
        if (*p == '#' || *p == '\n' || *p == '\0')
            continue;
        if (!tagged) {
            int version = 0;
            if (sscanf(p, FORMAT_TAG " %d", &version) != 1)
                st = bad(path, line, "not a pld_tune file", p);
            else if (version != FORMAT_VERSION) /* another pld's: measure again */
                st = pld__init_fail(PLD_ERR_UNSUPPORTED,
                                    "pld_tune_load: %s is of format %d; this pld reads format %d",
                                    path, version, FORMAT_VERSION);
            tagged = 1;
            continue;
        }
        st = parse_line(path, line, p, &t, &seen);
    }
    fclose(f);
    if (st != PLD_OK)
        return st;
    for (int k = 0; k < K_COUNT; k++)
        if (!(seen & (1u << k)))
            return bad(path, line, "a key is missing", keys[k]);
    *out = t;
    return PLD_OK;
}

/* mkdir -p of the file's directory */
static int make_parents(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return 0;
}

pld_status pld_tune_save(const char *path, const pld_tune *t)
{
    if (!t)
        return pld__init_fail(PLD_ERR_ARG, "pld_tune_save: t is NULL");
    if (!path)
        path = pld_tune_path();
    if (!*path)
        return pld__init_fail(PLD_ERR_SYSTEM, "pld_tune_save: no path (set PLD_TUNE_FILE or HOME)");
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = make_parents(path) == 0 ? fopen(tmp, "w") : NULL;
    if (!f)
        return pld__init_fail(PLD_ERR_SYSTEM, "pld_tune_save: cannot write '%s': %s", path,
                              strerror(errno));
    fprintf(f,
            "# pld's cost model on this machine (see pld/tune.h): what PLD_AUTO predicts with.\n"
            "# Written by pld %s; `pld tune` measures again and rewrites it.\n" FORMAT_TAG " %d\n",
            PLD_VERSION_STRING, FORMAT_VERSION);
    fprintf(f, "cpus %d\nround_us %.10g\npeer_us %.10g\nhandover_us %.10g\ntransfer_us %.10g\n",
            t->cpus, t->round_us, t->peer_us, t->handover_us, t->transfer_us);
    for (int k = K_WS; k <= K_REDUCE; k++) {
        fprintf(f, "%s", keys[k]);
        for (int i = 0; i < PLD_TUNE_POINTS; i++)
            fprintf(f, " %.10g", slot_of((pld_tune *)t, k)[i]);
        fputc('\n', f);
    }
    fprintf(f, "measured %d\n", t->measured ? 1 : 0);
    int failed = ferror(f) != 0;
    failed |= fclose(f) != 0;
    if (failed || rename(tmp, path) != 0) {
        int err = errno;
        unlink(tmp);
        return pld__init_fail(PLD_ERR_SYSTEM, "pld_tune_save: cannot write '%s': %s", path,
                              strerror(err));
    }
    return PLD_OK;
}
