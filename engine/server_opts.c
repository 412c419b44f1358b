/* Command line of kenaf-engine's server mode. */
#include <errno.h>
#include <getopt.h>
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
    [KN_STREAM_STA] = 0.1,     [KN_STREAM_GROUNDTRUTH] = 0.1, [KN_STREAM_INS] = 0.2,
    [KN_STREAM_ENCODER] = 0.2, [KN_STREAM_ODOMETRY] = 0.1,    [KN_STREAM_ASTA] = 0.1,
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
    o->judge_idle_s = 20;
}

void kn_srv_usage(FILE *f)
{
    fprintf(f,
            "usage: kenaf-engine [--listen HOST:PORT] [--terrain NAME|FILE] [--robot FILE]\n"
            "                    [--pace realtime|fast|step] [--rate X] [--seed N]\n"
            "                    [--sen-rate STREAM=HZ ...] [--dialect udk|ut2004]\n"
            "                    [--ticks-per-m N] [--tick-ms N] [--stdin-watch]\n"
            "                    [--heartbeat-ms N] [--auth-token-env NAME] [--quiet]\n"
            "                    [--judge SCENARIO [--judge-variant N] [--judge-verdict FILE]\n"
            "                     [--judge-csv FILE] [--judge-svg FILE] [--judge-idle S]\n"
            "                     [--judge-robots NAME,NAME... [--judge-control FIFO]]\n"
            "                     [--judge-trial-end]]\n"
            "       kenaf-engine --scenario FILE | --validate | --sanity NAME\n"
            "                    | --export-sdf TERRAIN (see --help there)\n"
            "Serves the USARSim protocol on TCP (default 127.0.0.1:3000; port 0 picks a free\n"
            "one) and prints \"PORT <n>\" once listening. One robot per connection.\n"
            "  --terrain   flat, step, trench, stairs, ramp, pallet, bumps, or a terrain file\n"
            "              (the ASTM E54 test apparatus: terrains/apparatus/, by path)\n"
            "  --pace      realtime (default; --rate scales it), fast, or step (lockstep:\n"
            "              time advances only on KENAF {Cmd Step})\n"
            "  --sen-rate  STREAM=HZ for STA, GroundTruth, INS, Encoder, Odometry, ASTA\n"
            "              (0 turns a stream off; defaults 10, 10, 5, 5, 10, 10 Hz)\n"
            "  --ticks-per-m  Encoder ticks per metre of belt (default 4000, kenaf-simd's\n"
            "              counts_per_m with one count per tick)\n"
            "  --stdin-watch  exit when stdin closes (a parent that spawned us died)\n"
            "  --heartbeat-ms N  print \"ALIVE <time>\" on stdout every N ms, so a parent\n"
            "              can tell a hung engine from a silent network\n"
            "  --auth-token-env NAME  a token in environment variable NAME: only a\n"
            "              connection that sent KENAF {Cmd Auth} {Token t} may INIT robots\n"
            "              or send KENAF commands (kenaf-simd spawns the engine so)\n"
            "  --judge     a scenario file with an \"external\" controller (kenaf-sim-run\n"
            "              --scenario): its world and start pose for the first robot, its\n"
            "              criterion and limits judged every 10 ms of simulated time; the\n"
            "              server stops at its time limit\n"
            "  --judge-variant N  the scenario's variant (default 0)\n"
            "  --judge-verdict FILE  write the verdict (key=value lines) there at the end\n"
            "  --judge-csv FILE, --judge-svg FILE  the trajectory and its plot\n"
            "  --judge-idle S  end with an error after S s of wall time without a step\n"
            "              once the robot is spawned (default 20)\n"
            "  --judge-robots NAMES  a fleet: one judged robot per name (an INIT of that\n"
            "              name), at the scenario's start for it; the world steps only\n"
            "              when every robot has asked for time; outputs get \"-NAME\"\n"
            "  --judge-control FIFO  lines \"exited NAME\": that robot's program ended\n"
            "  --judge-trial-end  a trial's run ends when the trial does (every\n"
            "              repetition done, a tip-over): an operator's trial\n"
            "Config directory: %s\n",
            kn_run_config_dir());
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
    if (kn_hostport_parse_flags(
            a, 0, KN_HOSTPORT_NEED_PORT | KN_HOSTPORT_PORT_ZERO | KN_HOSTPORT_PORT_ALONE, host,
            sizeof host, &port, err, errlen) != 0)
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

enum {
    O_LISTEN = 256,
    O_TERRAIN,
    O_ROBOT,
    O_PACE,
    O_RATE,
    O_SEED,
    O_SEN_RATE,
    O_DIALECT,
    O_TICKS_PER_M,
    O_TICK_MS,
    O_STDIN_WATCH,
    O_HEARTBEAT_MS,
    O_QUIET,
    O_AUTH_TOKEN_ENV,
    O_JUDGE,
    O_JUDGE_VARIANT,
    O_JUDGE_VERDICT,
    O_JUDGE_CSV,
    O_JUDGE_SVG,
    O_JUDGE_IDLE,
    O_JUDGE_ROBOTS,
    O_JUDGE_CONTROL,
    O_JUDGE_TRIAL_END,
};

/* One option's value into o; 0, or 2 after saying what is wrong. */
static int set_option(struct kn_srv_opts *o, int opt, const char *v)
{
    double d;
    switch (opt) {
    case O_LISTEN: {
        char err[300];
        if (parse_listen(o, v, err, sizeof err)) {
            fprintf(stderr, "kenaf-engine: --listen %s (expected HOST:PORT, port 0..65535)\n", err);
            return 2;
        }
        return 0;
    }
    case O_TERRAIN:
        if (!*v)
            return bad("--terrain needs a name or a file", v);
        o->terrain = v;
        return 0;
    case O_ROBOT: o->robot = v; return 0;
    case O_PACE:
        return kn_pace_mode_parse(v, &o->pace) ? bad("--pace must be realtime, fast or step", v)
                                               : 0;
    case O_RATE:
        if (parse_double(v, 0.01, 100, &d))
            return bad("--rate needs a number 0.01..100", v);
        o->rate = d;
        return 0;
    case O_SEED:
        if (parse_double(v, 0, 4294967295.0, &d) || d != floor(d))
            return bad("--seed needs an integer 0..4294967295", v);
        o->seed = (unsigned long)d;
        o->seed_set = true;
        return 0;
    case O_SEN_RATE:
        return parse_sen_rate(o, v) ? bad("--sen-rate needs STREAM=HZ (STA, GroundTruth, INS, "
                                          "Encoder, Odometry, ASTA or all; 0..1000 Hz)",
                                          v)
                                    : 0;
    case O_DIALECT:
        if (strcasecmp(v, "udk") == 0)
            o->dialect = KN_USAR_UDK;
        else if (strcasecmp(v, "ut2004") == 0)
            o->dialect = KN_USAR_UT2004;
        else
            return bad("--dialect must be udk or ut2004", v);
        return 0;
    case O_TICKS_PER_M:
        if (parse_double(v, 1, 10000000, &d) || d != floor(d))
            return bad("--ticks-per-m needs an integer 1..10000000", v);
        o->ticks_per_m = (int)d;
        return 0;
    case O_TICK_MS:
        if (parse_double(v, 1, 50, &d) || d != floor(d))
            return bad("--tick-ms needs an integer 1..50", v);
        o->tick_ms = (int)d;
        return 0;
    case O_STDIN_WATCH: o->stdin_watch = true; return 0;
    case O_HEARTBEAT_MS:
        if (parse_double(v, 1, 10000, &d) || d != floor(d))
            return bad("--heartbeat-ms needs an integer 1..10000", v);
        o->heartbeat_ms = (int)d;
        return 0;
    case O_QUIET: o->quiet = true; return 0;
    case O_AUTH_TOKEN_ENV:
        if (!*v)
            return bad("--auth-token-env needs the name of an environment variable", v);
        o->auth_token_env = v;
        return 0;
    case O_JUDGE:
        if (!*v)
            return bad("--judge needs a scenario file", v);
        o->judge = v;
        return 0;
    case O_JUDGE_VARIANT:
        if (parse_double(v, 0, 1000, &d) || d != floor(d))
            return bad("--judge-variant needs an integer 0..1000", v);
        o->judge_variant = (int)d;
        return 0;
    case O_JUDGE_VERDICT: o->judge_verdict = v; return 0;
    case O_JUDGE_CSV: o->judge_csv = v; return 0;
    case O_JUDGE_SVG: o->judge_svg = v; return 0;
    case O_JUDGE_ROBOTS:
        if (!*v)
            return bad("--judge-robots needs robot names, comma-separated", v);
        o->judge_robots = v;
        return 0;
    case O_JUDGE_CONTROL:
        if (!*v)
            return bad("--judge-control needs a file (a FIFO)", v);
        o->judge_control = v;
        return 0;
    case O_JUDGE_TRIAL_END: o->judge_trial_end = true; return 0;
    case O_JUDGE_IDLE:
        if (parse_double(v, 0.5, 3600, &d))
            return bad("--judge-idle needs seconds 0.5..3600", v);
        o->judge_idle_s = d;
        return 0;
    }
    return 2;
}

int kn_srv_opts_parse(struct kn_srv_opts *o, int argc, char **argv)
{
    static const struct option lo[] = {
        { "listen", required_argument, NULL, O_LISTEN },
        { "terrain", required_argument, NULL, O_TERRAIN },
        { "robot", required_argument, NULL, O_ROBOT },
        { "pace", required_argument, NULL, O_PACE },
        { "rate", required_argument, NULL, O_RATE },
        { "seed", required_argument, NULL, O_SEED },
        { "sen-rate", required_argument, NULL, O_SEN_RATE },
        { "dialect", required_argument, NULL, O_DIALECT },
        { "ticks-per-m", required_argument, NULL, O_TICKS_PER_M },
        { "tick-ms", required_argument, NULL, O_TICK_MS },
        { "stdin-watch", no_argument, NULL, O_STDIN_WATCH },
        { "heartbeat-ms", required_argument, NULL, O_HEARTBEAT_MS },
        { "quiet", no_argument, NULL, O_QUIET },
        { "auth-token-env", required_argument, NULL, O_AUTH_TOKEN_ENV },
        { "judge", required_argument, NULL, O_JUDGE },
        { "judge-variant", required_argument, NULL, O_JUDGE_VARIANT },
        { "judge-verdict", required_argument, NULL, O_JUDGE_VERDICT },
        { "judge-csv", required_argument, NULL, O_JUDGE_CSV },
        { "judge-svg", required_argument, NULL, O_JUDGE_SVG },
        { "judge-idle", required_argument, NULL, O_JUDGE_IDLE },
        { "judge-robots", required_argument, NULL, O_JUDGE_ROBOTS },
        { "judge-control", required_argument, NULL, O_JUDGE_CONTROL },
        { "judge-trial-end", no_argument, NULL, O_JUDGE_TRIAL_END },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    optind = 0; /* 0: getopt starts over (the runner may have scanned before) */
    int ch;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (ch == 'h') {
            kn_srv_usage(stdout);
            return 1;
        }
        if (ch == '?') {
            kn_srv_usage(stderr);
            return 2;
        }
        int rc = set_option(o, ch, optarg);
        if (rc != 0)
            return rc;
    }
    if (optind < argc) {
        fprintf(stderr, "kenaf-engine: unexpected argument %s\n", argv[optind]);
        kn_srv_usage(stderr);
        return 2;
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
