/* The stand-in simulators' kinematic Kenaf: see kenaf_kinematics.h. */
#include "kenaf_kinematics.h"

#include <math.h>

/* v moved toward target by at most max_step (INFINITY: onto it). */
static double approach(double v, double target, double max_step)
{
    if (target > v + max_step)
        return v + max_step;
    if (target < v - max_step)
        return v - max_step;
    return target;
}

void kin_pose_step(struct kin_pose *q, double v, double w, double dt)
{
    q->yaw += w * dt;
    q->yaw = atan2(sin(q->yaw), cos(q->yaw));
    q->x += v * cos(q->yaw) * dt;
    q->y += v * sin(q->yaw) * dt;
}

void kin_step(struct kin_robot *r, const struct kin_params *p, double dt)
{
    double v_old = r->v;
    for (int i = 0; i < 2; i++) {
        r->belt_speed[i] = approach(r->belt_speed[i], r->belt_target[i], p->belt_accel_m_s2 * dt);
        r->belt_pos[i] += r->belt_speed[i] * dt;
    }
    for (int k = 0; k < 4; k++)
        r->flipper[k] = approach(r->flipper[k], r->flipper_target[k], p->flipper_rate_rad_s * dt);
    r->v = (r->belt_speed[0] + r->belt_speed[1]) / 2;
    double turn = (r->belt_speed[1] - r->belt_speed[0]) / p->track_m;
    r->yaw_rate = p->z_down ? -turn : turn;
    kin_pose_step(&r->pose, r->v, r->yaw_rate, dt);
    r->accel = (r->v - v_old) / dt;
}
