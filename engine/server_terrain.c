/* Terrains for the server: a terrain name or file to a built terrain,
 * the NFO level label, and the named start poses derived from the
 * terrain's geometry (terrain files carry none): "Origin" everywhere,
 * "Approach" before an obstacle and "Beyond" past it. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "runner.h"
#include "server_int.h"

/* Centre of the robot this far before an obstacle's near edge: the
 * flippers (0.235 m past the 0.17 m pulley axis) stay clear of it. */
#define APPROACH_M 0.8
#define BEYOND_M 0.6

static bool is_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
            return false;
    return true;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* File name without directory and ".json", reduced to word characters. */
static void label_of(const char *path, char *out, size_t outlen)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = 0;
    for (size_t i = 0; b[i] && n + 1 < outlen; i++) {
        if (strcmp(b + i, ".json") == 0)
            break;
        unsigned char ch = (unsigned char)b[i];
        out[n++] = (char)(isalnum(ch) || ch == '_' || ch == '-' || ch == '.' ? ch : '_');
    }
    if (n == 0 && outlen > 1)
        out[n++] = 'x';
    out[n] = '\0';
}

static double min2(double a, double b)
{
    return a < b ? a : b;
}

static void add_start(struct kn_srv_start *st, int *n, const struct kn_terrain *t, const char *name,
                      double x, double y)
{
    if (*n >= KN_SRV_MAX_STARTS)
        return;
    struct kn_srv_start *p = &st[(*n)++];
    snprintf(p->name, sizeof p->name, "%s", name);
    /* terrain coordinates to the world: the terrain's own pose */
    double c = cos(t->pose[2]), s = sin(t->pose[2]);
    p->x = t->pose[0] + c * x - s * y;
    p->y = t->pose[1] + s * x + c * y;
    p->yaw = t->pose[2];
}

static void derive_starts(const struct kn_terrain *t, struct kn_srv_start *st, int *n)
{
    *n = 0;
    struct kn_srv_start *o = &st[(*n)++];
    snprintf(o->name, sizeof o->name, "Origin");
    o->x = o->y = o->yaw = 0;
    double beyond = NAN;
    switch (t->type) {
    case KN_TERRAIN_STEP: beyond = t->edge_x + min2(BEYOND_M, 0.5 * t->length); break;
    case KN_TERRAIN_TRENCH: beyond = t->far_x + min2(BEYOND_M, 0.5 * t->length); break;
    case KN_TERRAIN_STAIRS:
    case KN_TERRAIN_RAMP: beyond = t->far_x + min2(BEYOND_M, 0.5 * t->landing); break;
    case KN_TERRAIN_PALLET:
    case KN_TERRAIN_ROUGH:
    case KN_TERRAIN_STEPFIELD:
    case KN_TERRAIN_RUBBLE: beyond = t->far_x + APPROACH_M; break;
    case KN_TERRAIN_APPARATUS:
        /* an apparatus says where its course ends (a figure 8 ends where
         * it starts: nothing lies beyond it) */
        if (t->gate_finish[0] > t->gate_start[0])
            beyond = t->gate_finish[0] + BEYOND_M;
        break;
    case KN_TERRAIN_FLAT:
    case KN_TERRAIN_HEIGHTFIELD: break;
    }
    if (isfinite(beyond)) {
        add_start(st, n, t, "Approach", t->edge_x - APPROACH_M, 0);
        add_start(st, n, t, "Beyond", beyond, 0);
    }
}

int kn_srv_terrain_load(const char *name_or_file, bool allow_path, struct kn_terrain *t,
                        char **spec, char *level, size_t levellen, struct kn_srv_start *starts,
                        int *nstarts, char *err, size_t errlen)
{
    char path[1024];
    bool is_path = strchr(name_or_file, '/') || ends_with(name_or_file, ".json");
    if (is_path) {
        if (!allow_path) {
            snprintf(err, errlen, "a terrain name is one word of letters, digits, '_' or '-'");
            return -1;
        }
        snprintf(path, sizeof path, "%s", name_or_file);
        label_of(name_or_file, level, levellen);
    } else {
        if (!is_name(name_or_file)) {
            snprintf(err, errlen, "a terrain name is one word of letters, digits, '_' or '-'");
            return -1;
        }
        snprintf(path, sizeof path, "%s/terrains/%s.json", kn_run_config_dir(), name_or_file);
        snprintf(level, levellen, "%s", name_or_file);
    }
    cJSON *o = kn_terrain_spec(path, NULL, err, errlen);
    int rc = o ? kn_terrain_from_json(o, path, t, err, errlen) : -1;
    if (rc == 0 && !(*spec = kn_terrain_spec_text(o, t))) {
        snprintf(err, errlen, "%s: out of memory", path);
        kn_terrain_free(t);
        rc = -1;
    }
    cJSON_Delete(o);
    if (rc)
        return -1;
    derive_starts(t, starts, nstarts);
    return 0;
}

const struct kn_srv_start *kn_srv_start_find(const struct kn_srv *s, struct kn_usar_str name)
{
    for (int i = 0; i < s->nstarts; i++)
        if (kn_usar_str_is(name, s->starts[i].name))
            return &s->starts[i];
    return NULL;
}

struct kn_pose kn_srv_spawn_pose(struct kn_srv *s, const double pos[3], const double rpy[3])
{
    struct kn_pose p = { pos[0], pos[1], pos[2], rpy[0], rpy[1], rpy[2] };
    const struct kn_robot_params *rp = &s->rp;
    /* the lowest point of the tracks at this attitude, as the world
     * computes it when it places a robot on the ground */
    double lift = rp->track_radius + rp->track_pulley_x * fabs(sin(p.pitch)) +
                  rp->track_y * fabs(sin(p.roll));
    double g = kn_world_ground_z(s->w, p.x, p.y);
    if (!isfinite(g))
        g = 0;
    if (!isfinite(p.z) || p.z - lift < g)
        p.z = NAN;
    return p;
}
