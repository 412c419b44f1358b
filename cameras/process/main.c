/* kenaf-cameras: the simulated Kenaf's two cameras (the front PTZ camera
 * and the bird's-eye camera on the mast), rendered on the server and
 * served the way IP cameras serve them (RTSP H.264 and RTP/JPEG, MJPEG and
 * snapshots over HTTP), watching each robot as a KRP/1 observer. This file
 * is the command line and the JSON config; cameras.h has the rest.
 * docs/cameras.md and kenaf-cameras(1) are the manual. */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <systemd/sd-daemon.h>

#include "cameras.h"
#include "hostport.h"
#include "krp.h"

#ifndef KN_VERSION
#define KN_VERSION "0"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kenaf-cameras [--robot [NAME=]HOST:PORT]... [--listen HOST]\n"
            "                     [--rtsp-port N] [--http-port N] [--config FILE]\n"
            "                     [--front-size WxH] [--front-fps N] [--front-bitrate KBPS]\n"
            "                     [--birdseye-size WxH] [--birdseye-fps N]\n"
            "                     [--birdseye-bitrate KBPS] [--overlay] [--stats]\n"
            "\n"
            "Renders each robot's front (PTZ) and bird's-eye cameras and serves them as\n"
            "rtsp://HOST:RTSP/NAME/CAMERA (H.264), .../CAMERA.mjpeg (RTP/JPEG),\n"
            "http://HOST:HTTP/NAME/CAMERA.mjpg (MJPEG) and .../CAMERA.jpg (snapshot);\n"
            "prints every URL on stdout at start. It only observes: it never commands\n"
            "a robot. The front camera's pan, tilt and zoom follow Axis VAPIX requests\n"
            "at http://HOST:HTTP/axis-cgi/com/ptz.cgi?camera=N (N counts the robots from 1)\n"
            "and http://HOST:HTTP/NAME/axis-cgi/com/ptz.cgi.\n"
            "\n"
            "  --robot [NAME=]HOST:PORT  a robot to watch over KRP/1 (repeatable, up to %d;\n"
            "                       default $KENAF_ROBOT, else 127.0.0.1:%d); NAME is its\n"
            "                       path in the URLs (default kenaf, then kenaf2, ...)\n"
            "  --listen HOST        the servers' address (default %s)\n"
            "  --rtsp-port N        the RTSP port (default 8554; 0 takes a free port)\n"
            "  --http-port N        the HTTP port (default 8081; 0 takes a free port)\n"
            "  --config FILE        settings as JSON: the cameras, and the robots, address\n"
            "                       and ports (kenaf-cameras(1)); the options override it\n"
            "  --front-size WxH     the front camera's picture (default 640x480)\n"
            "  --front-fps N        its frames a second (default 30)\n"
            "  --front-bitrate KBPS its H.264 bit rate (default 2000)\n"
            "  --birdseye-size WxH  the bird's-eye camera's picture (default 640x480)\n"
            "  --birdseye-fps N     its frames a second (default 15)\n"
            "  --birdseye-bitrate KBPS  its H.264 bit rate (default 2000)\n"
            "  --overlay            draw the robot time into every frame, as text and as a\n"
            "                       stamp a program reads (frame counter, robot ms)\n"
            "  --stats              print the streams' counters (JSON) on stdout at exit\n"
            "  -h, --help           this text\n"
            "  -V, --version        the version\n",
            KN_COBS_MAX_ROBOTS, KN_KRP_DEFAULT_PORT, KN_CAMS_DEFAULT_LISTEN);
}

/* "[NAME=]HOST:PORT": a host never holds '=', so the first '=' ends the name. */
static int add_robot(struct kn_cams_opts *o, const char *spec, const char *what)
{
    if (o->nrobots >= KN_COBS_MAX_ROBOTS) {
        fprintf(stderr, "kenaf-cameras: at most %d robots\n", KN_COBS_MAX_ROBOTS);
        return -1;
    }
    struct kn_cobs_robot_opt *r = &o->robots[o->nrobots];
    memset(r, 0, sizeof *r);
    /* the name is a path segment of the stream URLs */
    static const char path_safe[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
    char err[300];
    if (kn_hostport_parse_named(spec, KN_KRP_DEFAULT_PORT, path_safe, r->name, sizeof r->name,
                                r->host, sizeof r->host, &r->port, err, sizeof err) < 0) {
        fprintf(stderr, "kenaf-cameras: %s %s\n", what, err);
        return -1;
    }
    if (r->name[0] == '\0' && o->nrobots == 0)
        snprintf(r->name, sizeof r->name, "kenaf");
    else if (r->name[0] == '\0')
        snprintf(r->name, sizeof r->name, "kenaf%zu", o->nrobots + 1);
    for (size_t i = 0; i < o->nrobots; i++)
        if (strcmp(o->robots[i].name, r->name) == 0) {
            fprintf(stderr, "kenaf-cameras: %s: two robots named %s\n", what, r->name);
            return -1;
        }
    o->nrobots++;
    return 0;
}

static int parse_int(const char *what, const char *s, long lo, long hi, int *out)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (*s == '\0' || *end || n < lo || n > hi) {
        fprintf(stderr, "kenaf-cameras: %s \"%s\": expected %ld..%ld\n", what, s, lo, hi);
        return -1;
    }
    *out = (int)n;
    return 0;
}

static int parse_size(const char *what, const char *s, struct kn_stream_camera *c)
{
    unsigned w, h;
    char tail;
    if (sscanf(s, "%ux%u%c", &w, &h, &tail) != 2 || w < 16 || h < 16 || w > 4096 || h > 4096 ||
        w % 8 || h % 8) {
        fprintf(stderr, "kenaf-cameras: %s \"%s\": expected WxH, 16..4096, multiples of 8\n", what,
                s);
        return -1;
    }
    c->width = (int)w;
    c->height = (int)h;
    return 0;
}

/* "overlay": true or false; *out 1 or 0. */
static int config_bool(const cJSON *it, const char *where, int *out)
{
    if (!cJSON_IsBool(it)) {
        fprintf(stderr, "kenaf-cameras: --config: %s: expected true or false\n", where);
        return -1;
    }
    *out = cJSON_IsTrue(it) ? 1 : 0;
    return 0;
}

/* One camera's object of the config: {"width","height","fps",
 * "bitrate_kbps","jpeg_quality","overlay"}, each optional; overlay in
 * *overlay (-1 when not given). */
static int config_camera(const cJSON *obj, const char *name, struct kn_stream_camera *c,
                         int *overlay)
{
    static const struct {
        const char *key;
        long lo, hi;
        size_t off;
    } keys[] = {
        { "width", 16, 4096, offsetof(struct kn_stream_camera, width) },
        { "height", 16, 4096, offsetof(struct kn_stream_camera, height) },
        { "fps", 1, 120, offsetof(struct kn_stream_camera, fps) },
        { "bitrate_kbps", 50, 100000, offsetof(struct kn_stream_camera, bitrate_kbps) },
        { "jpeg_quality", 1, 100, offsetof(struct kn_stream_camera, jpeg_quality) },
    };
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        if (strcmp(it->string, "overlay") == 0) {
            char where[64];
            snprintf(where, sizeof where, "%s.overlay", name);
            if (config_bool(it, where, overlay) < 0)
                return -1;
            continue;
        }
        size_t k = 0;
        while (k < sizeof keys / sizeof keys[0] && strcmp(keys[k].key, it->string) != 0)
            k++;
        if (k == sizeof keys / sizeof keys[0]) {
            fprintf(stderr, "kenaf-cameras: --config: %s: unknown key \"%s\"\n", name, it->string);
            return -1;
        }
        double v = cJSON_IsNumber(it) ? it->valuedouble : -1;
        if (v != (double)(long)v || v < keys[k].lo || v > keys[k].hi ||
            (k < 2 && (long)v % 8 != 0)) {
            fprintf(stderr, "kenaf-cameras: --config: %s.%s: expected an integer %ld..%ld%s\n",
                    name, keys[k].key, keys[k].lo, keys[k].hi, k < 2 ? ", a multiple of 8" : "");
            return -1;
        }
        *(int *)((char *)c + keys[k].off) = (int)v;
    }
    return 0;
}

/* What the config may say about the program rather than a camera: the
 * robots and the servers' address and ports, so that one file is all a
 * service instance needs (config/kenaf-cameras@.service). The command
 * line wins: --robot replaces the config's robots, --listen, --rtsp-port
 * and --http-port its values. Returns 1 for such a key, 0 for another,
 * -1 with the reason said. */
static int config_service(const cJSON *it, const char *path, struct kn_cams_opts *cfg)
{
    if (strcmp(it->string, "robots") == 0) {
        const cJSON *r;
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) == 0) {
            fprintf(stderr,
                    "kenaf-cameras: --config %s: robots: expected a list of "
                    "\"[NAME=]HOST:PORT\" strings, at least one\n",
                    path);
            return -1;
        }
        cJSON_ArrayForEach(r, it)
        {
            char what[300];
            snprintf(what, sizeof what, "--config %s: robots", path);
            if (!cJSON_IsString(r)) {
                fprintf(stderr, "kenaf-cameras: %s: expected \"[NAME=]HOST:PORT\" strings\n", what);
                return -1;
            }
            if (add_robot(cfg, r->valuestring, what) < 0)
                return -1;
        }
        return 1;
    }
    if (strcmp(it->string, "listen") == 0) {
        if (!cJSON_IsString(it) || !it->valuestring[0] ||
            strlen(it->valuestring) >= sizeof cfg->listen) {
            fprintf(stderr, "kenaf-cameras: --config %s: listen: expected a host name or address\n",
                    path);
            return -1;
        }
        snprintf(cfg->listen, sizeof cfg->listen, "%s", it->valuestring);
        return 1;
    }
    int *port = strcmp(it->string, "rtsp_port") == 0   ? &cfg->rtsp_port
                : strcmp(it->string, "http_port") == 0 ? &cfg->http_port
                                                       : NULL;
    if (!port)
        return 0;
    double v = cJSON_IsNumber(it) ? it->valuedouble : -1;
    if (v != (double)(long)v || v < 0 || v > 65535) {
        fprintf(stderr, "kenaf-cameras: --config %s: %s: expected an integer 0..65535\n", path,
                it->string);
        return -1;
    }
    *port = (int)v;
    return 1;
}

static int read_config(const char *path, struct kn_cams_opts *o, struct kn_cams_opts *cfg)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "kenaf-cameras: --config %s: cannot open\n", path);
        return -1;
    }
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *j = cJSON_Parse(text);
    if (!cJSON_IsObject(j)) {
        fprintf(stderr, "kenaf-cameras: --config %s: not a JSON object\n", path);
        cJSON_Delete(j);
        return -1;
    }
    int rc = 0;
    /* "overlay" at the top for both cameras; a camera's own wins */
    int all = -1, own[KN_CAMS_NCAMS] = { -1, -1 };
    const cJSON *it;
    cJSON_ArrayForEach(it, j)
    {
        int svc = config_service(it, path, cfg);
        if (svc < 0) {
            rc = -1;
            break;
        }
        if (svc > 0)
            continue;
        if (strcmp(it->string, "overlay") == 0) {
            if (config_bool(it, "overlay", &all) < 0) {
                rc = -1;
                break;
            }
            continue;
        }
        int k = 0;
        while (k < KN_CAMS_NCAMS && strcmp(kn_cams_names[k], it->string) != 0)
            k++;
        if (k == KN_CAMS_NCAMS || !cJSON_IsObject(it)) {
            fprintf(stderr,
                    "kenaf-cameras: --config %s: \"%s\": expected front or birdseye, "
                    "an object, or robots, listen, rtsp_port, http_port, overlay\n",
                    path, it->string);
            rc = -1;
            break;
        }
        if (config_camera(it, it->string, &o->cam[k], &own[k]) < 0) {
            rc = -1;
            break;
        }
    }
    for (int k = 0; k < KN_CAMS_NCAMS; k++)
        o->overlay[k] = own[k] >= 0 ? own[k] : all > 0;
    cJSON_Delete(j);
    return rc;
}

static int parse_args(int argc, char **argv, struct kn_cams_opts *o)
{
    enum { O_ROBOT = 256, O_LISTEN, O_RTSP, O_HTTP, O_CONFIG, O_STATS, O_OVERLAY, O_CAM };
    /* per camera k: O_CAM + 3 k + (0 size, 1 fps, 2 bitrate) */
    static const struct option longopts[] = {
        { "robot", required_argument, NULL, O_ROBOT },
        { "listen", required_argument, NULL, O_LISTEN },
        { "rtsp-port", required_argument, NULL, O_RTSP },
        { "http-port", required_argument, NULL, O_HTTP },
        { "config", required_argument, NULL, O_CONFIG },
        { "front-size", required_argument, NULL, O_CAM + 0 },
        { "front-fps", required_argument, NULL, O_CAM + 1 },
        { "front-bitrate", required_argument, NULL, O_CAM + 2 },
        { "birdseye-size", required_argument, NULL, O_CAM + 3 },
        { "birdseye-fps", required_argument, NULL, O_CAM + 4 },
        { "birdseye-bitrate", required_argument, NULL, O_CAM + 5 },
        { "stats", no_argument, NULL, O_STATS },
        { "overlay", no_argument, NULL, O_OVERLAY },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    /* the camera options apply after the config, whatever their order */
    struct kn_stream_camera cli[KN_CAMS_NCAMS];
    memset(cli, 0, sizeof cli);
    const char *config = NULL;
    bool overlay = false;
    int c;
    while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
        switch (c) {
        case O_ROBOT:
            if (add_robot(o, optarg, "--robot") < 0)
                return 2;
            break;
        case O_LISTEN: snprintf(o->listen, sizeof o->listen, "%s", optarg); break;
        case O_RTSP:
            if (parse_int("--rtsp-port", optarg, 0, 65535, &o->rtsp_port) < 0)
                return 2;
            break;
        case O_HTTP:
            if (parse_int("--http-port", optarg, 0, 65535, &o->http_port) < 0)
                return 2;
            break;
        case O_CONFIG: config = optarg; break;
        case O_STATS: o->stats = true; break;
        case O_OVERLAY: overlay = true; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("kenaf-cameras %s\n", KN_VERSION); return 0;
        default:
            if (c >= O_CAM && c < O_CAM + 3 * KN_CAMS_NCAMS) {
                struct kn_stream_camera *k = &cli[(c - O_CAM) / 3];
                const char *name = longopts[5 + (c - O_CAM)].name;
                int rc = (c - O_CAM) % 3 == 0 ? parse_size(name, optarg, k)
                         : (c - O_CAM) % 3 == 1
                             ? parse_int(name, optarg, 1, 120, &k->fps)
                             : parse_int(name, optarg, 50, 100000, &k->bitrate_kbps);
                if (rc < 0)
                    return 2;
                break;
            }
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "kenaf-cameras: unexpected argument \"%s\"\n", argv[optind]);
        return 2;
    }
    /* the config's robots, address and ports where the command line has none */
    static struct kn_cams_opts cfg;
    cfg.rtsp_port = cfg.http_port = -1;
    if (config && read_config(config, o, &cfg) < 0)
        return 2;
    if (o->nrobots == 0) {
        memcpy(o->robots, cfg.robots, sizeof o->robots);
        o->nrobots = cfg.nrobots;
    }
    if (!o->listen[0])
        snprintf(o->listen, sizeof o->listen, "%s",
                 cfg.listen[0] ? cfg.listen : KN_CAMS_DEFAULT_LISTEN);
    if (o->rtsp_port < 0)
        o->rtsp_port = cfg.rtsp_port;
    if (o->http_port < 0)
        o->http_port = cfg.http_port;
    for (int k = 0; k < KN_CAMS_NCAMS; k++) {
        o->overlay[k] |= overlay;
        if (cli[k].width)
            o->cam[k].width = cli[k].width, o->cam[k].height = cli[k].height;
        if (cli[k].fps)
            o->cam[k].fps = cli[k].fps;
        if (cli[k].bitrate_kbps)
            o->cam[k].bitrate_kbps = cli[k].bitrate_kbps;
    }
    const char *env = getenv("KENAF_ROBOT");
    if (o->nrobots == 0 &&
        add_robot(o, env && *env ? env : "127.0.0.1", env && *env ? "KENAF_ROBOT" : "robot") < 0)
        return 2;
    return -1;
}

/* systemd's Type=notify (config/kenaf-cameras@.service): ready once both
 * servers listen and a client may connect; a no-op without NOTIFY_SOCKET. */
static void notify_ready(void)
{
    sd_notify(0, "READY=1\nSTATUS=serving the cameras");
}

int main(int argc, char **argv)
{
    static struct kn_cams_opts o;
    o.rtsp_port = -1; /* the stream library's defaults, 8554 and 8081 */
    o.http_port = -1;
    o.ready = notify_ready;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    /* blocked in every thread: the main thread takes them with sigwait;
     * not ignored, even when the shell that started it in the background
     * ignores SIGINT (an ignored signal never becomes pending) */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    return kn_cams_run(&o, &stop);
}
