/* SPDX-License-Identifier: Apache-2.0 */
/* Every PLD_* environment variable, in one table (src/core/settings.c).
 *
 * Each entry has a name, a type, a range and unit, a default and a doc
 * line. The library, the pld tool and the tests all read the environment
 * through here, so a value means the same everywhere and a value pld cannot
 * read (a typo, an unknown unit, an overflow) is an error naming the
 * variable and the accepted forms instead of a silent default.
 *
 * Self-contained (standard headers and pld/pld.h only): tools/pld.c and
 * tests/unit/test_settings.c include it too. */
#ifndef PLD_CORE_SETTINGS_H
#define PLD_CORE_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "pld/pld.h"

/* PLD_LL_BYTES when unset: the per-peer payload below which the one-round
 * path measured faster than the credit rounds (docs/performance.md). */
#define PLD__LL_BYTES_DEFAULT 4096
#define PLD__LL_BYTES_DEFAULT_TEXT "4K"

/* How a value is written. */
typedef enum pld__setting_type {
    PLD__SET_COUNT,    /* a decimal integer */
    PLD__SET_BYTES,    /* a decimal integer with an optional K, M or G suffix (x1024) */
    PLD__SET_DURATION, /* milliseconds: a bare integer, or with a unit ms, s, min */
    PLD__SET_BOOL,     /* 0 or 1 */
    PLD__SET_FLAGS,    /* comma-separated words, OR-ed */
    PLD__SET_CHOICE,   /* one word */
    PLD__SET_PATH,     /* any text (a file name) */
    PLD__SET_SEED,     /* an unsigned 64-bit integer, decimal or 0x hex */
    PLD__SET_NAME,     /* any text, read by the test library only */
} pld__setting_type;

/* The table, in the order `pld info --env` prints it. */
typedef enum pld__setting_id {
    PLD__S_WAIT_TIMEOUT_MS,
    PLD__S_CHECK,
    PLD__S_DEBUG,
    PLD__S_DEBUG_FILE,
    PLD__S_DEBUG_SUBSYS,
    PLD__S_TRACE,
    PLD__S_IR,
    PLD__S_IR_SVG,
    PLD__S_SCHED,
    PLD__S_UB_BYTES,
    PLD__S_LL_BYTES,
    PLD__S_SYNC,
    PLD__S_TREE_FANOUT,
    PLD__S_MAX_RANKS,
    PLD__S_URMA_SQ_DEPTH,
    PLD__S_STACK_BYTES,
    PLD__S_FIBERS,
    PLD__S_SPIN,
    PLD__S_YIELDS,
    PLD__S_PIN,
    PLD__S_MPI_SHM,
    PLD__S_TUNE_FILE,
    PLD__S_RULES,
    PLD__S_MUTANT,
    PLD__S_COUNT_
} pld__setting_id;

/* A word of a FLAGS or CHOICE setting and what it stands for. */
typedef struct pld__setting_word {
    const char *word;
    int64_t value;
} pld__setting_word;

typedef struct pld__setting {
    const char *name; /* "PLD_WAIT_TIMEOUT_MS" */
    pld__setting_type type;
    int64_t min, max;               /* COUNT, BYTES, DURATION (ms) */
    const char *unit;               /* printed after numbers: "ms", "bytes", "WQEBBs" */
    int64_t dflt;                   /* the value when unset (unless dflt_text says "auto") */
    const char *dflt_text;          /* the default as users read it */
    const pld__setting_word *words; /* FLAGS, CHOICE: {NULL, 0}-terminated */
    int test_only;                  /* read by the test library pld_mutants only */
    int caret;                      /* FLAGS: a leading ^ means every word but these */
    const char *escapes;            /* PATH: the letters allowed after a % ("hp") */
    const char *doc;                /* one line */
} pld__setting;

/* A value read from the environment, or the default. */
typedef struct pld__setting_value {
    int from_env;    /* 1: set in the environment; 0: the default */
    int64_t num;     /* COUNT, BYTES, DURATION (ms), BOOL, CHOICE, FLAGS (bits) */
    uint64_t seed;   /* SEED */
    const char *str; /* the text as given (NULL when unset) */
} pld__setting_value;

const pld__setting *pld__setting_get(pld__setting_id id);

/* Parses `text` as setting id. NULL or "" is unset: the default. On a bad
 * value returns PLD_ERR_ARG and writes "NAME=text: why (accepted: ...)"
 * into msg; *out is written only on success. */
pld_status pld__setting_parse(pld__setting_id id, const char *text, pld__setting_value *out,
                              char *msg, size_t msgsz);
/* The same for the environment's value. */
pld_status pld__setting_read(pld__setting_id id, pld__setting_value *out, char *msg, size_t msgsz);
/* Reads every user-facing setting; the first bad one is PLD_ERR_ARG with its
 * message. */
pld_status pld__settings_check(char *msg, size_t msgsz);

/* The value in effect where no error can be returned (logging, a
 * transport's set-up): the environment's when it parses, else the default.
 * World init has checked every setting before these run. */
int64_t pld__setting_num(pld__setting_id id);
/* on: this thread reads every setting as unset (the defaults) until off;
 * for the worlds the cost model measures with (src/tune/). */
void pld__settings_defaults_only(int on);
int pld__settings_are_defaults(void);
/* The environment's text, NULL when unset or empty. */
const char *pld__setting_str(pld__setting_id id);

/* "an integer in milliseconds 1..2147483647, or with a unit: 1500ms, 2s,
 * 5min" -- what the error messages and `pld info --env` print. */
const char *pld__setting_accepted(pld__setting_id id, char *buf, size_t n);
/* A value as users read it: "2000 ms", "4M", "race,signals", "WARN". */
const char *pld__setting_format(pld__setting_id id, const pld__setting_value *v, char *buf,
                                size_t n);

/* Applies the world's settings (src/core/settings_world.c): the config's
 * fields first, then the environment, then the defaults, some of which
 * depend on whether ranks outnumber CPUs (`nlaunched`: processes started
 * by an MPI launcher, 0 otherwise). PLD_ERR_ARG with pld_last_error set on
 * a bad value. */
pld_status pld__world_settings(pld_world *w, const pld_config *cfg, int nlaunched);

/* What a world runs with, for tests. */
int pld__world_wait_timeout_ms(const pld_world *w);
size_t pld__world_stack_bytes(const pld_world *w);
unsigned pld__world_check_bits(const pld_world *w);

#endif /* PLD_CORE_SETTINGS_H */
