/* Case scenarios (casefile.h). What each parameter changes is the table of
 * docs/scenario-runs.md ("Sweeps"): the terrain's own keys, the robot's
 * (robot_changes, merged by the engine over the robot file), the start
 * pose, or the terrain itself for terrain_family. */
#include "casefile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datadir.h"
#include "jsonutil.h"

/* dir of base + rel, or rel when absolute; then made absolute. */
static int resolve(const char *base, const char *rel, char *out, char *err, size_t errlen)
{
    char joined[PATH_MAX * 2];
    const char *slash = strrchr(base, '/');
    if (rel[0] == '/' || !slash)
        snprintf(joined, sizeof joined, "%s", rel);
    else
        snprintf(joined, sizeof joined, "%.*s/%s", (int)(slash - base), base, rel);
    if (!realpath(joined, out)) {
        snprintf(err, errlen, "%s: %s", joined, strerror(errno));
        return -1;
    }
    return 0;
}

static int apply_variant(struct kn_sweep_scen *sc, int v, char *err, size_t errlen)
{
    cJSON *vars = cJSON_DetachItemFromObjectCaseSensitive(sc->root, "variants");
    const cJSON *var = cJSON_GetArrayItem(vars, v);
    int rc = 0;
    if (vars || v != 0) {
        if (!cJSON_IsObject(var)) {
            snprintf(err, errlen, "%s: no variant %d", sc->path, v);
            rc = -1;
        } else if (kn_json_merge(sc->root, var)) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    cJSON_Delete(vars);
    return rc;
}

static int set_string(cJSON *o, const char *key, const char *val)
{
    cJSON *s = cJSON_CreateString(val);
    if (!s)
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_ReplaceItemInObjectCaseSensitive(o, key, s);
    else
        cJSON_AddItemToObject(o, key, s);
    return 0;
}

/* robot and terrain.file made absolute; the terrain's type found. */
static int fix_paths(struct kn_sweep_scen *sc, char *err, size_t errlen)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(sc->root, "robot");
    char abs[PATH_MAX];
    if (r && !cJSON_IsString(r)) {
        snprintf(err, errlen, "%s: \"robot\" must be a file name", sc->path);
        return -1;
    }
    if (resolve(sc->path, r ? r->valuestring : "../robots/kenaf.json", abs, err, errlen) ||
        set_string(sc->root, "robot", abs))
        return -1;
    cJSON *t = cJSON_GetObjectItemCaseSensitive(sc->root, "terrain");
    if (!cJSON_IsObject(t)) {
        snprintf(err, errlen, "%s: missing object \"terrain\"", sc->path);
        return -1;
    }
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(t, "file");
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(t, "type");
    if (f) {
        if (!cJSON_IsString(f) || resolve(sc->path, f->valuestring, abs, err, errlen) ||
            set_string(t, "file", abs)) {
            if (!cJSON_IsString(f))
                snprintf(err, errlen, "%s: terrain \"file\" must be a file name", sc->path);
            return -1;
        }
        if (!ty) {
            char *b = kn_json_slurp(abs, NULL, err, errlen);
            cJSON *tf = b ? cJSON_Parse(b) : NULL;
            free(b);
            const cJSON *tt = cJSON_GetObjectItemCaseSensitive(tf, "type");
            if (cJSON_IsString(tt))
                snprintf(sc->terrain_type, sizeof sc->terrain_type, "%s", tt->valuestring);
            cJSON_Delete(tf);
            if (!sc->terrain_type[0]) {
                if (!err[0])
                    snprintf(err, errlen, "%s: no terrain \"type\"", abs);
                return -1;
            }
        }
        /* the generated families ship beside the scenario's terrain files */
        snprintf(sc->terrains_dir, sizeof sc->terrains_dir, "%s", abs);
        *strrchr(sc->terrains_dir, '/') = '\0';
    }
    if (ty && cJSON_IsString(ty))
        snprintf(sc->terrain_type, sizeof sc->terrain_type, "%s", ty->valuestring);
    if (!sc->terrain_type[0]) {
        snprintf(err, errlen, "%s: the terrain has no \"type\"", sc->path);
        return -1;
    }
    return 0;
}

/* The directory holding FAMILY.json for every family the sweep lists: the
 * scenario's terrain files' own, else the data directory's terrains/. */
static int find_families(const struct kn_sweep *sw, struct kn_sweep_scen *sc, char *err,
                         size_t errlen)
{
    const struct kn_sweep_param *fam = NULL;
    for (int p = 0; p < sw->nparams; p++)
        if (sw->params[p].known->is_string)
            fam = &sw->params[p];
    if (!fam)
        return 0;
    /* the engine's own rule for its data folder (KENAF_CONFIG_DIR, the
     * source tree for a build-tree binary, else the installed one) */
    char cand[2][PATH_MAX], data[PATH_MAX - 16];
    int nc = 0;
    if (sc->terrains_dir[0])
        snprintf(cand[nc++], PATH_MAX, "%s", sc->terrains_dir);
    kn_datadir_of("/proc/self/exe", data, sizeof data);
    snprintf(cand[nc++], PATH_MAX, "%s/terrains", data);
    for (int i = 0; i < nc; i++) {
        int all = 1;
        for (size_t v = 0; v < fam->nvalues && all; v++) {
            char f[PATH_MAX + 64];
            snprintf(f, sizeof f, "%.4000s/%s.json", cand[i], fam->strs[v]);
            all = access(f, R_OK) == 0;
        }
        if (all) {
            snprintf(sc->terrains_dir, sizeof sc->terrains_dir, "%.4000s", cand[i]);
            return 0;
        }
    }
    snprintf(err, errlen,
             "terrain_family: no directory holds %s.json and the others listed "
             "(looked in %s, and the data directory)",
             fam->strs[0], cand[0]);
    return -1;
}

int kn_sweep_scen_load(const char *sweep_path, const struct kn_sweep *sw, struct kn_sweep_scen *sc,
                       char *err, size_t errlen)
{
    memset(sc, 0, sizeof *sc);
    err[0] = '\0';
    char msg[PATH_MAX + 100];
    if (resolve(sweep_path, sw->scenario, sc->path, msg, sizeof msg)) {
        snprintf(err, errlen, "scenario %s", msg);
        return -1;
    }
    sc->bytes = kn_json_slurp(sc->path, &sc->len, err, errlen);
    if (!sc->bytes)
        return -1;
    sc->root = cJSON_ParseWithLength(sc->bytes, sc->len);
    if (!cJSON_IsObject(sc->root)) {
        snprintf(err, errlen, "%s: not a JSON object", sc->path);
        return -1;
    }
    if (cJSON_GetObjectItemCaseSensitive(sc->root, "robots")) {
        snprintf(err, errlen, "%s: a fleet scenario (\"robots\"): a sweep runs one program",
                 sc->path);
        return -1;
    }
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(sc->root, "name");
    if (cJSON_IsString(nm))
        snprintf(sc->name, sizeof sc->name, "%s", nm->valuestring);
    else {
        const char *b = strrchr(sc->path, '/');
        snprintf(sc->name, sizeof sc->name, "%.63s", b ? b + 1 : sc->path);
        char *dot = strrchr(sc->name, '.');
        if (dot)
            *dot = '\0';
    }
    return apply_variant(sc, sw->variant, err, errlen) || fix_paths(sc, err, errlen) ||
                   kn_sweep_check_terrain(sw, sc->terrain_type, err, errlen) ||
                   find_families(sw, sc, err, errlen)
               ? -1
               : 0;
}

void kn_sweep_scen_free(struct kn_sweep_scen *sc)
{
    free(sc->bytes);
    cJSON_Delete(sc->root);
    memset(sc, 0, sizeof *sc);
}

/* o[key] as an object, created when missing or not an object. */
static cJSON *object_at(cJSON *o, const char *key)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsObject(c))
        return c;
    c = cJSON_CreateObject();
    if (!c)
        return NULL;
    if (cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_ReplaceItemInObjectCaseSensitive(o, key, c);
    else
        cJSON_AddItemToObject(o, key, c);
    return c;
}

static int set_number(cJSON *o, const char *key, double v)
{
    if (!o)
        return -1;
    cJSON *n = cJSON_CreateNumber(v);
    if (!n)
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(o, key))
        cJSON_ReplaceItemInObjectCaseSensitive(o, key, n);
    else
        cJSON_AddItemToObject(o, key, n);
    return 0;
}

/* o[key] += v, with def when o has no key. */
static int add_number(cJSON *o, const char *key, double def, double v)
{
    const cJSON *c = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return set_number(o, key, kn_sweep_round9((c && cJSON_IsNumber(c) ? c->valuedouble : def) + v));
}

static int apply(cJSON *root, const struct kn_sweep_scen *sc, const struct kn_sweep *sw,
                 const struct kn_sweep_case *c)
{
    /* the terrain is replaced first, so terrain_seed lands in the new one */
    for (int p = 0; p < sw->nparams; p++)
        if (sw->params[p].known->is_string) {
            char f[PATH_MAX + 64];
            snprintf(f, sizeof f, "%s/%s.json", sc->terrains_dir,
                     sw->params[p].strs[(size_t)c->v[p]]);
            cJSON *t = cJSON_CreateObject();
            if (!t || !cJSON_AddStringToObject(t, "file", f)) {
                cJSON_Delete(t);
                return -1;
            }
            cJSON_ReplaceItemInObjectCaseSensitive(root, "terrain", t);
        }
    static const char *const terrain_key[][2] = {
        { "step_height_m", "height" },     { "trench_width_m", "width" },
        { "stair_rise_m", "rise" },        { "stair_run_m", "run" },
        { "ramp_angle_deg", "angle_deg" }, { "terrain_seed", "seed" },
    };
    for (int p = 0; p < sw->nparams; p++) {
        const char *nm = sw->params[p].known->name;
        double v = c->v[p];
        int rc = 0;
        for (size_t k = 0; k < sizeof terrain_key / sizeof terrain_key[0]; k++)
            if (strcmp(nm, terrain_key[k][0]) == 0)
                rc = set_number(object_at(root, "terrain"), terrain_key[k][1], v);
        if (strcmp(nm, "friction") == 0)
            rc = set_number(object_at(object_at(root, "robot_changes"), "friction"), "track_mu", v);
        else if (strcmp(nm, "belt_speed_max_m_s") == 0)
            rc =
                set_number(object_at(object_at(root, "robot_changes"), "belt"), "speed_max_m_s", v);
        else if (strcmp(nm, "start_dx_m") == 0)
            rc = add_number(object_at(root, "start"), "x", -1.0, v); /* the engine's default x */
        else if (strcmp(nm, "start_dy_m") == 0)
            rc = add_number(object_at(root, "start"), "y", 0, v);
        else if (strcmp(nm, "start_yaw_deg") == 0)
            rc = add_number(object_at(root, "start"), "yaw_deg", 0, v);
        /* seed: the run's --seed, not the file */
        if (rc)
            return -1;
    }
    return 0;
}

char *kn_sweep_case_scenario(const struct kn_sweep_scen *sc, const struct kn_sweep *sw,
                             const struct kn_sweep_case *c)
{
    cJSON *root = cJSON_Duplicate(sc->root, 1);
    char *out = root && apply(root, sc, sw, c) == 0 ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    return out;
}
