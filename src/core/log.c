/* SPDX-License-Identifier: Apache-2.0 */
/* PLD_DEBUG logging, in NCCL_DEBUG's shape so the same greps and log
 * tooling work on both:
 *
 *   myhost:12345:12350 [rank 2] pld INFO world: 4 ranks, ...
 *
 * host name, process id and thread id (the kernel's), then who speaks: a
 * rank, or [host] for the host side of a world whose ranks live in this
 * process (under mpi the host side of a process speaks as its one rank).
 * PLD_DEBUG_SUBSYS picks the subsystems (INIT, COLL, TRANSPORT, CHECK; a
 * leading ^ excludes), PLD_DEBUG_FILE sends the lines to a file whose name
 * may hold %h (host) and %p (pid), as NCCL_DEBUG_FILE's does. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"

static _Atomic int log_level = -1;
static _Atomic int log_subsys = -1;
/* the rank the host side of this process speaks as (mpi), -1: [host] */
static _Atomic int host_rank = -1;
/* the log file and the process that opened it: a forked worker whose file
 * name holds %p opens its own */
static _Atomic(FILE *) log_file;
static _Atomic int log_file_pid;

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

int pld__log_on(int level, unsigned subsys)
{
    if (PLD__LIKELY(pld__log_level() < level))
        return 0;
    int s = atomic_load_explicit(&log_subsys, memory_order_relaxed);
    if (s < 0) {
        s = (int)pld__setting_num(PLD__S_DEBUG_SUBSYS);
        atomic_store_explicit(&log_subsys, s, memory_order_relaxed);
    }
    return ((unsigned)s & subsys) != 0;
}

void pld__log_reload(void)
{
    /* world init has checked both, so the values are the environment's;
     * the cost model's measuring worlds keep the program's log as it is */
    if (pld__settings_are_defaults())
        return;
    atomic_store_explicit(&log_level, (int)pld__setting_num(PLD__S_DEBUG), memory_order_relaxed);
    atomic_store_explicit(&log_subsys, (int)pld__setting_num(PLD__S_DEBUG_SUBSYS),
                          memory_order_relaxed);
}

void pld__log_host_rank(int rank)
{
    atomic_store_explicit(&host_rank, rank, memory_order_relaxed);
}

const char *pld__log_path(const char *pattern, char *out, size_t n)
{
    char host[256];
    size_t k = 0;
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    for (const char *p = pattern; *p && k + 1 < n; p++) {
        int w = 0;
        if (p[0] == '%' && p[1] == 'h')
            w = snprintf(out + k, n - k, "%s", host), p++;
        else if (p[0] == '%' && p[1] == 'p')
            w = snprintf(out + k, n - k, "%ld", (long)getpid()), p++;
        else if (p[0] == '%' && p[1] == '%')
            out[k] = '%', w = 1, p++;
        else
            out[k] = *p, w = 1;
        k += w > 0 ? (size_t)w : 0;
    }
    out[k < n ? k : n - 1] = '\0';
    return out;
}

/* The stream this process logs to: stderr, or PLD_DEBUG_FILE's file,
 * opened by the first line and kept for the life of the process (a later
 * world with another PLD_DEBUG_FILE still writes to it: a line in flight on
 * another thread may hold the stream, so it is never closed). */
static FILE *log_stream(void)
{
    const char *pattern = pld__setting_str(PLD__S_DEBUG_FILE);
    if (!pattern)
        return stderr;
    FILE *f = atomic_load_explicit(&log_file, memory_order_acquire);
    int pid = (int)getpid();
    /* a forked worker shares its parent's file (one open file, lines
     * written whole) unless the name says %p */
    if (f && (atomic_load_explicit(&log_file_pid, memory_order_relaxed) == pid ||
              !strstr(pattern, "%p")))
        return f;
    char path[4096];
    FILE *nf = fopen(pld__log_path(pattern, path, sizeof path), "w");
    if (!nf)
        return stderr; /* pld_world_init checked it opens; a later failure still logs */
    setvbuf(nf, NULL, _IOLBF, 0);
    /* two threads may race to open: one file wins, the other is closed */
    if (!atomic_compare_exchange_strong(&log_file, &f, nf)) {
        fclose(nf);
        return f ? f : stderr;
    }
    atomic_store_explicit(&log_file_pid, pid, memory_order_relaxed);
    return nf;
}

int pld__log_check_file(char *msg, size_t msgsz)
{
    const char *pattern = pld__setting_str(PLD__S_DEBUG_FILE);
    if (!pattern || pld__log_level() == PLD__LOG_OFF)
        return 0;
    FILE *f = log_stream();
    if (f != stderr)
        return 0;
    char path[4096];
    int err = errno;
    snprintf(msg, msgsz, "PLD_DEBUG_FILE=%.64s: '%.256s' cannot be opened: %s", pattern,
             pld__log_path(pattern, path, sizeof path), strerror(err));
    return -1;
}

void pld__log(int level, int rank, const char *fmt, ...)
{
    static const char *names[] = {"", "WARN", "INFO", "TRACE"};
    char line[1024], host[64], who[32];
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    if (rank < 0)
        rank = atomic_load_explicit(&host_rank, memory_order_relaxed);
    if (rank >= 0)
        snprintf(who, sizeof who, "rank %d", rank);
    else
        snprintf(who, sizeof who, "host");
    int n = snprintf(line, sizeof line, "%s:%ld:%ld [%s] pld %s ", host, (long)getpid(),
                     (long)syscall(SYS_gettid), who, names[level]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    FILE *f = log_stream();
    fprintf(f, "%s\n", line); /* one write per line keeps ranks' lines whole */
    fflush(f);
}

void pld__log_call(const pld_ctx *c, const char *api, const void *ret)
{
    /* the accessors are not calls anyone traces: only the primitives and
     * builtins, which move data or synchronise */
    static const char *const quiet[] = {"pld_rank",     "pld_nranks",      "pld_device",
                                        "pld_core",     "pld_ncores",      "pld_world_rank",
                                        "pld_ctx_team", "pld_team_ctx",    "pld_ctx_counters",
                                        "pld_ub_used",  "pld_ub_capacity", "pld_local"};
    for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++)
        if (!strcmp(api, quiet[i]))
            return;
    /* where: the calling function when the program exports its symbols
     * (-rdynamic), else file+offset, which `addr2line -e file 0xOFF` turns
     * into file:line */
    char where[512], core[32] = "";
    Dl_info di;
    if (ret && dladdr(ret, &di) && di.dli_fname) {
        const char *file = strrchr(di.dli_fname, '/');
        file = file ? file + 1 : di.dli_fname;
        uintptr_t off = (uintptr_t)ret - (uintptr_t)di.dli_fbase;
        if (di.dli_sname)
            snprintf(where, sizeof where, "%s+0x%lx (%s+0x%lx)", di.dli_sname,
                     (unsigned long)((uintptr_t)ret - (uintptr_t)di.dli_saddr), file,
                     (unsigned long)off);
        else
            snprintf(where, sizeof where, "%s+0x%lx", file, (unsigned long)off);
    } else {
        snprintf(where, sizeof where, "%p", ret);
    }
    if (c->ncores > 1)
        snprintf(core, sizeof core, " core %d", c->core);
    int d = c->depth < 4 ? c->depth : 4;
    pld__log(PLD__LOG_TRACE, c->wrank, "%s%s%s%s called from %s", api, core,
             d > 0 ? " inside " : "", d > 0 ? c->scope[d - 1] : "", where);
}
