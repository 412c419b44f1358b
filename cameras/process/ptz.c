/* The front camera's PTZ state and the VAPIX ptz.cgi subset that drives
 * it (ptz.h; docs/cameras.md#ptz-control). Numbers are read and written
 * here digit by digit, not with strtod and printf's %f: a console's
 * "12.5" means the same whatever LC_NUMERIC the process runs in. */
#include "ptz.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX 32
#define VALUE_MAX 48

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void kn_ptz_home(struct kn_ptz_state *s, uint64_t now_ns)
{
    memset(s, 0, sizeof *s);
    s->zoom = 1;
    s->t_ns = now_ns;
}

/* ---- reading ---- */

static void say(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* One component of the query, %XX decoded, into out (at most cap - 1
 * bytes, printable ASCII only so that it can be echoed). A '+' stays a
 * '+': no value of this subset holds a space, and "rtilt=+10" is read
 * as consoles mean it. */
static int decode(const char *p, size_t n, char *out, size_t cap, const char *what, char *err,
                  size_t errlen)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)p[i];
        if (c == '%') {
            if (i + 2 >= n || !isxdigit((unsigned char)p[i + 1]) ||
                !isxdigit((unsigned char)p[i + 2])) {
                say(err, errlen, "a bad %%-escape in a %s", what);
                return -1;
            }
            char hex[3] = { p[i + 1], p[i + 2], '\0' };
            c = (int)strtol(hex, NULL, 16);
            i += 2;
        }
        if (c < 0x20 || c >= 0x7f) {
            say(err, errlen, "a control or non-ASCII byte in a %s", what);
            return -1;
        }
        if (o + 1 >= cap) {
            say(err, errlen, "a %s longer than %zu characters", what, cap - 1);
            return -1;
        }
        out[o++] = (char)c;
    }
    out[o] = '\0';
    return 0;
}

/* A decimal number as consoles write them: [+-]digits[.digits] or
 * [+-].digits; no exponent, no hex, no "nan". */
static int number(const char *s, double *out)
{
    const char *p = s;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    double v = 0, scale = 1;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++)
        v = v * 10 + (*p - '0');
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            v += (*p - '0') * (scale /= 10);
    if (digits == 0 || digits > 15 || *p != '\0')
        return -1;
    *out = neg ? -v : v;
    return 0;
}

/* "A,B": two numbers. */
static int pair(const char *s, double *a, double *b)
{
    char first[VALUE_MAX];
    const char *comma = strchr(s, ',');
    if (!comma || (size_t)(comma - s) >= sizeof first)
        return -1;
    memcpy(first, s, (size_t)(comma - s));
    first[comma - s] = '\0';
    return number(first, a) < 0 || number(comma + 1, b) < 0 ? -1 : 0;
}

static const struct {
    const char *name;
    unsigned bit;
    size_t off; /* the double it fills; 0 for the others */
} params[] = {
    { "pan", KN_PTZ_PAN, offsetof(struct kn_ptz_req, pan) },
    { "tilt", KN_PTZ_TILT, offsetof(struct kn_ptz_req, tilt) },
    { "zoom", KN_PTZ_ZOOM, offsetof(struct kn_ptz_req, zoom) },
    { "rpan", KN_PTZ_RPAN, offsetof(struct kn_ptz_req, rpan) },
    { "rtilt", KN_PTZ_RTILT, offsetof(struct kn_ptz_req, rtilt) },
    { "rzoom", KN_PTZ_RZOOM, offsetof(struct kn_ptz_req, rzoom) },
    { "continuouszoommove", KN_PTZ_CZ, offsetof(struct kn_ptz_req, czoom) },
    { "continuouspantiltmove", KN_PTZ_CPT, 0 },
    { "move", KN_PTZ_HOME, 0 },
    { "query", KN_PTZ_QUERY, 0 },
    { "camera", KN_PTZ_CAMERA, 0 },
};
#define NPARAMS (sizeof params / sizeof params[0])

static int param(struct kn_ptz_req *req, size_t k, const char *v, char *err, size_t errlen)
{
    const char *name = params[k].name;
    if (params[k].off) {
        if (number(v, (double *)(void *)((char *)req + params[k].off)) < 0) {
            say(err, errlen, "%s: \"%s\" is not a number", name, v);
            return -1;
        }
    } else if (params[k].bit == KN_PTZ_CPT) {
        if (pair(v, &req->cpan, &req->ctilt) < 0) {
            say(err, errlen, "%s: \"%s\" is not PAN_SPEED,TILT_SPEED", name, v);
            return -1;
        }
    } else if (params[k].bit == KN_PTZ_HOME) {
        if (strcmp(v, "home") != 0) {
            say(err, errlen, "move: \"%s\" is not supported (only move=home)", v);
            return -1;
        }
    } else if (params[k].bit == KN_PTZ_QUERY) {
        if (strcmp(v, "position") == 0)
            req->query = KN_PTZ_Q_POSITION;
        else if (strcmp(v, "limits") == 0)
            req->query = KN_PTZ_Q_LIMITS;
        else {
            say(err, errlen, "query: \"%s\" is not supported (position or limits)", v);
            return -1;
        }
    } else {
        double c;
        if (number(v, &c) < 0 || c != floor(c) || c < 1 || c > 1000) {
            say(err, errlen, "camera: \"%s\" is not a camera number (1, 2, ...)", v);
            return -1;
        }
        req->camera = (int)c;
    }
    return 0;
}

int kn_ptz_parse(const char *query, size_t len, struct kn_ptz_req *req, char *err, size_t errlen)
{
    memset(req, 0, sizeof *req);
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && query[end] != '&')
            end++;
        if (end == i) { /* "a=1&&b=2": an empty part is nothing */
            i = end + 1;
            continue;
        }
        size_t eq = i;
        while (eq < end && query[eq] != '=')
            eq++;
        char key[KEY_MAX], value[VALUE_MAX];
        if (decode(query + i, eq - i, key, sizeof key, "parameter name", err, errlen) < 0)
            return -1;
        if (eq == end) {
            say(err, errlen, "%s: no value", key);
            return -1;
        }
        if (decode(query + eq + 1, end - eq - 1, value, sizeof value, "value", err, errlen) < 0)
            return -1;
        size_t k = 0;
        while (k < NPARAMS && strcmp(params[k].name, key) != 0)
            k++;
        if (k == NPARAMS) {
            say(err, errlen, "unknown parameter \"%s\"", key);
            return -1;
        }
        if (req->set & params[k].bit) {
            say(err, errlen, "%s given twice", key);
            return -1;
        }
        if (param(req, k, value, err, errlen) < 0)
            return -1;
        req->set |= params[k].bit;
        i = end + 1;
    }
    static const struct {
        unsigned a, b;
        const char *what;
    } both[] = {
        { KN_PTZ_PAN, KN_PTZ_RPAN, "pan and rpan" },
        { KN_PTZ_TILT, KN_PTZ_RTILT, "tilt and rtilt" },
        { KN_PTZ_ZOOM, KN_PTZ_RZOOM, "zoom and rzoom" },
    };
    for (size_t k = 0; k < sizeof both / sizeof both[0]; k++)
        if ((req->set & both[k].a) && (req->set & both[k].b)) {
            say(err, errlen, "%s together", both[k].what);
            return -1;
        }
    if ((req->set & ~(unsigned)KN_PTZ_CAMERA) == 0) {
        say(err, errlen,
            "no PTZ parameter (pan, tilt, zoom, rpan, rtilt, rzoom, "
            "continuouspantiltmove, continuouszoommove, move=home, query)");
        return -1;
    }
    return 0;
}

/* ---- the state ---- */

static double zoom_to_axis(double f, const struct kn_ptz_limits *l)
{
    if (l->zoom_max <= 1)
        return 1;
    return 1 + (f - 1) * (KN_PTZ_AXIS_ZOOM_MAX - 1) / (l->zoom_max - 1);
}

static double axis_to_zoom(double a, const struct kn_ptz_limits *l)
{
    return 1 + (a - 1) * (l->zoom_max - 1) / (KN_PTZ_AXIS_ZOOM_MAX - 1);
}

double kn_ptz_axis_pan(const struct kn_ptz_state *s)
{
    return s->pan_deg == 0 ? 0 : -s->pan_deg;
}

int kn_ptz_axis_zoom(const struct kn_ptz_state *s, const struct kn_ptz_limits *l)
{
    return (int)lround(clamp(zoom_to_axis(s->zoom, l), 1, KN_PTZ_AXIS_ZOOM_MAX));
}

void kn_ptz_advance(struct kn_ptz_state *s, const struct kn_ptz_limits *l, uint64_t now_ns)
{
    if (now_ns <= s->t_ns)
        return;
    double dt = (double)(now_ns - s->t_ns) / 1e9;
    s->t_ns = now_ns;
    /* Axis's pan speed + turns right: the state's pan + is left */
    double pan = s->pan_deg - s->pan_speed / KN_PTZ_SPEED_MAX * l->pan_speed_dps * dt;
    double tilt = s->tilt_deg + s->tilt_speed / KN_PTZ_SPEED_MAX * l->tilt_speed_dps * dt;
    double zoom = s->zoom + s->zoom_speed / KN_PTZ_SPEED_MAX * l->zoom_speed * dt;
    s->pan_deg = clamp(pan, -l->pan_max_deg, l->pan_max_deg);
    s->tilt_deg = clamp(tilt, l->tilt_min_deg, l->tilt_max_deg);
    s->zoom = clamp(zoom, 1, l->zoom_max);
    /* at a stop the move is over, as a real head's is */
    if (s->pan_deg != pan)
        s->pan_speed = 0;
    if (s->tilt_deg != tilt)
        s->tilt_speed = 0;
    if (s->zoom != zoom)
        s->zoom_speed = 0;
}

/* ---- writing ---- */

struct text {
    char *p;
    size_t cap, n;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *fmt, ...)
{
    if (t->n + 1 >= t->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    if (w > 0)
        t->n = t->n + (size_t)w < t->cap ? t->n + (size_t)w : t->cap - 1;
}

/* v with two decimals ("-12.50"), whatever the locale. */
static void put_fixed(struct text *t, double v)
{
    long long c = llround(clamp(v, -1e12, 1e12) * 100);
    put(t, "%s%lld.%02lld", c < 0 ? "-" : "", (c < 0 ? -c : c) / 100, (c < 0 ? -c : c) % 100);
}

/* The value past its limit is said: "clamped pan=400.00: pan=170.00". */
static double limited(struct text *t, int *nclamped, const char *param, double asked,
                      const char *axis, double want, double lo, double hi)
{
    double got = clamp(want, lo, hi);
    if (got != want) {
        (*nclamped)++;
        put(t, "clamped %s=", param);
        put_fixed(t, asked);
        put(t, ": %s=", axis);
        put_fixed(t, got);
        put(t, "\n");
    }
    return got;
}

int kn_ptz_apply(struct kn_ptz_state *s, const struct kn_ptz_limits *l,
                 const struct kn_ptz_req *req, uint64_t now_ns, char *out, size_t outlen)
{
    struct text t = { out, outlen, 0 };
    if (outlen)
        out[0] = '\0';
    int n = 0;
    kn_ptz_advance(s, l, now_ns);
    unsigned set = req->set;
    if (set & KN_PTZ_HOME)
        kn_ptz_home(s, now_ns);
    double pm = l->pan_max_deg;
    /* Axis's pan + is right: pan=P is the state's -P */
    if (set & KN_PTZ_PAN)
        s->pan_deg = -limited(&t, &n, "pan", req->pan, "pan", req->pan, -pm, pm);
    if (set & KN_PTZ_RPAN)
        s->pan_deg = -limited(&t, &n, "rpan", req->rpan, "pan", -s->pan_deg + req->rpan, -pm, pm);
    if (set & KN_PTZ_TILT)
        s->tilt_deg =
            limited(&t, &n, "tilt", req->tilt, "tilt", req->tilt, l->tilt_min_deg, l->tilt_max_deg);
    if (set & KN_PTZ_RTILT)
        s->tilt_deg = limited(&t, &n, "rtilt", req->rtilt, "tilt", s->tilt_deg + req->rtilt,
                              l->tilt_min_deg, l->tilt_max_deg);
    if (set & (KN_PTZ_ZOOM | KN_PTZ_RZOOM)) {
        bool abs = set & KN_PTZ_ZOOM;
        double want = abs ? req->zoom : zoom_to_axis(s->zoom, l) + req->rzoom;
        double a = limited(&t, &n, abs ? "zoom" : "rzoom", abs ? req->zoom : req->rzoom, "zoom",
                           want, 1, KN_PTZ_AXIS_ZOOM_MAX);
        s->zoom = clamp(axis_to_zoom(a, l), 1, l->zoom_max);
    }
    if (set & (KN_PTZ_PAN | KN_PTZ_RPAN))
        s->pan_speed = 0;
    if (set & (KN_PTZ_TILT | KN_PTZ_RTILT))
        s->tilt_speed = 0;
    if (set & (KN_PTZ_ZOOM | KN_PTZ_RZOOM))
        s->zoom_speed = 0;
    if (set & KN_PTZ_CPT) {
        s->pan_speed = limited(&t, &n, "continuouspantiltmove", req->cpan, "panspeed", req->cpan,
                               -KN_PTZ_SPEED_MAX, KN_PTZ_SPEED_MAX);
        s->tilt_speed = limited(&t, &n, "continuouspantiltmove", req->ctilt, "tiltspeed",
                                req->ctilt, -KN_PTZ_SPEED_MAX, KN_PTZ_SPEED_MAX);
    }
    if (set & KN_PTZ_CZ)
        s->zoom_speed = limited(&t, &n, "continuouszoommove", req->czoom, "zoomspeed", req->czoom,
                                -KN_PTZ_SPEED_MAX, KN_PTZ_SPEED_MAX);
    if (req->query == KN_PTZ_Q_POSITION) {
        put(&t, "pan=");
        put_fixed(&t, kn_ptz_axis_pan(s));
        put(&t, "\ntilt=");
        put_fixed(&t, s->tilt_deg);
        put(&t, "\nzoom=%d\n", kn_ptz_axis_zoom(s, l));
    } else if (req->query == KN_PTZ_Q_LIMITS) {
        put(&t, "MinPan=");
        put_fixed(&t, -pm);
        put(&t, "\nMaxPan=");
        put_fixed(&t, pm);
        put(&t, "\nMinTilt=");
        put_fixed(&t, l->tilt_min_deg);
        put(&t, "\nMaxTilt=");
        put_fixed(&t, l->tilt_max_deg);
        put(&t, "\nMinZoom=1\nMaxZoom=%d\n", KN_PTZ_AXIS_ZOOM_MAX);
    }
    return n;
}
