/* SPDX-License-Identifier: Apache-2.0 */
/* pld explore: runs a program under the schedule explorer with many seeds.
 *
 *   pld explore [--seeds N] [--first S] [--jobs J] [--timeout SEC] PROGRAM [ARGS...]
 *   pld explore PROGRAM [ARGS...] --seeds N          (options may also trail)
 *
 * Each run gets PLD_SCHED=<seed> and the checkers (PLD_CHECK=race,signals;
 * signals only on the process transport, where the race checker does not
 * run), added to whatever PLD_CHECK already holds. A run fails when the
 * program exits non-zero, dies on a signal or outlives the timeout. The
 * explorer stops starting runs at the first failure, lets the runs already
 * started finish, and reports the lowest failing seed with the command that
 * replays it. Exit status: 0 all seeds passed, 1 a seed failed, 2 usage. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/core/settings.h" /* PLD_CHECK, read strictly */

#include "explore.h"

#define MAX_JOBS 64

typedef struct job {
    pid_t pid;
    unsigned long long seed;
    double t0;
    char log[64]; /* the run's output */
} job;

typedef struct spec {
    unsigned long long first, seeds;
    int jobs, timeout_s;
    char **argv; /* PROGRAM ARGS... NULL */
    char check[256];
} spec;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int usage(FILE *out)
{
    fprintf(out, "usage: pld explore [--seeds N] [--first S] [--jobs J] [--timeout SEC] PROGRAM "
                 "[ARGS...]\n"
                 "  Runs PROGRAM once per seed S, S+1, ..., S+N-1 (default 1..100) with\n"
                 "  PLD_SCHED=<seed> and PLD_CHECK=race,signals, and stops at the first failing\n"
                 "  seed (non-zero exit, signal, or longer than SEC seconds, default 60).\n"
                 "  On the thread transport a seed replays its interleaving exactly:\n"
                 "  PLD_SCHED=<seed> PROGRAM ARGS reproduces a failure under a debugger.\n"
                 "  The options may also follow PROGRAM's arguments; '--' ends them.\n");
    return out == stderr ? 2 : 0;
}

static int parse_num(const char *opt, const char *v, unsigned long long lo, unsigned long long *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long x = v ? strtoull(v, &end, 10) : 0;
    if (!v || end == v || *end || errno || x < lo) {
        fprintf(stderr, "pld explore: %s needs a number >= %llu (got '%s')\n", opt, lo, v ? v : "");
        return 0;
    }
    *out = x;
    return 1;
}

/* One option at argv[i] (and its value); returns how many entries it took,
 * 0 if argv[i] is not an option of ours, -1 on a bad value. */
static int take_option(spec *s, int argc, char **argv, int i)
{
    unsigned long long v;
    const char *o = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(o, "--seeds")) {
        if (!parse_num(o, val, 1, &v))
            return -1;
        s->seeds = v;
    } else if (!strcmp(o, "--first")) {
        if (!parse_num(o, val, 0, &v))
            return -1;
        s->first = v;
    } else if (!strcmp(o, "--jobs") || !strcmp(o, "-j")) {
        if (!parse_num(o, val, 1, &v) || v > MAX_JOBS)
            return -1;
        s->jobs = (int)v;
    } else if (!strcmp(o, "--timeout")) {
        if (!parse_num(o, val, 1, &v))
            return -1;
        s->timeout_s = (int)v;
    } else {
        return 0;
    }
    return 2;
}

/* The checkers to add: race only where it runs (not on the process
 * transport); the caller's own PLD_CHECK is kept, once it parses (a typo
 * stops here rather than in every seed's world init). */
static int checkers(spec *s)
{
    int process = 0;
    for (char **a = s->argv; *a; a++)
        if ((!strcmp(*a, "--transport") && a[1] && !strcmp(a[1], "process")) ||
            !strcmp(*a, "--transport=process"))
            process = 1;
    pld__setting_value v;
    char msg[512];
    if (pld__setting_read(PLD__S_CHECK, &v, msg, sizeof msg) != PLD_OK) {
        fprintf(stderr, "pld explore: %s\n", msg);
        return 0;
    }
    const char *have = pld__setting_str(PLD__S_CHECK);
    snprintf(s->check, sizeof s->check, "%s%s%s", have ? have : "", have ? "," : "",
             process ? "signals" : "race,signals");
    return 1;
}

static int start(const spec *s, job *j, unsigned long long seed)
{
    snprintf(j->log, sizeof j->log, "/tmp/pld-explore-XXXXXX");
    int fd = mkstemp(j->log);
    if (fd < 0) {
        perror("pld explore: mkstemp");
        return 0;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("pld explore: fork");
        close(fd);
        return 0;
    }
    if (pid == 0) {
        char seed_s[32];
        snprintf(seed_s, sizeof seed_s, "%llu", seed);
        setenv("PLD_SCHED", seed_s, 1);
        setenv("PLD_CHECK", s->check, 1);
        setpgid(0, 0); /* a timeout kills the run and everything it started */
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
        execvp(s->argv[0], s->argv);
        fprintf(stderr, "pld explore: cannot run '%s': %s\n", s->argv[0], strerror(errno));
        _exit(127);
    }
    close(fd);
    j->pid = pid;
    j->seed = seed;
    j->t0 = now_s();
    return 1;
}

static void show_log(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    /* the last 40 lines: the failure is at the end */
    char *lines[40] = {0};
    size_t k = 0;
    char buf[4096];
    while (fgets(buf, sizeof buf, f)) {
        free(lines[k % 40]);
        lines[k % 40] = strdup(buf);
        k++;
    }
    fclose(f);
    for (size_t i = k > 40 ? k - 40 : 0; i < k; i++) {
        fprintf(stderr, "  | %s", lines[i % 40]);
        size_t n = strlen(lines[i % 40]);
        if (n == 0 || lines[i % 40][n - 1] != '\n')
            fputc('\n', stderr);
    }
    for (int i = 0; i < 40; i++)
        free(lines[i]);
}

/* Describes how a finished run ended into why; 0 if it passed. */
static int failed(int status, int timed_out, char *why, size_t n)
{
    if (timed_out)
        snprintf(why, n, "ran longer than the timeout (killed)");
    else if (WIFSIGNALED(status))
        snprintf(why, n, "died on signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        snprintf(why, n, "exited with status %d", WEXITSTATUS(status));
    else
        return 0;
    return 1;
}

static int run_all(const spec *s)
{
    job jobs[MAX_JOBS];
    int running = 0;
    unsigned long long next = s->first, end = s->first + s->seeds, done = 0;
    unsigned long long bad_seed = 0;
    int bad = 0;
    char bad_why[256] = "", bad_log[64] = "";
    double t0 = now_s();
    while (running > 0 || (!bad && next < end)) {
        while (!bad && next < end && running < s->jobs)
            if (start(s, &jobs[running], next++))
                running++;
            else
                return 1;
        /* reap whatever finished; kill what ran too long */
        int progressed = 0;
        for (int i = 0; i < running; i++) {
            int status = 0, timed_out = 0;
            pid_t r = waitpid(jobs[i].pid, &status, WNOHANG);
            if (r == 0 && now_s() - jobs[i].t0 > s->timeout_s) {
                kill(-jobs[i].pid, SIGKILL);
                waitpid(jobs[i].pid, &status, 0);
                timed_out = 1;
                r = jobs[i].pid;
            }
            if (r != jobs[i].pid)
                continue;
            progressed = 1;
            done++;
            char why[256];
            if (failed(status, timed_out, why, sizeof why) && (!bad || jobs[i].seed < bad_seed)) {
                if (bad)
                    unlink(bad_log);
                bad = 1;
                bad_seed = jobs[i].seed;
                snprintf(bad_why, sizeof bad_why, "%s", why);
                snprintf(bad_log, sizeof bad_log, "%s", jobs[i].log);
            } else {
                unlink(jobs[i].log);
            }
            jobs[i--] = jobs[--running];
        }
        if (!progressed) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    double t = now_s() - t0;
    if (!bad) {
        printf("pld explore: %llu seeds (%llu..%llu) passed in %.1f s (%.1f ms per seed)\n",
               s->seeds, s->first, end - 1, t, 1000.0 * t / (double)s->seeds);
        return 0;
    }
    fprintf(stderr, "pld explore: seed %llu failed: %s (after %llu runs, %.1f s)\n", bad_seed,
            bad_why, done, t);
    show_log(bad_log);
    unlink(bad_log);
    fprintf(stderr, "replay: PLD_SCHED=%llu PLD_CHECK=%s", bad_seed, s->check);
    for (char **a = s->argv; *a; a++)
        fprintf(stderr, " %s", *a);
    fprintf(stderr, "\n");
    printf("FAILED seed %llu\n", bad_seed);
    return 1;
}

int explore_main(int argc, char **argv)
{
    spec s = {.first = 1, .seeds = 100, .jobs = 1, .timeout_s = 60};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    s.jobs = cpus > 1 ? (int)(cpus < MAX_JOBS ? cpus : MAX_JOBS) : 1;
    int i = 1;
    /* leading options */
    while (i < argc) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return usage(stdout);
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        int k = take_option(&s, argc, argv, i);
        if (k < 0)
            return 2;
        if (k == 0)
            break;
        i += k;
    }
    if (i >= argc) {
        fprintf(stderr, "pld explore: no PROGRAM given\n");
        return usage(stderr);
    }
    /* trailing options: PROGRAM ARGS... [--seeds N ...] [-- ...] */
    int last = argc;
    for (;;) {
        if (last - 2 > i && take_option(&s, argc, argv, last - 2) == 2) {
            last -= 2;
            continue;
        }
        break;
    }
    char **args = calloc((size_t)(last - i + 1), sizeof *args);
    if (!args)
        return 1;
    for (int k = i; k < last; k++)
        args[k - i] = argv[k];
    s.argv = args;
    if (!checkers(&s)) {
        free(args);
        return 2;
    }
    int rc = run_all(&s);
    free(args);
    return rc;
}
