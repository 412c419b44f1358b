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

static const char *const host_tag[NL_HOSTS] = { "ctl", "daemon", "sim" };
static char ns_name[NL_HOSTS][64];
static pid_t owner; /* only the process that built the lab takes it down */
static bool built;
static int home_fd = -1; /* the namespace the test started in */

const char *nl_ns(enum nl_host h)
{
    return ns_name[h];
}

int nl_cmd(char *const argv[], char *out, size_t outlen)
{
    int pipefd[2] = { -1, -1 };
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
    char *argv[] = { (char *)tool, "-V", NULL };
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

/* ---- shaping ---- */

/* The link ends, their namespaces and the NFQUEUE number of each: UDP
 * (KRP/1) to that queue, everything else (TCP to the simulator, the ICMP
 * errors a closed port answers with) to the one OTHER_Q above it, both
 * under the same model. Separate queues keep the shaper's UDP counts
 * exact for the datagram accounting without its parsing a packet. */
static const struct {
    enum nl_host h;
    const char *ifname;
    int queue;
} ends[] = {
    { NL_CTL, NL_CTL_IF, 0 },
    { NL_DAEMON, NL_DC_IF, 1 },
    { NL_DAEMON, NL_DS_IF, 2 },
    { NL_SIM, NL_SIM_IF, 3 },
};
#define NENDS (sizeof ends / sizeof ends[0])
#define OTHER_Q 4

static enum nl_shaper shaped;
static pid_t shaper_pid[NL_HOSTS];
static pid_t shaper_owner; /* the process whose children the shapers are */
static char shaper_base[NL_HOSTS][128];

/* A throw-away namespace for a probe. */
static bool probe_ns(char *name, size_t len)
{
    snprintf(name, len, "kn-lab-%d-probe", (int)getpid());
    char *add[] = { "ip", "netns", "add", name, NULL };
    return nl_cmd(add, NULL, 0) == 0;
}

static void probe_del(char *name)
{
    char *del[] = { "ip", "netns", "del", name, NULL };
    nl_cmd(del, NULL, 0);
}

/* Reads the shaper's stats file; its "report N" in *report. */
static bool read_stats(const char *path, char *buf, size_t len, long *report)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return sscanf(buf, "report %ld", report) == 1;
}

/* Starts nfq_shaper in a namespace (ns: its name) on the given queues;
 * waits until it has bound them (its first report). */
static pid_t shaper_start(const char *ns, const char *base, const char *queues, const char *spec,
                          unsigned long seed)
{
    const char *exe = getenv("KN_NFQ_SHAPER");
    if (exe == NULL)
        return -1;
    char stats[192], out[192], err[192], seeds[32], qbuf[128], sbuf[256];
    snprintf(stats, sizeof stats, "%s.stats", base);
    snprintf(out, sizeof out, "%s.out", base);
    snprintf(err, sizeof err, "%s.err", base);
    snprintf(seeds, sizeof seeds, "%lu", seed);
    snprintf(qbuf, sizeof qbuf, "%s", queues);
    snprintf(sbuf, sizeof sbuf, "%s", spec);
    unlink(stats);
    char *argv[48];
    int n = 0;
    argv[n++] = "ip";
    argv[n++] = "netns";
    argv[n++] = "exec";
    argv[n++] = (char *)ns;
    argv[n++] = (char *)exe;
    argv[n++] = "--with-parent";
    argv[n++] = "--seed";
    argv[n++] = seeds;
    argv[n++] = "--stats";
    argv[n++] = stats;
    n = add_words(argv, n, 40, qbuf);
    argv[n++] = "--";
    add_words(argv, n, 48, sbuf);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawnp(&pid, "ip", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    char buf[4096];
    long report;
    for (int i = 0; i < 500; i++) { /* 5 s */
        if (read_stats(stats, buf, sizeof buf, &report))
            return pid;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            fprintf(stderr, "netlab: nfq_shaper in %s exited:\n", ns);
            char *cat[] = { "cat", err, NULL };
            nl_cmd(cat, NULL, 0);
            return -1;
        }
        usleep(10000);
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    fprintf(stderr, "netlab: nfq_shaper in %s not ready after 5 s\n", ns);
    return -1;
}

/* The shaper's files: its stats, stdout and stderr. */
static void shaper_files_rm(const char *base)
{
    for (const char *ext = ".stats\0.out\0.err\0"; *ext; ext += strlen(ext) + 1) {
        char path[512];
        snprintf(path, sizeof path, "%s%s", base, ext);
        unlink(path);
    }
}

/* Stops a shaper; true when it exited 0 and wrote nothing to stderr (base:
 * its files; its stderr is shown otherwise: an error, a sanitizer's report). */
static bool shaper_stop(pid_t pid, const char *base)
{
    kill(pid, SIGTERM);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return false;
    char err[512];
    snprintf(err, sizeof err, "%s.err", base);
    FILE *f = fopen(err, "r");
    int c = f ? fgetc(f) : EOF;
    if (f)
        fclose(f);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && c == EOF)
        return true;
    fprintf(stderr, "netlab: nfq_shaper (%s) ended with status 0x%x:\n", base, (unsigned)st);
    char *cat[] = { "cat", err, NULL };
    nl_cmd(cat, NULL, 0);
    return false;
}

/* Appends a rule sending ifname's egress (only proto's, unless NULL) to a
 * queue. */
static bool nfqueue_rule(const char *ns, const char *ifname, const char *proto, int queue)
{
    char q[16];
    snprintf(q, sizeof q, "%d", queue);
    char *argv[24] = { "ip",     "netns", "exec",        (char *)ns, "iptables-legacy", "-w", "-t",
                       "mangle", "-A",    "POSTROUTING", "-o",       (char *)ifname };
    int n = 12;
    if (proto != NULL) {
        argv[n++] = "-p";
        argv[n++] = (char *)proto;
    }
    argv[n++] = "-j";
    argv[n++] = "NFQUEUE";
    argv[n++] = "--queue-num";
    argv[n++] = q;
    argv[n] = NULL;
    if (nl_cmd(argv, NULL, 0) == 0)
        return true;
    fprintf(stderr,
            "netlab: failed: ip netns exec %s iptables-legacy -t mangle -A POSTROUTING -o %s "
            "%s%s-j NFQUEUE --queue-num %d\n",
            ns, ifname, proto ? "-p " : "", proto ? proto : "", queue);
    return false;
}

enum nl_shaper nl_shaper_probe(char *why, size_t whylen)
{
    char name[64];
    const char *no_netem = NULL;
    if (!tool_runs("tc"))
        no_netem = "tc (Debian package iproute2) not found";
    else if (!probe_ns(name, sizeof name)) {
        snprintf(why, whylen, "ip netns add failed");
        return NL_SHAPE_NONE;
    } else {
        /* netem itself: a netem qdisc on a throw-away namespace's lo */
        char *tc[] = { "tc", "-n",   name,    "qdisc", "add", "dev",
                       "lo", "root", "netem", "delay", "1ms", NULL };
        bool netem = nl_cmd(tc, NULL, 0) == 0;
        probe_del(name);
        if (netem) {
            snprintf(why, whylen, "-");
            return NL_SHAPE_NETEM;
        }
        no_netem = "this kernel has no netem qdisc (sch_netem)";
    }
    /* the shaper: built, an NFQUEUE rule taken by iptables-legacy, and the
     * shaper binding a queue (nfnetlink_queue) in a throw-away namespace */
    const char *no_nfq = NULL;
    if (getenv("KN_NFQ_SHAPER") == NULL)
        no_nfq = "nfq_shaper not built (libnetfilter-queue-dev, libmnl-dev)";
    else if (!tool_runs("iptables-legacy"))
        no_nfq = "iptables-legacy (Debian package iptables) not found";
    else if (!probe_ns(name, sizeof name))
        no_nfq = "ip netns add failed";
    else {
        char base[128];
        snprintf(base, sizeof base, "/tmp/%s", name);
        pid_t pid = shaper_start(name, base, "0", "delay 1ms", 1);
        if (pid < 0)
            no_nfq = "nfq_shaper could not bind an NFQUEUE (nfnetlink_queue)";
        else if (!nfqueue_rule(name, "lo", NULL, 0))
            no_nfq = "iptables-legacy cannot add an NFQUEUE rule (x_tables, xt_NFQUEUE)";
        /* a shaper that binds but ends badly is a bug, not a missing
         * feature: the test's own nl_unshape fails on it */
        if (pid > 0)
            shaper_stop(pid, base);
        probe_del(name);
        shaper_files_rm(base);
    }
    if (no_nfq == NULL) {
        snprintf(why, whylen, "%s", no_netem);
        return NL_SHAPE_NFQUEUE;
    }
    snprintf(why, whylen, "%s; %s", no_netem, no_nfq);
    return NL_SHAPE_NONE;
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
        char *del[] = { "ip", "netns", "del", e->d_name, NULL };
        nl_cmd(del, NULL, 0);
    }
    closedir(d);
}

/* Stops the shapers (in the process that started them) and removes
 * their files. */
bool nl_unshape(void)
{
    if (getpid() != shaper_owner)
        return true;
    bool ok = true;
    for (int h = 0; h < NL_HOSTS; h++) {
        if (shaper_pid[h] > 0)
            ok &= shaper_stop(shaper_pid[h], shaper_base[h]);
        shaper_pid[h] = 0;
        if (shaper_base[h][0])
            shaper_files_rm(shaper_base[h]);
    }
    shaper_owner = 0;
    return ok;
}

static void shapers_down(void)
{
    nl_unshape();
}

void nl_down(void)
{
    nl_unshape();
    if (!built || getpid() != owner)
        return;
    built = false;
    for (int h = 0; h < NL_HOSTS; h++) {
        char *del[] = { "ip", "netns", "del", ns_name[h], NULL };
        nl_cmd(del, NULL, 0);
        /* the files of a shaper whose test case ended without stopping it
         * (a failed check ends the case's process at once; the shaper goes
         * with it, --with-parent) */
        char base[256];
        snprintf(base, sizeof base, "/tmp/%s-shaper", ns_name[h]);
        shaper_files_rm(base);
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
    struct {
        enum nl_host a, b;
        const char *ia, *ib, *aa, *ab, *ma, *mb;
    } l[2] = {
        { NL_CTL, NL_DAEMON, NL_CTL_IF, NL_DC_IF, NL_CTL_ADDR, NL_DAEMON_CTL_ADDR,
          "02:00:0a:c9:01:01", "02:00:0a:c9:01:02" },
        { NL_DAEMON, NL_SIM, NL_DS_IF, NL_SIM_IF, NL_DAEMON_SIM_ADDR, NL_SIM_ADDR,
          "02:00:0a:c9:02:01", "02:00:0a:c9:02:02" },
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

static bool netem_on(enum nl_host h, const char *ifname, const char *spec)
{
    char words[512];
    char *argv[40];
    int n = 0;
    argv[n++] = "tc";
    argv[n++] = "-n";
    argv[n++] = ns_name[h];
    argv[n++] = "qdisc";
    argv[n++] = "replace";
    argv[n++] = "dev";
    argv[n++] = (char *)ifname;
    argv[n++] = "root";
    argv[n++] = "netem";
    snprintf(words, sizeof words, "%s", spec);
    add_words(argv, n, 40, words);
    if (nl_cmd(argv, NULL, 0) == 0)
        return true;
    fprintf(stderr, "netlab: failed: tc -n %s qdisc replace dev %s root netem %s\n", ns_name[h],
            ifname, spec);
    return false;
}

bool nl_shape(enum nl_shaper how, const char *spec, unsigned long seed)
{
    shaped = how;
    if (how == NL_SHAPE_NETEM) {
        for (size_t i = 0; i < NENDS; i++)
            if (!netem_on(ends[i].h, ends[i].ifname, spec))
                return false;
        return true;
    }
    if (how != NL_SHAPE_NFQUEUE)
        return true;
    /* one shaper per namespace, bound to the queues of its ends, before
     * the rules that feed them (a queue nobody has bound drops) */
    shaper_owner = getpid();
    atexit(shapers_down); /* also in a forked test case that started them */
    for (int h = 0; h < NL_HOSTS; h++) {
        char queues[128] = "";
        for (size_t i = 0; i < NENDS; i++)
            if (ends[i].h == (enum nl_host)h)
                snprintf(queues + strlen(queues), sizeof queues - strlen(queues),
                         "%s%d=%s/udp %d=%s/other", queues[0] ? " " : "", ends[i].queue,
                         ends[i].ifname, ends[i].queue + OTHER_Q, ends[i].ifname);
        snprintf(shaper_base[h], sizeof shaper_base[h], "/tmp/%s-shaper", ns_name[h]);
        shaper_pid[h] =
            shaper_start(ns_name[h], shaper_base[h], queues, spec, seed + (unsigned long)h);
        if (shaper_pid[h] < 0)
            return false;
    }
    for (size_t i = 0; i < NENDS; i++) {
        if (!nfqueue_rule(ns_name[ends[i].h], ends[i].ifname, "udp", ends[i].queue) ||
            !nfqueue_rule(ns_name[ends[i].h], ends[i].ifname, NULL, ends[i].queue + OTHER_Q))
            return false;
        /* and a rule with no target on the way in: it only counts (nl_udp_arrived) */
        char *count[] = { "ip",
                          "netns",
                          "exec",
                          ns_name[ends[i].h],
                          "iptables-legacy",
                          "-w",
                          "-t",
                          "mangle",
                          "-A",
                          "INPUT",
                          "-i",
                          (char *)ends[i].ifname,
                          "-p",
                          "udp",
                          NULL };
        if (nl_cmd(count, NULL, 0) != 0) {
            fprintf(stderr, "netlab: failed: iptables-legacy -t mangle -A INPUT -i %s -p udp\n",
                    ends[i].ifname);
            return false;
        }
    }
    return true;
}

/* Asks the namespace's shaper for a fresh report (SIGUSR1) and returns the
 * line of ifname's UDP queue or of its other one. */
static bool shaper_line(enum nl_host h, const char *ifname, bool udp, char *line, size_t len)
{
    if (shaper_pid[h] <= 0)
        return false;
    char stats[192], buf[4096];
    snprintf(stats, sizeof stats, "%s.stats", shaper_base[h]);
    long before = -1, now = -1;
    if (!read_stats(stats, buf, sizeof buf, &before) || kill(shaper_pid[h], SIGUSR1) != 0)
        return false;
    for (int i = 0; i < 200 && (!read_stats(stats, buf, sizeof buf, &now) || now <= before); i++)
        usleep(10000);
    if (now <= before)
        return false;
    char key[64];
    snprintf(key, sizeof key, " %s/%s seen ", ifname, udp ? "udp" : "other");
    for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        if (strncmp(l, "queue ", 6) == 0 && strstr(l, key) != NULL) {
            snprintf(line, len, "%s", l);
            return true;
        }
    return false;
}

static long field(const char *line, const char *name)
{
    char key[48];
    snprintf(key, sizeof key, " %s ", name);
    const char *p = strstr(line, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

bool nl_shaper_counts(enum nl_host h, const char *ifname, bool udp, struct nl_shaper_counts *c)
{
    char line[512];
    if (!shaper_line(h, ifname, udp, line, sizeof line))
        return false;
    *c = (struct nl_shaper_counts){
        field(line, "seen"),         field(line, "lost"),      field(line, "delayed"),
        field(line, "reordered"),    field(line, "overlimit"), field(line, "gone"),
        field(line, "refused"),      field(line, "max_held"),  field(line, "kernel_dropped"),
        field(line, "user_dropped"),
    };
    return c->seen >= 0 && c->kernel_dropped >= 0 && c->user_dropped >= 0;
}

long nl_udp_arrived(enum nl_host h, const char *ifname)
{
    if (shaped != NL_SHAPE_NFQUEUE)
        return -1;
    char *argv[] = { "ip", "netns", "exec", ns_name[h], "iptables-legacy", "-w", "-t", "mangle",
                     "-S", "INPUT", "-v",   NULL };
    char out[4096], key[64];
    if (nl_cmd(argv, out, sizeof out) != 0)
        return -1;
    snprintf(key, sizeof key, "-A INPUT -i %s -p udp -c ", ifname);
    const char *p = strstr(out, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

long nl_shape_dropped(enum nl_host h, const char *ifname)
{
    if (shaped == NL_SHAPE_NONE)
        return 0;
    if (shaped == NL_SHAPE_NFQUEUE) {
        struct nl_shaper_counts c;
        if (!nl_shaper_counts(h, ifname, true, &c))
            return -1;
        return c.lost + c.overlimit + c.gone + c.refused + c.kernel_dropped + c.user_dropped;
    }
    char *argv[] = { "tc", "-n", ns_name[h], "-s", "qdisc", "show", "dev", (char *)ifname, NULL };
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
