/* nfq_shaper: a user-space stand-in for tc netem's delay, loss and reorder,
 * for the faults-hosts lab on kernels without sch_netem. It binds one or
 * more NFQUEUE numbers in the network namespace it runs in (the lab sends
 * each veth end's egress there with iptables' NFQUEUE target) and gives
 * every packet the verdict netem's model would: lost with probability
 * loss (NF_DROP), or sent at once with probability reorder, or accepted
 * after delay +- jitter (uniform, like netem without a distribution
 * table), the held packets kept sorted by their due time as netem's tfifo
 * keeps them. It never reads a packet's bytes (copy mode META), so odd
 * packets (non-IP, fragments) are only whole packets to delay or drop.
 *
 * Nothing is lost silently: fail-open stays off (a full kernel queue drops
 * and the kernel counts it; we report that count), and a verdict the
 * kernel refuses because it had already dropped the packet (the device
 * went down: the kernel flushes its queue) is counted as "gone". The
 * counters go to the --stats file on start (ready) and on SIGUSR1, and to
 * stdout on SIGTERM/SIGINT, when the held packets are released and it
 * exits 0.
 *
 * Usage: nfq_shaper [--seed N] [--stats FILE] [--with-parent] QUEUE[=NAME]... -- NETEM-WORDS
 * (--with-parent: exit when the process that started it dies)
 * NETEM-WORDS: delay TIME [JITTER [CORR%]] | loss [random] PCT% [CORR%] |
 *              reorder PCT% [CORR%] [gap N] | limit N | seed N */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_QUEUES 8

/* The model's parameters, as netem takes them (probabilities scaled to
 * 2^32 - 1 as netem scales them). */
struct model {
    int64_t delay_ns, jitter_ns;
    uint32_t delay_corr, loss, loss_corr, reorder, reorder_corr, gap, limit;
};

/* A correlated random source: with probability rho the last value again,
 * otherwise a fresh uniform one. Every value is uniform, so "reorder 10%
 * 50%" sends 10 % at once as tc-netem(8) says, in runs (lag-1 correlation
 * rho). Linux's netem mixes instead (next = (1 - rho) * uniform + rho *
 * last), which narrows the values around one half: its "10% 50%" reorders
 * about 0.1 % of packets (docs/robustness.md). */
struct crand {
    uint32_t rho, last;
    bool primed;
};

struct queue {
    uint16_t num;
    const char *name;
    uint64_t seen, lost, delayed, reordered, overlimit, gone, refused, held, max_held;
    uint32_t counter; /* packets delayed since the last one sent at once (netem's gap) */
    struct crand delay_c, loss_c, reorder_c;
};

struct held {
    int64_t due_ns;
    uint64_t order; /* arrival order: equal due times stay FIFO */
    uint32_t id;
    int q;
};

static struct model m = { .limit = 1000, .gap = 0 };
static struct queue qs[MAX_QUEUES];
static int nq;
static struct held *heap;
static size_t nheap, capheap;
static uint64_t arrivals, reports, verdicts, recv_enobufs;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static struct mnl_socket *nl;
static const char *stats_path;
static bool stopping; /* after SIGTERM: whatever still comes goes out at once */

/* xorshift64*: fast, seedable, good enough to draw loss and delays */
static uint32_t rnd32(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

static void seed_rng(unsigned long long seed)
{
    rng_state = seed * 0x9e3779b97f4a7c15ull + 1; /* never 0: xorshift would stay there */
}

static uint32_t crandom(struct crand *c)
{
    if (c->rho == 0)
        return rnd32();
    if (!c->primed || c->rho < rnd32()) {
        c->last = rnd32();
        c->primed = true;
    }
    return c->last;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "nfq_shaper: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(1);
}

static void usage(const char *why)
{
    fprintf(
        stderr,
        "nfq_shaper: %s\nusage: nfq_shaper [--seed N] [--stats FILE] [--with-parent] QUEUE[=NAME]... -- "
        "[delay TIME [JITTER [CORR%%]]] [loss [random] PCT%% [CORR%%]] "
        "[reorder PCT%% [CORR%%] [gap N]] [limit N] [seed N]\n",
        why);
    exit(2);
}

/* ---- netem's words ---- */

static bool parse_time(const char *s, int64_t *ns)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return false;
    double mult = strcmp(end, "s") == 0 || strcmp(end, "sec") == 0     ? 1e9
                  : strcmp(end, "ms") == 0 || strcmp(end, "msec") == 0 ? 1e6
                  : strcmp(end, "us") == 0 || strcmp(end, "usec") == 0 ? 1e3
                  : strcmp(end, "ns") == 0 || strcmp(end, "nsec") == 0 ? 1
                  : *end == '\0' ? 1e3 /* tc's default unit is microseconds */
                                 : -1;
    if (mult < 0)
        return false;
    *ns = (int64_t)(v * mult + 0.5);
    return true;
}

static bool is_pct(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n > 1 && s[n - 1] == '%';
}

static uint32_t parse_pct(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || strcmp(end, "%") != 0 || v < 0 || v > 100)
        usage("a percentage must be 0% to 100%");
    return v >= 100 ? UINT32_MAX : (uint32_t)(v / 100.0 * UINT32_MAX + 0.5);
}

static void parse_netem(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (strcmp(w, "delay") == 0 || strcmp(w, "latency") == 0) {
            if (i + 1 >= argc || !parse_time(argv[++i], &m.delay_ns))
                usage("delay needs a time");
            if (i + 1 < argc && parse_time(argv[i + 1], &m.jitter_ns)) {
                i++;
                if (i + 1 < argc && is_pct(argv[i + 1]))
                    m.delay_corr = parse_pct(argv[++i]);
            }
        } else if (strcmp(w, "loss") == 0 || strcmp(w, "drop") == 0) {
            if (i + 1 < argc && strcmp(argv[i + 1], "random") == 0)
                i++;
            if (i + 1 >= argc || !is_pct(argv[i + 1]))
                usage("loss needs a percentage (only the random model is implemented)");
            m.loss = parse_pct(argv[++i]);
            if (i + 1 < argc && is_pct(argv[i + 1]))
                m.loss_corr = parse_pct(argv[++i]);
        } else if (strcmp(w, "reorder") == 0) {
            if (i + 1 >= argc || !is_pct(argv[i + 1]))
                usage("reorder needs a percentage");
            m.reorder = parse_pct(argv[++i]);
            if (i + 1 < argc && is_pct(argv[i + 1]))
                m.reorder_corr = parse_pct(argv[++i]);
            if (i + 2 < argc && strcmp(argv[i + 1], "gap") == 0) {
                m.gap = (uint32_t)strtoul(argv[i + 2], NULL, 10);
                i += 2;
            }
        } else if (strcmp(w, "gap") == 0) {
            if (i + 1 >= argc)
                usage("gap needs a count");
            m.gap = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(w, "seed") == 0) {
            if (i + 1 >= argc)
                usage("seed needs a value");
            seed_rng(strtoull(argv[++i], NULL, 0));
        } else if (strcmp(w, "limit") == 0) {
            if (i + 1 >= argc || (m.limit = (uint32_t)strtoul(argv[++i], NULL, 10)) == 0)
                usage("limit needs a count > 0");
        } else {
            /* duplicate, corrupt, rate, slot, ...: refused, never ignored,
             * so a spec this shaper does not model cannot pass unnoticed */
            fprintf(stderr, "nfq_shaper: netem's '%s' is outside this shaper's model\n", w);
            usage("it takes delay, loss, reorder, gap, limit and seed");
        }
    }
    /* as tc does: reordering needs a delay, and without gap it is 1 (every
     * packet may go out at once) */
    if (m.reorder && m.delay_ns == 0)
        usage("reordering is not possible without a delay");
    if (m.reorder && m.gap == 0)
        m.gap = 1;
}

/* ---- the held packets: a binary min-heap on (due, order) ---- */

static bool before(const struct held *a, const struct held *b)
{
    return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->order < b->order);
}

static void heap_push(struct held h)
{
    if (nheap == capheap) {
        capheap = capheap ? 2 * capheap : 64;
        heap = realloc(heap, capheap * sizeof *heap);
        if (heap == NULL)
            die("out of memory");
    }
    size_t i = nheap++;
    while (i > 0 && before(&h, &heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = h;
}

static struct held heap_pop(void)
{
    struct held top = heap[0], last = heap[--nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= nheap)
            break;
        if (c + 1 < nheap && before(&heap[c + 1], &heap[c]))
            c++;
        if (!before(&heap[c], &last))
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (nheap > 0)
        heap[i] = last;
    return top;
}

/* ---- netlink ---- */

/* Sends a verdict; its sequence number carries the queue's index so that an
 * error the kernel answers with is counted on the right queue. */
static void verdict(int q, uint32_t id, int v)
{
    char buf[MNL_SOCKET_BUFFER_SIZE];
    struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_VERDICT, qs[q].num);
    nlh->nlmsg_seq = (uint32_t)(++verdicts << 4) | (uint32_t)q;
    nfq_nlmsg_verdict_put(nlh, (int)id, v);
    if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
        die("sending a verdict");
}

/* Sends a config message and waits for its acknowledgement. */
static void config(struct nlmsghdr *nlh, const char *what)
{
    static uint32_t seq = 1;
    nlh->nlmsg_flags |= NLM_F_ACK;
    nlh->nlmsg_seq = seq++;
    if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
        die(what);
    char buf[MNL_SOCKET_BUFFER_SIZE];
    ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof buf);
    if (n < 0 ||
        mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, mnl_socket_get_portid(nl), NULL, NULL) < 0)
        die(what);
}

static void bind_queue(const struct queue *q)
{
    char buf[MNL_SOCKET_BUFFER_SIZE];
    struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->num);
    nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
    config(nlh, "binding the queue (is another process bound to it?)");
    nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->num);
    nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_META, 0); /* no packet bytes */
    /* room for what we hold (limit) and a burst not read yet: over the
     * limit is ours to drop and count, as netem does; the kernel's own
     * queue-full drops only if we fall that far behind */
    nfq_nlmsg_cfg_put_qmaxlen(nlh, m.limit + 1024);
    /* fail-open off, said explicitly: a full queue drops (and counts) */
    mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(0));
    mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(NFQA_CFG_F_FAIL_OPEN));
    config(nlh, "configuring the queue");
}

static int queue_index(uint16_t num)
{
    for (int i = 0; i < nq; i++)
        if (qs[i].num == num)
            return i;
    return -1;
}

/* netem's enqueue, for one packet: loss, then limit, then delay or reorder. */
static void on_packet(int q, uint32_t id, int64_t now)
{
    struct queue *x = &qs[q];
    x->seen++;
    if (stopping) {
        verdict(q, id, NF_ACCEPT);
        return;
    }
    if (m.loss && m.loss >= crandom(&x->loss_c)) {
        x->lost++;
        verdict(q, id, NF_DROP);
        return;
    }
    if (x->held >= m.limit) {
        x->overlimit++;
        verdict(q, id, NF_DROP);
        return;
    }
    if (m.gap == 0 || x->counter < m.gap - 1 || m.reorder < crandom(&x->reorder_c)) {
        int64_t d = m.delay_ns;
        if (m.jitter_ns > 0) {
            /* uniform on [delay - jitter, delay + jitter), with netem's
             * correlation when one was given */
            uint64_t span = 2 * (uint64_t)m.jitter_ns;
            d += (int64_t)((uint64_t)crandom(&x->delay_c) * span >> 32) - m.jitter_ns;
        }
        if (d < 0)
            d = 0;
        x->counter++;
        x->delayed++;
        x->held++;
        if (x->held > x->max_held)
            x->max_held = x->held;
        heap_push((struct held){ .due_ns = now + d, .order = arrivals++, .id = id, .q = q });
    } else {
        /* netem puts this one at the head of its queue: out at once, ahead
         * of the packets it holds */
        x->counter = 0;
        x->reordered++;
        verdict(q, id, NF_ACCEPT);
    }
}

static void on_message(const struct nlmsghdr *nlh, int64_t now)
{
    if (nlh->nlmsg_type == NLMSG_ERROR) {
        const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
        if (e->error == 0)
            return;
        int q = (int)(e->msg.nlmsg_seq & 0xf);
        if (q >= nq)
            q = 0;
        /* ENOENT: the kernel no longer held the packet (it flushed the
         * queue when the device went down) */
        if (-e->error == ENOENT)
            qs[q].gone++;
        else
            qs[q].refused++;
        return;
    }
    if (nlh->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
        return;
    struct nlattr *attr[NFQA_MAX + 1] = { 0 };
    if (nfq_nlmsg_parse(nlh, attr) < 0 || attr[NFQA_PACKET_HDR] == NULL) {
        fprintf(stderr, "nfq_shaper: a packet message without its header, ignored\n");
        return;
    }
    const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);
    const struct nfqnl_msg_packet_hdr *ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
    int q = queue_index(ntohs(g->res_id));
    if (q < 0) {
        fprintf(stderr, "nfq_shaper: a packet from queue %u we did not bind\n", ntohs(g->res_id));
        return;
    }
    on_packet(q, ntohl(ph->packet_id), now);
}

static void receive(void)
{
    char buf[65536];
    ssize_t n = recv(mnl_socket_get_fd(nl), buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) {
        if (errno == ENOBUFS) {
            recv_enobufs++; /* the socket overflowed: the kernel counts the packets as user_dropped */
            return;
        }
        if (errno == EAGAIN || errno == EINTR)
            return;
        die("receiving");
    }
    int64_t now = now_ns();
    int len = (int)n;
    for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(h, len);
         h = mnl_nlmsg_next(h, &len))
        on_message(h, now);
}

static void release_due(int64_t now, bool all)
{
    while (nheap > 0 && (all || heap[0].due_ns <= now)) {
        struct held h = heap_pop();
        qs[h.q].held--;
        verdict(h.q, h.id, NF_ACCEPT);
    }
}

/* ---- counters ---- */

/* The kernel's own counters of a queue (/proc/net/netfilter/nfnetlink_queue
 * of this namespace): packets dropped because the queue was full, or
 * because our socket overflowed. */
static void kernel_counts(uint16_t num, long *qdropped, long *udropped)
{
    *qdropped = *udropped = -1;
    FILE *f = fopen("/proc/net/netfilter/nfnetlink_queue", "r");
    if (f == NULL)
        return;
    unsigned qn, portid, total, mode, range, qd, ud;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%u %u %u %u %u %u %u", &qn, &portid, &total, &mode, &range, &qd, &ud) ==
                7 &&
            qn == num) {
            *qdropped = qd;
            *udropped = ud;
        }
    fclose(f);
}

static void print_counts(FILE *f)
{
    fprintf(f, "report %llu\n", (unsigned long long)reports);
    fprintf(f,
            "model delay_us %lld jitter_us %lld loss_ppm %.0f reorder_ppm %.0f gap %u limit %u "
            "recv_enobufs %llu\n",
            (long long)(m.delay_ns / 1000), (long long)(m.jitter_ns / 1000),
            m.loss / (double)UINT32_MAX * 1e6, m.reorder / (double)UINT32_MAX * 1e6, m.gap, m.limit,
            (unsigned long long)recv_enobufs);
    for (int i = 0; i < nq; i++) {
        const struct queue *x = &qs[i];
        long qd, ud;
        kernel_counts(x->num, &qd, &ud);
        fprintf(
            f,
            "queue %u %s seen %llu lost %llu delayed %llu reordered %llu overlimit %llu "
            "gone %llu refused %llu held %llu max_held %llu kernel_dropped %ld user_dropped %ld\n",
            x->num, x->name, (unsigned long long)x->seen, (unsigned long long)x->lost,
            (unsigned long long)x->delayed, (unsigned long long)x->reordered,
            (unsigned long long)x->overlimit, (unsigned long long)x->gone,
            (unsigned long long)x->refused, (unsigned long long)x->held,
            (unsigned long long)x->max_held, qd, ud);
    }
}

static void write_stats(void)
{
    reports++;
    if (stats_path == NULL)
        return;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", stats_path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        die(tmp);
    print_counts(f);
    if (fclose(f) != 0 || rename(tmp, stats_path) != 0)
        die(stats_path);
}

int main(int argc, char **argv)
{
    bool with_parent = false;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed_rng(strtoull(argv[++i], NULL, 0));
        } else if (strcmp(argv[i], "--with-parent") == 0) {
            with_parent = true;
        } else if (strcmp(argv[i], "--stats") == 0 && i + 1 < argc) {
            stats_path = argv[++i];
        } else if (argv[i][0] >= '0' && argv[i][0] <= '9' && nq < MAX_QUEUES) {
            char *end;
            unsigned long n = strtoul(argv[i], &end, 10);
            if (n > 65535 || (*end != '\0' && *end != '='))
                usage("a queue is a number 0..65535, optionally =NAME");
            qs[nq].num = (uint16_t)n;
            qs[nq].name = *end == '=' ? end + 1 : argv[i];
            nq++;
        } else {
            usage(nq == MAX_QUEUES ? "at most 8 queues" : "unknown option");
        }
    }
    if (nq == 0)
        usage("no queue given");
    if (i < argc)
        parse_netem(argc - i - 1, argv + i + 1);
    for (int k = 0; k < nq; k++) {
        qs[k].delay_c.rho = m.delay_corr;
        qs[k].loss_c.rho = m.loss_corr;
        qs[k].reorder_c.rho = m.reorder_corr;
    }

    /* the lab may die without stopping us: go with it */
    if (with_parent)
        prctl(PR_SET_PDEATHSIG, SIGTERM);
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGUSR1);
    if (sigprocmask(SIG_BLOCK, &sigs, NULL) != 0)
        die("sigprocmask");
    int sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0)
        die("signalfd");
    if (with_parent && getppid() == 1)
        return 1;

    nl = mnl_socket_open(NETLINK_NETFILTER);
    if (nl == NULL || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
        die("netlink socket");
    int rcvbuf = 1 << 20;
    setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    for (int k = 0; k < nq; k++)
        bind_queue(&qs[k]);
    write_stats(); /* ready */

    struct pollfd pfd[2] = { { .fd = mnl_socket_get_fd(nl), .events = POLLIN },
                             { .fd = sfd, .events = POLLIN } };
    for (;;) {
        int64_t now = now_ns();
        release_due(now, false);
        struct timespec ts, *tsp = NULL;
        if (nheap > 0) {
            int64_t wait = heap[0].due_ns - now;
            ts.tv_sec = (time_t)(wait / 1000000000);
            ts.tv_nsec = (long)(wait % 1000000000);
            tsp = &ts;
        }
        if (ppoll(pfd, 2, tsp, NULL) < 0 && errno != EINTR)
            die("ppoll");
        if (pfd[0].revents & POLLIN)
            receive();
        else if (pfd[0].revents & (POLLERR | POLLHUP))
            receive(); /* ENOBUFS arrives as POLLERR: counted there */
        if (pfd[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == sizeof si) {
                if (si.ssi_signo == SIGUSR1) {
                    write_stats();
                    continue;
                }
                /* stop: what we hold goes out now; the kernel's answers
                 * to those verdicts are read for a moment (a refusal is
                 * counted); then the counters */
                stopping = true;
                release_due(0, true);
                for (int64_t end = now_ns() + 100000000; now_ns() < end;) {
                    struct pollfd p = { .fd = mnl_socket_get_fd(nl), .events = POLLIN };
                    if (poll(&p, 1, 20) > 0)
                        receive();
                }
                write_stats();
                print_counts(stdout);
                mnl_socket_close(nl);
                free(heap);
                return 0;
            }
        }
    }
}
