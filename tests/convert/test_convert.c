/* Conversion module tests: golden values worked out by hand from the specs
 * (docs/protocol.md, docs/usarsim.md, docs/gazebo.md), edge cases of
 * every float->int path, and round trips in every direction driven by a
 * fixed pseudo-random sequence. Rotations are checked against matrices
 * built here independently of the module. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "harness_suite.h"

#define PI KN_PI

/* Iterations of each property loop: enough to hit the edge cases, short
 * enough for a sanitizer build on a busy machine. */
#define ROUNDS 8000

/* ---- helpers: a fixed pseudo-random sequence, matrices ---------------- */

static uint64_t rng_state;

static void rng_seed(uint64_t s)
{
    rng_state = s ? s : 0x9E3779B97F4A7C15ull;
}

static uint64_t rng_next(void) /* xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static double rng_uniform(double lo, double hi)
{
    return lo + (hi - lo) * ((double)(rng_next() >> 11) / 9007199254740992.0);
}

typedef double mat3[3][3];

static void mat_rx(double a, mat3 m)
{
    mat3 r = { { 1, 0, 0 }, { 0, cos(a), -sin(a) }, { 0, sin(a), cos(a) } };
    memcpy(m, r, sizeof r);
}

static void mat_ry(double a, mat3 m)
{
    mat3 r = { { cos(a), 0, sin(a) }, { 0, 1, 0 }, { -sin(a), 0, cos(a) } };
    memcpy(m, r, sizeof r);
}

static void mat_rz(double a, mat3 m)
{
    mat3 r = { { cos(a), -sin(a), 0 }, { sin(a), cos(a), 0 }, { 0, 0, 1 } };
    memcpy(m, r, sizeof r);
}

static void mat_mul(const mat3 a, const mat3 b, mat3 out)
{
    mat3 t;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
    memcpy(out, t, sizeof t);
}

/* R = Rz(yaw) Ry(pitch) Rx(roll), by multiplying the three factors */
static void mat_rpy(const double rpy[3], mat3 m)
{
    mat3 z, y, x;
    mat_rz(rpy[2], z);
    mat_ry(rpy[1], y);
    mat_rx(rpy[0], x);
    mat_mul(z, y, m);
    mat_mul(m, x, m);
}

static void mat_quat(const double q_in[4], mat3 m)
{
    double n = sqrt(q_in[0] * q_in[0] + q_in[1] * q_in[1] + q_in[2] * q_in[2] + q_in[3] * q_in[3]);
    double x = q_in[0] / n, y = q_in[1] / n, z = q_in[2] / n, w = q_in[3] / n;
    mat3 r = {
        { 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w) },
        { 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w) },
        { 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y) },
    };
    memcpy(m, r, sizeof r);
}

/* Rotation by |v| about v (Rodrigues). */
static void mat_axis_angle(const double v[3], mat3 m)
{
    double a = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (a == 0) {
        mat3 id = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
        memcpy(m, id, sizeof id);
        return;
    }
    double x = v[0] / a, y = v[1] / a, z = v[2] / a, c = cos(a), s = sin(a), C = 1 - c;
    mat3 r = {
        { c + x * x * C, x * y * C - z * s, x * z * C + y * s },
        { y * x * C + z * s, c + y * y * C, y * z * C - x * s },
        { z * x * C - y * s, z * y * C + x * s, c + z * z * C },
    };
    memcpy(m, r, sizeof r);
}

/* Textbook Z-Y-X extraction; only used away from +-90 deg pitch. */
static void mat_to_rpy(const mat3 m, double rpy[3])
{
    rpy[0] = atan2(m[2][1], m[2][2]);
    rpy[1] = asin(-m[2][0]);
    rpy[2] = atan2(m[1][0], m[0][0]);
}

static double mat_diff(const mat3 a, const mat3 b)
{
    double d = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (fabs(a[i][j] - b[i][j]) > d)
                d = fabs(a[i][j] - b[i][j]);
    return d;
}

/* The USARSim frame change as a matrix: F = diag(1, -1, -1). */
static void mat_conj_f(const mat3 r, mat3 out)
{
    static const double f[3] = { 1, -1, -1 };
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[i][j] = f[i] * r[i][j] * f[j];
}

/* Difference of two angles, taken the short way round. */
static double ang_diff(double a, double b)
{
    double d = fmod(a - b, 2 * PI);
    if (d > PI)
        d -= 2 * PI;
    if (d < -PI)
        d += 2 * PI;
    return fabs(d);
}

static void assert_canonical(const double rpy[3])
{
    ck_assert_msg(rpy[0] > -PI && rpy[0] <= PI, "roll %.17g out of (-pi, pi]", rpy[0]);
    ck_assert_msg(rpy[1] >= -PI / 2 && rpy[1] <= PI / 2, "pitch %.17g out of range", rpy[1]);
    ck_assert_msg(rpy[2] > -PI && rpy[2] <= PI, "yaw %.17g out of (-pi, pi]", rpy[2]);
}

#define ASSERT_NEAR(a, b, tol)                                                                  \
    ck_assert_msg(fabs((double)(a) - (double)(b)) <= (tol), "%s = %.17g, want %.17g +- %g", #a, \
                  (double)(a), (double)(b), (double)(tol))

/* ---- scalar units ------------------------------------------------------ */

START_TEST(round_i32_rounds_and_saturates)
{
    ck_assert_int_eq(kn_conv_round_i32(0.5), 1);
    ck_assert_int_eq(kn_conv_round_i32(-0.5), -1);
    ck_assert_int_eq(kn_conv_round_i32(1.4999999), 1);
    ck_assert_int_eq(kn_conv_round_i32(-2.5), -3);
    ck_assert_int_eq(kn_conv_round_i32(-0.0), 0);
    ck_assert_int_eq(kn_conv_round_i32(-0.4), 0);
    ck_assert_int_eq(kn_conv_round_i32(NAN), 0);
    ck_assert_int_eq(kn_conv_round_i32(-NAN), 0);
    ck_assert_int_eq(kn_conv_round_i32(1e30), INT32_MAX);
    ck_assert_int_eq(kn_conv_round_i32(-1e30), INT32_MIN);
    ck_assert_int_eq(kn_conv_round_i32(INFINITY), INT32_MAX);
    ck_assert_int_eq(kn_conv_round_i32(-INFINITY), INT32_MIN);
    ck_assert_int_eq(kn_conv_round_i32(2147483646.6), INT32_MAX);
    ck_assert_int_eq(kn_conv_round_i32(2147483646.4), 2147483646);
    ck_assert_int_eq(kn_conv_round_i32(2147483647.5), INT32_MAX);
    ck_assert_int_eq(kn_conv_round_i32(-2147483648.4), INT32_MIN);
    ck_assert_int_eq(kn_conv_round_i32(-2147483647.4), -2147483647);
}
END_TEST

START_TEST(scalar_units_golden)
{
    ck_assert_int_eq(kn_conv_deg_to_cdeg(359.99), 35999);
    ck_assert_int_eq(kn_conv_deg_to_cdeg(-119.5), -11950);
    ck_assert_int_eq(kn_conv_rad_to_cdeg(PI), 18000);
    ck_assert_int_eq(kn_conv_rad_to_cdeg(0.1), 573);     /* 5.7296 deg */
    ck_assert_int_eq(kn_conv_rad_to_cdeg(2.086), 11952); /* USARSim flipper limit */
    ck_assert_int_eq(kn_conv_m_to_mm(1.8505), 1851);
    ck_assert_int_eq(kn_conv_m_to_mm(-0.0), 0);
    ck_assert_int_eq(kn_conv_rad_s_to_mdeg_s(1.0), 57296); /* 57295.78 */
    ck_assert_int_eq(kn_conv_rad_s_to_mdeg_s(-0.5), -28648);
    ck_assert_int_eq(kn_conv_rad_s_to_mdeg_s(NAN), 0);
    ck_assert_int_eq(kn_conv_rad_s_to_mdeg_s(1e30), INT32_MAX);
    ck_assert_int_eq(kn_conv_m_s2_to_mm_s2(KN_GRAVITY), 9807); /* 9806.65 */
    ck_assert_int_eq(kn_conv_m_s2_to_mm_s2(-1e300), INT32_MIN);
    ck_assert_int_eq(kn_conv_nm_to_mnm(40.0), 40000);
    ck_assert_int_eq(kn_conv_nm_to_mnm(-0.0004), 0);
    ASSERT_NEAR(kn_conv_cdeg_to_rad(18000), PI, 1e-15);
    ASSERT_NEAR(kn_conv_mm_to_m(-1850), -1.85, 1e-15);
}
END_TEST

START_TEST(battery_saturates)
{
    ck_assert_uint_eq(kn_conv_v_to_mv(24.0), 24000);
    ck_assert_uint_eq(kn_conv_v_to_mv(12.6), 12600);
    ck_assert_uint_eq(kn_conv_v_to_mv(65.5344), 65534);
    ck_assert_uint_eq(kn_conv_v_to_mv(65.535), 65535);
    ck_assert_uint_eq(kn_conv_v_to_mv(70.0), 65535);
    ck_assert_uint_eq(kn_conv_v_to_mv(1e30), 65535);
    ck_assert_uint_eq(kn_conv_v_to_mv(INFINITY), 65535);
    ck_assert_uint_eq(kn_conv_v_to_mv(-1.0), 0);
    ck_assert_uint_eq(kn_conv_v_to_mv(-0.0), 0);
    ck_assert_uint_eq(kn_conv_v_to_mv(NAN), 0);
    ck_assert_uint_eq(kn_conv_v_to_mv(-INFINITY), 0);
}
END_TEST

START_TEST(time_saturates)
{
    ck_assert_uint_eq(kn_conv_s_to_us(395.3833), 395383300u);
    ck_assert_uint_eq(kn_conv_s_to_us(1.5), 1500000u);
    ck_assert_uint_eq(kn_conv_s_to_us(0.0000004), 0u);
    ck_assert_uint_eq(kn_conv_s_to_us(0.0000005), 1u);
    ck_assert_uint_eq(kn_conv_s_to_us(-1.0), 0u);
    ck_assert_uint_eq(kn_conv_s_to_us(NAN), 0u);
    ck_assert_uint_eq(kn_conv_s_to_us(1e30), UINT64_MAX);
    ck_assert_uint_eq(kn_conv_s_to_us(INFINITY), UINT64_MAX);
}
END_TEST

START_TEST(counts_wrap_past_2_31)
{
    /* 10000 counts/m: 2^31 counts are 214748.3648 m of belt */
    ck_assert_int_eq(kn_conv_m_to_counts(1.2345, 10000), 12345);
    ck_assert_int_eq(kn_conv_m_to_counts(-0.0001, 10000), -1);
    ck_assert_int_eq(kn_conv_m_to_counts(-0.0, 10000), 0);
    ck_assert_int_eq(kn_conv_m_to_counts(214748.3647, 10000), INT32_MAX);
    ck_assert_int_eq(kn_conv_m_to_counts(214748.3648, 10000), INT32_MIN);
    ck_assert_int_eq(kn_conv_m_to_counts(214748.3649, 10000), INT32_MIN + 1);
    ck_assert_int_eq(kn_conv_m_to_counts(-214748.3649, 10000), INT32_MAX);
    ck_assert_int_eq(kn_conv_m_to_counts(429496.7296, 10000), 0);
    ck_assert_int_eq(kn_conv_m_to_counts(429496.7301, 10000), 5);
    ck_assert_int_eq(kn_conv_m_to_counts(NAN, 10000), 0);
    ck_assert_int_eq(kn_conv_m_to_counts(INFINITY, 10000), 0);
    ck_assert_int_eq(kn_conv_m_to_counts(-INFINITY, 10000), 0);
    /* 1e30 * 1000 = 1e33 is an integer a double holds exactly;
     * 1e33 mod 2^32 worked out by hand: 1e33 = 2^33 * 5^33, so the
     * remainder is 0 */
    ck_assert_int_eq(kn_conv_m_to_counts(1e30, 1000), 0);
    /* a belt that keeps going steps through the wrap one count at a time */
    int32_t prev = kn_conv_m_to_counts(214748.3600, 10000);
    for (int i = 1; i <= 100; i++) {
        int32_t c = kn_conv_m_to_counts(214748.3600 + i * 0.0001, 10000);
        ck_assert_int_eq((int32_t)((uint32_t)c - (uint32_t)prev), 1);
        prev = c;
    }
}
END_TEST

START_TEST(wrap_pi_edges)
{
    ASSERT_NEAR(kn_conv_wrap_pi(PI), PI, 0);
    ASSERT_NEAR(kn_conv_wrap_pi(-PI), PI, 0); /* -180 deg becomes +180 deg */
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(-PI), 18000);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(PI), 18000);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(3 * PI), 18000);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(-3 * PI), 18000);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(359.99 * PI / 180), -1);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(180.004 * PI / 180), 18000);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(180.006 * PI / 180), -17999);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(-179.996 * PI / 180), 18000);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(2 * PI), 0);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(NAN), 0);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(INFINITY), 0);
    ASSERT_NEAR(fabs(kn_conv_wrap_pi(3 * PI)), PI, 1e-15);
    ASSERT_NEAR(kn_conv_wrap_pi(359.99 * PI / 180), -0.01 * PI / 180, 1e-15);
    double z = kn_conv_wrap_pi(-0.0);
    ck_assert(z == 0.0 && !signbit(z));
    z = kn_conv_wrap_pi(-2 * PI);
    ck_assert(z == 0.0 && !signbit(z));
    ck_assert(isnan(kn_conv_wrap_pi(NAN)));
    ck_assert(isnan(kn_conv_wrap_pi(INFINITY)));
    ck_assert(isnan(kn_conv_wrap_pi(-INFINITY)));
    double big = kn_conv_wrap_pi(1e30);
    ck_assert(big > -PI && big <= PI);

    rng_seed(1);
    for (int i = 0; i < ROUNDS; i++) {
        double a = rng_uniform(-50, 50);
        double w = kn_conv_wrap_pi(a);
        ck_assert_msg(w > -PI && w <= PI, "wrap_pi(%.17g) = %.17g", a, w);
        ASSERT_NEAR(ang_diff(w, a), 0, 1e-12);
        int32_t c = kn_conv_rad_to_cdeg_wrapped(a);
        ck_assert_msg(c > -18000 && c <= 18000, "cdeg %d", c);
    }
}
END_TEST

START_TEST(wrap_2pi_edges)
{
    double z = kn_conv_wrap_2pi(-0.0);
    ck_assert(z == 0.0 && !signbit(z));
    ck_assert(kn_conv_wrap_2pi(-1e-20) == 0.0); /* not 2*pi */
    ck_assert(kn_conv_wrap_2pi(2 * PI) == 0.0);
    ASSERT_NEAR(kn_conv_wrap_2pi(-PI / 2), 1.5 * PI, 1e-15);
    ASSERT_NEAR(kn_conv_wrap_2pi(-PI), PI, 1e-15);
    ck_assert(isnan(kn_conv_wrap_2pi(NAN)));
    ck_assert(isnan(kn_conv_wrap_2pi(-INFINITY)));
    rng_seed(2);
    for (int i = 0; i < ROUNDS; i++) {
        double a = rng_uniform(-50, 50);
        double w = kn_conv_wrap_2pi(a);
        ck_assert_msg(w >= 0 && w < 2 * PI, "wrap_2pi(%.17g) = %.17g", a, w);
        ASSERT_NEAR(ang_diff(w, a), 0, 1e-12);
    }
}
END_TEST

START_TEST(scalar_round_trips)
{
    rng_seed(3);
    for (int i = 0; i < ROUNDS; i++) {
        int32_t c = (int32_t)(rng_next() % 36000) - 17999; /* (-18000, 18000] */
        ck_assert_int_eq(kn_conv_rad_to_cdeg(kn_conv_cdeg_to_rad(c)), c);
        ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(kn_conv_cdeg_to_rad(c)), c);
        ck_assert_int_eq(kn_conv_deg_to_cdeg(kn_conv_cdeg_to_deg(c)), c);
        int32_t mm = (int32_t)rng_next();
        ck_assert_int_eq(kn_conv_m_to_mm(kn_conv_mm_to_m(mm)), mm);
        ck_assert_int_eq(kn_conv_nm_to_mnm(kn_conv_mnm_to_nm(mm)), mm);
        uint16_t mv = (uint16_t)rng_next();
        ck_assert_uint_eq(kn_conv_v_to_mv(kn_conv_mv_to_v(mv)), mv);
        uint64_t us = rng_next() >> 20; /* < 2^44 us (200 days) */
        ck_assert_uint_eq(kn_conv_s_to_us(kn_conv_us_to_s(us)), us);
        int32_t counts = (int32_t)rng_next();
        ck_assert_int_eq(kn_conv_m_to_counts((double)counts / 10000.0, 10000), counts);
        int32_t mdeg = (int32_t)(rng_next() % 2000001) - 1000000;
        ck_assert_int_eq(kn_conv_rad_s_to_mdeg_s(mdeg / 1000.0 * PI / 180), mdeg);
    }
}
END_TEST

/* ---- KRP/1 <-> neutral state -------------------------------------------- */

/* Every measurement field of s set to v. */
static void fill_state(struct kn_state *s, double v)
{
    memset(s, 0, sizeof *s);
    s->time_s = v;
    s->battery_v = v;
    for (int i = 0; i < 2; i++)
        s->belt_pos_m[i] = s->belt_speed_m_s[i] = v;
    for (int k = 0; k < KN_NFLIPPERS; k++)
        s->flipper_rad[k] = s->flipper_torque_nm[k] = v;
    for (int i = 0; i < 3; i++)
        s->rpy_rad[i] = s->rate_rad_s[i] = s->accel_m_s2[i] = s->pos_m[i] = v;
}

START_TEST(state_to_krp_golden)
{
    struct kn_state s = {
        .time_s = 12.345678,
        .belt_pos_m = { 1.2345, -0.5 },
        .belt_speed_m_s = { 0.4, -0.8 },
        .flipper_rad = { 30 * PI / 180, -PI / 2, 2.086, PI },
        .flipper_torque_nm = { 1.5, -0.0004, 0, 40 },
        .rpy_rad = { 0.1, -0.2, -PI },
        .rate_rad_s = { 1.0, -0.5, 0 },
        .accel_m_s2 = { 0, 0, KN_GRAVITY },
        .pos_m = { 4.5, -1.9, -1.85 },
        .battery_v = 24.0,
    };
    struct kn_krp_status o;
    memset(&o, 0xA5, sizeof o);
    o.req_seq = 77;
    o.flags = 5;
    kn_conv_state_to_krp(&s, 10000, &o);
    ck_assert_uint_eq(o.req_seq, 77); /* the caller's fields are left alone */
    ck_assert_uint_eq(o.flags, 5);
    ck_assert_uint_eq(o.time_us, 12345678u);
    ck_assert_int_eq(o.crawler_count[0], 12345);
    ck_assert_int_eq(o.crawler_count[1], -5000);
    ck_assert_int_eq(o.crawler_speed_mm_s[0], 400);
    ck_assert_int_eq(o.crawler_speed_mm_s[1], -800);
    ck_assert_int_eq(o.flipper_cdeg[0], 3000);
    ck_assert_int_eq(o.flipper_cdeg[1], -9000);
    ck_assert_int_eq(o.flipper_cdeg[2], 11952);
    ck_assert_int_eq(o.flipper_cdeg[3], 18000);
    ck_assert_int_eq(o.flipper_torque_mnm[0], 1500);
    ck_assert_int_eq(o.flipper_torque_mnm[1], 0);
    ck_assert_int_eq(o.flipper_torque_mnm[2], 0);
    ck_assert_int_eq(o.flipper_torque_mnm[3], 40000);
    ck_assert_int_eq(o.rpy_cdeg[0], 573);
    ck_assert_int_eq(o.rpy_cdeg[1], -1146);
    ck_assert_int_eq(o.rpy_cdeg[2], 18000); /* -180 deg reported as +180 */
    ck_assert_int_eq(o.rate_mdeg_s[0], 57296);
    ck_assert_int_eq(o.rate_mdeg_s[1], -28648);
    ck_assert_int_eq(o.rate_mdeg_s[2], 0);
    ck_assert_int_eq(o.accel_mm_s2[0], 0);
    ck_assert_int_eq(o.accel_mm_s2[1], 0);
    ck_assert_int_eq(o.accel_mm_s2[2], 9807);
    ck_assert_int_eq(o.pos_mm[0], 4500);
    ck_assert_int_eq(o.pos_mm[1], -1900);
    ck_assert_int_eq(o.pos_mm[2], -1850);
    ck_assert_uint_eq(o.battery_mv, 24000);
}
END_TEST

START_TEST(state_to_krp_canonical_attitude)
{
    /* pitch 2 rad is past the vertical: the same attitude is roll 180,
     * pitch pi - 2 (65.41 deg), yaw 180 */
    struct kn_state s = { .rpy_rad = { 0, 2.0, 0 } };
    struct kn_krp_status o;
    kn_conv_state_to_krp(&s, 10000, &o);
    ck_assert_int_eq(o.rpy_cdeg[0], 18000);
    ck_assert_int_eq(o.rpy_cdeg[1], 6541);
    ck_assert_int_eq(o.rpy_cdeg[2], 18000);
    /* yaw 359.99 deg and -0.0 */
    struct kn_state s2 = { .rpy_rad = { -0.0, -0.0, 359.99 * PI / 180 } };
    kn_conv_state_to_krp(&s2, 10000, &o);
    ck_assert_int_eq(o.rpy_cdeg[0], 0);
    ck_assert_int_eq(o.rpy_cdeg[1], 0);
    ck_assert_int_eq(o.rpy_cdeg[2], -1);
}
END_TEST

START_TEST(state_to_krp_absurd_values)
{
    struct kn_state s;
    fill_state(&s, NAN);
    struct kn_krp_status o;
    memset(&o, 0x5A, sizeof o);
    kn_conv_state_to_krp(&s, 10000, &o);
    ck_assert_uint_eq(o.time_us, 0);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(o.crawler_count[i], 0);
        ck_assert_int_eq(o.crawler_speed_mm_s[i], 0);
    }
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(o.flipper_cdeg[k], 0);
        ck_assert_int_eq(o.flipper_torque_mnm[k], 0);
    }
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(o.rpy_cdeg[i], 0);
        ck_assert_int_eq(o.rate_mdeg_s[i], 0);
        ck_assert_int_eq(o.accel_mm_s2[i], 0);
        ck_assert_int_eq(o.pos_mm[i], 0);
    }
    ck_assert_uint_eq(o.battery_mv, 0);

    /* every field huge: saturated, counts wrapped, angles in range */
    fill_state(&s, 1e30);
    kn_conv_state_to_krp(&s, 10000, &o);
    ck_assert_uint_eq(o.time_us, UINT64_MAX);
    ck_assert_int_eq(o.crawler_speed_mm_s[0], INT32_MAX);
    ck_assert_int_eq(o.flipper_torque_mnm[3], INT32_MAX);
    ck_assert_int_eq(o.rate_mdeg_s[2], INT32_MAX);
    ck_assert_int_eq(o.accel_mm_s2[2], INT32_MAX);
    ck_assert_int_eq(o.pos_mm[0], INT32_MAX);
    ck_assert_uint_eq(o.battery_mv, 65535);
    for (int i = 0; i < 3; i++)
        ck_assert(o.rpy_cdeg[i] > -18000 && o.rpy_cdeg[i] <= 18000);
    fill_state(&s, -INFINITY);
    kn_conv_state_to_krp(&s, 10000, &o);
    ck_assert_uint_eq(o.time_us, 0);
    ck_assert_int_eq(o.crawler_count[1], 0);
    ck_assert_int_eq(o.pos_mm[2], INT32_MIN);
    ck_assert_int_eq(o.rpy_cdeg[2], 0);
    ck_assert_uint_eq(o.battery_mv, 0);
}
END_TEST

START_TEST(krp_commands)
{
    struct kn_krp_crawler c = { .left_mm_s = 800, .right_mm_s = -250 };
    double belt[2];
    kn_conv_krp_crawler(&c, belt);
    ASSERT_NEAR(belt[KN_LEFT], 0.8, 1e-15);
    ASSERT_NEAR(belt[KN_RIGHT], -0.25, 1e-15);

    struct kn_command cmd = { .flipper_rad = { 7, 7, 7, 7 } };
    struct kn_krp_flipper f = { .mask = 0x5, .target_cdeg = { 4500, 1, -11950, 2 } };
    kn_conv_krp_flipper(&f, &cmd);
    ck_assert_uint_eq(cmd.flipper_mask, 0x5);
    ASSERT_NEAR(cmd.flipper_rad[KN_FL], PI / 4, 1e-15);
    ASSERT_NEAR(cmd.flipper_rad[KN_FR], 7, 0); /* not masked: untouched */
    ASSERT_NEAR(cmd.flipper_rad[KN_RL], -119.5 * PI / 180, 1e-15);
    ASSERT_NEAR(cmd.flipper_rad[KN_RR], 7, 0);
}
END_TEST

/* ---- tables ---------------------------------------------------------- */

START_TEST(tables_default_and_check)
{
    struct kn_conv_table u, g;
    char err[128];
    kn_conv_table_usarsim(&u);
    kn_conv_table_gazebo(&g);
    ck_assert_int_eq(u.frame, KN_FRAME_Z_DOWN);
    ck_assert_int_eq(g.frame, KN_FRAME_Z_UP);
    ck_assert_int_eq(kn_conv_table_check(&u, err, sizeof err), 0);
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(kn_conv_table_check(&g, err, sizeof err), 0);
    /* front and rear flipper joints turn opposite ways for the same motion */
    ck_assert(u.flipper_sign[KN_FL] == -u.flipper_sign[KN_RL]);
    ck_assert(u.flipper_sign[KN_FR] == -u.flipper_sign[KN_RR]);
    ASSERT_NEAR(g.tracks_separation_m, 0.4, 0);
    ASSERT_NEAR(g.steering_efficiency, 0.5, 0);

    struct kn_conv_table t = u;
    t.wheel_radius_m = 0;
    ck_assert_int_eq(kn_conv_table_check(&t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "wheel_radius_m") != NULL, "%s", err);
    t = u;
    t.flipper_sign[KN_RR] = 0.5;
    ck_assert_int_eq(kn_conv_table_check(&t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "flipper_sign[RR]") != NULL, "%s", err);
    t = u;
    t.flipper_offset_rad[KN_FR] = NAN;
    ck_assert_int_eq(kn_conv_table_check(&t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "flipper_offset_rad[FR]") != NULL, "%s", err);
    t = g;
    t.steering_efficiency = -1;
    ck_assert_int_eq(kn_conv_table_check(&t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "steering_efficiency") != NULL, "%s", err);
    t = g;
    t.counts_per_m = 0;
    ck_assert_int_eq(kn_conv_table_check(&t, NULL, 0), -1);
    t = g;
    t.tick_sign[KN_LEFT] = 2;
    ck_assert_int_eq(kn_conv_table_check(&t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "tick_sign[L]") != NULL, "%s", err);
    t = g;
    t.frame = (enum kn_conv_frame)7;
    ck_assert_int_eq(kn_conv_table_check(&t, err, 8), -1);
    ck_assert_uint_eq(strlen(err), 7); /* truncated, still terminated */
}
END_TEST

/* ---- USARSim frame ---------------------------------------------------- */

START_TEST(usarsim_orientation_golden)
{
    struct kn_conv_table t;
    kn_conv_table_usarsim(&t);
    const double sim[3] = { 0.1, 0.2, 0.3 };
    double rpy[3];
    kn_conv_rpy_from_sim(&t, sim, rpy);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(rpy[0]), 573);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(rpy[1]), -1146);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(rpy[2]), -1719);
}
END_TEST

START_TEST(usarsim_groundtruth_golden)
{
    /* SEN {Time 395.3833} {Type GroundTruth} {Name GroundTruth}
     *     {Location 4.50,1.90,1.85} {Orientation 0.00,6.28,6.28}
     * 6.28 is 2*pi - 0.0031853 rad: USARSim pitch -0.1825 deg (nose a
     * hair down in its nose-up-positive frame) and yaw -0.1825 deg (a hair
     * to the left in its clockwise-positive frame). KRP pitch is + nose
     * down and yaw + to the left, so both become +0.1825 deg = 18 cdeg. */
    struct kn_conv_table t;
    kn_conv_table_usarsim(&t);
    const double loc[3] = { 4.50, 1.90, 1.85 }, ori[3] = { 0.00, 6.28, 6.28 };
    double pos[3], rpy[3];
    kn_conv_pose_from_sim(&t, loc, ori, pos, rpy);
    ck_assert_int_eq(kn_conv_m_to_mm(pos[0]), 4500);
    ck_assert_int_eq(kn_conv_m_to_mm(pos[1]), -1900);
    ck_assert_int_eq(kn_conv_m_to_mm(pos[2]), -1850);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(rpy[0]), 0);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(rpy[1]), 18);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(rpy[2]), 18);
    ASSERT_NEAR(rpy[1], 2 * PI - 6.28, 1e-15);

    /* UDK: {Location -0.000,-0.000,0.017} {Orientation -0.000,0.000,0.000} */
    const double loc2[3] = { -0.0, -0.0, 0.017 }, ori2[3] = { -0.0, 0.0, 0.0 };
    kn_conv_pose_from_sim(&t, loc2, ori2, pos, rpy);
    ck_assert_int_eq(kn_conv_m_to_mm(pos[2]), -17);
    for (int i = 0; i < 3; i++) {
        ck_assert_msg(rpy[i] == 0.0 && !signbit(rpy[i]), "angle %d is %g", i, rpy[i]);
        ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(rpy[i]), 0);
    }
    ck_assert(!signbit(pos[1]));
}
END_TEST

START_TEST(usarsim_rotation_matches_matrices)
{
    /* For any raw USARSim triple (negative, [0, 2pi), past 2pi, pitch past
     * the vertical): F * R_usar * F must equal the matrix of the KRP angles
     * we report, and those must be canonical. */
    struct kn_conv_table t;
    kn_conv_table_usarsim(&t);
    rng_seed(4);
    for (int i = 0; i < ROUNDS; i++) {
        double sim[3] = { rng_uniform(-4 * PI, 4 * PI), rng_uniform(-4 * PI, 4 * PI),
                          rng_uniform(-4 * PI, 4 * PI) };
        if (i % 4 == 0) /* the [0, 2pi) form USARSim prints */
            for (int k = 0; k < 3; k++)
                sim[k] = rng_uniform(0, 2 * PI);
        double rpy[3];
        kn_conv_rpy_from_sim(&t, sim, rpy);
        assert_canonical(rpy);
        mat3 ru, want, got;
        mat_rpy(sim, ru);
        mat_conj_f(ru, want);
        mat_rpy(rpy, got);
        ck_assert_msg(mat_diff(want, got) < 1e-12, "sim (%g %g %g): diff %g", sim[0], sim[1],
                      sim[2], mat_diff(want, got));
    }
    /* and the simple form of the rule, away from the vertical */
    const double sim[3] = { 0.4, -0.7, 2.5 };
    double rpy[3];
    kn_conv_rpy_from_sim(&t, sim, rpy);
    ASSERT_NEAR(rpy[0], 0.4, 1e-15);
    ASSERT_NEAR(rpy[1], 0.7, 1e-15);
    ASSERT_NEAR(rpy[2], -2.5, 1e-15);
}
END_TEST

START_TEST(usarsim_init_pose_round_trip)
{
    struct kn_conv_table t;
    kn_conv_table_usarsim(&t);
    rng_seed(5);
    for (int i = 0; i < ROUNDS; i++) {
        double pos[3] = { rng_uniform(-100, 100), rng_uniform(-100, 100), rng_uniform(-10, 10) };
        double rpy[3] = { rng_uniform(-PI, PI), rng_uniform(-PI / 2, PI / 2),
                          rng_uniform(-PI, PI) };
        double loc[3], rot[3];
        kn_conv_pose_to_sim(&t, pos, rpy, loc, rot);
        ASSERT_NEAR(loc[0], pos[0], 0);
        ASSERT_NEAR(loc[1], -pos[1], 0);
        ASSERT_NEAR(loc[2], -pos[2], 0);
        for (int k = 0; k < 3; k++)
            ck_assert_msg(rot[k] >= 0 && rot[k] < 2 * PI, "Rotation[%d] = %.17g", k, rot[k]);
        /* the USARSim matrix of rot, seen from KRP, is the matrix of rpy */
        mat3 ru, want, got;
        mat_rpy(rot, ru);
        mat_conj_f(ru, got);
        mat_rpy(rpy, want);
        ck_assert(mat_diff(want, got) < 1e-12);
        /* and back */
        double pos2[3], rpy2[3];
        kn_conv_pose_from_sim(&t, loc, rot, pos2, rpy2);
        for (int k = 0; k < 3; k++) {
            ASSERT_NEAR(pos2[k], pos[k], 0);
            ASSERT_NEAR(ang_diff(rpy2[k], rpy[k]), 0, 1e-12);
        }
    }
    /* sim -> neutral -> sim gives the same Rotation once normalised */
    for (int i = 0; i < ROUNDS; i++) {
        double rot[3] = { rng_uniform(0, 2 * PI), rng_uniform(0, PI / 2 - 1e-3),
                          rng_uniform(0, 2 * PI) };
        if (i & 1)
            rot[1] = rng_uniform(1.5 * PI + 1e-3, 2 * PI);
        double loc[3] = { rng_uniform(-50, 50), rng_uniform(-50, 50), rng_uniform(-50, 50) };
        double pos[3], rpy[3], loc2[3], rot2[3];
        kn_conv_pose_from_sim(&t, loc, rot, pos, rpy);
        kn_conv_pose_to_sim(&t, pos, rpy, loc2, rot2);
        for (int k = 0; k < 3; k++) {
            ASSERT_NEAR(loc2[k], loc[k], 0);
            ASSERT_NEAR(ang_diff(rot2[k], rot[k]), 0, 1e-12);
        }
    }
    /* commands never carry NaN */
    const double bad[3] = { NAN, INFINITY, -INFINITY };
    double loc[3], rot[3];
    kn_conv_pose_to_sim(&t, bad, bad, loc, rot);
    for (int k = 0; k < 3; k++) {
        ck_assert(loc[k] == 0.0 && rot[k] == 0.0);
    }
}
END_TEST

/* Odometry {Pose} counts from the spawn pose: golden values for a robot
 * spawned at (4, 2.5, 0.25) facing +y (KRP), and world -> odometry ->
 * world for random spawns and poses. */
START_TEST(usarsim_odometry_through_spawn)
{
    struct kn_conv_table t;
    kn_conv_table_usarsim(&t);
    const double origin[3] = { 4.0, 2.5, 0.25 };
    double pos[3], rpy[3];
    kn_conv_odometry_to_world(&t, origin, PI / 2, (const double[3]){ 0, 0, 0 }, pos, rpy);
    ASSERT_NEAR(pos[0], 4.0, 1e-12);
    ASSERT_NEAR(pos[1], 2.5, 1e-12);
    ASSERT_NEAR(pos[2], 0.25, 0);
    ASSERT_NEAR(rpy[2], PI / 2, 1e-12);
    /* 1 m ahead, 0.5 m right (z down: +y), 0.1 rad clockwise */
    kn_conv_odometry_to_world(&t, origin, PI / 2, (const double[3]){ 1.0, 0.5, 0.1 }, pos, rpy);
    ASSERT_NEAR(pos[0], 4.5, 1e-12);
    ASSERT_NEAR(pos[1], 3.5, 1e-12);
    ASSERT_NEAR(rpy[0], 0, 0);
    ASSERT_NEAR(rpy[1], 0, 0);
    ASSERT_NEAR(rpy[2], PI / 2 - 0.1, 1e-12);
    for (int i = 0; i < ROUNDS; i++) {
        double o[3] = { rng_uniform(-50, 50), rng_uniform(-50, 50), rng_uniform(-5, 5) };
        double yaw0 = rng_uniform(-PI, PI);
        double odo[3] = { rng_uniform(-20, 20), rng_uniform(-20, 20), rng_uniform(-PI, PI) };
        double odo2[3];
        kn_conv_odometry_to_world(&t, o, yaw0, odo, pos, rpy);
        kn_conv_odometry_from_world(&t, o, yaw0, pos, rpy[2], odo2);
        ASSERT_NEAR(odo2[0], odo[0], 1e-9);
        ASSERT_NEAR(odo2[1], odo[1], 1e-9);
        ASSERT_NEAR(ang_diff(odo2[2], odo[2]), 0, 1e-12);
        /* the distance travelled is the same in both frames */
        ASSERT_NEAR(hypot(pos[0] - o[0], pos[1] - o[1]), hypot(odo[0], odo[1]), 1e-9);
    }
    /* no NaN gets through */
    const double bad[3] = { NAN, INFINITY, -INFINITY };
    kn_conv_odometry_to_world(&t, bad, NAN, bad, pos, rpy);
    for (int k = 0; k < 3; k++)
        ck_assert(pos[k] == 0.0 && rpy[k] == 0.0);
}
END_TEST

START_TEST(vectors_between_frames)
{
    struct kn_conv_table u, g;
    kn_conv_table_usarsim(&u);
    kn_conv_table_gazebo(&g);
    /* an accelerometer at rest in z-down reads -g on z; KRP wants +g */
    const double acc_sim[3] = { 0, 0, -KN_GRAVITY };
    double acc[3];
    kn_conv_vec_from_sim(&u, acc_sim, acc);
    ASSERT_NEAR(acc[2], KN_GRAVITY, 0);
    /* turning right is + about USARSim's down axis, - about KRP's up axis */
    const double rate_sim[3] = { 0.1, 0.2, 0.3 };
    double rate[3];
    kn_conv_vec_from_sim(&u, rate_sim, rate);
    ASSERT_NEAR(rate[0], 0.1, 0);
    ASSERT_NEAR(rate[1], -0.2, 0);
    ASSERT_NEAR(rate[2], -0.3, 0);
    rng_seed(6);
    for (int i = 0; i < ROUNDS; i++) {
        double v[3] = { rng_uniform(-1e3, 1e3), rng_uniform(-1e3, 1e3), rng_uniform(-1e3, 1e3) };
        double s[3], back[3];
        kn_conv_vec_to_sim(&u, v, s);
        kn_conv_vec_from_sim(&u, s, back);
        for (int k = 0; k < 3; k++)
            ASSERT_NEAR(back[k], v[k], 0);
        kn_conv_vec_to_sim(&g, v, s);
        for (int k = 0; k < 3; k++)
            ASSERT_NEAR(s[k], v[k], 0);
        kn_conv_vec_from_sim(&g, s, back);
        for (int k = 0; k < 3; k++)
            ASSERT_NEAR(back[k], v[k], 0);
    }
}
END_TEST

/* ---- belts, wheels, encoders ------------------------------------------ */

START_TEST(belt_wheel)
{
    struct kn_conv_table t;
    kn_conv_table_usarsim(&t);
    t.wheel_radius_m = 0.08;
    ASSERT_NEAR(kn_conv_belt_to_wheel(&t, 0.8), 10.0, 1e-12);
    ASSERT_NEAR(kn_conv_belt_to_wheel(&t, -0.4), -5.0, 1e-12);
    ASSERT_NEAR(kn_conv_wheel_to_belt(&t, 6.283), 0.50264, 1e-12);
    ck_assert(kn_conv_belt_to_wheel(&t, NAN) == 0.0);
    ck_assert(kn_conv_belt_to_wheel(&t, INFINITY) == 0.0);
    ck_assert(kn_conv_belt_to_wheel(&t, 1e308) == 0.0); /* overflows: stop */
    struct kn_conv_table bad = t;
    bad.wheel_radius_m = 0;
    ck_assert(kn_conv_belt_to_wheel(&bad, 0.5) == 0.0);
    rng_seed(7);
    for (int i = 0; i < ROUNDS; i++) {
        t.wheel_radius_m = rng_uniform(0.01, 0.5);
        double b = rng_uniform(-2, 2);
        ASSERT_NEAR(kn_conv_wheel_to_belt(&t, kn_conv_belt_to_wheel(&t, b)), b, 1e-14);
        double w = rng_uniform(-50, 50);
        ASSERT_NEAR(kn_conv_belt_to_wheel(&t, kn_conv_wheel_to_belt(&t, w)), w, 1e-12);
    }
}
END_TEST

START_TEST(encoder_ticks)
{
    struct kn_conv_table t;
    kn_conv_table_usarsim(&t);
    t.counts_per_m = 10000;
    t.counts_per_tick = 2.5;
    t.tick_sign[KN_RIGHT] = -1;
    ASSERT_NEAR(kn_conv_ticks_to_m(&t, KN_LEFT, 4000), 1.0, 1e-15);
    ASSERT_NEAR(kn_conv_ticks_to_m(&t, KN_RIGHT, 4000), -1.0, 1e-15);
    ck_assert_int_eq(kn_conv_ticks_to_counts(&t, KN_LEFT, 4000), 10000);
    ck_assert_int_eq(kn_conv_ticks_to_counts(&t, KN_RIGHT, 4000), -10000);
    ck_assert_int_eq(kn_conv_ticks_to_counts(&t, 2, 4000), 0);
    ASSERT_NEAR(kn_conv_ticks_to_m(&t, -1, 4000), 0, 0);
    /* metres back to ticks: the inverse, rounded, sign per side */
    ck_assert_int_eq(kn_conv_m_to_ticks(&t, KN_LEFT, 1.0), 4000);
    ck_assert_int_eq(kn_conv_m_to_ticks(&t, KN_RIGHT, 1.0), -4000);
    ck_assert_int_eq(kn_conv_m_to_ticks(&t, KN_LEFT, 0.00013), 1);
    ck_assert_int_eq(kn_conv_m_to_ticks(&t, 3, 1.0), 0);
    ck_assert_int_eq(kn_conv_m_to_ticks(&t, KN_LEFT, NAN), 0);
    ck_assert_int_eq(kn_conv_m_to_ticks(&t, KN_LEFT, 1e300), 0);
    t.counts_per_tick = 1;
    ck_assert_int_eq(kn_conv_ticks_to_counts(&t, KN_LEFT, INT64_C(2147483648)), INT32_MIN);
    ck_assert_int_eq(kn_conv_ticks_to_counts(&t, KN_LEFT, INT64_C(4294967301)), 5);
    ck_assert_int_eq(kn_conv_ticks_to_counts(&t, KN_RIGHT, INT64_C(2147483648)), INT32_MIN);
    /* INT64_MAX becomes 2^63 in a double, which is 0 modulo 2^32 */
    ck_assert_int_eq(kn_conv_ticks_to_counts(&t, KN_LEFT, INT64_MAX), 0);

    /* ticks -> metres -> counts agrees with ticks -> counts */
    rng_seed(8);
    static const double cpt[] = { 1, 2, 4, 3 }; /* whole counts: no half-count ties */
    for (int i = 0; i < ROUNDS; i++) {
        t.counts_per_tick = cpt[i % 4];
        int64_t ticks = (int64_t)(rng_next() % 20000001) - 10000000;
        for (int side = 0; side < 2; side++)
            ck_assert_int_eq(
                kn_conv_m_to_counts(kn_conv_ticks_to_m(&t, side, (double)ticks), t.counts_per_m),
                kn_conv_ticks_to_counts(&t, side, ticks));
    }
}
END_TEST

START_TEST(tick_delta_wraps)
{
    ck_assert_int_eq(kn_conv_tick_delta(65530, 5, 65536), 11);
    ck_assert_int_eq(kn_conv_tick_delta(5, 65530, 65536), -11);
    ck_assert_int_eq(kn_conv_tick_delta(-3, 3, 65536), 6);
    ck_assert_int_eq(kn_conv_tick_delta(0, 32768, 65536), 32768);
    ck_assert_int_eq(kn_conv_tick_delta(0, 32769, 65536), -32767);
    ck_assert_int_eq(kn_conv_tick_delta(100, 50, 0), -50);
    ck_assert_int_eq(kn_conv_tick_delta(INT64_MIN, INT64_MAX, 0), -1);
    ck_assert_int_eq(kn_conv_tick_delta(INT64_MAX, INT64_MIN, 0), 1);
    ck_assert_int_eq(kn_conv_tick_delta(INT64_MAX, INT64_MIN, 1000), 1);
    rng_seed(9);
    for (int i = 0; i < ROUNDS; i++) {
        int64_t m = (int64_t)(rng_next() % 100000) + 2;
        int64_t a = (int64_t)(rng_next() % (uint64_t)m);
        int64_t step = (int64_t)(rng_next() % (uint64_t)(m / 2 + 1)) - m / 4;
        int64_t b = ((a + step) % m + m) % m;
        ck_assert_int_eq(kn_conv_tick_delta(a, b, m), step);
    }
}
END_TEST

/* ---- Gazebo ------------------------------------------------------------- */

START_TEST(quat_golden)
{
    double rpy[3];
    const double yaw90[4] = { 0, 0, sqrt(0.5), sqrt(0.5) };
    ck_assert_int_eq(kn_conv_quat_to_rpy(yaw90, rpy), 0);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(rpy[0]), 0);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(rpy[1]), 0);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(rpy[2]), 9000);
    /* +45 deg about y in a z-up frame takes the nose down: KRP pitch +45 */
    const double pitch45[4] = { 0, sin(PI / 8), 0, cos(PI / 8) };
    kn_conv_quat_to_rpy(pitch45, rpy);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(rpy[1]), 4500);
    /* not normalized, negated, tiny, huge: same rotation */
    const double scaled[][4] = {
        { 0, 0, 7 * sqrt(0.5), 7 * sqrt(0.5) },
        { 0, 0, -sqrt(0.5), -sqrt(0.5) },
        { 0, 0, 1e-200, 1e-200 },
        { 0, 0, 1e300, 1e300 },
    };
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(kn_conv_quat_to_rpy(scaled[i], rpy), 0);
        ASSERT_NEAR(rpy[2], PI / 2, 1e-15);
        ASSERT_NEAR(rpy[0], 0, 1e-15);
    }
    const double yaw180[4] = { 0, 0, 1, 0 };
    kn_conv_quat_to_rpy(yaw180, rpy);
    ASSERT_NEAR(rpy[2], PI, 0); /* +180, never -180 */
    /* unusable quaternions */
    const double bad[][4] = { { 0, 0, 0, 0 }, { NAN, 0, 0, 1 }, { 0, INFINITY, 0, 1 } };
    for (int i = 0; i < 3; i++) {
        rpy[0] = rpy[1] = rpy[2] = 9;
        ck_assert_int_eq(kn_conv_quat_to_rpy(bad[i], rpy), -1);
        ck_assert(rpy[0] == 0 && rpy[1] == 0 && rpy[2] == 0);
    }
    double q[4];
    const double nan_rpy[3] = { NAN, 0, INFINITY };
    kn_conv_rpy_to_quat(nan_rpy, q);
    ASSERT_NEAR(q[3], 1, 0);
}
END_TEST

START_TEST(quat_round_trips)
{
    rng_seed(10);
    for (int i = 0; i < ROUNDS; i++) {
        double rpy[3] = { rng_uniform(-PI, PI), rng_uniform(-PI / 2, PI / 2),
                          rng_uniform(-PI, PI) };
        double q[4], back[3];
        kn_conv_rpy_to_quat(rpy, q);
        ck_assert(q[3] >= 0);
        mat3 mq, mr, mb;
        mat_quat(q, mq);
        mat_rpy(rpy, mr);
        ck_assert(mat_diff(mq, mr) < 1e-14);
        /* scale and sign must not matter */
        double k = (i & 1 ? -1 : 1) * rng_uniform(0.01, 100);
        double qs[4] = { q[0] * k, q[1] * k, q[2] * k, q[3] * k };
        ck_assert_int_eq(kn_conv_quat_to_rpy(qs, back), 0);
        assert_canonical(back);
        mat_rpy(back, mb);
        ck_assert_msg(mat_diff(mb, mr) < 1e-13, "rpy (%g %g %g) diff %g", rpy[0], rpy[1], rpy[2],
                      mat_diff(mb, mr));
        if (fabs(rpy[1]) < PI / 2 - 1e-3)
            for (int j = 0; j < 3; j++)
                ASSERT_NEAR(ang_diff(back[j], rpy[j]), 0, 1e-11);
        /* and an arbitrary quaternion through rpy and back */
        double qa[4] = { rng_uniform(-1, 1), rng_uniform(-1, 1), rng_uniform(-1, 1),
                         rng_uniform(-1, 1) };
        double ra[3], qb[4];
        ck_assert_int_eq(kn_conv_quat_to_rpy(qa, ra), 0);
        kn_conv_rpy_to_quat(ra, qb);
        mat3 ma, mbq;
        mat_quat(qa, ma);
        mat_quat(qb, mbq);
        ck_assert(mat_diff(ma, mbq) < 1e-13);
    }
}
END_TEST

START_TEST(quat_near_gimbal_lock)
{
    static const double gaps[] = { 1e-1, 1e-3, 1e-5, 1e-7, 1e-8, 1e-9, 1e-10, 1e-12, 1e-14, 0 };
    rng_seed(11);
    for (int i = 0; i < ROUNDS / 10; i++)
        for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++)
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                double rpy[3] = { rng_uniform(-PI, PI), sgn * (PI / 2 - gaps[g]),
                                  rng_uniform(-PI, PI) };
                double q[4], back[3];
                kn_conv_rpy_to_quat(rpy, q);
                ck_assert_int_eq(kn_conv_quat_to_rpy(q, back), 0);
                assert_canonical(back);
                ASSERT_NEAR(back[1], rpy[1], 1e-7);
                mat3 a, b;
                mat_rpy(rpy, a);
                mat_rpy(back, b);
                /* the roll/yaw split is arbitrary within the lock
                 * threshold (cos pitch < 1e-12), the rotation is not */
                ck_assert_msg(mat_diff(a, b) < 1e-11, "pitch gap %g: diff %g", gaps[g],
                              mat_diff(a, b));
            }
    /* exactly at the lock the heading goes to yaw and roll is 0:
     * pitch +90: only yaw - roll is defined; pitch -90: yaw + roll */
    double q[4], back[3];
    const double up[3] = { 0.3, PI / 2, 0.5 };
    kn_conv_rpy_to_quat(up, q);
    kn_conv_quat_to_rpy(q, back);
    ASSERT_NEAR(back[0], 0, 1e-9);
    ASSERT_NEAR(back[1], PI / 2, 1e-9);
    ASSERT_NEAR(back[2], 0.2, 1e-9);
    const double down[3] = { 0.3, -PI / 2, 0.5 };
    kn_conv_rpy_to_quat(down, q);
    kn_conv_quat_to_rpy(q, back);
    ASSERT_NEAR(back[0], 0, 1e-9);
    ASSERT_NEAR(back[1], -PI / 2, 1e-9);
    ASSERT_NEAR(back[2], 0.8, 1e-9);
}
END_TEST

/* gz-sim's TrackedVehicle: yaw + turns left, so the right belt runs faster
 * (golden values from its formula); round trip both ways. */
START_TEST(gz_twist_golden_and_round_trip)
{
    struct kn_conv_table t;
    kn_conv_table_gazebo(&t); /* separation 0.4, efficiency 0.5 */
    const double belts[2] = { 0.3, 0.5 };
    double v, w, b[2];
    kn_conv_belts_to_gz_twist(&t, belts, &v, &w);
    ASSERT_NEAR(v, 0.4, 1e-15);
    ASSERT_NEAR(w, 0.25, 1e-15); /* (0.5 - 0.3) * 0.5 / 0.4 */
    kn_conv_gz_twist_to_belts(&t, 0.4, 0.25, b);
    ASSERT_NEAR(b[KN_LEFT], 0.3, 1e-15); /* 0.4 - 0.25 * 0.4 / (2 * 0.5) */
    ASSERT_NEAR(b[KN_RIGHT], 0.5, 1e-15);
    for (int i = 0; i < 200; i++) {
        const double in[2] = { (i % 17) * 0.13 - 1.1, (i % 11) * 0.21 - 1.0 };
        kn_conv_belts_to_gz_twist(&t, in, &v, &w);
        kn_conv_gz_twist_to_belts(&t, v, w, b);
        ASSERT_NEAR(b[0], in[0], 1e-12);
        ASSERT_NEAR(b[1], in[1], 1e-12);
    }
    const double bad[2] = { NAN, INFINITY };
    kn_conv_belts_to_gz_twist(&t, bad, &v, &w);
    ck_assert(v == 0 && w == 0);
    kn_conv_gz_twist_to_belts(&t, NAN, INFINITY, b);
    ck_assert(b[0] == 0 && b[1] == 0);
}
END_TEST

START_TEST(twist_golden_and_clamps)
{
    struct kn_conv_table t;
    kn_conv_table_gazebo(&t); /* separation 0.4, efficiency 0.5, limits 1 */
    const double belts[2] = { 0.5, 0.3 };
    double v, w, b[2];
    kn_conv_belts_to_twist(&t, belts, &v, &w);
    ASSERT_NEAR(v, 0.4, 1e-15);
    ASSERT_NEAR(w, 0.25, 1e-15); /* (0.5 - 0.3) * 0.5 / 0.4 */
    ck_assert_int_eq(kn_conv_twist_to_belts(&t, 0.4, 0.25, b), 0);
    ASSERT_NEAR(b[KN_LEFT], 0.5, 1e-15); /* 0.4 + 0.25 * 0.4 / 2 / 0.5 */
    ASSERT_NEAR(b[KN_RIGHT], 0.3, 1e-15);
    /* the plugin's clamps */
    ck_assert_int_eq(kn_conv_twist_to_belts(&t, 2.0, 0, b), 1);
    ASSERT_NEAR(b[0], 1.0, 0);
    ASSERT_NEAR(b[1], 1.0, 0);
    ck_assert_int_eq(kn_conv_twist_to_belts(&t, 0, -5.0, b), 1);
    ASSERT_NEAR(b[0], -0.4, 1e-15);
    ASSERT_NEAR(b[1], 0.4, 1e-15);
    ck_assert_int_eq(kn_conv_twist_to_belts(&t, 0.9, 1.0, b), 1); /* left 1.3 -> 1 */
    ASSERT_NEAR(b[0], 1.0, 0);
    ASSERT_NEAR(b[1], 0.5, 1e-15);
    ck_assert_int_eq(kn_conv_twist_to_belts(&t, NAN, INFINITY, b), 1);
    ck_assert(b[0] == 0 && b[1] == 0);
    const double nan_belts[2] = { NAN, -INFINITY };
    kn_conv_belts_to_twist(&t, nan_belts, &v, &w);
    ck_assert(v == 0 && w == 0);
    /* the deprecated Pose form */
    double pos[3], q[4];
    kn_conv_twist_to_pose_cmd(0.3, 0.7, pos, q);
    ASSERT_NEAR(pos[0], 0.3, 0);
    ck_assert(pos[1] == 0 && pos[2] == 0);
    ck_assert_int_eq(kn_conv_pose_cmd_to_twist(pos, q, &v, &w), 0);
    ASSERT_NEAR(v, 0.3, 0);
    ASSERT_NEAR(w, 0.7, 1e-15);
    kn_conv_twist_to_pose_cmd(0.3, 4.0, pos, q);
    kn_conv_pose_cmd_to_twist(pos, q, &v, &w);
    ASSERT_NEAR(w, PI, 1e-15);
    kn_conv_twist_to_pose_cmd(0.3, -4.0, pos, q);
    kn_conv_pose_cmd_to_twist(pos, q, &v, &w);
    ASSERT_NEAR(fabs(w), PI, 1e-15);
    const double zq[4] = { 0, 0, 0, 0 };
    ck_assert_int_eq(kn_conv_pose_cmd_to_twist(pos, zq, &v, &w), -1);
}
END_TEST

START_TEST(twist_round_trips)
{
    struct kn_conv_table t;
    kn_conv_table_gazebo(&t);
    rng_seed(12);
    for (int i = 0; i < ROUNDS; i++) {
        t.tracks_separation_m = rng_uniform(0.1, 1.0);
        t.steering_efficiency = rng_uniform(0.1, 1.0);
        t.max_linear_speed_m_s = 1.0;
        t.max_angular_speed_rad_s = 1e3; /* out of the way */
        /* belts -> twist -> what the plugin makes of it */
        double belts[2] = { rng_uniform(-1, 1), rng_uniform(-1, 1) }, v, w, back[2];
        kn_conv_belts_to_twist(&t, belts, &v, &w);
        ck_assert_int_eq(kn_conv_twist_to_belts(&t, v, w, back), 0);
        ASSERT_NEAR(back[0], belts[0], 1e-12);
        ASSERT_NEAR(back[1], belts[1], 1e-12);
        /* twist -> belts -> twist, inside the limits */
        double v0 = rng_uniform(-0.5, 0.5);
        double wmax = 0.5 * 2 * t.steering_efficiency / t.tracks_separation_m;
        double w0 = rng_uniform(-wmax, wmax), b[2], v1, w1;
        ck_assert_int_eq(kn_conv_twist_to_belts(&t, v0, w0, b), 0);
        kn_conv_belts_to_twist(&t, b, &v1, &w1);
        ASSERT_NEAR(v1, v0, 1e-12);
        ASSERT_NEAR(w1, w0, 1e-11);
    }
}
END_TEST

/* kn_conv_belts_fit_plugin: inside the limits nothing changes; beyond
 * them one factor keeps L : R, and the plugin then clamps nothing. */
START_TEST(fit_plugin_keeps_curvature)
{
    struct kn_conv_table t;
    kn_conv_table_gazebo(&t);
    t.tracks_separation_m = 0.23;
    t.steering_efficiency = 0.5;
    t.max_linear_speed_m_s = 1.0;
    t.max_angular_speed_rad_s = 1.0;
    double out[2];
    /* inside: bit for bit */
    const double in[2] = { 0.3, 0.2 };
    ck_assert(kn_conv_belts_fit_plugin(&t, in, out) == 1.0);
    ck_assert(out[0] == in[0] && out[1] == in[1]);
    /* spin in place at 0.8 m/s asks for 3.48 rad/s: scaled to 1 rad/s */
    const double spin[2] = { 0.8, -0.8 };
    double s = kn_conv_belts_fit_plugin(&t, spin, out);
    ASSERT_NEAR(s, 0.23 / 0.8, 1e-9);
    ASSERT_NEAR(out[0], 0.23, 1e-9);
    ASSERT_NEAR(out[1], -0.23, 1e-9);
    /* one belt stopped: the plugin alone would give (0.63, 0.17), a wider
     * curve; the fitted command keeps the right belt at 0 */
    const double pivot[2] = { 0.8, 0.0 };
    double clipped[2], v, w;
    kn_conv_belts_to_twist(&t, pivot, &v, &w);
    ck_assert_int_eq(kn_conv_twist_to_belts(&t, v, w, clipped), 1);
    ASSERT_NEAR(clipped[0], 0.63, 1e-9);
    ASSERT_NEAR(clipped[1], 0.17, 1e-9);
    kn_conv_belts_fit_plugin(&t, pivot, out);
    ASSERT_NEAR(out[0], 0.46, 1e-9);
    ck_assert(out[1] == 0.0);
    /* straight beyond max_linear_speed */
    const double fast[2] = { 1.5, 1.5 };
    ASSERT_NEAR(kn_conv_belts_fit_plugin(&t, fast, out), 1 / 1.5, 1e-9);
    ASSERT_NEAR(out[0], 1.0, 1e-9);
    /* not a number: stop, like every other conversion */
    const double bad[2] = { NAN, INFINITY };
    kn_conv_belts_fit_plugin(&t, bad, out);
    ck_assert(out[0] == 0.0 && out[1] == 0.0);
    /* in place */
    double io[2] = { 0.8, -0.8 };
    kn_conv_belts_fit_plugin(&t, io, io);
    ASSERT_NEAR(io[0], 0.23, 1e-9);
}
END_TEST

START_TEST(fit_plugin_random)
{
    struct kn_conv_table t;
    kn_conv_table_gazebo(&t);
    rng_seed(21);
    for (int i = 0; i < ROUNDS; i++) {
        t.tracks_separation_m = rng_uniform(0.1, 1.0);
        t.steering_efficiency = rng_uniform(0.1, 1.0);
        t.max_linear_speed_m_s = rng_uniform(0.1, 2.0);
        t.max_angular_speed_rad_s = rng_uniform(0.1, 5.0);
        double in[2] = { rng_uniform(-3, 3), rng_uniform(-3, 3) }, out[2], v, w, got[2];
        double s = kn_conv_belts_fit_plugin(&t, in, out);
        ck_assert(s > 0 && s <= 1);
        /* same direction and ratio */
        ASSERT_NEAR(out[0], in[0] * s, 0);
        ASSERT_NEAR(out[1], in[1] * s, 0);
        /* the plugin passes it through unchanged */
        kn_conv_belts_to_twist(&t, out, &v, &w);
        ck_assert_int_eq(kn_conv_twist_to_belts(&t, v, w, got), 0);
        ASSERT_NEAR(got[0], out[0], 1e-12);
        ASSERT_NEAR(got[1], out[1], 1e-12);
        /* and the factor is the largest: a little more would be clamped */
        if (s < 1) {
            double more[2] = { in[0] * s * (1 + 1e-9), in[1] * s * (1 + 1e-9) };
            kn_conv_belts_to_twist(&t, more, &v, &w);
            ck_assert_int_eq(kn_conv_twist_to_belts(&t, v, w, got), 1);
        }
    }
}
END_TEST

/* ---- flippers ----------------------------------------------------------- */

START_TEST(flipper_sign_offset)
{
    struct kn_conv_table t;
    kn_conv_table_usarsim(&t);
    /* tip up 0.5 rad: the front joints turn one way, the rear the other */
    ASSERT_NEAR(kn_conv_flipper_to_joint(&t, KN_FL, 0.5), -0.5, 0);
    ASSERT_NEAR(kn_conv_flipper_to_joint(&t, KN_FR, 0.5), -0.5, 0);
    ASSERT_NEAR(kn_conv_flipper_to_joint(&t, KN_RL, 0.5), 0.5, 0);
    ASSERT_NEAR(kn_conv_flipper_to_joint(&t, KN_RR, 0.5), 0.5, 0);
    ASSERT_NEAR(kn_conv_joint_to_flipper(&t, KN_FR, -0.0006), 0.0006, 0);
    ASSERT_NEAR(kn_conv_joint_to_flipper(&t, KN_RR, 0.0005), 0.0005, 0);
    t.flipper_offset_rad[KN_FL] = 0.3;
    ASSERT_NEAR(kn_conv_flipper_to_joint(&t, KN_FL, 0.2), 0.1, 1e-15);
    ASSERT_NEAR(kn_conv_joint_to_flipper(&t, KN_FL, 0.1), 0.2, 1e-15);
    t.flipper_offset_rad[KN_RR] = -PI / 2;
    ASSERT_NEAR(kn_conv_flipper_to_joint(&t, KN_RR, 0.2), 0.2 - PI / 2, 1e-15);
    ASSERT_NEAR(kn_conv_joint_to_flipper(&t, KN_RR, 0.2 - PI / 2), 0.2, 1e-15);
    /* non-finite target: the joint's zero, never NaN */
    ASSERT_NEAR(kn_conv_flipper_to_joint(&t, KN_FL, NAN), 0.3, 0);
    ASSERT_NEAR(kn_conv_flipper_to_joint(&t, KN_FR, INFINITY), 0, 0);
    ASSERT_NEAR(kn_conv_flipper_to_joint(&t, 4, 0.5), 0, 0);
    ASSERT_NEAR(kn_conv_joint_to_flipper(&t, -1, 0.5), 0, 0);

    rng_seed(13);
    for (int i = 0; i < ROUNDS; i++) {
        for (int k = 0; k < KN_NFLIPPERS; k++) {
            t.flipper_sign[k] = (rng_next() & 1) ? 1 : -1;
            t.flipper_offset_rad[k] = rng_uniform(-PI, PI);
        }
        int k = (int)(rng_next() % 4);
        double krp = rng_uniform(-PI, PI);
        double j = kn_conv_flipper_to_joint(&t, k, krp);
        ASSERT_NEAR(ang_diff(kn_conv_joint_to_flipper(&t, k, j), krp), 0, 1e-12);
        double j0 = rng_uniform(-2 * PI, 2 * PI);
        double f = kn_conv_joint_to_flipper(&t, k, j0);
        ck_assert(f > -PI && f <= PI);
        ASSERT_NEAR(ang_diff(kn_conv_flipper_to_joint(&t, k, f), j0), 0, 1e-12);
    }
}
END_TEST

/* Rotates v by unit quaternion q (x, y, z, w). */
static void quat_rotate(const double q[4], const double v[3], double out[3])
{
    mat3 m;
    mat_quat(q, m);
    for (int i = 0; i < 3; i++)
        out[i] = m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2];
}

START_TEST(gazebo_flipper_from_link_pose)
{
    struct kn_conv_table t;
    kn_conv_table_gazebo(&t);
    /* Physical check of the default signs: a flipper at KRP +0.5 rad has
     * its tip raised (world z up). Front flippers point along +x, rear
     * ones along -x; the joint turns the link about the model's y axis. */
    static const double outward[4][3] = { { 1, 0, 0 }, { 1, 0, 0 }, { -1, 0, 0 }, { -1, 0, 0 } };
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        double j = kn_conv_flipper_to_joint(&t, k, 0.5);
        double q[4] = { 0, sin(j / 2), 0, cos(j / 2) }, tip[3], krp;
        quat_rotate(q, outward[k], tip);
        ck_assert_msg(tip[2] > 0.4, "flipper %d tip z %g", k, tip[2]);
        ck_assert_int_eq(kn_conv_gzc_flipper_from_quat(&t, k, q, &krp), 0);
        ASSERT_NEAR(krp, 0.5, 1e-15);
    }
    /* golden: front-left link turned -30 deg about y = tip 30 deg up */
    const double fl30[4] = { 0, sin(-PI / 12), 0, cos(-PI / 12) };
    double krp;
    kn_conv_gzc_flipper_from_quat(&t, KN_FL, fl30, &krp);
    ck_assert_int_eq(kn_conv_rad_to_cdeg_wrapped(krp), 3000);
    /* a small wobble about x and z does not leak into the angle */
    double wob_rpy[3] = { 0.01, -0.7, 0.01 }, wq[4];
    kn_conv_rpy_to_quat(wob_rpy, wq);
    kn_conv_gzc_flipper_from_quat(&t, KN_RL, wq, &krp);
    ASSERT_NEAR(krp, -0.7, 1e-3);
    /* unusable */
    const double zq[4] = { 0, 0, 0, 0 }, half_x[4] = { 1, 0, 0, 0 }, nq[4] = { 0, NAN, 0, 1 };
    krp = 5;
    ck_assert_int_eq(kn_conv_gzc_flipper_from_quat(&t, KN_FL, zq, &krp), -1);
    ck_assert(krp == 0);
    ck_assert_int_eq(kn_conv_gzc_flipper_from_quat(&t, KN_FL, half_x, &krp), -1);
    ck_assert_int_eq(kn_conv_gzc_flipper_from_quat(&t, KN_FL, nq, &krp), -1);
    ck_assert_int_eq(kn_conv_gzc_flipper_from_quat(&t, 4, fl30, &krp), -1);

    /* round trip with any sign and offset, any scale and sign of q */
    rng_seed(14);
    for (int i = 0; i < ROUNDS; i++) {
        int k = (int)(rng_next() % 4);
        t.flipper_sign[k] = (rng_next() & 1) ? 1 : -1;
        t.flipper_offset_rad[k] = rng_uniform(-1, 1);
        double want = rng_uniform(-2.086, 2.086);
        double j = kn_conv_flipper_to_joint(&t, k, want);
        double s = (i & 1 ? -1 : 1) * rng_uniform(0.1, 10);
        double q[4] = { 0, s * sin(j / 2), 0, s * cos(j / 2) }, got;
        ck_assert_int_eq(kn_conv_gzc_flipper_from_quat(&t, k, q, &got), 0);
        ASSERT_NEAR(ang_diff(got, want), 0, 1e-12);
    }
}
END_TEST

/* ---- derived rates ------------------------------------------------------- */

START_TEST(rate_from_attitudes)
{
    rng_seed(15);
    for (int i = 0; i < ROUNDS; i++) {
        double rpy0[3] = { rng_uniform(-1.2, 1.2), rng_uniform(-1.2, 1.2), rng_uniform(-PI, PI) };
        double w[3] = { rng_uniform(-3, 3), rng_uniform(-3, 3), rng_uniform(-3, 3) };
        double dt = rng_uniform(0.001, 0.05);
        /* R1 = R0 * exp(w dt): a constant body rate */
        mat3 r0, step, r1;
        mat_rpy(rpy0, r0);
        double wdt[3] = { w[0] * dt, w[1] * dt, w[2] * dt };
        mat_axis_angle(wdt, step);
        mat_mul(r0, step, r1);
        double rpy1[3], rate[3];
        mat_to_rpy(r1, rpy1);
        ck_assert_int_eq(kn_conv_rate_from_attitudes(rpy0, rpy1, dt, rate), 0);
        for (int k = 0; k < 3; k++)
            ASSERT_NEAR(rate[k], w[k], 1e-8);
    }
    /* yaw wraps from +179 to -179 deg in 0.1 s: +20 deg/s, not -3580 */
    const double a[3] = { 0, 0, 179 * PI / 180 }, b[3] = { 0, 0, -179 * PI / 180 };
    double rate[3];
    ck_assert_int_eq(kn_conv_rate_from_attitudes(a, b, 0.1, rate), 0);
    ck_assert_int_eq(kn_conv_rad_s_to_mdeg_s(rate[2]), 20000);
    ck_assert_int_eq(kn_conv_rad_s_to_mdeg_s(rate[0]), 0);
    /* a pitch rate seen with the robot yawed 90 deg is still about body y */
    const double c[3] = { 0, 0.1, PI / 2 }, d[3] = { 0, 0.2, PI / 2 };
    kn_conv_rate_from_attitudes(c, d, 0.5, rate);
    ASSERT_NEAR(rate[0], 0, 1e-12);
    ASSERT_NEAR(rate[1], 0.2, 1e-12);
    ASSERT_NEAR(rate[2], 0, 1e-12);
    /* bad dt or input: -1, output untouched */
    double keep[3] = { 42, 42, 42 };
    ck_assert_int_eq(kn_conv_rate_from_attitudes(a, b, 0, keep), -1);
    ck_assert_int_eq(kn_conv_rate_from_attitudes(a, b, -0.1, keep), -1);
    ck_assert_int_eq(kn_conv_rate_from_attitudes(a, b, NAN, keep), -1);
    ck_assert_int_eq(kn_conv_rate_from_attitudes(a, b, INFINITY, keep), -1);
    ck_assert_int_eq(kn_conv_rate_from_attitudes(a, b, 1e-320, keep), -1);
    const double n[3] = { 0, NAN, 0 };
    ck_assert_int_eq(kn_conv_rate_from_attitudes(n, b, 0.1, keep), -1);
    ck_assert(keep[0] == 42 && keep[1] == 42 && keep[2] == 42);
    /* no motion: exactly zero */
    ck_assert_int_eq(kn_conv_rate_from_attitudes(a, a, 0.1, rate), 0);
    ck_assert(rate[0] == 0 && rate[1] == 0 && rate[2] == 0);
}
END_TEST

START_TEST(accel_derived)
{
    const double level[3] = { 0, 0, 0 };
    const double p[3] = { 1, 2, 3 };
    double acc[3];
    /* at rest: +g on z */
    ck_assert_int_eq(kn_conv_accel_from_positions(p, p, p, 0.01, 0.01, level, acc), 0);
    ck_assert_int_eq(kn_conv_m_s2_to_mm_s2(acc[0]), 0);
    ck_assert_int_eq(kn_conv_m_s2_to_mm_s2(acc[1]), 0);
    ck_assert_int_eq(kn_conv_m_s2_to_mm_s2(acc[2]), 9807);
    /* lying on its right side (roll +90, left side up): +g on body y */
    const double roll90[3] = { PI / 2, 0, 0 };
    kn_conv_accel_from_positions(p, p, p, 0.01, 0.01, roll90, acc);
    ASSERT_NEAR(acc[0], 0, 1e-12);
    ASSERT_NEAR(acc[1], KN_GRAVITY, 1e-12);
    ASSERT_NEAR(acc[2], 0, 1e-12);
    /* nose 30 deg down: gravity's reaction has a backward component */
    const double pitch30[3] = { 0, PI / 6, 0 };
    kn_conv_accel_from_positions(p, p, p, 0.01, 0.01, pitch30, acc);
    ASSERT_NEAR(acc[0], -KN_GRAVITY / 2, 1e-12);
    ASSERT_NEAR(acc[2], KN_GRAVITY * sqrt(3) / 2, 1e-12);

    /* constant world acceleration, unequal steps */
    const double a[3] = { 1, -2, 0.5 }, v0[3] = { 0.3, 0.1, 0 };
    double pts[3][3];
    const double ts[3] = { 0, 0.01, 0.03 };
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            pts[i][k] = p[k] + v0[k] * ts[i] + 0.5 * a[k] * ts[i] * ts[i];
    ck_assert_int_eq(kn_conv_accel_from_positions(pts[0], pts[1], pts[2], 0.01, 0.02, level, acc),
                     0);
    ASSERT_NEAR(acc[0], 1, 1e-9);
    ASSERT_NEAR(acc[1], -2, 1e-9);
    ASSERT_NEAR(acc[2], 0.5 + KN_GRAVITY, 1e-9);
    /* facing +y (yaw 90): world +x is to the robot's right, body -y */
    const double yaw90[3] = { 0, 0, PI / 2 };
    const double still[3] = { 0, 0, 0 }, push[3] = { 0.1, 0, 0 };
    ck_assert_int_eq(kn_conv_accel_from_velocities(still, push, 0.1, yaw90, acc), 0);
    ASSERT_NEAR(acc[0], 0, 1e-12);
    ASSERT_NEAR(acc[1], -1, 1e-12);
    ASSERT_NEAR(acc[2], KN_GRAVITY, 1e-12);

    /* bad steps or input: -1, output untouched */
    double keep[3] = { 42, 42, 42 };
    ck_assert_int_eq(kn_conv_accel_from_positions(p, p, p, 0, 0.01, level, keep), -1);
    ck_assert_int_eq(kn_conv_accel_from_positions(p, p, p, 0.01, -1, level, keep), -1);
    ck_assert_int_eq(kn_conv_accel_from_positions(p, p, p, NAN, 0.01, level, keep), -1);
    const double np[3] = { NAN, 0, 0 };
    ck_assert_int_eq(kn_conv_accel_from_positions(p, np, p, 0.01, 0.01, level, keep), -1);
    ck_assert_int_eq(kn_conv_accel_from_positions(p, p, p, 0.01, 0.01, np, keep), -1);
    const double huge[3] = { 1e308, 0, 0 }, nhuge[3] = { -1e308, 0, 0 };
    ck_assert_int_eq(kn_conv_accel_from_positions(nhuge, huge, nhuge, 1e-10, 1e-10, level, keep),
                     -1);
    ck_assert_int_eq(kn_conv_accel_from_velocities(still, push, 0, level, keep), -1);
    ck_assert_int_eq(kn_conv_accel_from_velocities(still, push, -0.1, level, keep), -1);
    ck_assert_int_eq(kn_conv_accel_from_velocities(np, push, 0.1, level, keep), -1);
    ck_assert_int_eq(kn_conv_accel_from_velocities(nhuge, huge, 1e-10, level, keep), -1);
    /* finite in the world frame, overflowing once rotated into the body */
    const double big[3] = { 1.7e308, 1.7e308, 0 }, yaw45[3] = { 0, 0, PI / 4 };
    ck_assert_int_eq(kn_conv_accel_from_velocities(still, big, 1, yaw45, keep), -1);
    ck_assert(keep[0] == 42 && keep[1] == 42 && keep[2] == 42);
}
END_TEST

START_TEST(world_to_body_is_transpose)
{
    rng_seed(16);
    for (int i = 0; i < ROUNDS; i++) {
        double rpy[3] = { rng_uniform(-PI, PI), rng_uniform(-PI / 2, PI / 2),
                          rng_uniform(-PI, PI) };
        double v[3] = { rng_uniform(-10, 10), rng_uniform(-10, 10), rng_uniform(-10, 10) }, b[3];
        kn_conv_world_to_body(rpy, v, b);
        mat3 m;
        mat_rpy(rpy, m);
        for (int k = 0; k < 3; k++)
            ASSERT_NEAR(m[0][k] * v[0] + m[1][k] * v[1] + m[2][k] * v[2], b[k], 1e-12);
        kn_conv_world_to_body(rpy, v, v); /* in place */
        for (int k = 0; k < 3; k++)
            ASSERT_NEAR(v[k], b[k], 0);
    }
}
END_TEST

static Suite *convert_suite(void)
{
    Suite *s = suite_create("convert");
    TCase *tc = tcase_create("scalars");
    tcase_add_test(tc, round_i32_rounds_and_saturates);
    tcase_add_test(tc, scalar_units_golden);
    tcase_add_test(tc, battery_saturates);
    tcase_add_test(tc, time_saturates);
    tcase_add_test(tc, counts_wrap_past_2_31);
    tcase_add_test(tc, wrap_pi_edges);
    tcase_add_test(tc, wrap_2pi_edges);
    tcase_add_test(tc, scalar_round_trips);
    suite_add_tcase(s, tc);

    tc = tcase_create("krp");
    tcase_add_test(tc, state_to_krp_golden);
    tcase_add_test(tc, state_to_krp_canonical_attitude);
    tcase_add_test(tc, state_to_krp_absurd_values);
    tcase_add_test(tc, krp_commands);
    tcase_add_test(tc, tables_default_and_check);
    suite_add_tcase(s, tc);

    tc = tcase_create("usarsim");
    tcase_add_test(tc, usarsim_orientation_golden);
    tcase_add_test(tc, usarsim_groundtruth_golden);
    tcase_add_test(tc, usarsim_rotation_matches_matrices);
    tcase_add_test(tc, usarsim_init_pose_round_trip);
    tcase_add_test(tc, usarsim_odometry_through_spawn);
    tcase_add_test(tc, vectors_between_frames);
    tcase_add_test(tc, belt_wheel);
    tcase_add_test(tc, encoder_ticks);
    tcase_add_test(tc, tick_delta_wraps);
    suite_add_tcase(s, tc);

    tc = tcase_create("gazebo");
    tcase_add_test(tc, quat_golden);
    tcase_add_test(tc, quat_round_trips);
    tcase_add_test(tc, quat_near_gimbal_lock);
    tcase_add_test(tc, twist_golden_and_clamps);
    tcase_add_test(tc, twist_round_trips);
    tcase_add_test(tc, fit_plugin_keeps_curvature);
    tcase_add_test(tc, fit_plugin_random);
    tcase_add_test(tc, gz_twist_golden_and_round_trip);
    suite_add_tcase(s, tc);

    tc = tcase_create("flippers");
    tcase_add_test(tc, flipper_sign_offset);
    tcase_add_test(tc, gazebo_flipper_from_link_pose);
    suite_add_tcase(s, tc);

    tc = tcase_create("derived");
    tcase_add_test(tc, rate_from_attitudes);
    tcase_add_test(tc, accel_derived);
    tcase_add_test(tc, world_to_body_is_transpose);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return h_run_suite(convert_suite());
}
