/* System-test helpers: see harness.h. */
#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#define MAX_PROCS 32

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
                fprintf(stderr, "wrapped pid %d did not exit within 60 s of SIGTERM\n", (int)c->pid);
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
        nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    else if (tmpdir[0])
        fprintf(stderr, "kept %s\n", tmpdir);
    tmpdir[0] = '\0';
    ck_assert_msg(failed[0] == '\0', "KN_WRAP reported errors (exit status %d) in:%s; see its log",
                  bad, failed);
}

const char *h_path(const char *name)
{
    static char buf[8][256];
    static int next;
    char *b = buf[next++ % 8];
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
    ck_assert_int_eq(rename(tmp, path), 0); /* readers never see half a file */
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
    const char *slash = strrchr(argv[0], '/');
    snprintf(c->prog, sizeof c->prog, "%s", slash ? slash + 1 : argv[0]);
}

bool h_wrapped(void)
{
    const char *w = getenv("KN_WRAP");
    return w && w[0];
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
    char exe[512];
    if (!strchr(full[0], '/')) {
        const char *path = getenv("PATH");
        char dirs[4096];
        snprintf(dirs, sizeof dirs, "%s", path ? path : "/usr/bin:/bin");
        char *s2 = NULL;
        for (char *d = strtok_r(dirs, ":", &s2); d; d = strtok_r(NULL, ":", &s2)) {
            snprintf(exe, sizeof exe, "%s/%s", d, full[0]);
            if (access(exe, X_OK) == 0) {
                full[0] = exe;
                break;
            }
        }
    }
    h_spawn(p, full, env, err_name);
    p->wrapped = true;
    struct child *c = child_of(p->pid);
    c->wrapped = true;
    const char *slash = strrchr(argv[0], '/');
    snprintf(c->prog, sizeof c->prog, "%s", slash ? slash + 1 : argv[0]);
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
        int left = (int)((int64_t)(end - h_now_us()) / 1000);
        if (left <= 0)
            return false;
        struct pollfd pf = { .fd = p->out_fd, .events = POLLIN };
        int r = poll(&pf, 1, left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
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

const char *h_stderr(struct h_proc *p)
{
    static char buf[32768];
    buf[0] = '\0';
    FILE *f = fopen(p->err_path, "r");
    if (!f)
        return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* ---- stand-in ---- */

void h_standin_start(struct h_standin *s, int port, const char *name, const char *const extra[])
{
    const char *exe = getenv("KN_STANDIN");
    ck_assert_msg(exe != NULL, "KN_STANDIN not set");
    char portstr[16], logname[64], errname[64];
    snprintf(portstr, sizeof portstr, "%d", port);
    snprintf(logname, sizeof logname, "%s.log", name);
    snprintf(errname, sizeof errname, "%s.stderr", name);
    snprintf(s->log, sizeof s->log, "%s", h_path(logname));
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)exe;
    argv[n++] = "--port";
    argv[n++] = portstr;
    argv[n++] = "--log";
    argv[n++] = s->log;
    for (int i = 0; extra && extra[i] && n < 15; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    h_spawn_wrapped(&s->proc, argv, NULL, errname);
    char line[64];
    ck_assert_msg(h_read_line(&s->proc, line, sizeof line, H_LONG_MS),
                  "standin_sim did not print its port: %s", h_stderr(&s->proc));
    ck_assert_msg(sscanf(line, "PORT %d", &s->port) == 1, "standin_sim said \"%s\"", line);
}

void h_standin_kill(struct h_standin *s)
{
    h_signal(&s->proc, SIGKILL);
    ck_assert_int_ne(h_wait_exit(&s->proc, H_LONG_MS), -1);
}

/* ---- kenaf-simd ---- */

static void set_sun_path(struct sockaddr_un *a, const char *path)
{
    size_t n = strlen(path);
    ck_assert_msg(n < sizeof a->sun_path, "socket path too long: %s", path);
    memcpy(a->sun_path, path, n + 1);
}

void h_daemon_write_config(struct h_daemon *d, const char *robots_json)
{
    char *text = malloc(strlen(robots_json) + 1024);
    ck_assert_ptr_nonnull(text);
    sprintf(text, "{\n  \"log_level\": \"%s\",\n  \"stats_socket\": \"%s\",\n  \"robots\": %s\n}\n",
            getenv("KN_DEBUG") ? "debug" : "info", d->stats, robots_json);
    h_write_file(d->config, text);
    free(text);
}

static void notify_drain(struct h_daemon *d, int timeout_ms)
{
    struct pollfd pf = { .fd = d->notify_fd, .events = POLLIN };
    while (poll(&pf, 1, timeout_ms) > 0) {
        char buf[2048];
        ssize_t n = recv(d->notify_fd, buf, sizeof buf - 1, 0);
        if (n <= 0)
            break;
        buf[n] = '\0';
        size_t l = strlen(d->notes);
        snprintf(d->notes + l, sizeof d->notes - l, "%s\n", buf);
        timeout_ms = 0;
    }
}

bool h_notify_seen(struct h_daemon *d, const char *what, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        notify_drain(d, 0);
        if (strstr(d->notes, what))
            return true;
        int64_t left = (int64_t)(end - h_now_us()) / 1000;
        if (left <= 0)
            return false;
        notify_drain(d, left > 50 ? 50 : (int)left);
    }
}

int h_notify_count(struct h_daemon *d, const char *what)
{
    notify_drain(d, 0);
    int n = 0;
    for (const char *p = d->notes; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

void h_daemon_start(struct h_daemon *d, const char *robots_json)
{
    h_daemon_start_env(d, robots_json, NULL);
}

void h_daemon_start_env(struct h_daemon *d, const char *robots_json, char *const extra[])
{
    const char *exe = getenv("KN_SIMD");
    ck_assert_msg(exe != NULL, "KN_SIMD not set");
    memset(d, 0, sizeof *d);
    snprintf(d->config, sizeof d->config, "%s", h_path("kenaf-simd.json"));
    snprintf(d->stats, sizeof d->stats, "%s", h_path("stats.sock"));
    snprintf(d->notify_path, sizeof d->notify_path, "%s", h_path("notify.sock"));
    h_daemon_write_config(d, robots_json);

    d->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(d->notify_fd, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    set_sun_path(&a, d->notify_path);
    unlink(d->notify_path);
    ck_assert_int_eq(bind(d->notify_fd, (struct sockaddr *)&a, sizeof a), 0);

    static char envbuf[300];
    snprintf(envbuf, sizeof envbuf, "NOTIFY_SOCKET=%s", d->notify_path);
    char *env[16] = { envbuf, NULL };
    for (int i = 0; extra && extra[i] && i < 14; i++) {
        env[i + 1] = extra[i];
        env[i + 2] = NULL;
    }
    char *argv[] = { (char *)exe, "--config", d->config, NULL };
    h_spawn_wrapped(&d->proc, argv, env, "kenaf-simd.stderr");
    ck_assert_msg(h_notify_seen(d, "READY=1", H_LONG_MS), "kenaf-simd not ready: %s",
                  h_stderr(&d->proc));
    cJSON *s = h_stats(d);
    cJSON *robots = cJSON_GetObjectItemCaseSensitive(s, "robots");
    d->nrobots = cJSON_GetArraySize(robots);
    for (int i = 0; i < d->nrobots && i < H_MAX_ROBOTS; i++) {
        cJSON *l = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(robots, i), "listen");
        ck_assert(cJSON_IsString(l));
        const char *colon = strrchr(l->valuestring, ':');
        ck_assert_ptr_nonnull(colon);
        d->port[i] = atoi(colon + 1);
    }
    cJSON_Delete(s);
}

cJSON *h_stats(struct h_daemon *d)
{
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 1000u;
    char *buf = malloc(1 << 20);
    ck_assert_ptr_nonnull(buf);
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un a;
        memset(&a, 0, sizeof a);
        a.sun_family = AF_UNIX;
        set_sun_path(&a, d->stats);
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            size_t n = 0;
            for (;;) {
                struct pollfd pf = { .fd = fd, .events = POLLIN };
                if (poll(&pf, 1, H_LONG_MS) <= 0)
                    break;
                ssize_t k = read(fd, buf + n, (1 << 20) - 1 - n);
                if (k <= 0)
                    break;
                n += (size_t)k;
            }
            close(fd);
            buf[n] = '\0';
            cJSON *j = cJSON_Parse(buf);
            ck_assert_msg(j != NULL, "stats are not JSON: %.200s", buf);
            free(buf);
            return j;
        }
        close(fd);
        ck_assert_msg(h_now_us() < end, "no stats socket at %s: %s", d->stats, h_stderr(&d->proc));
        h_sleep_ms(20);
    }
}

static const cJSON *lookup(const cJSON *j, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok && j; tok = strtok_r(NULL, ".", &save)) {
        if (cJSON_IsArray(j))
            j = cJSON_GetArrayItem(j, atoi(tok));
        else
            j = cJSON_GetObjectItemCaseSensitive(j, tok);
    }
    return j;
}

double h_stat(struct h_daemon *d, const char *path)
{
    cJSON *s = h_stats(d);
    const cJSON *v = lookup(s, path);
    ck_assert_msg(v && (cJSON_IsNumber(v) || cJSON_IsBool(v)), "stats have no number at %s", path);
    double r = cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1 : 0) : v->valuedouble;
    cJSON_Delete(s);
    return r;
}

const char *h_stat_str(struct h_daemon *d, const char *path)
{
    static char buf[512];
    cJSON *s = h_stats(d);
    const cJSON *v = lookup(s, path);
    ck_assert_msg(v && cJSON_IsString(v), "stats have no string at %s", path);
    snprintf(buf, sizeof buf, "%s", v->valuestring);
    cJSON_Delete(s);
    return buf;
}

bool h_wait_stat(struct h_daemon *d, const char *path, double min, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        if (h_stat(d, path) >= min)
            return true;
        if (h_now_us() >= end)
            return false;
        h_sleep_ms(10);
    }
}

/* ---- UDP ---- */

void h_udp_open(struct h_udp *u, int port)
{
    u->seq = 0;
    u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(u->fd, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(u->fd, (struct sockaddr *)&a, sizeof a), 0);
    a.sin_port = htons((uint16_t)port);
    ck_assert_int_eq(connect(u->fd, (struct sockaddr *)&a, sizeof a), 0);
}

void h_udp_close(struct h_udp *u)
{
    if (u->fd >= 0)
        close(u->fd);
    u->fd = -1;
}

void h_udp_raw(struct h_udp *u, const void *buf, size_t len)
{
    ck_assert_int_eq(send(u->fd, buf, len, 0), (ssize_t)len);
}

void h_udp_send(struct h_udp *u, const struct kn_krp_msg *m)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    size_t n = kn_krp_encode(m, buf, sizeof buf);
    ck_assert_uint_gt(n, 0);
    h_udp_raw(u, buf, n);
}

bool h_udp_recv(struct h_udp *u, struct kn_krp_msg *m, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        int left = (int)((int64_t)(end - h_now_us()) / 1000);
        if (left < 0)
            left = 0;
        struct pollfd pf = { .fd = u->fd, .events = POLLIN };
        int r = poll(&pf, 1, left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        uint8_t buf[2048];
        ssize_t n = recv(u->fd, buf, sizeof buf, 0);
        if (n < 0 && (errno == EINTR || errno == ECONNREFUSED))
            continue;
        ck_assert_int_gt(n, 0);
        enum kn_krp_result res = kn_krp_decode(buf, (size_t)n, m);
        ck_assert_msg(res == KN_KRP_OK, "robot sent a bad datagram: %s", kn_krp_result_str(res));
        return true;
    }
}

bool h_udp_recv_answer(struct h_udp *u, struct kn_krp_msg *m, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        int left = (int)((int64_t)(end - h_now_us()) / 1000);
        if (!h_udp_recv(u, m, left < 0 ? 0 : left))
            return false;
        if (!(m->h.type == KN_KRP_STATUS && m->u.status.req_seq == 0))
            return true;
    }
}

static uint32_t next_seq(struct h_udp *u, uint32_t seq)
{
    if (seq)
        return seq;
    return ++u->seq;
}

uint32_t h_hello(struct h_udp *u, const char *name)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_HELLO, next_seq(u, 0), 0);
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "%s", name);
    h_udp_send(u, &m);
    return m.h.seq;
}

uint32_t h_crawler(struct h_udp *u, uint32_t seq, uint16_t flags, int32_t l, int32_t r)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_CRAWLER, next_seq(u, seq), flags);
    m.u.crawler.left_mm_s = l;
    m.u.crawler.right_mm_s = r;
    h_udp_send(u, &m);
    return m.h.seq;
}

uint32_t h_flipper(struct h_udp *u, uint32_t seq, uint16_t flags, uint8_t mask, const int32_t cdeg[4])
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_FLIPPER, next_seq(u, seq), flags);
    m.u.flipper.mask = mask;
    memcpy(m.u.flipper.target_cdeg, cdeg, sizeof m.u.flipper.target_cdeg);
    h_udp_send(u, &m);
    return m.h.seq;
}

uint32_t h_simple(struct h_udp *u, uint32_t seq, uint8_t type, uint16_t flags)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, type, next_seq(u, seq), flags);
    h_udp_send(u, &m);
    return m.h.seq;
}

uint32_t h_subscribe(struct h_udp *u, uint16_t flags, uint16_t period)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_SUBSCRIBE, next_seq(u, 0), flags);
    m.u.subscribe.period_ms = period;
    h_udp_send(u, &m);
    return m.h.seq;
}

uint32_t h_estop(struct h_udp *u, uint16_t flags, uint8_t engage)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_ESTOP, next_seq(u, 0), flags);
    m.u.estop.engage = engage;
    h_udp_send(u, &m);
    return m.h.seq;
}

void h_expect_error(struct h_udp *u, uint8_t code, uint32_t seq, uint8_t type)
{
    struct kn_krp_msg m;
    ck_assert_msg(h_udp_recv_answer(u, &m, H_LONG_MS), "no ERROR %u for seq %u", code, seq);
    ck_assert_msg(m.h.type == KN_KRP_ERROR, "expected ERROR %u, got %s", code,
                  kn_krp_type_name(m.h.type));
    ck_assert_uint_eq(m.u.error.code, code);
    ck_assert_uint_eq(m.u.error.offending_seq, seq);
    ck_assert_uint_eq(m.u.error.offending_type, type);
}

void h_expect_ack(struct h_udp *u, uint32_t seq, uint8_t type)
{
    struct kn_krp_msg m;
    ck_assert_msg(h_udp_recv_answer(u, &m, H_LONG_MS), "no ACK for seq %u", seq);
    ck_assert_msg(m.h.type == KN_KRP_ACK, "expected ACK, got %s (code %u)",
                  kn_krp_type_name(m.h.type), m.h.type == KN_KRP_ERROR ? m.u.error.code : 0);
    ck_assert_uint_eq(m.u.ack.acked_seq, seq);
    ck_assert_uint_eq(m.u.ack.acked_type, type);
}

struct kn_krp_status h_status(struct h_udp *u)
{
    uint32_t seq = h_simple(u, 0, KN_KRP_STATUS_REQ, 0);
    struct kn_krp_msg m;
    ck_assert_msg(h_udp_recv_answer(u, &m, H_LONG_MS), "no STATUS for seq %u", seq);
    ck_assert_msg(m.h.type == KN_KRP_STATUS, "expected STATUS, got %s (code %u, seq %u, type %u)",
                  kn_krp_type_name(m.h.type), m.h.type == KN_KRP_ERROR ? m.u.error.code : 0,
                  m.h.type == KN_KRP_ERROR ? m.u.error.offending_seq : 0,
                  m.h.type == KN_KRP_ERROR ? m.u.error.offending_type : 0);
    ck_assert_uint_eq(m.u.status.req_seq, seq);
    return m.u.status;
}

struct kn_krp_status h_status_any(struct h_udp *u)
{
    uint32_t seq = h_simple(u, 0, KN_KRP_STATUS_REQ, 0);
    struct kn_krp_msg m;
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 1000u;
    for (;;) {
        int left = (int)((int64_t)(end - h_now_us()) / 1000);
        ck_assert_msg(h_udp_recv(u, &m, left < 0 ? 0 : left), "no STATUS for seq %u", seq);
        if (m.h.type == KN_KRP_STATUS && m.u.status.req_seq == seq)
            return m.u.status;
    }
}

bool h_wait_stat_eq(struct h_daemon *d, const char *path, double want, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        if (h_stat(d, path) == want)
            return true;
        if (h_now_us() >= end)
            return false;
        h_sleep_ms(10);
    }
}

void h_expect_silence(struct h_udp *u)
{
    (void)h_status(u);
}

/* ---- stand-in log ---- */

static bool parse_cmd(const char *line, struct h_cmd *c)
{
    unsigned long long t;
    int client, off = 0;
    if (sscanf(line, "%llu %d %n", &t, &client, &off) < 2 || off == 0)
        return false;
    cJSON *j = cJSON_Parse(line + off);
    const cJSON *type = j ? cJSON_GetObjectItemCaseSensitive(j, "type") : NULL;
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "cmd") != 0) {
        cJSON_Delete(j);
        return false;
    }
    memset(c, 0, sizeof *c);
    c->t_us = t;
    c->client = client;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "belts");
    for (int i = 0; i < 2; i++)
        c->belts[i] = cJSON_GetArrayItem(b, i) ? cJSON_GetArrayItem(b, i)->valuedouble : NAN;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "flippers");
    for (int k = 0; k < 4; k++) {
        const cJSON *v = cJSON_GetArrayItem(f, k);
        if (cJSON_IsNumber(v)) {
            c->flippers[k] = v->valuedouble;
            c->fmask |= (uint8_t)(1u << k);
        }
    }
    c->reapply = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "reapply"));
    cJSON_Delete(j);
    return true;
}

int h_log_cmds(const char *log, struct h_cmd *out, int max)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return 0;
    static char line[16384];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f))
        if (parse_cmd(line, &out[n]))
            n++;
    fclose(f);
    return n;
}

int h_log_count(const char *log, const char *needle)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return 0;
    static char line[16384];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

int h_wait_belts(const char *log, int from, double l, double r, int timeout_ms, struct h_cmd *found)
{
    enum { MAX = 400000 };
    static struct h_cmd *cmds;
    if (!cmds)
        cmds = malloc(MAX * sizeof *cmds);
    ck_assert_ptr_nonnull(cmds);
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        int n = h_log_cmds(log, cmds, MAX);
        for (int i = from; i < n; i++) {
            if (fabs(cmds[i].belts[0] - l) < 1e-6 && fabs(cmds[i].belts[1] - r) < 1e-6) {
                if (found)
                    *found = cmds[i];
                return i;
            }
        }
        if (h_now_us() >= end)
            return -1;
        h_sleep_ms(10);
    }
}

const char *h_run_square(int port, int timeout_ms, const char *extra)
{
    char robot[64];
    snprintf(robot, sizeof robot, "127.0.0.1:%d", port);
    const char *run = getenv("KN_SIM_RUN"), *square = getenv("KN_SQUARE");
    ck_assert_msg(run && square, "KN_SIM_RUN / KN_SQUARE not set");
    char *argv[] = { "/bin/sh", (char *)run, "--robot", robot, "--", (char *)square, NULL };
    static struct h_proc p;
    h_spawn(&p, argv, NULL, "square.stderr");
    static char out[65536];
    size_t used = 0;
    out[0] = '\0';
    char line[1024];
    while (h_read_line(&p, line, sizeof line, timeout_ms)) {
        int w = snprintf(out + used, sizeof out - used, "%s\n", line);
        if (w > 0 && (size_t)w < sizeof out - used)
            used += (size_t)w;
    }
    int st = h_wait_exit(&p, timeout_ms);
    ck_assert_msg(st != -1, "square did not finish");
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "square failed (%d): %s\n%s\n%s", st,
                  h_stderr(&p), out, extra ? extra : "");
    ck_assert_msg(strstr(out, "SIMULATED") != NULL, "no status block with SIMULATED: %s", out);
    return out;
}
