/* Lockstep (docs/scenario-runs.md): how much faster than real time a
 * scenario run goes, and what one STEP costs.
 *
 * Speed-up: kenaf-sim-run --scenario with the square and the step climb,
 * the whole run timed from outside (kenaf-engine, kenaf-simd, the
 * controller, their start and stop), everything pinned to one CPU; the
 * baseline is the same run at --speed realtime in the same invocation.
 *
 * Round trip: a KRP/1 client drives a kenaf-simd robot in lockstep with a
 * kenaf-engine behind it and times STEP -> STATUS (1 ms and 20 ms of robot
 * time), taking turns with STATUS_REQ -> STATUS to the same daemon, which
 * never reaches the engine: the difference is the lockstep hop through the
 * engine (its physics steps included). */
#include "bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "krp.h"

#ifndef KN_BENCH_SIM_RUN_BUILD_PATH
#define KN_BENCH_SIM_RUN_BUILD_PATH ""
#endif
#ifndef KN_BENCH_EXAMPLES_DIR
#define KN_BENCH_EXAMPLES_DIR ""
#endif

/* ---- speed-up of whole scenario runs ---------------------------------- */

struct run_result {
    double sim_s, wall_s;
    bool pass;
};

/* One kenaf-sim-run; 0, or -1 with a message. */
static int scenario_run(const struct kn_bench_opts *o, const char *sim_run, const char *scenario,
                        const char *prog, const char *speed, int cpu, struct run_result *r)
{
    char scen[512], log[300];
    snprintf(scen, sizeof scen, "%s/scenarios/ci/%s", o->config_dir, scenario);
    snprintf(log, sizeof log, "%s/lockstep-%s-%s.log", o->scratch, speed, scenario);
    char *argv[] = { (char *)sim_run, "--scenario", scen,         "--speed",
                     (char *)speed,   "--",         (char *)prog, NULL };
    struct kn_bench_proc p;
    uint64_t t0 = kn_bench_now_ns();
    if (kn_bench_spawn(&p, argv, log, NULL, cpu) != 0) {
        fprintf(stderr, "kenaf-bench: lockstep: cannot start %s\n", sim_run);
        return -1;
    }
    int st = kn_bench_wait(&p, 300000);
    r->wall_s = (double)(kn_bench_now_ns() - t0) / 1e9;
    if (st < 0) {
        kn_bench_stop(&p, 1000);
        fprintf(stderr, "kenaf-bench: lockstep: %s did not finish\n", scenario);
        return -1;
    }
    FILE *f = fopen(log, "r");
    char line[1024];
    bool found = false;
    while (f && fgets(line, sizeof line, f)) {
        const char *s = strstr(line, " s simulated in ");
        const char *open = s;
        while (open && open > line && *open != '(')
            open--;
        if (strncmp(line, "kenaf-sim-run: ", 15) == 0 && s && open && *open == '(') {
            r->sim_s = strtod(open + 1, NULL);
            r->pass = strstr(line, " pass (") != NULL;
            found = true;
        }
    }
    if (f)
        fclose(f);
    if (!found || !(r->sim_s > 0)) {
        fprintf(stderr, "kenaf-bench: lockstep: no verdict line from %s: %s\n", scenario,
                kn_bench_log_tail(log));
        return -1;
    }
    return 0;
}

static int speedups(const struct kn_bench_opts *o, cJSON *j, cJSON *targets)
{
    const char *sim_run = kn_bench_find_exe(NULL, KN_BENCH_SIM_RUN_BUILD_PATH, "kenaf-sim-run");
    if (!sim_run) {
        fprintf(stderr, "kenaf-bench: lockstep: kenaf-sim-run not found\n");
        return -1;
    }
    static const struct {
        const char *scenario, *prog;
    } runs[] = { { "square.json", "square" }, { "climb-step.json", "climb_step" } };
    int n = o->quick ? 1 : 2;
    cJSON *list = cJSON_AddArrayToObject(j, "runs");
    for (int i = 0; i < n; i++) {
        char prog[512];
        snprintf(prog, sizeof prog, "%s/%s", KN_BENCH_EXAMPLES_DIR, runs[i].prog);
        struct run_result ls, rt;
        fprintf(stderr, "lockstep: %s in lockstep, then at real time...\n", runs[i].scenario);
        if (scenario_run(o, sim_run, runs[i].scenario, prog, "max", 0, &ls) != 0 ||
            scenario_run(o, sim_run, runs[i].scenario, prog, "realtime", 0, &rt) != 0)
            return -1;
        double sp = ls.sim_s / ls.wall_s, base = rt.sim_s / rt.wall_s;
        char item[96];
        snprintf(item, sizeof item, "lockstep %s, 1 CPU", runs[i].prog);
        kn_bench_row_target(targets, item, "sim s / wall s", sp, "--speed realtime", base,
                            KN_BENCH_GE, 20.0, "x");
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "scenario", runs[i].scenario);
        cJSON_AddNumberToObject(r, "sim_s", ls.sim_s);
        cJSON_AddNumberToObject(r, "wall_s", ls.wall_s);
        cJSON_AddNumberToObject(r, "speedup", sp);
        cJSON_AddBoolToObject(r, "pass", ls.pass);
        cJSON_AddNumberToObject(r, "realtime_sim_s", rt.sim_s);
        cJSON_AddNumberToObject(r, "realtime_wall_s", rt.wall_s);
        cJSON_AddNumberToObject(r, "realtime_speedup", base);
        cJSON_AddNumberToObject(r, "ratio", sp / base);
        cJSON_AddItemToArray(list, r);
        if (!ls.pass || !rt.pass)
            kn_bench_note("lockstep: %s: a verdict was not pass (lockstep %s, real time %s)",
                          runs[i].scenario, ls.pass ? "pass" : "fail", rt.pass ? "pass" : "fail");
    }
    return 0;
}

/* ---- STEP round trip ----------------------------------------------------- */

struct client {
    int fd;
    uint32_t seq;
};

/* Sends m and waits for the STATUS answering it (or an ERROR naming it).
 * Round trip in ns, or 0 on timeout / ERROR. */
static uint64_t ask(struct client *c, struct kn_krp_msg *m, uint16_t *flags)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    m->h.seq = ++c->seq;
    size_t len = kn_krp_encode(m, buf, sizeof buf);
    uint64_t t0 = kn_bench_now_ns();
    if (send(c->fd, buf, len, 0) != (ssize_t)len)
        return 0;
    for (;;) {
        ssize_t got = recv(c->fd, buf, sizeof buf, 0);
        uint64_t t1 = kn_bench_now_ns();
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return 0;
        struct kn_krp_msg a;
        if (kn_krp_decode(buf, (size_t)got, &a) != KN_KRP_OK)
            continue;
        if (a.h.type == KN_KRP_ERROR && a.u.error.offending_seq == m->h.seq)
            return 0;
        if (a.h.type == KN_KRP_STATUS && a.u.status.req_seq == m->h.seq) {
            if (flags)
                *flags = a.u.status.flags;
            return t1 - t0 > 0 ? t1 - t0 : 1;
        }
    }
}

static int read_port(const char *log, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 20) {
        FILE *f = fopen(log, "r");
        char line[128];
        int port = 0;
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "PORT %d", &port) == 1)
                break;
        if (f)
            fclose(f);
        if (port > 0)
            return port;
        kn_bench_sleep_ms(20);
    }
    return -1;
}

static int round_trips(const struct kn_bench_opts *o, cJSON *j)
{
    char elog[300], eerr[300], cfg[300], dlog[300], sock[300];
    snprintf(elog, sizeof elog, "%s/lockstep-engine.out", o->scratch);
    snprintf(eerr, sizeof eerr, "%s/lockstep-engine.log", o->scratch);
    snprintf(cfg, sizeof cfg, "%s/lockstep-simd.json", o->scratch);
    snprintf(dlog, sizeof dlog, "%s/lockstep-simd.log", o->scratch);
    snprintf(sock, sizeof sock, "%s/lockstep.sock", o->scratch);
    char *eargv[] = { (char *)o->engine, "--listen",       "127.0.0.1:0", "--pace",     "step",
                      "--sen-rate",      "GroundTruth=50", "--sen-rate",  "Encoder=50", NULL };
    struct kn_bench_proc eng, simd;
    if (kn_bench_spawn(&eng, eargv, elog, eerr, -1) != 0) {
        fprintf(stderr, "kenaf-bench: lockstep: cannot start %s\n", o->engine);
        return -1;
    }
    int eport = read_port(elog, 10000), port = kn_bench_free_udp_port();
    FILE *f = eport > 0 && port > 0 ? fopen(cfg, "w") : NULL;
    if (!f) {
        fprintf(stderr, "kenaf-bench: lockstep: engine did not start: %s\n",
                kn_bench_log_tail(eerr));
        kn_bench_stop(&eng, 1000);
        return -1;
    }
    fprintf(f,
            "{ \"log_level\": \"warn\", \"stats_socket\": \"%s\", \"robots\": [ { \"name\": "
            "\"kenaf\", \"listen\": \"127.0.0.1:%d\", \"backend\": { \"type\": \"engine\", "
            "\"address\": \"127.0.0.1:%d\", \"lockstep\": true } } ] }\n",
            sock, port, eport);
    fclose(f);
    char *dargv[] = { (char *)o->simd, "--config", cfg, NULL };
    if (kn_bench_spawn(&simd, dargv, dlog, NULL, -1) != 0) {
        kn_bench_stop(&eng, 1000);
        return -1;
    }
    struct client c = { .fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) };
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = { .tv_sec = 1 };
    int rc = -1;
    struct kn_bench_samples s1 = { 0 }, s20 = { 0 }, sq = { 0 };
    if (c.fd < 0 || connect(c.fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
        goto out;
    /* up: a STATUS with BACKEND_UP (the engine has spawned the robot) */
    struct kn_krp_msg m;
    uint16_t flags = 0;
    bool up = false;
    for (int i = 0; i < 100 && !up; i++) {
        kn_krp_init(&m, KN_KRP_HELLO, 0, 0);
        snprintf(m.u.hello.name, sizeof m.u.hello.name, "kenaf-bench");
        uint8_t buf[64];
        c.seq++;
        m.h.seq = c.seq;
        size_t len = kn_krp_encode(&m, buf, sizeof buf);
        (void)!send(c.fd, buf, len, 0);
        kn_krp_init(&m, KN_KRP_STATUS_REQ, 0, 0);
        up = ask(&c, &m, &flags) && (flags & KN_KRP_ST_BACKEND_UP);
        if (!up)
            kn_bench_sleep_ms(100);
    }
    if (!up) {
        fprintf(stderr, "kenaf-bench: lockstep: the robot did not come up: %s\n",
                kn_bench_log_tail(dlog));
        goto out;
    }
    int n = o->quick ? 500 : 3000;
    unsigned lost = 0;
    for (int i = 0; i < n + 50; i++) {
        bool rec = i >= 50; /* warm-up */
        uint64_t t;
        kn_krp_init(&m, KN_KRP_STEP, 0, 0);
        m.u.step.advance_us = 1000;
        if ((t = ask(&c, &m, NULL)) && rec)
            kn_bench_samples_add(&s1, t);
        lost += !t;
        kn_krp_init(&m, KN_KRP_STEP, 0, 0);
        m.u.step.advance_us = 20000;
        if ((t = ask(&c, &m, NULL)) && rec)
            kn_bench_samples_add(&s20, t);
        lost += !t;
        kn_krp_init(&m, KN_KRP_STATUS_REQ, 0, 0);
        if ((t = ask(&c, &m, NULL)) && rec)
            kn_bench_samples_add(&sq, t);
        lost += !t;
    }
    if (s1.n == 0 || sq.n == 0) {
        fprintf(stderr, "kenaf-bench: lockstep: no STEP answered: %s\n", kn_bench_log_tail(dlog));
        goto out;
    }
    struct kn_bench_summary a1 = kn_bench_summarize(&s1), a20 = kn_bench_summarize(&s20),
                            aq = kn_bench_summarize(&sq);
    kn_bench_row("lockstep STEP 1 ms round trip", "p50 us", a1.p50_us, "STATUS_REQ", aq.p50_us);
    kn_bench_row("lockstep STEP 1 ms round trip", "p99 us", a1.p99_us, "STATUS_REQ", aq.p99_us);
    kn_bench_row("lockstep STEP 20 ms round trip", "p50 us", a20.p50_us, "STATUS_REQ", aq.p50_us);
    kn_bench_note("lockstep: the hop through the engine (STEP 1 ms minus STATUS_REQ, p50) is "
                  "%.1f us; %u of %d requests unanswered",
                  a1.p50_us - aq.p50_us, lost, 3 * (n + 50));
    cJSON *rt = cJSON_AddObjectToObject(j, "round_trip");
    cJSON_AddItemToObject(rt, "step_1ms", kn_bench_summary_json(&a1));
    cJSON_AddItemToObject(rt, "step_20ms", kn_bench_summary_json(&a20));
    cJSON_AddItemToObject(rt, "status_req", kn_bench_summary_json(&aq));
    cJSON_AddNumberToObject(rt, "hop_p50_us", a1.p50_us - aq.p50_us);
    cJSON_AddNumberToObject(rt, "unanswered", lost);
    rc = 0;
out:
    if (c.fd >= 0)
        close(c.fd);
    kn_bench_samples_free(&s1);
    kn_bench_samples_free(&s20);
    kn_bench_samples_free(&sq);
    kn_bench_stop(&simd, 2000);
    kn_bench_stop(&eng, 2000);
    return rc;
}

int kn_bench_lockstep(const struct kn_bench_opts *o, cJSON *root)
{
    if (!o->engine || !o->simd) {
        fprintf(stderr, "kenaf-bench: lockstep: needs kenaf-engine and kenaf-simd\n");
        return -1;
    }
    cJSON *j = cJSON_AddObjectToObject(root, "lockstep");
    cJSON *targets = cJSON_AddArrayToObject(j, "targets");
    if (round_trips(o, j) != 0)
        return -1;
    return speedups(o, j, targets);
}
