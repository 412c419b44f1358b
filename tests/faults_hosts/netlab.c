/* The three-namespace lab of the faults-hosts test: see netlab.h. */
#include "netlab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *const host_tag[NL_HOSTS] = {"ctl", "daemon", "sim"};
static char ns_name[NL_HOSTS][64];
static pid_t owner;       /* only the process that built the lab takes it down */
static bool built;
static int home_fd = -1;  /* the namespace the test started in */

const char *nl_ns(enum nl_host h)
{
    return ns_name[h];
}

int nl_cmd(char *const argv[], char *out, size_t outlen)
{
    int pipefd[2] = {-1, -1};
    if (out != NULL && pipe(pipefd) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (out != NULL) {
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&fa, pipefd[0]);
        posix_spawn_file_actions_addclose(&fa, pipefd[1]);
    }
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (out != NULL) {
        close(pipefd[1]);
        size_t used = 0;
        ssize_t n;
        while (rc == 0 && (n = read(pipefd[0], out + used, outlen - 1 - used)) != 0) {
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                break;
            used += (size_t)n;
            if (used + 1 >= outlen)
                break;
        }
        out[used] = '\0';
        close(pipefd[0]);
    }
    if (rc != 0)
        return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Appends the space-separated words of buf (cut up in place) to argv[n..]
 * and a NULL, within max entries; returns the new count. */
static int add_words(char *argv[], int n, int max, char *buf)
{
    for (char *save = NULL, *w = strtok_r(buf, " ", &save); w && n < max - 1;
         w = strtok_r(NULL, " ", &save))
        argv[n++] = w;
    argv[n] = NULL;
    return n;
}

/* Runs "ip -n NS words..." (words space-separated); true on exit 0. */
static bool ip_in(enum nl_host h, const char *words)
{
    char buf[512], *argv[32];
    snprintf(buf, sizeof buf, "%s", words);
    int n = 0;
    argv[n++] = "ip";
    if (h != NL_HOSTS) {
        argv[n++] = "-n";
        argv[n++] = ns_name[h];
    }
    add_words(argv, n, 32, buf);
    if (nl_cmd(argv, NULL, 0) == 0)
        return true;
    fprintf(stderr, "netlab: failed: ip%s%s %s\n", h != NL_HOSTS ? " -n " : "",
            h != NL_HOSTS ? ns_name[h] : "", words);
    return false;
}

static bool tool_runs(const char *tool)
{
    char *argv[] = {(char *)tool, "-V", NULL};
    char out[256];
    return nl_cmd(argv, out, sizeof out) == 0;
}

const char *nl_unavailable(void)
{
    if (geteuid() != 0)
        return "needs root (it creates network namespaces with ip netns)";
    if (!tool_runs("ip"))
        return "ip (Debian package iproute2) not found";
    return NULL;
}

const char *nl_netem_unavailable(void)
{
    if (!tool_runs("tc"))
        return "tc (Debian package iproute2) not found";
    /* netem itself: a throw-away namespace with a netem qdisc on its lo */
    char name[64];
    snprintf(name, sizeof name, "kn-lab-%d-probe", (int)getpid());
    char *add[] = {"ip", "netns", "add", name, NULL};
    if (nl_cmd(add, NULL, 0) != 0)
        return "ip netns add failed";
    char *tc[] = {"tc", "-n", name, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms", NULL};
    bool netem = nl_cmd(tc, NULL, 0) == 0;
    char *del[] = {"ip", "netns", "del", name, NULL};
    nl_cmd(del, NULL, 0);
    return netem ? NULL : "this kernel has no netem qdisc (sch_netem)";
}

/* Namespaces left by a run that was killed outright (its pid is gone). */
static void remove_stale(void)
{
    DIR *d = opendir("/run/netns");
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int pid = 0;
        if (sscanf(e->d_name, "kn-lab-%d-", &pid) != 1 || pid <= 0)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char *del[] = {"ip", "netns", "del", e->d_name, NULL};
        nl_cmd(del, NULL, 0);
    }
    closedir(d);
}

void nl_down(void)
{
    if (!built || getpid() != owner)
        return;
    built = false;
    for (int h = 0; h < NL_HOSTS; h++) {
        char *del[] = {"ip", "netns", "del", ns_name[h], NULL};
        nl_cmd(del, NULL, 0);
    }
}

static void on_signal(int sig)
{
    nl_down();
    signal(sig, SIG_DFL);
    raise(sig);
}

bool nl_up(void)
{
    remove_stale();
    owner = getpid();
    for (int h = 0; h < NL_HOSTS; h++)
        snprintf(ns_name[h], sizeof ns_name[h], "kn-lab-%d-%s", (int)owner, host_tag[h]);
    home_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (home_fd < 0) {
        fprintf(stderr, "netlab: /proc/self/ns/net: %s\n", strerror(errno));
        return false;
    }
    built = true;
    atexit(nl_down);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    char w[256];
    for (int h = 0; h < NL_HOSTS; h++) {
        snprintf(w, sizeof w, "netns add %s", ns_name[h]);
        if (!ip_in(NL_HOSTS, w) || !ip_in((enum nl_host)h, "link set lo up"))
            return false;
    }
    /* Fixed MAC addresses and permanent neighbour entries: no ARP, so a
     * datagram sent while a link is down is dropped by the veth (and
     * counted there), not queued for an address resolution that fails. */
    struct { enum nl_host a, b; const char *ia, *ib, *aa, *ab, *ma, *mb; } l[2] = {
        {NL_CTL, NL_DAEMON, NL_CTL_IF, NL_DC_IF, NL_CTL_ADDR, NL_DAEMON_CTL_ADDR,
         "02:00:0a:c9:01:01", "02:00:0a:c9:01:02"},
        {NL_DAEMON, NL_SIM, NL_DS_IF, NL_SIM_IF, NL_DAEMON_SIM_ADDR, NL_SIM_ADDR,
         "02:00:0a:c9:02:01", "02:00:0a:c9:02:02"},
    };
    for (int i = 0; i < 2; i++) {
        snprintf(w, sizeof w, "link add %s address %s type veth peer name %s address %s netns %s",
                 l[i].ia, l[i].ma, l[i].ib, l[i].mb, ns_name[l[i].b]);
        if (!ip_in(l[i].a, w))
            return false;
        snprintf(w, sizeof w, "addr add %s/24 dev %s", l[i].aa, l[i].ia);
        if (!ip_in(l[i].a, w))
            return false;
        snprintf(w, sizeof w, "addr add %s/24 dev %s", l[i].ab, l[i].ib);
        if (!ip_in(l[i].b, w) || !nl_link(l[i].a, l[i].ia, true) || !nl_link(l[i].b, l[i].ib, true))
            return false;
        snprintf(w, sizeof w, "neigh replace %s lladdr %s nud permanent dev %s", l[i].ab, l[i].mb,
                 l[i].ia);
        if (!ip_in(l[i].a, w))
            return false;
        snprintf(w, sizeof w, "neigh replace %s lladdr %s nud permanent dev %s", l[i].aa, l[i].ma,
                 l[i].ib);
        if (!ip_in(l[i].b, w))
            return false;
    }
    return true;
}

void nl_enter(enum nl_host h)
{
    int fd = home_fd;
    char path[128];
    if (h != NL_HOSTS) {
        snprintf(path, sizeof path, "/run/netns/%s", ns_name[h]);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            fprintf(stderr, "netlab: %s: %s\n", path, strerror(errno));
            abort();
        }
    }
    if (setns(fd, CLONE_NEWNET) != 0) {
        fprintf(stderr, "netlab: setns %s: %s\n", h != NL_HOSTS ? path : "home", strerror(errno));
        abort();
    }
    if (fd != home_fd)
        close(fd);
}

bool nl_link(enum nl_host h, const char *ifname, bool up)
{
    char w[128];
    snprintf(w, sizeof w, "link set %s %s", ifname, up ? "up" : "down");
    return ip_in(h, w);
}

bool nl_netem(enum nl_host h, const char *ifname, const char *spec)
{
    char words[512];
    char *argv[40];
    int n = 0;
    argv[n++] = "tc";
    argv[n++] = "-n";
    argv[n++] = ns_name[h];
    argv[n++] = "qdisc";
    argv[n++] = spec ? "replace" : "del";
    argv[n++] = "dev";
    argv[n++] = (char *)ifname;
    argv[n++] = "root";
    argv[n] = NULL;
    if (spec) {
        argv[n++] = "netem";
        snprintf(words, sizeof words, "%s", spec);
        add_words(argv, n, 40, words);
    }
    if (nl_cmd(argv, NULL, 0) == 0)
        return true;
    fprintf(stderr, "netlab: failed: tc -n %s qdisc ... dev %s netem %s\n", ns_name[h], ifname,
            spec ? spec : "(del)");
    return false;
}

long nl_netem_dropped(enum nl_host h, const char *ifname)
{
    char *argv[] = {"tc", "-n", ns_name[h], "-s", "qdisc", "show", "dev", (char *)ifname, NULL};
    char out[4096];
    if (nl_cmd(argv, out, sizeof out) != 0)
        return -1;
    const char *netem = strstr(out, "qdisc netem");
    const char *d = netem ? strstr(netem, "dropped ") : NULL;
    return d ? strtol(d + 8, NULL, 10) : -1;
}

long nl_udp_counter(enum nl_host h, const char *name)
{
    nl_enter(h);
    /* /proc/thread-self/net follows the thread's network namespace */
    FILE *f = fopen("/proc/thread-self/net/snmp", "r");
    nl_enter(NL_HOSTS);
    if (f == NULL)
        return -1;
    char head[1024], vals[1024];
    long v = -1;
    while (fgets(head, sizeof head, f) && fgets(vals, sizeof vals, f)) {
        if (strncmp(head, "Udp:", 4) != 0 || strncmp(vals, "Udp:", 4) != 0)
            continue;
        char *sh = NULL, *sv = NULL;
        char *k = strtok_r(head + 4, " \n", &sh), *x = strtok_r(vals + 4, " \n", &sv);
        for (; k && x; k = strtok_r(NULL, " \n", &sh), x = strtok_r(NULL, " \n", &sv))
            if (strcmp(k, name) == 0)
                v = strtol(x, NULL, 10);
        break;
    }
    fclose(f);
    return v;
}
