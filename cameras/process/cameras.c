/* kenaf-cameras' run: the streams' servers on a GLib thread of their own,
 * the KRP/1 observer on another (observe.h), and the render thread, which
 * owns the renderer and pushes each camera's shot at the camera's frame
 * rate. The main thread waits for SIGINT or SIGTERM and then stops them
 * all: render thread, servers, observer (which says BYE). A camera's
 * frames are rendered only while someone watches it (kn_stream_watched:
 * an RTSP media, an MJPEG client, a snapshot waiting for the next frame);
 * with the overlay, each frame carries its robot time (stamp.h). */
#include "cameras.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "ptz_http.h"
#include "render.h"
#include "stamp.h"

const char *const kn_cams_names[KN_CAMS_NCAMS] = { "front", "birdseye" };

struct cam {
    int stream_cam; /* kn_stream index */
    size_t robot;
    char name[32];            /* the robot file's camera, its path in the URLs */
    enum kn_rcam_which which; /* its kind */
    bool ptz;                 /* the robot's first PTZ camera: ptz.cgi moves it */
    bool missing;             /* said once: a new world no longer has it */
    int width, height;
    uint64_t period_ns, next_ns, last_robot_ns;
    uint8_t *rgba;
    bool overlay;
    uint32_t frame_no; /* frames pushed, the stamp's counter */
};

struct run {
    const struct kn_cams_opts *o;
    struct kn_stream *stream;
    struct kn_cobs *obs;
    struct kn_ptzh *ptz; /* the front cameras' pan, tilt and zoom */
    struct cam cams[KN_COBS_MAX_ROBOTS * KN_ROBOTCAMS_MAX];
    size_t ncams;
    struct kn_rscene scenes[KN_COBS_MAX_ROBOTS];
    unsigned world_gen[KN_COBS_MAX_ROBOTS];
    /* which world each robot is in (its terrain and where it lies): the
     * robots of one world are drawn in each other's pictures; 0: none */
    uint32_t world_key[KN_COBS_MAX_ROBOTS];
    volatile int stop;
    /* the render thread's start: 1 open, -1 failed (message in err) */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int opened;
    char err[512];
    /* figures for --stats and GET /stats, under stats_mu */
    pthread_mutex_t stats_mu;
    uint64_t frames, render_ns_sum, render_ns_max, late, unwatched;
};

/* as the observer's "no STATUS for 1 s" (observe.c) */
#define STALE_NS 1000000000ull

static void deg2rad3(const int32_t cdeg[3], double out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = cdeg[k] / 100.0 * M_PI / 180.0;
}

/* A world description's terrain and terrain pose as one number: robots
 * whose numbers match are taken to stand in one world, as kenaf-view
 * draws every robot it watches in one scene. 0 for a document that is
 * not JSON. */
static uint32_t world_key_of(const char *json, size_t len)
{
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!root)
        return 0;
    uint32_t h = 2166136261u;
    const char *keys[] = { "terrain", "terrain_pose" };
    for (int k = 0; k < 2; k++) {
        char *t = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(root, keys[k]));
        for (const char *p = t ? t : "-"; *p; p++)
            h = (h ^ (uint8_t)*p) * 16777619u;
        h = (h ^ '|') * 16777619u;
        free(t);
    }
    cJSON_Delete(root);
    return h | 1u;
}

/* A robot as the scene places it, from its last STATUS. */
static int pose_of(const struct kn_cobs_view *v, struct kn_rscene_robot *rr)
{
    memset(rr, 0, sizeof *rr);
    if (!v->have_status)
        return -1;
    rr->present = 1;
    for (int k = 0; k < 3; k++)
        rr->pos[k] = v->status.pos_mm[k] / 1000.0;
    deg2rad3(v->status.rpy_cdeg, rr->rpy);
    for (int k = 0; k < KN_KRP_FLIPPERS && k < 4; k++)
        rr->flippers[k] = v->status.flipper_cdeg[k] / 100.0 * M_PI / 180.0;
    return 0;
}

/* Robot i's world into its scene. */
static void load_world(struct run *g, size_t i, const char *world, size_t len)
{
    char why[300];
    struct kn_rcam_mount m;
    if (kn_rscene_load(&g->scenes[i], world, len, why, sizeof why) < 0) {
        fprintf(stderr, "kenaf-cameras: robot %s: world description: %s\n", g->o->robots[i].name,
                why);
        return;
    }
    g->world_key[i] = world_key_of(world, len);
    if (g->ptz && kn_rcam_mount_of(&g->scenes[i].geom, KN_RCAM_PTZ, &m) == 0)
        kn_ptzh_set_mount(g->ptz, i, &m); /* the robot file's limits and speeds */
}

/* The scene of robot i, from the observer's latest: a new world when
 * there is one, the robot (robot i of the scene, kenaf-view's colour i)
 * where its last STATUS puts it. */
static bool update_scene(struct run *g, size_t i, struct kn_cobs_view *v)
{
    kn_cobs_take(g->obs, i, g->world_gen[i], v);
    if (v->world) {
        load_world(g, i, v->world, v->world_len);
        free(v->world);
        v->world = NULL;
    }
    g->world_gen[i] = v->world_gen;
    struct kn_rscene_robot rr;
    if (pose_of(v, &rr) < 0)
        return false;
    return kn_rscene_robot_set(&g->scenes[i], (int)i, &rr) == 0;
}

/* The other robots of robot i's world into its scene, where their last
 * STATUS puts them; the rest out of it. */
static void place_others(struct run *g, size_t i)
{
    for (size_t j = 0; j < g->o->nrobots; j++) {
        if (j == i)
            continue;
        struct kn_cobs_view v;
        kn_cobs_take(g->obs, j, g->world_gen[j], &v);
        free(v.world); /* robot j's own scene takes it */
        struct kn_rscene_robot rr;
        bool same = g->world_key[j] != 0 && g->world_key[j] == g->world_key[i];
        if (!same || pose_of(&v, &rr) < 0)
            memset(&rr, 0, sizeof rr);
        kn_rscene_robot_set(&g->scenes[i], (int)j, &rr);
    }
}

static void sleep_until(struct run *g, uint64_t t)
{
    for (;;) {
        uint64_t now = kn_cobs_now_ns();
        if (g->stop || now >= t)
            return;
        uint64_t d = t - now < 50000000ull ? t - now : 50000000ull;
        struct timespec ts = { (time_t)(d / 1000000000ull), (long)(d % 1000000000ull) };
        nanosleep(&ts, NULL);
    }
}

static void shoot(struct run *g, struct kn_render *rd, struct cam *c)
{
    struct kn_cobs_view v;
    if (!update_scene(g, c->robot, &v))
        return; /* no pose yet: nothing to draw */
    place_others(g, c->robot);
    struct kn_rcam_shot shot = { .cam = c->which,
                                 .name = c->name,
                                 .robot = (int)c->robot,
                                 .zoom = 1,
                                 .width = c->width,
                                 .height = c->height };
    if (c->ptz)
        kn_ptzh_get(g->ptz, c->robot, &shot.pan_deg, &shot.tilt_deg, &shot.zoom);
    char why[300];
    uint64_t t0 = kn_cobs_now_ns();
    if (kn_render_shot(rd, &g->scenes[c->robot], &shot, c->rgba, why, sizeof why) < 0) {
        /* the cameras are the ones the robot file named at start; a new
         * file without this one leaves its stream still until a restart */
        if (!c->missing)
            fprintf(stderr, "kenaf-cameras: %s/%s: %s (the robot file has no such camera now?)\n",
                    g->o->robots[c->robot].name, c->name, why);
        c->missing = true;
        return;
    }
    c->missing = false;
    uint64_t t1 = kn_cobs_now_ns();
    pthread_mutex_lock(&g->stats_mu);
    g->frames++;
    g->render_ns_sum += t1 - t0;
    if (t1 - t0 > g->render_ns_max)
        g->render_ns_max = t1 - t0;
    pthread_mutex_unlock(&g->stats_mu);
    /* robot time, run on by the wall clock since that STATUS: a daemon
     * gone leaves the picture still and the stream's clock running */
    uint64_t ns = v.status.time_us * 1000u + (t1 - v.status_wall_ns);
    /* a little behind the last frame (a robot clock slower than the wall
     * clock): just after it; far behind is a restarted daemon's clock,
     * taken as it is (the stream library starts its timeline again) */
    if (ns <= c->last_robot_ns && c->last_robot_ns - ns < 1000000000u)
        ns = c->last_robot_ns + 1000000u;
    c->last_robot_ns = ns;
    if (c->overlay)
        kn_stamp_draw(c->rgba, c->width, c->height, (size_t)c->width * 4, c->frame_no,
                      ns / 1000000u);
    /* the robot's daemon quiet for the observer's second: the last pose,
     * marked as such, rather than a picture that looks live */
    if (t1 - v.status_wall_ns > STALE_NS)
        kn_stamp_stale(c->rgba, c->width, c->height, (size_t)c->width * 4);
    c->frame_no++;
    kn_stream_push(g->stream, c->stream_cam, c->rgba, 0, ns);
}

static void *render_main(void *arg)
{
    struct run *g = arg;
    struct kn_render *rd = kn_render_open(g->err, sizeof g->err);
    pthread_mutex_lock(&g->lock);
    g->opened = rd ? 1 : -1;
    pthread_cond_signal(&g->cond);
    pthread_mutex_unlock(&g->lock);
    if (!rd)
        return NULL;
    fprintf(stderr, "kenaf-cameras: rendering on %s\n", kn_render_describe(rd));
    uint64_t now = kn_cobs_now_ns();
    for (size_t k = 0; k < g->ncams; k++)
        g->cams[k].next_ns = now;
    while (!g->stop) {
        struct cam *c = &g->cams[0];
        for (size_t k = 1; k < g->ncams; k++)
            if (g->cams[k].next_ns < c->next_ns)
                c = &g->cams[k];
        sleep_until(g, c->next_ns);
        if (g->stop)
            break;
        /* nobody to see it: no frame, the schedule runs on; a new world
         * is still taken (its PTZ limits answer ptz.cgi at once) */
        if (kn_stream_watched(g->stream, c->stream_cam)) {
            shoot(g, rd, c);
        } else {
            struct kn_cobs_view v;
            update_scene(g, c->robot, &v);
            pthread_mutex_lock(&g->stats_mu);
            g->unwatched++;
            pthread_mutex_unlock(&g->stats_mu);
        }
        c->next_ns += c->period_ns;
        now = kn_cobs_now_ns();
        if (c->next_ns < now) { /* behind by a frame: skip, do not catch up */
            pthread_mutex_lock(&g->stats_mu);
            g->late++;
            pthread_mutex_unlock(&g->stats_mu);
            c->next_ns = now + c->period_ns;
        }
    }
    kn_render_close(rd);
    return NULL;
}

static void *stream_main(void *arg)
{
    kn_stream_run(arg);
    return NULL;
}

static void print_urls(const struct run *g)
{
    const struct kn_cams_opts *o = g->o;
    int rp = kn_stream_rtsp_port(g->stream), hp = kn_stream_http_port(g->stream);
    const char *h = o->listen;
    bool v6 = strchr(h, ':') != NULL;
    const char *lb = v6 ? "[" : "", *rb = v6 ? "]" : "";
    for (size_t k = 0; k < g->ncams; k++) {
        const char *r = o->robots[g->cams[k].robot].name, *n = g->cams[k].name;
        printf("kenaf-cameras: rtsp://%s%s%s:%d/%s/%s\n", lb, h, rb, rp, r, n);
        printf("kenaf-cameras: rtsp://%s%s%s:%d/%s/%s.mjpeg\n", lb, h, rb, rp, r, n);
        printf("kenaf-cameras: http://%s%s%s:%d/%s/%s.mjpg\n", lb, h, rb, hp, r, n);
        printf("kenaf-cameras: http://%s%s%s:%d/%s/%s.jpg\n", lb, h, rb, hp, r, n);
    }
    for (size_t i = 0; i < o->nrobots; i++) {
        printf("kenaf-cameras: http://%s%s%s:%d/%s" KN_PTZH_PATH "\n", lb, h, rb, hp,
               o->robots[i].name);
        printf("kenaf-cameras: http://%s%s%s:%d" KN_PTZH_PATH "?camera=%zu\n", lb, h, rb, hp,
               i + 1);
    }
    printf("kenaf-cameras: http://%s%s%s:%d/stats\n", lb, h, rb, hp);
    fflush(stdout);
}

/* Everything the program counts as one JSON document (malloc'd): the
 * streams' counters per camera, the PTZ control's, and the render
 * thread's. */
static char *stats_json(struct run *g)
{
    cJSON *root = cJSON_CreateObject();
    char *text = kn_stream_stats_json(g->stream);
    cJSON *streams = text ? cJSON_Parse(text) : NULL;
    free(text);
    cJSON_AddItemToObject(root, "cameras", cJSON_DetachItemFromObject(streams, "cameras"));
    cJSON_Delete(streams);
    text = kn_ptzh_stats_json(g->ptz);
    cJSON *ptz = text ? cJSON_Parse(text) : NULL;
    free(text);
    cJSON_AddItemToObject(root, "ptz", cJSON_DetachItemFromObject(ptz, "ptz"));
    cJSON_Delete(ptz);
    cJSON *r = cJSON_AddObjectToObject(root, "render");
    pthread_mutex_lock(&g->stats_mu);
    cJSON_AddNumberToObject(r, "frames", (double)g->frames);
    cJSON_AddNumberToObject(r, "avg_ms",
                            g->frames ? (double)g->render_ns_sum / (double)g->frames / 1e6 : 0.0);
    cJSON_AddNumberToObject(r, "max_ms", (double)g->render_ns_max / 1e6);
    cJSON_AddNumberToObject(r, "late", (double)g->late);
    cJSON_AddNumberToObject(r, "unwatched", (double)g->unwatched);
    pthread_mutex_unlock(&g->stats_mu);
    char *out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out;
}

/* The HTTP paths the program answers itself: GET /stats, and ptz.cgi. */
static int serve(void *arg, const char *method, const char *path, const char *query,
                 struct kn_stream_http_reply *r)
{
    struct run *g = arg;
    if (strcmp(path, "/stats") != 0)
        return kn_ptzh_handle(g->ptz, method, path, query, r);
    r->any_origin = 1;
    if (strcmp(method, "GET") != 0) {
        r->status = 405;
        r->len = (size_t)snprintf(r->body, sizeof r->body, "Error: /stats takes GET\n");
        return 1;
    }
    char *j = stats_json(g);
    size_t n = j ? strlen(j) : 0;
    if (!j || n + 1 >= sizeof r->body) {
        r->status = 500;
        r->len = (size_t)snprintf(r->body, sizeof r->body, "Error: stats %s\n",
                                  j ? "larger than an answer" : "out of memory");
    } else {
        r->content_type = "application/json";
        memcpy(r->body, j, n);
        r->body[n] = '\n';
        r->len = n + 1;
    }
    free(j);
    return 1;
}

/* How long kenaf-cameras waits at start for each robot's world
 * description, whose robot file names the cameras to serve. */
#define WORLD_WAIT_NS 3000000000ull

/* The observer, started, and each robot's world as it is at start (the
 * robot file's cameras): waited for up to WORLD_WAIT_NS; a robot not
 * heard from by then has the Kenaf's cameras. */
static int open_observer(struct run *g)
{
    const struct kn_cams_opts *o = g->o;
    for (size_t i = 0; i < o->nrobots; i++)
        if (kn_rscene_init(&g->scenes[i]) < 0) {
            fprintf(stderr, "kenaf-cameras: out of memory\n");
            return -1;
        }
    char err[1024];
    g->obs = kn_cobs_open(o->robots, o->nrobots, err, sizeof err);
    if (!g->obs) {
        fprintf(stderr, "kenaf-cameras: %s\n", err);
        return -1;
    }
    if (kn_cobs_start(g->obs) < 0) {
        fprintf(stderr, "kenaf-cameras: cannot start a thread\n");
        return -1;
    }
    uint64_t end = kn_cobs_now_ns() + WORLD_WAIT_NS;
    size_t known = 0;
    while (known < o->nrobots && kn_cobs_now_ns() < end) {
        known = 0;
        for (size_t i = 0; i < o->nrobots; i++) {
            if (g->world_gen[i] == 0) {
                struct kn_cobs_view v;
                kn_cobs_take(g->obs, i, 0, &v);
                if (v.world) {
                    load_world(g, i, v.world, v.world_len);
                    free(v.world);
                    g->world_gen[i] = v.world_gen;
                }
            }
            known += g->world_gen[i] != 0;
        }
        if (known < o->nrobots) {
            struct timespec ts = { 0, 20000000 };
            nanosleep(&ts, NULL);
        }
    }
    for (size_t i = 0; i < o->nrobots; i++)
        if (g->world_gen[i] == 0)
            fprintf(stderr,
                    "kenaf-cameras: robot %s: no world description in %llu s: serving the "
                    "Kenaf's cameras\n",
                    o->robots[i].name, WORLD_WAIT_NS / 1000000000ull);
    return 0;
}

/* One stream camera for camera `rc` of robot i: the options of the
 * slot its kind has (front for a PTZ camera, birdseye for a fixed one)
 * where they are set, else the robot file's picture. */
static int add_camera(struct run *g, struct kn_stream_camera *sc, size_t i,
                      const struct kn_robotcam *rc, bool first_ptz)
{
    const struct kn_cams_opts *o = g->o;
    int k = rc->kind == KN_ROBOTCAM_PTZ ? 0 : 1;
    struct cam *m = &g->cams[g->ncams];
    struct kn_stream_camera *c = &sc[g->ncams];
    *c = o->cam[k];
    if (!c->width)
        c->width = rc->width_px, c->height = rc->height_px;
    if (!c->fps)
        c->fps = rc->fps;
    snprintf(m->name, sizeof m->name, "%s", rc->name);
    c->robot = o->robots[i].name;
    c->name = m->name;
    c->format = KN_STREAM_RGBA;
    kn_stream_camera_defaults(c);
    m->robot = i;
    m->which = k == 0 ? KN_RCAM_PTZ : KN_RCAM_BIRD;
    m->ptz = first_ptz;
    m->width = c->width;
    m->height = c->height;
    m->period_ns = 1000000000ull / (uint64_t)c->fps;
    m->overlay = o->overlay[k];
    m->rgba = malloc((size_t)c->width * (size_t)c->height * 4);
    if (!m->rgba) {
        fprintf(stderr, "kenaf-cameras: out of memory\n");
        return -1;
    }
    g->ncams++;
    return 0;
}

/* The servers, with every camera of every robot's file. */
static int open_streams(struct run *g, struct kn_stream_camera *sc)
{
    const struct kn_cams_opts *o = g->o;
    for (size_t i = 0; i < o->nrobots; i++) {
        const struct kn_robotcams *rcs = &g->scenes[i].geom.cams;
        bool ptz_seen = false;
        for (int j = 0; j < rcs->n; j++) {
            bool first_ptz = rcs->cam[j].kind == KN_ROBOTCAM_PTZ && !ptz_seen;
            ptz_seen |= first_ptz;
            if (add_camera(g, sc, i, &rcs->cam[j], first_ptz) < 0)
                return -1;
        }
    }
    const char *names[KN_COBS_MAX_ROBOTS];
    for (size_t i = 0; i < o->nrobots; i++)
        names[i] = o->robots[i].name;
    g->ptz = kn_ptzh_new(names, o->nrobots);
    if (!g->ptz) {
        fprintf(stderr, "kenaf-cameras: out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < o->nrobots; i++) {
        struct kn_rcam_mount m;
        if (kn_rcam_mount_of(&g->scenes[i].geom, KN_RCAM_PTZ, &m) == 0)
            kn_ptzh_set_mount(g->ptz, i, &m); /* the robot file's limits and speeds */
    }
    struct kn_stream_config cfg = {
        .http_handler = serve,
        .http_handler_arg = g,
        .address = o->listen,
        .rtsp_port = o->rtsp_port,
        .http_port = o->http_port,
        .cameras = sc,
        .ncameras = g->ncams,
    };
    char err[1024];
    g->stream = kn_stream_new(&cfg, err, sizeof err);
    if (!g->stream) {
        fprintf(stderr, "kenaf-cameras: %s\n", err);
        return -1;
    }
    for (size_t k = 0; k < g->ncams; k++)
        g->cams[k].stream_cam = kn_stream_find(g->stream, sc[k].robot, sc[k].name);
    return 0;
}

static void print_stats(struct run *g)
{
    char *j = kn_stream_stats_json(g->stream);
    if (j)
        printf("%s\n", j);
    free(j);
    j = kn_ptzh_stats_json(g->ptz);
    if (j)
        printf("%s\n", j);
    free(j);
    fflush(stdout);
    fprintf(stderr,
            "kenaf-cameras: %llu frames rendered, %.2f ms on average, %.2f ms at most; "
            "%llu late; %llu not rendered, unwatched\n",
            (unsigned long long)g->frames,
            g->frames ? (double)g->render_ns_sum / (double)g->frames / 1e6 : 0.0,
            (double)g->render_ns_max / 1e6, (unsigned long long)g->late,
            (unsigned long long)g->unwatched);
}

int kn_cams_run(const struct kn_cams_opts *o, const sigset_t *stop_signals)
{
    static struct run g;
    static struct kn_stream_camera sc[KN_COBS_MAX_ROBOTS * KN_ROBOTCAMS_MAX];
    g.o = o;
    pthread_mutex_init(&g.lock, NULL);
    pthread_mutex_init(&g.stats_mu, NULL);
    pthread_cond_init(&g.cond, NULL);
    int rc = 1;
    pthread_t rt, st;
    bool rt_on = false, st_on = false;
    if (open_observer(&g) < 0 || open_streams(&g, sc) < 0)
        goto out;
    /* the renderer first: no EGL device is the commonest failure */
    if (pthread_create(&rt, NULL, render_main, &g) != 0) {
        fprintf(stderr, "kenaf-cameras: cannot start the render thread\n");
        goto out;
    }
    rt_on = true;
    pthread_mutex_lock(&g.lock);
    while (!g.opened)
        pthread_cond_wait(&g.cond, &g.lock);
    pthread_mutex_unlock(&g.lock);
    if (g.opened < 0) {
        fprintf(stderr, "kenaf-cameras: %s\n", g.err);
        goto out;
    }
    if (pthread_create(&st, NULL, stream_main, g.stream) != 0) {
        fprintf(stderr, "kenaf-cameras: cannot start a thread\n");
        goto out;
    }
    st_on = true;
    print_urls(&g);
    if (o->ready)
        o->ready();
    int sig = 0;
    sigwait(stop_signals, &sig);
    fprintf(stderr, "kenaf-cameras: %s: stopping\n", strsignal(sig));
    rc = 0;
out:
    g.stop = 1;
    if (rt_on)
        pthread_join(rt, NULL);
    if (st_on) {
        kn_stream_quit(g.stream);
        pthread_join(st, NULL);
    }
    kn_cobs_close(g.obs);
    if (g.stream && o->stats && rc == 0)
        print_stats(&g);
    if (g.stream)
        kn_stream_free(g.stream);
    for (size_t i = 0; i < o->nrobots; i++)
        kn_rscene_free(&g.scenes[i]);
    kn_ptzh_free(g.ptz);
    for (size_t k = 0; k < g.ncams; k++)
        free(g.cams[k].rgba);
    return rc;
}
