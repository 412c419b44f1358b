/* kenaf-cameras' PTZ control over HTTP (ptz_http.h): the paths, the
 * camera a request names, the answer's status, the lock around the
 * states (the stream library's thread writes them, the render thread
 * reads them) and the counters. */
#include "ptz_http.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "camera.h"
#include "observe.h"

struct kn_ptzh {
    pthread_mutex_t mu;
    struct kn_ptz_limits *lim; /* each robot's, from its robot file */
    size_t n;
    char (*names)[KN_COBS_NAME_LEN];
    struct kn_ptz_state *st;
    /* under mu */
    uint64_t requests, moves, queries, clamped, bad, unknown_camera;
};

static void limits_of(struct kn_ptz_limits *l, const struct kn_rcam_mount *m)
{
    *l = (struct kn_ptz_limits){ .pan_max_deg = m->pan_max_deg,
                                 .tilt_min_deg = m->tilt_min_deg,
                                 .tilt_max_deg = m->tilt_max_deg,
                                 .zoom_max = m->zoom_max,
                                 .pan_speed_dps = m->pan_speed_dps,
                                 .tilt_speed_dps = m->tilt_speed_dps,
                                 .zoom_speed = m->zoom_speed };
}

struct kn_ptzh *kn_ptzh_new(const char *const names[], size_t n)
{
    struct kn_ptzh *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    pthread_mutex_init(&h->mu, NULL);
    h->names = calloc(n ? n : 1, sizeof *h->names);
    h->st = calloc(n ? n : 1, sizeof *h->st);
    h->lim = calloc(n ? n : 1, sizeof *h->lim);
    if (!h->names || !h->st || !h->lim) {
        kn_ptzh_free(h);
        return NULL;
    }
    h->n = n;
    uint64_t now = kn_cobs_now_ns();
    struct kn_rcam_mount kenaf;
    kn_rcam_mount_kenaf(KN_RCAM_PTZ, &kenaf);
    for (size_t i = 0; i < n; i++) {
        snprintf(h->names[i], sizeof h->names[i], "%s", names[i]);
        limits_of(&h->lim[i], &kenaf);
        kn_ptz_home(&h->st[i], now);
    }
    return h;
}

void kn_ptzh_free(struct kn_ptzh *h)
{
    if (!h)
        return;
    pthread_mutex_destroy(&h->mu);
    free(h->names);
    free(h->st);
    free(h->lim);
    free(h);
}

static void reply(struct kn_stream_http_reply *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void reply(struct kn_stream_http_reply *r, int status, const char *fmt, ...)
{
    r->status = status;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(r->body, sizeof r->body, fmt, ap);
    va_end(ap);
    r->len = w < 0 ? 0 : (size_t)w < sizeof r->body ? (size_t)w : sizeof r->body - 1;
}

/* The robot a path names: "/ROBOT" + KN_PTZH_PATH gives its index,
 * KN_PTZH_PATH gives -1 (camera= says which); -2: not a PTZ path. */
static long path_robot(const struct kn_ptzh *h, const char *path, int *unknown)
{
    size_t pl = strlen(path), kl = strlen(KN_PTZH_PATH);
    *unknown = 0;
    if (strcmp(path, KN_PTZH_PATH) == 0)
        return -1;
    if (pl <= kl + 1 || path[0] != '/' || strcmp(path + pl - kl, KN_PTZH_PATH) != 0)
        return -2;
    size_t nl = pl - kl - 1;
    for (size_t i = 0; i < h->n; i++)
        if (strlen(h->names[i]) == nl && memcmp(h->names[i], path + 1, nl) == 0)
            return (long)i;
    *unknown = 1;
    return -1;
}

int kn_ptzh_handle(void *arg, const char *method, const char *path, const char *query,
                   struct kn_stream_http_reply *r)
{
    struct kn_ptzh *h = arg;
    int unknown;
    long robot = path_robot(h, path, &unknown);
    if (robot == -2)
        return 0;
    r->any_origin = 1;
    r->content_type = "text/plain";
    struct kn_ptz_req req;
    char err[256];
    int parsed = kn_ptz_parse(query, strlen(query), &req, err, sizeof err);
    pthread_mutex_lock(&h->mu);
    h->requests++;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        h->bad++;
        reply(r, 405, "Error: %s: only GET\n", method);
    } else if (unknown) {
        h->unknown_camera++;
        reply(r, 404, "Error: no robot at %s\n", path);
    } else if (parsed < 0) {
        h->bad++;
        reply(r, 400, "Error: %s\n", err);
    } else {
        /* camera=N counts from 1 in the order printed at start; under
         * /ROBOT/ the robot has the one PTZ camera, camera=1 */
        int cam = req.set & KN_PTZ_CAMERA ? req.camera : 1;
        size_t i = robot >= 0 ? (size_t)robot : (size_t)cam - 1;
        if ((robot >= 0 && cam != 1) || i >= h->n) {
            h->unknown_camera++;
            reply(r, 404, "Error: no PTZ camera %d%s\n", cam, robot >= 0 ? " at this robot" : "");
        } else {
            int nc = kn_ptz_apply(&h->st[i], &h->lim[i], &req, kn_cobs_now_ns(), r->body,
                                  sizeof r->body);
            r->len = strlen(r->body);
            r->status = r->len ? 200 : 204; /* Axis answers a move with 204 */
            h->clamped += (uint64_t)nc;
            h->moves += (req.set & ~(unsigned)(KN_PTZ_QUERY | KN_PTZ_CAMERA)) != 0;
            h->queries += req.query != KN_PTZ_Q_NONE;
        }
    }
    pthread_mutex_unlock(&h->mu);
    return 1;
}

void kn_ptzh_get(struct kn_ptzh *h, size_t i, double *pan_deg, double *tilt_deg, double *zoom)
{
    pthread_mutex_lock(&h->mu);
    kn_ptz_advance(&h->st[i], &h->lim[i], kn_cobs_now_ns());
    *pan_deg = h->st[i].pan_deg;
    *tilt_deg = h->st[i].tilt_deg;
    *zoom = h->st[i].zoom;
    pthread_mutex_unlock(&h->mu);
}

void kn_ptzh_set_mount(struct kn_ptzh *h, size_t i, const struct kn_rcam_mount *m)
{
    pthread_mutex_lock(&h->mu);
    uint64_t now = kn_cobs_now_ns();
    /* up to now at the old speeds, then inside the new limits */
    kn_ptz_advance(&h->st[i], &h->lim[i], now);
    limits_of(&h->lim[i], m);
    kn_ptz_advance(&h->st[i], &h->lim[i], now);
    pthread_mutex_unlock(&h->mu);
}

char *kn_ptzh_stats_json(struct kn_ptzh *h)
{
    cJSON *root = cJSON_CreateObject(), *p = cJSON_AddObjectToObject(root, "ptz");
    pthread_mutex_lock(&h->mu);
    cJSON_AddNumberToObject(p, "requests", (double)h->requests);
    cJSON_AddNumberToObject(p, "moves", (double)h->moves);
    cJSON_AddNumberToObject(p, "queries", (double)h->queries);
    cJSON_AddNumberToObject(p, "clamped", (double)h->clamped);
    cJSON_AddNumberToObject(p, "bad", (double)h->bad);
    cJSON_AddNumberToObject(p, "unknown_camera", (double)h->unknown_camera);
    pthread_mutex_unlock(&h->mu);
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}
