/* The built-in engine's real-time factor per scenario, as its own
 * validation run reports it (kenaf-engine --validate --json: simulated time
 * over CPU time of the simulating thread). Quick mode runs one scenario
 * (Pecka 1, straight) plus the sanity checks, from a scratch directory that
 * links to the real robot and terrain files. With --engine-baseline the
 * whole validation of that other engine (an earlier build) and of this one
 * run in turns, twice each, and their wall and CPU times and stairs
 * real-time factors are set side by side: the same machine load for both. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define QUICK_SCENARIO "pecka-1-straight.json"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf) {
        size_t got = fread(buf, 1, (size_t)n, f);
        buf[got] = '\0';
    }
    fclose(f);
    return buf;
}

static int quick_dir(const struct kn_bench_opts *o, char *dir, size_t n)
{
    char base[200], p[400], t[400];
    snprintf(base, sizeof base, "%s/engine", o->scratch);
    snprintf(dir, n, "%s/scenarios", base);
    if (mkdir(base, 0755) < 0 || mkdir(dir, 0755) < 0)
        return -1;
    const char *links[] = { "robots", "terrains" };
    for (int i = 0; i < 2; i++) {
        snprintf(t, sizeof t, "%s/%s", o->config_dir, links[i]);
        snprintf(p, sizeof p, "%s/%s", base, links[i]);
        if (symlink(t, p) < 0)
            return -1;
    }
    snprintf(t, sizeof t, "%s/scenarios/%s", o->config_dir, QUICK_SCENARIO);
    snprintf(p, sizeof p, "%s/%s", dir, QUICK_SCENARIO);
    return symlink(t, p);
}

/* One `kenaf-engine --validate --json` run: its parsed JSON (caller frees)
 * and wall time, NULL on failure (said on stderr). */
static cJSON *validate_once(const struct kn_bench_opts *o, const char *engine,
                            const char *config_dir, const char *tag, double *wall_s)
{
    char out[300], errlog[300], dir[300];
    snprintf(out, sizeof out, "%s/validate-%s.json", o->scratch, tag);
    snprintf(errlog, sizeof errlog, "%s/validate-%s.log", o->scratch, tag);
    char *argv[8];
    int a = 0;
    argv[a++] = (char *)engine;
    argv[a++] = "--validate";
    argv[a++] = "--json";
    if (o->quick) {
        struct kn_bench_opts q = *o;
        q.config_dir = config_dir;
        int n = snprintf(q.scratch, sizeof q.scratch, "%.100s/%.20s", o->scratch, tag);
        if (n >= (int)sizeof q.scratch || mkdir(q.scratch, 0755) < 0 ||
            quick_dir(&q, dir, sizeof dir) < 0) {
            fprintf(stderr, "kenaf-bench: engine: cannot set up %s (config %s)\n", dir, config_dir);
            return NULL;
        }
        argv[a++] = "--dir";
        argv[a++] = dir;
    }
    argv[a] = NULL;
    if (config_dir)
        setenv("KENAF_CONFIG_DIR", config_dir, 1);
    struct kn_bench_proc p;
    uint64_t t0 = kn_bench_now_ns();
    if (kn_bench_spawn(&p, argv, out, errlog, -1) != 0) {
        fprintf(stderr, "kenaf-bench: engine: cannot start %s\n", engine);
        return NULL;
    }
    int st = kn_bench_wait(&p, 900000);
    *wall_s = (kn_bench_now_ns() - t0) * 1e-9;
    if (st < 0) {
        kn_bench_stop(&p, 1000);
        fprintf(stderr, "kenaf-bench: engine: validation did not finish in 15 minutes\n");
        return NULL;
    }
    /* 0: every outcome as expected; 1: an outcome differed (reported, not
     * a benchmark failure); anything else is */
    if (!WIFEXITED(st) || WEXITSTATUS(st) > 1) {
        fprintf(stderr, "kenaf-bench: engine: %s --validate failed (status %d): %s\n", engine, st,
                kn_bench_log_tail(errlog));
        return NULL;
    }
    char *text = slurp(out);
    cJSON *v = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(v, "rows");
    if (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) == 0) {
        fprintf(stderr, "kenaf-bench: engine: no rows in kenaf-engine's JSON (%s)\n", out);
        cJSON_Delete(v);
        return NULL;
    }
    return v;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(t) ? t->valuedouble : NAN;
}

/* The real-time factor of the first row whose name is one of names. */
static double row_rtf(const cJSON *v, const char *const *names)
{
    for (; *names; names++) {
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(v, "rows"))
        {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(r, "scenario");
            if (cJSON_IsString(n) && strcmp(n->valuestring, *names) == 0)
                return num(r, "rtf");
        }
    }
    return NAN;
}

/* The stairs climb: "stairs-climb" now; a build from before Pecka's
 * staircase became a descent called its climb "pecka-stairs". */
static const char *const climb_names[] = { "stairs-climb", "pecka-stairs", NULL };

/* Baseline and this engine in turns (base, ours, base, ours): the best of
 * each, so a burst of load on the shared machine hits neither alone. */
static int compare_baseline(const struct kn_bench_opts *o, cJSON *j, const cJSON *ours0,
                            double ours0_wall)
{
    double wall[2] = { INFINITY, ours0_wall }, cpu[2] = { INFINITY, num(ours0, "cpu_s") };
    double climb[2] = { NAN, row_rtf(ours0, climb_names) };
    for (int round = 0; round < 2; round++) {
        for (int who = 0; who < 2; who++) {
            if (who == 1 && round == 0)
                continue; /* ours already ran once */
            char tag[32];
            snprintf(tag, sizeof tag, "%s%d", who ? "ours" : "base", round);
            double w;
            cJSON *v = validate_once(o, who ? o->engine : o->engine_base,
                                     who ? o->config_dir : o->config_base, tag, &w);
            if (!v)
                return -1;
            if (w < wall[who]) {
                wall[who] = w;
                cpu[who] = num(v, "cpu_s");
                climb[who] = row_rtf(v, climb_names);
            }
            cJSON_Delete(v);
        }
    }
    cJSON *b = cJSON_AddObjectToObject(j, "baseline");
    cJSON_AddStringToObject(b, "engine", o->engine_base);
    cJSON_AddNumberToObject(b, "wall_s", wall[0]);
    cJSON_AddNumberToObject(b, "cpu_s", cpu[0]);
    cJSON_AddNumberToObject(b, "stairs_climb_rtf", climb[0]);
    cJSON_AddNumberToObject(j, "wall_s", wall[1]);
    cJSON_AddNumberToObject(j, "stairs_climb_rtf", climb[1]);
    kn_bench_row("engine, whole validation", "wall s (best of 2)", wall[1], "baseline engine",
                 wall[0]);
    kn_bench_row("engine, whole validation", "CPU s", cpu[1], "baseline engine", cpu[0]);
    kn_bench_row("engine, stairs climb", "RTF", climb[1], "baseline engine", climb[0]);
    return 0;
}

int kn_bench_engine(const struct kn_bench_opts *o, cJSON *root)
{
    if (!o->engine) {
        fprintf(stderr, "kenaf-bench: engine: kenaf-engine not found (--engine PATH)\n");
        return -1;
    }
    fprintf(stderr, "engine: kenaf-engine --validate%s...\n", o->quick ? " (one scenario)" : "");
    double wall;
    cJSON *v = validate_once(o, o->engine, o->config_dir, "ours", &wall);
    if (!v)
        return -1;
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(v, "rows");
    cJSON *j = cJSON_AddObjectToObject(root, "engine");
    cJSON_AddBoolToObject(j, "quick_subset", o->quick);
    cJSON *list = cJSON_AddArrayToObject(j, "scenarios");
    const cJSON *r;
    int bad = 0;
    cJSON_ArrayForEach(r, rows)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(r, "scenario");
        const cJSON *rtf = cJSON_GetObjectItemCaseSensitive(r, "rtf");
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(r, "ok");
        if (!cJSON_IsString(name) || !cJSON_IsNumber(rtf)) {
            bad++;
            continue;
        }
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "scenario", name->valuestring);
        cJSON_AddNumberToObject(e, "rtf", rtf->valuedouble);
        cJSON_AddBoolToObject(e, "outcome_as_expected", cJSON_IsTrue(ok));
        cJSON_AddItemToArray(list, e);
        char item[64];
        snprintf(item, sizeof item, "engine %.40s", name->valuestring);
        kn_bench_row(item, cJSON_IsTrue(ok) ? "RTF" : "RTF (outcome differed)", rtf->valuedouble,
                     NULL, NAN);
    }
    const char *tops[] = { "rtf", "sim_s", "cpu_s", "mismatches", "pecka_sim_s", "pecka_cpu_s" };
    for (int i = 0; i < 6; i++)
        cJSON_AddNumberToObject(j, tops[i], num(v, tops[i]));
    kn_bench_row("engine, all runs", "RTF", num(v, "rtf"), NULL, NAN);
    int rc = 0;
    if (bad) {
        fprintf(stderr, "kenaf-bench: engine: %d rows without scenario or rtf\n", bad);
        rc = -1;
    } else if (o->engine_base) {
        fprintf(stderr, "engine: baseline %s, taking turns...\n", o->engine_base);
        rc = compare_baseline(o, j, v, wall);
    }
    cJSON_Delete(v);
    return rc;
}
