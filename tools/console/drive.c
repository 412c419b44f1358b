/* drive.c: key holds, mixing and ramping (see drive.h). */
#include "drive.h"

#include <math.h>
#include <string.h>

void kn_drive_init(struct kn_drive *d, const struct kn_drive_conf *c)
{
    memset(d, 0, sizeof *d);
    d->conf = *c;
    d->speed = c->speed_mm_s < c->max_speed_mm_s ? c->speed_mm_s : c->max_speed_mm_s;
}

void kn_drive_key(struct kn_drive *d, int dir, double now)
{
    if (dir < 0 || dir >= KN_DIR_COUNT)
        return;
    int opposite = dir ^ 1; /* FORWARD<->BACK, LEFT<->RIGHT */
    d->held_until[opposite] = 0;
    bool held = d->held_until[dir] > now;
    double hold = held ? d->conf.hold_ms : d->conf.first_hold_ms;
    d->held_until[dir] = now + hold / 1000.0;
}

void kn_drive_stop(struct kn_drive *d)
{
    for (int k = 0; k < KN_DIR_COUNT; k++)
        d->held_until[k] = 0;
    d->target[0] = d->target[1] = 0;
    d->cmd[0] = d->cmd[1] = 0;
}

void kn_drive_faster(struct kn_drive *d)
{
    d->speed += d->conf.speed_step_mm_s;
    if (d->speed > d->conf.max_speed_mm_s)
        d->speed = d->conf.max_speed_mm_s;
}

void kn_drive_slower(struct kn_drive *d)
{
    d->speed -= d->conf.speed_step_mm_s;
    if (d->speed < d->conf.speed_step_mm_s)
        d->speed = d->conf.speed_step_mm_s;
    if (d->speed > d->conf.max_speed_mm_s)
        d->speed = d->conf.max_speed_mm_s;
}

bool kn_drive_keys_held(const struct kn_drive *d, double now)
{
    for (int k = 0; k < KN_DIR_COUNT; k++)
        if (d->held_until[k] > now)
            return true;
    return false;
}

void kn_drive_mix(double v, double t, double max, double out[2])
{
    double l = v - t, r = v + t;
    double big = fmax(fabs(l), fabs(r));
    if (big > max && big > 0) {
        l *= max / big;
        r *= max / big;
    }
    out[0] = l;
    out[1] = r;
}

/* One belt's set-point toward its target: speeding up (same sign, larger
 * magnitude) at accel, anything else at decel. */
static double ramp(double cmd, double target, double accel, double decel, double dt)
{
    if (cmd == target)
        return cmd;
    bool speeding_up = (cmd >= 0 && target > cmd) || (cmd <= 0 && target < cmd);
    double step = (speeding_up ? accel : decel) * dt;
    if (fabs(target - cmd) <= step)
        return target;
    return cmd + (target > cmd ? step : -step);
}

void kn_drive_step(struct kn_drive *d, double now, double dt, const double *joy)
{
    if (joy) {
        d->target[0] = joy[0];
        d->target[1] = joy[1];
    } else {
        double fwd = (d->held_until[KN_DIR_FORWARD] > now) - (d->held_until[KN_DIR_BACK] > now);
        double turn = (d->held_until[KN_DIR_LEFT] > now) - (d->held_until[KN_DIR_RIGHT] > now);
        kn_drive_mix(fwd * d->speed, turn * d->speed * d->conf.turn_ratio, d->conf.max_speed_mm_s,
                     d->target);
    }
    if (dt < 0)
        dt = 0;
    for (int k = 0; k < 2; k++)
        d->cmd[k] = ramp(d->cmd[k], d->target[k], d->conf.accel_mm_s2, d->conf.decel_mm_s2, dt);
}

void kn_drive_assisted(const double cmd[2], double limit, double set, double out[2])
{
    for (int i = 0; i < 2; i++)
        out[i] = round(cmd[i] < -limit ? -limit : cmd[i] > limit ? limit : cmd[i]);
    /* the climb replaces a forward drive (an operator standing still stays
     * still); backing down off a step too high applies whatever the keys
     * say, until STOP or x */
    if (isfinite(set) && (set < 0 || (out[0] > 0 && out[1] > 0)))
        out[0] = out[1] = round(set);
}
