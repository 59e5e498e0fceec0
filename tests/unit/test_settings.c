/* SPDX-License-Identifier: Apache-2.0 */
/* PLD_* settings are read strictly (src/core/settings.c): a value pld
 * cannot read -- not a number, out of range, an unknown unit, an unknown
 * word, an overflow -- is PLD_ERR_ARG at pld_world_init naming the
 * variable, the value and the accepted forms; every good form means what
 * the table says. Each test sets the variables it needs and unsets them
 * after (Criterion runs each test in its own process). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdlib.h>

#include "../../src/core/settings.h" /* the table, and what a world runs with */
#include "test_util.h"

/* pld_world_init with `var`=`value` must fail with PLD_ERR_ARG and a
 * message containing `words`. */
static void expect_bad(const char *var, const char *value, const char *words)
{
    setenv(var, value, 1);
    pld_config cfg = {.transport = getenv("PLD_TEST_TRANSPORT")};
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    unsetenv(var);
    cr_expect_eq(st, PLD_ERR_ARG, "%s=%s: pld_world_init = %s, expected PLD_ERR_ARG", var, value,
                 pld_status_name(st));
    if (st == PLD_OK) {
        pld_world_finalize(w);
        return;
    }
    TU_EXPECT_CONTAINS(pld_last_error(), words);
}

/* A world with `var`=`value` (NULL: unset); asserts it starts. */
static pld_world *world_with(const char *var, const char *value, const char *platform)
{
    if (value)
        setenv(var, value, 1);
    else
        unsetenv(var);
    pld_config cfg = {.transport = getenv("PLD_TEST_TRANSPORT"), .platform = platform};
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    cr_assert_eq(st, PLD_OK, "%s=%s: pld_world_init = %s: %s", var, value ? value : "(unset)",
                 pld_status_name(st), pld_last_error());
    unsetenv(var);
    return w;
}

static int timeout_with(const char *value)
{
    pld_world *w = world_with("PLD_WAIT_TIMEOUT_MS", value, NULL);
    int ms = pld__world_wait_timeout_ms(w);
    pld_world_finalize(w);
    return ms;
}

#define DURATION_FORMS                                                                             \
    "(accepted: an integer in milliseconds 1..2147483647, or with a unit: 1500ms, 2s, 5min)"

Test(settings, wait_timeout_bad_forms_are_errors, .timeout = 30)
{
    expect_bad("PLD_WAIT_TIMEOUT_MS", "abc",
               "pld_world_init: PLD_WAIT_TIMEOUT_MS=abc: not a duration " DURATION_FORMS);
    expect_bad("PLD_WAIT_TIMEOUT_MS", "-5",
               "PLD_WAIT_TIMEOUT_MS=-5: out of range: the minimum is 1 ms " DURATION_FORMS);
    expect_bad("PLD_WAIT_TIMEOUT_MS", "4G",
               "PLD_WAIT_TIMEOUT_MS=4G: unknown unit 'G' " DURATION_FORMS);
    expect_bad("PLD_WAIT_TIMEOUT_MS", "1e20",
               "PLD_WAIT_TIMEOUT_MS=1e20: not a duration " DURATION_FORMS);
    expect_bad("PLD_WAIT_TIMEOUT_MS", "0", "PLD_WAIT_TIMEOUT_MS=0: out of range: the minimum is 1");
    expect_bad("PLD_WAIT_TIMEOUT_MS", "2147483648", "out of range: the maximum is 2147483647 ms");
    /* 2^64 + 1 must not wrap to 1 */
    expect_bad("PLD_WAIT_TIMEOUT_MS", "18446744073709551617",
               "out of range: the maximum is 2147483647 ms");
    /* seconds past the int32 range after the multiply */
    expect_bad("PLD_WAIT_TIMEOUT_MS", "9999999999s", "out of range: the maximum is");
    expect_bad("PLD_WAIT_TIMEOUT_MS", "1.5s", "PLD_WAIT_TIMEOUT_MS=1.5s: not a duration");
    expect_bad("PLD_WAIT_TIMEOUT_MS", " 100", "not a duration");
    expect_bad("PLD_WAIT_TIMEOUT_MS", "1h", "unknown unit 'h'");
}

Test(settings, wait_timeout_good_forms, .timeout = 30)
{
    cr_expect_eq(timeout_with(NULL), 60000);
    cr_expect_eq(timeout_with(""), 60000, "an empty value is unset");
    cr_expect_eq(timeout_with("250"), 250, "a bare integer is milliseconds");
    cr_expect_eq(timeout_with("1000ms"), 1000);
    cr_expect_eq(timeout_with("1s"), 1000);
    cr_expect_eq(timeout_with("2min"), 120000);
    cr_expect_eq(timeout_with("010"), 10, "decimal, not octal");
    cr_expect_eq(timeout_with("2147483647"), 2147483647);
    /* the config's field wins over the environment */
    setenv("PLD_WAIT_TIMEOUT_MS", "1s", 1);
    pld_config cfg = {.transport = getenv("PLD_TEST_TRANSPORT"), .wait_timeout_ms = 5};
    pld_world *w = tu_world_cfg(&cfg);
    cr_expect_eq(pld__world_wait_timeout_ms(w), 5);
    pld_world_finalize(w);
    unsetenv("PLD_WAIT_TIMEOUT_MS");
}

Test(settings, check_words_are_strict, .timeout = 30)
{
    expect_bad("PLD_CHECK", "races",
               "pld_world_init: PLD_CHECK=races: unknown word 'races' (accepted: signals, race, "
               "noargs, hazards, all, comma-separated)");
    expect_bad("PLD_CHECK", "race,signal", "PLD_CHECK=race,signal: unknown word 'signal'");
    expect_bad("PLD_CHECK", "race,", "PLD_CHECK=race,: empty word");
    expect_bad("PLD_CHECK", "race signals", "unknown word 'race signals'");

    /* the world ORs the words into its check bits (race runs on the thread
     * transport only: the words alone for it) */
    pld_world *w = world_with("PLD_CHECK", "signals,NoArgs", NULL);
    cr_expect_eq(pld__world_check_bits(w), PLD_CHECK_SIGNALS | PLD_CHECK_NOARGS,
                 "words are case-insensitive");
    pld_world_finalize(w);
    pld__setting_value v;
    char msg[512];
    cr_assert_eq(pld__setting_parse(PLD__S_CHECK, "race,signals", &v, msg, sizeof msg), PLD_OK);
    cr_expect_eq(v.num, PLD_CHECK_RACE | PLD_CHECK_SIGNALS);
    cr_assert_eq(pld__setting_parse(PLD__S_CHECK, "all", &v, msg, sizeof msg), PLD_OK);
    cr_expect_eq(v.num, PLD_CHECK_RACE | PLD_CHECK_SIGNALS);
}

#define BYTES_FORMS "(accepted: a size in bytes 1K..1G, a bare integer or with a suffix K, M or G"

Test(settings, ub_bytes_bad_forms_are_errors, .timeout = 30)
{
    expect_bad("PLD_UB_BYTES", "abc",
               "pld_world_init: PLD_UB_BYTES=abc: not a size in bytes " BYTES_FORMS);
    expect_bad("PLD_UB_BYTES", "1T", "PLD_UB_BYTES=1T: unknown unit 'T' " BYTES_FORMS);
    /* used to shift into the sign bit (UBSan) and echo garbage */
    expect_bad("PLD_UB_BYTES", "99999999999G",
               "PLD_UB_BYTES=99999999999G: out of range: the maximum is 1G " BYTES_FORMS);
    expect_bad("PLD_UB_BYTES", "2G", "PLD_UB_BYTES=2G: out of range: the maximum is 1G");
    expect_bad("PLD_UB_BYTES", "512", "PLD_UB_BYTES=512: out of range: the minimum is 1K");
    expect_bad("PLD_UB_BYTES", "-1K", "PLD_UB_BYTES=-1K: out of range: the minimum is 1K");
    expect_bad("PLD_UB_BYTES", "64KB", "PLD_UB_BYTES=64KB: unknown unit 'KB'");
}

static size_t ub_with(const char *value)
{
    pld_world *w = world_with("PLD_UB_BYTES", value, NULL);
    pld_info_limits lim;
    pld_world_limits(w, &lim);
    pld_world_finalize(w);
    return lim.ub_bytes;
}

Test(settings, ub_bytes_good_forms, .timeout = 30)
{
    cr_expect_eq(ub_with(NULL), 192 * 1024);
    cr_expect_eq(ub_with(""), 192 * 1024);
    cr_expect_eq(ub_with("65536"), 65536);
    cr_expect_eq(ub_with("64K"), 65536);
    cr_expect_eq(ub_with("64k"), 65536);
    cr_expect_eq(ub_with("1M"), 1 << 20);
    cr_expect_eq(ub_with("1G"), 1 << 30);
}

Test(settings, urma_sq_depth, .timeout = 30)
{
    expect_bad("PLD_URMA_SQ_DEPTH", "abc",
               "pld_world_init: PLD_URMA_SQ_DEPTH=abc: not an integer (accepted: an integer "
               "4..1048576 (WQEBBs))");
    expect_bad("PLD_URMA_SQ_DEPTH", "3", "PLD_URMA_SQ_DEPTH=3: out of range: the minimum is 4");
    expect_bad("PLD_URMA_SQ_DEPTH", "8K", "PLD_URMA_SQ_DEPTH=8K: not an integer");
    pld_world *w = world_with("PLD_URMA_SQ_DEPTH", "8", "a5sim");
    pld_info_limits lim;
    pld_world_limits(w, &lim);
    cr_expect_eq(lim.sq_depth, 8);
    pld_world_finalize(w);
}

Test(settings, debug_level_is_a_known_word, .timeout = 30)
{
    expect_bad("PLD_DEBUG", "bogus",
               "pld_world_init: PLD_DEBUG=bogus: unknown word 'bogus' (accepted: one of OFF, "
               "WARN, INFO, TRACE)");
    expect_bad("PLD_DEBUG", "1", "PLD_DEBUG=1: unknown word '1'");
    pld_world_finalize(world_with("PLD_DEBUG", "off", NULL));
}

Test(settings, booleans_are_0_or_1, .timeout = 30)
{
    expect_bad("PLD_PIN", "abc", "pld_world_init: PLD_PIN=abc: not 0 or 1 (accepted: 0 or 1)");
    expect_bad("PLD_PIN", "-1", "PLD_PIN=-1: not 0 or 1 (accepted: 0 or 1)");
    expect_bad("PLD_IR", "yes", "PLD_IR=yes: not 0 or 1");
    /* a transport this world does not use still has its typo reported */
    expect_bad("PLD_MPI_SHM", "2", "PLD_MPI_SHM=2: not 0 or 1");
    pld_world_finalize(world_with("PLD_PIN", "0", NULL));
    pld_world_finalize(world_with("PLD_IR", "0", NULL));
}

Test(settings, spin_and_yields_are_counts, .timeout = 30)
{
    expect_bad("PLD_SPIN", "-1",
               "PLD_SPIN=-1: out of range: the minimum is 0 (accepted: an "
               "integer 0..2147483647 (iterations))");
    expect_bad("PLD_YIELDS", "lots", "PLD_YIELDS=lots: not an integer");
    expect_bad("PLD_SPIN", "2147483648", "out of range: the maximum is 2147483647");
    pld_world_finalize(world_with("PLD_SPIN", "0", NULL));
}

Test(settings, sched_seed, .timeout = 30)
{
    expect_bad("PLD_SCHED", "x",
               "pld_world_init: PLD_SCHED=x: not a seed (accepted: an integer "
               "0..18446744073709551615, decimal or 0x hex)");
    expect_bad("PLD_SCHED", "18446744073709551616", "PLD_SCHED=18446744073709551616: out of range");
    expect_bad("PLD_SCHED", "-1", "PLD_SCHED=-1: not a seed");
    pld__setting_value v;
    char msg[512];
    cr_assert_eq(pld__setting_parse(PLD__S_SCHED, "0x10", &v, msg, sizeof msg), PLD_OK, "%s", msg);
    cr_expect_eq(v.seed, 16);
    cr_assert_eq(pld__setting_parse(PLD__S_SCHED, "18446744073709551615", &v, msg, sizeof msg),
                 PLD_OK, "%s", msg);
    cr_expect_eq(v.seed, UINT64_MAX);
}

/* touches 32 KiB of the rank thread's stack */
static void kernel_stack(pld_ctx *c, void *arg)
{
    (void)c;
    (void)arg;
    volatile char buf[32 << 10];
    for (size_t i = 0; i < sizeof buf; i += 512)
        buf[i] = (char)i;
}

Test(settings, stack_bytes, .timeout = 30)
{
    expect_bad("PLD_STACK_BYTES", "abc",
               "pld_world_init: PLD_STACK_BYTES=abc: not a size in bytes "
               "(accepted: a size in bytes 64K..1G");
    expect_bad("PLD_STACK_BYTES", "1K", "PLD_STACK_BYTES=1K: out of range: the minimum is 64K");
    expect_bad("PLD_STACK_BYTES", "2G", "PLD_STACK_BYTES=2G: out of range: the maximum is 1G");
    expect_bad("PLD_STACK_BYTES", "4MB", "PLD_STACK_BYTES=4MB: unknown unit 'MB'");
    expect_bad("PLD_STACK_BYTES", "99999999999G", "out of range: the maximum is 1G");

    pld_world *w = world_with("PLD_STACK_BYTES", NULL, NULL);
    cr_expect_eq(pld__world_stack_bytes(w), (size_t)4 << 20, "default 4M");
    pld_world_finalize(w);
    w = world_with("PLD_STACK_BYTES", "8M", NULL);
    cr_expect_eq(pld__world_stack_bytes(w), (size_t)8 << 20);
    pld_world_finalize(w);
    /* a small stack (not below the system's minimum) still runs a launch */
    w = world_with("PLD_STACK_BYTES", "256K", NULL);
    cr_expect_geq(pld__world_stack_bytes(w), (size_t)256 << 10);
    TU_LAUNCH_OK(w, kernel_stack, NULL);
    pld_world_finalize(w);
}

Test(settings, runaway_value_is_cut_in_the_message, .timeout = 30)
{
    char big[400];
    memset(big, '7', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    expect_bad("PLD_WAIT_TIMEOUT_MS", big, "...: out of range: the maximum is 2147483647 ms");
    cr_expect_lt(strlen(pld_last_error()), 300, "message: %s", pld_last_error());
}

Test(settings, table_is_complete, .timeout = 30)
{
    for (int i = 0; i < PLD__S_COUNT_; i++) {
        const pld__setting *s = pld__setting_get((pld__setting_id)i);
        cr_assert(s && s->name, "entry %d has no name", i);
        TU_EXPECT_STARTS(s->name, "PLD_");
        cr_expect(s->doc && *s->doc, "%s has no doc line", s->name);
        cr_expect(s->dflt_text && *s->dflt_text, "%s has no default text", s->name);
        if (s->type == PLD__SET_COUNT || s->type == PLD__SET_BYTES ||
            s->type == PLD__SET_DURATION) {
            cr_expect_lt(s->min, s->max, "%s: range", s->name);
            cr_expect(s->unit && *s->unit, "%s has no unit", s->name);
        }
        /* unset parses to the default */
        pld__setting_value v;
        char msg[512];
        cr_expect_eq(pld__setting_parse((pld__setting_id)i, NULL, &v, msg, sizeof msg), PLD_OK);
        cr_expect_eq(v.from_env, 0);
        cr_expect_eq(v.num, s->dflt);
    }
    cr_expect_null(pld__setting_get(PLD__S_COUNT_));
}

Test(settings, debug_subsys_words_and_caret, .timeout = 30)
{
    expect_bad("PLD_DEBUG_SUBSYS", "bogus",
               "pld_world_init: PLD_DEBUG_SUBSYS=bogus: unknown word 'bogus' (accepted: INIT, "
               "COLL, TRANSPORT, CHECK, ALL, comma-separated; a leading ^ excludes them)");
    expect_bad("PLD_DEBUG_SUBSYS", "^", "PLD_DEBUG_SUBSYS=^: empty word");
    expect_bad("PLD_DEBUG_SUBSYS", "INIT,^COLL", "unknown word '^COLL'");
    /* ^ is PLD_DEBUG_SUBSYS's, not every flag setting's */
    expect_bad("PLD_CHECK", "^race", "PLD_CHECK=^race: unknown word '^race'");
    pld__setting_value v;
    char msg[512], out[128];
    const pld__setting *s = pld__setting_get(PLD__S_DEBUG_SUBSYS);
    cr_assert_eq(pld__setting_parse(PLD__S_DEBUG_SUBSYS, NULL, &v, msg, sizeof msg), PLD_OK);
    cr_expect_eq(v.num, s->dflt, "unset is ALL");
    cr_assert_eq(pld__setting_parse(PLD__S_DEBUG_SUBSYS, "ALL", &v, msg, sizeof msg), PLD_OK);
    cr_expect_eq(v.num, s->dflt);
    cr_assert_eq(pld__setting_parse(PLD__S_DEBUG_SUBSYS, "coll,Check", &v, msg, sizeof msg), PLD_OK,
                 "%s", msg);
    cr_expect_str_eq(pld__setting_format(PLD__S_DEBUG_SUBSYS, &v, out, sizeof out), "COLL,CHECK");
    cr_assert_eq(pld__setting_parse(PLD__S_DEBUG_SUBSYS, "^INIT,COLL", &v, msg, sizeof msg), PLD_OK,
                 "%s", msg);
    cr_expect_str_eq(pld__setting_format(PLD__S_DEBUG_SUBSYS, &v, out, sizeof out),
                     "TRANSPORT,CHECK");
    cr_assert_eq(pld__setting_parse(PLD__S_DEBUG_SUBSYS, "^ALL", &v, msg, sizeof msg), PLD_OK);
    cr_expect_eq(v.num, 0);
    pld_world_finalize(world_with("PLD_DEBUG_SUBSYS", "^init", NULL));
}

Test(settings, debug_file_escapes, .timeout = 30)
{
    expect_bad("PLD_DEBUG_FILE", "/tmp/pld.%q",
               "pld_world_init: PLD_DEBUG_FILE=/tmp/pld.%q: unknown escape '%q' (accepted: a "
               "file path; %h: host name, %p: process id)");
    expect_bad("PLD_DEBUG_FILE", "/tmp/pld.%", "PLD_DEBUG_FILE=/tmp/pld.%: unknown escape '%'");
    /* a file that cannot be opened is an error at init -- when there is a log */
    setenv("PLD_DEBUG", "WARN", 1);
    expect_bad("PLD_DEBUG_FILE", "/nonexistent-dir/pld.%p",
               "pld_world_init: PLD_DEBUG_FILE=/nonexistent-dir/pld.%p: '/nonexistent-dir/pld.");
    unsetenv("PLD_DEBUG");
    pld_world_finalize(world_with("PLD_DEBUG_FILE", "/nonexistent-dir/pld.%p", NULL));
    pld__setting_value v;
    char msg[512];
    cr_expect_eq(pld__setting_parse(PLD__S_DEBUG_FILE, "/tmp/l.%h.%p.%%", &v, msg, sizeof msg),
                 PLD_OK, "%s", msg);
    /* the names it makes are checked in test_log.c */
}
