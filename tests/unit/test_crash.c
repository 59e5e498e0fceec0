/* SPDX-License-Identifier: Apache-2.0 */
/* Crashes in a kernel, as documented: on the thread transport a rank is a
 * thread, so a segmentation fault ends the program (as in any threaded
 * program); the process transport turns the same crash into PLD_ERR_PEER
 * naming the rank; rank threads' stacks are PLD_STACK_BYTES. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

/* The child ended without returning from pld_launch: killed by the signal,
 * or (under a sanitizer, which catches it) exited with the sanitizer's
 * status. It exits 0 after pld_launch returns, 2 if it could not start. */
static int ended_by_a_crash(pid_t pid)
{
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        return 1;
    return WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 2;
}

static void segfault_on_rank1(pld_ctx *c, void *arg)
{
    (void)arg;
    if (pld_rank(c) == 1)
        raise(SIGSEGV);
}

Test(crash, a_segfault_on_the_thread_transport_ends_the_program, .timeout = 30)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        pld_config cfg = {.transport = "thread", .devices = "0,1"};
        pld_world *w = NULL;
        if (pld_world_init(&w, &cfg) != PLD_OK)
            _exit(2);
        pld_launch(w, segfault_on_rank1, NULL);
        _exit(0); /* not reached */
    }
    cr_expect(ended_by_a_crash(pid), "pld_launch returned after a segfault in a rank thread");
}

Test(crash, a_segfault_on_the_process_transport_is_a_peer_failure, .timeout = 30)
{
    pld_config cfg = {.transport = "process", .devices = "0,1"};
    pld_world *w = tu_world_cfg(&cfg);
    TU_LAUNCH_FAILS(w, segfault_on_rank1, NULL, PLD_ERR_PEER);
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank 1 (device 1) died: ");
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer catches the signal, reports and exits with 1 */
    TU_EXPECT_CONTAINS(pld_world_error(w), "exited with status 1");
#else
    TU_EXPECT_CONTAINS(pld_world_error(w), "killed by signal 11 (SIGSEGV)");
#endif
    pld_world_finalize(w);
}

/* 16 MiB on the kernel's stack: more than the default 4 MiB of a rank
 * thread, fine with PLD_STACK_BYTES=32M. */
static void big_stack_array(pld_ctx *c, void *arg)
{
    (void)arg;
    volatile unsigned char big[16 << 20];
    memset((void *)big, pld_rank(c) + 1, sizeof big);
    KCHECK(c, big[sizeof big - 1] == pld_rank(c) + 1, "the array's last byte");
}

Test(crash, a_16_MiB_stack_array_runs_with_a_larger_rank_stack, .timeout = 30)
{
    setenv("PLD_STACK_BYTES", "32M", 1);
    pld_world *w = tu_world("0,1");
    TU_LAUNCH_OK(w, big_stack_array, NULL);
    pld_world_finalize(w);
    unsetenv("PLD_STACK_BYTES");
}

Test(crash, a_16_MiB_stack_array_overflows_the_default_rank_stack, .timeout = 30)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        unsetenv("PLD_STACK_BYTES");
        pld_config cfg = {.transport = "thread", .devices = "0,1"};
        pld_world *w = NULL;
        if (pld_world_init(&w, &cfg) != PLD_OK)
            _exit(2);
        pld_launch(w, big_stack_array, NULL);
        _exit(0);
    }
    cr_expect(ended_by_a_crash(pid), "a 16 MiB array on a 4 MiB stack did not crash");
}
