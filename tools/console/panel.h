/* panel.h: the console's screen (ncurses). The main loop fills a view
 * from hrt_get_status and its own state; the panel only draws it. Flags
 * are written in capitals and highlighted when set, in small letters and
 * dim when clear; an emergency stop, a lost link or a missing simulator
 * also get a full-width banner. Two screens replace the panel: the help
 * screen (keys, what the flags mean) while the view asks for it, and a
 * "terminal too small" screen below KN_PANEL_MIN_COLS x _ROWS, where the
 * panel would be cut off (the main loop does not drive meanwhile). */
#ifndef KN_CONSOLE_PANEL_H
#define KN_CONSOLE_PANEL_H

#include <stdbool.h>

#include "conf.h"
#include "kenaf.h"
#include "trial.h"

/* The smallest terminal the whole panel fits in. */
#define KN_PANEL_MIN_COLS 80
#define KN_PANEL_MIN_ROWS 24

struct kn_view {
    const struct kn_conf *conf;
    const char *robot; /* address as configured */
    int status_rc;     /* hrt_get_status's answer */
    hrt_status st;
    int simulated;  /* hrt_is_simulated */
    double clock_s; /* hrt_time */
    double speed_level;
    double cmd[2], target[2]; /* belts: ramped set-point and target, mm/s */
    bool joy_driving;         /* the sticks are out of their deadzone */
    double flip_target[4];
    bool flip_commanded[4];
    bool latched;          /* the console's e-stop */
    bool robot_estop_used; /* the robot latch is sent too */
    char estop_line[128];
    char estop_holders[512]; /* who holds the robot's e-stop ("by 2: ..."), or empty */
    char joy_line[768];
    char msg[256];
    bool utf8;
    bool help; /* show the help screen instead of the panel */
    /* a judged trial (trial.h): its block, when the robot runs one */
    bool trial;
    char trial_lines[KN_CTRIAL_LINES][KN_CTRIAL_COLS + 1];
    bool reset_confirm;   /* the reset key was pressed once: asking to confirm */
    char assist_line[96]; /* the flipper assist: on and its phase, or off and why */
};

/* Screen set up (after initscr). */
void kn_panel_init(void);
/* True when the terminal is at least the minimum size. */
bool kn_panel_fits(void);
/* The panel, the help screen or the too-small screen. */
void kn_panel_draw(const struct kn_view *v);

#endif
