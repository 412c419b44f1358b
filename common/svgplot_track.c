/* Trajectories in an SVG plot (see svgplot.h): the path, heading
 * arrowheads with time labels at regular robot-clock intervals, start and
 * end markers, and the robot's footprint at start and end (in the plot,
 * or in a panel beside it when the robot is larger than the plot's
 * view). */
#include "svgplot_int.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define MARK_PX 12.0
#define LABEL_FONT 11.0
#define LABEL_GAP 13.0
#define MAX_MARKS 64
#define SIDE_MAX_W 240.0

static const char PATH_STYLE[] =
    "stroke='" KN_SVGPLOT_PATH_COLOUR "' stroke-width='2' stroke-linejoin='round'";
static const char START_STYLE[] = "stroke='" KN_SVGPLOT_START_COLOUR "' stroke-width='3'";
static const char END_STYLE[] = "fill='" KN_SVGPLOT_END_COLOUR "' stroke='white' stroke-width='1'";
static const char HEADING_STYLE[] =
    "fill='" KN_SVGPLOT_HEADING_COLOUR "' stroke='white' stroke-width='0.8'";
static const char START_FOOT_STYLE[] =
    "fill='" KN_SVGPLOT_START_COLOUR "' fill-opacity='0.08' stroke='" KN_SVGPLOT_START_COLOUR
    "' stroke-width='1.5' stroke-dasharray='6,3'";
static const char END_FOOT_STYLE[] =
    "fill='none' stroke='" KN_SVGPLOT_END_COLOUR "' stroke-width='1.5'";

static bool usable(const struct kn_svgplot_track *tr, size_t i)
{
    return isfinite(tr->t[i]) && isfinite(tr->x[i]) && isfinite(tr->y[i]);
}

void kn_svgplot_track_box(const struct kn_svgplot_track *tr, struct kn_svgplot_box *b)
{
    for (size_t i = 0; i < tr->n; i++)
        if (usable(tr, i))
            kn_svgplot_box_add(b, tr->x[i], tr->y[i]);
}

/* A round number of seconds between time marks, at most 12 of them. */
static double mark_interval(double duration)
{
    static const double c[] = { 0.1, 0.2, 0.5, 1,   2,   5,   10,   15,
                                30,  60,  120, 300, 600, 900, 1800, 3600 };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (duration / c[i] <= 12)
            return c[i];
    return kn_svgplot_nice_step(duration / 12);
}

/* ---- label placement ---- */

struct rect {
    double l, t, r, b;
};

struct layout {
    struct rect used[2 * MAX_MARKS + 8];
    int n;
    struct rect area; /* labels stay inside the plot area */
};

static void occupy(struct layout *lo, double px, double py, double half)
{
    if (lo->n < (int)(sizeof lo->used / sizeof lo->used[0]))
        lo->used[lo->n++] = (struct rect){ px - half, py - half, px + half, py + half };
}

static bool free_at(const struct layout *lo, struct rect r)
{
    if (r.l < lo->area.l || r.r > lo->area.r || r.t < lo->area.t || r.b > lo->area.b)
        return false;
    for (int i = 0; i < lo->n; i++) {
        const struct rect *u = &lo->used[i];
        if (r.l < u->r && r.r > u->l && r.t < u->b && r.b > u->t)
            return false;
    }
    return true;
}

/* Where a label goes when it sits in direction (dx, dy) from the page
 * point (px, py): its anchor point, text-anchor and box. */
struct spot {
    double x, y;
    const char *anchor;
    struct rect box;
};

static struct spot spot_at(double px, double py, double dx, double dy, double w)
{
    struct spot s;
    s.x = px + dx * LABEL_GAP;
    double ay = py + dy * LABEL_GAP;
    s.anchor = dx > 0.35 ? "start" : dx < -0.35 ? "end" : "middle";
    double l = dx > 0.35 ? s.x : dx < -0.35 ? s.x - w : s.x - w / 2;
    s.y = dy < -0.35 ? ay : dy > 0.35 ? ay + 9 : ay + 4; /* the baseline */
    s.box = (struct rect){ l - 1, s.y - 10, l + w + 1, s.y + 2 };
    return s;
}

/* Writes text beside the page point (px, py), on the first of four sides
 * (n, -n and the two across), near or twice as far, where it overlaps no
 * other label or mark; with force on side n when none is free, else not
 * at all. */
static void place_label(struct kn_svgplot *p, struct layout *lo, double px, double py, double nx,
                        double ny, const char *cls, const char *text, bool force)
{
    const double dirs[8][2] = { { nx, ny },          { -nx, -ny },       { -ny, nx },
                                { ny, -nx },         { 2 * nx, 2 * ny }, { -2 * nx, -2 * ny },
                                { -2 * ny, 2 * nx }, { 2 * ny, -2 * nx } };
    double w = kn_svgplot_text_width(text, LABEL_FONT);
    struct spot s = spot_at(px, py, nx, ny, w);
    int k = 0;
    while (k < 8 && !free_at(lo, (s = spot_at(px, py, dirs[k][0], dirs[k][1], w)).box))
        k++;
    if (k == 8) {
        if (!force)
            return;
        s = spot_at(px, py, nx, ny, w);
    }
    if (lo->n < (int)(sizeof lo->used / sizeof lo->used[0]))
        lo->used[lo->n++] = s.box;
    kn_svgplot_out(p, p->over,
                   "<text class='%s' x='%.1f' y='%.1f' text-anchor='%s' "
                   "font-size='%.0f' fill='" KN_SVGPLOT_LABEL_COLOUR "' "
                   "stroke='white' stroke-width='3' paint-order='stroke'>",
                   cls, s.x, s.y, s.anchor, LABEL_FONT);
    kn_svgplot_text(p->over, text);
    fputs("</text>\n", p->over);
}

/* ---- the marks ---- */

/* Position at robot-clock time tq, interpolated between the usable
 * samples around it (searching on from *from: time only grows), with the
 * yaw of the nearer one and the direction of travel around it. */
static bool state_at(const struct kn_svgplot_track *tr, double tq, size_t *from, double s[5])
{
    size_t prev = SIZE_MAX;
    for (size_t i = *from; i < tr->n; i++) {
        if (!usable(tr, i))
            continue;
        if (tr->t[i] >= tq) {
            double f = 0;
            if (prev != SIZE_MAX && tr->t[i] > tr->t[prev])
                f = (tq - tr->t[prev]) / (tr->t[i] - tr->t[prev]);
            size_t a = prev != SIZE_MAX ? prev : i;
            s[0] = tr->x[a] + f * (tr->x[i] - tr->x[a]);
            s[1] = tr->y[a] + f * (tr->y[i] - tr->y[a]);
            s[2] = tr->yaw ? tr->yaw[f < 0.5 ? a : i] : NAN;
            s[3] = tr->x[i] - tr->x[a];
            s[4] = tr->y[i] - tr->y[a];
            *from = a;
            return true;
        }
        prev = i;
    }
    return false;
}

/* Page direction away from the path at (px, py): across the direction of
 * travel (wx, wy: world), on the side away from the plot's centre. */
static void outward(const struct kn_svgplot *p, double px, double py, double wx, double wy,
                    double *nx, double *ny)
{
    double cx = p->map.left + p->w / 2, cy = p->map.top + p->h / 2;
    double ox = px - cx, oy = py - cy, len = hypot(wx, wy);
    if (len > 1e-12) {
        *nx = wy / len; /* page frame: y down */
        *ny = wx / len;
        if (*nx * ox + *ny * oy < 0) {
            *nx = -*nx;
            *ny = -*ny;
        }
        return;
    }
    len = hypot(ox, oy);
    *nx = len > 1e-9 ? ox / len : 0;
    *ny = len > 1e-9 ? oy / len : -1;
}

/* One time mark: a heading arrowhead (a dot without yaw). */
static void draw_mark(struct kn_svgplot *p, double px, double py, double yaw)
{
    if (isfinite(yaw))
        kn_svgplot_shape_at(p, p->over, KN_SVGPLOT_ARROW, "heading", HEADING_STYLE, px, py, MARK_PX,
                            -yaw);
    else
        kn_svgplot_shape_at(p, p->over, KN_SVGPLOT_DOT, "heading", HEADING_STYLE, px, py, 7, 0);
}

static void time_text(const struct kn_svgplot *p, double t, double interval, char *buf, size_t len)
{
    double whole = round(t);
    if (interval >= 1 && fabs(t - whole) < 1e-6)
        kn_svgplot_fmt(p, buf, len, "%.0f s", whole);
    else
        kn_svgplot_fmt(p, buf, len, "%.1f s", t);
}

/* The time marks of a track: where they fall on the page, and whether
 * they show (not under the start or end marker). */
struct marks {
    int n;
    double interval;
    double t[MAX_MARKS];     /* seconds since the start */
    double at[MAX_MARKS][5]; /* state_at's x, y, yaw, travel */
    double px[MAX_MARKS], py[MAX_MARKS];
    bool shown[MAX_MARKS];
};

/* Page positions of the first and last samples. */
struct ends {
    double sx, sy, ex, ey;
    bool have_s, have_e;
};

static void collect_marks(const struct kn_svgplot *p, const struct kn_svgplot_track *tr, size_t i0,
                          size_t i1, const struct ends *e, struct marks *m)
{
    double t0 = tr->t[i0];
    m->interval = mark_interval(tr->t[i1] - t0);
    m->n = 0;
    size_t from = i0;
    for (int k = 1; k < MAX_MARKS && t0 + k * m->interval < tr->t[i1] - m->interval * 0.3; k++)
        if (state_at(tr, t0 + k * m->interval, &from, m->at[m->n]))
            m->t[m->n++] = k * m->interval;
    for (int k = 0; k < m->n; k++) {
        double x = 0, y = 0;
        m->shown[k] = kn_svgplot_to_px(&p->map, m->at[k][0], m->at[k][1], &x, &y) &&
                      !(e->have_s && hypot(x - e->sx, y - e->sy) < 8) &&
                      !(e->have_e && hypot(x - e->ex, y - e->ey) < 8);
        m->px[k] = x;
        m->py[k] = y;
    }
}

/* "0 s" at the start and the duration at the end, one label for both
 * when the path ends where it began. */
static void label_ends(struct kn_svgplot *p, struct layout *lo, const struct ends *e, double dur)
{
    char buf[32], both[48];
    double nx, ny;
    bool closed = e->have_s && e->have_e && hypot(e->ex - e->sx, e->ey - e->sy) < 12;
    time_text(p, dur, 0.1, buf, sizeof buf);
    if (e->have_e && !closed) {
        outward(p, e->ex, e->ey, 0, 0, &nx, &ny);
        place_label(p, lo, e->ex, e->ey, nx, ny, "time end-time", buf, true);
    }
    if (e->have_s) {
        snprintf(both, sizeof both, "0 s and %s", buf);
        outward(p, e->sx, e->sy, 0, 0, &nx, &ny);
        place_label(p, lo, e->sx, e->sy, nx, ny,
                    closed ? "time start-time end-time" : "time start-time", closed ? both : "0 s",
                    true);
    }
}

/* The marks and their labels: every mark's place is taken first, so no
 * label hides one; start and end are labelled before the others. */
static void draw_time_marks(struct kn_svgplot *p, const struct kn_svgplot_track *tr, size_t i0,
                            size_t i1)
{
    struct ends e;
    e.have_s = kn_svgplot_to_px(&p->map, tr->x[i0], tr->y[i0], &e.sx, &e.sy);
    e.have_e = kn_svgplot_to_px(&p->map, tr->x[i1], tr->y[i1], &e.ex, &e.ey);
    struct marks m;
    collect_marks(p, tr, i0, i1, &e, &m);
    struct layout lo = { .n = 0 };
    lo.area = (struct rect){ p->map.left, p->map.top, p->map.left + p->w, p->map.top + p->h };
    for (int k = 0; k < m.n; k++)
        if (m.shown[k]) {
            draw_mark(p, m.px[k], m.py[k], m.at[k][2]);
            occupy(&lo, m.px[k], m.py[k], MARK_PX / 2);
        }
    if (e.have_s)
        occupy(&lo, e.sx, e.sy, 10);
    if (e.have_e)
        occupy(&lo, e.ex, e.ey, 7);
    label_ends(p, &lo, &e, tr->t[i1] - tr->t[i0]);
    char buf[32];
    for (int k = 0; k < m.n; k++) {
        if (!m.shown[k])
            continue;
        double nx, ny;
        outward(p, m.px[k], m.py[k], m.at[k][3], m.at[k][4], &nx, &ny);
        time_text(p, m.t[k], m.interval, buf, sizeof buf);
        place_label(p, &lo, m.px[k], m.py[k], nx, ny, "time", buf, false);
    }
    kn_svgplot_fmt(p, buf, sizeof buf, "%g", m.interval);
    char legend[96];
    snprintf(legend, sizeof legend, "%s every %s s, labelled in s since the start",
             tr->yaw ? "heading" : "position", buf);
    kn_svgplot_legend(p, tr->yaw ? KN_SVGPLOT_ARROW : KN_SVGPLOT_DOT, HEADING_STYLE, legend);
}

/* ---- footprints ---- */

static void footprint_box(const struct kn_svgplot_track *tr, const struct kn_svgplot_robot *robot,
                          size_t i, struct kn_svgplot_box *b)
{
    double yaw = tr->yaw[i], c = cos(yaw), s = sin(yaw);
    if (!isfinite(yaw))
        return;
    for (int k = 0; k < 4; k++) {
        double lx = (k < 2 ? 0.5 : -0.5) * robot->length,
               ly = (k % 3 == 0 ? 0.5 : -0.5) * robot->width;
        kn_svgplot_box_add(b, tr->x[i] + c * lx - s * ly, tr->y[i] + s * lx + c * ly);
    }
}

static bool has_footprint(const struct kn_svgplot_track *tr, const struct kn_svgplot_robot *robot)
{
    return robot && tr->yaw && robot->length > 0 && robot->width > 0 && isfinite(robot->length) &&
           isfinite(robot->width);
}

/* Start and end footprints on a map (end on top), with small markers. */
static void footprints_on(struct kn_svgplot *p, FILE *f, const struct kn_svgplot_map *m,
                          const struct kn_svgplot_track *tr, const struct kn_svgplot_robot *robot,
                          size_t i0, size_t i1)
{
    kn_svgplot_footprint_on(p, f, m, "footprint start", START_FOOT_STYLE, tr->x[i0], tr->y[i0],
                            tr->yaw[i0], robot->length, robot->width);
    kn_svgplot_footprint_on(p, f, m, "footprint end", END_FOOT_STYLE, tr->x[i1], tr->y[i1],
                            tr->yaw[i1], robot->length, robot->width);
}

/* The side panel: the robot's footprints and the path to one scale, with
 * the main plot's view dashed and a scale bar. */
static void side_panel(struct kn_svgplot *p, const struct kn_svgplot_track *tr,
                       const struct kn_svgplot_robot *robot, size_t i0, size_t i1)
{
    if (!kn_svgplot_side_open(p))
        return;
    struct kn_svgplot_box b;
    kn_svgplot_box_init(&b);
    footprint_box(tr, robot, i0, &b);
    footprint_box(tr, robot, i1, &b);
    kn_svgplot_track_box(tr, &b);
    kn_svgplot_box_add(&b, p->x0, p->y0);
    kn_svgplot_box_add(&b, p->x1, p->y1);
    double sx = (b.x1 - b.x0) * 1.16, sy = (b.y1 - b.y0) * 1.16;
    double scale = fmin(SIDE_MAX_W / sx, p->h / sy);
    if (!(scale > 0) || !isfinite(scale))
        return;
    double pw = sx * scale, ph = sy * scale;
    double left = p->map.left + p->w + 28, top = p->map.top;
    struct kn_svgplot_map m = {
        (b.x0 + b.x1) / 2 - sx / 2, (b.y0 + b.y1) / 2 + sy / 2, scale, left, top, 0
    };
    FILE *f = p->side;
    fputs("<g class='side-panel'>\n", f);
    kn_svgplot_out(p, f,
                   "<text class='side-title' x='%.1f' y='%.1f' font-size='12' fill='#333'>"
                   "the robot to scale</text>\n",
                   left, top - 8);
    kn_svgplot_out(p, f,
                   "<rect class='frame' x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
                   "fill='white' stroke='#bbb'/>\n",
                   left, top, pw, ph);
    double vx0, vy0, vx1, vy1;
    if (kn_svgplot_to_px(&m, p->x0, p->y1, &vx0, &vy0) &&
        kn_svgplot_to_px(&m, p->x1, p->y0, &vx1, &vy1))
        kn_svgplot_out(p, f,
                       "<rect class='view' x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
                       "fill='none' stroke='#777' stroke-dasharray='2,2'/>\n",
                       vx0, vy0, vx1 - vx0, vy1 - vy0);
    kn_svgplot_path_on(p, f, &m, "path", "stroke='" KN_SVGPLOT_PATH_COLOUR "' stroke-width='1.5'",
                       tr->x, tr->y, tr->n);
    footprints_on(p, f, &m, tr, robot, i0, i1);
    /* under the panel: a scale bar of a round length, and what the
     * dotted box is */
    double bar = kn_svgplot_nice_step(sx / 4), bx = left, by = top + ph + 14;
    char text[48];
    kn_svgplot_fmt(p, text, sizeof text, "%g m", bar);
    kn_svgplot_out(
        p, f,
        "<line class='scale-bar' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
        "stroke='#333' stroke-width='2'/>\n"
        "<text class='scale-bar' x='%.1f' y='%.1f' font-size='11' fill='#333'>%s</text>\n"
        "<text class='side-note' x='%.1f' y='%.1f' font-size='11' fill='#333'>"
        "dotted: the area of the plot</text>\n",
        bx, by, bx + bar * scale, by, bx + bar * scale + 6, by + 4, text, left, by + 20);
    fputs("</g>\n", f);
    p->side_w = pw;
}

static void draw_footprints(struct kn_svgplot *p, const struct kn_svgplot_track *tr,
                            const struct kn_svgplot_robot *robot, size_t i0, size_t i1)
{
    struct kn_svgplot_box b;
    kn_svgplot_box_init(&b);
    footprint_box(tr, robot, i0, &b);
    footprint_box(tr, robot, i1, &b);
    if (b.n == 0)
        return;
    if (b.x0 >= p->x0 && b.x1 <= p->x1 && b.y0 >= p->y0 && b.y1 <= p->y1)
        footprints_on(p, p->data, &p->map, tr, robot, i0, i1);
    else
        side_panel(p, tr, robot, i0, i1);
    char label[96];
    kn_svgplot_fmt(p, label, sizeof label, "footprint at start (%.2f x %.2f m)", robot->length,
                   robot->width);
    kn_svgplot_legend(p, KN_SVGPLOT_RECT, START_FOOT_STYLE, label);
    kn_svgplot_legend(p, KN_SVGPLOT_RECT, END_FOOT_STYLE, "footprint at end");
}

/* ---- the track ---- */

/* The first and last usable samples; false when there is none. */
static bool track_ends(const struct kn_svgplot_track *tr, size_t *i0, size_t *i1)
{
    *i0 = *i1 = SIZE_MAX;
    for (size_t i = 0; i < tr->n; i++)
        if (usable(tr, i)) {
            if (*i0 == SIZE_MAX)
                *i0 = i;
            *i1 = i;
        }
    return *i0 != SIZE_MAX;
}

void kn_svgplot_track(struct kn_svgplot *p, const struct kn_svgplot_track *tr,
                      const struct kn_svgplot_robot *robot)
{
    size_t i0, i1;
    bool any = track_ends(tr, &i0, &i1);
    const char *label = tr->label ? tr->label : "path";
    kn_svgplot_legend(p, KN_SVGPLOT_LINE, PATH_STYLE, label);
    kn_svgplot_legend(p, KN_SVGPLOT_RING, START_STYLE, "start");
    kn_svgplot_legend(p, KN_SVGPLOT_SQUARE, END_STYLE, "end");
    if (!any)
        return;
    kn_svgplot_path(p, "path", PATH_STYLE, tr->x, tr->y, tr->n);
    if (has_footprint(tr, robot))
        draw_footprints(p, tr, robot, i0, i1);
    if (i1 > i0 && tr->t[i1] > tr->t[i0])
        draw_time_marks(p, tr, i0, i1);
    /* start, then end on top of it: a ring around, a square inside */
    double px, py;
    if (kn_svgplot_to_px(&p->map, tr->x[i0], tr->y[i0], &px, &py))
        kn_svgplot_shape_at(p, p->over, KN_SVGPLOT_RING, "start", START_STYLE, px, py, 18, 0);
    if (kn_svgplot_to_px(&p->map, tr->x[i1], tr->y[i1], &px, &py))
        kn_svgplot_shape_at(p, p->over, KN_SVGPLOT_SQUARE, "end", END_STYLE, px, py, 10, 0);
}

int kn_svgplot_trajectory(FILE *f, const struct kn_svgplot_track *tr,
                          const struct kn_svgplot_robot *robot, const char *title,
                          const char *caption)
{
    /* the view fits the path; the footprints join it when they do not
     * shrink the path much (else they get the side panel) */
    struct kn_svgplot_box path, all;
    kn_svgplot_box_init(&path);
    kn_svgplot_track_box(tr, &path);
    all = path;
    size_t i0, i1;
    if (has_footprint(tr, robot) && track_ends(tr, &i0, &i1)) {
        footprint_box(tr, robot, i0, &all);
        footprint_box(tr, robot, i1, &all);
    }
    double span = fmax(fmax(path.x1 - path.x0, path.y1 - path.y0), 0.1);
    double span_all = fmax(all.x1 - all.x0, all.y1 - all.y0);
    struct kn_svgplot_frame fr = { title, caption, "x [m]", "y [m]", 560, 560, 0.1, 0.06 };
    struct kn_svgplot p;
    if (kn_svgplot_begin(&p, span_all <= 1.6 * span ? &all : &path, &fr) != 0)
        return -1;
    kn_svgplot_track(&p, tr, robot);
    return kn_svgplot_end(&p, f);
}
