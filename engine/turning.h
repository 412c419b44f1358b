/* Turning on flat ground, measured from outside the contact model: a robot
 * drives a steady turn, the paths of its rear and front main pulleys are
 * fitted with circles (Kasa fit), and the common centre, put into the body
 * frame, is the turning centre. Also the yaw rate, the circle radius of the
 * body origin and the steering efficiency they imply. The turning-centre
 * test, the ICR monotonicity test and the "turning" sanity check use it. */
#ifndef KN_ENGINE_TURNING_H
#define KN_ENGINE_TURNING_H

#include "params.h"

/* Least-squares circle through n points (Kasa fit). Returns -1 when the
 * points are (nearly) on a line. */
int kn_circle_fit(const double *x, const double *y, int n, double *cx, double *cy, double *r,
                  double *rms);

struct kn_turn {
    double centre_body[2]; /* turning centre in the body frame (x forward, y left) [m] */
    double centre_gap;     /* distance between the rear and front circle centres [m] */
    double fit_rms;        /* worst RMS of the two circle fits [m] */
    double radius;         /* circle radius of the body origin [m] */
    double yaw_rate;       /* mean over the measured part [rad/s] */
    double speed;          /* mean forward speed of the body origin [m/s] */
    double radius_kin;     /* kinematic radius B (vR + vL) / (2 (vR - vL)) [m] */
    double chi_eff;        /* yaw rate / ((vR - vL) / B) */
};

/* Drives belts (vl, vr) on flat ground for settle_s, then measures for
 * measure_s (100 Hz samples). Returns -1 if the world cannot be built or
 * the fit fails. */
int kn_turn_measure(const struct kn_robot_params *rp, const struct kn_physics_params *pp, double vl,
                    double vr, double settle_s, double measure_s, struct kn_turn *out);

#endif
