/* drive.h: belt set-points from operator input, without any I/O.
 *
 * A terminal reports key presses but never key releases, so a drive key
 * counts as held while it keeps arriving (the terminal's auto-repeat): the
 * first press holds for first_hold_ms (long enough to bridge the
 * auto-repeat delay), every repeat for hold_ms after it. Held keys give a
 * target speed per belt; the set-point ramps toward it (accel when
 * speeding up, decel when slowing down or reversing), so releasing the
 * keys decays the belts to 0. A joystick gives a target the same way. */
#ifndef KN_CONSOLE_DRIVE_H
#define KN_CONSOLE_DRIVE_H

#include <stdbool.h>

struct kn_drive_conf {
    double speed_mm_s;      /* initial speed level: keyboard speed, full stick */
    double speed_step_mm_s; /* FASTER / SLOWER step */
    double max_speed_mm_s;  /* no belt set-point beyond this */
    double turn_ratio;      /* keyboard turn component, fraction of the speed level */
    double accel_mm_s2;     /* ramp while speeding up */
    double decel_mm_s2;     /* ramp while slowing down or reversing */
    int hold_ms;            /* a repeated key is held this long after it arrived */
    int first_hold_ms;      /* the first press of a burst, this long */
};

enum { KN_DIR_FORWARD, KN_DIR_BACK, KN_DIR_LEFT, KN_DIR_RIGHT, KN_DIR_COUNT };

struct kn_drive {
    struct kn_drive_conf conf;
    double speed;                    /* current speed level, mm/s */
    double held_until[KN_DIR_COUNT]; /* monotonic seconds; 0 = not held */
    double target[2];                /* wanted belt speeds L, R, mm/s */
    double cmd[2];                   /* ramped set-point L, R, mm/s */
};

void kn_drive_init(struct kn_drive *d, const struct kn_drive_conf *c);
/* A drive key arrived at time now (s). The opposite direction is dropped:
 * the latest key wins. */
void kn_drive_key(struct kn_drive *d, int dir, double now);
/* Holds, targets and set-points to 0 at once (stop, e-stop, lost input). */
void kn_drive_stop(struct kn_drive *d);
/* Speed level one step up or down, within [step, max]. */
void kn_drive_faster(struct kn_drive *d);
void kn_drive_slower(struct kn_drive *d);
/* True while any drive key is held at time now. */
bool kn_drive_keys_held(const struct kn_drive *d, double now);
/* Differential mixing: v forward, t turn (+ = left, counter-clockwise),
 * both mm/s; scales both down together when a belt would pass max, so
 * the curvature is kept. */
void kn_drive_mix(double v, double t, double max, double out[2]);
/* The belts that go out, mm/s, from the operator's set-points cmd and
 * the flipper assist's answer (common/assist.h): within +-limit
 * (INFINITY: none), and the assist's own speed set (NAN: none) in place
 * of them when it backs down (set < 0, whatever cmd is) or climbs while
 * the operator drives forward (both belts > 0); rounded to whole mm/s. */
void kn_drive_assisted(const double cmd[2], double limit, double set, double out[2]);
/* Advances to time now by dt seconds. joy: a joystick's belt targets, or
 * NULL when the joystick is absent or centred (then the keys decide). */
void kn_drive_step(struct kn_drive *d, double now, double dt, const double *joy);

#endif
