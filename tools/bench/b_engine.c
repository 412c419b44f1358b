/* The built-in engine's real-time factor per scenario, as its own
 * validation run reports it (kenaf-engine --validate --json: simulated time
 * over CPU time of the simulating thread). Quick mode runs one scenario
 * (Pecka 1, straight) plus the sanity checks, from a scratch directory that
 * links to the real robot and terrain files. */
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

int kn_bench_engine(const struct kn_bench_opts *o, cJSON *root)
{
    char out[300], errlog[300], dir[300];
    snprintf(out, sizeof out, "%s/validate.json", o->scratch);
    snprintf(errlog, sizeof errlog, "%s/validate.log", o->scratch);
    if (!o->engine) {
        fprintf(stderr, "kenaf-bench: engine: kenaf-engine not found (--engine PATH)\n");
        return -1;
    }
    char *argv[8];
    int a = 0;
    argv[a++] = (char *)o->engine;
    argv[a++] = "--validate";
    argv[a++] = "--json";
    if (o->quick) {
        if (quick_dir(o, dir, sizeof dir) < 0) {
            fprintf(stderr, "kenaf-bench: engine: cannot set up %s (config %s)\n", dir,
                    o->config_dir);
            return -1;
        }
        argv[a++] = "--dir";
        argv[a++] = dir;
    }
    argv[a] = NULL;
    fprintf(stderr, "engine: kenaf-engine --validate%s...\n", o->quick ? " (one scenario)" : "");
    if (o->config_dir)
        setenv("KENAF_CONFIG_DIR", o->config_dir, 1);
    struct kn_bench_proc p;
    if (kn_bench_spawn(&p, argv, out, errlog, -1) != 0) {
        fprintf(stderr, "kenaf-bench: engine: cannot start %s\n", o->engine);
        return -1;
    }
    int st = kn_bench_wait(&p, 900000);
    if (st < 0) {
        kn_bench_stop(&p, 1000);
        fprintf(stderr, "kenaf-bench: engine: validation did not finish in 15 minutes\n");
        return -1;
    }
    /* 0: every outcome as expected; 1: an outcome differed (reported, not
     * a benchmark failure); anything else is */
    if (!WIFEXITED(st) || WEXITSTATUS(st) > 1) {
        fprintf(stderr, "kenaf-bench: engine: kenaf-engine --validate failed (status %d): %s\n", st,
                kn_bench_log_tail(errlog));
        return -1;
    }
    char *text = slurp(out);
    cJSON *v = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(v, "rows");
    if (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) == 0) {
        fprintf(stderr, "kenaf-bench: engine: no rows in kenaf-engine's JSON (%s)\n", out);
        cJSON_Delete(v);
        return -1;
    }
    cJSON *j = cJSON_AddObjectToObject(root, "engine");
    cJSON_AddBoolToObject(j, "quick_subset", o->quick);
    cJSON *list = cJSON_AddArrayToObject(j, "scenarios");
    const cJSON *r;
    int bad = 0;
    cJSON_ArrayForEach(r, rows) {
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
    const char *tops[] = { "rtf", "sim_s", "cpu_s", "mismatches" };
    for (int i = 0; i < 4; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, tops[i]);
        cJSON_AddNumberToObject(j, tops[i], cJSON_IsNumber(t) ? t->valuedouble : NAN);
    }
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(v, "rtf");
    kn_bench_row("engine, all runs", "RTF", cJSON_IsNumber(all) ? all->valuedouble : NAN, NULL,
                 NAN);
    cJSON_Delete(v);
    if (bad) {
        fprintf(stderr, "kenaf-bench: engine: %d rows without scenario or rtf\n", bad);
        return -1;
    }
    return 0;
}
