/* The one conversion module: every unit and frame conversion in kenaf-sim.
 * KRP/1 wire units (mm, 0.01 deg, counts, mdeg/s, mV; body x-forward/y-left/
 * z-up) <-> the neutral SI state (state.h) <-> each simulator's frame and
 * units (per-backend tables below). Nothing outside this module converts.
 * Everything here is pure: no I/O, no allocation, no global state.
 * docs/architecture.md ("Frames and units") has the layers; the KRP/1 side
 * is in docs/protocol.md, each simulator's tables and formulas in
 * docs/usarsim.md and docs/gazebo.md.
 *
 * Non-finite numbers: conversions toward the simulator (commands, INIT
 * poses, joint targets) never produce NaN or infinity, a non-finite input
 * counts as 0 there. Conversions from the simulator keep NaN as NaN so the
 * caller can see it with isfinite(); the KRP/1 integer conversions turn
 * NaN into 0 and saturate infinities, so NaN never reaches a float->int
 * cast. */
#ifndef KN_CONVERT_H
#define KN_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "krp.h"
#include "state.h"

/* ---- KRP/1 scalar units --------------------------------------------- */

#define KN_PI 3.14159265358979323846

/* Standard gravity; a body at rest reads +KN_GRAVITY on its z accelerometer. */
#define KN_GRAVITY 9.80665

/* Rounds half away from zero and saturates at the int32 range, so an
 * absurd simulator value cannot wrap into a plausible one. NaN gives 0. */
int32_t kn_conv_round_i32(double v);

static inline double kn_conv_cdeg_to_deg(int32_t cdeg)
{
    return cdeg / 100.0;
}
static inline double kn_conv_cdeg_to_rad(int32_t cdeg)
{
    return cdeg / 100.0 * (KN_PI / 180.0);
}
static inline double kn_conv_mdeg_to_deg(int32_t mdeg)
{
    return mdeg / 1000.0;
}
static inline double kn_conv_mm_to_m(int32_t mm)
{
    return mm / 1000.0;
}
static inline double kn_conv_mnm_to_nm(int32_t mnm)
{
    return mnm / 1000.0;
}
static inline double kn_conv_mv_to_v(uint16_t mv)
{
    return mv / 1000.0;
}
static inline double kn_conv_us_to_s(uint64_t us)
{
    return (double)us / 1e6;
}

/* Plain scalings with kn_conv_round_i32's rounding and saturation; the
 * angle ones do not wrap (see kn_conv_rad_to_cdeg_wrapped). */
int32_t kn_conv_deg_to_cdeg(double deg);
int32_t kn_conv_rad_to_cdeg(double rad);
int32_t kn_conv_m_to_mm(double m);

/* Length of one encoder count in mm, for a robot's counts_per_m (> 0). */
static inline double kn_conv_mm_per_count(int32_t counts_per_m)
{
    return 1000.0 / counts_per_m;
}

/* Belt travel (m) to encoder counts; wraps modulo 2^32 like a real
 * encoder register instead of saturating. NaN and infinities give 0. */
int32_t kn_conv_m_to_counts(double m, int32_t counts_per_m);

/* Angle wrapped into (-pi, pi]; -0.0 becomes +0.0; NaN and infinities
 * give NaN. */
double kn_conv_wrap_pi(double rad);

/* Angle wrapped into [0, 2*pi) (USARSim's range); -0.0 becomes +0.0;
 * NaN and infinities give NaN. */
double kn_conv_wrap_2pi(double rad);

/* Angle to 0.01 deg in (-18000, +18000]: wraps first, and an angle that
 * rounds to -180.00 deg is reported as +180.00 deg. NaN gives 0. */
int32_t kn_conv_rad_to_cdeg_wrapped(double rad);

/* rad/s to milli-degree/s, m/s^2 to mm/s^2, N*m to mN*m (rounded,
 * saturated, NaN gives 0). */
int32_t kn_conv_rad_s_to_mdeg_s(double rad_s);
int32_t kn_conv_m_s2_to_mm_s2(double m_s2);
int32_t kn_conv_nm_to_mnm(double nm);

/* Volts to millivolts, saturated to 0..65535 (NaN and negatives give 0). */
uint16_t kn_conv_v_to_mv(double v);

/* Seconds to microseconds, rounded, saturated to 0..UINT64_MAX (NaN and
 * negatives give 0). */
uint64_t kn_conv_s_to_us(double s);

/* ---- KRP/1 <-> neutral state ---------------------------------------- */

/* Fills every measurement field of a STATUS from the neutral state
 * (req_seq and flags are the caller's: they are protocol state). Converts
 * every field whatever s->have says: fields the backend did not fill must
 * be 0 (or derived) in s. Attitude is put into canonical Z-Y-X form first
 * (pitch within +-90 deg), then roll and yaw are wrapped into
 * (-180 deg, +180 deg]; flipper angles are wrapped the same way. */
void kn_conv_state_to_krp(const struct kn_state *s, int32_t counts_per_m,
                          struct kn_krp_status *out);

/* CRAWLER set-points (mm/s) to belt speeds (m/s). */
void kn_conv_krp_crawler(const struct kn_krp_crawler *c, double belt_m_s[2]);

/* FLIPPER set-points to radians in cmd (only the masked ones; mask copied). */
void kn_conv_krp_flipper(const struct kn_krp_flipper *f, struct kn_command *cmd);

/* ---- Per-backend conversion table ----------------------------------- */

/* The simulator's axes. KRP/1 and the neutral state are z-up. */
enum kn_conv_frame {
    KN_FRAME_Z_DOWN = 0, /* USARSim (and the built-in engine, which speaks
                          * its protocol): x forward, y right, z down */
    KN_FRAME_Z_UP = 1,   /* Gazebo: x forward, y left, z up (same as KRP) */
};

/* Everything that differs between one simulated robot and another. Build
 * it with kn_conv_table_usarsim() / kn_conv_table_gazebo(), then copy the
 * robot's configured values over the defaults and check it with
 * kn_conv_table_check(). */
struct kn_conv_table {
    enum kn_conv_frame frame;
    double wheel_radius_m;                   /* USARSim DRIVE: wheel rad/s = belt m/s / radius */
    int32_t counts_per_m;                    /* KRP/1 encoder counts per metre of belt */
    double counts_per_tick;                  /* one simulator encoder tick in KRP counts */
    double tick_sign[2];                     /* L, R: +1, or -1 where a forward belt
                                  * makes the simulator's ticks decrease */
    double flipper_sign[KN_NFLIPPERS];       /* FL, FR, RL, RR: +1 or -1 */
    double flipper_offset_rad[KN_NFLIPPERS]; /* joint = sign*krp + offset */
    double tracks_separation_m;              /* Gazebo tracked-vehicle plugin parameters */
    double steering_efficiency;
    double max_linear_speed_m_s;
    double max_angular_speed_rad_s;
};

/* USARSim defaults: z-down frame, wheel radius 0.08 m, 10000 counts/m,
 * 1 count per tick, front flipper joints sign -1 and rear +1 (the UT2004
 * Kenaf joints turn front and rear flippers opposite ways for the same
 * motion), offsets 0. The Gazebo fields get the plugin's defaults. */
void kn_conv_table_usarsim(struct kn_conv_table *t);

/* Gazebo defaults: z-up frame, the TrackedVehiclePlugin defaults
 * (tracks_separation 0.4 m, steering_efficiency 0.5, max_linear_speed
 * 1 m/s, max_angular_speed 1 rad/s), flipper joints about the model's +y
 * axis (front sign -1, rear +1, offsets 0), 10000 counts/m, wheel radius
 * 0.08 m, 1 count per tick. */
void kn_conv_table_gazebo(struct kn_conv_table *t);

/* 0 when every field is usable; otherwise -1 and a one-line reason
 * ("wheel_radius_m must be > 0, got 0") in err (when errlen > 0). */
int kn_conv_table_check(const struct kn_conv_table *t, char *err, size_t errlen);

/* ---- Frames: vectors, attitudes, poses ------------------------------- */

/* A vector (position, velocity, angular rate, acceleration) from the
 * simulator's frame into the KRP/1 z-up frame, and back. For z-down this is
 * the rotation by pi about x: (x, -y, -z); it is its own inverse. Axial
 * vectors (angular rates) transform the same way since the rotation is
 * proper. */
void kn_conv_vec_from_sim(const struct kn_conv_table *t, const double sim[3], double out[3]);
void kn_conv_vec_to_sim(const struct kn_conv_table *t, const double v[3], double sim[3]);

/* Z-Y-X Euler angles (roll, pitch, yaw; R = Rz(yaw)*Ry(pitch)*Rx(roll))
 * from the simulator's frame into KRP/1's convention: canonical (roll and
 * yaw in (-pi, pi], pitch in [-pi/2, pi/2]). For z-down (USARSim) roll is
 * kept and pitch and yaw change sign; raw values in [0, 2*pi), negative or
 * beyond are accepted. */
void kn_conv_rpy_from_sim(const struct kn_conv_table *t, const double sim[3], double rpy[3]);

/* The reverse. For z-down each angle comes out in [0, 2*pi), as USARSim's
 * INIT {Rotation} expects; for z-up they come out canonical. */
void kn_conv_rpy_to_sim(const struct kn_conv_table *t, const double rpy[3], double sim[3]);

/* Both of the above for a whole pose (USARSim {Location}/{Orientation}
 * or {Rotation}; Gazebo position + Euler angles). */
void kn_conv_pose_from_sim(const struct kn_conv_table *t, const double sim_pos[3],
                           const double sim_rpy[3], double pos_m[3], double rpy[3]);
void kn_conv_pose_to_sim(const struct kn_conv_table *t, const double pos_m[3], const double rpy[3],
                         double sim_pos[3], double sim_rpy[3]);

/* USARSim's Odometry {Pose x,y,theta} is planar dead reckoning in the
 * simulator's frame counted from where the robot spawned: x along its
 * heading at spawn, theta from that heading. Into a world pose (neutral
 * frame) through the spawn pose (origin_pos, origin_yaw, neutral):
 * position = origin + Rz(origin_yaw) * the relative one, z the origin's,
 * roll = pitch = 0, yaw = origin_yaw + the relative one (canonical).
 * Non-finite inputs count as 0. */
void kn_conv_odometry_to_world(const struct kn_conv_table *t, const double origin_pos[3],
                               double origin_yaw, const double odo[3], double pos_m[3],
                               double rpy[3]);
/* The reverse: a world position and yaw to the {Pose x,y,theta} the
 * simulator reports for them (theta in (-pi, pi]). */
void kn_conv_odometry_from_world(const struct kn_conv_table *t, const double origin_pos[3],
                                 double origin_yaw, const double pos_m[3], double yaw,
                                 double odo[3]);

/* Z-Y-X Euler angles into canonical form in place: the same rotation with
 * pitch in [-pi/2, pi/2] and roll, yaw in (-pi, pi]. */
void kn_conv_rpy_canonical(double rpy[3]);

/* Quaternion (x, y, z, w), as Gazebo's msgs.Quaternion orders it, to
 * canonical roll, pitch, yaw. The quaternion need not be normalized; near
 * +-90 deg pitch the roll/yaw split becomes arbitrary and is given as
 * roll 0. Returns -1 (rpy set to 0) for a zero or non-finite quaternion. */
int kn_conv_quat_to_rpy(const double q[4], double rpy[3]);

/* Roll, pitch, yaw to a unit quaternion (x, y, z, w) with w >= 0;
 * non-finite angles count as 0. */
void kn_conv_rpy_to_quat(const double rpy[3], double q[4]);

/* Rotates a world-frame vector into the body frame of attitude rpy
 * (v_body = R^T * v_world). */
void kn_conv_world_to_body(const double rpy[3], const double world[3], double body[3]);

/* ---- Belts, wheels, encoders ----------------------------------------- */

/* USARSim DRIVE {Left}/{Right}: belt speed (m/s) to wheel spin (rad/s) and
 * back. A non-finite speed gives 0. */
double kn_conv_belt_to_wheel(const struct kn_conv_table *t, double belt_m_s);
double kn_conv_wheel_to_belt(const struct kn_conv_table *t, double wheel_rad_s);

/* Simulator encoder ticks (or a difference of ticks) on one side to belt
 * travel in metres (side KN_LEFT or KN_RIGHT; any other side gives 0). */
double kn_conv_ticks_to_m(const struct kn_conv_table *t, int side, double ticks);

/* Belt travel (m) on one side to simulator encoder ticks, the inverse of
 * kn_conv_ticks_to_m rounded to whole ticks (0 for a bad side or a value
 * beyond the int64 range). */
int64_t kn_conv_m_to_ticks(const struct kn_conv_table *t, int side, double belt_m);

/* Simulator encoder ticks on one side straight to KRP/1 counts, wrapping
 * modulo 2^32 like kn_conv_m_to_counts (exact while |ticks * counts per
 * tick| < 2^53; a bad side gives 0). */
int32_t kn_conv_ticks_to_counts(const struct kn_conv_table *t, int side, int64_t ticks);

/* The signed step from prev to now of an encoder that wraps modulo
 * `modulus`, the shorter way round (a step of exactly modulus/2 counts
 * as forward); modulus <= 0: no wrap, the plain difference modulo 2^64.
 * Accumulate these steps to get travel from a wrapping tick counter. */
int64_t kn_conv_tick_delta(int64_t prev, int64_t now, int64_t modulus);

/* ---- Gazebo tracked-vehicle plugin ----------------------------------- */

/* Belt speeds (L, R, m/s) to the plugin's command: the exact inverse of
 * its kinematics, linear.x = (L + R) / 2 and
 * angular.z = (L - R) * steering_efficiency / tracks_separation. Not
 * clamped: the plugin clamps (see kn_conv_twist_to_belts). */
void kn_conv_belts_to_twist(const struct kn_conv_table *t, const double belt_m_s[2],
                            double *linear_x, double *angular_z);

/* Fits belt speeds (L, R, m/s) inside the plugin's limits by scaling
 * both by one factor s in [0, 1], the largest for which the plugin would
 * clamp neither linear.x, angular.z nor a track. The plugin clamps linear
 * and angular speed separately, which bends the commanded path; one
 * common factor keeps the curvature (the ratio L : R) and only slows the
 * robot. Returns s (1: unchanged); out may equal in. */
double kn_conv_belts_fit_plugin(const struct kn_conv_table *t, const double in_m_s[2],
                                double out_m_s[2]);

/* What the plugin does with a command: clamps linear.x to
 * +-max_linear_speed and angular.z to +-max_angular_speed, then
 * L = v + w * tracks_separation / 2 / steering_efficiency,
 * R = v - w * tracks_separation / 2 / steering_efficiency,
 * each clamped to +-max_linear_speed. Returns 1 when a clamp changed
 * something, else 0. */
int kn_conv_twist_to_belts(const struct kn_conv_table *t, double linear_x, double angular_z,
                           double belt_m_s[2]);

/* The deprecated ~/cmd_vel form (msgs.Pose): position (v, 0, 0) and
 * the yaw of the orientation quaternion (x, y, z, w) as angular speed.
 * The plugin reads the yaw back in (-pi, pi], so |angular_z| > pi cannot
 * be sent this way; it is clamped to +-pi. */
void kn_conv_twist_to_pose_cmd(double linear_x, double angular_z, double pos[3], double q[4]);

/* The plugin's reading of such a Pose: linear = position.x, angular = yaw
 * of the orientation. Returns -1 (both 0) for an unusable quaternion. */
int kn_conv_pose_cmd_to_twist(const double pos[3], const double q[4], double *linear_x,
                              double *angular_z);

/* ---- gz-sim TrackedVehicle system ----------------------------------- */

/* Belt speeds (L, R, m/s) to the system's cmd_vel Twist, the exact inverse
 * of its kinematics L = v - w * tracks_separation / (2 * steering_efficiency),
 * R = v + w * tracks_separation / (2 * steering_efficiency) (z up, yaw +
 * turns left): linear.x = (L + R) / 2,
 * angular.z = (R - L) * steering_efficiency / tracks_separation. The system
 * clamps nothing unless its SDF sets limits. Non-finite speeds count as 0. */
void kn_conv_belts_to_gz_twist(const struct kn_conv_table *t, const double belt_m_s[2],
                               double *linear_x, double *angular_z);
/* The system's kinematics: a body speed and yaw rate to the belt speeds
 * that give them (L, R). Also how the gz backend reads belt speeds back from
 * the motion the poses show (the stock systems report no track speed). */
void kn_conv_gz_twist_to_belts(const struct kn_conv_table *t, double linear_x, double angular_z,
                               double belt_m_s[2]);

/* ---- Flippers -------------------------------------------------------- */

/* Flipper k is KN_FL..KN_RR; any other k gives 0 (or -1 below). */

/* KRP/1 flipper angle (rad, 0 in line pointing outward, + tip up) to the
 * simulator joint angle: sign * krp + offset. Non-finite counts as 0. */
double kn_conv_flipper_to_joint(const struct kn_conv_table *t, int k, double krp_rad);

/* Simulator joint angle to KRP/1 flipper angle in (-pi, pi]:
 * (joint - offset) / sign. */
double kn_conv_joint_to_flipper(const struct kn_conv_table *t, int k, double joint_rad);

/* Gazebo: flipper k's angle from its link's orientation relative to the
 * model (quaternion x, y, z, w; need not be normalized). The joint angle
 * is the rotation about the model's y axis (the twist of the rotation
 * about y, so a small wobble about other axes does not leak in), then
 * mapped like kn_conv_joint_to_flipper. The link's frame must be parallel
 * to the model's at joint angle 0, up to a rotation about y (which the
 * offset absorbs). Returns -1 (*krp_rad 0) for a zero or non-finite
 * quaternion, or a half turn about an axis normal to y. */
int kn_conv_gzc_flipper_from_quat(const struct kn_conv_table *t, int k, const double q_rel[4],
                                  double *krp_rad);

/* ---- Derived quantities (simulators that report no rates) ------------ */

/* Body angular rate (rad/s, body frame) that turns attitude rpy0 into
 * rpy1 in dt seconds at a constant rate (the shorter way round, so yaw
 * wrap is harmless). Returns -1 and leaves rate untouched when dt <= 0
 * or an input is not finite. */
int kn_conv_rate_from_attitudes(const double rpy0[3], const double rpy1[3], double dt,
                                double rate[3]);

/* Body acceleration as an accelerometer reads it (gravity included:
 * +KN_GRAVITY on z at rest) from three successive world positions p0, p1,
 * p2 dt01 and dt12 seconds apart (unequal steps allowed), in the body
 * frame of attitude rpy (the attitude at p1). Returns -1 and leaves acc
 * untouched when a step is <= 0 or an input is not finite. */
int kn_conv_accel_from_positions(const double p0[3], const double p1[3], const double p2[3],
                                 double dt01, double dt12, const double rpy[3], double acc[3]);

/* The same from two successive world velocities dt apart; rpy is the
 * attitude at the newer one. */
int kn_conv_accel_from_velocities(const double v0[3], const double v1[3], double dt,
                                  const double rpy[3], double acc[3]);

#endif
