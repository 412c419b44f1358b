/* Child processes (kenaf-simd, socat, kenaf-engine) and what /proc says
 * about them. Children get SIGKILL when the bench dies, so an interrupted
 * run leaves nothing behind. */
#include "bench.h"
#include "procstat.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int kn_bench_ncpu(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void kn_bench_pin_self(int cpu)
{
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set); /* best effort: a restricted cpuset may refuse */
}

void kn_bench_pin_except(int cpu)
{
    int n = kn_bench_ncpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < n && i < CPU_SETSIZE; i++)
        if (i != cpu || n < 2)
            CPU_SET(i, &set);
    sched_setaffinity(0, sizeof set, &set);
}

int kn_bench_spawn(struct kn_bench_proc *p, char *const argv[], const char *log,
                   const char *err_log, int cpu)
{
    memset(p, 0, sizeof *p);
    snprintf(p->log, sizeof p->log, "%s", log);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int efd = err_log ? open(err_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : fd;
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        if (fd >= 0)
            dup2(fd, 1);
        if (efd >= 0)
            dup2(efd, 2);
        signal(SIGPIPE, SIG_DFL);
        if (cpu >= 0)
            kn_bench_pin_self(cpu);
        else
            kn_bench_pin_except(-1); /* undo the bench's own pinning */
        execv(argv[0], argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    p->pid = pid;
    return 0;
}

bool kn_bench_exited(struct kn_bench_proc *p)
{
    if (p->reaped)
        return true;
    if (p->pid <= 0)
        return true;
    int st;
    if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
        p->reaped = true;
        p->status = st;
        return true;
    }
    return false;
}

int kn_bench_wait(struct kn_bench_proc *p, int timeout_ms)
{
    uint64_t end = kn_bench_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        if (kn_bench_exited(p))
            return p->status;
        if (kn_bench_now_ns() >= end)
            return -1;
        kn_bench_sleep_ms(5);
    }
}

int kn_bench_stop(struct kn_bench_proc *p, int grace_ms)
{
    if (p->pid <= 0)
        return 0;
    if (!kn_bench_exited(p)) {
        kill(p->pid, SIGTERM);
        if (kn_bench_wait(p, grace_ms) < 0) {
            kill(p->pid, SIGKILL);
            kn_bench_wait(p, 5000);
        }
    }
    return p->status;
}

long kn_bench_rss_kib(pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long v = -1;
    size_t fl = strlen(field);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, field, fl) == 0) {
            v = strtol(line + fl, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

double kn_bench_cpu_s(pid_t pid)
{
    long long t = kn_procstat_cpu_ticks(pid);
    if (t < 0)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    return (double)t / (double)(hz > 0 ? hz : 100);
}

double kn_bench_wait_s(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    unsigned long long run, wait;
    int n = fscanf(f, "%llu %llu", &run, &wait);
    fclose(f);
    return n == 2 ? (double)wait / 1e9 : -1;
}

static bool executable(const char *p)
{
    return p && access(p, X_OK) == 0;
}

const char *kn_bench_find_exe(const char *explicit_path, const char *build_path, const char *name)
{
    static char found[8][PATH_MAX];
    static int slot;
    if (explicit_path)
        return executable(explicit_path) ? explicit_path : NULL;
    if (executable(build_path))
        return build_path;
    char *buf = found[slot++ % 8];
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(buf, PATH_MAX, "%.*s/%s", (int)(PATH_MAX - 64), self, name);
            if (executable(buf))
                return buf;
        }
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t l = strcspn(path, ":");
        if (l > 0 && l < PATH_MAX - 64) {
            snprintf(buf, PATH_MAX, "%.*s/%s", (int)l, path, name);
            if (executable(buf))
                return buf;
        }
        path += l;
        if (*path == ':')
            path++;
    }
    return NULL;
}

int kn_bench_free_udp_port(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

const char *kn_bench_log_tail(const char *path)
{
    static char buf[2048];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return buf;
    if (fseek(f, 0, SEEK_END) == 0) {
        long sz = ftell(f);
        fseek(f, sz > (long)sizeof buf - 1 ? sz - (long)sizeof buf + 1 : 0, SEEK_SET);
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}
