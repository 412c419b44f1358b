/* The SVG plot frame and drawing primitives (see svgplot.h): scale and
 * ticks from the data, buffered drawing, then the document in one go
 * with axes, grid, legend and caption. */
#include "svgplot_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Page layout [px]. */
#define PAD_LEFT 76.0
#define PAD_TOP_TITLE 48.0
#define PAD_TOP 18.0
#define PAD_RIGHT 24.0
#define BELOW_AXIS 46.0 /* tick labels and the x axis title */
#define LEGEND_ROW 20.0
#define CAPTION_LINE 16.0
#define FONT 12.0
#define SIDE_GAP 28.0
#define FAR_PX 1e6

void kn_svgplot_box_init(struct kn_svgplot_box *b)
{
    memset(b, 0, sizeof *b);
}

void kn_svgplot_box_add(struct kn_svgplot_box *b, double x, double y)
{
    if (!isfinite(x) || !isfinite(y))
        return;
    if (b->n == 0 || x < b->x0)
        b->x0 = x;
    if (b->n == 0 || x > b->x1)
        b->x1 = x;
    if (b->n == 0 || y < b->y0)
        b->y0 = y;
    if (b->n == 0 || y > b->y1)
        b->y1 = y;
    b->n++;
}

double kn_svgplot_nice_step(double raw)
{
    if (!(raw > 0) || !isfinite(raw))
        return 1;
    double mag = pow(10, floor(log10(raw)));
    static const double mult[] = { 1, 2, 5, 10 };
    for (size_t i = 0; i < sizeof mult / sizeof mult[0]; i++)
        if (mult[i] * mag >= raw * (1 - 1e-9))
            return mult[i] * mag;
    return 10 * mag;
}

/* ---- output ---- */

void kn_svgplot_out(const struct kn_svgplot *p, FILE *f, const char *fmt, ...)
{
    locale_t old = p->c_numeric ? uselocale(p->c_numeric) : (locale_t)0;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    if (old)
        uselocale(old);
}

void kn_svgplot_fmt(const struct kn_svgplot *p, char *buf, size_t len, const char *fmt, ...)
{
    locale_t old = p->c_numeric ? uselocale(p->c_numeric) : (locale_t)0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (old)
        uselocale(old);
}

/* Length of the valid UTF-8 character XML allows at s, or 0. */
static size_t utf8_char(const unsigned char *s)
{
    unsigned c = s[0];
    size_t len = c < 0x80             ? 1
                 : (c & 0xE0) == 0xC0 ? 2
                 : (c & 0xF0) == 0xE0 ? 3
                 : (c & 0xF8) == 0xF0 ? 4
                                      : 0;
    if (len == 0)
        return 0;
    uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE ||
        cp == 0xFFFF)
        return 0;
    if (cp < 0x20 && cp != '\t')
        return 0; /* control characters are not allowed in XML 1.0 text */
    return len;
}

void kn_svgplot_text(FILE *f, const char *s)
{
    const unsigned char *u = (const unsigned char *)(s ? s : "");
    while (*u) {
        size_t len = utf8_char(u);
        if (len == 0) {
            fputc('?', f);
            u++;
            continue;
        }
        switch (*u) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fwrite(u, 1, len, f); break;
        }
        u += len;
    }
}

double kn_svgplot_text_width(const char *s, double font_px)
{
    size_t n = 0;
    for (const unsigned char *u = (const unsigned char *)(s ? s : ""); *u; u++)
        n += (*u & 0xC0) != 0x80;
    return (double)n * font_px * 0.56;
}

/* ---- coordinates ---- */

static double pull_in(double v)
{
    return v < -FAR_PX ? -FAR_PX : v > FAR_PX ? FAR_PX : v;
}

bool kn_svgplot_to_px(const struct kn_svgplot_map *m, double x, double y, double *px, double *py)
{
    double ys = m->yscale > 0 ? m->yscale : m->scale;
    double a = m->left + (x - m->x0) * m->scale, b = m->top + (m->y1 - y) * ys;
    if (!isfinite(a) || !isfinite(b))
        return false;
    *px = pull_in(a);
    *py = pull_in(b);
    return true;
}

/* The view: the data with its margin, at least min_span each way; the
 * origin at the minimum span when there is nothing usable (no points,
 * or numbers too large to subtract). */
static void choose_view(struct kn_svgplot *p, const struct kn_svgplot_box *b)
{
    const struct kn_svgplot_frame *fr = &p->frame;
    double min_y = p->chart ? 1e-9 : fr->min_span;
    double cx = 0, cy = 0, sx = fr->min_span, sy = min_y;
    if (b->n > 0) {
        cx = b->x0 / 2 + b->x1 / 2;
        cy = b->y0 / 2 + b->y1 / 2;
        sx = fmax((b->x1 - b->x0) * (1 + 2 * fr->margin), fr->min_span);
        sy = fmax((b->y1 - b->y0) * (1 + 2 * fr->margin), min_y);
    }
    bool usable = isfinite(cx) && isfinite(cy) && isfinite(sx) && isfinite(sy) &&
                  (cx + sx / 2) - (cx - sx / 2) > sx / 2 && (cy + sy / 2) - (cy - sy / 2) > sy / 2;
    if (!usable) {
        cx = cy = 0;
        sx = fr->min_span;
        sy = min_y;
    }
    p->x0 = cx - sx / 2;
    p->x1 = cx + sx / 2;
    p->y0 = cy - sy / 2;
    p->y1 = cy + sy / 2;
    if (p->chart) {
        /* a chart: the whole area, about 8 ticks on x and 5 on y, never
         * closer than 48 and 24 px */
        p->w = fr->max_w;
        p->h = fr->max_h;
        p->map = (struct kn_svgplot_map){
            p->x0, p->y1, p->w / sx, PAD_LEFT, fr->title ? PAD_TOP_TITLE : PAD_TOP, p->h / sy
        };
        p->step = kn_svgplot_nice_step(fmax(sx / 8, 48 * sx / p->w));
        p->ystep = kn_svgplot_nice_step(fmax(sy / 5, 24 * sy / p->h));
        return;
    }
    double scale = fmin(fr->max_w / sx, fr->max_h / sy);
    p->w = sx * scale;
    p->h = sy * scale;
    p->map =
        (struct kn_svgplot_map){ p->x0, p->y1, scale, PAD_LEFT, fr->title ? PAD_TOP_TITLE : PAD_TOP,
                                 0 };
    /* about 8 ticks on the long side, at least 3 on the short one, and
     * never closer than 48 px */
    double big = fmax(sx, sy), small = fmin(sx, sy);
    double step = kn_svgplot_nice_step(fmax(big / 8, 48 / scale));
    while (small / step < 3 && step > small / 8)
        step = kn_svgplot_nice_step(step / 2.5);
    p->step = step;
}

static int begin(struct kn_svgplot *p, const struct kn_svgplot_box *data,
                 const struct kn_svgplot_frame *fr, bool chart, const char *clip_id)
{
    memset(p, 0, sizeof *p);
    p->chart = chart;
    /* the id goes into an attribute unescaped: only what needs none */
    size_t n = 0;
    for (const char *c = clip_id; c && *c && n + 1 < sizeof p->clip_id; c++)
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            *c == '-')
            p->clip_id[n++] = *c;
    p->clip_id[n] = '\0';
    if (n == 0)
        snprintf(p->clip_id, sizeof p->clip_id, "kn-plot-area");
    p->frame = *fr;
    if (!(p->frame.max_w >= 100) || !isfinite(p->frame.max_w))
        p->frame.max_w = 560;
    if (!(p->frame.max_h >= 100) || !isfinite(p->frame.max_h))
        p->frame.max_h = 560;
    if (!(p->frame.min_span > 0) || !isfinite(p->frame.min_span))
        p->frame.min_span = 0.1;
    if (!(p->frame.margin >= 0) || p->frame.margin > 1)
        p->frame.margin = 0.06;
    choose_view(p, data);
    p->c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    p->data = open_memstream(&p->data_buf, &p->data_len);
    p->over = open_memstream(&p->over_buf, &p->over_len);
    if (!p->data || !p->over) {
        if (p->data)
            fclose(p->data);
        if (p->over)
            fclose(p->over);
        free(p->data_buf);
        free(p->over_buf);
        if (p->c_numeric)
            freelocale(p->c_numeric);
        return -1;
    }
    return 0;
}

int kn_svgplot_begin(struct kn_svgplot *p, const struct kn_svgplot_box *data,
                     const struct kn_svgplot_frame *fr)
{
    return begin(p, data, fr, false, NULL);
}

int kn_svgplot_begin_chart(struct kn_svgplot *p, const struct kn_svgplot_box *data,
                           const struct kn_svgplot_frame *fr, const char *clip_id)
{
    return begin(p, data, fr, true, clip_id);
}

bool kn_svgplot_side_open(struct kn_svgplot *p)
{
    if (!p->side)
        p->side = open_memstream(&p->side_buf, &p->side_len);
    if (!p->side)
        p->failed = true;
    return p->side != NULL;
}

/* ---- primitives ---- */

void kn_svgplot_legend(struct kn_svgplot *p, enum kn_svgplot_shape shape, const char *style,
                       const char *label)
{
    for (int i = 0; i < p->nlegend; i++)
        if (strcmp(p->legend[i].label, label) == 0)
            return;
    if (p->nlegend == KN_SVGPLOT_MAX_LEGEND)
        return;
    p->legend[p->nlegend].shape = shape;
    snprintf(p->legend[p->nlegend].style, sizeof p->legend[0].style, "%s", style);
    snprintf(p->legend[p->nlegend].label, sizeof p->legend[0].label, "%s", label);
    p->nlegend++;
}

void kn_svgplot_path_on(const struct kn_svgplot *p, FILE *f, const struct kn_svgplot_map *m,
                        const char *cls, const char *style, const double *x, const double *y,
                        size_t n)
{
    size_t i = 0;
    while (i < n) {
        double px, py;
        /* one polyline per run of finite points */
        size_t run = 0;
        while (i + run < n && kn_svgplot_to_px(m, x[i + run], y[i + run], &px, &py))
            run++;
        if (run >= 2) {
            kn_svgplot_out(p, f, "<polyline class='%s' fill='none' %s points='", cls, style);
            for (size_t k = i; k < i + run; k++) {
                kn_svgplot_to_px(m, x[k], y[k], &px, &py);
                kn_svgplot_out(p, f, "%.1f,%.1f ", px, py);
            }
            fputs("'/>\n", f);
        }
        i += run + 1;
    }
}

void kn_svgplot_path(struct kn_svgplot *p, const char *cls, const char *style, const double *x,
                     const double *y, size_t n)
{
    kn_svgplot_path_on(p, p->data, &p->map, cls, style, x, y, n);
}

/* A polygon on any map (all corners finite, else nothing). */
static void polygon_on(const struct kn_svgplot *p, FILE *f, const struct kn_svgplot_map *m,
                       const char *cls, const char *style, const double *x, const double *y,
                       size_t n)
{
    double px, py;
    for (size_t i = 0; i < n; i++)
        if (!kn_svgplot_to_px(m, x[i], y[i], &px, &py))
            return;
    if (n < 3)
        return;
    kn_svgplot_out(p, f, "<polygon class='%s' %s points='", cls, style);
    for (size_t i = 0; i < n; i++) {
        kn_svgplot_to_px(m, x[i], y[i], &px, &py);
        kn_svgplot_out(p, f, "%.1f,%.1f ", px, py);
    }
    fputs("'/>\n", f);
}

void kn_svgplot_polygon(struct kn_svgplot *p, const char *cls, const char *style, const double *x,
                        const double *y, size_t n)
{
    polygon_on(p, p->data, &p->map, cls, style, x, y, n);
}

static void line_on(const struct kn_svgplot *p, FILE *f, const struct kn_svgplot_map *m,
                    const char *cls, const char *style, double x0, double y0, double x1, double y1)
{
    double a, b, c, d;
    if (kn_svgplot_to_px(m, x0, y0, &a, &b) && kn_svgplot_to_px(m, x1, y1, &c, &d))
        kn_svgplot_out(p, f, "<line class='%s' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' %s/>\n", cls,
                       a, b, c, d, style);
}

void kn_svgplot_line(struct kn_svgplot *p, const char *cls, const char *style, double x0, double y0,
                     double x1, double y1)
{
    line_on(p, p->data, &p->map, cls, style, x0, y0, x1, y1);
}

void kn_svgplot_marker(struct kn_svgplot *p, enum kn_svgplot_shape shape, const char *cls,
                       const char *style, double x, double y, double size)
{
    double px, py;
    if (kn_svgplot_to_px(&p->map, x, y, &px, &py) && isfinite(size) && size > 0 && size < 100)
        kn_svgplot_shape_at(p, p->data, shape, cls, style, px, py, size, 0);
}

void kn_svgplot_circle(struct kn_svgplot *p, const char *cls, const char *style, double x, double y,
                       double r)
{
    double px, py, pr = r * p->map.scale;
    if (kn_svgplot_to_px(&p->map, x, y, &px, &py) && isfinite(pr) && pr >= 0 && pr < FAR_PX)
        kn_svgplot_out(p, p->data, "<circle class='%s' cx='%.1f' cy='%.1f' r='%.1f' %s/>\n", cls,
                       px, py, pr, style);
}

void kn_svgplot_footprint_on(const struct kn_svgplot *p, FILE *f, const struct kn_svgplot_map *m,
                             const char *cls, const char *style, double x, double y, double yaw,
                             double length, double width)
{
    if (!isfinite(yaw) || !(length > 0) || !(width > 0))
        return;
    double c = cos(yaw), s = sin(yaw), hl = length / 2, hw = width / 2;
    const double lx[4] = { hl, hl, -hl, -hl }, ly[4] = { hw, -hw, -hw, hw };
    double cx[4], cy[4];
    for (int k = 0; k < 4; k++) {
        cx[k] = x + c * lx[k] - s * ly[k];
        cy[k] = y + s * lx[k] + c * ly[k];
    }
    polygon_on(p, f, m, cls, style, cx, cy, 4);
    /* the front: a line from the centre to the middle of the front edge */
    line_on(p, f, m, cls, style, x, y, x + c * hl, y + s * hl);
}

void kn_svgplot_footprint(struct kn_svgplot *p, const char *cls, const char *style, double x,
                          double y, double yaw, double length, double width)
{
    kn_svgplot_footprint_on(p, p->data, &p->map, cls, style, x, y, yaw, length, width);
}

void kn_svgplot_shape_at(const struct kn_svgplot *p, FILE *f, enum kn_svgplot_shape shape,
                         const char *cls, const char *style, double px, double py, double size,
                         double angle)
{
    double h = size / 2;
    /* outlines stay hollow unless the style fills them (an attribute
     * given twice would make the document invalid) */
    const char *hollow = strstr(style, "fill='") || strstr(style, "fill=\"") ? "" : "fill='none' ";
    switch (shape) {
    case KN_SVGPLOT_LINE:
        kn_svgplot_out(p, f, "<line class='%s' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' %s/>\n", cls,
                       px - h, py, px + h, py, style);
        break;
    case KN_SVGPLOT_RING:
        kn_svgplot_out(p, f, "<circle class='%s' cx='%.1f' cy='%.1f' r='%.1f' %s%s/>\n", cls, px,
                       py, h, hollow, style);
        break;
    case KN_SVGPLOT_DOT:
        kn_svgplot_out(p, f, "<circle class='%s' cx='%.1f' cy='%.1f' r='%.1f' %s/>\n", cls, px, py,
                       h, style);
        break;
    case KN_SVGPLOT_SQUARE:
        kn_svgplot_out(p, f, "<rect class='%s' x='%.1f' y='%.1f' width='%.1f' height='%.1f' %s/>\n",
                       cls, px - h, py - h, size, size, style);
        break;
    case KN_SVGPLOT_RECT:
        kn_svgplot_out(p, f,
                       "<rect class='%s' x='%.1f' y='%.1f' width='%.1f' height='%.1f' %s%s/>\n",
                       cls, px - h, py - h * 0.6, size, size * 0.6, hollow, style);
        break;
    case KN_SVGPLOT_ARROW: {
        /* tip ahead of the point, the base behind it */
        double c = cos(angle), s = sin(angle);
        kn_svgplot_out(p, f, "<polygon class='%s' %s points='%.1f,%.1f %.1f,%.1f %.1f,%.1f'/>\n",
                       cls, style, px + c * h * 1.2, py + s * h * 1.2,
                       px - c * h * 0.8 - s * h * 0.9, py - s * h * 0.8 + c * h * 0.9,
                       px - c * h * 0.8 + s * h * 0.9, py - s * h * 0.8 - c * h * 0.9);
        break;
    }
    }
}

/* ---- the document ---- */

/* A tick value as text: as many decimals as the step needs, no "-0". */
static void tick_text(const struct kn_svgplot *p, double step, double v, char *buf, size_t len)
{
    int dec = (int)fmax(0, -floor(log10(step) + 1e-9));
    if (fabs(v) < step * 1e-6)
        v = 0;
    kn_svgplot_fmt(p, buf, len, "%.*f", dec > 9 ? 9 : dec, v);
}

/* Ticks along one axis: k * step for the k inside [lo, hi], at most
 * 100 (a degenerate view cannot loop long). */
static int ticks(double lo, double hi, double step, double out[101])
{
    double k0 = ceil(lo / step - 1e-9), k1 = floor(hi / step + 1e-9);
    int n = 0;
    for (; n < 101 && k0 + n <= k1; n++)
        out[n] = (k0 + n) * step;
    return n;
}

static void write_grid_and_axes(const struct kn_svgplot *p, FILE *f)
{
    const struct kn_svgplot_map *m = &p->map;
    double L = m->left, T = m->top, R = L + p->w, B = T + p->h;
    double tx[101], ty[101];
    double ystep = p->ystep > 0 ? p->ystep : p->step;
    double yscale = m->yscale > 0 ? m->yscale : m->scale;
    int nx = ticks(p->x0, p->x1, p->step, tx), ny = ticks(p->y0, p->y1, ystep, ty);
    kn_svgplot_out(p, f, "<g class='grid' stroke='#e3e3e3' stroke-width='1'>\n");
    for (int i = 0; i < nx; i++) {
        double px = L + (tx[i] - p->x0) * m->scale;
        kn_svgplot_out(p, f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'%s/>\n", px, T, px, B,
                       tx[i] == 0 ? " stroke='#bdbdbd'" : "");
    }
    for (int i = 0; i < ny; i++) {
        double py = T + (p->y1 - ty[i]) * yscale;
        kn_svgplot_out(p, f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'%s/>\n", L, py, R, py,
                       ty[i] == 0 ? " stroke='#bdbdbd'" : "");
    }
    fputs("</g>\n", f);
    kn_svgplot_out(p, f,
                   "<rect class='frame' x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
                   "fill='none' stroke='#555'/>\n",
                   L, T, p->w, p->h);
    char buf[64];
    kn_svgplot_out(p, f, "<g class='axis x' fill='#444' stroke='#555' text-anchor='middle'>\n");
    for (int i = 0; i < nx; i++) {
        double px = L + (tx[i] - p->x0) * m->scale;
        tick_text(p, p->step, tx[i], buf, sizeof buf);
        kn_svgplot_out(p, f,
                       "<line class='tick' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'/>"
                       "<text class='tick-label' x='%.1f' y='%.1f' stroke='none'>%s</text>\n",
                       px, B, px, B + 5, px, B + 18, buf);
    }
    kn_svgplot_out(p, f, "<text class='axis-title' x='%.1f' y='%.1f' stroke='none' fill='#000'>",
                   L + p->w / 2, B + 36);
    kn_svgplot_text(f, p->frame.x_label ? p->frame.x_label : "x [m]");
    fputs("</text>\n</g>\n", f);
    kn_svgplot_out(p, f, "<g class='axis y' fill='#444' stroke='#555' text-anchor='end'>\n");
    for (int i = 0; i < ny; i++) {
        double py = T + (p->y1 - ty[i]) * yscale;
        tick_text(p, ystep, ty[i], buf, sizeof buf);
        kn_svgplot_out(p, f,
                       "<line class='tick' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f'/>"
                       "<text class='tick-label' x='%.1f' y='%.1f' stroke='none'>%s</text>\n",
                       L - 5, py, L, py, L - 8, py + 4, buf);
    }
    kn_svgplot_out(p, f,
                   "<text class='axis-title' transform='translate(18 %.1f) rotate(-90)' "
                   "text-anchor='middle' stroke='none' fill='#000'>",
                   T + p->h / 2);
    kn_svgplot_text(f, p->frame.y_label ? p->frame.y_label : "y [m]");
    fputs("</text>\n</g>\n", f);
}

/* Legend entries in rows that fit width; returns the rows' height, and
 * writes them when f is not NULL. */
static double legend_rows(const struct kn_svgplot *p, FILE *f, double left, double top,
                          double width)
{
    if (p->nlegend == 0)
        return 0;
    double x = left, y = top;
    if (f)
        fputs("<g class='legend'>\n", f);
    for (int i = 0; i < p->nlegend; i++) {
        double w = 26 + kn_svgplot_text_width(p->legend[i].label, FONT) + 18;
        if (x > left && x + w > left + width) {
            x = left;
            y += LEGEND_ROW;
        }
        if (f) {
            kn_svgplot_shape_at(p, f, p->legend[i].shape, "legend-symbol", p->legend[i].style,
                                x + 10, y + 10, 14, 0);
            kn_svgplot_out(p, f, "<text class='legend-label' x='%.1f' y='%.1f'>", x + 24, y + 14);
            kn_svgplot_text(f, p->legend[i].label);
            fputs("</text>\n", f);
        }
        x += w;
    }
    if (f)
        fputs("</g>\n", f);
    return y - top + LEGEND_ROW;
}

/* The caption cut into lines of at most width at word boundaries; writes
 * them when f is not NULL; returns the number of lines. */
static int caption_lines(const struct kn_svgplot *p, FILE *f, double left, double top, double width)
{
    const char *s = p->frame.caption;
    if (!s || !*s)
        return 0;
    size_t per_line = (size_t)fmax(20, width / (FONT * 0.56));
    int lines = 0;
    char buf[1024];
    while (*s) {
        size_t len = strlen(s), take = len;
        if (len > per_line) {
            take = per_line;
            while (take > per_line / 2 && s[take] != ' ')
                take--;
            if (s[take] != ' ')
                take = per_line;
        }
        if (take >= sizeof buf)
            take = sizeof buf - 1;
        while (take > 1 && ((unsigned char)s[take] & 0xC0) == 0x80)
            take--; /* never inside a UTF-8 character */
        memcpy(buf, s, take);
        buf[take] = '\0';
        if (f) {
            kn_svgplot_out(p, f, "<text class='caption' x='%.1f' y='%.1f' fill='#333'>", left,
                           top + 12 + lines * CAPTION_LINE);
            kn_svgplot_text(f, buf);
            fputs("</text>\n", f);
        }
        lines++;
        s += take;
        while (*s == ' ')
            s++;
    }
    return lines;
}

static bool close_stream(FILE **f)
{
    bool ok = true;
    if (*f) {
        ok = !ferror(*f);
        ok &= fclose(*f) == 0;
        *f = NULL;
    }
    return ok;
}

static void write_document(const struct kn_svgplot *p, FILE *f)
{
    const struct kn_svgplot_map *m = &p->map;
    double W = m->left + p->w + (p->side_w > 0 ? SIDE_GAP + p->side_w : 0) + PAD_RIGHT;
    double text_w = W - 20;
    double below = m->top + p->h + BELOW_AXIS + 8;
    double leg_h = legend_rows(p, NULL, 10, below, text_w);
    int ncap = caption_lines(p, NULL, 10, below + leg_h + 4, text_w);
    const char *clip = p->clip_id;
    double H = below + leg_h + 4 + ncap * CAPTION_LINE + 14;
    kn_svgplot_out(p, f,
                   "<?xml version='1.0' encoding='UTF-8'?>\n"
                   "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
                   "viewBox='0 0 %.0f %.0f' font-family='sans-serif' font-size='%.0f'>\n",
                   W, H, W, H, FONT);
    fputs("<title>", f);
    kn_svgplot_text(f, p->frame.title ? p->frame.title : "plot");
    fputs("</title>\n", f);
    kn_svgplot_out(p, f,
                   "<defs><clipPath id='%s'><rect x='%.1f' y='%.1f' width='%.1f' "
                   "height='%.1f'/></clipPath></defs>\n"
                   "<rect class='background' width='100%%' height='100%%' fill='white'/>\n",
                   clip, m->left, m->top, p->w, p->h);
    write_grid_and_axes(p, f);
    kn_svgplot_out(p, f, "<g class='data' clip-path='url(#%s)'>\n", clip);
    if (p->data_len)
        fwrite(p->data_buf, 1, p->data_len, f);
    fputs("</g>\n", f);
    if (p->over_len)
        fwrite(p->over_buf, 1, p->over_len, f);
    if (p->side_len)
        fwrite(p->side_buf, 1, p->side_len, f);
    legend_rows(p, f, 10, below, text_w);
    caption_lines(p, f, 10, below + leg_h + 4, text_w);
    if (p->frame.title) {
        kn_svgplot_out(p, f,
                       "<text class='title' x='%.1f' y='26' font-size='16' "
                       "font-weight='bold'>",
                       m->left);
        kn_svgplot_text(f, p->frame.title);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
}

int kn_svgplot_end(struct kn_svgplot *p, FILE *f)
{
    bool ok = close_stream(&p->data);
    ok &= close_stream(&p->over);
    ok &= close_stream(&p->side);
    ok &= !p->failed;
    if (ok)
        write_document(p, f);
    free(p->data_buf);
    free(p->over_buf);
    free(p->side_buf);
    if (p->c_numeric)
        freelocale(p->c_numeric);
    p->data_buf = p->over_buf = p->side_buf = NULL;
    p->c_numeric = (locale_t)0;
    return ok && !ferror(f) ? 0 : -1;
}
