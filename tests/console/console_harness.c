/* kenaf-console system-test helpers: see console_harness.h. */
#include "console_harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

extern char **environ;

/* Runs argv, returns its exit status (or -1) and its stdout in out. */
static int run(char *const argv[], char *out, size_t len)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        return -1;
    }
    size_t n = 0;
    for (;;) {
        struct pollfd pf = { .fd = pipefd[0], .events = POLLIN };
        if (poll(&pf, 1, H_LONG_MS) <= 0)
            break;
        char buf[4096];
        ssize_t k = read(pipefd[0], buf, sizeof buf);
        if (k <= 0)
            break;
        if (out && n + 1 < len) {
            size_t take = (size_t)k < len - 1 - n ? (size_t)k : len - 1 - n;
            memcpy(out + n, buf, take);
            n += take;
        }
    }
    if (out && len)
        out[n] = '\0';
    close(pipefd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool c_have_tmux(void)
{
    char *argv[] = { "tmux", "-V", NULL };
    char out[64];
    return run(argv, out, sizeof out) == 0;
}

static int tmux(struct c_console *c, char *out, size_t len, const char *a1, const char *a2,
                const char *a3, const char *a4, const char *a5, const char *a6, const char *a7,
                const char *a8, const char *a9)
{
    char *argv[16] = { "tmux", "-S", c->sock, "-f", "/dev/null" };
    int n = 5;
    const char *rest[] = { a1, a2, a3, a4, a5, a6, a7, a8, a9 };
    for (int i = 0; i < 9 && rest[i]; i++)
        argv[n++] = (char *)rest[i];
    argv[n] = NULL;
    return run(argv, out, len);
}

static void start_server(struct c_console *c);

/* The window's files in the scratch directory. */
static void init_paths(struct c_console *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->sock, sizeof c->sock, "%s", h_path("tmux.sock"));
    snprintf(c->err, sizeof c->err, "%s", h_path("console.stderr"));
    snprintf(c->rc, sizeof c->rc, "%s", h_path("console.rc"));
    unlink(c->rc);
}

void c_console_start(struct c_console *c, int port, const char *config_json, const char *args)
{
    const char *exe = getenv("KN_CONSOLE");
    ck_assert_msg(exe != NULL, "KN_CONSOLE not set");
    init_paths(c);
    const char *cfg = h_path("console.json");
    h_write_file(cfg, config_json ? config_json : "{\"joystick\": {\"device\": \"none\"}}\n");

    /* the console's command line, in a script so no quoting goes astray;
     * timeout bounds a console the test forgot */
    char script[2048];
    snprintf(script, sizeof script,
             "#!/bin/sh\n"
             "LANG=C.UTF-8 LC_ALL=C.UTF-8 KENAF_ROBOT=127.0.0.1:%d timeout --foreground 170 "
             "'%s' --config '%s' %s 2>'%s'\n"
             "echo $? >'%s.tmp' && mv '%s.tmp' '%s'\n",
             port, exe, cfg, args ? args : "", c->err, c->rc, c->rc, c->rc);
    h_write_file(h_path("console.sh"), script);
    start_server(c);
}

void c_window_start(struct c_console *c, const char *command)
{
    init_paths(c);
    char script[4096];
    snprintf(script, sizeof script,
             "#!/bin/sh\n"
             "LANG=C.UTF-8 LC_ALL=C.UTF-8 timeout --foreground 170 %s 2>'%s'\n"
             "echo $? >'%s.tmp' && mv '%s.tmp' '%s'\n",
             command, c->err, c->rc, c->rc, c->rc);
    h_write_file(h_path("console.sh"), script);
    start_server(c);
}

/* The tmux server, and the window running console.sh. */
static void start_server(struct c_console *c)
{
    /* the server in the foreground, as the test's child */
    char *argv[] = { "/usr/bin/env", "tmux", "-S", c->sock, "-f", "/dev/null", "-D", NULL };
    h_spawn(&c->server, argv, NULL, "tmux.stderr");
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 1000u;
    while (access(c->sock, F_OK) != 0) {
        ck_assert_msg(h_now_us() < end, "tmux server did not start: %s", h_stderr(&c->server));
        h_sleep_ms(10);
    }
    c_console_restart(c);
}

void c_console_restart(struct c_console *c)
{
    /* the console that quit wrote its rc before its shell, and so its
     * session, ended: a new session of the same name waits for that end
     * (under load it once came first and tmux refused a duplicate) */
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 1000u;
    while (tmux(c, NULL, 0, "has-session", "-t", "kc", NULL, NULL, NULL, NULL, NULL, NULL) == 0) {
        ck_assert_msg(h_now_us() < end, "the console's previous tmux session did not end");
        h_sleep_ms(20);
    }
    unlink(c->rc);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "sh '%s'", h_path("console.sh"));
    ck_assert_int_eq(
        tmux(c, NULL, 0, "new-session", "-d", "-s", "kc", "-x", "100", "-y", "40", cmd), 0);
}

void c_close_window(struct c_console *c)
{
    tmux(c, NULL, 0, "kill-session", "-t", "kc", NULL, NULL, NULL, NULL, NULL, NULL);
}

void c_resize(struct c_console *c, int cols, int rows)
{
    char x[16], y[16];
    snprintf(x, sizeof x, "%d", cols);
    snprintf(y, sizeof y, "%d", rows);
    ck_assert_int_eq(tmux(c, NULL, 0, "resize-window", "-t", "kc", "-x", x, "-y", y, NULL, NULL),
                     0);
}

void c_keys(struct c_console *c, const char *keys, bool literal)
{
    if (literal)
        tmux(c, NULL, 0, "send-keys", "-t", "kc", "-l", keys, NULL, NULL, NULL, NULL);
    else
        tmux(c, NULL, 0, "send-keys", "-t", "kc", keys, NULL, NULL, NULL, NULL, NULL);
}

const char *c_screen(struct c_console *c)
{
    static char buf[65536];
    if (tmux(c, buf, sizeof buf, "capture-pane", "-p", "-t", "kc", NULL, NULL, NULL, NULL, NULL) !=
        0)
        buf[0] = '\0';
    return buf;
}

bool c_wait_screen(struct c_console *c, const char *needle, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        if (strstr(c_screen(c), needle))
            return true;
        if (h_now_us() >= end)
            return false;
        h_sleep_ms(50);
    }
}

bool c_wait_screen_gone(struct c_console *c, const char *needle, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        const char *s = c_screen(c);
        if (s[0] && !strstr(s, needle))
            return true;
        if (h_now_us() >= end)
            return false;
        h_sleep_ms(50);
    }
}

int c_wait_exit(struct c_console *c, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        FILE *f = fopen(c->rc, "r");
        if (f) {
            int rc = -1;
            if (fscanf(f, "%d", &rc) != 1)
                rc = -1;
            fclose(f);
            return rc;
        }
        if (h_now_us() >= end)
            return -1;
        h_sleep_ms(20);
    }
}

const char *c_stderr(struct c_console *c)
{
    return h_file_text(c->err);
}

/* The parent pid and command name of pid from /proc; false when gone. */
static bool proc_parent(int pid, int *ppid, char *comm, size_t len)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) state ppid ...": comm may hold spaces, so split at the
     * last ')' */
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (!open || !close || close < open)
        return false;
    snprintf(comm, len, "%.*s", (int)(close - open - 1), open + 1);
    char state;
    return sscanf(close + 1, " %c %d", &state, ppid) == 2;
}

int c_console_pid(struct c_console *c)
{
    char out[64];
    if (tmux(c, out, sizeof out, "display-message", "-p", "-t", "kc", "#{pane_pid}", NULL, NULL,
             NULL, NULL) != 0)
        return -1;
    int pane = atoi(out);
    DIR *dir = opendir("/proc");
    if (!dir || pane <= 0) {
        if (dir)
            closedir(dir);
        return -1;
    }
    int found = -1;
    struct dirent *e;
    while (found < 0 && (e = readdir(dir))) {
        int pid = atoi(e->d_name), ppid;
        char comm[64];
        if (pid <= 0 || !proc_parent(pid, &ppid, comm, sizeof comm) ||
            strcmp(comm, "kenaf-console") != 0)
            continue;
        /* one of the pane's descendants (shell -> timeout -> console) */
        for (int up = ppid, hops = 0; up > 1 && hops < 8; hops++) {
            if (up == pane) {
                found = pid;
                break;
            }
            char pc[64];
            if (!proc_parent(up, &up, pc, sizeof pc))
                break;
        }
    }
    closedir(dir);
    return found;
}

static void daemon_engine(struct h_daemon *d, const char *consoles)
{
    char cfg[512];
    snprintf(cfg, sizeof cfg,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",%s"
             "\"backend\":{\"type\":\"engine\",\"engine\":{\"terrain\":\"flat\"}}}]",
             consoles);
    h_daemon_start(d, cfg);
    h_wait_backend_fresh(d, 0, 30000); /* the engine starts first */
}

void c_daemon_engine(struct h_daemon *d)
{
    /* the console is configured as one, as an operator's would be: it may
     * release an e-stop a console before it engaged */
    daemon_engine(d, "\"consoles\":[\"127.0.0.1\"],");
}

void c_daemon_engine_station(struct h_daemon *d)
{
    daemon_engine(d, "");
}

bool c_hold_until(struct c_console *c, const char *key, bool literal, bool (*done)(void *arg),
                  void *arg, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        c_keys(c, key, literal);
        if (done(arg))
            return true;
        if (h_now_us() >= end)
            return false;
        h_sleep_ms(40);
    }
}
