/* The output directory's deterministic files (outdir.h). */
#include "outdir.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "casefile.h"
#include "jsonutil.h"

int kn_sweep_mkdirs(const char *dir, char *err, size_t errlen)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1;; s++) {
        int end = *s == '\0';
        if (*s == '/' || end) {
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                snprintf(err, errlen, "cannot create %s: %s", p, strerror(errno));
                return -1;
            }
            if (end)
                break;
            *s = '/';
        }
    }
    return 0;
}

int kn_sweep_write_file(const char *path, const char *text, char *err, size_t errlen)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    int bad = fputs(text, f) < 0 || fputc('\n', f) == EOF;
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

cJSON *kn_sweep_read_json(const char *path)
{
    char e[64];
    char *b = kn_json_slurp(path, NULL, e, sizeof e);
    cJSON *j = b ? cJSON_Parse(b) : NULL;
    free(b);
    return j;
}

static int write_json(const char *path, cJSON *j, char *err, size_t errlen)
{
    char *s = j ? cJSON_Print(j) : NULL;
    int rc = s ? kn_sweep_write_file(path, s, err, errlen) : -1;
    if (!s)
        snprintf(err, errlen, "out of memory writing %s", path);
    free(s);
    return rc;
}

cJSON *kn_sweep_params_json(const struct kn_sweep *sw, const struct kn_sweep_case *c)
{
    cJSON *o = cJSON_CreateObject();
    for (int p = 0; o && p < sw->nparams; p++) {
        const struct kn_sweep_param *pa = &sw->params[p];
        if (pa->known->is_string)
            cJSON_AddStringToObject(o, pa->known->name, pa->strs[(size_t)c->v[p]]);
        else
            cJSON_AddNumberToObject(o, pa->known->name, c->v[p]);
    }
    return o;
}

static cJSON *param_json(const struct kn_sweep_param *pa)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "name", pa->known->name);
    cJSON_AddStringToObject(o, "unit", pa->known->unit);
    if (pa->harder)
        cJSON_AddStringToObject(o, "harder", pa->harder > 0 ? "higher" : "lower");
    else
        cJSON_AddNullToObject(o, "harder");
    if (pa->uniform) {
        cJSON *u = cJSON_AddArrayToObject(o, "uniform");
        cJSON_AddItemToArray(u, cJSON_CreateNumber(pa->lo));
        cJSON_AddItemToArray(u, cJSON_CreateNumber(pa->hi));
        return o;
    }
    cJSON *vals = cJSON_AddArrayToObject(o, "values");
    for (size_t i = 0; vals && i < pa->nvalues; i++)
        cJSON_AddItemToArray(vals, pa->known->is_string ? cJSON_CreateString(pa->strs[i])
                                                        : cJSON_CreateNumber(pa->values[i]));
    return o;
}

int kn_sweep_write_sweep_json(const char *out, const struct kn_sweep *sw, const char *scen_name,
                              uint64_t hash, int shard_k, int shard_n, const char *sweep_file,
                              char *const *program, char *err, size_t errlen)
{
    char hex[17], path[4200];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)hash);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "format", 1);
    cJSON_AddStringToObject(j, "name", sw->name);
    cJSON_AddStringToObject(j, "hash", hex);
    cJSON_AddStringToObject(j, "scenario", scen_name);
    cJSON_AddNumberToObject(j, "target_rate", sw->target_rate);
    cJSON *ps = cJSON_AddArrayToObject(j, "parameters");
    for (int p = 0; ps && p < sw->nparams; p++)
        cJSON_AddItemToArray(ps, param_json(&sw->params[p]));
    cJSON *cs = cJSON_AddArrayToObject(j, "cases");
    for (size_t i = 0; cs && i < sw->ncases; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "id", sw->cases[i].id);
        cJSON_AddItemToObject(c, "params", kn_sweep_params_json(sw, &sw->cases[i]));
        cJSON_AddItemToArray(cs, c);
    }
    if (shard_n > 0) {
        cJSON *s = cJSON_AddObjectToObject(j, "shard");
        cJSON_AddNumberToObject(s, "k", shard_k);
        cJSON_AddNumberToObject(s, "n", shard_n);
    } else
        cJSON_AddNullToObject(j, "shard");
    /* how the report names the command that reruns a case */
    if (sweep_file)
        cJSON_AddStringToObject(j, "sweep_file", sweep_file);
    if (program) {
        cJSON *pr = cJSON_AddArrayToObject(j, "program");
        for (char *const *a = program; pr && *a; a++)
            cJSON_AddItemToArray(pr, cJSON_CreateString(*a));
    }
    snprintf(path, sizeof path, "%s/sweep.json", out);
    int rc = write_json(path, j, err, errlen);
    cJSON_Delete(j);
    return rc;
}

int kn_sweep_write_result(const char *out, const struct kn_sweep *sw, const struct kn_sweep_case *c,
                          const struct kn_sweep_result *r, char *err, size_t errlen)
{
    char path[4200], hex[17];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "id", c->id);
    cJSON_AddItemToObject(j, "params", kn_sweep_params_json(sw, c));
    cJSON_AddStringToObject(j, "status", r->status);
    cJSON_AddStringToObject(j, "mode", r->mode);
    cJSON_AddStringToObject(j, "why", r->why);
    cJSON_AddNumberToObject(j, "sim_s", r->sim_s);
    if (r->has_traj) {
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)r->traj_fnv);
        cJSON_AddStringToObject(j, "trajectory_fnv64", hex);
    } else
        cJSON_AddNullToObject(j, "trajectory_fnv64");
    snprintf(path, sizeof path, "%s/cases/%s/result.json", out, c->id);
    int rc = write_json(path, j, err, errlen);
    cJSON_Delete(j);
    return rc;
}

int kn_sweep_write_results(const char *out, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/sweep.json", out);
    cJSON *sw = kn_sweep_read_json(path);
    const cJSON *hash = cJSON_GetObjectItemCaseSensitive(sw, "hash");
    if (!cJSON_IsString(hash)) {
        cJSON_Delete(sw);
        snprintf(err, errlen, "%s: not a sweep", path);
        return -1;
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "format", 1);
    cJSON_AddStringToObject(j, "hash", hash->valuestring);
    cJSON *cs = cJSON_AddArrayToObject(j, "cases");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(sw, "cases"))
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (!cJSON_IsString(id))
            continue;
        snprintf(path, sizeof path, "%s/cases/%s/result.json", out, id->valuestring);
        cJSON *r = kn_sweep_read_json(path);
        if (r)
            cJSON_AddItemToArray(cs, r);
    }
    cJSON_Delete(sw);
    snprintf(path, sizeof path, "%s/results.json", out);
    int rc = write_json(path, j, err, errlen);
    cJSON_Delete(j);
    return rc;
}

int kn_sweep_read_run_result(const char *path, struct kn_sweep_result *r)
{
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[2048];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        const char *v = eq + 1;
        if (strcmp(line, "status") == 0)
            snprintf(r->status, sizeof r->status, "%s", v);
        else if (strcmp(line, "mode") == 0)
            snprintf(r->mode, sizeof r->mode, "%s", v);
        else if (strcmp(line, "why") == 0)
            snprintf(r->why, sizeof r->why, "%s", v);
        else if (strcmp(line, "sim_s") == 0)
            r->sim_s = strtod(v, NULL);
    }
    fclose(f);
    return r->status[0] ? 0 : -1;
}

int kn_sweep_file_fnv(const char *path, uint64_t *h)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    unsigned char buf[65536];
    size_t n;
    uint64_t x = KN_SWEEP_FNV_INIT;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        x = kn_sweep_fnv(x, buf, n);
    int bad = ferror(f);
    fclose(f);
    *h = x;
    return bad ? -1 : 0;
}
