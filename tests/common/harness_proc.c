/* Processes, scratch directory and clock for the tests: see harness_proc.h. */
#include "harness_proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#define MAX_PROCS 64 /* a fleet of 32 stand-in simulators and its daemon, view, browser */

static char tmpdir[128];
/* Every child of the running test, kept by value: the callers' h_proc
 * structs often live on the stack of a test function that has returned by
 * teardown. */
static struct child {
    pid_t pid;
    int out_fd;
    bool wrapped, reaped;
    int status;
    char prog[48];
} procs[MAX_PROCS];
static int nprocs;

static struct child *child_of(pid_t pid)
{
    for (int i = 0; i < nprocs; i++)
        if (procs[i].pid == pid)
            return &procs[i];
    return NULL;
}

/* Waits for a child (blocking or not); records the status. */
static bool reap(struct child *c, bool block)
{
    if (c->reaped)
        return true;
    int st;
    pid_t r = waitpid(c->pid, &st, block ? 0 : WNOHANG);
    if (r == c->pid || (r < 0 && errno == ECHILD)) {
        c->reaped = true;
        c->status = r == c->pid ? st : 0;
    }
    return c->reaped;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

uint64_t h_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void h_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

bool h_wait_readable(int fd, uint64_t end_us)
{
    for (;;) {
        int64_t left = (int64_t)(end_us - h_now_us()) / 1000;
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        int r = poll(&pf, 1, left > 0 ? (int)left : 0);
        if (r < 0 && errno == EINTR)
            continue;
        return r > 0;
    }
}

void h_setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kn-sys-XXXXXX");
    ck_assert_msg(mkdtemp(tmpdir) != NULL, "mkdtemp: %s", strerror(errno));
    nprocs = 0;
    signal(SIGPIPE, SIG_IGN);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    remove(p);
    return 0;
}

void h_remove_tree(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The N of --error-exitcode=N in KN_WRAP, or -1. */
static int wrap_error_status(void)
{
    const char *w = getenv("KN_WRAP");
    const char *e = w ? strstr(w, "--error-exitcode=") : NULL;
    return e ? atoi(e + strlen("--error-exitcode=")) : -1;
}

void h_teardown(void)
{
    /* Wrapped processes first, all at once: SIGTERM lets the wrapper
     * write its report while the others still run. */
    for (int i = 0; i < nprocs; i++)
        if (procs[i].wrapped && !reap(&procs[i], false))
            kill(procs[i].pid, SIGTERM);
    char failed[1024] = "";
    int bad = wrap_error_status();
    for (int i = 0; i < nprocs; i++) {
        struct child *c = &procs[i];
        uint64_t end = h_now_us() + 60000000u;
        while (c->wrapped && !reap(c, false) && h_now_us() < end)
            h_sleep_ms(10);
        if (!c->reaped) {
            if (c->wrapped)
                fprintf(stderr, "wrapped pid %d did not exit within 60 s of SIGTERM\n",
                        (int)c->pid);
            kill(c->pid, SIGKILL);
            reap(c, true);
        }
        if (c->wrapped && bad > 0 && WIFEXITED(c->status) && WEXITSTATUS(c->status) == bad) {
            size_t l = strlen(failed);
            snprintf(failed + l, sizeof failed - l, " pid %d (%s)", (int)c->pid, c->prog);
        }
        if (c->out_fd >= 0)
            close(c->out_fd);
        c->out_fd = -1;
    }
    nprocs = 0;
    if (tmpdir[0] && !getenv("KN_KEEP_TMP"))
        h_remove_tree(tmpdir);
    else if (tmpdir[0])
        fprintf(stderr, "kept %s\n", tmpdir);
    tmpdir[0] = '\0';
    ck_assert_msg(failed[0] == '\0', "KN_WRAP reported errors (exit status %d) in:%s; see its log",
                  bad, failed);
}

const char *h_path(const char *name)
{
    /* rotating buffers: a test may hold a few paths while a harness
     * function (a daemon's start-up takes four) makes its own */
    static char buf[32][256];
    static int next;
    char *b = buf[next++ % 32];
    snprintf(b, 256, "%s/%s", tmpdir, name);
    return b;
}

void h_write_file(const char *path, const char *text)
{
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    ck_assert_msg(f != NULL, "%s: %s", tmp, strerror(errno));
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
    /* as an admin installs a config, whatever the test's umask: kenaf-simd
     * refuses one that group or others may write */
    ck_assert_int_eq(chmod(tmp, 0644), 0);
    ck_assert_int_eq(rename(tmp, path), 0);
}

const char *h_file_text(const char *path)
{
    static char bufs[4][32768];
    static int next;
    char *buf = bufs[next++ % 4];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return buf;
    size_t n = fread(buf, 1, sizeof bufs[0] - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

bool h_each_line(const char *path, bool (*fn)(const char *line, void *arg), void *arg)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[16384];
    while (fgets(line, sizeof line, f) && fn(line, arg)) {
    }
    fclose(f);
    return true;
}

struct parsed {
    char *items;
    size_t size;
    int max, n;
    bool (*parse)(const char *line, void *item);
};

static bool parse_one(const char *line, void *arg)
{
    struct parsed *p = arg;
    if (p->parse(line, p->items + (size_t)p->n * p->size))
        p->n++;
    return p->n < p->max;
}

int h_parse_lines(const char *path, void *items, size_t item_size, int max,
                  bool (*parse)(const char *line, void *item))
{
    struct parsed p = { items, item_size, max, 0, parse };
    if (max > 0)
        h_each_line(path, parse_one, &p);
    return p.n;
}

/* ---- processes ---- */

void h_spawn(struct h_proc *p, char *const argv[], char *const env[], const char *err_name)
{
    memset(p, 0, sizeof *p);
    p->out_fd = -1;
    snprintf(p->err_path, sizeof p->err_path, "%s", h_path(err_name));
    int pipefd[2];
    ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        int e = open(p->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(pipefd[1], 1);
        if (e >= 0)
            dup2(e, 2);
        for (int i = 0; env && env[i]; i++)
            putenv(env[i]);
        signal(SIGPIPE, SIG_DFL);
        execv(argv[0], argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(pipefd[1]);
    p->pid = pid;
    p->out_fd = pipefd[0];
    ck_assert_msg(nprocs < MAX_PROCS, "too many processes");
    struct child *c = &procs[nprocs++];
    memset(c, 0, sizeof *c);
    c->pid = pid;
    c->out_fd = pipefd[0];
    snprintf(c->prog, sizeof c->prog, "%s", base_name(argv[0]));
}

bool h_wrapped(void)
{
    const char *w = getenv("KN_WRAP");
    return w && w[0];
}

long h_rss_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* How long the threads of process pid (0: this one) have waited for a
 * CPU while runnable, in µs: the sum of the second field of its tasks'
 * /proc/PID/task/TID/schedstat (0 when the kernel keeps none). */
static uint64_t cpu_wait_us(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid > 0 ? (int)pid : (int)getpid());
    DIR *dir = opendir(path);
    if (!dir)
        return 0;
    uint64_t ns = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.')
            continue;
        char stat[96];
        snprintf(stat, sizeof stat, "%s/%.20s/schedstat", path, e->d_name);
        FILE *f = fopen(stat, "r");
        if (!f)
            continue; /* the thread ended meanwhile */
        unsigned long long run, wait;
        if (fscanf(f, "%llu %llu", &run, &wait) == 2)
            ns += wait;
        fclose(f);
    }
    closedir(dir);
    return ns / 1000;
}

void h_waits_start(struct h_waits *w, const pid_t *pids, int n)
{
    ck_assert_int_le(n, 4);
    w->n = n;
    for (int i = 0; i < n; i++) {
        w->pid[i] = pids[i];
        w->us[i] = cpu_wait_us(pids[i]);
    }
}

void h_waits_add_new(struct h_waits *w, pid_t pid)
{
    ck_assert_int_lt(w->n, 4);
    w->pid[w->n] = pid;
    w->us[w->n++] = 0;
}

double h_waited_ms(const struct h_waits *w)
{
    uint64_t sum = 0;
    for (int i = 0; i < w->n; i++) {
        uint64_t now = cpu_wait_us(w->pid[i]);
        sum += now > w->us[i] ? now - w->us[i] : 0; /* a process gone reads 0 */
    }
    return (double)sum / 1000.0;
}

void h_spawn_wrapped(struct h_proc *p, char *const argv[], char *const env[], const char *err_name)
{
    if (!h_wrapped()) {
        h_spawn(p, argv, env, err_name);
        return;
    }
    static char words[2048];
    snprintf(words, sizeof words, "%s", getenv("KN_WRAP"));
    char *full[96];
    int n = 0;
    char *save = NULL;
    for (char *w = strtok_r(words, " ", &save); w && n < 64; w = strtok_r(NULL, " ", &save))
        full[n++] = w;
    for (int i = 0; argv[i] && n < 95; i++)
        full[n++] = argv[i];
    full[n] = NULL;
    /* execv needs a path: a bare wrapper name is looked up in PATH */
    const char *exe = strchr(full[0], '/') ? NULL : h_which(full[0]);
    if (exe)
        full[0] = (char *)exe;
    h_spawn(p, full, env, err_name);
    p->wrapped = true;
    struct child *c = child_of(p->pid);
    c->wrapped = true;
    snprintf(c->prog, sizeof c->prog, "%s", base_name(argv[0]));
}

void h_forget(struct h_proc *p)
{
    struct child *c = child_of(p->pid);
    if (!c || !p->reaped || c->wrapped)
        return; /* still running, or its exit status matters at teardown */
    if (c->out_fd >= 0)
        close(c->out_fd);
    *c = procs[--nprocs];
    p->out_fd = -1;
}

int h_wait_exit(struct h_proc *p, int timeout_ms)
{
    if (p->reaped)
        return p->status;
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        int st;
        pid_t r = waitpid(p->pid, &st, WNOHANG);
        if (r == p->pid) {
            p->reaped = true;
            p->status = st;
            struct child *c = child_of(p->pid);
            if (c) {
                c->reaped = true;
                c->status = st;
            }
            return st;
        }
        if (h_now_us() >= end)
            return -1;
        h_sleep_ms(5);
    }
}

void h_signal(struct h_proc *p, int sig)
{
    if (!p->reaped)
        kill(p->pid, sig);
}

bool h_read_line(struct h_proc *p, char *buf, size_t len, int timeout_ms)
{
    size_t n = 0;
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    while (n + 1 < len) {
        if (!h_wait_readable(p->out_fd, end))
            return false;
        char c;
        ssize_t k = read(p->out_fd, &c, 1);
        if (k <= 0)
            return false;
        if (c == '\n') {
            buf[n] = '\0';
            return true;
        }
        buf[n++] = c;
    }
    buf[n] = '\0';
    return true;
}

bool h_gst_teardown_race(int status, const char *out, const char *err)
{
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 || !strstr(out, "Got EOS") ||
        strstr(out, "ERROR"))
        return false;
    const char *e = strstr(err, "ERROR");
    if (!e)
        return false;
    for (; e; e = strstr(e + 1, "ERROR")) {
        const char *next = strstr(e + 1, "ERROR");
        size_t span = next ? (size_t)(next - e) : strlen(e);
        const char *src = strstr(e, "GstRTSPSrc");
        const char *why = strstr(e, "Could not send message. (Received end-of-file)");
        if (!src || !why || (size_t)(src - e) > span || (size_t)(why - e) > span)
            return false;
    }
    return true;
}

const char *h_stderr(struct h_proc *p)
{
    return h_file_text(p->err_path);
}

int h_read_port(struct h_proc *p, int timeout_ms)
{
    char line[128] = "";
    int port = 0;
    bool got = h_read_line(p, line, sizeof line, timeout_ms);
    struct child *c = child_of(p->pid);
    ck_assert_msg(got && sscanf(line, "PORT %d", &port) == 1 && port > 0 && port < 65536,
                  "%s did not print its port (said \"%s\"): %s", c ? c->prog : "child", line,
                  h_stderr(p));
    return port;
}

const char *h_which(const char *prog)
{
    static char buf[4096];
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, path, prog);
        if (n && access(buf, X_OK) == 0)
            return buf;
        path += n + (path[n] == ':');
    }
    return NULL;
}

/* ---- stand-in simulators ---- */

void h_sim_start(struct h_standin *s, const char *exe_var, bool wrapped, int port, const char *name,
                 const char *const extra[])
{
    const char *exe = getenv(exe_var);
    ck_assert_msg(exe != NULL, "%s not set", exe_var);
    char portstr[16], logname[64], errname[64];
    snprintf(portstr, sizeof portstr, "%d", port);
    snprintf(logname, sizeof logname, "%s.log", name);
    snprintf(errname, sizeof errname, "%s.stderr", name);
    /* *s is where the stand-in's state goes: written here, never read
     * before; cppcheck's whole-program pass takes the write for a read of
     * the caller's uninitialised struct */
    /* cppcheck-suppress ctuuninitvar */
    snprintf(s->log, sizeof s->log, "%s", h_path(logname));
    char *argv[24];
    int n = 0;
    argv[n++] = (char *)exe;
    argv[n++] = "--port";
    argv[n++] = portstr;
    argv[n++] = "--log";
    argv[n++] = s->log;
    for (int i = 0; extra && extra[i] && n < 23; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    if (wrapped)
        h_spawn_wrapped(&s->proc, argv, NULL, errname);
    else
        h_spawn(&s->proc, argv, NULL, errname);
    s->port = h_read_port(&s->proc, H_LONG_MS);
}

void h_standin_kill(struct h_standin *s)
{
    h_signal(&s->proc, SIGKILL);
    ck_assert_int_ne(h_wait_exit(&s->proc, H_LONG_MS), -1);
}

/* ---- kenaf-engine ---- */

int h_engine_start(struct h_proc *p, const char *const extra[], bool wrapped)
{
    const char *exe = getenv("KN_ENGINE");
    ck_assert_msg(exe != NULL, "KN_ENGINE not set");
    char *argv[40];
    int n = 0;
    argv[n++] = (char *)exe;
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    for (int i = 0; extra && extra[i] && n < 39; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    if (wrapped)
        h_spawn_wrapped(p, argv, NULL, "kenaf-engine.stderr");
    else
        h_spawn(p, argv, NULL, "kenaf-engine.stderr");
    /* it builds its world first: slow under KN_WRAP */
    return h_read_port(p, 3 * H_LONG_MS);
}

void h_spawn_prog(struct h_proc *p, char *argv[], const char *err_name)
{
    char path[512];
    const char *full = h_which(argv[0]);
    ck_assert_msg(full != NULL, "%s is not installed", argv[0]);
    snprintf(path, sizeof path, "%s", full);
    char *name = argv[0];
    argv[0] = path;
    h_spawn(p, argv, NULL, err_name);
    argv[0] = name;
}

int h_run_prog(char *argv[], char *out, size_t outlen)
{
    struct h_proc p;
    h_spawn_prog(&p, argv, "prog.stderr");
    int st = h_wait_exit(&p, 90000);
    ck_assert_msg(st >= 0, "%s did not finish: %s", argv[0], h_stderr(&p));
    out[0] = '\0';
    char line[512];
    while (h_read_line(&p, line, sizeof line, 1000)) {
        if (out[0])
            strncat(out, "|", outlen - strlen(out) - 1);
        strncat(out, line, outlen - strlen(out) - 1);
    }
    h_forget(&p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void h_ffprobe_video(const char *url, const char *want)
{
    char out[1024];
    /* on RTSP, a server that stops answering is an error after 30 s of
     * silence on the socket, said on stderr, rather than a wait for ever
     * (ffmpeg's default) */
    int rtsp = strncmp(url, "rtsp:", 5) == 0;
    char *argv[] = { "ffprobe",
                     "-v",
                     "error",
                     "-select_streams",
                     "v:0",
                     "-show_entries",
                     "stream=codec_name,width,height",
                     "-of",
                     "csv=p=0",
                     rtsp ? "-timeout" : (char *)url,
                     rtsp ? "30000000" : NULL,
                     (char *)url,
                     NULL };
    int st = h_run_prog(argv, out, sizeof out);
    ck_assert_msg(st == 0 && strcmp(out, want) == 0,
                  "ffprobe %s: exit %d, \"%s\" (want \"%s\"): %s", url, st, out, want,
                  h_file_text(h_path("prog.stderr")));
}
