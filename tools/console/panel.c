/* panel.c: draws the console's screen (see panel.h). */
#include "panel.h"

#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "art.h"
#include "keys.h"

enum { C_ALARM = 1, C_WARN, C_GOOD, C_SIM };

static bool colours;

void kn_panel_init(void)
{
    colours = has_colors();
    if (colours) {
        start_color();
        use_default_colors();
        init_pair(C_ALARM, COLOR_WHITE, COLOR_RED);
        init_pair(C_WARN, COLOR_BLACK, COLOR_YELLOW);
        init_pair(C_GOOD, COLOR_BLACK, COLOR_GREEN);
        init_pair(C_SIM, COLOR_BLACK, COLOR_CYAN);
    }
}

/* Attributes for a kind; without colours reverse video carries it. */
static attr_t style(int kind)
{
    if (kind == 0)
        return A_DIM;
    if (colours)
        return COLOR_PAIR(kind) | A_BOLD;
    return kind == C_GOOD || kind == C_SIM ? A_BOLD : A_REVERSE | A_BOLD;
}

/* Characters (not bytes) in a UTF-8 string: the panel only uses
 * single-width characters. */
static int width(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Writes s at (y, x), cut at the right edge instead of wrapping. */
static int put(int y, int x, const char *s)
{
    if (y < 0 || y >= LINES || x >= COLS)
        return x;
    int room = COLS - x, n = 0;
    const char *p = s;
    while (*p && n < room) {
        p++;
        while (((unsigned char)*p & 0xC0) == 0x80)
            p++;
        n++;
    }
    mvaddnstr(y, x, s, (int)(p - s));
    return x + n;
}

__attribute__((format(printf, 3, 4))) static int putf(int y, int x, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return put(y, x, buf);
}

/* One flag cell, " TEXT ", then a space. */
static int cell(int y, int x, const char *text, attr_t a)
{
    attron(a);
    char buf[48];
    snprintf(buf, sizeof buf, " %s ", text);
    x = put(y, x, buf);
    attroff(a);
    return x + 1;
}

/* A flag: capitals and highlighted when set, small letters and dim when
 * clear. */
static int flag(int y, int x, bool set, const char *on, const char *off, int kind)
{
    return cell(y, x, set ? on : off, set ? style(kind) : style(0));
}

static void fill_line(int y, attr_t a)
{
    if (y < 0 || y >= LINES)
        return;
    attron(a);
    mvhline(y, 0, ' ', COLS);
    attroff(a);
}

static void centre(int y, const char *s, attr_t a)
{
    int x = (COLS - width(s)) / 2;
    attron(a);
    put(y, x < 0 ? 0 : x, s);
    attroff(a);
}

/* The big banner: one line per alarm in a red band across the screen,
 * with a band line above and below when the screen has room for them and
 * the rest of the panel (24 lines). */
static int banner(int y, const char *const lines[], int n)
{
    if (n == 0)
        return y;
    attr_t a = style(C_ALARM) | A_BOLD;
    bool pad = LINES >= 24 + n + 2;
    if (pad)
        fill_line(y++, a);
    for (int i = 0; i < n; i++) {
        fill_line(y, a);
        centre(y++, lines[i], a);
    }
    if (pad)
        fill_line(y++, a);
    return y;
}

static void fmt_deg(char *buf, size_t len, double v)
{
    if (isfinite(v))
        snprintf(buf, len, "%+7.1f", v);
    else
        snprintf(buf, len, "%7s", "--");
}

void kn_panel_draw(const struct kn_view *v)
{
    const hrt_status *st = &v->st;
    bool link_lost = v->status_rc == HRT_ETIMEOUT;
    bool sim = st->flags & HRT_FLAG_SIMULATED;
    bool backend_up = st->flags & HRT_FLAG_BACKEND_UP;
    bool robot_estop = st->flags & HRT_FLAG_ESTOP;
    erase();

    /* header */
    int y = 0;
    fill_line(y, A_REVERSE);
    attron(A_REVERSE | A_BOLD);
    putf(y, 0, " KENAF CONSOLE  robot %s  %s  clock %.2f s", v->robot,
                 v->simulated == 1 ? "simulation" : v->simulated == 0 ? "HARDWARE" : "?",
                 isfinite(v->clock_s) ? v->clock_s : 0.0);
    attroff(A_REVERSE | A_BOLD);

    /* flags */
    y = 1;
    int x = 1;
    /* SIMULATED clear means the real robot, BACKEND_UP clear a robot
     * without its simulator: both are loud when clear, not dim */
    x = cell(y, x, sim ? "SIMULATED" : "HARDWARE", sim ? style(C_SIM) : style(C_WARN));
    x = cell(y, x, backend_up ? "BACKEND_UP" : "BACKEND_DOWN", style(backend_up ? C_GOOD : C_ALARM));
    x = flag(y, x, st->flags & HRT_FLAG_WATCHDOG, "WATCHDOG", "watchdog", C_WARN);
    x = flag(y, x, robot_estop, "ESTOP", "estop", C_ALARM);
    x = flag(y, x, st->flags & HRT_FLAG_STALE, "STALE", "stale", C_WARN);
    x = flag(y, x, st->flags & HRT_FLAG_CLAMPED, "CLAMPED", "clamped", C_WARN);
    cell(y, x, link_lost ? "LINK LOST" : "LINK OK", style(link_lost ? C_ALARM : C_GOOD));

    /* e-stop state */
    y = 2;
    if (v->latched) {
        attron(style(C_ALARM));
        x = put(y, 1, " CONSOLE E-STOP ENGAGED ");
        attroff(style(C_ALARM));
    } else {
        x = put(y, 1, " console e-stop: released");
    }
    if (v->robot_estop_used)
        putf(y, x + 2, "robot latch: %s%s%s%s", robot_estop ? "ENGAGED" : "released",
             v->estop_line[0] ? " (" : "", v->estop_line, v->estop_line[0] ? ")" : "");
    else
        putf(y, x + 2, "robot latch: %s (not sent from here: --no-robot-estop)",
             robot_estop ? "ENGAGED" : "released");

    /* alarms */
    const char *alarms[3];
    int na = 0;
    if (v->latched || robot_estop)
        alarms[na++] = "!!  EMERGENCY STOP  !!  robot stopped, commands refused - press e to release";
    if (link_lost)
        alarms[na++] = "!!  LINK LOST  !!  the robot does not answer - values below are the last known";
    else if (!backend_up)
        alarms[na++] = "!!  SIMULATOR DOWN  !!  the robot has no simulator connected";
    y = banner(3, alarms, na);

    /* values, left column */
    int top = y;
    y = top;
    char a[16], b[16], c[16], d[16];
    attron(A_BOLD);
    put(y, 1, "BELTS            left    right");
    attroff(A_BOLD);
    putf(y++, 33, "speed level %.0f", v->speed_level);
    putf(y++, 1, "  measured   %+8.0f %+8.0f  mm/s", (double)st->crawler_speed[0],
         (double)st->crawler_speed[1]);
    putf(y++, 1, "  set-point  %+8.0f %+8.0f  mm/s%s", round(v->cmd[0]), round(v->cmd[1]),
         v->joy_driving ? "  (joystick)" : "");
    putf(y++, 1, "  target     %+8.0f %+8.0f  mm/s", round(v->target[0]), round(v->target[1]));
    putf(y++, 1, "  encoder    %8d %8d  counts", (int)st->crawler_count[0], (int)st->crawler_count[1]);
    y++;
    attron(A_BOLD);
    put(y++, 1, "FLIPPERS         FL      FR      RL      RR");
    attroff(A_BOLD);
    fmt_deg(a, sizeof a, st->flipper_angle[0]);
    fmt_deg(b, sizeof b, st->flipper_angle[1]);
    fmt_deg(c, sizeof c, st->flipper_angle[2]);
    fmt_deg(d, sizeof d, st->flipper_angle[3]);
    putf(y++, 1, "  angle     %s %s %s %s deg", a, b, c, d);
    double set[4];
    for (int k = 0; k < 4; k++)
        set[k] = v->flip_commanded[k] ? v->flip_target[k] : NAN;
    fmt_deg(a, sizeof a, set[0]);
    fmt_deg(b, sizeof b, set[1]);
    fmt_deg(c, sizeof c, set[2]);
    fmt_deg(d, sizeof d, set[3]);
    putf(y++, 1, "  set-point %s %s %s %s deg", a, b, c, d);
    putf(y++, 1, "  torque    %+7.2f %+7.2f %+7.2f %+7.2f N*m", st->flipper_torque[0],
         st->flipper_torque[1], st->flipper_torque[2], st->flipper_torque[3]);
    y++;
    attron(A_BOLD);
    put(y, 1, "ATTITUDE");
    attroff(A_BOLD);
    putf(y++, 11, "roll %+.1f  pitch %+.1f  yaw %+.1f deg", st->roll, st->pitch, st->yaw);
    attron(A_BOLD);
    put(y, 1, "BATTERY");
    attroff(A_BOLD);
    bool low = st->battery > 0 && st->battery < 20.0;
    if (low)
        attron(style(C_WARN));
    putf(y, 11, "%.2f V", st->battery);
    if (low)
        attroff(style(C_WARN));
    y++;
    if (sim) {
        attron(A_BOLD);
        put(y, 1, "POSITION");
        attroff(A_BOLD);
        putf(y, 11, "x %.0f  y %.0f  z %.0f mm", st->position[0], st->position[1], st->position[2]);
    }
    y++;

    /* side views, right column */
    int ax = 50, ay = top;
    struct kn_art art;
    static const struct {
        const char *label;
        int front, rear;
    } sides[2] = { { "left side  FL/RL", HRT_FLIPPER_FL, HRT_FLIPPER_RL },
                   { "right side FR/RR", HRT_FLIPPER_FR, HRT_FLIPPER_RR } };
    for (int s = 0; s < 2; s++) {
        attron(A_BOLD);
        putf(ay++, ax, "%s   %s", sides[s].label, v->utf8 ? "front \u25b6" : "front >");
        attroff(A_BOLD);
        kn_art_side(&art, st->flipper_angle[sides[s].front], st->flipper_angle[sides[s].rear], v->utf8);
        for (int r = 0; r < KN_ART_ROWS; r++) {
            char row[KN_ART_COLS * 4 + 1];
            kn_art_row(&art, r, row, sizeof row);
            put(ay++, ax, row);
        }
    }

    /* joystick, message and keys */
    y = y > ay ? y : ay;
    put(y++, 1, v->joy_line);
    if (v->msg[0]) {
        attron(A_BOLD);
        putf(y, 1, "> %s", v->msg);
        attroff(A_BOLD);
    }
    y++;
    const char *const *help = kn_keys_help(v->utf8);
    for (int i = 0; help[i]; i++) {
        x = put(y, 1, help[i]);
        if (i == 0) /* the line that ends in "presets:" */
            for (int k = 0; k < v->conf->npresets; k++)
                x = putf(y, x, " %d %s", k + 1, v->conf->presets[k].name);
        y++;
    }
    refresh();
}
