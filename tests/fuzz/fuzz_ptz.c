/* libFuzzer target for kenaf-cameras' PTZ parser and state (cameras/
 * process/ptz.c): any query string is taken or refused with one printable
 * line; what is taken, applied to a state that has been moving for a
 * while, leaves the head within its limits with finite values, and the
 * answer is printable text that fits its buffer. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* not the front camera's: a narrower head, so that no bound is the
 * Axis scale's by chance */
static const struct kn_ptz_limits lim = { .pan_max_deg = 95,
                                          .tilt_min_deg = -30,
                                          .tilt_max_deg = 80,
                                          .zoom_max = 4,
                                          .pan_speed_dps = 200,
                                          .tilt_speed_dps = 15,
                                          .zoom_speed = 0.5 };

static void printable(const char *s, int newlines)
{
    for (; *s; s++)
        if (((unsigned char)*s < 0x20 && !(newlines && *s == '\n')) || (unsigned char)*s >= 0x7f)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* not terminated: the parser must keep to the length */
    char *q = malloc(size ? size : 1);
    if (!q)
        return 0;
    if (size)
        memcpy(q, data, size);
    struct kn_ptz_req req;
    char err[256];
    err[0] = '\0';
    if (kn_ptz_parse(q, size, &req, err, sizeof err) != 0) {
        free(q);
        if (err[0] == '\0' || strchr(err, '\n'))
            abort(); /* a refusal says why, on one line */
        printable(err, 0);
        return 0;
    }
    free(q);
    if (req.set == 0 || ((req.set & KN_PTZ_CAMERA) && req.camera < 1))
        abort();
    struct kn_ptz_state s;
    kn_ptz_home(&s, 0);
    struct kn_ptz_req move = {
        .set = KN_PTZ_CPT | KN_PTZ_CZ, .cpan = 37, .ctilt = -80, .czoom = 55
    };
    char out[1024];
    kn_ptz_apply(&s, &lim, &move, 0, out, sizeof out);
    int n = kn_ptz_apply(&s, &lim, &req, 1500000000ull, out, sizeof out);
    kn_ptz_advance(&s, &lim, 4000000000ull);
    if (n < 0 || strlen(out) >= sizeof out)
        abort();
    printable(out, 1);
    if (!isfinite(s.pan_deg) || !isfinite(s.tilt_deg) || !isfinite(s.zoom) ||
        fabs(s.pan_deg) > lim.pan_max_deg || s.tilt_deg < lim.tilt_min_deg ||
        s.tilt_deg > lim.tilt_max_deg || s.zoom < 1 || s.zoom > lim.zoom_max ||
        fabs(s.pan_speed) > KN_PTZ_SPEED_MAX || fabs(s.tilt_speed) > KN_PTZ_SPEED_MAX ||
        fabs(s.zoom_speed) > KN_PTZ_SPEED_MAX)
        abort();
    int z = kn_ptz_axis_zoom(&s, &lim);
    if (z < 1 || z > KN_PTZ_AXIS_ZOOM_MAX)
        abort();
    return 0;
}
