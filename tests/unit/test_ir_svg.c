/* SPDX-License-Identifier: Apache-2.0 */
/* The protocol picture (--ir-svg, PLD_IR_SVG, pld_config.ir_svg): how it is
 * switched on, what a launch that fails or loses a rank draws, and an
 * unwritable path. The pictures' arrows are checked on the examples by
 * tests/ir_svg/check_svg.py. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

static int count(const char *hay, const char *needle)
{
    int k = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        k++;
    return k;
}

static void temp_path(char *out, size_t n)
{
    snprintf(out, n, "/tmp/pld_test_ir_svg_%d.svg", (int)getpid());
    unlink(out);
}

typedef struct ring_args {
    pld_dtensor ring, sig; /* the hand ring's cells; the builtin's signal */
    int32_t round;
} ring_args;

/* Every rank notifies its right neighbour and waits for its left one, then
 * a pld_barrier. */
static void k_ring(pld_ctx *c, void *arg)
{
    ring_args *a = arg;
    int me = pld_rank(c), n = pld_nranks(c);
    pld_notify(c, a->ring, (me + 1) % n, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
    pld_wait(c, a->ring, PLD_IDX((me + n - 1) % n, 0), a->round, PLD_WAIT_GE);
    pld_barrier(c, a->sig);
}

static void k_fail_on_1(pld_ctx *c, void *arg)
{
    pld_dtensor *sig = arg;
    pld_barrier(c, *sig);
    if (pld_rank(c) == 1)
        pld_fail(c, "rank 1 stops here");
}

static void k_die_on_1(pld_ctx *c, void *arg)
{
    (void)arg;
    if (pld_rank(c) == 1)
        raise(SIGKILL);
}

Test(ir_svg, config_field_draws_every_rank, .timeout = 60)
{
    char path[256];
    temp_path(path, sizeof path);
    unsetenv("PLD_IR_SVG");
    pld_config cfg = {.devices = "0-3", .ir_svg = path};
    pld_world *w = tu_world_cfg(&cfg);
    /* kernel arguments in host memory every transport's ranks see */
    ring_args *a = tu_host_alloc(w, sizeof *a);
    *a = (ring_args){tu_signal(w, "ring", 1), tu_signal(w, "sig", 1), 1};
    cr_assert_eq(pld_launch(w, k_ring, a), PLD_OK, "%s", pld_world_error(w));
    char *s = tu_slurp(path, "picture");
    cr_expect(tu_contains(s, "<svg xmlns=\"http://www.w3.org/2000/svg\""), "not an SVG:\n%s", s);
    cr_expect_eq(count(s, "class=\"lane\""), 4, "one lane per rank:\n%s", s);
    /* the ring's 4 notifies, and the barrier's 4 x 3 */
    cr_expect_eq(count(s, "<line class=\"notify\""), 16, "notify arrows:\n%s", s);
    cr_expect_eq(count(s, "<rect class=\"call\""), 4, "one pld_barrier box per rank:\n%s", s);
    cr_expect(tu_contains(s, "launch 1: 4 ranks"), "title:\n%s", s);
    free(s);
    /* a second launch is drawn below the first */
    a->round = 2; /* the ring's cells count on */
    cr_assert_eq(pld_launch(w, k_ring, a), PLD_OK, "%s", pld_world_error(w));
    pld_world_finalize(w);
    s = tu_slurp(path, "picture");
    cr_expect(tu_contains(s, "launch 2: 4 ranks"), "second launch:\n%s", s);
    free(s);
    char part[300];
    snprintf(part, sizeof part, "%s.part.0", path);
    cr_expect(access(part, F_OK) != 0, "part file '%s' left behind", part);
    unlink(path);
}

Test(ir_svg, environment_and_failed_launch, .timeout = 60)
{
    char path[256];
    temp_path(path, sizeof path);
    setenv("PLD_IR_SVG", path, 1);
    pld_world *w = tu_world("0-2");
    unsetenv("PLD_IR_SVG");
    pld_dtensor *sig = tu_host_alloc(w, sizeof *sig);
    *sig = tu_signal(w, "sig", 1);
    cr_assert_eq(pld_launch(w, k_fail_on_1, sig), PLD_ERR_CHECK, "%s", pld_world_error(w));
    char *s = tu_slurp(path, "picture");
    cr_expect(tu_contains(s, "failed with PLD_ERR_CHECK"), "title:\n%s", s);
    cr_expect_eq(count(s, "class=\"lane\""), 3, "one lane per rank:\n%s", s);
    free(s);
    pld_world_finalize(w);
    unlink(path);
}

Test(ir_svg, lost_rank_on_process_transport, .timeout = 60)
{
    char path[256];
    temp_path(path, sizeof path);
    unsetenv("PLD_IR_SVG");
    pld_config cfg = {.devices = "0-2", .transport = "process", .ir_svg = path};
    pld_world *w;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK, "%s", pld_last_error());
    cr_assert_eq(pld_launch(w, k_die_on_1, NULL), PLD_ERR_PEER, "%s", pld_world_error(w));
    char *s = tu_slurp(path, "picture");
    cr_expect(tu_contains(s, "(no record: the rank did not finish)"), "lost lane:\n%s", s);
    cr_expect_eq(count(s, "class=\"lane\""), 3, "one lane per rank:\n%s", s);
    free(s);
    pld_world_finalize(w);
    unlink(path);
}

Test(ir_svg, unwritable_path_fails_init, .timeout = 30)
{
    unsetenv("PLD_IR_SVG");
    pld_config cfg = {.ir_svg = "/nonexistent-dir/x.svg"};
    pld_world *w = NULL;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_ERR_ARG);
    cr_expect(tu_contains(pld_last_error(), "--ir-svg file '/nonexistent-dir/x.svg'"), "%s",
              pld_last_error());
}

Test(ir_svg, command_line_option, .timeout = 60)
{
    char path[256], opt[300];
    temp_path(path, sizeof path);
    unsetenv("PLD_IR_SVG");
    snprintf(opt, sizeof opt, "--ir-svg=%s", path);
    const char *args[] = {"prog", "-d", "0,1", opt, "keep"};
    int argc = 5;
    char **argv = tu_argv(argc, args);
    pld_world *w;
    cr_assert_eq(pld_world_init_from_args(&w, &argc, &argv), PLD_OK, "%s", pld_last_error());
    cr_expect_eq(argc, 2, "--ir-svg and -d consumed, argc %d", argc);
    cr_expect_str_eq(argv[1], "keep");
    ring_args *a = tu_host_alloc(w, sizeof *a);
    *a = (ring_args){tu_signal(w, "ring", 1), tu_signal(w, "sig", 1), 1};
    cr_assert_eq(pld_launch(w, k_ring, a), PLD_OK, "%s", pld_world_error(w));
    pld_world_finalize(w);
    char *s = tu_slurp(path, "picture");
    cr_expect_eq(count(s, "class=\"lane\""), 2, "one lane per rank:\n%s", s);
    free(s);
    unlink(path);
}
