/* The robot inside the stand-in simulators (tests/daemon/standin_sim,
 * tests/usarsim_server): a kinematic skid-steer Kenaf. Belts reach their
 * commanded speed at a bounded acceleration, the planar pose follows the
 * mean belt speed and turns with the belt difference over the track
 * width, flippers slew to their targets at a bounded rate. No contact and
 * no physics: motion a daemon can see and a test can predict. */
#ifndef KN_TEST_KENAF_KINEMATICS_H
#define KN_TEST_KENAF_KINEMATICS_H

#include <stdbool.h>

struct kin_params {
    double track_m;         /* belt centre to belt centre */
    double belt_accel_m_s2; /* INFINITY: belts take their targets at once */
    double flipper_rate_rad_s;
    /* USARSim's frame (x forward, y right, z down): yaw grows when the
     * robot turns right. Otherwise z up: yaw grows turning left. */
    bool z_down;
};

struct kin_pose {
    double x, y;
    double yaw; /* (-pi, pi] */
};

struct kin_robot {
    double belt_target[2], belt_speed[2], belt_pos[2]; /* left, right: m/s, m */
    double flipper[4], flipper_target[4];              /* rad */
    struct kin_pose pose;
    /* of the last step: mean belt speed, turn rate, forward acceleration */
    double v, yaw_rate, accel;
};

/* Advances the robot by dt seconds. */
void kin_step(struct kin_robot *r, const struct kin_params *p, double dt);

/* Moves a pose at speed v (m/s) and turn rate w (rad/s) for dt: the turn
 * first, then the travel along the new heading. For a second pose that
 * follows the same motion from its own origin (odometry). */
void kin_pose_step(struct kin_pose *q, double v, double w, double dt);

#endif
