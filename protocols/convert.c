/* Unit and frame conversions between KRP/1, the neutral state and each
 * simulator (see convert.h for the contract, docs/architecture.md "Frames and
 * units" and docs/usarsim.md, docs/gazebo.md for the formulas).
 * Every float->int conversion goes through one saturating, NaN-safe path,
 * because a float->int cast of an out-of-range value is undefined in C. */
#include "convert.h"

#include <math.h>
#include <stdio.h>

#define TWO_PI (2.0 * KN_PI)
#define HALF_PI (0.5 * KN_PI)
#define TWO_POW_32 4294967296.0

/* ---- scalars ---------------------------------------------------------- */

int32_t kn_conv_round_i32(double v)
{
    if (isnan(v))
        return 0;
    double r = round(v);
    if (r >= 2147483647.0)
        return INT32_MAX;
    if (r <= -2147483648.0)
        return INT32_MIN;
    return (int32_t)r;
}

int32_t kn_conv_deg_to_cdeg(double deg)
{
    return kn_conv_round_i32(deg * 100.0);
}

int32_t kn_conv_rad_to_cdeg(double rad)
{
    return kn_conv_round_i32(rad * (18000.0 / KN_PI));
}

int32_t kn_conv_m_to_mm(double m)
{
    return kn_conv_round_i32(m * 1000.0);
}

/* A count of any size, reduced modulo 2^32 into int32 the way a 32-bit
 * register would hold it. fmod is exact, so this is exact for every
 * integer a double holds. */
static int32_t wrap_counts(double c)
{
    if (!isfinite(c))
        return 0;
    double r = fmod(round(c), TWO_POW_32);
    if (r < 0)
        r += TWO_POW_32;
    /* r is an integer in [0, 2^32): convert without implementation-defined
     * narrowing of values above INT32_MAX. */
    int64_t u = (int64_t)r;
    if (u > INT32_MAX)
        u -= (int64_t)TWO_POW_32;
    return (int32_t)u;
}

int32_t kn_conv_m_to_counts(double m, int32_t counts_per_m)
{
    return wrap_counts(m * (double)counts_per_m);
}

double kn_conv_wrap_pi(double rad)
{
    if (!isfinite(rad))
        return NAN;
    double r = fmod(rad, TWO_PI); /* (-2pi, 2pi), sign of rad */
    if (r > KN_PI)
        r -= TWO_PI;
    else if (r <= -KN_PI)
        r += TWO_PI;
    return r == 0.0 ? 0.0 : r; /* -0.0 -> +0.0 */
}

double kn_conv_wrap_2pi(double rad)
{
    if (!isfinite(rad))
        return NAN;
    double r = fmod(rad, TWO_PI);
    if (r < 0)
        r += TWO_PI;
    /* a tiny negative r rounds up to exactly 2pi, which is outside the range */
    if (r >= TWO_PI || r == 0.0)
        r = 0.0;
    return r;
}

int32_t kn_conv_rad_to_cdeg_wrapped(double rad)
{
    int32_t c = kn_conv_rad_to_cdeg(kn_conv_wrap_pi(rad));
    /* wrap_pi can leave an angle a hair above -pi that still rounds to
     * -180.00 deg; the wire range is (-180, +180]. */
    return c <= -18000 ? c + 36000 : c;
}

int32_t kn_conv_rad_s_to_mdeg_s(double rad_s)
{
    return kn_conv_round_i32(rad_s * (180000.0 / KN_PI));
}

int32_t kn_conv_m_s2_to_mm_s2(double m_s2)
{
    return kn_conv_round_i32(m_s2 * 1000.0);
}

int32_t kn_conv_nm_to_mnm(double nm)
{
    return kn_conv_round_i32(nm * 1000.0);
}

uint16_t kn_conv_v_to_mv(double v)
{
    if (!(v > 0)) /* also NaN */
        return 0;
    double r = round(v * 1000.0);
    return r >= 65535.0 ? UINT16_MAX : (uint16_t)r;
}

uint64_t kn_conv_s_to_us(double s)
{
    if (!(s > 0))
        return 0;
    double r = round(s * 1e6);
    /* 2^64 is the first double that does not fit */
    return r >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)r;
}

/* ---- rotations -------------------------------------------------------- */

/* R = Rz(yaw) * Ry(pitch) * Rx(roll), row-major. */
static void rpy_to_matrix(const double rpy[3], double m[3][3])
{
    double cr = cos(rpy[0]), sr = sin(rpy[0]);
    double cp = cos(rpy[1]), sp = sin(rpy[1]);
    double cy = cos(rpy[2]), sy = sin(rpy[2]);
    m[0][0] = cy * cp;
    m[0][1] = cy * sp * sr - sy * cr;
    m[0][2] = cy * sp * cr + sy * sr;
    m[1][0] = sy * cp;
    m[1][1] = sy * sp * sr + cy * cr;
    m[1][2] = sy * sp * cr - cy * sr;
    m[2][0] = -sp;
    m[2][1] = cp * sr;
    m[2][2] = cp * cr;
}

void kn_conv_rpy_canonical(double rpy[3])
{
    double r = kn_conv_wrap_pi(rpy[0]);
    double p = kn_conv_wrap_pi(rpy[1]);
    double y = kn_conv_wrap_pi(rpy[2]);
    /* (r, p, y) and (r + pi, pi - p, y + pi) are the same rotation */
    if (p > HALF_PI) {
        p = KN_PI - p;
        r += KN_PI;
        y += KN_PI;
    } else if (p < -HALF_PI) {
        p = -KN_PI - p;
        r += KN_PI;
        y += KN_PI;
    }
    rpy[0] = kn_conv_wrap_pi(r);
    rpy[1] = p == 0.0 ? 0.0 : p;
    rpy[2] = kn_conv_wrap_pi(y);
}

/* Scales a quaternion so its largest component is +-1: the matrix formula
 * below divides by the squared norm, and this keeps that in [1, 4] even
 * for huge or tiny inputs. False for zero or non-finite. */
static int quat_scaled(const double q[4], double out[4])
{
    double m = 0;
    for (int i = 0; i < 4; i++) {
        if (!isfinite(q[i]))
            return 0;
        if (fabs(q[i]) > m)
            m = fabs(q[i]);
    }
    if (m == 0)
        return 0;
    for (int i = 0; i < 4; i++)
        out[i] = q[i] / m;
    return 1;
}

int kn_conv_quat_to_rpy(const double q_in[4], double rpy[3])
{
    double q[4];
    if (!quat_scaled(q_in, q)) {
        rpy[0] = rpy[1] = rpy[2] = 0;
        return -1;
    }
    double x = q[0], y = q[1], z = q[2], w = q[3];
    double s = 2.0 / (x * x + y * y + z * z + w * w);
    double r00 = 1 - s * (y * y + z * z);
    double r01 = s * (x * y - w * z);
    double r02 = s * (x * z + w * y);
    double r10 = s * (x * y + w * z);
    double r11 = 1 - s * (x * x + z * z);
    double r12 = s * (y * z - w * x);
    double r20 = s * (x * z - w * y);

    /* Yaw first; then pitch and roll from Rz(yaw)^T * R, so whatever yaw
     * came out (noisy near +-90 deg pitch), roll compensates and the three
     * angles rebuild R. At the lock itself, take the heading as yaw. */
    double yaw = hypot(r00, r10) < 1e-12 ? atan2(-r01, r11) : atan2(r10, r00);
    double cy = cos(yaw), sy = sin(yaw);
    double pitch = atan2(-r20, fabs(cy * r00 + sy * r10));
    double roll = atan2(sy * r02 - cy * r12, cy * r11 - sy * r01);
    rpy[0] = kn_conv_wrap_pi(roll);
    rpy[1] = pitch == 0.0 ? 0.0 : pitch;
    rpy[2] = kn_conv_wrap_pi(yaw);
    return 0;
}

static double finite_or_zero(double v)
{
    return isfinite(v) ? v : 0.0;
}

void kn_conv_rpy_to_quat(const double rpy[3], double q[4])
{
    double hr = 0.5 * finite_or_zero(rpy[0]);
    double hp = 0.5 * finite_or_zero(rpy[1]);
    double hy = 0.5 * finite_or_zero(rpy[2]);
    double cr = cos(hr), sr = sin(hr);
    double cp = cos(hp), sp = sin(hp);
    double cy = cos(hy), sy = sin(hy);
    q[0] = sr * cp * cy - cr * sp * sy;
    q[1] = cr * sp * cy + sr * cp * sy;
    q[2] = cr * cp * sy - sr * sp * cy;
    q[3] = cr * cp * cy + sr * sp * sy;
    if (q[3] < 0)
        for (int i = 0; i < 4; i++)
            q[i] = -q[i];
}

void kn_conv_world_to_body(const double rpy[3], const double world[3], double body[3])
{
    double m[3][3];
    rpy_to_matrix(rpy, m);
    double v[3] = { world[0], world[1], world[2] }; /* world may alias body */
    for (int i = 0; i < 3; i++)
        body[i] = m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2];
}

/* ---- per-backend tables ---------------------------------------------- */

static void table_common(struct kn_conv_table *t)
{
    t->wheel_radius_m = 0.08;
    t->counts_per_m = 10000;
    t->counts_per_tick = 1.0;
    t->tick_sign[KN_LEFT] = t->tick_sign[KN_RIGHT] = 1.0;
    /* Front flippers point forward, rear ones backward: the same joint
     * rotation lifts one tip and lowers the other. */
    t->flipper_sign[KN_FL] = t->flipper_sign[KN_FR] = -1.0;
    t->flipper_sign[KN_RL] = t->flipper_sign[KN_RR] = 1.0;
    for (int k = 0; k < KN_NFLIPPERS; k++)
        t->flipper_offset_rad[k] = 0.0;
    /* TrackedVehiclePlugin's own defaults */
    t->tracks_separation_m = 0.4;
    t->steering_efficiency = 0.5;
    t->max_linear_speed_m_s = 1.0;
    t->max_angular_speed_rad_s = 1.0;
}

void kn_conv_table_usarsim(struct kn_conv_table *t)
{
    table_common(t);
    t->frame = KN_FRAME_Z_DOWN;
}

void kn_conv_table_gazebo(struct kn_conv_table *t)
{
    table_common(t);
    t->frame = KN_FRAME_Z_UP;
}

static int check_fail(char *err, size_t errlen, const char *field, const char *want, double got)
{
    if (err && errlen > 0)
        snprintf(err, errlen, "%s must be %s, got %g", field, want, got);
    return -1;
}

static int is_unit_sign(double s)
{
    return s == 1.0 || s == -1.0;
}

int kn_conv_table_check(const struct kn_conv_table *t, char *err, size_t errlen)
{
    static const char *const fl[KN_NFLIPPERS] = { "FL", "FR", "RL", "RR" };
    char field[48];

    if (t->frame != KN_FRAME_Z_DOWN && t->frame != KN_FRAME_Z_UP)
        return check_fail(err, errlen, "frame", "z-down (0) or z-up (1)", (double)t->frame);
    if (!(isfinite(t->wheel_radius_m) && t->wheel_radius_m > 0))
        return check_fail(err, errlen, "wheel_radius_m", "> 0", t->wheel_radius_m);
    if (t->counts_per_m <= 0)
        return check_fail(err, errlen, "counts_per_m", "> 0", t->counts_per_m);
    if (!(isfinite(t->counts_per_tick) && t->counts_per_tick > 0))
        return check_fail(err, errlen, "counts_per_tick", "> 0", t->counts_per_tick);
    for (int s = 0; s < 2; s++)
        if (!is_unit_sign(t->tick_sign[s])) {
            snprintf(field, sizeof field, "tick_sign[%s]", s == KN_LEFT ? "L" : "R");
            return check_fail(err, errlen, field, "+1 or -1", t->tick_sign[s]);
        }
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        if (!is_unit_sign(t->flipper_sign[k])) {
            snprintf(field, sizeof field, "flipper_sign[%s]", fl[k]);
            return check_fail(err, errlen, field, "+1 or -1", t->flipper_sign[k]);
        }
        if (!(isfinite(t->flipper_offset_rad[k]) && fabs(t->flipper_offset_rad[k]) <= TWO_PI)) {
            snprintf(field, sizeof field, "flipper_offset_rad[%s]", fl[k]);
            return check_fail(err, errlen, field, "within +-2*pi", t->flipper_offset_rad[k]);
        }
    }
    if (!(isfinite(t->tracks_separation_m) && t->tracks_separation_m > 0))
        return check_fail(err, errlen, "tracks_separation_m", "> 0", t->tracks_separation_m);
    if (!(isfinite(t->steering_efficiency) && t->steering_efficiency > 0))
        return check_fail(err, errlen, "steering_efficiency", "> 0", t->steering_efficiency);
    if (!(isfinite(t->max_linear_speed_m_s) && t->max_linear_speed_m_s > 0))
        return check_fail(err, errlen, "max_linear_speed_m_s", "> 0", t->max_linear_speed_m_s);
    if (!(isfinite(t->max_angular_speed_rad_s) && t->max_angular_speed_rad_s >= 0))
        return check_fail(err, errlen, "max_angular_speed_rad_s", ">= 0",
                          t->max_angular_speed_rad_s);
    if (err && errlen > 0)
        err[0] = '\0';
    return 0;
}

/* ---- frames ----------------------------------------------------------- */

void kn_conv_vec_from_sim(const struct kn_conv_table *t, const double sim[3], double out[3])
{
    double x = sim[0], y = sim[1], z = sim[2];
    if (t->frame == KN_FRAME_Z_DOWN) {
        /* rotation by pi about x; "0 - v" keeps an input 0 from becoming -0 */
        y = 0.0 - y;
        z = 0.0 - z;
    }
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

void kn_conv_vec_to_sim(const struct kn_conv_table *t, const double v[3], double sim[3])
{
    /* the frame change is its own inverse; commands carry no NaN */
    double in[3] = { finite_or_zero(v[0]), finite_or_zero(v[1]), finite_or_zero(v[2]) };
    kn_conv_vec_from_sim(t, in, sim);
}

void kn_conv_rpy_from_sim(const struct kn_conv_table *t, const double sim[3], double rpy[3])
{
    double r = sim[0], p = sim[1], y = sim[2];
    if (t->frame == KN_FRAME_Z_DOWN) {
        /* diag(1,-1,-1) * Rz(y)Ry(p)Rx(r) * diag(1,-1,-1) = Rz(-y)Ry(-p)Rx(r) */
        p = -p;
        y = -y;
    }
    rpy[0] = r;
    rpy[1] = p;
    rpy[2] = y;
    kn_conv_rpy_canonical(rpy);
}

void kn_conv_rpy_to_sim(const struct kn_conv_table *t, const double rpy[3], double sim[3])
{
    double a[3] = { finite_or_zero(rpy[0]), finite_or_zero(rpy[1]), finite_or_zero(rpy[2]) };
    kn_conv_rpy_canonical(a);
    if (t->frame == KN_FRAME_Z_DOWN) {
        sim[0] = kn_conv_wrap_2pi(a[0]);
        sim[1] = kn_conv_wrap_2pi(-a[1]);
        sim[2] = kn_conv_wrap_2pi(-a[2]);
    } else {
        sim[0] = a[0];
        sim[1] = a[1];
        sim[2] = a[2];
    }
}

void kn_conv_pose_from_sim(const struct kn_conv_table *t, const double sim_pos[3],
                           const double sim_rpy[3], double pos_m[3], double rpy[3])
{
    kn_conv_vec_from_sim(t, sim_pos, pos_m);
    kn_conv_rpy_from_sim(t, sim_rpy, rpy);
}

void kn_conv_pose_to_sim(const struct kn_conv_table *t, const double pos_m[3], const double rpy[3],
                         double sim_pos[3], double sim_rpy[3])
{
    kn_conv_vec_to_sim(t, pos_m, sim_pos);
    kn_conv_rpy_to_sim(t, rpy, sim_rpy);
}

void kn_conv_odometry_to_world(const struct kn_conv_table *t, const double origin_pos[3],
                               double origin_yaw, const double odo[3], double pos_m[3],
                               double rpy[3])
{
    /* the relative pose into the neutral frame like any other pose, then
     * placed at the origin: the frame change and the placement commute */
    double sim_rel[3] = { finite_or_zero(odo[0]), finite_or_zero(odo[1]), 0.0 };
    double sim_rpy[3] = { 0.0, 0.0, finite_or_zero(odo[2]) };
    double rel[3], rel_rpy[3];
    kn_conv_pose_from_sim(t, sim_rel, sim_rpy, rel, rel_rpy);
    double yaw0 = finite_or_zero(origin_yaw), c = cos(yaw0), s = sin(yaw0);
    pos_m[0] = finite_or_zero(origin_pos[0]) + c * rel[0] - s * rel[1];
    pos_m[1] = finite_or_zero(origin_pos[1]) + s * rel[0] + c * rel[1];
    pos_m[2] = finite_or_zero(origin_pos[2]);
    rpy[0] = 0.0;
    rpy[1] = 0.0;
    rpy[2] = kn_conv_wrap_pi(yaw0 + rel_rpy[2]);
}

void kn_conv_odometry_from_world(const struct kn_conv_table *t, const double origin_pos[3],
                                 double origin_yaw, const double pos_m[3], double yaw,
                                 double odo[3])
{
    double yaw0 = finite_or_zero(origin_yaw), c = cos(yaw0), s = sin(yaw0);
    double dx = finite_or_zero(pos_m[0]) - finite_or_zero(origin_pos[0]);
    double dy = finite_or_zero(pos_m[1]) - finite_or_zero(origin_pos[1]);
    double rel[3] = { c * dx + s * dy, -s * dx + c * dy, 0.0 };
    double rel_rpy[3] = { 0.0, 0.0, kn_conv_wrap_pi(finite_or_zero(yaw) - yaw0) };
    double sim[3], sim_rpy[3];
    kn_conv_vec_to_sim(t, rel, sim);
    kn_conv_rpy_to_sim(t, rel_rpy, sim_rpy);
    odo[0] = sim[0];
    odo[1] = sim[1];
    odo[2] = kn_conv_wrap_pi(sim_rpy[2]);
}

/* ---- KRP/1 <-> neutral state ----------------------------------------- */

void kn_conv_state_to_krp(const struct kn_state *s, int32_t counts_per_m, struct kn_krp_status *out)
{
    out->time_us = kn_conv_s_to_us(s->time_s);
    for (int i = 0; i < 2; i++) {
        out->crawler_count[i] = kn_conv_m_to_counts(s->belt_pos_m[i], counts_per_m);
        out->crawler_speed_mm_s[i] = kn_conv_m_to_mm(s->belt_speed_m_s[i]);
    }
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        out->flipper_cdeg[k] = kn_conv_rad_to_cdeg_wrapped(s->flipper_rad[k]);
        out->flipper_torque_mnm[k] = kn_conv_nm_to_mnm(s->flipper_torque_nm[k]);
    }
    double rpy[3] = { s->rpy_rad[0], s->rpy_rad[1], s->rpy_rad[2] };
    kn_conv_rpy_canonical(rpy);
    for (int i = 0; i < 3; i++) {
        out->rpy_cdeg[i] = kn_conv_rad_to_cdeg_wrapped(rpy[i]);
        out->rate_mdeg_s[i] = kn_conv_rad_s_to_mdeg_s(s->rate_rad_s[i]);
        out->accel_mm_s2[i] = kn_conv_m_s2_to_mm_s2(s->accel_m_s2[i]);
        out->pos_mm[i] = kn_conv_m_to_mm(s->pos_m[i]);
    }
    out->battery_mv = kn_conv_v_to_mv(s->battery_v);
}

void kn_conv_krp_crawler(const struct kn_krp_crawler *c, double belt_m_s[2])
{
    belt_m_s[KN_LEFT] = kn_conv_mm_to_m(c->left_mm_s);
    belt_m_s[KN_RIGHT] = kn_conv_mm_to_m(c->right_mm_s);
}

void kn_conv_krp_flipper(const struct kn_krp_flipper *f, struct kn_command *cmd)
{
    for (int k = 0; k < KN_NFLIPPERS; k++)
        if (f->mask & (1u << k))
            cmd->flipper_rad[k] = kn_conv_cdeg_to_rad(f->target_cdeg[k]);
    cmd->flipper_mask = f->mask;
}

/* ---- belts, wheels, encoders ----------------------------------------- */

double kn_conv_belt_to_wheel(const struct kn_conv_table *t, double belt_m_s)
{
    if (!isfinite(belt_m_s) || !(t->wheel_radius_m > 0))
        return 0.0;
    return finite_or_zero(belt_m_s / t->wheel_radius_m);
}

double kn_conv_wheel_to_belt(const struct kn_conv_table *t, double wheel_rad_s)
{
    return wheel_rad_s * t->wheel_radius_m;
}

static int side_ok(int side)
{
    return side == KN_LEFT || side == KN_RIGHT;
}

double kn_conv_ticks_to_m(const struct kn_conv_table *t, int side, double ticks)
{
    if (!side_ok(side) || t->counts_per_m <= 0)
        return 0.0;
    return ticks * t->tick_sign[side] * t->counts_per_tick / (double)t->counts_per_m;
}

int64_t kn_conv_m_to_ticks(const struct kn_conv_table *t, int side, double belt_m)
{
    double m_per_tick = kn_conv_ticks_to_m(t, side, 1.0);
    double v = m_per_tick != 0 ? belt_m / m_per_tick : 0;
    if (!isfinite(v) || fabs(v) > 9e18)
        return 0;
    return (int64_t)llround(v);
}

int32_t kn_conv_ticks_to_counts(const struct kn_conv_table *t, int side, int64_t ticks)
{
    if (!side_ok(side))
        return 0;
    return wrap_counts((double)ticks * t->tick_sign[side] * t->counts_per_tick);
}

int64_t kn_conv_tick_delta(int64_t prev, int64_t now, int64_t modulus)
{
    /* difference modulo 2^64, taken back to int64 without relying on
     * implementation-defined narrowing */
    uint64_t du = (uint64_t)now - (uint64_t)prev;
    int64_t d = du <= (uint64_t)INT64_MAX ? (int64_t)du : -(int64_t)(~du) - 1;
    if (modulus <= 0)
        return d;
    int64_t r = d % modulus;
    if (r < 0)
        r += modulus;
    if (r > modulus / 2)
        r -= modulus;
    return r;
}

/* ---- Gazebo tracked-vehicle plugin ------------------------------------ */

void kn_conv_belts_to_twist(const struct kn_conv_table *t, const double belt_m_s[2],
                            double *linear_x, double *angular_z)
{
    double l = finite_or_zero(belt_m_s[KN_LEFT]);
    double r = finite_or_zero(belt_m_s[KN_RIGHT]);
    *linear_x = (l + r) / 2;
    if (t->tracks_separation_m > 0 && t->steering_efficiency > 0)
        *angular_z = finite_or_zero((l - r) * t->steering_efficiency / t->tracks_separation_m);
    else
        *angular_z = 0.0;
}

void kn_conv_belts_to_gz_twist(const struct kn_conv_table *t, const double belt_m_s[2],
                               double *linear_x, double *angular_z)
{
    /* the Classic plugin's formula with the turn the other way round */
    const double mirrored[2] = { belt_m_s[KN_RIGHT], belt_m_s[KN_LEFT] };
    kn_conv_belts_to_twist(t, mirrored, linear_x, angular_z);
}

void kn_conv_gz_twist_to_belts(const struct kn_conv_table *t, double linear_x, double angular_z,
                               double belt_m_s[2])
{
    double v = finite_or_zero(linear_x), w = finite_or_zero(angular_z), d = 0.0;
    if (t->tracks_separation_m > 0 && t->steering_efficiency > 0)
        d = w * t->tracks_separation_m / (2.0 * t->steering_efficiency);
    belt_m_s[KN_LEFT] = finite_or_zero(v - d);
    belt_m_s[KN_RIGHT] = finite_or_zero(v + d);
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int kn_conv_twist_to_belts(const struct kn_conv_table *t, double linear_x, double angular_z,
                           double belt_m_s[2])
{
    int changed = 0;
    if (!isfinite(linear_x)) {
        linear_x = 0;
        changed = 1;
    }
    if (!isfinite(angular_z)) {
        angular_z = 0;
        changed = 1;
    }
    double ml = t->max_linear_speed_m_s, ma = t->max_angular_speed_rad_s;
    double v = clampd(linear_x, -ml, ml);
    double w = clampd(angular_z, -ma, ma);
    changed |= v != linear_x || w != angular_z;
    /* same operation order as the plugin, so results match bit for bit */
    double l = v + w * t->tracks_separation_m / 2 / t->steering_efficiency;
    double r = v - w * t->tracks_separation_m / 2 / t->steering_efficiency;
    belt_m_s[KN_LEFT] = clampd(l, -ml, ml);
    belt_m_s[KN_RIGHT] = clampd(r, -ml, ml);
    changed |= belt_m_s[KN_LEFT] != l || belt_m_s[KN_RIGHT] != r;
    return changed;
}

/* The factor that brings |x| down to lim (x itself is finite). */
static double fit_factor(double s, double x, double lim)
{
    double a = fabs(x);
    return a * s > lim ? lim / a : s;
}

double kn_conv_belts_fit_plugin(const struct kn_conv_table *t, const double in_m_s[2],
                                double out_m_s[2])
{
    double b[2] = { finite_or_zero(in_m_s[KN_LEFT]), finite_or_zero(in_m_s[KN_RIGHT]) };
    double v, w;
    kn_conv_belts_to_twist(t, b, &v, &w);
    double ml = t->max_linear_speed_m_s, ma = t->max_angular_speed_rad_s;
    double s = 1.0;
    s = fit_factor(s, v, ml);
    s = fit_factor(s, w, ma);
    s = fit_factor(s, b[KN_LEFT], ml);
    s = fit_factor(s, b[KN_RIGHT], ml);
    /* The plugin recomputes the tracks from (s v, s w); one part in 1e12
     * of head-room keeps its rounding from landing a hair over a limit. */
    if (s < 1.0)
        s *= 1.0 - 1e-12;
    out_m_s[KN_LEFT] = b[KN_LEFT] * s;
    out_m_s[KN_RIGHT] = b[KN_RIGHT] * s;
    return s;
}

void kn_conv_twist_to_pose_cmd(double linear_x, double angular_z, double pos[3], double q[4])
{
    pos[0] = finite_or_zero(linear_x);
    pos[1] = pos[2] = 0.0;
    double rpy[3] = { 0.0, 0.0, clampd(finite_or_zero(angular_z), -KN_PI, KN_PI) };
    kn_conv_rpy_to_quat(rpy, q);
}

int kn_conv_pose_cmd_to_twist(const double pos[3], const double q[4], double *linear_x,
                              double *angular_z)
{
    double rpy[3];
    if (kn_conv_quat_to_rpy(q, rpy) != 0 || !isfinite(pos[0])) {
        *linear_x = *angular_z = 0.0;
        return -1;
    }
    *linear_x = pos[0];
    *angular_z = rpy[2];
    return 0;
}

/* ---- flippers ---------------------------------------------------------- */

static int flipper_ok(int k)
{
    return k >= 0 && k < KN_NFLIPPERS;
}

static double unit_sign(double s)
{
    return s < 0 ? -1.0 : 1.0;
}

double kn_conv_flipper_to_joint(const struct kn_conv_table *t, int k, double krp_rad)
{
    if (!flipper_ok(k))
        return 0.0;
    return finite_or_zero(unit_sign(t->flipper_sign[k]) * finite_or_zero(krp_rad) +
                          t->flipper_offset_rad[k]);
}

double kn_conv_joint_to_flipper(const struct kn_conv_table *t, int k, double joint_rad)
{
    if (!flipper_ok(k))
        return 0.0;
    /* dividing by a sign of +-1 is multiplying by it */
    return kn_conv_wrap_pi((joint_rad - t->flipper_offset_rad[k]) * unit_sign(t->flipper_sign[k]));
}

int kn_conv_gzc_flipper_from_quat(const struct kn_conv_table *t, int k, const double q_rel[4],
                                  double *krp_rad)
{
    double q[4];
    *krp_rad = 0.0;
    if (!flipper_ok(k) || !quat_scaled(q_rel, q))
        return -1;
    /* Swing-twist: the twist about y is the quaternion's (y, w) part; it
     * is undefined only for a half turn about an axis normal to y. */
    if (q[1] == 0.0 && q[3] == 0.0)
        return -1;
    double joint = 2.0 * atan2(q[1], q[3]);
    *krp_rad = kn_conv_joint_to_flipper(t, k, kn_conv_wrap_pi(joint));
    return 0;
}

/* ---- derived rates ----------------------------------------------------- */

static int all_finite(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

int kn_conv_rate_from_attitudes(const double rpy0[3], const double rpy1[3], double dt,
                                double rate[3])
{
    if (!(dt > 0) || !isfinite(dt) || !all_finite(rpy0, 3) || !all_finite(rpy1, 3))
        return -1;
    double a[4], b[4];
    kn_conv_rpy_to_quat(rpy0, a);
    kn_conv_rpy_to_quat(rpy1, b);
    /* body-frame step: conj(a) * b, so that R1 = R0 * R_step */
    double ax = -a[0], ay = -a[1], az = -a[2], aw = a[3];
    double w = aw * b[3] - ax * b[0] - ay * b[1] - az * b[2];
    double x = aw * b[0] + ax * b[3] + ay * b[2] - az * b[1];
    double y = aw * b[1] - ax * b[2] + ay * b[3] + az * b[0];
    double z = aw * b[2] + ax * b[1] - ay * b[0] + az * b[3];
    if (w < 0) { /* the shorter way round */
        w = -w;
        x = -x;
        y = -y;
        z = -z;
    }
    double vn = sqrt(x * x + y * y + z * z);
    /* rotation vector = axis * angle, angle = 2 atan2(|v|, w); the small
     * angle limit of angle/|v| is 2/w (w is near 1 there) */
    double f = vn > 1e-12 ? 2.0 * atan2(vn, w) / vn : 2.0 / w;
    double out[3] = { x * f / dt, y * f / dt, z * f / dt };
    if (!all_finite(out, 3)) /* dt so small the rate overflows */
        return -1;
    rate[0] = out[0];
    rate[1] = out[1];
    rate[2] = out[2];
    return 0;
}

/* World acceleration plus the reaction to gravity, in the body frame. */
/* Gravity added and rotated into the body frame; acc is written only when
 * the result is finite (a huge but finite input can still overflow). */
static int specific_force_body(const double a_world[3], const double rpy[3], double acc[3])
{
    double f[3] = { a_world[0], a_world[1], a_world[2] + KN_GRAVITY }, b[3];
    kn_conv_world_to_body(rpy, f, b);
    if (!all_finite(b, 3))
        return -1;
    acc[0] = b[0];
    acc[1] = b[1];
    acc[2] = b[2];
    return 0;
}

int kn_conv_accel_from_positions(const double p0[3], const double p1[3], const double p2[3],
                                 double dt01, double dt12, const double rpy[3], double acc[3])
{
    if (!(dt01 > 0) || !(dt12 > 0) || !isfinite(dt01) || !isfinite(dt12) || !all_finite(p0, 3) ||
        !all_finite(p1, 3) || !all_finite(p2, 3) || !all_finite(rpy, 3))
        return -1;
    double a[3];
    for (int i = 0; i < 3; i++) {
        double v01 = (p1[i] - p0[i]) / dt01;
        double v12 = (p2[i] - p1[i]) / dt12;
        a[i] = 2.0 * (v12 - v01) / (dt01 + dt12);
    }
    if (!all_finite(a, 3))
        return -1;
    return specific_force_body(a, rpy, acc);
}

int kn_conv_accel_from_velocities(const double v0[3], const double v1[3], double dt,
                                  const double rpy[3], double acc[3])
{
    if (!(dt > 0) || !isfinite(dt) || !all_finite(v0, 3) || !all_finite(v1, 3) ||
        !all_finite(rpy, 3))
        return -1;
    double a[3];
    for (int i = 0; i < 3; i++)
        a[i] = (v1[i] - v0[i]) / dt;
    if (!all_finite(a, 3))
        return -1;
    return specific_force_body(a, rpy, acc);
}
