/* The front camera's pan, tilt and zoom as an operator's console drives
 * a PTZ camera: the query string of Axis VAPIX ptz.cgi (the subset of
 * docs/cameras.md#ptz-control) parsed, applied to one camera's state,
 * continuous moves integrated over the time the caller gives, and the
 * answer's text. Sans-I/O: no sockets, no clock, no allocation; the
 * caller (ptz_http.c) owns the lock and the time. */
#ifndef KN_PTZ_H
#define KN_PTZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Axis's scales: zoom 1 (widest) .. 9999 (closest), speeds -100..100. */
#define KN_PTZ_AXIS_ZOOM_MAX 9999
#define KN_PTZ_SPEED_MAX 100

/* One camera's mount, from the robot file (kn_rcam_mount_of): degrees, the zoom factor
 * (1 .. zoom_max divides the field of view), the fastest moves (degrees
 * a second, zoom factor a second) that speed 100 stands for. */
struct kn_ptz_limits {
    double pan_max_deg, tilt_min_deg, tilt_max_deg, zoom_max;
    double pan_speed_dps, tilt_speed_dps, zoom_speed;
};

/* Where the head points, in the renderer's sense (pan + turns left, tilt
 * + looks up, zoom the factor), the continuous move under way (Axis
 * speeds, Axis senses) and the time it was last brought up to. */
struct kn_ptz_state {
    double pan_deg, tilt_deg, zoom;
    double pan_speed, tilt_speed, zoom_speed;
    uint64_t t_ns;
};

enum kn_ptz_query { KN_PTZ_Q_NONE, KN_PTZ_Q_POSITION, KN_PTZ_Q_LIMITS };

/* Which parameters a request carries (kn_ptz_req.set). */
enum {
    KN_PTZ_PAN = 1u << 0,
    KN_PTZ_TILT = 1u << 1,
    KN_PTZ_ZOOM = 1u << 2,
    KN_PTZ_RPAN = 1u << 3,
    KN_PTZ_RTILT = 1u << 4,
    KN_PTZ_RZOOM = 1u << 5,
    KN_PTZ_CPT = 1u << 6, /* continuouspantiltmove */
    KN_PTZ_CZ = 1u << 7,  /* continuouszoommove */
    KN_PTZ_HOME = 1u << 8,
    KN_PTZ_QUERY = 1u << 9,
    KN_PTZ_CAMERA = 1u << 10,
};

/* One request, in Axis's units and senses as written: pan + right. */
struct kn_ptz_req {
    unsigned set;
    int camera; /* 1.., when KN_PTZ_CAMERA */
    double pan, tilt, zoom, rpan, rtilt, rzoom;
    double cpan, ctilt, czoom; /* speeds */
    enum kn_ptz_query query;
};

/* The state at home (pan 0, tilt 0, zoom 1, still) at time now_ns. */
void kn_ptz_home(struct kn_ptz_state *s, uint64_t now_ns);

/* A query string as sent (`pan=10&tilt=-5`, %XX escapes allowed, no
 * leading '?'): 0, or -1 with the reason (one printable line) in err:
 * an unknown parameter, one given twice, a malformed number or value, an
 * absolute and a relative move of one axis together, no parameter. */
int kn_ptz_parse(const char *query, size_t len, struct kn_ptz_req *req, char *err, size_t errlen);

/* Brings the continuous move up to now_ns: each axis runs at its speed
 * and stops at its limit. A time before the last is taken as no time. */
void kn_ptz_advance(struct kn_ptz_state *s, const struct kn_ptz_limits *l, uint64_t now_ns);

/* Applies a parsed request at now_ns: home, then the absolute, relative
 * and continuous moves (an absolute or relative move of an axis ends its
 * continuous move), then the query. The answer's text goes to out
 * (always terminated): a line "clamped PARAM=VALUE: AXIS=SET" for each
 * value past a limit, then the query's lines (Axis's: "pan=..",
 * "tilt=..", "zoom=.." or "MinPan=.." ...). Returns how many values were
 * clamped. */
int kn_ptz_apply(struct kn_ptz_state *s, const struct kn_ptz_limits *l,
                 const struct kn_ptz_req *req, uint64_t now_ns, char *out, size_t outlen);

/* The Axis values of a state: pan + right in degrees, tilt + up, zoom
 * 1..9999 (the factor 1..zoom_max mapped linearly). */
double kn_ptz_axis_pan(const struct kn_ptz_state *s);
int kn_ptz_axis_zoom(const struct kn_ptz_state *s, const struct kn_ptz_limits *l);

#endif
