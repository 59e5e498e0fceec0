/* PLD_DEBUG=OFF|WARN|INFO|TRACE logging to stderr with a "pld:rank N:" prefix. */
#include <stdio.h>

#include "core/internal.h"

static _Atomic int log_level = -1;

int pld__log_level(void)
{
    int l = atomic_load_explicit(&log_level, memory_order_relaxed);
    if (PLD__LIKELY(l >= 0))
        return l;
    /* a bad value logs nothing here; pld_world_init reports it */
    l = (int)pld__setting_num(PLD__S_DEBUG);
    atomic_store_explicit(&log_level, l, memory_order_relaxed);
    return l;
}

void pld__log(int level, int rank, const char *fmt, ...)
{
    static const char *names[] = {"", "WARN", "INFO", "TRACE"};
    char line[1024];
    int n;
    if (rank >= 0)
        n = snprintf(line, sizeof line, "pld:rank %d: %s: ", rank, names[level]);
    else
        n = snprintf(line, sizeof line, "pld:host: %s: ", names[level]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line); /* one write per line keeps ranks' lines whole */
}
