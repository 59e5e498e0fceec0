/* SPDX-License-Identifier: Apache-2.0 */
/* PLD_DEBUG lines have NCCL_DEBUG's shape, "host:pid:tid [rank N] pld LEVEL
 * ...", so the greps and tools that read NCCL logs read pld's; at TRACE
 * every builtin and primitive call names its call site; PLD_DEBUG_SUBSYS
 * picks subsystems; PLD_DEBUG_FILE names files with %h and %p, one per
 * process where the name has %p (the process transport's workers too). */
#define _GNU_SOURCE
#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

typedef struct largs {
    pld_dtensor sig;
} largs;

static void kernel(pld_ctx *c, void *p)
{
    largs *a = p;
    pld_barrier(c, a->sig);
}

/* A temporary directory for the log files. */
static void tmpdir(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/pld-log-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

/* One launch of a barrier on `transport` with the log going to dir/log.%h.%p. */
static void run_logged(const char *dir, const char *transport, const char *level,
                       const char *subsys)
{
    char pattern[600];
    snprintf(pattern, sizeof pattern, "%s/log.%%h.%%p", dir);
    setenv("PLD_DEBUG", level, 1);
    setenv("PLD_DEBUG_FILE", pattern, 1);
    if (subsys)
        setenv("PLD_DEBUG_SUBSYS", subsys, 1);
    pld_config cfg = {.devices = "0,1", .transport = transport};
    pld_world *w = tu_world_cfg(&cfg);
    largs *a = tu_host_alloc(w, sizeof *a);
    a->sig = tu_signal(w, "sig", 1);
    TU_LAUNCH_OK(w, kernel, a);
    pld_world_finalize(w);
}

/* Every line of text has the shape, names this host and `pid`; returns
 * the number of lines. */
static int check_lines(const char *text, long pid)
{
    char host[256];
    cr_assert_eq(gethostname(host, sizeof host), 0);
    regex_t re;
    cr_assert_eq(regcomp(&re,
                         "^([^: ]+):([0-9]+):([0-9]+) \\[(rank [0-9]+|host)\\] pld "
                         "(WARN|INFO|TRACE) [^ ]",
                         REG_EXTENDED),
                 0);
    int lines = 0;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char line[1200];
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        regmatch_t m[4];
        cr_assert_eq(regexec(&re, line, 4, m, 0), 0, "line not in NCCL_DEBUG's shape: '%s'", line);
        cr_expect(m[1].rm_eo - m[1].rm_so == (regoff_t)strlen(host) &&
                      !strncmp(line + m[1].rm_so, host, strlen(host)),
                  "host name is not '%s': %s", host, line);
        cr_expect_eq(strtol(line + m[2].rm_so, NULL, 10), pid, "pid: %s", line);
        lines++;
        p += len + (e != NULL);
    }
    regfree(&re);
    return lines;
}

static char *own_log(const char *dir)
{
    char host[256], path[900];
    gethostname(host, sizeof host);
    snprintf(path, sizeof path, "%s/log.%s.%ld", dir, host, (long)getpid());
    return tu_slurp(path, "log");
}

static void cleanup(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[900];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

Test(log, lines_have_nccl_shape_and_trace_names_calls, .timeout = 60)
{
    char dir[64];
    tmpdir(dir, sizeof dir);
    run_logged(dir, "thread", "TRACE", NULL);
    char *s = own_log(dir);
    cr_expect_geq(check_lines(s, (long)getpid()), 4, "%s", s);
    TU_EXPECT_CONTAINS(s, "[host] pld INFO world: 2 ranks, platform a2a3sim, transport thread");
    TU_EXPECT_CONTAINS(s, "[host] pld INFO checks: ");
    /* the builtin call on each rank, with the site it was called from */
    TU_EXPECT_CONTAINS(s, "[rank 0] pld TRACE pld_barrier called from ");
    TU_EXPECT_CONTAINS(s, "[rank 1] pld TRACE pld_barrier called from ");
    TU_EXPECT_CONTAINS(s, "+0x"); /* function+offset, or file+offset for addr2line */
    cr_expect(!tu_contains(s, "pld_rank called"), "accessors are not logged");
    free(s);
    cleanup(dir);
}

Test(log, subsys_excludes, .timeout = 60)
{
    char dir[64];
    tmpdir(dir, sizeof dir);
    run_logged(dir, "thread", "TRACE", "^COLL");
    char *s = own_log(dir);
    check_lines(s, (long)getpid());
    TU_EXPECT_CONTAINS(s, "pld INFO world: ");
    TU_EXPECT_CONTAINS(s, "pld INFO checks: ");
    cr_expect(!tu_contains(s, "TRACE"), "^COLL drops the call lines: %s", s);
    free(s);
    cleanup(dir);
}

/* (a process opens one log file: a test per file) */
Test(log, subsys_selects_one, .timeout = 60)
{
    char dir[64];
    tmpdir(dir, sizeof dir);
    run_logged(dir, "thread", "INFO", "check");
    char *s;
    s = own_log(dir);
    TU_EXPECT_CONTAINS(s, "pld INFO checks: ");
    cr_expect(!tu_contains(s, "world: "), "CHECK only: %s", s);
    free(s);
    cleanup(dir);
}

/* The process transport's ranks are worker processes: with %p in the name
 * each writes its own file, and each file's lines carry the pid its name
 * holds. */
Test(log, file_per_process_with_pid, .timeout = 60)
{
    char dir[64], host[256], prefix[300];
    tmpdir(dir, sizeof dir);
    run_logged(dir, "process", "TRACE", NULL);
    gethostname(host, sizeof host);
    snprintf(prefix, sizeof prefix, "log.%s.", host);
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    struct dirent *e;
    int files = 0, ranks_seen = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        cr_assert(tu_starts_with(e->d_name, prefix), "file name '%s' is not log.%%h.%%p",
                  e->d_name);
        char *end;
        long pid = strtol(e->d_name + strlen(prefix), &end, 10);
        cr_assert(pid > 0 && *end == '\0', "'%s' does not end in a pid", e->d_name);
        char path[900];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *s = tu_slurp(path, "log");
        check_lines(s, pid);
        if (tu_contains(s, "[rank 0] pld TRACE pld_barrier") ||
            tu_contains(s, "[rank 1] pld TRACE pld_barrier"))
            ranks_seen++;
        free(s);
        files++;
    }
    closedir(d);
    cr_expect_geq(files, 2, "the host and the workers write their own files");
    cr_expect_geq(ranks_seen, 1, "a worker's file holds its rank's call lines");
    cleanup(dir);
}
