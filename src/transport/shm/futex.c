/* SPDX-License-Identifier: Apache-2.0 */
/* Linux futex wrappers: the sleep/wake under every blocking wait. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "transport/shm/shm.h"

int pld__futex_wait_ns(_Atomic uint32_t *word, uint32_t expected, int64_t timeout_ns, int shared)
{
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000),
                          .tv_nsec = (long)(timeout_ns % 1000000000)};
    long rc = syscall(SYS_futex, (uint32_t *)word, shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE,
                      expected, timeout_ns >= 0 ? &ts : NULL, NULL, 0);
    if (rc == -1 && errno == ETIMEDOUT)
        return ETIMEDOUT;
    return 0; /* woken, value changed (EAGAIN) or interrupted: callers re-check */
}

int pld__futex_wait(_Atomic uint32_t *word, uint32_t expected, int timeout_ms, int shared)
{
    return pld__futex_wait_ns(word, expected, timeout_ms >= 0 ? (int64_t)timeout_ms * 1000000 : -1,
                              shared);
}

void pld__futex_wake(_Atomic uint32_t *word, int shared)
{
    syscall(SYS_futex, (uint32_t *)word, shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
            NULL, 0);
}
