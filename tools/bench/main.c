/* kenaf-bench: command line, the order benchmarks run in, the table and the
 * JSON file. Exit status: 0 every selected benchmark ran; 1 one of them had
 * a functional error (a process did not start, nothing was received, output
 * did not parse); 2 usage. Missed targets never change the exit status. */
#include "bench.h"

#include <ftw.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef KN_BENCH_VERSION
#define KN_BENCH_VERSION "unknown"
#endif
#ifndef KN_BENCH_SIMD_BUILD_PATH
#define KN_BENCH_SIMD_BUILD_PATH ""
#endif
#ifndef KN_BENCH_ENGINE_BUILD_PATH
#define KN_BENCH_ENGINE_BUILD_PATH ""
#endif
#ifndef KN_BENCH_CONFIG_DIR
#define KN_BENCH_CONFIG_DIR "config"
#endif

struct bench {
    const char *name;
    int (*run)(const struct kn_bench_opts *o, cJSON *root);
    const char *what;
};

static const struct bench benches[] = {
    { "relay", kn_bench_relay, "CRAWLER -> simulator command latency, vs socat" },
    { "rtt", kn_bench_rtt, "STATUS_REQ -> STATUS round trip, vs a UDP echo; signed, vs unsigned" },
    { "throughput", kn_bench_throughput, "1 and N robots at 1 kHz, ramp to loss, VmRSS" },
    { "libcost", kn_bench_libcost, "hrt_get_status / hrt_set_crawler_speed, vs plain calls" },
    { "engine", kn_bench_engine, "kenaf-engine real-time factor per scenario" },
    { "rss-long", kn_bench_rss_long, "VmRSS of N robots at 1 kHz over a long run" },
    { "keycost", kn_bench_keycost, "shared key: sign+verify+codec per datagram, vs codec" },
    { "lockstep", kn_bench_lockstep, "scenario runs in lockstep vs real time; STEP round trip" },
};
#define NBENCH (sizeof benches / sizeof benches[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: kenaf-bench [--quick] [--only LIST] [--json FILE] [options]\n"
               "\n"
               "Measures kenaf-simd, libkenaf_sim and kenaf-engine against baselines run\n"
               "in the same process, prints a table with the targets, writes JSON.\n"
               "\n"
               "  --quick            seconds instead of minutes (short durations, small ramp)\n"
               "  --only LIST        comma-separated benchmarks (default: all):\n");
    for (size_t i = 0; i < NBENCH; i++)
        fprintf(f, "                       %-11s %s\n", benches[i].name, benches[i].what);
    fprintf(f, "  --json FILE        write the results as JSON\n"
               "  --sink P           simulator protocol of the sink: usarsim (default) or standin\n"
               "  --rate HZ          relay and round-trip rate per target (default 1000)\n"
               "  --duration S       relay and round-trip duration (default 30, quick 2)\n"
               "  --robots N         robots of the scaling and long runs (default 25)\n"
               "  --step-s S         length of one throughput step (default 3, quick 0.3)\n"
               "  --coalesce-us US   kenaf-simd's coalesce_us, its loop's coalescing window\n"
               "                     (default 0: none)\n"
               "  --rss-long-s S     long RSS run (default 600, quick 3)\n"
               "  --calls N          hrt_set_crawler_speed calls (default 20000, quick 2000);\n"
               "                     keycost runs N/20 batches of 1000 datagrams each way\n"
               "  --simd PATH        kenaf-simd (default: this build tree's, else PATH)\n"
               "  --engine PATH      kenaf-engine (likewise)\n"
               "  --socat PATH|none  socat (default: PATH); none: no relay baseline\n"
               "  --config-dir DIR   config/ with robots, terrains, scenarios (engine)\n"
               "  --engine-baseline PATH  engine: also time this kenaf-engine's validation\n"
               "                     (another build, e.g. of an earlier commit), taking turns\n"
               "  --config-baseline DIR   its config/ (default: --config-dir)\n"
               "  --no-pin           do not pin kenaf-simd and the generator to CPUs\n"
               "  --keep             keep the scratch directory (configs, logs)\n"
               "  -v, --verbose      progress of long runs\n"
               "  -h, --help         this text\n");
}

static bool parse_num(const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    remove(p);
    return 0;
}

static void count_targets(const cJSON *o, int *pass, int *fail)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, o)
    {
        if (c->string && strcmp(c->string, "targets") == 0 && cJSON_IsArray(c)) {
            const cJSON *t;
            cJSON_ArrayForEach(t, c)
            {
                if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "pass")))
                    (*pass)++;
                else
                    (*fail)++;
            }
        } else if (cJSON_IsObject(c)) {
            count_targets(c, pass, fail);
        }
    }
}

/* The command line as given: values not yet settled into kn_bench_opts. */
struct cli {
    double rate, dur, robots, step, rss, calls, coalesce;
    const char *only, *json, *simd, *engine, *socat, *cfgdir, *engine_base, *cfg_base;
};

/* 0 parsed, 1 --help printed, 2 usage error (said on stderr). */
static int parse_args(int argc, char **argv, struct kn_bench_opts *o, struct cli *a)
{
    enum {
        O_ONLY = 1000,
        O_JSON,
        O_SINK,
        O_RATE,
        O_DUR,
        O_ROBOTS,
        O_STEP,
        O_RSS,
        O_CALLS,
        O_SIMD,
        O_ENGINE,
        O_SOCAT,
        O_CFG,
        O_ENGINE_BASE,
        O_CFG_BASE,
        O_NOPIN,
        O_KEEP,
        O_QUICK,
        O_COALESCE,
    };
    static const struct option lopts[] = {
        { "quick", no_argument, NULL, O_QUICK },
        { "only", required_argument, NULL, O_ONLY },
        { "json", required_argument, NULL, O_JSON },
        { "sink", required_argument, NULL, O_SINK },
        { "rate", required_argument, NULL, O_RATE },
        { "duration", required_argument, NULL, O_DUR },
        { "robots", required_argument, NULL, O_ROBOTS },
        { "step-s", required_argument, NULL, O_STEP },
        { "coalesce-us", required_argument, NULL, O_COALESCE },
        { "rss-long-s", required_argument, NULL, O_RSS },
        { "calls", required_argument, NULL, O_CALLS },
        { "simd", required_argument, NULL, O_SIMD },
        { "engine", required_argument, NULL, O_ENGINE },
        { "socat", required_argument, NULL, O_SOCAT },
        { "config-dir", required_argument, NULL, O_CFG },
        { "engine-baseline", required_argument, NULL, O_ENGINE_BASE },
        { "config-baseline", required_argument, NULL, O_CFG_BASE },
        { "no-pin", no_argument, NULL, O_NOPIN },
        { "keep", no_argument, NULL, O_KEEP },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    memset(o, 0, sizeof *o);
    o->pin = true;
    o->proto = KN_SINK_USARSIM;
    *a = (struct cli){
        .rate = NAN, .dur = NAN, .robots = 25, .step = NAN, .rss = NAN, .calls = NAN, .coalesce = 0
    };
    int c;
    while ((c = getopt_long(argc, argv, "vh", lopts, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case O_QUICK: o->quick = true; break;
        case O_ONLY: a->only = optarg; break;
        case O_JSON: a->json = optarg; break;
        case O_SINK:
            if (strcmp(optarg, "usarsim") == 0)
                o->proto = KN_SINK_USARSIM;
            else if (strcmp(optarg, "standin") == 0)
                o->proto = KN_SINK_STANDIN;
            else
                ok = false;
            break;
        case O_RATE: ok = parse_num(optarg, 1, 20000, &a->rate); break;
        case O_DUR: ok = parse_num(optarg, 0.1, 3600, &a->dur); break;
        case O_ROBOTS: ok = parse_num(optarg, 1, KN_BENCH_MAX_ROBOTS, &a->robots); break;
        case O_STEP: ok = parse_num(optarg, 0.1, 600, &a->step); break;
        case O_COALESCE: ok = parse_num(optarg, 0, 50000, &a->coalesce); break;
        case O_RSS: ok = parse_num(optarg, 1, 86400, &a->rss); break;
        case O_CALLS: ok = parse_num(optarg, 10, 1e7, &a->calls); break;
        case O_SIMD: a->simd = optarg; break;
        case O_ENGINE: a->engine = optarg; break;
        case O_SOCAT: a->socat = optarg; break;
        case O_CFG: a->cfgdir = optarg; break;
        case O_ENGINE_BASE: a->engine_base = optarg; break;
        case O_CFG_BASE: a->cfg_base = optarg; break;
        case O_NOPIN: o->pin = false; break;
        case O_KEEP: o->keep = true; break;
        case 'v': o->verbose = true; break;
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return 2;
        }
        if (!ok) {
            const char *name = "?";
            for (const struct option *p = lopts; p->name; p++)
                if (p->val == c)
                    name = p->name;
            fprintf(stderr, "kenaf-bench: bad value for --%s: %s\n", name, optarg);
            return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    return 0;
}

/* want[i]: benchmark i is in --only (every one without it). 0 or 2. */
static int select_benches(const char *only, bool want[NBENCH])
{
    for (size_t i = 0; i < NBENCH; i++)
        want[i] = only == NULL;
    if (!only)
        return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", only);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < NBENCH && strcmp(benches[i].name, t) != 0; i++) {
        }
        if (i == NBENCH) {
            fprintf(stderr, "kenaf-bench: no benchmark \"%s\" (--help lists them)\n", t);
            return 2;
        }
        want[i] = true;
    }
    return 0;
}

/* Durations (quick or full unless given) and the programs to run. 0, or 2
 * when kenaf-simd is needed and not found. */
static int settle_opts(struct kn_bench_opts *o, const struct cli *a, const bool want[NBENCH])
{
    o->rate_hz = isfinite(a->rate) ? a->rate : 1000;
    o->relay_s = isfinite(a->dur) ? a->dur : o->quick ? 2 : 30;
    o->robots = (int)a->robots;
    o->coalesce_us = (int)a->coalesce;
    o->step_s = isfinite(a->step) ? a->step : o->quick ? 0.3 : 3;
    o->rss_long_s = isfinite(a->rss) ? a->rss : o->quick ? 3 : 600;
    o->libcost_calls = isfinite(a->calls) ? a->calls : o->quick ? 2000 : 20000;
    o->simd = kn_bench_find_exe(a->simd, KN_BENCH_SIMD_BUILD_PATH, "kenaf-simd");
    o->engine = kn_bench_find_exe(a->engine, KN_BENCH_ENGINE_BUILD_PATH, "kenaf-engine");
    o->socat = a->socat && strcmp(a->socat, "none") == 0
                   ? NULL
                   : kn_bench_find_exe(a->socat, NULL, "socat");
    o->config_dir = a->cfgdir ? a->cfgdir : KN_BENCH_CONFIG_DIR;
    o->engine_base = a->engine_base;
    o->config_base = a->cfg_base ? a->cfg_base : o->config_dir;
    bool need_simd = false;
    for (size_t i = 0; i < NBENCH; i++)
        need_simd |= want[i] && strcmp(benches[i].name, "engine") != 0 &&
                     strcmp(benches[i].name, "keycost") != 0;
    if (need_simd && !o->simd) {
        fprintf(stderr, "kenaf-bench: kenaf-simd not found (--simd PATH)\n");
        return 2;
    }
    return 0;
}

/* Runs the selected benchmarks into one JSON document, prints the table
 * and writes the JSON file. 0, or 1 when a benchmark or the file failed. */
static int run_benches(const struct kn_bench_opts *o, const bool want[NBENCH], const char *json)
{
    const char *mode = o->quick ? "quick" : "full";
    kn_bench_machine_print(stderr, mode);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "tool", "kenaf-bench");
    cJSON_AddStringToObject(root, "version", KN_BENCH_VERSION);
    cJSON_AddStringToObject(root, "mode", mode);
    cJSON_AddItemToObject(root, "machine", kn_bench_machine_json());
    cJSON *errors = cJSON_AddArrayToObject(root, "errors");
    int failed = 0;
    for (size_t i = 0; i < NBENCH; i++) {
        if (!want[i])
            continue;
        if (benches[i].run(o, root) != 0) {
            failed++;
            cJSON_AddItemToArray(errors, cJSON_CreateString(benches[i].name));
        }
    }
    int pass = 0, fail = 0;
    count_targets(root, &pass, &fail);
    cJSON *ts = cJSON_AddObjectToObject(root, "targets_summary");
    cJSON_AddNumberToObject(ts, "pass", pass);
    cJSON_AddNumberToObject(ts, "fail", fail);

    printf("\n");
    kn_bench_machine_print(stdout, mode);
    kn_bench_table_print(stdout);
    printf("targets: %d pass, %d missed%s\n", pass, fail,
           failed ? "; some benchmarks had errors (see above)" : "");
    fflush(stdout);

    int rc = failed ? 1 : 0;
    if (json) {
        char *text = cJSON_Print(root);
        FILE *f = text ? fopen(json, "w") : NULL;
        if (!f || fputs(text, f) < 0 || fputc('\n', f) < 0 || fclose(f) != 0) {
            fprintf(stderr, "kenaf-bench: cannot write %s\n", json);
            rc = 1;
        }
        free(text);
    }
    cJSON_Delete(root);
    return rc;
}

int main(int argc, char **argv)
{
    struct kn_bench_opts o;
    struct cli a;
    bool want[NBENCH];
    int rc = parse_args(argc, argv, &o, &a);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    if (select_benches(a.only, want) != 0 || settle_opts(&o, &a, want) != 0)
        return 2;

    signal(SIGPIPE, SIG_IGN);
    snprintf(o.scratch, sizeof o.scratch, "/tmp/kenaf-bench-XXXXXX");
    if (!mkdtemp(o.scratch)) {
        perror("kenaf-bench: mkdtemp");
        return 1;
    }
    rc = run_benches(&o, want, a.json);
    if (o.keep)
        fprintf(stderr, "kept %s\n", o.scratch);
    else
        nftw(o.scratch, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
