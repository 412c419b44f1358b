/* kenaf-sim-case: one scenario run of one program, as kenaf-sim-run's
 * --scenario runs it (docs/scenario-runs.md, "How a run goes"): a private
 * kenaf-engine judging the scenario and a private kenaf-simd in front of
 * it, the program against that robot, the verdict, the files. Without a
 * shell, polling loops or helper processes, since these cost a sweep more
 * than a quarter of its CPU: the engine's port and the daemon's address
 * come through pipes, the ends of the program and the engine through
 * pidfds, a signal through a signalfd. kenaf-sim-run runs it for each
 * scenario of one program, kenaf-sweep for each case.
 *
 *   kenaf-sim-case --engine PATH --simd PATH --scenario FILE[#VARIANT]
 *                  [--dir DIR] [--seed N] [--speed max|realtime|X] [--idle S]
 *                  [--result FILE] [--output FILE] [--trajectory OUT.csv|OUT.svg]
 *                  [--operator [--capture FILE]] -- PROGRAM [ARGS...]
 *
 * --operator: an operator's trial (docs/scenario-runs.md#operator-trials):
 * real time, the program (kenaf-console) gets this process's terminal,
 * the run ends with the trial, the operator's addresses are consoles of
 * the robot (so the console's own socket may reset it to the start gate);
 * --capture FILE: kenaf-simd records the session (pcapng).
 *
 * Exit status: 0 pass, 1 fail, 3 an error of the run, 2 bad usage; 130
 * or 143 after SIGINT or SIGTERM (the children stopped first). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "stats_client.h"
#include "verdict.h"

#define ME "kenaf-sim-case"
/* how long the engine and the daemon each get to come up (as ever) */
#define START_S 10.0
/* the daemon's readiness is asked again after each line it logs, and at
 * least this often, as kenaf-simd --wait-ready asks */
#define READY_ASK_MS 100
#define PATH_MAX_CASE 3900

struct opts {
    const char *engine, *simd, *spec, *dir, *seed, *speed, *idle, *result, *output, *cpu;
    const char *traj_csv, *traj_svg;
    const char *capture; /* kenaf-simd --capture FILE */
    bool oper;           /* an operator's trial: real time, the terminal */
    char **prog;
};

/* A child's output pipe, drained into its file; the first line that
 * begins with `want` (at_start) or holds it is kept. */
struct sink {
    int fd;   /* the pipe's read end; -1 at its end */
    int file; /* where the bytes go */
    const char *want;
    bool at_start;
    char line[1024]; /* the current line (cut beyond its size) */
    size_t llen;
    char found[1024];
    bool has;
};

struct run {
    struct opts o;
    char dir[PATH_MAX_CASE];
    bool own_dir; /* a temporary directory, removed at the end */
    int sigfd;
    struct kn_runcase_child engine, simd, prog;
    struct sink eout, dlog;
};

static struct run R;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int usage(const char *fmt, ...)
{
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, ME ": ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
    }
    fprintf(stderr,
            "usage: " ME " --engine PATH --simd PATH --scenario FILE[#VARIANT] [--dir DIR]\n"
            "       [--seed N] [--speed max|realtime|X] [--idle S] [--result FILE]\n"
            "       [--output FILE] [--trajectory OUT.csv|OUT.svg] [--cpu N]\n"
            "       [--operator [--capture FILE]] -- PROGRAM [ARGS...]\n");
    return 2;
}

/* The shell's idea of a number here: digits and at most one dot. */
static bool decimal(const char *s)
{
    if (!*s || strcmp(s, ".") == 0 || strspn(s, "0123456789.") != strlen(s))
        return false;
    const char *dot = strchr(s, '.');
    return !dot || !strchr(dot + 1, '.');
}

static int parse(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->speed = "max";
    o->idle = "20";
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(NULL);
            exit(0);
        }
        if (strcmp(a, "--operator") == 0) {
            o->oper = true;
            continue;
        }
        static const char *const names[] = { "--engine", "--simd",  "--scenario", "--dir",
                                             "--seed",   "--speed", "--idle",     "--result",
                                             "--output", "--cpu",   "--capture",  "--trajectory" };
        const char **slot[] = { &o->engine, &o->simd,   &o->spec,   &o->dir, &o->seed,    &o->speed,
                                &o->idle,   &o->result, &o->output, &o->cpu, &o->capture, NULL };
        size_t k = 0;
        while (k < sizeof names / sizeof names[0] && strcmp(a, names[k]) != 0)
            k++;
        if (k == sizeof names / sizeof names[0])
            return usage("unknown option %s", a);
        if (i + 1 >= argc)
            return usage("%s needs a value", a);
        const char *v = argv[++i];
        if (slot[k]) {
            *slot[k] = v;
            continue;
        }
        size_t n = strlen(v);
        const char **t = n > 4 && strcmp(v + n - 4, ".csv") == 0   ? &o->traj_csv
                         : n > 4 && strcmp(v + n - 4, ".svg") == 0 ? &o->traj_svg
                                                                   : NULL;
        if (!t)
            return usage("--trajectory must end in .csv or .svg: %s", v);
        if (*t)
            return usage("--trajectory: two %s files", t == &o->traj_csv ? "CSV" : "SVG");
        *t = v;
    }
    if (!o->engine || !o->simd || !o->spec)
        return usage("--engine, --simd and --scenario are needed");
    if (o->capture && !o->oper)
        return usage("--capture is for --operator");
    if (i + 1 >= argc)
        return usage("no program: -- PROGRAM [ARGS...]");
    o->prog = argv + i + 1;
    if (strcmp(o->speed, "max") != 0 && strcmp(o->speed, "realtime") != 0 && !decimal(o->speed))
        return usage("--speed must be max, realtime or a real-time factor 0.01..100, not %s",
                     o->speed);
    if (!decimal(o->idle))
        return usage("--idle needs seconds, not %s", o->idle);
    if (o->seed && (!*o->seed || strspn(o->seed, "0123456789") != strlen(o->seed)))
        return usage("--seed needs an integer, not %s", o->seed);
    if (o->cpu &&
        (!*o->cpu || strlen(o->cpu) > 4 || strspn(o->cpu, "0123456789") != strlen(o->cpu)))
        return usage("--cpu needs a CPU number, not %s", o->cpu);
    if (strchr(o->spec, '\n'))
        return usage("--scenario: a line break in a file name");
    if (o->dir && strlen(o->dir) > 1000)
        return usage("--dir: the path is too long");
    return 0;
}

/* A program that cannot be run is an error of the run, named before
 * anything starts (kenaf-sim-run's words). */
static int runnable(const char *prog, char *why, size_t len)
{
    struct stat st;
    if (strchr(prog, '/')) {
        if (stat(prog, &st) < 0)
            snprintf(why, len, "cannot run %s: no such file", prog);
        else if (S_ISDIR(st.st_mode) || access(prog, X_OK) != 0)
            snprintf(why, len, "cannot run %s: not an executable file", prog);
        else
            return 0;
        return -1;
    }
    const char *path = getenv("PATH");
    char buf[PATH_MAX];
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog);
        if (stat(buf, &st) == 0 && !S_ISDIR(st.st_mode) && access(buf, X_OK) == 0)
            return 0;
        p += n + (p[n] == ':');
    }
    snprintf(why, len, "cannot run %s: not found in PATH", prog);
    return -1;
}

/* ---- files ------------------------------------------------------------- */

static void path_in(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", R.dir, name);
}

static int open_out(const char *name)
{
    char p[PATH_MAX_CASE + 64];
    path_in(p, sizeof p, name);
    return open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
}

static void write_all(int fd, const char *b, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        b += w;
        n -= (size_t)w;
    }
}

/* DIR/name holding text and a line break. */
static void put(const char *name, const char *text)
{
    int fd = open_out(name);
    if (fd < 0) {
        fprintf(stderr, ME ": %s/%s: %s\n", R.dir, name, strerror(errno));
        return;
    }
    write_all(fd, text, strlen(text));
    write_all(fd, "\n", 1);
    close(fd);
}

/* A whole file (NUL-terminated, its length in *len), or NULL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rbe");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    while (b) {
        n += fread(b + n, 1, cap - 1 - n, f);
        if (n < cap - 1)
            break;
        char *nb = cap < (64u << 20) ? realloc(b, cap * 2) : NULL;
        if (!nb) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap *= 2;
    }
    fclose(f);
    if (b) {
        b[n] = '\0';
        if (len)
            *len = n;
    }
    return b;
}

/* `tail -n 1 DIR/name` as a shell command substitution gives it. */
static void last_line(const char *name, char *out, size_t len)
{
    char p[PATH_MAX_CASE + 64];
    path_in(p, sizeof p, name);
    out[0] = '\0';
    size_t n;
    char *b = slurp(p, &n);
    if (!b)
        return;
    n = strnlen(b, n);
    if (n && b[n - 1] == '\n')
        n--;
    size_t s = n;
    while (s && b[s - 1] != '\n')
        s--;
    snprintf(out, len, "%.*s", (int)(n - s), b + s);
    free(b);
}

static int copy_file(const char *from, const char *to)
{
    size_t n;
    char *b = slurp(from, &n);
    if (!b)
        return -1;
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd >= 0) {
        write_all(fd, b, n);
        close(fd);
    }
    free(b);
    return fd < 0 ? -1 : 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(p);
    return 0;
}

/* ---- children and their pipes ------------------------------------------ */

static void sink_init(struct sink *s, int fd, int file, const char *want, bool at_start)
{
    memset(s, 0, sizeof *s);
    s->fd = fd;
    s->file = file;
    s->want = want;
    s->at_start = at_start;
}

/* Everything the pipe holds now into the file; fd -1 once it has ended. */
static void sink_drain(struct sink *s)
{
    char buf[65536];
    while (s->fd >= 0) {
        ssize_t n = read(s->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            close(s->fd);
            s->fd = -1;
            return;
        }
        if (s->file >= 0)
            write_all(s->file, buf, (size_t)n);
        for (ssize_t i = 0; i < n && !s->has; i++) {
            if (buf[i] != '\n') {
                if (s->llen < sizeof s->line - 1)
                    s->line[s->llen++] = buf[i];
                continue;
            }
            s->line[s->llen] = '\0';
            if (s->at_start ? strncmp(s->line, s->want, strlen(s->want)) == 0
                            : strstr(s->line, s->want) != NULL) {
                memcpy(s->found, s->line, s->llen + 1);
                s->has = true;
            }
            s->llen = 0;
        }
    }
}

static void stop_all(int sig)
{
    kn_runcase_kill(&R.prog, sig);
    kn_runcase_kill(&R.engine, sig);
    kn_runcase_kill(&R.simd, sig);
}

/* SIGINT or SIGTERM: the children stopped and reaped, the temporary
 * directory removed, exit 130 or 143 as the shell's traps did. */
static void on_signal(void)
{
    struct signalfd_siginfo si;
    if (read(R.sigfd, &si, sizeof si) != (ssize_t)sizeof si)
        return;
    stop_all(SIGTERM);
    /* a child that does not stop within a few seconds is killed */
    double end = now_s() + 3;
    struct kn_runcase_child *cs[] = { &R.prog, &R.engine, &R.simd };
    for (size_t i = 0; i < 3; i++) {
        while (!kn_runcase_ended(cs[i]) && now_s() < end) {
            struct pollfd p = { .fd = cs[i]->pidfd, .events = POLLIN };
            poll(&p, 1, (int)((end - now_s()) * 1000) + 1);
        }
        kn_runcase_kill(cs[i], SIGKILL);
        kn_runcase_reap(cs[i]);
    }
    if (R.own_dir)
        nftw(R.dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    exit(si.ssi_signo == SIGINT ? 130 : 143);
}

/* Waits up to timeout_ms (-1: no limit) for one of fds[] (POLLIN), while
 * the pipes are drained and a signal is taken. The index of the fd that
 * is ready, or -1 when the time is up. */
static int pump(const int *fds, int n, int timeout_ms)
{
    double end = now_s() + timeout_ms / 1000.0;
    for (;;) {
        struct pollfd p[8];
        int k = 0;
        for (int i = 0; i < n; i++)
            p[k++] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
        p[k++] = (struct pollfd){ .fd = R.sigfd, .events = POLLIN };
        p[k++] = (struct pollfd){ .fd = R.eout.fd, .events = POLLIN };
        p[k++] = (struct pollfd){ .fd = R.dlog.fd, .events = POLLIN };
        int left = -1;
        if (timeout_ms >= 0) {
            double l = end - now_s();
            left = l <= 0 ? 0 : (int)(l * 1000) + 1;
        }
        int pr = poll(p, (nfds_t)k, left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return -1;
        if (p[n].revents)
            on_signal();
        if (p[n + 1].revents)
            sink_drain(&R.eout);
        if (p[n + 2].revents)
            sink_drain(&R.dlog);
        for (int i = 0; i < n; i++)
            if (p[i].revents)
                return i;
        if (pr == 0)
            return -1;
        /* drained only: go on until one of fds[] or the time */
        if (p[n + 1].revents | p[n + 2].revents)
            return n; /* something new in a pipe: the caller may look */
    }
}

/* Waits for a child to end, draining, and reaps it. */
static void finish(struct kn_runcase_child *c)
{
    while (!kn_runcase_ended(c)) {
        int fd = c->pidfd;
        pump(&fd, 1, -1);
    }
    kn_runcase_reap(c);
}

/* A pipe whose read end is ours and non-blocking; the write end for a
 * child. */
static int make_pipe(int p[2])
{
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    return fcntl(p[0], F_SETFL, O_NONBLOCK);
}

/* ---- the run ------------------------------------------------------------ */

struct result {
    char status[16], why[KN_RUNCASE_WHY_MAX + 256], mode[32], sim[64];
    bool has_sim;
};

static void result_error(struct result *res, const char *fmt, const char *detail)
{
    snprintf(res->status, sizeof res->status, "error");
    snprintf(res->why, sizeof res->why, fmt, detail);
    snprintf(res->mode, sizeof res->mode, "error");
    put("status", res->status);
    put("why", res->why);
    put("mode", res->mode);
}

/* The library's KENAF_TIMEOUT_MS for a lockstep run: --idle + 5 s. */
static void lib_timeout(const char *idle, char *out, size_t len)
{
    double t = (strtod(idle, NULL) + 5) * 1000;
    snprintf(out, len, "%ld", (long)(t > 600000 ? 600000 : t));
}

/* Starts the engine and learns its port: 0, or -1 with res set. */
static int start_engine(struct result *res, const char *pace, const char *rate, int *port)
{
    const struct opts *o = &R.o;
    char file[PATH_MAX_CASE], variant[64] = "0";
    snprintf(file, sizeof file, "%s", o->spec);
    char *hash = strrchr(file, '#');
    if (hash) {
        snprintf(variant, sizeof variant, "%s", hash + 1);
        *hash = '\0';
    }
    char verdict[PATH_MAX_CASE + 64], csv[PATH_MAX_CASE + 64], svg[PATH_MAX_CASE + 64];
    path_in(verdict, sizeof verdict, "verdict");
    path_in(csv, sizeof csv, "trajectory.csv");
    path_in(svg, sizeof svg, "trajectory.svg");
    const char *argv[40];
    int n = 0;
    const char *fixed[] = { o->engine,
                            "--listen",
                            "127.0.0.1:0",
                            "--pace",
                            pace,
                            "--rate",
                            rate,
                            "--judge",
                            file,
                            "--judge-variant",
                            variant,
                            "--judge-verdict",
                            verdict,
                            "--judge-csv",
                            csv,
                            "--sen-rate",
                            "GroundTruth=50",
                            "--sen-rate",
                            "Encoder=50",
                            "--judge-idle",
                            o->idle };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        argv[n++] = fixed[i];
    if (o->seed) {
        argv[n++] = "--seed";
        argv[n++] = o->seed;
    }
    if (o->traj_svg) {
        argv[n++] = "--judge-svg";
        argv[n++] = svg;
    }
    if (o->oper)
        argv[n++] = "--judge-trial-end"; /* the run ends with the trial */
    argv[n] = NULL;
    int out = open_out("engine.out"), log = open_out("engine.log");
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC), p[2] = { -1, -1 };
    if (out < 0 || log < 0 || null < 0 || make_pipe(p) < 0 ||
        kn_runcase_spawn(&R.engine, (char *const *)argv, null, p[1], log, NULL, 0) < 0) {
        char e[256];
        snprintf(e, sizeof e, "%s", strerror(errno));
        result_error(res, "kenaf-engine did not start: %s", e);
        return -1;
    }
    close(p[1]);
    close(log);
    close(null);
    sink_init(&R.eout, p[0], out, "PORT ", true);
    /* the line, or the pipe's end (the engine gone), or the deadline */
    double end = now_s() + START_S;
    while (!R.eout.has && R.eout.fd >= 0) {
        double left = end - now_s();
        if (left <= 0)
            break;
        pump(NULL, 0, (int)(left * 1000) + 1);
    }
    if (R.eout.has) {
        *port = atoi(R.eout.found + 5);
        return 0;
    }
    char last[1024];
    last_line("engine.log", last, sizeof last);
    result_error(res, "kenaf-engine did not start: %s", last);
    kn_runcase_kill(&R.engine, SIGTERM);
    finish(&R.engine);
    return -1;
}

/* The daemon's address from its line "... KRP/1 on udp ADDR, ...". */
static bool daemon_addr(const char *line, char *out, size_t len)
{
    const char *k = NULL;
    for (const char *p = line; (p = strstr(p, "KRP/1 on udp ")); p++)
        k = p;
    if (!k)
        return false;
    k += strlen("KRP/1 on udp ");
    const char *comma = strchr(k, ',');
    if (!comma)
        return false;
    snprintf(out, len, "%.*s", (int)(comma - k), k);
    return true;
}

/* Every robot up, asked as kenaf-simd --wait-ready asks: until START_S. */
static bool daemon_ready(const char *sock)
{
    double end = now_s() + START_S;
    char why[4096], ready[2048];
    for (;;) {
        if (kn_stats_ready(sock, end - now_s(), ready, sizeof ready, why, sizeof why))
            return true;
        double left = end - now_s();
        if (left <= 0)
            return false;
        /* again after the daemon's next line (the link up) or a while */
        pump(NULL, 0, left * 1000 < READY_ASK_MS ? (int)(left * 1000) + 1 : READY_ASK_MS);
    }
}

/* Starts kenaf-simd in front of the engine: its KRP/1 address in addr,
 * 0; or -1 with res set. */
static int start_daemon(struct result *res, int port, bool lockstep, char *addr, size_t alen)
{
    char sock[PATH_MAX_CASE + 64], cfg[PATH_MAX_CASE * 2];
    path_in(sock, sizeof sock, "stats.sock");
    snprintf(cfg, sizeof cfg,
             "{\n"
             "  \"log_level\": \"info\",\n"
             "  \"stats_socket\": \"%s\",\n"
             "  \"robots\": [\n"
             "    {\n"
             "      \"name\": \"kenaf\",\n"
             "      \"listen\": \"127.0.0.1:0\",\n"
             "      \"backend\": { \"type\": \"engine\", \"address\": \"127.0.0.1:%d\", "
             "\"lockstep\": %s }%s\n"
             "    }\n"
             "  ]\n"
             "}",
             sock, port, lockstep ? "true" : "false",
             /* the operator's console: its e-stop socket may reset the
              * robot though the console's library drives it */
             R.o.oper ? ",\n      \"consoles\": [\"127.0.0.1\"]" : "");
    put("kenaf-simd.json", cfg);
    char cfgpath[PATH_MAX_CASE + 64];
    path_in(cfgpath, sizeof cfgpath, "kenaf-simd.json");
    const char *argv[] = { R.o.simd, "--config", cfgpath, NULL, NULL, NULL };
    if (R.o.capture) {
        argv[3] = "--capture";
        argv[4] = R.o.capture;
    }
    int log = open_out("kenaf-simd.log");
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC), p[2] = { -1, -1 };
    if (log < 0 || null < 0 || make_pipe(p) < 0 ||
        kn_runcase_spawn(&R.simd, (char *const *)argv, null, p[1], p[1], NULL, 0) < 0) {
        char e[256];
        snprintf(e, sizeof e, "%s", strerror(errno));
        result_error(res, "kenaf-simd did not come up: %s", e);
        return -1;
    }
    close(p[1]);
    close(null);
    sink_init(&R.dlog, p[0], log, "KRP/1 on udp", false);
    double end = now_s() + START_S;
    while (!R.dlog.has && R.dlog.fd >= 0) {
        double left = end - now_s();
        if (left <= 0)
            break;
        pump(NULL, 0, (int)(left * 1000) + 1);
    }
    if (R.dlog.has && daemon_ready(sock) && daemon_addr(R.dlog.found, addr, alen))
        return 0;
    sink_drain(&R.dlog);
    char last[1024];
    last_line("kenaf-simd.log", last, sizeof last);
    result_error(res, "kenaf-simd did not come up: %s", last);
    kn_runcase_kill(&R.simd, SIGTERM);
    kn_runcase_kill(&R.engine, SIGTERM);
    finish(&R.simd);
    finish(&R.engine);
    return -1;
}

/* The program against the robot at addr, until it or the engine ends;
 * then all stopped in this order. exited: the program ended on its own
 * while the world still ran. */
static void run_program(const char *addr, bool lockstep, bool *exited, int *cstatus)
{
    char timeout[32] = "";
    const char *have = getenv("KENAF_TIMEOUT_MS");
    /* in lockstep the library waits for the robot as long as the run's
     * own --idle does: on a machine busy with other runs (a sweep's jobs)
     * its default second is not a verdict on the program */
    if (lockstep) {
        if (have && *have)
            snprintf(timeout, sizeof timeout, "%s", have);
        else
            lib_timeout(R.o.idle, timeout, sizeof timeout);
    }
    struct kn_runcase_env env[] = {
        { "KENAF_TIMEOUT_MS", timeout[0] ? timeout : NULL },
        { "KENAF_ROBOT", addr },
        { "KENAF_LOCKSTEP", lockstep ? "1" : "0" },
    };
    /* an operator's program has the terminal; a controller's output goes
     * to its file */
    int out = R.o.oper ? dup(1) : open_out("controller.out");
    int err = R.o.oper ? 2 : out;
    *exited = false;
    *cstatus = 0;
    if (out < 0 || kn_runcase_spawn(&R.prog, R.o.prog, 0, out, err, env, 3) < 0) {
        fprintf(stderr, ME ": cannot start %s: %s\n", R.o.prog[0], strerror(errno));
        if (out >= 0)
            close(out);
    } else {
        close(out);
        /* whichever ends first: the program, or the engine (time limit, a
         * broken limit, a program that lets no time pass) */
        int fds[2] = { R.prog.pidfd, R.engine.pidfd };
        while (!kn_runcase_ended(&R.prog) && !kn_runcase_ended(&R.engine))
            pump(fds, 2, -1);
        /* once the engine has ended the run, the program's next call fails
         * and it may exit with an error: how soon that is seen is timing,
         * and its status must not decide the verdict */
        if (!kn_runcase_ended(&R.prog))
            kn_runcase_kill(&R.prog, SIGTERM);
        else if (!kn_runcase_ended(&R.engine))
            *exited = true;
        finish(&R.prog);
        *cstatus = R.prog.status;
    }
    kn_runcase_kill(&R.engine, SIGTERM);
    finish(&R.engine);
    kn_runcase_kill(&R.simd, SIGTERM);
    finish(&R.simd);
    /* what the pipes still hold */
    sink_drain(&R.eout);
    sink_drain(&R.dlog);
}

static void write_result_file(const struct result *res)
{
    FILE *f = fopen(R.o.result, "we");
    if (!f) {
        fprintf(stderr, ME ": --result %s: %s\n", R.o.result, strerror(errno));
        return;
    }
    fprintf(f, "status=%s\nmode=%s\nwhy=%s\nsim_s=%s\n", res->status, res->mode, res->why,
            res->has_sim ? res->sim : "0");
    fclose(f);
}

static void outputs(const struct result *res)
{
    char p[PATH_MAX_CASE + 64];
    if (R.o.result)
        write_result_file(res);
    if (R.o.output) {
        path_in(p, sizeof p, "controller.out");
        if (copy_file(p, R.o.output) < 0) {
            int fd = open(R.o.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
            if (fd >= 0)
                close(fd);
        }
    }
}

static int judge(struct result *res, bool exited, int cstatus)
{
    char p[PATH_MAX_CASE + 64];
    path_in(p, sizeof p, "verdict");
    size_t n = 0;
    char *text = slurp(p, &n);
    if (!text || n == 0) {
        free(text);
        char last[1024];
        last_line("engine.log", last, sizeof last);
        result_error(res, "kenaf-engine wrote no verdict: %s", last);
        return -1;
    }
    struct kn_runcase_outcome oc;
    kn_runcase_judge(text, n, exited, cstatus, &oc);
    free(text);
    snprintf(res->sim, sizeof res->sim, "%s", oc.sim);
    res->has_sim = true;
    put("sim", oc.sim);
    snprintf(res->status, sizeof res->status, "%s", oc.status);
    snprintf(res->why, sizeof res->why, "%s", oc.why);
    snprintf(res->mode, sizeof res->mode, "%s", oc.mode);
    put("status", res->status);
    put("why", res->why);
    put("mode", res->mode);
    return 0;
}

static int setup(void)
{
    if (R.o.dir) {
        snprintf(R.dir, sizeof R.dir, "%s", R.o.dir);
        if (mkdir(R.dir, 0777) < 0 && errno != EEXIST) {
            fprintf(stderr, ME ": --dir %s: %s\n", R.dir, strerror(errno));
            return -1;
        }
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(R.dir, sizeof R.dir, "%s/kenaf-sim-case.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(R.dir)) {
            fprintf(stderr, ME ": a directory in %s: %s\n", tmp && *tmp ? tmp : "/tmp",
                    strerror(errno));
            return -1;
        }
        R.own_dir = true;
    }
    return 0;
}

int main(int argc, char **argv)
{
    memset(&R, 0, sizeof R);
    R.engine.pidfd = R.simd.pidfd = R.prog.pidfd = -1;
    sink_init(&R.eout, -1, -1, "", false);
    sink_init(&R.dlog, -1, -1, "", false);
    int rc = parse(argc, argv, &R.o);
    if (rc)
        return rc;
    char why[PATH_MAX + 64];
    if (runnable(R.o.prog[0], why, sizeof why) < 0) {
        fprintf(stderr, ME ": %s\n", why);
        return 3;
    }
    /* before any child: they inherit it */
    if (R.o.cpu && kn_runcase_pin(atoi(R.o.cpu)) < 0)
        fprintf(stderr, ME ": --cpu %s: %s; the run goes on unpinned\n", R.o.cpu, strerror(errno));
    const char *exes[] = { R.o.simd, R.o.engine };
    for (int i = 0; i < 2; i++)
        if (access(exes[i], X_OK) != 0) {
            fprintf(stderr, ME ": cannot run %s (kenaf-simd and kenaf-engine are needed)\n",
                    exes[i]);
            return 3;
        }
    /* SIGINT and SIGTERM come through the signalfd, between two steps */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    R.sigfd = signalfd(-1, &set, SFD_CLOEXEC);
    if (R.sigfd < 0) {
        fprintf(stderr, ME ": signalfd: %s\n", strerror(errno));
        return 3;
    }
    if (setup() < 0)
        return 3;
    double t0 = now_s();
    const char *pace = "step", *rate = "1";
    if (R.o.oper)
        pace = "realtime"; /* a person drives: the wall clock's pace */
    else if (strcmp(R.o.speed, "realtime") == 0)
        pace = "realtime";
    else if (strcmp(R.o.speed, "max") != 0) {
        pace = "realtime";
        rate = R.o.speed;
    }
    bool lockstep = strcmp(pace, "step") == 0;
    struct result res;
    memset(&res, 0, sizeof res);
    int port = 0;
    char addr[256];
    if (start_engine(&res, pace, rate, &port) == 0 &&
        start_daemon(&res, port, lockstep, addr, sizeof addr) == 0) {
        bool exited;
        int cstatus;
        run_program(addr, lockstep, &exited, &cstatus);
        char wall[32];
        snprintf(wall, sizeof wall, "%.3f", now_s() - t0);
        put("wall", wall);
        judge(&res, exited, cstatus);
        char p[PATH_MAX_CASE + 64];
        path_in(p, sizeof p, "trajectory.csv");
        if (R.o.traj_csv && access(p, F_OK) == 0)
            copy_file(p, R.o.traj_csv);
        path_in(p, sizeof p, "trajectory.svg");
        if (R.o.traj_svg && access(p, F_OK) == 0)
            copy_file(p, R.o.traj_svg);
    }
    outputs(&res);
    if (R.eout.file >= 0)
        close(R.eout.file);
    if (R.dlog.file >= 0)
        close(R.dlog.file);
    if (R.own_dir)
        nftw(R.dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return strcmp(res.status, "pass") == 0 ? 0 : strcmp(res.status, "error") == 0 ? 3 : 1;
}
