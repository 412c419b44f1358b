/* kenaf-console: the operator console. A terminal panel (ncurses) with
 * the robot's live state, keyboard and gamepad driving. It is an ordinary
 * controller program: it talks to the robot only through the driver
 * library (kenaf.h, libkenaf.so.1), so the same binary drives the
 * simulation or the real robot; the one exception is the robot-side
 * e-stop latch (estop.h says why).
 *
 * One thread: poll() on the terminal, the gamepad and the e-stop socket,
 * with a 50 ms tick that reads the status, ramps the belts, sends
 * set-points (never a blocking motion) and redraws. With the flipper
 * assist on (key x), each new STATUS goes through the same kn_assist_
 * controller the engine's scenarios use, and its set-points go out as
 * FLIPPER; the belts stay the operator's, but for the assist's climb over
 * the edge (while the operator drives forward) and its backing down off a
 * step too high. */
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>
#include <libevdev/libevdev.h>

#include "assist.h"
#include "conf.h"
#include "drive.h"
#include "estop.h"
#include "joy.h"
#include "joydev.h"
#include "kenaf.h"
#include "keys.h"
#include "panel.h"

#define TICK_S 0.05
#define DEFAULT_ROBOT "127.0.0.1:9750"

#ifndef KN_VERSION
#define KN_VERSION "0"
#endif
#ifndef KN_CONSOLE_DEFAULT_CONFIG
#define KN_CONSOLE_DEFAULT_CONFIG "/etc/kenaf-sim/console.json"
#endif

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

struct app {
    struct kn_conf conf;
    struct kn_drive drive;
    struct kn_joy joy;
    struct kn_joydev joydev;
    struct kn_estop estop;
    bool robot_estop; /* the KRP/1 latch is in use */
    bool latched;     /* the console's own e-stop */
    bool pad_driving; /* the sticks gave the belt targets last tick */
    bool quit;
    bool help;      /* the help screen covers the panel */
    bool too_small; /* the terminal cannot hold the panel */
    hrt_status st;
    int status_rc;
    double sent[2]; /* last belt set-point given to the library */
    int belt_rc;    /* its answer, to report changes only */
    double flip_target[4];
    bool flip_commanded[4];
    char msg[256];
    const char *robot;
    bool utf8;
    double confirm_until; /* a trial reset asked for: the same key again before this */
    int reset_state;      /* the trial reset's state last said on the message line */
    /* the flipper assist (common/assist.h) */
    bool assist_on;
    struct kn_assist assist;
    double assist_t;     /* robot time of the last STATUS it was fed (-1: none) */
    bool assist_torque;  /* the robot measures flipper torques (seen non-zero) */
    double belt_limit;   /* the assist's belt limit, mm/s (INFINITY: none) */
    double belt_set;     /* the assist's own belt speed, mm/s (NAN: the operator's) */
    char assist_off[64]; /* why it went off last ("" before) */
};

#define CONFIRM_S 5.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((format(printf, 2, 3))) static void say(struct app *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->msg, sizeof a->msg, fmt, ap);
    va_end(ap);
}

/* What a set-point's answer means for the operator (NULL for 0). */
static const char *setpoint_note(int rc)
{
    switch (rc) {
    case 0: return NULL;
    case HRT_ERANGE: return "clamped to the robot's limit";
    case HRT_EESTOP: return "refused: the robot is in emergency stop";
    case HRT_ETIMEOUT: return "link lost: kept, sent when the robot answers";
    case HRT_EBACKEND: return "simulator not connected (sent anyway)";
    default: return hrt_strerror(rc);
    }
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* ---- flippers ---- */

static const char *const flipper_names[4] = { "FL", "FR", "RL", "RR" };

static bool refuse_if_stopped(struct app *a, const char *what)
{
    if (a->too_small) {
        say(a, "%s refused: terminal too small", what);
        return true;
    }
    if (a->latched) {
        say(a, "%s refused: e-stop engaged (press e to release)", what);
        return true;
    }
    if (a->st.flags & HRT_FLAG_ESTOP) {
        say(a, "%s refused: the robot is in emergency stop (press e, then e again, to release)",
            what);
        return true;
    }
    return false;
}

/* Sends the flippers in mask to their targets. */
static void send_flippers(struct app *a, unsigned mask, const char *why)
{
    int worst = 0;
    char list[128] = "";
    size_t used = 0;
    for (int k = 0; k < 4; k++) {
        if (!(mask & (1u << k)))
            continue;
        int rc = hrt_set_flipper_angle(k, a->flip_target[k]);
        a->flip_commanded[k] = true;
        if (rc < 0 && worst == 0)
            worst = rc;
        int w = snprintf(list + used, sizeof list - used, "%s%s %+.1f", used ? ", " : "",
                         flipper_names[k], a->flip_target[k]);
        if (w > 0 && (size_t)w < sizeof list - used)
            used += (size_t)w;
    }
    if (why) {
        const char *note = setpoint_note(worst);
        say(a, "%s: %s deg%s%s", why, list, note ? " - " : "", note ? note : "");
    } else if (worst) {
        say(a, "flippers: %s", setpoint_note(worst));
    }
}

static void step_flippers(struct app *a, unsigned mask, double delta, const char *why)
{
    if (refuse_if_stopped(a, "flippers"))
        return;
    for (int k = 0; k < 4; k++)
        if (mask & (1u << k))
            a->flip_target[k] =
                clampd(a->flip_target[k] + delta, a->conf.flipper_min_deg, a->conf.flipper_max_deg);
    send_flippers(a, mask, why);
}

static void preset(struct app *a, int index)
{
    if (index < 0 || index >= a->conf.npresets || refuse_if_stopped(a, "preset"))
        return;
    const struct kn_preset *p = &a->conf.presets[index];
    for (int k = 0; k < 4; k++) {
        a->flip_target[k] = clampd(p->deg[k], a->conf.flipper_min_deg, a->conf.flipper_max_deg);
        a->flip_commanded[k] = true;
    }
    int rc = hrt_set_flipper_angles(a->flip_target);
    const char *note = setpoint_note(rc);
    say(a, "preset %s: FL %+.1f FR %+.1f RL %+.1f RR %+.1f deg%s%s", p->name, a->flip_target[0],
        a->flip_target[1], a->flip_target[2], a->flip_target[3], note ? " - " : "",
        note ? note : "");
}

/* ---- the flipper assist ---- */

/* Ends the assist, saying why on the message line; the flippers hold the
 * set-points it sent last. */
static void assist_stop(struct app *a, const char *why)
{
    if (!a->assist_on)
        return;
    a->assist_on = false;
    a->belt_limit = INFINITY;
    a->belt_set = NAN;
    snprintf(a->assist_off, sizeof a->assist_off, "%s", why);
    say(a, "assist off (%s)", why);
}

/* A flipper key or preset while the assist runs: the assist ends and the
 * line says so before what the key did. */
static void assist_yield(struct app *a, bool was_on, const char *why)
{
    if (!was_on)
        return;
    char tmp[sizeof a->msg];
    snprintf(tmp, sizeof tmp, "%s", a->msg);
    say(a, "assist off (%s); %s", why, tmp);
}

static void assist_toggle(struct app *a)
{
    if (a->assist_on) {
        assist_stop(a, "x pressed");
        return;
    }
    if (refuse_if_stopped(a, "assist"))
        return;
    struct kn_assist_params p;
    kn_assist_defaults(&p);
    kn_assist_init(&a->assist, &p);
    a->assist_on = true;
    a->assist_t = -1;
    say(a, "assist on: %s (front flippers %+.0f deg; drive at the step)",
        kn_assist_phase_name(a->assist.phase), p.approach_deg);
}

/* One STATUS through the assist: only when a new one arrived, since the
 * controller integrates over the robot's own clock. */
static void assist_tick(struct app *a)
{
    if (!a->assist_on)
        return;
    if (a->status_rc < 0) {
        assist_stop(a, "link lost");
        return;
    }
    if (a->latched || (a->st.flags & HRT_FLAG_ESTOP)) {
        assist_stop(a, "emergency stop");
        return;
    }
    const hrt_status *st = &a->st;
    if (a->assist_t >= 0 && st->time_s <= a->assist_t)
        return;
    struct kn_assist_input in;
    memset(&in, 0, sizeof in);
    const double d = M_PI / 180;
    in.pitch_rad = st->pitch * d;
    in.roll_rad = st->roll * d;
    for (int k = 0; k < 4; k++) {
        in.flip_rad[k] = st->flipper_angle[k] * d;
        in.torque_nm[k] = st->flipper_torque[k];
        a->assist_torque |= st->flipper_torque[k] != 0;
    }
    in.has_torque = a->assist_torque;
    in.belt_m_s[0] = st->crawler_speed[0] / 1000;
    in.belt_m_s[1] = st->crawler_speed[1] / 1000;
    in.travelled_m = NAN; /* the encoders' scale is the robot's: not used here */
    in.dt_s = a->assist_t >= 0 ? st->time_s - a->assist_t : 0;
    a->assist_t = st->time_s;
    struct kn_assist_output out;
    kn_assist_update(&a->assist, &in, &out);
    for (int k = 0; k < 4; k++) {
        a->flip_target[k] =
            clampd(out.flip_rad[k] / d, a->conf.flipper_min_deg, a->conf.flipper_max_deg);
        a->flip_commanded[k] = true;
    }
    int rc = hrt_set_flipper_angles(a->flip_target);
    a->belt_limit = out.belt_limit_m_s * 1000;
    a->belt_set = out.belt_m_s * 1000;
    if (out.phase_changed)
        say(a, "assist: %s (FL %+.0f RL %+.0f deg)%s%s", kn_assist_phase_name(a->assist.phase),
            a->flip_target[0], a->flip_target[2], rc < 0 ? " - " : "",
            rc < 0 ? setpoint_note(rc) : "");
    if (a->assist.phase == KN_ASSIST_GAVE_UP) {
        /* backed down off a step too high: stand still, not drive at it
         * again on the operator's old command */
        kn_drive_stop(&a->drive);
        assist_stop(a, "step too high: backed down");
    }
}

/* ---- belts ---- */

static void stop_now(struct app *a)
{
    kn_drive_stop(&a->drive);
    hrt_stop();
    a->sent[0] = a->sent[1] = 0;
}

/* Gives the ramped set-point to the library. While it is non-zero it goes
 * every tick; a zero goes once: the library repeats it briefly and then
 * falls quiet, so an idle console never fights another controller. The
 * robot takes a zero set-point as "stand still" and disarms its watchdog
 * (docs/protocol.md, watchdog), so a released key leaves no WATCHDOG
 * behind, while a console that dies mid-drive still trips it. Not a STOP:
 * STOP would also freeze flippers still moving to a preset. */
static void send_belts(struct app *a)
{
    double out[2];
    kn_drive_assisted(a->drive.cmd, a->belt_limit, a->belt_set, out);
    double l = out[0], r = out[1];
    if (l == 0 && r == 0 && a->sent[0] == 0 && a->sent[1] == 0)
        return;
    int rc = hrt_set_crawler_speed(l, r);
    a->sent[0] = l;
    a->sent[1] = r;
    if (rc != a->belt_rc && rc < 0)
        say(a, "belts: %s", setpoint_note(rc));
    a->belt_rc = rc;
}

/* ---- e-stop ---- */

static void estop_toggle(struct app *a, double now)
{
    if (!a->latched) {
        a->latched = true;
        stop_now(a);
        if (a->robot_estop)
            kn_estop_request(&a->estop, true, now);
        say(a, "EMERGENCY STOP engaged%s - press e again to release",
            a->robot_estop ? " (robot latch sent)" : "");
    } else {
        a->latched = false;
        if (a->robot_estop)
            kn_estop_request(&a->estop, false, now);
        kn_drive_stop(&a->drive);
        say(a, "emergency stop released - the robot stays stopped until driven again");
    }
}

/* ---- a judged trial (trial.h) ---- */

/* The reset key: the first press asks, a second within CONFIRM_S sends
 * the reset to the start gate, which the trial counts as an assist. */
static void trial_reset_key(struct app *a, double now)
{
    struct kn_ctrial *c = &a->estop.trial;
    if (!a->robot_estop || !c->capable) {
        say(a, "no trial: this robot runs none");
        return;
    }
    if (refuse_if_stopped(a, "trial reset"))
        return;
    if (now >= a->confirm_until) {
        a->confirm_until = now + CONFIRM_S;
        say(a, "reset to the start gate costs an assist fault: press b again to confirm");
        return;
    }
    a->confirm_until = 0;
    stop_now(a);
    kn_ctrial_reset(c, &a->estop, now);
    say(a, "reset to the start gate sent");
}

/* The reset's fate on the message line, once, when it changes. */
static void trial_tick(struct app *a, double now)
{
    struct kn_ctrial *c = &a->estop.trial;
    kn_ctrial_poll(c, &a->estop, now);
    if ((int)c->reset != a->reset_state) {
        a->reset_state = (int)c->reset;
        if (c->reset != KN_CTRIAL_RESET_PENDING && c->reset != KN_CTRIAL_RESET_NONE) {
            char d[128];
            kn_ctrial_describe(c, d, sizeof d);
            say(a, "%s", d);
        }
    }
    if (a->confirm_until && now >= a->confirm_until) {
        a->confirm_until = 0;
        say(a, "trial reset not confirmed: nothing sent");
    }
}

/* ---- input ---- */

static void act(struct app *a, const struct kn_action *ac, double now)
{
    char name[64];
    bool was_on;
    if (a->help) {
        /* any key leaves the help screen; the keys that stop act too */
        a->help = false;
        if (ac->act != KN_ACT_STOP && ac->act != KN_ACT_ESTOP && ac->act != KN_ACT_QUIT)
            return;
    }
    if (ac->act != KN_ACT_TRIAL_RESET && a->confirm_until) {
        a->confirm_until = 0; /* any other key cancels a reset not yet confirmed */
        if (ac->act != KN_ACT_NONE)
            say(a, "trial reset cancelled: nothing sent");
    }
    switch (ac->act) {
    case KN_ACT_FORWARD:
    case KN_ACT_BACK:
    case KN_ACT_LEFT:
    case KN_ACT_RIGHT:
        if (!refuse_if_stopped(a, "driving"))
            kn_drive_key(&a->drive, ac->preset, now);
        break;
    case KN_ACT_STOP:
        stop_now(a);
        say(a, "STOP: belts to 0");
        if (a->assist_on) {
            assist_stop(a, "STOP");
            say(a, "STOP: belts to 0; assist off");
        }
        break;
    case KN_ACT_ESTOP:
        was_on = a->assist_on;
        assist_stop(a, "emergency stop");
        estop_toggle(a, now);
        assist_yield(a, was_on, "emergency stop");
        break;
    case KN_ACT_QUIT: a->quit = true; break;
    case KN_ACT_FASTER:
        kn_drive_faster(&a->drive);
        say(a, "speed level %.0f mm/s", a->drive.speed);
        break;
    case KN_ACT_SLOWER:
        kn_drive_slower(&a->drive);
        say(a, "speed level %.0f mm/s", a->drive.speed);
        break;
    case KN_ACT_FLIP_UP:
    case KN_ACT_FLIP_DOWN:
        was_on = a->assist_on;
        assist_stop(a, "flipper key");
        kn_conf_action_name(&a->conf, ac, name, sizeof name);
        step_flippers(a, ac->mask, (ac->act == KN_ACT_FLIP_UP ? 1 : -1) * a->conf.flipper_step_deg,
                      name);
        assist_yield(a, was_on, "flipper key");
        break;
    case KN_ACT_PRESET:
        was_on = a->assist_on;
        assist_stop(a, "flipper preset");
        preset(a, ac->preset);
        assist_yield(a, was_on, "flipper preset");
        break;
    case KN_ACT_ASSIST: assist_toggle(a); break;
    case KN_ACT_HELP:
        a->help = !a->too_small; /* it would be cut off as well */
        break;
    case KN_ACT_TRIAL_RESET: trial_reset_key(a, now); break;
    case KN_ACT_NONE: break;
    }
}

static void on_pad_press(void *ctx, const struct kn_action *ac)
{
    act(ctx, ac, now_s());
}

/* Follows the terminal's size: below the panel's minimum the operator
 * cannot see the robot, so the console stops belts it was driving and
 * drives no more until the terminal is large enough again. */
static void check_size(struct app *a)
{
    bool small = !kn_panel_fits();
    if (small == a->too_small)
        return;
    a->too_small = small;
    if (small) {
        a->help = false;
        /* the operator cannot see the robot any more: belts to 0 at once,
         * as the stop key does, not by the ramp */
        if (a->sent[0] != 0 || a->sent[1] != 0)
            stop_now(a);
    }
    say(a, "%s",
        small ? "terminal too small: driving off" : "terminal large enough again: driving on");
}

static void read_keys(struct app *a, double now)
{
    int ch;
    while ((ch = getch()) != ERR) {
        if (ch == KEY_RESIZE) {
            check_size(a);
            continue;
        }
        struct kn_action ac = kn_keys_lookup(ch, a->conf.npresets);
        act(a, &ac, now);
    }
}

/* Held gamepad buttons move flippers at the configured rate. */
static void pad_flippers(struct app *a, double dt)
{
    int dir[4];
    if (kn_joydev_fd(&a->joydev) < 0 || !kn_joy_flippers(&a->joy, dir))
        return;
    if (refuse_if_stopped(a, "flippers"))
        return;
    for (int k = 0; k < 4; k++)
        if (dir[k])
            assist_stop(a, "flipper button");
    unsigned mask = 0;
    for (int k = 0; k < 4; k++) {
        if (!dir[k])
            continue;
        double t = clampd(a->flip_target[k] + dir[k] * a->conf.flipper_rate_deg_s * dt,
                          a->conf.flipper_min_deg, a->conf.flipper_max_deg);
        if (t != a->flip_target[k] || !a->flip_commanded[k]) {
            a->flip_target[k] = t;
            mask |= 1u << k;
        }
    }
    if (mask)
        send_flippers(a, mask, NULL);
}

/* ---- the tick ---- */

static void tick(struct app *a, double now, double dt)
{
    check_size(a);
    a->status_rc = hrt_get_status(&a->st);
    if (kn_joydev_try_open(&a->joydev, &a->joy, now))
        say(a, "joystick %s \"%s\" connected", a->joydev.path, a->joydev.name);

    double pad[2];
    bool pad_on = kn_joydev_fd(&a->joydev) >= 0 &&
                  kn_joy_belts(&a->joy, a->drive.speed, a->drive.conf.max_speed_mm_s, pad);
    a->pad_driving = pad_on;
    assist_tick(a);
    kn_drive_step(&a->drive, now, dt, pad_on ? pad : NULL);
    if (a->latched || (a->st.flags & HRT_FLAG_ESTOP) || a->too_small || a->help)
        kn_drive_stop(&a->drive);
    send_belts(a);
    pad_flippers(a, dt);
    if (a->robot_estop) {
        kn_estop_tick(&a->estop, now);
        kn_estop_poll(&a->estop, a->latched || (a->st.flags & HRT_FLAG_ESTOP), now);
        trial_tick(a, now);
    }

    struct kn_view v;
    memset(&v, 0, sizeof v);
    v.conf = &a->conf;
    v.robot = a->robot;
    v.status_rc = a->status_rc;
    v.st = a->st;
    v.simulated = hrt_is_simulated();
    v.clock_s = hrt_time();
    v.speed_level = a->drive.speed;
    memcpy(v.cmd, a->drive.cmd, sizeof v.cmd);
    memcpy(v.target, a->drive.target, sizeof v.target);
    v.joy_driving = pad_on;
    memcpy(v.flip_target, a->flip_target, sizeof v.flip_target);
    memcpy(v.flip_commanded, a->flip_commanded, sizeof v.flip_commanded);
    v.latched = a->latched;
    v.robot_estop_used = a->robot_estop;
    kn_estop_describe(&a->estop, v.estop_line, sizeof v.estop_line);
    kn_estop_holders(&a->estop, v.estop_holders, sizeof v.estop_holders);
    kn_joydev_describe(&a->joydev, v.joy_line, sizeof v.joy_line);
    snprintf(v.msg, sizeof v.msg, "%s", a->msg);
    v.utf8 = a->utf8;
    v.help = a->help;
    v.trial = a->robot_estop && kn_ctrial_lines(&a->estop.trial, v.trial_lines, KN_CTRIAL_LINES);
    if (a->assist_on)
        snprintf(v.assist_line, sizeof v.assist_line, "ON: %s (x: off)",
                 kn_assist_phase_name(a->assist.phase));
    else
        snprintf(v.assist_line, sizeof v.assist_line, "off%s%s%s (x: on)",
                 a->assist_off[0] ? " (" : "", a->assist_off, a->assist_off[0] ? ")" : "");
    kn_panel_draw(&v);
}

static void lost_pad(struct app *a)
{
    /* a gamepad pulled out mid-drive must not leave the belts running */
    if (a->pad_driving) {
        a->pad_driving = false;
        stop_now(a);
        say(a, "joystick lost while driving: STOP");
    } else {
        say(a, "joystick lost; looking for it again every second");
    }
}

static int run(struct app *a)
{
    double next = now_s();
    double last = next;
    while (!a->quit && !stop_signal) {
        double now = now_s();
        if (now >= next) {
            tick(a, now, now - last);
            last = now;
            next += TICK_S;
            if (next < now)
                next = now + TICK_S; /* fell behind (suspended): no burst of ticks */
            continue;
        }
        struct pollfd pf[3];
        int n = 0;
        pf[n++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
        int joy_i = -1, est_i = -1;
        if (kn_joydev_fd(&a->joydev) >= 0) {
            joy_i = n;
            pf[n++] = (struct pollfd){ .fd = kn_joydev_fd(&a->joydev), .events = POLLIN };
        }
        if (a->robot_estop && a->estop.fd >= 0) {
            est_i = n;
            pf[n++] = (struct pollfd){ .fd = a->estop.fd, .events = POLLIN };
        }
        int wait_ms = (int)ceil((next - now) * 1000.0);
        int r = poll(pf, (nfds_t)n, wait_ms < 0 ? 0 : wait_ms);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        now = now_s();
        if (pf[0].revents & (POLLHUP | POLLERR | POLLNVAL))
            return -1; /* the terminal went away: stop and leave */
        if (pf[0].revents & POLLIN)
            read_keys(a, now);
        if (joy_i >= 0 && pf[joy_i].revents &&
            kn_joydev_read(&a->joydev, &a->joy, now, on_pad_press, a) < 0)
            lost_pad(a);
        if (est_i >= 0 && pf[est_i].revents)
            kn_estop_readable(&a->estop);
    }
    return 0;
}

/* ---- start-up ---- */

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: kenaf-console [--robot HOST:PORT] [--config FILE] [--no-robot-estop] [--ascii]\n"
        "       kenaf-console [--config FILE] --check-config\n"
        "       kenaf-console --version | --help\n"
        "The operator console: live robot state, keyboard and gamepad driving.\n"
        "The robot address comes from --robot, else $KENAF_ROBOT, else %s.\n"
        "The config defaults to %s if it exists,\n"
        "else ./config/console.json if it exists, else the built-in defaults.\n",
        DEFAULT_ROBOT, KN_CONSOLE_DEFAULT_CONFIG);
}

static void print_conf(const struct kn_conf *c)
{
    printf(
        "drive: speed %g mm/s (step %g, max %g), turn ratio %g, accel %g mm/s^2, decel %g mm/s^2\n",
        c->drive.speed_mm_s, c->drive.speed_step_mm_s, c->drive.max_speed_mm_s, c->drive.turn_ratio,
        c->drive.accel_mm_s2, c->drive.decel_mm_s2);
    printf("keyboard: hold %d ms, first hold %d ms\n", c->drive.hold_ms, c->drive.first_hold_ms);
    printf("flippers: %g..%g deg, key step %g deg, button rate %g deg/s\n", c->flipper_min_deg,
           c->flipper_max_deg, c->flipper_step_deg, c->flipper_rate_deg_s);
    for (int k = 0; k < c->npresets; k++)
        printf("preset %d %s: FL %g FR %g RL %g RR %g deg\n", k + 1, c->presets[k].name,
               c->presets[k].deg[0], c->presets[k].deg[1], c->presets[k].deg[2],
               c->presets[k].deg[3]);
    printf("joystick: device %s, throttle %s%s, turn %s%s, deadzone %g, turn ratio %g\n",
           c->joy_device, libevdev_event_code_get_name(EV_ABS, c->throttle.axis),
           c->throttle.invert ? " (inverted)" : "",
           libevdev_event_code_get_name(EV_ABS, c->turn.axis), c->turn.invert ? " (inverted)" : "",
           c->deadzone, c->joy_turn_ratio);
    for (int i = 0; i < c->nbindings; i++) {
        char name[64];
        kn_conf_action_name(c, &c->bindings[i].action, name, sizeof name);
        printf("  %-12s -> %s\n", c->bindings[i].source, name);
    }
}

static int load_config(struct kn_conf *c, const char *path)
{
    bool given = path != NULL;
    if (!path) {
        if (access(KN_CONSOLE_DEFAULT_CONFIG, F_OK) == 0)
            path = KN_CONSOLE_DEFAULT_CONFIG;
        else if (access("config/console.json", F_OK) == 0)
            path = "config/console.json";
    }
    if (!path) {
        kn_conf_defaults(c);
        return 0;
    }
    static char err[8192];
    if (kn_conf_load(c, path, err, sizeof err) != 0) {
        fputs(err, stderr);
        fprintf(stderr, "kenaf-console: %s config %s has problems (listed above)\n",
                given ? "the" : "the default", path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "robot", required_argument, NULL, 'r' },    { "config", required_argument, NULL, 'c' },
        { "no-robot-estop", no_argument, NULL, 'n' }, { "ascii", no_argument, NULL, 'a' },
        { "check-config", no_argument, NULL, 'C' },   { "version", no_argument, NULL, 'V' },
        { "help", no_argument, NULL, 'h' },           { NULL, 0, NULL, 0 },
    };
    const char *config = NULL, *robot_opt = NULL;
    bool check = false, ascii = false, no_robot_estop = false;
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'r': robot_opt = optarg; break;
        case 'c': config = optarg; break;
        case 'n': no_robot_estop = true; break;
        case 'a': ascii = true; break;
        case 'C': check = true; break;
        case 'V': printf("kenaf-console %s\n", KN_VERSION); return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 1;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 1;
    }

    static struct app a;
    if (load_config(&a.conf, config) != 0)
        return 1;
    if (check) {
        print_conf(&a.conf);
        return 0;
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "kenaf-console: needs a terminal on stdin and stdout\n");
        return 1;
    }
    if (robot_opt && setenv("KENAF_ROBOT", robot_opt, 1) != 0) {
        fprintf(stderr, "kenaf-console: setenv: %s\n", strerror(errno));
        return 1;
    }
    const char *robot_env = getenv("KENAF_ROBOT");
    a.robot = robot_env && *robot_env ? robot_env : DEFAULT_ROBOT;

    setlocale(LC_ALL, "");
    a.utf8 = !ascii && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;

    fprintf(stderr, "kenaf-console: connecting to the robot at %s ...\n", a.robot);
    int rc = hrt_kenaf_init();
    if (rc < 0) {
        fprintf(stderr, "kenaf-console: cannot connect to the robot at %s: %s\n", a.robot,
                hrt_strerror(rc));
        return 2;
    }
    a.robot_estop = !no_robot_estop;
    a.estop.fd = -1;
    if (a.robot_estop) {
        char err[256];
        if (kn_estop_open(&a.estop, a.robot, err, sizeof err) != 0) {
            fprintf(stderr, "kenaf-console: robot e-stop latch unavailable: %s\n", err);
            hrt_kenaf_exit();
            return 2;
        }
    }
    a.belt_limit = INFINITY;
    a.belt_set = NAN;
    kn_drive_init(&a.drive, &a.conf.drive);
    kn_joy_init(&a.joy, &a.conf);
    kn_joydev_init(&a.joydev, a.conf.joy_device);
    a.status_rc = hrt_get_status(&a.st);
    for (int k = 0; k < 4; k++)
        a.flip_target[k] =
            isfinite(a.st.flipper_angle[k])
                ? clampd(a.st.flipper_angle[k], a.conf.flipper_min_deg, a.conf.flipper_max_deg)
                : 0;
    /* a robot already in emergency stop: the console starts latched, so
     * one e releases it */
    a.latched = a.st.flags & HRT_FLAG_ESTOP;
    say(&a, "%s",
        a.latched ? "the robot is in emergency stop: press e to release"
                  : "connected; hold w/a/s/d or the arrows to drive");

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    initscr();
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    kn_panel_init();

    int loop = run(&a);

    hrt_stop();
    endwin();
    kn_joydev_close(&a.joydev);
    kn_estop_close(&a.estop);
    hrt_kenaf_exit();
    if (stop_signal)
        fprintf(stderr, "kenaf-console: %s: stopped the robot and quit\n", strsignal(stop_signal));
    else if (loop < 0)
        fprintf(stderr, "kenaf-console: the terminal went away: stopped the robot and quit\n");
    else
        fprintf(stderr, "kenaf-console: stopped the robot and quit\n");
    return 0;
}
