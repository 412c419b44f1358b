/* kenaf-cameras' PTZ control over HTTP: one PTZ state per robot's front
 * camera (ptz.h), its lock, the Axis VAPIX ptz.cgi paths served through
 * the stream library's handler hook, the counters, and what the render
 * thread reads for the front shot. docs/cameras.md#ptz-control. */
#ifndef KN_PTZH_H
#define KN_PTZH_H

#include <stddef.h>
#include <stdint.h>

#include "ptz.h"
#include "stream.h"

#define KN_PTZH_PATH "/axis-cgi/com/ptz.cgi"

struct kn_ptzh;

/* One PTZ camera per robot, camera=1 the first of `names` (the URLs'
 * robot names), all at home; the limits and speeds the Kenaf's
 * (kn_rcam_mount_kenaf) until kn_ptzh_set_mount. NULL when out of memory. */
struct kn_ptzh *kn_ptzh_new(const char *const names[], size_t n);
void kn_ptzh_free(struct kn_ptzh *h);

/* The stream library's handler (kn_stream_http_handler; arg is the
 * kn_ptzh): KN_PTZH_PATH?camera=N and /ROBOT KN_PTZH_PATH. */
int kn_ptzh_handle(void *arg, const char *method, const char *path, const char *query,
                   struct kn_stream_http_reply *r);

/* Robot i's camera now, for its front shot: pan (+ left), tilt (+ up) in
 * degrees and the zoom factor. Any thread. */
void kn_ptzh_get(struct kn_ptzh *h, size_t i, double *pan_deg, double *tilt_deg, double *zoom);

/* Robot i's PTZ camera as its robot file declares it (kn_rcam_mount_of,
 * with each new world): its limits and speeds from now on, the head
 * brought inside them. Any thread. */
struct kn_rcam_mount;
void kn_ptzh_set_mount(struct kn_ptzh *h, size_t i, const struct kn_rcam_mount *m);

/* The counters as JSON (malloc'd): {"ptz":{"requests","moves","queries",
 * "clamped","bad","unknown_camera"}}. Any thread. */
char *kn_ptzh_stats_json(struct kn_ptzh *h);

#endif
