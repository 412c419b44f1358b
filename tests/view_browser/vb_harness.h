/* What kenaf-view's browser test and bench share: whether the tools are
 * there (Chromium, node, the pinned playwright-core), kenaf-simd with its
 * engine, kenaf-view in front of it, and the headless browser
 * (browser.js), which this side commands one JSON line at a time and
 * which answers with what it saw. Built on tests/common and the daemon
 * harness (tests/daemon/harness.h). */
#ifndef KN_VB_HARNESS_H
#define KN_VB_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "harness.h"

#define VB_SKIP 77 /* meson's "skipped" exit status */
#define VB_MAX_ROBOTS 32

/* The `main` of the browser test and bench: runs the cases (h_run_cases)
 * when Chromium, node and playwright-core (tests/view_browser/node-deps:
 * installed once into a cache, offline afterwards) are there and no
 * KN_WRAP is set, else says why not and returns VB_SKIP. */
int vb_main(const char *suite, const struct h_case *cases, size_t ncases);

/* kenaf-simd with `count` robots named kenaf0.. (kenaf when one) on the
 * built-in engine: with count 1 the daemon spawns the engine on `terrain`;
 * with more, one engine (flat ground, started here) holds them all, placed
 * 0.8 m apart in rows of five, more than ten 2.5 m apart in rows of eight.
 * Waits until every robot's simulator is up and fresh. */
void vb_daemon_start(struct h_daemon *d, const char *terrain, int count);
/* kenaf-simd with `count` robots named kenaf0.. on stand-in simulators
 * (one each: the stand-in holds one robot; kinematic, no world terrain,
 * so cheap enough for a fleet). Waits until every robot's simulator is up. */
void vb_daemon_start_standin(struct h_daemon *d, int count);
/* The same single-robot daemon again on the KRP/1 port it had (a restart). */
void vb_daemon_restart(struct h_daemon *d, const char *terrain, int port);

/* The KRP/1 UDP port of the daemon's robot number `robot` (from its stats:
 * struct h_daemon keeps only the first few). */
int vb_robot_port(struct h_daemon *d, int robot);
/* kenaf-view on 127.0.0.1:0 watching all the daemon's robots; its page's
 * URL ("http://127.0.0.1:N/") goes to url. */
void vb_view_start(struct h_proc *p, struct h_daemon *d, char *url, size_t len);
/* The same with more arguments (NULL-terminated, up to 4). */
void vb_view_start_with(struct h_proc *p, struct h_daemon *d, const char *const extra[], char *url,
                        size_t len);

struct vb_browser {
    struct h_proc proc;
    int fd; /* the command connection */
    char buf[1 << 16];
    size_t len;
};
/* Starts browser.js (Chromium with a fresh profile, a w x h window);
 * screenshots go to shot_dir. */
void vb_browser_start(struct vb_browser *b, const char *shot_dir, int w, int h);
/* Sends one command (printf-style JSON) and returns its answer, which must
 * say ok (the test fails otherwise, quoting it); the caller deletes it. */
cJSON *vb_cmd(struct vb_browser *b, int timeout_ms, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same, only the answer's "ok". */
bool vb_try(struct vb_browser *b, int timeout_ms, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A number from an answer by a dotted path ("body.cx", "value.0"); fails
 * the test when it is missing or not a number. */
double vb_num(const cJSON *answer, const char *path);
/* Ends the browser (Chromium included) and waits for it. */
void vb_browser_quit(struct vb_browser *b);

/* Where a test's screenshots go: $KN_VB_SHOTS/name, created and printed
 * (meson-logs/view-browser/NAME in the build tree). Static buffer. */
const char *vb_shot_dir(const char *name);

#endif
