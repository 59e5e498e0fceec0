/* SPDX-License-Identifier: Apache-2.0 */
/* Every PLD_* environment variable, in one table, read strictly.
 *
 *   PLD_WAIT_TIMEOUT_MS  duration  single-wait timeout (default 60000 ms)
 *   PLD_CHECK            flags     signals, race, hazards, noargs (agreement check off), all
 *   PLD_DEBUG            choice    OFF | WARN | INFO | TRACE logging to stderr
 *   PLD_DEBUG_FILE       path      the log's file instead (%h host, %p pid)
 *   PLD_DEBUG_SUBSYS     flags     INIT, COLL, TRANSPORT, CHECK, ALL; ^ excludes
 *   PLD_TRACE            path      Chrome trace output file
 *   PLD_IR               bool      1: print rank 0's lowering listing after each launch
 *   PLD_IR_SVG           path      every rank's lowering as an SVG sequence diagram
 *   PLD_SCHED            seed      run launches under the schedule explorer
 *                                  (src/check/explore.c; thread and process transports)
 *   PLD_UB_BYTES         bytes     on-core buffer per core (profile default 192 KiB)
 *   PLD_LL_BYTES         bytes     per-peer payload up to which builtins take the
 *                                  one-round path (coll/ll.c; 0 = off)
 *   PLD_SYNC             choice    auto | full | dissemination | tree: how builtins
 *                                  synchronise (coll/sync.c)
 *   PLD_TREE_FANOUT      count     children per rank of the tree form (auto)
 *   PLD_MAX_RANKS        count     the most devices a list may name (4096)
 *   PLD_URMA_SQ_DEPTH    count     URMA SQ depth in WQEBBs (a5sim, default 1024)
 *   PLD_STACK_BYTES      bytes     stack of rank threads (thread transport) and core threads (4M)
 *   PLD_FIBERS           count     thread transport: run the ranks as user-level contexts on
 *                                  this many threads (0, the default: a thread per rank)
 *   PLD_SPIN             count     spin iterations before a wait yields (auto)
 *   PLD_YIELDS           count     sched_yield rounds before it sleeps (auto)
 *   PLD_PIN              bool      pin rank r to CPU r mod n (auto: when oversubscribed)
 *   PLD_MPI_SHM          bool      0: the mpi transport moves data with MPI RMA even
 *                                  when every rank shares this node's memory
 *   PLD_TUNE_FILE        path      the cost model's measured parameters (src/tune/)
 *   PLD_RULES            path      rules that decide PLD_AUTO's choices before the cost
 *                                  model (src/tune/rules.c)
 *   PLD_MUTANT           name      a planted protocol bug; read by the test library
 *                                  pld_mutants only (src/coll/mutant.c), never checked
 *
 * Why strict: a value read leniently fails silently -- PLD_CHECK=races used
 * to turn the race checker off, PLD_WAIT_TIMEOUT_MS=1s meant 1 ms and
 * =1000ms twelve days. So every value either parses completely into its
 * range or is PLD_ERR_ARG naming the variable, the value and the accepted
 * forms. An empty value is the same as an unset one (`PLD_X= cmd` is how
 * shells clear a variable for one command). Numbers are decimal (a leading
 * 0 is not octal); magnitudes are accumulated with checked arithmetic, so an
 * overflow is "out of range", never a wrapped value. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/internal.h"

static const pld__setting_word check_words[] = {
    {"signals", PLD_CHECK_SIGNALS},
    {"race", PLD_CHECK_RACE},
    {"noargs", PLD_CHECK_NOARGS},
    {"hazards", PLD_CHECK_HAZARDS},
    {"all", PLD_CHECK_SIGNALS | PLD_CHECK_RACE},
    {NULL, 0},
};

/* as NCCL_DEBUG_SUBSYS: upper case, ALL the default, ^ to exclude */
static const pld__setting_word subsys_words[] = {
    {"INIT", PLD__SUB_INIT},
    {"COLL", PLD__SUB_COLL},
    {"TRANSPORT", PLD__SUB_TRANSPORT},
    {"CHECK", PLD__SUB_CHECK},
    {"ALL", PLD__SUB_INIT | PLD__SUB_COLL | PLD__SUB_TRANSPORT | PLD__SUB_CHECK},
    {NULL, 0},
};

static const pld__setting_word sync_words[] = {
    {"auto", PLD_SYNC_AUTO},
    {"full", PLD_SYNC_FULL},
    {"dissemination", PLD_SYNC_DISSEMINATION},
    {"tree", PLD_SYNC_TREE},
    {NULL, 0},
};

static const pld__setting_word debug_words[] = {
    {"OFF", PLD__LOG_OFF},
    {"WARN", PLD__LOG_WARN},
    {"INFO", PLD__LOG_INFO},
    {"TRACE", PLD__LOG_TRACE},
    {NULL, 0},
};

#define KIB ((int64_t)1 << 10)
#define MIB ((int64_t)1 << 20)
#define GIB ((int64_t)1 << 30)

static const pld__setting table[PLD__S_COUNT_] = {
    [PLD__S_WAIT_TIMEOUT_MS] = {.name = "PLD_WAIT_TIMEOUT_MS",
                                .type = PLD__SET_DURATION,
                                .min = 1,
                                .max = INT32_MAX,
                                .unit = "ms",
                                .dflt = 60000,
                                .dflt_text = "60000 ms",
                                .doc = "a single wait that lasts longer fails with "
                                       "PLD_ERR_TIMEOUT (pld_config.wait_timeout_ms wins)"},
    [PLD__S_CHECK] = {.name = "PLD_CHECK",
                      .type = PLD__SET_FLAGS,
                      .words = check_words,
                      .dflt_text = "none",
                      .doc = "checkers: signals return to zero, race checker, hazards (the "
                             "hardware-hazard lints); noargs turns the agreement check off "
                             "(OR-ed with pld_config.check)"},
    [PLD__S_DEBUG] = {.name = "PLD_DEBUG",
                      .type = PLD__SET_CHOICE,
                      .words = debug_words,
                      .dflt = PLD__LOG_OFF,
                      .dflt_text = "OFF",
                      .doc = "log at this level and below, each line "
                             "'host:pid:tid [rank N] pld LEVEL ...' as NCCL_DEBUG's; TRACE "
                             "adds a line per builtin and primitive call with its call site"},
    [PLD__S_DEBUG_FILE] = {.name = "PLD_DEBUG_FILE",
                           .type = PLD__SET_PATH,
                           .escapes = "hp%",
                           .dflt_text = "stderr",
                           .doc = "write the PLD_DEBUG lines to this file instead of stderr; "
                                  "%h is the host name, %p the process id (as "
                                  "NCCL_DEBUG_FILE)"},
    [PLD__S_DEBUG_SUBSYS] = {.name = "PLD_DEBUG_SUBSYS",
                             .type = PLD__SET_FLAGS,
                             .words = subsys_words,
                             .caret = 1,
                             .dflt = PLD__SUB_INIT | PLD__SUB_COLL | PLD__SUB_TRANSPORT |
                                     PLD__SUB_CHECK,
                             .dflt_text = "ALL",
                             .doc = "the subsystems PLD_DEBUG logs: INIT (worlds), COLL "
                                    "(launches, calls), TRANSPORT, CHECK (checkers); ^INIT,COLL "
                                    "logs all but those (as NCCL_DEBUG_SUBSYS)"},
    [PLD__S_TRACE] = {.name = "PLD_TRACE",
                      .type = PLD__SET_PATH,
                      .dflt_text = "no trace",
                      .doc = "write a Chrome/Perfetto trace (JSON) of every launch to this "
                             "file (pld_config.trace_path wins)"},
    [PLD__S_IR] = {.name = "PLD_IR",
                   .type = PLD__SET_BOOL,
                   .dflt = 0,
                   .dflt_text = "0",
                   .doc = "1: print rank 0's lowering listing after each launch (as --ir)"},
    [PLD__S_IR_SVG] = {.name = "PLD_IR_SVG",
                       .type = PLD__SET_PATH,
                       .dflt_text = "no diagram",
                       .doc = "draw every rank's lowering of each launch as an SVG sequence "
                              "diagram in this file (as --ir-svg; pld_config.ir_svg wins)"},
    [PLD__S_SCHED] = {.name = "PLD_SCHED",
                      .type = PLD__SET_SEED,
                      .dflt_text = "off",
                      .doc = "run launches under the schedule explorer with this seed (thread "
                             "and process transports); a seed replays its interleaving"},
    [PLD__S_UB_BYTES] = {.name = "PLD_UB_BYTES",
                         .type = PLD__SET_BYTES,
                         .min = KIB,
                         .max = GIB,
                         .unit = "bytes",
                         .dflt_text = "192K (the profile's)",
                         .doc = "on-core buffer (UB) per core: bounds the tiles a kernel "
                                "holds at once"},
    [PLD__S_LL_BYTES] = {.name = "PLD_LL_BYTES",
                         .type = PLD__SET_BYTES,
                         .min = 0,
                         .max = 64 * KIB,
                         .unit = "bytes",
                         .dflt = PLD__LL_BYTES_DEFAULT,
                         .dflt_text = PLD__LL_BYTES_DEFAULT_TEXT,
                         .doc = "per-peer payload up to which broadcast, reduce_scatter and "
                                "allreduce (auto) run in one round through pld's own inboxes "
                                "(0: never; set: allgather and all_to_all too)"},
    [PLD__S_SYNC] = {.name = "PLD_SYNC",
                     .type = PLD__SET_CHOICE,
                     .words = sync_words,
                     .dflt = PLD_SYNC_AUTO,
                     .dflt_text = "auto",
                     .doc = "how builtins synchronise: full (every rank notifies every "
                            "rank), dissemination (log2 P rounds), tree (arrivals up a tree, "
                            "then a release); auto: the cost model picks by group size"},
    [PLD__S_TREE_FANOUT] = {.name = "PLD_TREE_FANOUT",
                            .type = PLD__SET_COUNT,
                            .min = 0,
                            .max = PLD__MAX_RANKS_LIMIT,
                            .unit = "children",
                            .dflt = 0,
                            .dflt_text = "auto: the whole group (flat) when ranks outnumber "
                                         "CPUs, else 16",
                            .doc = "children per rank in the tree form of PLD_SYNC (0: auto)"},
    [PLD__S_MAX_RANKS] = {.name = "PLD_MAX_RANKS",
                          .type = PLD__SET_COUNT,
                          .min = 1,
                          .max = PLD__MAX_RANKS_LIMIT,
                          .unit = "ranks",
                          .dflt = PLD__MAX_RANKS,
                          .dflt_text = "4096",
                          .doc = "the most devices (ranks) a device list may name; beyond 4096, "
                                 "each rank costs its thread or process and its share of "
                                 "every window"},
    [PLD__S_URMA_SQ_DEPTH] = {.name = "PLD_URMA_SQ_DEPTH",
                              .type = PLD__SET_COUNT,
                              .min = 4,
                              .max = 1 << 20,
                              .unit = "WQEBBs",
                              .dflt_text = "1024 (the a5sim profile's)",
                              .doc = "URMA send-queue depth of the a5sim profile (ignored on "
                                     "a2a3sim)"},
    [PLD__S_STACK_BYTES] = {.name = "PLD_STACK_BYTES",
                            .type = PLD__SET_BYTES,
                            .min = 64 * KIB,
                            .max = GIB,
                            .unit = "bytes",
                            .dflt = 4 * MIB,
                            .dflt_text = "4M",
                            .doc = "stack of each rank thread of the thread transport and of "
                                   "each extra core thread of a multi-core builtin (raised to "
                                   "the system's minimum where that is larger)"},
    [PLD__S_FIBERS] = {.name = "PLD_FIBERS",
                       .type = PLD__SET_COUNT,
                       .min = 0,
                       .max = 65536,
                       .unit = "threads",
                       .dflt = 0,
                       .dflt_text = "0: a thread per rank",
                       .doc = "thread transport: run the ranks as user-level contexts on this "
                              "many threads (rank r on thread r mod N), switching between "
                              "them in user space when a rank waits: for worlds of many more "
                              "ranks than CPUs. A rank that blocks in the kernel or loops "
                              "without calling pld holds its thread's other ranks"},
    [PLD__S_SPIN] = {.name = "PLD_SPIN",
                     .type = PLD__SET_COUNT,
                     .min = 0,
                     .max = INT32_MAX,
                     .unit = "iterations",
                     .dflt_text = "auto: 2000, or 0 when ranks outnumber CPUs",
                     .doc = "most spin iterations before a wait yields the CPU (each rank "
                            "adapts its budget between this and 1/32 of it)"},
    [PLD__S_YIELDS] = {.name = "PLD_YIELDS",
                       .type = PLD__SET_COUNT,
                       .min = 0,
                       .max = INT32_MAX,
                       .unit = "rounds",
                       .dflt_text = "auto: 0, or 64 when ranks outnumber CPUs",
                       .doc = "sched_yield rounds before a wait sleeps"},
    [PLD__S_PIN] = {.name = "PLD_PIN",
                    .type = PLD__SET_BOOL,
                    .dflt_text = "auto: 1 when ranks outnumber CPUs, else 0",
                    .doc = "1: pin rank r to the (r mod n)-th CPU this process may use; 0: "
                           "never"},
    [PLD__S_MPI_SHM] = {.name = "PLD_MPI_SHM",
                        .type = PLD__SET_BOOL,
                        .dflt = 1,
                        .dflt_text = "1",
                        .doc = "0: the mpi transport moves data with MPI RMA even when every "
                               "rank shares this node's memory"},
    [PLD__S_TUNE_FILE] = {.name = "PLD_TUNE_FILE",
                          .type = PLD__SET_PATH,
                          .dflt_text = "$XDG_CACHE_HOME/pld/tune.txt, else ~/.cache/pld/tune.txt",
                          .doc = "the machine's cost-model parameters, which PLD_AUTO predicts "
                                 "with: read at world init, measured and written there when "
                                 "the file does not exist; `pld tune` rewrites it"},
    [PLD__S_RULES] = {.name = "PLD_RULES",
                      .type = PLD__SET_PATH,
                      .dflt_text = "none",
                      .doc = "a file of rules (collective, ranks, bytes, choice) that decide "
                             "PLD_AUTO's algorithms and synchronisation form before the cost "
                             "model does: for machines the model was not measured on, such "
                             "as a cluster; read at world init"},
    [PLD__S_MUTANT] = {.name = "PLD_MUTANT",
                       .type = PLD__SET_NAME,
                       .dflt_text = "none",
                       .test_only = 1,
                       .doc = "test library pld_mutants only: the planted protocol bug to "
                              "switch on (ignored by libpld)"},
};

const pld__setting *pld__setting_get(pld__setting_id id)
{
    return (unsigned)id < PLD__S_COUNT_ ? &table[id] : NULL;
}

/* ---- formatting --------------------------------------------------------- */

/* 4194304 -> "4M", 1536 -> "1536": the suffixed form when it is exact. */
static const char *fmt_bytes(int64_t v, char *buf, size_t n)
{
    static const struct {
        int64_t mult;
        const char *suffix;
    } units[] = {{GIB, "G"}, {MIB, "M"}, {KIB, "K"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (v != 0 && v % units[i].mult == 0) {
            snprintf(buf, n, "%" PRId64 "%s", v / units[i].mult, units[i].suffix);
            return buf;
        }
    snprintf(buf, n, "%" PRId64, v);
    return buf;
}

static const char *fmt_words(const pld__setting_word *w, const char *sep, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; w[i].word && len < n; i++) {
        int k = snprintf(buf + len, n - len, "%s%s", i ? sep : "", w[i].word);
        if (k < 0)
            break;
        len += (size_t)k;
    }
    return buf;
}

const char *pld__setting_accepted(pld__setting_id id, char *buf, size_t n)
{
    const pld__setting *s = pld__setting_get(id);
    char lo[32], hi[32], words[128];
    switch (s->type) {
    case PLD__SET_COUNT:
        snprintf(buf, n, "an integer %" PRId64 "..%" PRId64 " (%s)", s->min, s->max, s->unit);
        break;
    case PLD__SET_BYTES:
        snprintf(buf, n,
                 "a size in bytes %s..%s, a bare integer or with a suffix K, M or G (x1024): "
                 "65536, 64K, 4M",
                 fmt_bytes(s->min, lo, sizeof lo), fmt_bytes(s->max, hi, sizeof hi));
        break;
    case PLD__SET_DURATION:
        snprintf(buf, n,
                 "an integer in milliseconds %" PRId64 "..%" PRId64
                 ", or with a unit: 1500ms, 2s, 5min",
                 s->min, s->max);
        break;
    case PLD__SET_BOOL:
        snprintf(buf, n, "0 or 1");
        break;
    case PLD__SET_FLAGS:
        snprintf(buf, n, "%s, comma-separated%s", fmt_words(s->words, ", ", words, sizeof words),
                 s->caret ? "; a leading ^ excludes them" : "");
        break;
    case PLD__SET_CHOICE:
        snprintf(buf, n, "one of %s", fmt_words(s->words, ", ", words, sizeof words));
        break;
    case PLD__SET_PATH:
        snprintf(buf, n, "a file path%s", s->escapes ? "; %h: host name, %p: process id" : "");
        break;
    case PLD__SET_SEED:
        snprintf(buf, n, "an integer 0..%" PRIu64 ", decimal or 0x hex", UINT64_MAX);
        break;
    case PLD__SET_NAME:
        snprintf(buf, n, "a name (test library only)");
        break;
    }
    return buf;
}

const char *pld__setting_format(pld__setting_id id, const pld__setting_value *v, char *buf,
                                size_t n)
{
    const pld__setting *s = pld__setting_get(id);
    char b[32];
    switch (s->type) {
    case PLD__SET_COUNT:
        snprintf(buf, n, "%" PRId64, v->num);
        break;
    case PLD__SET_BYTES:
        snprintf(buf, n, "%s", fmt_bytes(v->num, b, sizeof b));
        break;
    case PLD__SET_DURATION:
        snprintf(buf, n, "%" PRId64 " ms", v->num);
        break;
    case PLD__SET_BOOL:
        snprintf(buf, n, "%d", v->num != 0);
        break;
    case PLD__SET_FLAGS: {
        /* the bits, as the words that name exactly one of them */
        size_t len = 0;
        buf[0] = '\0';
        for (int i = 0; s->words[i].word && len < n; i++) {
            int64_t bit = s->words[i].value;
            if ((bit & (bit - 1)) == 0 && (v->num & bit)) {
                int k = snprintf(buf + len, n - len, "%s%s", len ? "," : "", s->words[i].word);
                if (k < 0)
                    break;
                len += (size_t)k;
            }
        }
        if (!len)
            snprintf(buf, n, "none");
        break;
    }
    case PLD__SET_CHOICE:
        snprintf(buf, n, "%s", "?");
        for (int i = 0; s->words[i].word; i++)
            if (s->words[i].value == v->num)
                snprintf(buf, n, "%s", s->words[i].word);
        break;
    case PLD__SET_SEED:
        if (v->from_env)
            snprintf(buf, n, "%" PRIu64, v->seed);
        else
            snprintf(buf, n, "off");
        break;
    case PLD__SET_PATH:
    case PLD__SET_NAME:
        snprintf(buf, n, "%s", v->str ? v->str : "none");
        break;
    }
    return buf;
}

/* ---- parsing ------------------------------------------------------------ */

/* Decimal digits at *p into *mag; 0 when there were none. An overflow
 * keeps consuming digits and sets *over instead of wrapping. */
static int digits(const char **p, int base, uint64_t *mag, int *over)
{
    const char *s = *p;
    uint64_t m = 0;
    int n = 0;
    for (;; s++, n++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            break;
        if (m > (UINT64_MAX - d) / (unsigned)base)
            *over = 1;
        else
            m = m * (unsigned)base + d;
    }
    *p = s;
    *mag = m;
    return n;
}

static int all_letters(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isalpha((unsigned char)*s))
            return 0;
    return 1;
}

/* Writes "NAME=text: <why> (accepted: ...)" and returns PLD_ERR_ARG. */
static pld_status bad(pld__setting_id id, const char *text, char *msg, size_t msgsz,
                      const char *fmt, ...) PLD__PRINTF(5, 6);
static pld_status bad(pld__setting_id id, const char *text, char *msg, size_t msgsz,
                      const char *fmt, ...)
{
    char why[160], acc[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    /* a runaway value is cut, not echoed whole */
    snprintf(msg, msgsz, "%s=%.64s%s: %s (accepted: %s)", table[id].name, text,
             strlen(text) > 64 ? "..." : "", why, pld__setting_accepted(id, acc, sizeof acc));
    return PLD_ERR_ARG;
}

/* A number with an optional suffix: COUNT, BYTES, DURATION. */
static pld_status parse_number(pld__setting_id id, const char *text, int64_t *out, char *msg,
                               size_t msgsz)
{
    const pld__setting *s = &table[id];
    static const char *const what[] = {
        [PLD__SET_COUNT] = "not an integer",
        [PLD__SET_BYTES] = "not a size in bytes",
        [PLD__SET_DURATION] = "not a duration",
    };
    static const struct {
        pld__setting_type type;
        const char *suffix;
        uint64_t mult;
    } units[] = {
        {PLD__SET_BYTES, "", 1},           {PLD__SET_BYTES, "K", 1u << 10},
        {PLD__SET_BYTES, "k", 1u << 10},   {PLD__SET_BYTES, "M", 1u << 20},
        {PLD__SET_BYTES, "m", 1u << 20},   {PLD__SET_BYTES, "G", 1u << 30},
        {PLD__SET_BYTES, "g", 1u << 30},   {PLD__SET_DURATION, "", 1},
        {PLD__SET_DURATION, "ms", 1},      {PLD__SET_DURATION, "s", 1000},
        {PLD__SET_DURATION, "min", 60000}, {PLD__SET_COUNT, "", 1},
    };
    const char *p = text;
    int neg = *p == '-', over = 0;
    uint64_t mag;
    p += neg;
    if (!digits(&p, 10, &mag, &over))
        return bad(id, text, msg, msgsz, "%s", what[s->type]);
    uint64_t mult = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (units[i].type == s->type && !strcmp(p, units[i].suffix))
            mult = units[i].mult;
    if (!mult) {
        if (s->type != PLD__SET_COUNT && all_letters(p))
            return bad(id, text, msg, msgsz, "unknown unit '%.16s'", p);
        return bad(id, text, msg, msgsz, "%s", what[s->type]);
    }
    /* checked multiply: the magnitude must stay within int64 */
    if (over || mag > (uint64_t)INT64_MAX / mult)
        over = 1;
    else
        mag *= mult;
    char lim[32];
    if (neg && (over || mag > 0)) {
        if (s->type == PLD__SET_BYTES)
            fmt_bytes(s->min, lim, sizeof lim);
        else
            snprintf(lim, sizeof lim, "%" PRId64, s->min);
        return bad(id, text, msg, msgsz, "out of range: the minimum is %s%s%s", lim,
                   s->type == PLD__SET_DURATION ? " " : "",
                   s->type == PLD__SET_DURATION ? s->unit : "");
    }
    if (over || (int64_t)mag > s->max || (int64_t)mag < s->min) {
        int low = !over && (int64_t)mag < s->min;
        int64_t edge = low ? s->min : s->max;
        if (s->type == PLD__SET_BYTES)
            fmt_bytes(edge, lim, sizeof lim);
        else
            snprintf(lim, sizeof lim, "%" PRId64, edge);
        return bad(id, text, msg, msgsz, "out of range: the %s is %s%s%s",
                   low ? "minimum" : "maximum", lim, s->type == PLD__SET_DURATION ? " " : "",
                   s->type == PLD__SET_DURATION ? s->unit : "");
    }
    *out = (int64_t)mag;
    return PLD_OK;
}

static const pld__setting_word *find_word(const pld__setting_word *w, const char *word, size_t len)
{
    for (; w->word; w++)
        if (strlen(w->word) == len && !strncasecmp(w->word, word, len))
            return w;
    return NULL;
}

pld_status pld__setting_parse(pld__setting_id id, const char *text, pld__setting_value *out,
                              char *msg, size_t msgsz)
{
    const pld__setting *s = pld__setting_get(id);
    if (!s) {
        snprintf(msg, msgsz, "setting %d is not in the table", (int)id);
        return PLD_ERR_ARG;
    }
    pld__setting_value v = {.num = s->dflt};
    if (!text || !*text) {
        *out = v;
        return PLD_OK;
    }
    v.from_env = 1;
    v.str = text;
    pld_status st = PLD_OK;
    switch (s->type) {
    case PLD__SET_COUNT:
    case PLD__SET_BYTES:
    case PLD__SET_DURATION:
        st = parse_number(id, text, &v.num, msg, msgsz);
        break;
    case PLD__SET_BOOL:
        if (strcmp(text, "0") && strcmp(text, "1"))
            return bad(id, text, msg, msgsz, "not 0 or 1");
        v.num = text[0] == '1';
        break;
    case PLD__SET_FLAGS: {
        v.num = 0;
        int except = s->caret && text[0] == '^';
        for (const char *w = text + except;; w++) {
            size_t len = strcspn(w, ",");
            const pld__setting_word *f = find_word(s->words, w, len);
            if (!len)
                return bad(id, text, msg, msgsz, "empty word");
            if (!f)
                return bad(id, text, msg, msgsz, "unknown word '%.*s'", (int)(len > 32 ? 32 : len),
                           w);
            v.num |= f->value;
            w += len;
            if (!*w)
                break;
        }
        if (except) { /* every word's bits but the ones named */
            int64_t all = 0;
            for (const pld__setting_word *f = s->words; f->word; f++)
                all |= f->value;
            v.num = all & ~v.num;
        }
        break;
    }
    case PLD__SET_CHOICE: {
        const pld__setting_word *f = find_word(s->words, text, strlen(text));
        if (!f)
            return bad(id, text, msg, msgsz, "unknown word '%.32s'", text);
        v.num = f->value;
        break;
    }
    case PLD__SET_SEED: {
        const char *p = text;
        int base = 10, over = 0;
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
            p += 2, base = 16;
        if (!digits(&p, base, &v.seed, &over) || *p)
            return bad(id, text, msg, msgsz, "not a seed");
        if (over)
            return bad(id, text, msg, msgsz, "out of range: the maximum is %" PRIu64, UINT64_MAX);
        break;
    }
    case PLD__SET_PATH:
        for (const char *p = text; s->escapes && (p = strchr(p, '%')); p += 2)
            if (!p[1] || !strchr(s->escapes, p[1]))
                return bad(id, text, msg, msgsz, "unknown escape '%%%.1s'", p + 1);
        break;
    case PLD__SET_NAME:
        break;
    }
    if (st == PLD_OK)
        *out = v;
    return st;
}

/* Set on a thread while it builds the worlds that measure the cost model
 * (src/tune/tune_measure.c): they must run as pld's defaults do, whatever
 * the program's environment asks for (a trace, the explorer, checks). */
static _Thread_local int defaults_only;

void pld__settings_defaults_only(int on)
{
    defaults_only = on;
}

int pld__settings_are_defaults(void)
{
    return defaults_only;
}

static const char *env_of(const pld__setting *s)
{
    return s && !defaults_only ? getenv(s->name) : NULL;
}

pld_status pld__setting_read(pld__setting_id id, pld__setting_value *out, char *msg, size_t msgsz)
{
    return pld__setting_parse(id, env_of(pld__setting_get(id)), out, msg, msgsz);
}

pld_status pld__settings_check(char *msg, size_t msgsz)
{
    for (int i = 0; i < PLD__S_COUNT_; i++) {
        pld__setting_value v;
        if (table[i].test_only)
            continue;
        pld_status st = pld__setting_read((pld__setting_id)i, &v, msg, msgsz);
        if (st != PLD_OK)
            return st;
    }
    return PLD_OK;
}

int64_t pld__setting_num(pld__setting_id id)
{
    char msg[512];
    pld__setting_value v;
    if (pld__setting_read(id, &v, msg, sizeof msg) != PLD_OK)
        return table[id].dflt;
    return v.num;
}

const char *pld__setting_str(pld__setting_id id)
{
    const char *v = env_of(pld__setting_get(id));
    return v && *v ? v : NULL;
}
