/* kenaf-view: the operator's live view. Serves the 3D page (tools/view/
 * web/) over HTTP and streams the robots' state to it over WebSocket,
 * watching each robot as a KRP/1 client that only observes. This file is
 * the command line; view.h has the rest. docs/view.md is the manual. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostport.h"
#include "krp.h"
#include "view.h"

#ifndef KN_VERSION
#define KN_VERSION "0"
#endif
#ifndef KN_VIEW_BUILD_ROOT
#define KN_VIEW_BUILD_ROOT "/nonexistent"
#endif
#ifndef KN_VIEW_BUILD_WEB_DIR
#define KN_VIEW_BUILD_WEB_DIR "tools/view/web"
#endif
#ifndef KN_VIEW_INSTALL_WEB_DIR
#define KN_VIEW_INSTALL_WEB_DIR "/usr/local/share/kenaf-sim/view"
#endif
#define KN_VIEW_THREE_DIR "/usr/share/javascript/three"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kenaf-view [--listen HOST:PORT] [--robot [NAME=]HOST:PORT]...\n"
            "                  [--web-dir DIR] [--three-dir DIR] [--max-clients N] [--stats]\n"
            "                  [--cameras URL]\n"
            "\n"
            "Serves the live 3D view of the robots on http://HOST:PORT/ (default %s)\n"
            "and streams their state to every browser that opens it. It only observes:\n"
            "it never commands a robot.\n"
            "\n"
            "  --listen HOST:PORT   where browsers connect; keep the loopback default and\n"
            "                       use an SSH tunnel to reach it from elsewhere\n"
            "                       (kenaf-view(1)); port 0 takes any free port\n"
            "  --robot [NAME=]HOST:PORT  a robot to watch over KRP/1 (repeatable, up to %d;\n"
            "                       default $KENAF_ROBOT, else 127.0.0.1:%d); NAME\n"
            "                       labels it, else the robot's own name is used\n"
            "  --web-dir DIR        the page's files (default: the build tree's\n"
            "                       tools/view/web for a build-tree binary, else\n"
            "                       %s)\n"
            "  --three-dir DIR      three.js (default %s, Debian's libjs-three)\n"
            "  --max-clients N      WebSocket clients at once, 1..1000 (default %d)\n"
            "  --stats              print the counters (the /api/stats JSON) on exit\n"
            "  --cameras URL        kenaf-cameras' HTTP server (http://HOST:8081): the\n"
            "                       page's PTZ buttons then drive its front cameras\n"
            "                       (robot N is camera=N+1) and show where they point\n"
            "  -h, --help           this text\n"
            "  -V, --version        the version\n",
            KN_VIEW_DEFAULT_LISTEN, KN_VIEW_MAX_ROBOTS, KN_KRP_DEFAULT_PORT,
            KN_VIEW_INSTALL_WEB_DIR, KN_VIEW_THREE_DIR, KN_VIEW_MAX_CLIENTS);
}

/* "[NAME=]HOST:PORT": a host never holds '=', so the first '=' ends the name. */
static int add_robot(struct kn_view_opts *o, const char *spec, const char *what)
{
    if (o->nrobots >= KN_VIEW_MAX_ROBOTS) {
        fprintf(stderr, "kenaf-view: at most %d robots\n", KN_VIEW_MAX_ROBOTS);
        return -1;
    }
    struct kn_view_robot_opt *r = &o->robots[o->nrobots];
    memset(r, 0, sizeof *r);
    char err[300];
    if (kn_hostport_parse_named(spec, KN_KRP_DEFAULT_PORT, NULL, r->name, sizeof r->name, r->host,
                                sizeof r->host, &r->port, err, sizeof err) < 0) {
        fprintf(stderr, "kenaf-view: %s %s\n", what, err);
        return -1;
    }
    o->nrobots++;
    return 0;
}

/* The page's files: the build tree's copy for a binary in the build tree,
 * else the installed ones. */
static void default_web_dir(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    size_t rl = strlen(KN_VIEW_BUILD_ROOT);
    if (n > 0) {
        self[n] = '\0';
        if (strncmp(self, KN_VIEW_BUILD_ROOT, rl) == 0 && self[rl] == '/') {
            snprintf(out, len, "%s", KN_VIEW_BUILD_WEB_DIR);
            return;
        }
    }
    snprintf(out, len, "%s", KN_VIEW_INSTALL_WEB_DIR);
}

/* --cameras: an http:// or https:// URL without a query, its trailing
 * '/' dropped; the page puts "/axis-cgi/com/ptz.cgi?..." after it. Only
 * the characters of a URL, so the page never reads anything else. */
static int cameras_url(struct kn_view_opts *o, const char *url)
{
    size_t n = strlen(url);
    bool scheme = strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0;
    bool chars = n > 0 && strspn(url, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789-._~:/[]@%!$'()*+,;=") == n;
    while (n > 0 && url[n - 1] == '/')
        n--;
    if (!scheme || !chars || n >= sizeof o->cameras || n <= (size_t)(url[4] == 's' ? 8 : 7)) {
        fprintf(stderr, "kenaf-view: --cameras \"%s\": expected http://HOST:PORT\n", url);
        return -1;
    }
    memcpy(o->cameras, url, n);
    o->cameras[n] = '\0';
    return 0;
}

static int parse_args(int argc, char **argv, struct kn_view_opts *o)
{
    enum { O_LISTEN = 256, O_ROBOT, O_WEB, O_THREE, O_MAXC, O_STATS, O_CAMERAS };
    static const struct option longopts[] = {
        { "listen", required_argument, NULL, O_LISTEN },
        { "robot", required_argument, NULL, O_ROBOT },
        { "web-dir", required_argument, NULL, O_WEB },
        { "three-dir", required_argument, NULL, O_THREE },
        { "max-clients", required_argument, NULL, O_MAXC },
        { "stats", no_argument, NULL, O_STATS },
        { "cameras", required_argument, NULL, O_CAMERAS },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *listen = KN_VIEW_DEFAULT_LISTEN;
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
        switch (c) {
        case O_LISTEN: listen = optarg; break;
        case O_ROBOT:
            if (add_robot(o, optarg, "--robot") < 0)
                return 2;
            break;
        case O_WEB: snprintf(o->web_dir, sizeof o->web_dir, "%s", optarg); break;
        case O_THREE: snprintf(o->three_dir, sizeof o->three_dir, "%s", optarg); break;
        case O_MAXC: {
            long n = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end || n < 1 || n > 1000) {
                fprintf(stderr, "kenaf-view: --max-clients \"%s\": expected 1..1000\n", optarg);
                return 2;
            }
            o->max_clients = (unsigned)n;
            break;
        }
        case O_STATS: o->stats = true; break;
        case O_CAMERAS:
            if (cameras_url(o, optarg) < 0)
                return 2;
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("kenaf-view %s\n", KN_VERSION); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "kenaf-view: unexpected argument \"%s\"\n", argv[optind]);
        return 2;
    }
    char err[300];
    if (kn_hostport_parse_flags(listen, KN_VIEW_DEFAULT_PORT, KN_HOSTPORT_PORT_ZERO, o->listen_host,
                                sizeof o->listen_host, &o->listen_port, err, sizeof err) < 0) {
        fprintf(stderr, "kenaf-view: --listen %s\n", err);
        return 2;
    }
    const char *env = getenv("KENAF_ROBOT");
    if (o->nrobots == 0 &&
        add_robot(o, env && *env ? env : "127.0.0.1", env && *env ? "KENAF_ROBOT" : "robot") < 0)
        return 2;
    return -1;
}

int main(int argc, char **argv)
{
    static struct kn_view_opts o;
    o.max_clients = KN_VIEW_MAX_CLIENTS;
    snprintf(o.three_dir, sizeof o.three_dir, "%s", KN_VIEW_THREE_DIR);
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (!o.web_dir[0])
        default_web_dir(o.web_dir, sizeof o.web_dir);
    char index[PATH_MAX + 16];
    struct stat st;
    snprintf(index, sizeof index, "%s/index.html", o.web_dir);
    if (stat(index, &st) != 0)
        fprintf(stderr, "kenaf-view: warning: no page in %s (--web-dir); serving the API only\n",
                o.web_dir);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return kn_view_run(&o, &stop_flag);
}
