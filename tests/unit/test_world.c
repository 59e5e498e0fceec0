/* SPDX-License-Identifier: Apache-2.0 */
/* World configuration, device lists, profiles, command-line parsing,
 * version and name tables. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

static void clean_env(void)
{
    unsetenv("PLD_UB_BYTES");
    unsetenv("PLD_IR");
    unsetenv("PLD_WAIT_TIMEOUT_MS");
}

/* ---- kernels ------------------------------------------------------------ */

typedef struct ident_out {
    int ran[8];
    int rank[8];
    int nranks[8];
    int device[8];
    int64_t ub_cap[8];
} ident_out;

static void k_ident(pld_ctx *c, void *arg)
{
    ident_out *o = arg;
    int r = pld_rank(c);
    KCHECK(c, r >= 0 && r < 8, "rank %d out of the test's range", r);
    o->ran[r] = 1;
    o->rank[r] = r;
    o->nranks[r] = pld_nranks(c);
    o->device[r] = pld_device(c);
    o->ub_cap[r] = (int64_t)pld_ub_capacity(c);
}

static void k_barrier(pld_ctx *c, void *arg)
{
    pld_dtensor *sig = arg;
    pld_barrier(c, *sig);
}

/* ---- defaults ----------------------------------------------------------- */

static void check_defaults(pld_world *w)
{
    cr_assert_eq(pld_world_size(w), 2, "world size %d, expected 2", pld_world_size(w));
    cr_expect_eq(pld_device_id(w, 0), 0, "device of rank 0: %d, expected 0", pld_device_id(w, 0));
    cr_expect_eq(pld_device_id(w, 1), 1, "device of rank 1: %d, expected 1", pld_device_id(w, 1));
    cr_expect_eq(pld_device_id(w, 2), -1, "device of rank 2: %d, expected -1", pld_device_id(w, 2));
    cr_expect_eq(pld_device_id(w, -1), -1, "device of rank -1: %d, expected -1",
                 pld_device_id(w, -1));
    cr_expect_str_eq(pld_world_platform(w), "a2a3sim", "platform '%s', expected 'a2a3sim'",
                     pld_world_platform(w));
    cr_expect_str_eq(pld_world_transport(w), "thread", "transport '%s', expected 'thread'",
                     pld_world_transport(w));
    cr_expect(pld_is_root_process(w), "the only process of a thread world is the root");
    cr_expect_str_eq(pld_world_error(w), "", "fresh world has error '%s'", pld_world_error(w));
}

Test(world, defaults_null_cfg, .timeout = 30)
{
    clean_env();
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, NULL);
    cr_assert_eq(st, PLD_OK, "pld_world_init(NULL) = %s: %s", pld_status_name(st),
                 pld_last_error());
    check_defaults(w);

    ident_out *o = tu_host_alloc(w, sizeof *o);
    TU_LAUNCH_OK(w, k_ident, o);
    for (int r = 0; r < 2; r++) {
        cr_expect_eq(o->ran[r], 1, "rank %d did not run", r);
        cr_expect_eq(o->nranks[r], 2, "rank %d: nranks %d", r, o->nranks[r]);
        cr_expect_eq(o->device[r], r, "rank %d: device %d", r, o->device[r]);
        cr_expect_eq(o->ub_cap[r], 192 * 1024, "rank %d: UB capacity %lld, expected 196608", r,
                     (long long)o->ub_cap[r]);
    }
    pld_host_free(w, o);
    pld_world_finalize(w);
}

Test(world, defaults_zeroed_cfg, .timeout = 30)
{
    clean_env();
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    cr_assert_eq(st, PLD_OK, "pld_world_init(zeroed cfg) = %s: %s", pld_status_name(st),
                 pld_last_error());
    check_defaults(w);
    pld_world_finalize(w);
}

/* ---- device lists ------------------------------------------------------- */

typedef struct dev_case {
    const char *list;
    int n;
    int ids[8];
} dev_case;

Test(world, device_lists, .timeout = 30)
{
    const dev_case cases[] = {
        {"0,1", 2, {0, 1}},           {"0-3", 4, {0, 1, 2, 3}},     {"4,5", 2, {4, 5}},
        {"0-1,6-7", 4, {0, 1, 6, 7}}, {"0,1,2,3", 4, {0, 1, 2, 3}}, {"3", 1, {3}},
        {"7,2", 2, {7, 2}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const dev_case *dc = &cases[i];
        pld_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.devices = dc->list;
        pld_world *w = NULL;
        pld_status st = pld_world_init(&w, &cfg);
        cr_assert_eq(st, PLD_OK, "devices \"%s\": %s: %s", dc->list, pld_status_name(st),
                     pld_last_error());
        cr_expect_eq(pld_world_size(w), dc->n, "devices \"%s\": size %d, expected %d", dc->list,
                     pld_world_size(w), dc->n);
        for (int r = 0; r < dc->n; r++)
            cr_expect_eq(pld_device_id(w, r), dc->ids[r],
                         "devices \"%s\": rank %d on %d, expected %d", dc->list, r,
                         pld_device_id(w, r), dc->ids[r]);
        cr_expect_eq(pld_device_id(w, dc->n), -1, "devices \"%s\": rank %d should not exist",
                     dc->list, dc->n);
        pld_world_finalize(w);
    }
}

/* Non-contiguous device ids reach the kernel (pld_device) unchanged. */
Test(world, device_ids_in_kernel, .timeout = 30)
{
    pld_world *w = tu_world("0-1,6-7");
    ident_out *o = tu_host_alloc(w, sizeof *o);
    TU_LAUNCH_OK(w, k_ident, o);
    const int want[4] = {0, 1, 6, 7};
    for (int r = 0; r < 4; r++) {
        cr_expect_eq(o->ran[r], 1, "rank %d did not run", r);
        cr_expect_eq(o->rank[r], r, "slot %d: rank %d", r, o->rank[r]);
        cr_expect_eq(o->nranks[r], 4, "rank %d: nranks %d, expected 4", r, o->nranks[r]);
        cr_expect_eq(o->device[r], want[r], "rank %d: device %d, expected %d", r, o->device[r],
                     want[r]);
    }
    cr_expect_eq(o->ran[4], 0, "a fifth rank ran in a 4-rank world");
    pld_host_free(w, o);
    pld_world_finalize(w);
}

Test(world, single_rank_world, .timeout = 30)
{
    pld_world *w = tu_world("5");
    cr_assert_eq(pld_world_size(w), 1);
    ident_out *o = tu_host_alloc(w, sizeof *o);
    TU_LAUNCH_OK(w, k_ident, o);
    cr_expect_eq(o->ran[0], 1);
    cr_expect_eq(o->nranks[0], 1, "nranks %d, expected 1", o->nranks[0]);
    cr_expect_eq(o->device[0], 5, "device %d, expected 5", o->device[0]);
    pld_host_free(w, o);
    pld_world_finalize(w);
}

Test(world, bad_device_lists, .timeout = 30)
{
    const char *bad[] = {"", "3-1", "0,0", "a", "0,,1", "0-1,1", "-1", "1-"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pld_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.devices = bad[i];
        int sentinel;
        pld_world *w = (pld_world *)(void *)&sentinel;
        pld_status st = pld_world_init(&w, &cfg);
        cr_expect_eq(st, PLD_ERR_ARG, "devices \"%s\": %s, expected PLD_ERR_ARG", bad[i],
                     pld_status_name(st));
        cr_expect_eq((void *)w, (void *)&sentinel,
                     "devices \"%s\": *out must be untouched on failure", bad[i]);
        cr_expect_neq(pld_last_error()[0], '\0', "devices \"%s\": pld_last_error() is empty",
                      bad[i]);
        if (st == PLD_OK && (void *)w != (void *)&sentinel)
            pld_world_finalize(w);
    }
}

/* ---- platform profiles and transports ----------------------------------- */

static void expect_platform(const char *name, const char *canonical)
{
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.platform = name;
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    cr_assert_eq(st, PLD_OK, "platform '%s': %s: %s", name, pld_status_name(st), pld_last_error());
    cr_expect_str_eq(pld_world_platform(w), canonical,
                     "platform '%s' resolved to '%s', expected '%s'", name, pld_world_platform(w),
                     canonical);
    ident_out *o = tu_host_alloc(w, sizeof *o);
    TU_LAUNCH_OK(w, k_ident, o);
    cr_expect_eq(o->ub_cap[0], 192 * 1024, "platform '%s': UB %lld, expected 196608", name,
                 (long long)o->ub_cap[0]);
    pld_host_free(w, o);
    pld_world_finalize(w);
}

Test(world, platform_profiles, .timeout = 30)
{
    clean_env();
    expect_platform("a2a3sim", "a2a3sim");
    expect_platform("a5sim", "a5sim");
    expect_platform("sim", "a2a3sim");
}

Test(world, hardware_platforms_unsupported, .timeout = 30)
{
    const char *hw[] = {"a2a3", "a5"};
    for (int i = 0; i < 2; i++) {
        pld_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.platform = hw[i];
        int sentinel;
        pld_world *w = (pld_world *)(void *)&sentinel;
        pld_status st = pld_world_init(&w, &cfg);
        cr_expect_eq(st, PLD_ERR_UNSUPPORTED, "platform '%s': %s, expected PLD_ERR_UNSUPPORTED",
                     hw[i], pld_status_name(st));
        cr_expect_eq((void *)w, (void *)&sentinel, "platform '%s': *out touched", hw[i]);
        const char *msg = pld_last_error();
        cr_expect(tu_icontains(msg, "NPU") && tu_icontains(msg, "backend"),
                  "platform '%s': message should say there is no NPU backend, got \"%s\"", hw[i],
                  msg);
    }
}

Test(world, unknown_platform_and_transport, .timeout = 30)
{
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.platform = "tpu9";
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    cr_expect_eq(st, PLD_ERR_ARG, "platform 'tpu9': %s, expected PLD_ERR_ARG", pld_status_name(st));
    cr_expect_neq(pld_last_error()[0], '\0', "no message for an unknown platform");

    memset(&cfg, 0, sizeof cfg);
    cfg.transport = "carrier-pigeon";
    w = NULL;
    st = pld_world_init(&w, &cfg);
    cr_expect(st == PLD_ERR_ARG || st == PLD_ERR_UNSUPPORTED,
              "transport 'carrier-pigeon': %s, expected PLD_ERR_ARG or PLD_ERR_UNSUPPORTED",
              pld_status_name(st));
    cr_expect_null(w, "world created for an unknown transport");
    cr_expect_neq(pld_last_error()[0], '\0', "no message for an unknown transport");
}

Test(world, explicit_thread_transport, .timeout = 30)
{
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.transport = "thread";
    cfg.devices = "0-2";
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_last_error());
    cr_expect_str_eq(pld_world_transport(w), "thread");
    cr_expect_eq(pld_world_size(w), 3);
    pld_world_finalize(w);
}

/* Worlds can be created and finalized repeatedly (nothing leaks into the
 * next one). */
Test(world, repeated_init_finalize, .timeout = 30)
{
    for (int i = 0; i < 20; i++) {
        pld_world *w = tu_world(i % 2 ? "0-3" : "4,5");
        pld_dtensor sig = tu_signal(w, "sig", 1);
        TU_LAUNCH_OK(w, k_barrier, &sig);
        pld_world_finalize(w);
    }
}

/* ---- pld_world_init_from_args ------------------------------------------- */

static void free_argv(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void expect_args(int argc, char **argv, int want_argc, const char *const *want)
{
    cr_expect_eq(argc, want_argc, "argc %d after parsing, expected %d", argc, want_argc);
    for (int i = 0; i < want_argc && i < argc; i++)
        cr_expect_str_eq(argv[i], want[i], "argv[%d] = '%s', expected '%s'", i, argv[i], want[i]);
    cr_expect_null(argv[argc], "argv[argc] must stay NULL");
}

Test(world, from_args_short_options, .timeout = 30)
{
    clean_env();
    const char *src[] = {"prog",      "-p",          "a5sim",  "--keep", "-d", "4,5",
                         "input.bin", "--transport", "thread", "--ir",   "-x"};
    int n = (int)(sizeof src / sizeof src[0]);
    char **argv = tu_argv(n, src);
    char **orig = malloc(sizeof(char *) * (size_t)(n + 1));
    memcpy(orig, argv, sizeof(char *) * (size_t)(n + 1));
    int argc = n;
    pld_world *w = NULL;
    pld_status st = pld_world_init_from_args(&w, &argc, &argv);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_last_error());
    const char *want[] = {"prog", "--keep", "input.bin", "-x"};
    expect_args(argc, argv, 4, want);
    cr_expect_str_eq(pld_world_platform(w), "a5sim");
    cr_expect_str_eq(pld_world_transport(w), "thread");
    cr_expect_eq(pld_world_size(w), 2);
    cr_expect_eq(pld_device_id(w, 0), 4, "rank 0 on device %d", pld_device_id(w, 0));
    cr_expect_eq(pld_device_id(w, 1), 5, "rank 1 on device %d", pld_device_id(w, 1));

    /* --ir: rank 0's lowering is recorded. */
    pld_dtensor sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_barrier, &sig);
    const char *ir = pld_ir_text(w);
    cr_expect(ir && ir[0] != '\0', "--ir given but pld_ir_text() is empty");
    pld_world_finalize(w);
    free_argv(orig, n);
    if (argv != orig)
        free(argv);
}

Test(world, from_args_long_and_equals_forms, .timeout = 30)
{
    clean_env();
    const char *src[] = {"prog", "--platform=sim", "a", "--device=0-2", "--transport=thread",
                         "b",    "--verbose"};
    int n = (int)(sizeof src / sizeof src[0]);
    char **argv = tu_argv(n, src);
    int argc = n;
    pld_world *w = NULL;
    pld_status st = pld_world_init_from_args(&w, &argc, &argv);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_last_error());
    const char *want[] = {"prog", "a", "b", "--verbose"};
    expect_args(argc, argv, 4, want);
    cr_expect_str_eq(pld_world_platform(w), "a2a3sim");
    cr_expect_eq(pld_world_size(w), 3, "size %d, expected 3", pld_world_size(w));
    cr_expect_eq(pld_device_id(w, 2), 2);

    /* No --ir: nothing recorded. */
    pld_dtensor sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, k_barrier, &sig);
    const char *ir = pld_ir_text(w);
    cr_expect(ir && ir[0] == '\0', "no --ir but pld_ir_text() = \"%s\"", ir ? ir : "(null)");
    pld_world_finalize(w);
}

Test(world, from_args_long_separate_values, .timeout = 30)
{
    clean_env();
    const char *src[] = {"prog", "--platform", "a5sim", "--device", "0-1,6-7", "z"};
    int n = (int)(sizeof src / sizeof src[0]);
    char **argv = tu_argv(n, src);
    int argc = n;
    pld_world *w = NULL;
    pld_status st = pld_world_init_from_args(&w, &argc, &argv);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_last_error());
    const char *want[] = {"prog", "z"};
    expect_args(argc, argv, 2, want);
    cr_expect_str_eq(pld_world_platform(w), "a5sim");
    cr_expect_eq(pld_world_size(w), 4);
    cr_expect_eq(pld_device_id(w, 3), 7);
    pld_world_finalize(w);
}

Test(world, from_args_nothing_to_consume, .timeout = 30)
{
    clean_env();
    const char *src[] = {"prog", "x", "y"};
    char **argv = tu_argv(3, src);
    int argc = 3;
    pld_world *w = NULL;
    pld_status st = pld_world_init_from_args(&w, &argc, &argv);
    cr_assert_eq(st, PLD_OK, "%s: %s", pld_status_name(st), pld_last_error());
    expect_args(argc, argv, 3, src);
    check_defaults(w);
    pld_world_finalize(w);
}

/* pld_config_from_args: the same options into a config the caller keeps
 * setting (its other fields untouched), removed from argv at once. */
Test(world, config_from_args_keeps_the_other_fields, .timeout = 30)
{
    clean_env();
    const char *src[] = {"prog", "-d", "0-2", "--mode", "hand", "--transport=thread", "--ir"};
    int n = (int)(sizeof src / sizeof src[0]);
    char **argv = tu_argv(n, src);
    char **orig = malloc(sizeof(char *) * (size_t)(n + 1));
    memcpy(orig, argv, sizeof(char *) * (size_t)(n + 1));
    int argc = n;
    pld_config cfg = {.platform = "a5sim", .wait_timeout_ms = 1234, .fork_each_launch = 1};
    cr_assert_eq(pld_config_from_args(&cfg, &argc, &argv), PLD_OK, "%s", pld_last_error());
    const char *want[] = {"prog", "--mode", "hand"};
    expect_args(argc, argv, 3, want);
    cr_expect_str_eq(cfg.devices, "0-2");
    cr_expect_str_eq(cfg.transport, "thread");
    cr_expect_str_eq(cfg.platform, "a5sim", "a field no option names is kept");
    cr_expect_eq(cfg.ir, 1);
    cr_expect_eq(cfg.wait_timeout_ms, 1234);
    cr_expect_eq(cfg.fork_each_launch, 1);
    pld_world *w = NULL;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK, "%s", pld_last_error());
    cr_expect_eq(pld_world_size(w), 3);
    pld_world_finalize(w);
    /* a missing value: PLD_ERR_ARG, cfg and argv untouched */
    const char *bad[] = {"prog", "x", "-d"};
    char **argv2 = tu_argv(3, bad);
    int argc2 = 3;
    pld_config cfg2 = {.devices = "0,1"};
    cr_expect_eq(pld_config_from_args(&cfg2, &argc2, &argv2), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_last_error(), "option -d needs a value");
    cr_expect_eq(argc2, 3);
    cr_expect_str_eq(cfg2.devices, "0,1");
    cr_expect_eq(pld_config_from_args(NULL, &argc2, &argv2), PLD_ERR_ARG);
    free_argv(argv2, 3);
    free_argv(orig, n);
    if (argv != orig)
        free(argv);
}

/* fork_each_launch: the process transport's workers are forked at each
 * launch, so a kernel sees the host's memory as it is at that launch (a
 * global the host changed after pld_world_init); forked once, at init,
 * they keep the value they had then. */
static int host_generation;

static void k_report_generation(pld_ctx *c, void *arg)
{
    int32_t *seen = arg;
    seen[pld_rank(c)] = host_generation;
}

static void expect_generation(int fork_each_launch, int want_second)
{
    host_generation = 1;
    pld_config cfg = {
        .devices = "0,1", .transport = "process", .fork_each_launch = fork_each_launch};
    pld_world *w = NULL;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK, "%s", pld_last_error());
    int32_t *seen = tu_host_alloc(w, 2 * sizeof *seen);
    TU_LAUNCH_OK(w, k_report_generation, seen);
    cr_expect(seen[0] == 1 && seen[1] == 1, "first launch saw %d, %d", seen[0], seen[1]);
    host_generation = 2; /* after the workers were first forked */
    TU_LAUNCH_OK(w, k_report_generation, seen);
    cr_expect(seen[0] == want_second && seen[1] == want_second,
              "fork_each_launch=%d: second launch saw %d, %d, expected %d", fork_each_launch,
              seen[0], seen[1], want_second);
    pld_world_finalize(w);
}

Test(world, fork_each_launch_sees_the_host_as_it_is, .timeout = 60)
{
    clean_env();
    expect_generation(1, 2);
    expect_generation(0, 1);
}

Test(world, from_args_errors, .timeout = 30)
{
    struct {
        int n;
        const char *args[4];
        pld_status want;
    } cases[] = {
        {2, {"prog", "-d"}, PLD_ERR_ARG},
        {2, {"prog", "--device"}, PLD_ERR_ARG},
        {2, {"prog", "-p"}, PLD_ERR_ARG},
        {3, {"prog", "-d", "3-1"}, PLD_ERR_ARG},
        {2, {"prog", "--device=0,,1"}, PLD_ERR_ARG},
        {3, {"prog", "-p", "a5"}, PLD_ERR_UNSUPPORTED},
        {2, {"prog", "--platform=a2a3"}, PLD_ERR_UNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char **argv = tu_argv(cases[i].n, cases[i].args);
        int argc = cases[i].n;
        pld_world *w = NULL;
        pld_status st = pld_world_init_from_args(&w, &argc, &argv);
        cr_expect_eq(st, cases[i].want, "case %zu (%s %s): %s, expected %s", i, cases[i].args[1],
                     cases[i].n > 2 ? cases[i].args[2] : "", pld_status_name(st),
                     pld_status_name(cases[i].want));
        cr_expect_null(w, "case %zu: world created on failure", i);
        cr_expect_neq(pld_last_error()[0], '\0', "case %zu: no message", i);
        if (st == PLD_OK && w)
            pld_world_finalize(w);
    }
}

/* ---- version and name tables ------------------------------------------- */

Test(names, version, .timeout = 30)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%d.%d.%d", PLD_VERSION_MAJOR, PLD_VERSION_MINOR, PLD_VERSION_PATCH);
    cr_expect_str_eq(PLD_VERSION_STRING, buf, "PLD_VERSION_STRING '%s' vs macros '%s'",
                     PLD_VERSION_STRING, buf);
    cr_assert_not_null(pld_version());
    cr_expect_str_eq(pld_version(), PLD_VERSION_STRING, "pld_version() '%s' vs header '%s'",
                     pld_version(), PLD_VERSION_STRING);
}

Test(names, status_names, .timeout = 30)
{
    const struct {
        pld_status s;
        const char *name;
    } t[] = {
        {PLD_OK, "PLD_OK"},
        {PLD_ERR_ARG, "PLD_ERR_ARG"},
        {PLD_ERR_BOUNDS, "PLD_ERR_BOUNDS"},
        {PLD_ERR_ALIAS, "PLD_ERR_ALIAS"},
        {PLD_ERR_UNSUPPORTED, "PLD_ERR_UNSUPPORTED"},
        {PLD_ERR_NOMEM, "PLD_ERR_NOMEM"},
        {PLD_ERR_DEADLOCK, "PLD_ERR_DEADLOCK"},
        {PLD_ERR_TIMEOUT, "PLD_ERR_TIMEOUT"},
        {PLD_ERR_PEER, "PLD_ERR_PEER"},
        {PLD_ERR_DATA, "PLD_ERR_DATA"},
        {PLD_ERR_RACE, "PLD_ERR_RACE"},
        {PLD_ERR_CHECK, "PLD_ERR_CHECK"},
        {PLD_ERR_SYSTEM, "PLD_ERR_SYSTEM"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        const char *got = pld_status_name(t[i].s);
        cr_assert_not_null(got, "pld_status_name(%d) is NULL", (int)t[i].s);
        cr_expect_str_eq(got, t[i].name, "pld_status_name(%d) = '%s', expected '%s'", (int)t[i].s,
                         got, t[i].name);
    }
    cr_expect_str_eq(pld_status_name((pld_status)99), "PLD_ERR_UNKNOWN");
    cr_expect_str_eq(pld_status_name((pld_status)-1), "PLD_ERR_UNKNOWN");
    cr_expect_str_eq(pld_status_name((pld_status)(PLD_ERR_SYSTEM + 1)), "PLD_ERR_UNKNOWN");
}

Test(names, dtype_names_and_sizes, .timeout = 30)
{
    const struct {
        pld_dtype t;
        const char *name;
        size_t size;
    } t[] = {
        {PLD_FP32, "fp32", 4},   {PLD_FP16, "fp16", 2},   {PLD_BF16, "bf16", 2},
        {PLD_INT32, "int32", 4}, {PLD_INT16, "int16", 2}, {PLD_INT8, "int8", 1},
        {PLD_UINT8, "uint8", 1}, {PLD_INT64, "int64", 8}, {PLD_FP64, "fp64", 8},
    };
    cr_expect_eq(PLD_DTYPE_COUNT, 9);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        cr_expect_str_eq(pld_dtype_name(t[i].t), t[i].name,
                         "pld_dtype_name(%d) = '%s', expected '%s'", (int)t[i].t,
                         pld_dtype_name(t[i].t), t[i].name);
        cr_expect_eq(pld_dtype_size(t[i].t), t[i].size, "pld_dtype_size(%s) = %zu, expected %zu",
                     t[i].name, pld_dtype_size(t[i].t), t[i].size);
    }
    cr_expect_str_eq(pld_dtype_name((pld_dtype)PLD_DTYPE_COUNT), "invalid");
    cr_expect_str_eq(pld_dtype_name((pld_dtype)-3), "invalid");
    cr_expect_eq(pld_dtype_size((pld_dtype)PLD_DTYPE_COUNT), 0);
    cr_expect_eq(pld_dtype_size((pld_dtype)-3), 0);
}

Test(names, tensor_make_and_numel, .timeout = 30)
{
    float buf[24];
    pld_tensor t = pld_tensor_make(buf, PLD_FP32, 3, (const int64_t[]){2, 3, 4});
    cr_expect_eq(t.data, (void *)buf);
    cr_expect_eq(t.dtype, PLD_FP32);
    cr_expect_eq(t.ndim, 3);
    cr_expect(t.shape[0] == 2 && t.shape[1] == 3 && t.shape[2] == 4, "shape [%lld,%lld,%lld]",
              (long long)t.shape[0], (long long)t.shape[1], (long long)t.shape[2]);
    cr_expect_eq(pld_tensor_numel(t), 24, "numel %lld, expected 24",
                 (long long)pld_tensor_numel(t));
    pld_tensor u = pld_tensor_make(buf, PLD_INT8, 1, (const int64_t[]){7});
    cr_expect_eq(pld_tensor_numel(u), 7, "numel %lld, expected 7", (long long)pld_tensor_numel(u));
}

/* pld_transport_built says what pld_world_init can start, without starting
 * anything; an mpi transport that is not built is a clear UNSUPPORTED. */
Test(world, transport_built, .timeout = 30)
{
    cr_assert(pld_transport_built("thread"));
    cr_assert(pld_transport_built("process"));
    cr_assert(!pld_transport_built("carrier-pigeon"));
    cr_assert(!pld_transport_built(NULL));
    if (pld_transport_built("mpi"))
        return; /* starting it here would initialise MPI in a forked test */
    pld_config cfg = {.transport = "mpi"};
    pld_world *w = NULL;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_ERR_UNSUPPORTED);
    cr_assert(tu_contains(pld_last_error(), "'mpi' is not built into this library"), "%s",
              pld_last_error());
    cr_assert_null(w);
}

/* ---- placement: ranks pinned to CPUs when they outnumber them ------------ */

#define PIN_MAX 80

typedef struct pin_out {
    int ncpus[PIN_MAX]; /* CPUs in the rank's affinity mask */
    int cpu[PIN_MAX];   /* the lowest of them */
} pin_out;

static void k_affinity(pld_ctx *c, void *arg)
{
    pin_out *o = arg;
    int r = pld_rank(c);
    cpu_set_t set;
    KCHECK(c, sched_getaffinity(0, sizeof set, &set) == 0, "rank %d: sched_getaffinity failed", r);
    o->ncpus[r] = CPU_COUNT(&set);
    o->cpu[r] = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE && o->cpu[r] < 0; cpu++)
        if (CPU_ISSET(cpu, &set))
            o->cpu[r] = cpu;
}

/* The k-th CPU of this process's mask, and how many there are. */
static int allowed_cpu(int k, int *count)
{
    cpu_set_t set;
    cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0, "sched_getaffinity failed");
    *count = CPU_COUNT(&set);
    k %= *count;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set) && k-- == 0)
            return cpu;
    return -1;
}

/* Runs k_affinity on P ranks of `transport`; pinned: every rank on exactly
 * its round-robin CPU, else every rank free on the whole mask. */
static void expect_placement(const char *transport, int p, int pinned)
{
    char devices[16];
    snprintf(devices, sizeof devices, "0-%d", p - 1);
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.devices = devices;
    cfg.transport = transport;
    pld_world *w = tu_world_cfg(&cfg);
    pin_out *o = tu_host_alloc(w, sizeof *o);
    TU_LAUNCH_OK(w, k_affinity, o);
    for (int r = 0; r < p; r++) {
        int n, want = allowed_cpu(r, &n);
        if (pinned) {
            cr_expect_eq(o->ncpus[r], 1, "%s P=%d rank %d may run on %d CPUs; expected pinned",
                         transport, p, r, o->ncpus[r]);
            cr_expect_eq(o->cpu[r], want, "%s P=%d rank %d on CPU %d, expected %d", transport, p, r,
                         o->cpu[r], want);
        } else {
            cr_expect_eq(o->ncpus[r], n, "%s P=%d rank %d may run on %d of %d CPUs; expected free",
                         transport, p, r, o->ncpus[r], n);
        }
    }
    pld_world_finalize(w);
}

Test(placement, pinned_when_oversubscribed, .timeout = 60)
{
    int n;
    allowed_cpu(0, &n);
    if (n + 1 > PIN_MAX)
        cr_skip_test("%d CPUs: too many to oversubscribe here", n);
    unsetenv("PLD_PIN");
    expect_placement("thread", n + 1, 1);
    expect_placement("process", n + 1, 1);
    /* one rank per CPU: the scheduler keeps its freedom */
    expect_placement("thread", n < 2 ? n : 2, 0);
}

Test(placement, pin_forced_and_refused, .timeout = 60)
{
    int n;
    allowed_cpu(0, &n);
    setenv("PLD_PIN", "1", 1);
    expect_placement("thread", 3, 1);
    expect_placement("process", 3, 1);
    if (n + 1 <= PIN_MAX) {
        setenv("PLD_PIN", "0", 1);
        expect_placement("thread", n + 1, 0);
    }
    unsetenv("PLD_PIN");
}
