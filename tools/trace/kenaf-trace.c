/* kenaf-trace: a passive KRP/1 observer. It only subscribes to STATUS (it
 * never sends a set-point, so it can watch a robot another program drives)
 * and writes the trajectory as CSV and as an SVG top view when it ends:
 * after --duration, or on SIGINT/SIGTERM (then with status 0, so
 * `kenaf-trace --svg out.svg & ... kill -INT $!` is the normal way). The
 * output files are opened at start, so a wrong path fails at once and not
 * after the recording. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hostport.h"
#include "krp.h"
#include "krp_session.h"
#include "trace.h"

#ifndef KN_VERSION
#define KN_VERSION "0"
#endif

#define DEFAULT_ROBOT "127.0.0.1:9750"
#define DEFAULT_PORT 9750
/* The Kenaf's body and main tracks seen from above (config/robots/
 * kenaf.json: main_track pulley_x 0.17 + radius 0.08 m each way; y 0.115
 * + width 0.07 / 2 m each side). */
#define KENAF_LENGTH_M 0.50
#define KENAF_WIDTH_M 0.30

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kenaf-trace [--robot HOST:PORT] [--period MS] [--duration S]\n"
            "                   [--csv FILE] [--svg FILE] [--title TEXT]\n"
            "                   [--footprint LENGTH,WIDTH] [--quiet]\n"
            "       kenaf-trace --version | --help\n"
            "Subscribes to a robot's STATUS (KRP/1) and records its trajectory until\n"
            "SIGINT/SIGTERM (exit 0) or --duration; then writes the files and prints\n"
            "waypoints.\n"
            "  --robot HOST:PORT     the robot (default $KENAF_ROBOT, else %s;\n"
            "                        a missing port is %d)\n"
            "  --period MS           STATUS period asked for, 10..1000 (default 50)\n"
            "  --duration S          stop after S seconds (default: until a signal)\n"
            "  --csv FILE            every sample as CSV\n"
            "  --svg FILE            the top view as SVG\n"
            "  --title TEXT          the SVG's title (default \"kenaf-trace\")\n"
            "  --footprint L,W       the robot's footprint in the SVG, metres\n"
            "                        (default the Kenaf's %.2f,%.2f; 0,0 for none)\n"
            "  --quiet               no waypoint table\n",
            DEFAULT_ROBOT, DEFAULT_PORT, KENAF_LENGTH_M, KENAF_WIDTH_M);
}

struct opts {
    const char *robot, *csv, *svg, *title;
    long period;
    double duration;
    struct kn_svgplot_robot footprint;
    bool quiet;
};

/* A number that is all of s, within [lo, hi]. */
static bool number(const char *s, double lo, double hi, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && *end == '\0' && errno == 0 && *v >= lo && *v <= hi;
}

static bool footprint(const char *s, struct kn_svgplot_robot *r)
{
    char buf[64];
    const char *comma = strchr(s, ',');
    if (!comma || (size_t)(comma - s) >= sizeof buf)
        return false;
    memcpy(buf, s, (size_t)(comma - s));
    buf[comma - s] = '\0';
    return number(buf, 0, 100, &r->length) && number(comma + 1, 0, 100, &r->width);
}

/* 0 to go on, else the exit status (after --help, --version or a bad
 * option). */
static int parse_args(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        { "robot", required_argument, NULL, 'r' },
        { "period", required_argument, NULL, 'p' },
        { "duration", required_argument, NULL, 'd' },
        { "csv", required_argument, NULL, 'c' },
        { "svg", required_argument, NULL, 's' },
        { "title", required_argument, NULL, 't' },
        { "footprint", required_argument, NULL, 'f' },
        { "quiet", no_argument, NULL, 'q' },
        { "version", no_argument, NULL, 'V' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *env = getenv("KENAF_ROBOT");
    *o = (struct opts){ env && *env ? env : DEFAULT_ROBOT, NULL, NULL, "kenaf-trace", 50, 0,
                        { KENAF_LENGTH_M, KENAF_WIDTH_M }, false };
    int c;
    double v;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'r': o->robot = optarg; break;
        case 'c': o->csv = optarg; break;
        case 's': o->svg = optarg; break;
        case 't': o->title = optarg; break;
        case 'q': o->quiet = true; break;
        case 'p':
            if (!number(optarg, 10, 1000, &v) || v != (long)v) {
                fprintf(stderr, "kenaf-trace: --period takes 10..1000 ms, got \"%s\"\n", optarg);
                return 2;
            }
            o->period = (long)v;
            break;
        case 'd':
            if (!number(optarg, 0, 1e9, &o->duration)) {
                fprintf(stderr, "kenaf-trace: --duration takes seconds >= 0, got \"%s\"\n", optarg);
                return 2;
            }
            break;
        case 'f':
            if (!footprint(optarg, &o->footprint)) {
                fprintf(stderr,
                        "kenaf-trace: --footprint takes LENGTH,WIDTH in metres, got \"%s\"\n",
                        optarg);
                return 2;
            }
            break;
        case 'V': printf("kenaf-trace %s\n", KN_VERSION); return -1;
        case 'h': usage(stdout); return -1;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "kenaf-trace: unexpected argument \"%s\"\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    return 0;
}

static int open_robot(const char *spec)
{
    struct sockaddr_storage ss;
    socklen_t len;
    char err[256];
    if (kn_hostport_lookup(spec, DEFAULT_PORT, 0, SOCK_DGRAM, &ss, &len, err, sizeof err) != 0) {
        fprintf(stderr, "kenaf-trace: robot address %s\n", err);
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) != 0) {
        fprintf(stderr, "kenaf-trace: robot %s: %s\n", spec, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* An output file, opened (and so created or emptied) at start. */
static FILE *open_output(const char *path)
{
    if (!path)
        return NULL;
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "kenaf-trace: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

/* Writes through the writer and closes f; the errno text on failure. */
static int finish_output(FILE *f, const char *path, bool as_svg, const struct kn_trace *t,
                         const struct opts *o)
{
    errno = 0;
    int rc = as_svg ? kn_trace_write_svg(t, f, o->title, &o->footprint) : kn_trace_write_csv(t, f);
    int saved = errno;
    if (fflush(f) != 0 && saved == 0)
        saved = errno;
    if (fclose(f) != 0 && saved == 0)
        saved = errno;
    if (rc != 0 || saved != 0) {
        fprintf(stderr, "kenaf-trace: writing %s: %s\n", path, strerror(saved ? saved : EIO));
        return -1;
    }
    return 0;
}

/* kenaf-trace only watches: a session as an observer where the robot has
 * sessions (so it needs no slot meant for plain clients), plain KRP/1
 * where it has not. */
static struct kn_krp_session sess;
static bool hello_acked;

static void send_stamped(int fd, uint32_t *seq, struct kn_krp_msg *m)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    m->h.seq = (*seq)++;
    kn_krp_session_stamp(&sess, m);
    size_t n = kn_krp_encode(m, buf, sizeof buf);
    /* a refused send (robot not up yet) is retried by the renewal timer */
    (void)send(fd, buf, n, 0);
}

static void send_subscribe(int fd, uint32_t *seq, uint16_t period)
{
    struct kn_krp_msg m;
    if (!hello_acked && period) { /* subscribe once the answer says how */
        kn_krp_session_hello(&sess, &m, "kenaf-trace", true);
        send_stamped(fd, seq, &m);
        return;
    }
    kn_krp_init(&m, KN_KRP_SUBSCRIBE, 0, 0);
    m.u.subscribe.period_ms = period;
    send_stamped(fd, seq, &m);
}

/* HELLO_ACK opens the session (the next renewal subscribes under it);
 * BAD_SESSION means the robot forgot it: HELLO again. */
static void on_answer(const struct kn_krp_msg *m, uint32_t next_seq, double *renew)
{
    if (m->h.type == KN_KRP_HELLO_ACK) {
        hello_acked = true;
        if (kn_krp_session_accept(&sess, &m->u.hello_ack, next_seq))
            *renew = 0;
    } else if (m->h.type == KN_KRP_ERROR && kn_krp_session_lost(&sess, &m->u.error)) {
        hello_acked = false;
        *renew = 0;
    }
}

/* Records STATUS until a signal or the duration; returns the number of
 * datagrams that were not KRP/1. */
static size_t record(int fd, const struct opts *o, struct kn_trace *t)
{
    uint32_t seq = 1;
    double start = now_s(), renew = 0;
    size_t bad = 0;
    while (!stop_signal && (o->duration <= 0 || now_s() - start < o->duration)) {
        if (now_s() >= renew) {
            /* the lease is 5 s; renewing each second survives lost datagrams */
            send_subscribe(fd, &seq, (uint16_t)o->period);
            renew = now_s() + 1.0;
        }
        struct pollfd p = { fd, POLLIN, 0 };
        if (poll(&p, 1, 100) <= 0)
            continue;
        uint8_t buf[KN_KRP_MAX_DGRAM + 1];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0)
            continue; /* ECONNREFUSED while the robot is not up: keep trying */
        struct kn_krp_msg m;
        if (kn_krp_decode(buf, (size_t)n, &m) != KN_KRP_OK) {
            bad++;
            continue;
        }
        if (m.h.type == KN_KRP_STATUS)
            kn_trace_add(t, &m.u.status);
        else
            on_answer(&m, seq, &renew);
    }
    send_subscribe(fd, &seq, 0);
    struct kn_krp_msg bye;
    kn_krp_init(&bye, KN_KRP_BYE, 0, 0);
    send_stamped(fd, &seq, &bye);
    return bad;
}

int main(int argc, char **argv)
{
    struct opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    FILE *csv = open_output(o.csv), *svg = open_output(o.svg);
    if ((o.csv && !csv) || (o.svg && !svg))
        return 1;
    int fd = open_robot(o.robot);
    if (fd < 0)
        return 1;
    /* no SA_RESTART: the signal ends the poll at once */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    struct kn_trace t;
    kn_trace_init(&t, 2000000);
    size_t bad = record(fd, &o, &t);
    close(fd);

    rc = 0;
    if (csv && finish_output(csv, o.csv, false, &t, &o) != 0)
        rc = 1;
    if (svg && finish_output(svg, o.svg, true, &t, &o) != 0)
        rc = 1;
    if (!o.quiet)
        kn_trace_print(&t, 1.0, stdout);
    if (bad)
        fprintf(stderr, "kenaf-trace: %zu datagrams were not valid KRP/1\n", bad);
    if (t.n == 0) {
        fprintf(stderr, "kenaf-trace: no STATUS received from %s\n", o.robot);
        rc = 1;
    }
    kn_trace_free(&t);
    return rc;
}
