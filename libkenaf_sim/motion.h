/* The closed loops behind hrt_go_forward and hrt_turning, without any I/O:
 * fed one STATUS at a time, they answer with belt speeds, "done" or
 * "stalled". Kept pure so the control law is testable against a plant
 * model in a unit test, apart from the socket and thread plumbing. */
#ifndef KN_MOTION_H
#define KN_MOTION_H

#include <stdbool.h>
#include <stdint.h>

#include "krp.h"

/* Speed profile in belt travel units (mm, mm/s, mm/s^2). */
struct kn_profile {
    double accel; /* ramp-up and braking acceleration */
    double vmax;  /* cruise speed */
    double vmin;  /* least speed while far from the target */
};

/* The library's profile: 400 mm/s^2, 200 mm/s, 20 mm/s. */
extern const struct kn_profile kn_motion_default_profile;

/* Belt speed toward a target `remaining` away (signed): ramps from
 * |v_prev| by accel*dt, cruises at vmax, brakes as sqrt(2*accel*|rem|),
 * never below vmin but never more than one status period (dt) of travel
 * beyond the target. The result has the sign of remaining. */
double kn_motion_profile_speed(const struct kn_profile *p, double remaining, double v_prev,
                               double dt);

/* The same when `remaining` is measured only every `interval` s of robot
 * time (a simulator whose sensors update slower than STATUS arrives): the
 * robot travels blind until the next measurement, so the braking curve
 * leaves room for the extra lag L = interval - dt (the speed v solves
 * v^2 = 2*accel*(|rem| - v*L)), and near the target the speed covers at
 * most |rem| in dt + 2*L, so the robot is still short of the target when
 * the next measurement comes, about halfway there. Equal to
 * kn_motion_profile_speed when interval <= dt. */
double kn_motion_profile_speed_sampled(const struct kn_profile *p, double remaining, double v_prev,
                                       double dt, double interval);

/* Encoder change from start to now, correct across the int32 wrap. */
int32_t kn_motion_count_delta(int32_t start, int32_t now);

/* Yaw change prev -> now (0.01 deg) taken the short way, in (-18000, 18000]. */
int32_t kn_motion_yaw_step_cdeg(int32_t prev, int32_t now);

enum kn_motion_kind { KN_MOTION_FORWARD, KN_MOTION_TURN };

enum kn_motion_result {
    KN_MOTION_RUN,   /* apply belt[] and feed the next STATUS */
    KN_MOTION_DONE,  /* target reached: stop the belts */
    KN_MOTION_STALL, /* no progress for KN_MOTION_STALL_S of robot time */
};

#define KN_MOTION_STALL_S 3.0
#define KN_MOTION_FORWARD_TOL_MM 1.0
#define KN_MOTION_TURN_TOL_DEG 0.5

/* Longest measurement interval the loop adapts to; a longer silence of
 * the sensor is left to the no-progress guard. Until a motion has timed
 * its sensor (two changes of the measurement), it plans with the slowest
 * interval USARSim uses by default (0.2 s encoder ScanInterval): that only
 * slows the first moments of very short motions. */
#define KN_MOTION_MAX_INTERVAL_S 1.0
#define KN_MOTION_FIRST_INTERVAL_S 0.2

struct kn_motion {
    enum kn_motion_kind kind;
    struct kn_profile prof;
    double target;         /* mm (forward) or deg (turn) */
    double mm_per_count;   /* forward only */
    int32_t count0[2];     /* forward: counts at the start */
    int32_t yaw_prev_cdeg; /* turn: yaw of the previous STATUS */
    int64_t turned_cdeg;   /* turn: unwrapped yaw change so far */
    double v;              /* last commanded speed (belt mm/s, signed) */
    double t_prev;         /* robot time of the previous STATUS, s */
    double best;           /* least |remaining| seen */
    double t_best;         /* robot time it was seen */
    double remaining;      /* after the last update: mm or deg, signed */
    /* how often the measurement really changes (sensor update interval) */
    int64_t meas;     /* forward: left + right counts; turn: turned_cdeg */
    double t_meas;    /* robot time it last changed, s */
    double quantum;   /* belt mm of one step of the measurement */
    double interval;  /* observed update interval, s */
    unsigned changes; /* times the measurement changed since the start */
    double period;    /* mean robot time between STATUS, s */
};

/* Starts a motion from the status st. mm_per_count is the belt travel of
 * one encoder count (forward only; ignored for turns). */
void kn_motion_start(struct kn_motion *m, enum kn_motion_kind kind, double target,
                     double mm_per_count, const struct kn_krp_status *st);

/* Feeds the next STATUS; on KN_MOTION_RUN belt[] holds L, R in mm/s. */
enum kn_motion_result kn_motion_update(struct kn_motion *m, const struct kn_krp_status *st,
                                       double belt[2]);

#endif
