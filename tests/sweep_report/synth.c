/* Synthetic sweep output directories (synth.h), built with cJSON and
 * written as real files. */
#include "synth.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "harness_proc.h"

void synth_id(int i, char id[11])
{
    /* distinct, ten lowercase hex digits, not in order */
    snprintf(id, 11, "%010x", (unsigned)(0x9e3779b1u * (unsigned)(i + 1)));
}

int synth_index(const struct synth *sw, int h, int seed)
{
    return h * sw->nseeds + (seed - 1);
}

static double height(int h)
{
    return round((0.10 + 0.01 * h) * 1e9) / 1e9;
}

static void mkdir_ok(const char *path)
{
    ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s", path);
}

static void write_json(const char *path, cJSON *j)
{
    char *text = cJSON_Print(j);
    ck_assert_ptr_nonnull(text);
    h_write_file(path, text);
    free(text);
    cJSON_Delete(j);
}

static cJSON *params(int h, int seed)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "step_height_m", height(h));
    cJSON_AddNumberToObject(p, "seed", seed);
    return p;
}

void synth_write(const char *dir, const struct synth *sw)
{
    mkdir_ok(dir);
    cJSON *d = cJSON_CreateObject();
    cJSON_AddNumberToObject(d, "format", 1);
    cJSON_AddStringToObject(d, "name", sw->name);
    cJSON_AddStringToObject(d, "hash", sw->hash);
    cJSON_AddStringToObject(d, "scenario", "climb-step");
    cJSON_AddNumberToObject(d, "target_rate", 0.95);
    cJSON *ps = cJSON_AddArrayToObject(d, "parameters");
    cJSON *ph = cJSON_CreateObject();
    cJSON_AddStringToObject(ph, "name", "step_height_m");
    cJSON_AddStringToObject(ph, "unit", "m");
    cJSON_AddStringToObject(ph, "harder", "higher");
    cJSON *hv = cJSON_AddArrayToObject(ph, "values");
    for (int h = 0; h < sw->nheights; h++)
        cJSON_AddItemToArray(hv, cJSON_CreateNumber(height(h)));
    cJSON_AddItemToArray(ps, ph);
    cJSON *pse = cJSON_CreateObject();
    cJSON_AddStringToObject(pse, "name", "seed");
    cJSON_AddStringToObject(pse, "unit", "");
    cJSON_AddNullToObject(pse, "harder");
    cJSON *sv = cJSON_AddArrayToObject(pse, "values");
    for (int s = 1; s <= sw->nseeds; s++)
        cJSON_AddItemToArray(sv, cJSON_CreateNumber(s));
    cJSON_AddItemToArray(ps, pse);
    cJSON *cs = cJSON_AddArrayToObject(d, "cases");
    char path[4096], id[11];
    snprintf(path, sizeof path, "%s/cases", dir);
    mkdir_ok(path);
    for (int h = 0; h < sw->nheights; h++)
        for (int s = 1; s <= sw->nseeds; s++) {
            int i = synth_index(sw, h, s);
            synth_id(i, id);
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "id", id);
            cJSON_AddItemToObject(c, "params", params(h, s));
            cJSON_AddItemToArray(cs, c);
            if (sw->shard_n && i % sw->shard_n != sw->shard_k - 1)
                continue;
            enum synth_outcome o = sw->outcome(h, s, sw->arg);
            if (o == SYN_NONE)
                continue;
            snprintf(path, sizeof path, "%s/cases/%s", dir, id);
            mkdir_ok(path);
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "id", id);
            cJSON_AddItemToObject(r, "params", params(h, s));
            cJSON_AddStringToObject(r, "status",
                                    o == SYN_PASS   ? "pass"
                                    : o == SYN_FAIL ? "fail"
                                                    : "error");
            cJSON_AddStringToObject(r, "mode",
                                    o == SYN_PASS   ? "none"
                                    : o == SYN_FAIL ? "tip-over"
                                                    : "error");
            cJSON_AddStringToObject(r, "why",
                                    o == SYN_PASS   ? "CoG x 0.300 >= 0.300 m at t=7.92 s"
                                    : o == SYN_FAIL ? "roll 95 deg at t=3.10 s"
                                                    : "kenaf-engine exited (signal 9)");
            cJSON_AddNumberToObject(r, "sim_s", 10.25);
            cJSON_AddStringToObject(r, "trajectory_fnv64", "89ab01cd23ef4567");
            snprintf(path, sizeof path, "%s/cases/%s/result.json", dir, id);
            write_json(path, r);
            if (sw->no_plots)
                continue;
            snprintf(path, sizeof path, "%s/cases/%s/trajectory.svg", dir, id);
            h_write_file(path, "<svg xmlns='http://www.w3.org/2000/svg'/>\n");
        }
    if (sw->shard_n) {
        cJSON *sh = cJSON_AddObjectToObject(d, "shard");
        cJSON_AddNumberToObject(sh, "k", sw->shard_k);
        cJSON_AddNumberToObject(sh, "n", sw->shard_n);
    } else {
        cJSON_AddNullToObject(d, "shard");
    }
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    write_json(path, d);
}
