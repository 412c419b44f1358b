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

bool kn_panel_fits(void)
{
    return COLS >= KN_PANEL_MIN_COLS && LINES >= KN_PANEL_MIN_ROWS;
}

/* A bold section label. */
static void label(int y, int x, const char *s)
{
    attron(A_BOLD);
    put(y, x, s);
    attroff(A_BOLD);
}

/* ---- the panel, top to bottom ---- */

static void draw_header(const struct kn_view *v, int y)
{
    fill_line(y, A_REVERSE);
    attron(A_REVERSE | A_BOLD);
    putf(y, 0, " KENAF CONSOLE  robot %s  %s  clock %.2f s", v->robot,
         v->simulated == 1   ? "simulation"
         : v->simulated == 0 ? "HARDWARE"
                             : "?",
         isfinite(v->clock_s) ? v->clock_s : 0.0);
    attroff(A_BOLD | A_REVERSE);
}

/* The flag line; returns the column after it. */
static int draw_flags(const struct kn_view *v, int y)
{
    const hrt_status *st = &v->st;
    bool sim = st->flags & HRT_FLAG_SIMULATED;
    bool backend_up = st->flags & HRT_FLAG_BACKEND_UP;
    bool link_lost = v->status_rc == HRT_ETIMEOUT;
    int x = 1;
    /* SIMULATED clear means the real robot, BACKEND_UP clear a robot
     * without its simulator: both are loud when clear, not dim */
    x = cell(y, x, sim ? "SIMULATED" : "HARDWARE", sim ? style(C_SIM) : style(C_WARN));
    x = cell(y, x, backend_up ? "BACKEND_UP" : "BACKEND_DOWN",
             style(backend_up ? C_GOOD : C_ALARM));
    x = flag(y, x, st->flags & HRT_FLAG_WATCHDOG, "WATCHDOG", "watchdog", C_WARN);
    x = flag(y, x, st->flags & HRT_FLAG_ESTOP, "ESTOP", "estop", C_ALARM);
    x = flag(y, x, st->flags & HRT_FLAG_STALE, "STALE", "stale", C_WARN);
    x = flag(y, x, st->flags & HRT_FLAG_CLAMPED, "CLAMPED", "clamped", C_WARN);
    return cell(y, x, link_lost ? "LINK LOST" : "LINK OK", style(link_lost ? C_ALARM : C_GOOD));
}

static void draw_estop_state(const struct kn_view *v, int y)
{
    bool robot_estop = v->st.flags & HRT_FLAG_ESTOP;
    int x;
    if (v->latched) {
        attron(style(C_ALARM));
        x = put(y, 1, " CONSOLE E-STOP ENGAGED ");
        attroff(style(C_ALARM));
    } else {
        x = put(y, 1, " console e-stop: released");
    }
    /* who holds it first: past the screen's edge the line is cut */
    const char *holders = robot_estop ? v->estop_holders : "";
    if (v->robot_estop_used)
        putf(y, x + 2, "robot latch: %s%s%s%s%s%s", robot_estop ? "ENGAGED" : "released",
             holders[0] ? " " : "", holders, v->estop_line[0] ? " (" : "", v->estop_line,
             v->estop_line[0] ? ")" : "");
    else
        putf(y, x + 2, "robot latch: %s (not sent from here: --no-robot-estop)",
             robot_estop ? "ENGAGED" : "released");
}

/* How many alarm banner lines the view calls for, into lines[2]. */
static int alarms(const struct kn_view *v, const char *lines[2])
{
    int n = 0;
    /* with the console released, e would engage it again: the robot's
     * stop is another station's to release */
    if (v->latched)
        lines[n++] = "!!  EMERGENCY STOP  !!  robot stopped, commands refused - press e to release";
    else if (v->st.flags & HRT_FLAG_ESTOP)
        lines[n++] =
            "!!  EMERGENCY STOP  !!  engaged by another station: robot stopped, commands refused";
    if (v->status_rc == HRT_ETIMEOUT)
        lines[n++] =
            "!!  LINK LOST  !!  the robot does not answer - values below are the last known";
    else if (!(v->st.flags & HRT_FLAG_BACKEND_UP))
        lines[n++] = "!!  SIMULATOR DOWN  !!  the robot has no simulator connected";
    return n;
}

static int draw_belts(const struct kn_view *v, int y)
{
    const hrt_status *st = &v->st;
    label(y, 1, "BELTS            left    right");
    putf(y++, 33, "speed level %.0f", v->speed_level);
    putf(y++, 1, "  measured   %+8.0f %+8.0f  mm/s", (double)st->crawler_speed[0],
         (double)st->crawler_speed[1]);
    putf(y++, 1, "  set-point  %+8.0f %+8.0f  mm/s%s", round(v->cmd[0]), round(v->cmd[1]),
         v->joy_driving ? "  (joystick)" : "");
    putf(y++, 1, "  target     %+8.0f %+8.0f  mm/s", round(v->target[0]), round(v->target[1]));
    putf(y++, 1, "  encoder    %8d %8d  counts", (int)st->crawler_count[0],
         (int)st->crawler_count[1]);
    return y + 1;
}

/* One row of four flipper values (NaN shows "--"). */
static void flipper_row(int y, const char *name, const double deg[4])
{
    char f[4][16];
    for (int k = 0; k < 4; k++)
        fmt_deg(f[k], sizeof f[k], deg[k]);
    putf(y, 1, "  %-9s %s %s %s %s deg", name, f[0], f[1], f[2], f[3]);
}

static int draw_flippers(const struct kn_view *v, int y)
{
    const hrt_status *st = &v->st;
    label(y++, 1, "FLIPPERS         FL      FR      RL      RR");
    flipper_row(y++, "angle", st->flipper_angle);
    double set[4];
    for (int k = 0; k < 4; k++)
        set[k] = v->flip_commanded[k] ? v->flip_target[k] : NAN;
    flipper_row(y++, "set-point", set);
    putf(y++, 1, "  torque    %+7.2f %+7.2f %+7.2f %+7.2f N*m", st->flipper_torque[0],
         st->flipper_torque[1], st->flipper_torque[2], st->flipper_torque[3]);
    putf(y++, 1, "  assist    %.36s", v->assist_line);
    return y + 1;
}

/* Attitude, battery and (in simulation) the position. */
static int draw_body(const struct kn_view *v, int y)
{
    const hrt_status *st = &v->st;
    label(y, 1, "ATTITUDE");
    putf(y++, 11, "roll %+.1f  pitch %+.1f  yaw %+.1f deg", st->roll, st->pitch, st->yaw);
    label(y, 1, "BATTERY");
    bool low = st->battery > 0 && st->battery < 20.0;
    if (low)
        attron(style(C_WARN));
    putf(y++, 11, "%.2f V", st->battery);
    if (low)
        attroff(style(C_WARN));
    if (st->flags & HRT_FLAG_SIMULATED) {
        label(y, 1, "POSITION");
        putf(y, 11, "x %.0f  y %.0f  z %.0f mm", st->position[0], st->position[1], st->position[2]);
    }
    return y + 1;
}

/* A judged trial's block (trial.h) from row y, left of the side views;
 * returns the row after it. */
static int draw_trial(const struct kn_view *v, int y)
{
    if (!v->trial)
        return y;
    for (int i = 0; i < KN_CTRIAL_LINES; i++) {
        if (i == 0)
            attron(A_BOLD);
        put(y++, 1, v->trial_lines[i]);
        if (i == 0)
            attroff(A_BOLD);
    }
    return y;
}

/* The two side views in the right column from row y; returns the row
 * after them. */
static int draw_side_views(const struct kn_view *v, int y)
{
    enum { AX = 50 };
    static const struct {
        const char *label;
        int front, rear;
    } sides[2] = { { "left side  FL/RL", HRT_FLIPPER_FL, HRT_FLIPPER_RL },
                   { "right side FR/RR", HRT_FLIPPER_FR, HRT_FLIPPER_RR } };
    struct kn_art art;
    for (int s = 0; s < 2; s++) {
        attron(A_BOLD);
        putf(y++, AX, "%s   %s", sides[s].label, v->utf8 ? "front \u25b6" : "front >");
        attroff(A_BOLD);
        kn_art_side(&art, v->st.flipper_angle[sides[s].front], v->st.flipper_angle[sides[s].rear],
                    v->utf8);
        for (int r = 0; r < KN_ART_ROWS; r++) {
            char row[KN_ART_COLS * 4 + 1];
            kn_art_row(&art, r, row, sizeof row);
            put(y++, AX, row);
        }
    }
    return y;
}

/* The presets after a line that ends in "presets:"; returns the column. */
static int draw_presets(const struct kn_view *v, int y, int x)
{
    for (int k = 0; k < v->conf->npresets; k++)
        x = putf(y, x, " %d %s", k + 1, v->conf->presets[k].name);
    return x;
}

/* Joystick, last message and the key map (in full when there is room,
 * else one line that points at the help screen). */
static void draw_footer(const struct kn_view *v, int y)
{
    put(y++, 1, v->joy_line);
    if (v->msg[0]) {
        attron(A_BOLD);
        putf(y, 1, "> %s", v->msg);
        attroff(A_BOLD);
    }
    y++;
    const char *const *keys = kn_keys_help(v->utf8);
    int n = 0;
    while (keys[n])
        n++;
    if (LINES - y < n) {
        put(y, 1, kn_keys_help_short());
        return;
    }
    for (int i = 0; i < n; i++, y++) {
        int x = put(y, 1, keys[i]);
        if (i == 0) /* the line that ends in "presets:" */
            draw_presets(v, y, x);
    }
}

static void draw_panel(const struct kn_view *v)
{
    draw_header(v, 0);
    draw_flags(v, 1);
    draw_estop_state(v, 2);
    const char *lines[2];
    int top = banner(3, lines, alarms(v, lines));
    int y = draw_belts(v, top);
    y = draw_flippers(v, y);
    y = draw_body(v, y);
    y = draw_trial(v, y);
    int ay = draw_side_views(v, top);
    draw_footer(v, y > ay ? y : ay);
}

/* ---- the screens that replace the panel ---- */

/* Below the minimum size the panel would be cut off: say so, with what
 * still works, and the robot's essentials. */
static void draw_too_small(const struct kn_view *v)
{
    const char *x = v->utf8 ? "\u00d7" : "x";
    attron(style(C_WARN));
    putf(0, 0, " terminal too small (need %d%s%d) ", KN_PANEL_MIN_COLS, x, KN_PANEL_MIN_ROWS);
    attroff(style(C_WARN));
    putf(1, 1, "this one is %d%s%d: enlarge it", COLS, x, LINES);
    put(2, 1, "driving is off until then");
    put(3, 1, "space STOP  e E-STOP  q quit");
    draw_flags(v, 5); /* the robot's state on one line, cut at the edge */
    if (v->latched || (v->st.flags & HRT_FLAG_ESTOP))
        cell(6, 1, "EMERGENCY STOP", style(C_ALARM));
    if (v->msg[0])
        putf(7, 1, "> %s", v->msg);
}

static const char *const flag_help[] = {
    "SIMULATED / HARDWARE  the robot is the simulation / the real robot",
    "BACKEND_UP / _DOWN    its simulator is connected / not connected",
    "WATCHDOG              it stopped itself: set-points stopped arriving",
    "ESTOP                 its emergency stop is engaged: it will not move",
    "STALE                 its sensor values are older than 500 ms",
    "CLAMPED               the last set-point was beyond a limit, cut to it",
    "LINK OK / LINK LOST   the robot answers / does not answer",
    NULL,
};

static void draw_help(const struct kn_view *v)
{
    int y = 0;
    fill_line(y, A_REVERSE);
    attron(A_REVERSE | A_BOLD);
    put(y++, 0, " KENAF CONSOLE - HELP        any key returns to the panel");
    attroff(A_BOLD | A_REVERSE);
    y++;
    label(y++, 1, "KEYS");
    const char *const *keys = kn_keys_help_screen(v->utf8);
    for (int i = 0; keys[i]; i++, y++) {
        int x = put(y, 3, keys[i]);
        if (!keys[i + 1]) /* the last line ends in "presets:" */
            draw_presets(v, y, x);
    }
    y++;
    label(y, 1, "FLAGS");
    put(y++, 7, "  capitals, highlighted: set; small, dim: clear");
    for (int i = 0; flag_help[i]; i++)
        put(y++, 3, flag_help[i]);
    y++;
    put(y++, 1, "Drive keys act while held; on release the belts ramp down and the robot");
    put(y++, 1, "is stopped. While this screen shows, nothing drives.");
}

void kn_panel_draw(const struct kn_view *v)
{
    erase();
    if (!kn_panel_fits())
        draw_too_small(v);
    else if (v->help)
        draw_help(v);
    else
        draw_panel(v);
    refresh();
}
