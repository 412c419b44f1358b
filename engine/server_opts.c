/* Command line of kenaf-engine's server mode. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hostport.h"
#include "runner.h"
#include "server_int.h"

/* DefaultUSAR.ini: STA every 0.1 s (USARVehicle StatusTimer), GroundTruth
 * and Odometry .1, INS .2, sensors by default (Encoder) .2, actuators .1. */
static const double default_interval[KN_NSTREAMS] = {
    [KN_STREAM_STA] = 0.1,      [KN_STREAM_GROUNDTRUTH] = 0.1, [KN_STREAM_INS] = 0.2,
    [KN_STREAM_ENCODER] = 0.2,  [KN_STREAM_ODOMETRY] = 0.1,    [KN_STREAM_ASTA] = 0.1,
};

void kn_srv_opts_defaults(struct kn_srv_opts *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->host, sizeof o->host, "127.0.0.1");
    o->port = KN_USAR_DEFAULT_PORT;
    o->terrain = "flat";
    o->pace = KN_PACE_REALTIME;
    o->rate = 1.0;
    for (int k = 0; k < KN_NSTREAMS; k++)
        o->interval_s[k] = default_interval[k];
    o->dialect = KN_USAR_UDK;
    o->tick_ms = 2;
    /* kenaf-simd's defaults: counts_per_m 4000 and one count per tick */
    o->ticks_per_m = 4000;
}

void kn_srv_usage(FILE *f)
{
    fprintf(f,
            "usage: kenaf-engine [--listen HOST:PORT] [--terrain NAME|FILE] [--robot FILE]\n"
            "                    [--pace realtime|fast|step] [--rate X] [--seed N]\n"
            "                    [--sen-rate STREAM=HZ ...] [--dialect udk|ut2004]\n"
            "                    [--ticks-per-m N] [--tick-ms N] [--stdin-watch] [--quiet]\n"
            "       kenaf-engine --scenario FILE | --validate | --sanity NAME (see --help there)\n"
            "Serves the USARSim protocol on TCP (default 127.0.0.1:3000; port 0 picks a free\n"
            "one) and prints \"PORT <n>\" once listening. One robot per connection.\n"
            "  --terrain   flat, step, trench, stairs, ramp, pallet, bumps, or a terrain file\n"
            "  --pace      realtime (default; --rate scales it), fast, or step (lockstep:\n"
            "              time advances only on KENAF {Cmd Step})\n"
            "  --sen-rate  STREAM=HZ for STA, GroundTruth, INS, Encoder, Odometry, ASTA\n"
            "              (0 turns a stream off; defaults 10, 10, 5, 5, 10, 10 Hz)\n"
            "  --ticks-per-m  Encoder ticks per metre of belt (default 4000, kenaf-simd's\n"
            "              counts_per_m with one count per tick)\n"
            "  --stdin-watch  exit when stdin closes (a parent that spawned us died)\n"
            "Config directory: %s\n",
            kn_config_dir());
}

static int bad(const char *what, const char *arg)
{
    fprintf(stderr, "kenaf-engine: %s: %s\n", what, arg ? arg : "(missing)");
    return 2;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* HOST:PORT or [V6]:PORT by the common rules (common/hostport.h), or
 * :PORT / PORT keeping the host; port 0 asks for any free one. */
static int parse_listen(struct kn_srv_opts *o, const char *a, char *err, size_t errlen)
{
    char host[sizeof o->host];
    uint16_t port;
    if (kn_hostport_parse_flags(a, 0,
                                KN_HOSTPORT_NEED_PORT | KN_HOSTPORT_PORT_ZERO |
                                    KN_HOSTPORT_PORT_ALONE,
                                host, sizeof host, &port, err, errlen) != 0)
        return -1;
    if (host[0] != '\0')
        memcpy(o->host, host, sizeof o->host);
    o->port = port;
    return 0;
}

static int parse_sen_rate(struct kn_srv_opts *o, const char *a)
{
    const char *eq = strchr(a, '=');
    if (!eq || eq == a || (size_t)(eq - a) >= 32)
        return -1;
    char name[32];
    memcpy(name, a, (size_t)(eq - a));
    name[eq - a] = '\0';
    double hz;
    if (parse_double(eq + 1, 0, 1000, &hz))
        return -1;
    int k = kn_srv_stream_parse(name);
    if (k < 0 && strcasecmp(name, "all") != 0)
        return -1;
    for (int i = 0; i < KN_NSTREAMS; i++)
        if (i == k || k < 0)
            o->interval_s[i] = hz > 0 ? 1.0 / hz : 0;
    return 0;
}

int kn_srv_opts_parse(struct kn_srv_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            kn_srv_usage(stdout);
            return 1;
        }
        if (strcmp(a, "--stdin-watch") == 0) {
            o->stdin_watch = true;
            continue;
        }
        if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
            continue;
        }
        if (!v) {
            fprintf(stderr, "kenaf-engine: unknown or incomplete option %s\n", a);
            kn_srv_usage(stderr);
            return 2;
        }
        i++;
        double d;
        if (strcmp(a, "--listen") == 0) {
            char err[300];
            if (parse_listen(o, v, err, sizeof err)) {
                fprintf(stderr, "kenaf-engine: --listen %s (expected HOST:PORT, port 0..65535)\n",
                        err);
                return 2;
            }
        } else if (strcmp(a, "--terrain") == 0) {
            if (!*v)
                return bad("--terrain needs a name or a file", v);
            o->terrain = v;
        } else if (strcmp(a, "--robot") == 0) {
            o->robot = v;
        } else if (strcmp(a, "--pace") == 0) {
            if (kn_pace_mode_parse(v, &o->pace))
                return bad("--pace must be realtime, fast or step", v);
        } else if (strcmp(a, "--rate") == 0) {
            if (parse_double(v, 0.01, 100, &d))
                return bad("--rate needs a number 0.01..100", v);
            o->rate = d;
        } else if (strcmp(a, "--seed") == 0) {
            if (parse_double(v, 0, 4294967295.0, &d) || d != floor(d))
                return bad("--seed needs an integer 0..4294967295", v);
            o->seed = (unsigned long)d;
            o->seed_set = true;
        } else if (strcmp(a, "--sen-rate") == 0) {
            if (parse_sen_rate(o, v))
                return bad("--sen-rate needs STREAM=HZ (STA, GroundTruth, INS, Encoder, "
                           "Odometry, ASTA or all; 0..1000 Hz)",
                           v);
        } else if (strcmp(a, "--dialect") == 0) {
            if (strcasecmp(v, "udk") == 0)
                o->dialect = KN_USAR_UDK;
            else if (strcasecmp(v, "ut2004") == 0)
                o->dialect = KN_USAR_UT2004;
            else
                return bad("--dialect must be udk or ut2004", v);
        } else if (strcmp(a, "--ticks-per-m") == 0) {
            if (parse_double(v, 1, 10000000, &d) || d != floor(d))
                return bad("--ticks-per-m needs an integer 1..10000000", v);
            o->ticks_per_m = (int)d;
        } else if (strcmp(a, "--tick-ms") == 0) {
            if (parse_double(v, 1, 50, &d) || d != floor(d))
                return bad("--tick-ms needs an integer 1..50", v);
            o->tick_ms = (int)d;
        } else {
            fprintf(stderr, "kenaf-engine: unknown option %s\n", a);
            kn_srv_usage(stderr);
            return 2;
        }
    }
    return 0;
}

int kn_srv_main(int argc, char **argv)
{
    struct kn_srv_opts o;
    kn_srv_opts_defaults(&o);
    int rc = kn_srv_opts_parse(&o, argc, argv);
    if (rc == 1)
        return 0;
    if (rc)
        return rc;
    return kn_srv_run(&o);
}
