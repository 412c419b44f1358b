/* Unit tests of the USARSim client (daemon/backends/usarsim/backend_usarsim.h): INIT and
 * readiness, every real server line of tests/usarsim/real_lines.h into
 * the neutral state and the KRP/1 STATUS it makes, malformed lines counted
 * per reason and survived, framing, the exact DRIVE / SET / MULTIDRIVE
 * lines for given commands in both dialects and under a comma-decimal
 * locale, re-INIT at the last pose, encoder wrap, derived rates; the
 * World question to an engine at an address and its answer's parts. */
#include <check.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_usarsim.h"
#include "comma_locale.h"
#include "config.h"
#include "convert.h"
#include "harness_suite.h"
#include "krp.h"
#include "log.h"
#include "real_lines.h"
#include "usarsim_codec.h"
#include "usarsim_world.h"

#define S_NS 1000000000ull

/* ---- a client with captured output ---- */

struct cap {
    char out[65536];
    size_t len;
    int readies, states, fails;
    struct kn_state last; /* the last state handed out */
};

static struct cap C;
static struct kn_usarsim *U;
static uint64_t now_ns;

static void cap_write(void *ctx, const char *d, size_t n)
{
    struct cap *c = ctx;
    ck_assert_uint_lt(c->len + n, sizeof c->out);
    memcpy(c->out + c->len, d, n);
    c->len += n;
    c->out[c->len] = '\0';
}

static void cap_ready(void *ctx)
{
    ((struct cap *)ctx)->readies++;
}

static void cap_state(void *ctx, const struct kn_state *s)
{
    ((struct cap *)ctx)->states++;
    ((struct cap *)ctx)->last = *s;
}

static void cap_fail(void *ctx, const char *why)
{
    (void)why;
    ((struct cap *)ctx)->fails++;
}

static struct kn_cfg_robot robot_cfg(const char *backend_extra)
{
    static struct kn_config cfg;
    char json[2048], err[4096];
    snprintf(json, sizeof json,
             "{\"robots\":[{\"name\":\"kenaf\",\"counts_per_m\":4000,"
             "\"backend\":{\"type\":\"usarsim\"%s}}]}",
             backend_extra ? backend_extra : "");
    ck_assert_msg(kn_config_parse(json, strlen(json), "test", NULL, &cfg, err, sizeof err) == 0,
                  "config: %s", err);
    return cfg.robots[0];
}

/* The World answers of an engine at an address the client handed out. */
static char world_got[256];
static int worlds;

static void cap_world(void *ctx, const char *text, size_t len)
{
    (void)ctx;
    ck_assert_uint_eq(len, strlen(text));
    snprintf(world_got, sizeof world_got, "%s", text);
    worlds++;
}

static void client_from(const struct kn_cfg_robot *r)
{
    memset(&C, 0, sizeof C);
    worlds = 0;
    struct kn_usarsim_io io = {
        .ctx = &C,
        .write = cap_write,
        .ready = cap_ready,
        .state = cap_state,
        .fail = cap_fail,
        .world = cap_world,
    };
    char err[128];
    U = kn_usarsim_new(r, &io, err, sizeof err);
    ck_assert_msg(U != NULL, "%s", err);
    now_ns = 1000 * S_NS;
}

static void client_new(const char *backend_extra)
{
    struct kn_cfg_robot r = robot_cfg(backend_extra);
    client_from(&r);
}

static void out_clear(void)
{
    C.len = 0;
    C.out[0] = '\0';
}

static void feed(const char *s)
{
    kn_usarsim_feed(U, s, strlen(s), now_ns);
}

/* Connected, spawned (one STA), output cleared. */
static void client_ready(const char *backend_extra)
{
    client_new(backend_extra);
    kn_usarsim_connected(U, now_ns);
    feed(REAL_12);
    feed("STA {Time 1.0000} {Battery 99999} {Type GroundVehicle} {LightToggle False} "
         "{LightIntensity 100} {FrontSteer 0} {RearSteer 0}\r\n");
    ck_assert_int_eq(C.readies, 1);
    out_clear();
}

static void client_free(void)
{
    kn_usarsim_free(U);
    U = NULL;
}

static struct kn_krp_status status(void)
{
    struct kn_krp_status st;
    memset(&st, 0, sizeof st);
    kn_conv_state_to_krp(kn_usarsim_state(U), 4000, &st);
    return st;
}

static void command(double l, double r, uint8_t mask, const double deg[4], bool reapply)
{
    struct kn_command c;
    memset(&c, 0, sizeof c);
    c.belt_speed_m_s[0] = l;
    c.belt_speed_m_s[1] = r;
    c.flipper_mask = mask;
    for (int k = 0; k < 4; k++)
        c.flipper_rad[k] = deg ? deg[k] * KN_PI / 180.0 : 0.0;
    kn_usarsim_command(U, &c, reapply, now_ns);
}

static double stat_num(const char *a, const char *b)
{
    cJSON *o = cJSON_CreateObject();
    kn_usarsim_stats(U, o);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    ck_assert_msg(cJSON_IsNumber(v) || cJSON_IsBool(v), "no stat %s.%s", a, b ? b : "");
    double r = cJSON_IsBool(v) ? cJSON_IsTrue(v) : v->valuedouble;
    cJSON_Delete(o);
    return r;
}

static const char *stat_str(const char *a, const char *b)
{
    static char buf[256];
    cJSON *o = cJSON_CreateObject();
    kn_usarsim_stats(U, o);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    ck_assert_msg(cJSON_IsString(v), "no string stat %s.%s", a, b ? b : "");
    snprintf(buf, sizeof buf, "%s", v->valuestring);
    cJSON_Delete(o);
    return buf;
}

/* ---- INIT and readiness ---- */

START_TEST(init_at_configured_pose)
{
    client_new(",\"usarsim\":{\"location_m\":[1,2,0.5],\"rotation_deg\":[0,0,90]}");
    kn_usarsim_connected(U, now_ns);
    /* KRP world (z up) -> USARSim (z down): y and z change sign, yaw 90 deg
     * left is 270 deg clockwise */
    ck_assert_str_eq(C.out, "INIT {ClassName USARBot.Kenaf} {Name kenaf} "
                            "{Location 1.0000,-2.0000,-0.5000} "
                            "{Rotation 0.0000,0.0000,4.7124}\r\n");
    client_free();
}

START_TEST(init_at_player_start)
{
    client_new(",\"usarsim\":{\"start\":\"Point1\",\"class_name\":\"USARBot.kenaf\"}");
    kn_usarsim_connected(U, now_ns);
    ck_assert_str_eq(C.out, "INIT {ClassName USARBot.kenaf} {Name kenaf} {Start Point1}\r\n");
    client_free();
}

START_TEST(ready_only_after_sta_or_sen)
{
    client_new(NULL);
    kn_usarsim_connected(U, now_ns);
    out_clear();
    feed(REAL_12);
    feed(REAL_13); /* a CONF is no sign of a robot either */
    ck_assert_int_eq(C.readies, 0);
    ck_assert(!kn_usarsim_is_ready(U));
    ck_assert_str_eq(C.out, "");
    feed(REAL_22);
    ck_assert_int_eq(C.readies, 1);
    ck_assert(kn_usarsim_is_ready(U));
    /* then the questions, which nothing waits for */
    ck_assert_str_eq(C.out, "GETCONF {Type Robot}\r\nGETGEO {Type Robot}\r\n"
                            "GETCONF {Type Encoder}\r\n");
    feed(REAL_18);
    ck_assert_int_eq(C.readies, 1);
    /* a new connection needs a new spawn */
    kn_usarsim_disconnected(U);
    kn_usarsim_connected(U, now_ns);
    ck_assert(!kn_usarsim_is_ready(U));
    feed(REAL_18);
    ck_assert_int_eq(C.readies, 2);
    ck_assert_int_eq(stat_num("spawns", NULL), 2);
    client_free();
}

START_TEST(unanswered_queries_time_out)
{
    client_ready(NULL);
    now_ns += KN_USARSIM_GET_TIMEOUT_NS + 1;
    feed(REAL_18);
    ck_assert_int_eq(stat_num("server", "timeouts"), 3);
    ck_assert_int_eq(stat_num("server", "answers"), 0);
    client_free();
}

/* ---- real lines (tests/usarsim/real_lines.h) ---- */

START_TEST(real_groundtruth_ut2004)
{
    client_ready(NULL);
    feed(REAL_4);
    struct kn_krp_status st = status();
    ck_assert_int_eq(st.pos_mm[0], 4500);
    ck_assert_int_eq(st.pos_mm[1], -1900);
    ck_assert_int_eq(st.pos_mm[2], -1850);
    /* 6.28 = 2 pi - 0.0032: nose a hair down, a hair left, both + in KRP */
    ck_assert_int_eq(st.rpy_cdeg[0], 0);
    ck_assert_int_eq(st.rpy_cdeg[1], 18);
    ck_assert_int_eq(st.rpy_cdeg[2], 18);
    ck_assert_uint_eq(st.time_us, 395383300);
    /* at rest: +g on z */
    ck_assert_int_eq(st.accel_mm_s2[2], 9807);
    ck_assert_uint_eq(kn_usarsim_malformed_total(U), 0);
    ck_assert_str_eq(stat_str("sources", "pose"), "groundtruth");
    client_free();
}

START_TEST(real_groundtruth_udk)
{
    client_ready(NULL);
    feed(REAL_19);
    struct kn_krp_status st = status();
    ck_assert_int_eq(st.pos_mm[0], 0);
    ck_assert_int_eq(st.pos_mm[1], 0);
    ck_assert_int_eq(st.pos_mm[2], -17);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(st.rpy_cdeg[i], 0);
    ck_assert_uint_eq(st.time_us, 477758200);
    client_free();
}

START_TEST(real_ins_alone_and_after_groundtruth)
{
    client_ready(NULL);
    feed(REAL_22);
    struct kn_krp_status st = status();
    ck_assert_int_eq(st.pos_mm[2], 200); /* INS z -0.20 down = 0.20 up */
    ck_assert_str_eq(stat_str("sources", "pose"), "ins");
    feed(REAL_4);
    feed(REAL_22); /* ground truth seen: INS no longer overrides it */
    st = status();
    ck_assert_int_eq(st.pos_mm[0], 4500);
    ck_assert_int_eq(stat_num("received", "shut_out"), 1);
    client_free();
}

START_TEST(real_encoders)
{
    client_ready(NULL);
    feed(REAL_2);
    ck_assert_int_eq(stat_num("received", "Encoder"), 1);
    ck_assert_int_eq(stat_num("received", "encoder_unmapped"), 2); /* ECTilt, ECPan */
    ck_assert_str_eq(stat_str("sources", "encoder_left"), "ECLeft");
    ck_assert_str_eq(stat_str("sources", "encoder_right"), "ECRight");
    struct kn_krp_status st = status();
    ck_assert_int_eq(st.crawler_count[0], 0);
    ck_assert_int_eq(st.crawler_count[1], 0);
    client_free();

    client_ready(NULL);
    feed(REAL_20);
    ck_assert_str_eq(stat_str("sources", "encoder_left"), "W1"); /* FLWheelRoll */
    ck_assert_uint_eq(kn_usarsim_malformed_total(U), 0);
    client_free();
}

START_TEST(real_status_lines)
{
    client_ready(NULL);
    feed(REAL_7);
    struct kn_krp_status st = status();
    ck_assert_uint_eq(st.time_us, 395380000);
    /* Battery is seconds of life: the configured voltage stands */
    ck_assert(!(kn_usarsim_state(U)->have & KN_HAVE_BATTERY));
    ck_assert_double_eq(stat_num("sources", "battery_life_s"), 1200);
    feed(REAL_18);
    ck_assert_uint_eq(status().time_us, 477758200);
    ck_assert(!(kn_usarsim_state(U)->have & KN_HAVE_BATTERY));
    feed("STA {Time 478.0000} {Battery 0} {Type GroundVehicle}\r\n");
    ck_assert(kn_usarsim_state(U)->have & KN_HAVE_BATTERY);
    ck_assert_uint_eq(status().battery_mv, 0);
    feed("STA {Time 479.0000} {Battery 12} {Type GroundVehicle}\r\n");
    ck_assert(!(kn_usarsim_state(U)->have & KN_HAVE_BATTERY));
    ck_assert_uint_eq(kn_usarsim_malformed_total(U), 0);
    client_free();
}

START_TEST(real_flipper_angles)
{
    client_ready(NULL);
    feed(REAL_STA_FLIPPERS);
    const struct kn_state *s = kn_usarsim_state(U);
    ck_assert(s->have & KN_HAVE_FLIPPER);
    /* front joints turn the other way: -0.0006 on FRFlipper is +0.0006 */
    ck_assert_double_eq_tol(s->flipper_rad[KN_FR], 0.0006, 1e-12);
    ck_assert_double_eq_tol(s->flipper_rad[KN_FL], 0.0005, 1e-12);
    ck_assert_double_eq_tol(s->flipper_rad[KN_RR], 0.0005, 1e-12);
    ck_assert_double_eq_tol(s->flipper_rad[KN_RL], 0.0006, 1e-12);
    struct kn_krp_status st = status();
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq(st.flipper_cdeg[k], 3);
    ck_assert_str_eq(stat_str("sources", "flippers"), "sta");
    client_free();
}

START_TEST(real_actuator_lines)
{
    client_ready(NULL);
    feed(REAL_6); /* CameraPanTilt: not a flipper */
    ck_assert_int_eq(stat_num("received", "ASTA_MISSTA"), 1);
    ck_assert_str_eq(stat_str("sources", "flippers"), "command");
    feed("ASTA {Time 12.5000} {Name FRFlipper} {Link 1} {Value 0.5000}\r\n");
    const struct kn_state *s = kn_usarsim_state(U);
    ck_assert_double_eq_tol(s->flipper_rad[KN_FR], -0.5, 1e-12);
    ck_assert_str_eq(stat_str("sources", "flippers"), "asta");
    ck_assert_uint_eq(kn_usarsim_malformed_total(U), 0);
    client_free();
}

START_TEST(real_conf_geo_nfo_camera)
{
    client_ready(NULL);
    feed(REAL_1);
    ck_assert_str_eq(stat_str("level", NULL), "DM-USAR_yellow_250");
    feed(REAL_13);
    ck_assert_double_eq_tol(stat_num("server", "max_wheel_speed_rad_s"), 1.2999, 1e-9);
    feed(REAL_14);
    ck_assert_double_eq_tol(stat_num("server", "wheel_radius_m"), 0.098, 1e-9);
    feed(REAL_16);
    feed(REAL_21);
    ck_assert_int_eq(stat_num("received", "other_sensors"), 1);
    ck_assert_int_eq(stat_num("server", "answers"), 2);
    ck_assert_uint_eq(kn_usarsim_malformed_total(U), 0);
    /* the reported radius is shown, not used: DRIVE keeps the config's 0.08 */
    out_clear();
    command(0.1, 0.1, 0, NULL, false);
    ck_assert_str_eq(C.out, "DRIVE {Left 1.2500} {Right 1.2500}\r\n");
    /* and beyond the reported maximum wheel speed is counted */
    ck_assert_int_eq(stat_num("sent", "drive_over_max_speed"), 0);
    command(0.2, 0.2, 0, NULL, false);
    ck_assert_int_eq(stat_num("sent", "drive_over_max_speed"), 1);
    client_free();
}

START_TEST(every_real_line_is_taken)
{
    static const char *const lines[] = {
        REAL_1,         REAL_2,   REAL_4,      REAL_6,         REAL_7,
        REAL_12,        REAL_13,  REAL_14,     REAL_16,        REAL_18,
        REAL_19,        REAL_20,  REAL_21,     REAL_22,        REAL_STA_FLIPPERS,
        REAL_POSES_UVA, REAL_GPS, REAL_GPS_UT, REAL_GEO_SONAR, REAL_CONF_MISPKG,
    };
    client_ready(NULL);
    int states0 = C.states;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        feed(lines[i]);
    ck_assert_uint_eq(kn_usarsim_malformed_total(U), 0);
    ck_assert_int_eq(stat_num("unknown_head", NULL), 0);
    ck_assert_int_eq(C.fails, 0);
    ck_assert_int_ge(C.states, states0 + 8);
    client_free();
}

/* ---- bad input ---- */

START_TEST(malformed_lines_counted_and_survived)
{
    client_ready(NULL);
    static const struct {
        const char *line;
        enum kn_usar_result why;
    } bad[] = {
        { "SEN {Type GroundTruth} {Location 1,2} {Orientation 0,0,0}\r\n", KN_USAR_EVALUE },
        { "SEN {Time 1,5} {Type INS} {Location 0,0,0} {Orientation 0,0,0}\r\n", KN_USAR_EVALUE },
        { "STA {Time 1.0\r\n", KN_USAR_EBRACE },
        { "{Type GroundVehicle}\r\n", KN_USAR_EHEAD },
        { "SEN Type INS\r\n", KN_USAR_ESTRAY },
        { "SEN {Time 1.0}\r\n", KN_USAR_EMISSING },
        { "SEN {Type GroundTruth} {Location 1,2,3}\r\n", KN_USAR_EMISSING },
        { "SEN {Type Encoder} {Tick 5}\r\n", KN_USAR_ESEQUENCE },
        { "STA {Time 1.0} {Battery 12\x01} {Type GroundVehicle}\r\n", KN_USAR_ECTRL },
        { "STA {Time 1.0} {FRFlipper north}\r\n", KN_USAR_EVALUE },
        { "SEN {Type Odometry} {Pose 1 2 3}\r\n", KN_USAR_EVALUE },
        { "ASTA {Value 1.0} {Link 1}\r\n", KN_USAR_ESEQUENCE },
        { "STA {}\r\n", KN_USAR_EGROUP },
        { "SEN {Type INS} {Location nan,0,0} {Orientation 0,0,0}\r\n", KN_USAR_EVALUE },
        { "SEN {Type INS} {Location 1e999,0,0} {Orientation 0,0,0}\r\n", KN_USAR_EVALUE },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t before = kn_usarsim_malformed(U, bad[i].why);
        feed(bad[i].line);
        ck_assert_msg(kn_usarsim_malformed(U, bad[i].why) == before + 1,
                      "line %zu \"%s\" not "
                      "counted as %s",
                      i, bad[i].line, kn_usar_strerror(bad[i].why));
    }
    ck_assert_uint_eq(kn_usarsim_malformed_total(U), sizeof bad / sizeof bad[0]);
    /* an over-long line is dropped whole, then lines flow again */
    static char big[KN_USAR_MAX_LINE + 64];
    memset(big, 'x', sizeof big - 3);
    memcpy(big, "SEN {Type INS} {Name ", 21);
    big[sizeof big - 3] = '\r';
    big[sizeof big - 2] = '\n';
    big[sizeof big - 1] = '\0';
    feed(big);
    ck_assert_uint_eq(kn_usarsim_malformed(U, KN_USAR_ETOOLONG), 1);
    /* client commands and unknown heads are not errors, just not ours */
    feed("DRIVE {Left 1} {Right 1}\r\nFOO {Bar 1}\r\n");
    ck_assert_int_eq(stat_num("ignored", NULL), 1);
    ck_assert_int_eq(stat_num("unknown_head", NULL), 1);
    ck_assert_int_eq(C.fails, 0);
    ck_assert(kn_usarsim_is_ready(U));
    /* and good lines still count */
    feed(REAL_4);
    ck_assert_int_eq(status().pos_mm[0], 4500);
    ck_assert_double_eq(stat_num("malformed", "bad_value"), 6);
    ck_assert_str_ne(stat_str("last_malformed", NULL), "");
    client_free();
}

START_TEST(die_reconnects)
{
    client_ready(NULL);
    feed("DIE {Killer None} {DamageType Crushed}\r\n");
    ck_assert_int_eq(C.fails, 1);
    ck_assert_int_eq(stat_num("deaths", NULL), 1);
    client_free();
}

/* ---- framing ---- */

START_TEST(framing_any_eol_and_split)
{
    client_ready(NULL);
    int s0 = C.states;
    const char *gt = "SEN {Time 2.0} {Type GroundTruth} {Name G} {Location 1.00,2.00,0.00} "
                     "{Orientation 0.00,0.00,0.00}";
    char all[1024];
    /* CR LF, LF, CR, LF CR: every one ends a line */
    snprintf(all, sizeof all, "%s\r\n%s\n%s\r%s\n\r", gt, gt, gt, gt);
    /* byte by byte, as the slowest TCP would hand them over */
    for (size_t i = 0; all[i]; i++)
        kn_usarsim_feed(U, all + i, 1, now_ns);
    ck_assert_int_eq(C.states, s0 + 4);
    /* several lines in one read */
    kn_usarsim_feed(U, all, strlen(all), now_ns);
    ck_assert_int_eq(C.states, s0 + 8);
    ck_assert_uint_eq(kn_usarsim_malformed_total(U), 0);
    ck_assert_int_eq(status().pos_mm[1], -2000);
    /* a partial line is dropped by a reconnect */
    feed("SEN {Time 3.0} {Type Ground");
    kn_usarsim_disconnected(U);
    kn_usarsim_connected(U, now_ns);
    feed("Truth {Name X}\r\n");
    ck_assert_uint_eq(kn_usarsim_malformed_total(U), 0);
    ck_assert_int_eq(stat_num("unknown_head", NULL), 1);
    client_free();
}

/* ---- commands ---- */

static void check_udk_commands(void)
{
    client_ready(NULL);
    /* the robot spawned at rest: belts 0 need no DRIVE */
    command(0, 0, 0, NULL, false);
    ck_assert_str_eq(C.out, "");
    command(0.1, -0.05, 0, NULL, false);
    ck_assert_str_eq(C.out, "DRIVE {Left 1.2500} {Right -0.6250}\r\n");
    out_clear();
    const double deg[4] = { 30, 0, 0, -45 };
    command(0.1, -0.05, (1u << KN_FL) | (1u << KN_RR), deg, false);
    /* FL sign -1, RR +1 */
    ck_assert_str_eq(C.out,
                     "SET {Type Joint} {Name FLFlipper} {Opcode Angle} {Params -0.5236}\r\n"
                     "SET {Type Joint} {Name RRFlipper} {Opcode Angle} {Params -0.7854}\r\n");
    /* the target stands for the missing angle feedback */
    ck_assert_int_eq(status().flipper_cdeg[KN_FL], 3000);
    ck_assert_int_eq(status().flipper_cdeg[KN_RR], -4500);
    out_clear();
    /* unchanged set-points at 1 kHz: nothing goes out */
    for (int i = 0; i < 500; i++) {
        now_ns += 1000000;
        command(0.1, -0.05, 0x0F, (const double[4]){ 30, 0, 0, -45 }, false);
    }
    ck_assert_str_eq(C.out, "SET {Type Joint} {Name FRFlipper} {Opcode Angle} {Params 0.0000}\r\n"
                            "SET {Type Joint} {Name RLFlipper} {Opcode Angle} {Params 0.0000}\r\n");
    ck_assert_int_ge(stat_num("sent", "drive_repeats_suppressed"), 500);
    out_clear();
    /* re-applied after a reconnect: everything */
    command(0.1, -0.05, 0x0F, deg, true);
    ck_assert_str_eq(C.out,
                     "DRIVE {Left 1.2500} {Right -0.6250}\r\n"
                     "SET {Type Joint} {Name FLFlipper} {Opcode Angle} {Params -0.5236}\r\n"
                     "SET {Type Joint} {Name FRFlipper} {Opcode Angle} {Params 0.0000}\r\n"
                     "SET {Type Joint} {Name RLFlipper} {Opcode Angle} {Params 0.0000}\r\n"
                     "SET {Type Joint} {Name RRFlipper} {Opcode Angle} {Params -0.7854}\r\n");
    out_clear();
    /* STOP: belts 0, flippers held */
    command(0, 0, 0x0F, deg, false);
    ck_assert_str_eq(C.out, "DRIVE {Left 0.0000} {Right 0.0000}\r\n");
    out_clear();
    /* a hair below zero is still zero on the wire, never "-0.0000" */
    command(-1e-9, 1e-9, 0, NULL, false);
    ck_assert_str_eq(C.out, "");
    command(NAN, INFINITY, 0, NULL, true);
    ck_assert_str_eq(C.out, "DRIVE {Left 0.0000} {Right 0.0000}\r\n");
    client_free();
}

START_TEST(commands_udk)
{
    check_udk_commands();
}

START_TEST(commands_ut2004)
{
    client_ready(",\"usarsim\":{\"dialect\":\"ut2004\"}");
    const double deg[4] = { 10, 20, 30, 40 };
    command(0.08, 0.08, 0x0F, deg, false);
    /* FL, FR: -1; RL, RR: +1; in the order clients send them */
    ck_assert_str_eq(C.out, "DRIVE {Left 1.0000} {Right 1.0000}\r\n"
                            "MULTIDRIVE {FRFlipper -0.3491} {FLFlipper -0.1745} "
                            "{RRFlipper 0.6981} {RLFlipper 0.5236}\r\n");
    out_clear();
    command(0.08, 0.08, 0x0F, (const double[4]){ 10, 20, 35, 40 }, false);
    ck_assert_str_eq(C.out, "MULTIDRIVE {RLFlipper 0.6109}\r\n");
    out_clear();
    command(0.08, 0.08, 0x0F, (const double[4]){ 10, 20, 35, 40 }, true);
    ck_assert_str_eq(C.out, "DRIVE {Left 1.0000} {Right 1.0000}\r\n"
                            "MULTIDRIVE {FRFlipper -0.3491} {FLFlipper -0.1745} "
                            "{RRFlipper 0.6981} {RLFlipper 0.6109}\r\n");
    client_free();
}

START_TEST(commands_custom_joints_and_offsets)
{
    client_ready(",\"wheel_radius_m\":0.1,\"flippers\":{\"FR\":{\"joint\":\"FrontRight\","
                 "\"sign\":1,\"offset_deg\":90}}");
    command(0.25, 0.05, 1u << KN_FR, (const double[4]){ 0, -90, 0, 0 }, false);
    ck_assert_str_eq(C.out,
                     "DRIVE {Left 2.5000} {Right 0.5000}\r\n"
                     "SET {Type Joint} {Name FrontRight} {Opcode Angle} {Params 0.0000}\r\n");
    /* and its angle comes back through the same mapping */
    feed("STA {Time 3.0} {Type GroundVehicle} {FrontRight 1.5708}\r\n");
    ck_assert_int_eq(status().flipper_cdeg[KN_FR], 0);
    client_free();
}

START_TEST(commands_under_comma_locale)
{
    if (!h_comma_locale_enter("commands_under_comma_locale"))
        return;
    check_udk_commands();
    client_new(",\"usarsim\":{\"location_m\":[1.5,-2.25,0.125]}");
    kn_usarsim_connected(U, now_ns);
    ck_assert_str_eq(C.out, "INIT {ClassName USARBot.Kenaf} {Name kenaf} "
                            "{Location 1.5000,2.2500,-0.1250} {Rotation 0.0000,0.0000,0.0000}\r\n");
    feed(REAL_4);
    ck_assert_int_eq(status().pos_mm[2], -1850);
    client_free();
    setlocale(LC_ALL, "C");
}

/* ---- reconnect ---- */

START_TEST(reinit_at_last_pose)
{
    client_ready(",\"usarsim\":{\"start\":\"Point1\"}");
    feed("SEN {Time 10.0} {Type GroundTruth} {Name GT} {Location 4.50,1.90,1.85} "
         "{Orientation 0.00,0.00,1.57}\r\n");
    feed("SEN {Time 10.1} {Type GroundTruth} {Name GT} {Location 4.60,1.95,1.85} "
         "{Orientation 0.00,0.00,1.60}\r\n");
    kn_usarsim_disconnected(U);
    out_clear();
    kn_usarsim_connected(U, now_ns);
    /* where the robot was, not the PlayerStart */
    ck_assert_str_eq(C.out, "INIT {ClassName USARBot.Kenaf} {Name kenaf} "
                            "{Location 4.6000,1.9500,1.8500} {Rotation 0.0000,0.0000,1.6000}\r\n");
    ck_assert_str_eq(stat_str("last_init", NULL),
                     "INIT {ClassName USARBot.Kenaf} {Name kenaf} "
                     "{Location 4.6000,1.9500,1.8500} {Rotation 0.0000,0.0000,1.6000}");
    /* odometry alone is relative to the spawn: never a spawn pose */
    client_free();
    client_ready(NULL);
    feed("SEN {Type Odometry} {Name Odometry} {Pose 1.0000,0.5000,0.1000}\r\n");
    ck_assert_int_eq(status().pos_mm[1], -500);
    kn_usarsim_disconnected(U);
    out_clear();
    kn_usarsim_connected(U, now_ns);
    ck_assert_str_eq(C.out, "INIT {ClassName USARBot.Kenaf} {Name kenaf} "
                            "{Location 0.0000,0.0000,0.0000} {Rotation 0.0000,0.0000,0.0000}\r\n");
    client_free();
}

/* ---- edge cases seen with real servers ---- */

/* Odometry counts from where the robot spawned, along its heading then:
 * spawned at (4, 2.5) facing +y (KRP), {Pose 0,0,0} is (4, 2.5) and 1 m
 * ahead and 0.5 m to the right is (4.5, 3.5). */
START_TEST(odometry_through_spawn_pose)
{
    client_ready(",\"usarsim\":{\"location_m\":[4,2.5,0.25],\"rotation_deg\":[0,0,90]}");
    feed("SEN {Time 2.0} {Type Odometry} {Name Odometry} {Pose 0.0000,0.0000,0.0000}\r\n");
    struct kn_krp_status st = status();
    ck_assert_int_eq(st.pos_mm[0], 4000);
    ck_assert_int_eq(st.pos_mm[1], 2500);
    ck_assert_int_eq(st.pos_mm[2], 250);
    ck_assert_int_eq(st.rpy_cdeg[2], 9000);
    feed("SEN {Time 2.1} {Type Odometry} {Name Odometry} {Pose 1.0000,0.5000,0.1000}\r\n");
    st = status();
    ck_assert_int_eq(st.pos_mm[0], 4500);
    ck_assert_int_eq(st.pos_mm[1], 3500);
    /* 0.1 rad clockwise (USARSim) from 90 deg left */
    ck_assert_int_eq(st.rpy_cdeg[2], 8427);
    ck_assert_str_eq(stat_str("sources", "pose"), "odometry");
    client_free();
}

/* UDK: one STA that happens to carry flipper fields must not pin the
 * flippers to it: a later command is the newest word on them, STATUS
 * shows it, and without a fresh measurement they are not "measured" (a
 * STOP would otherwise command them back to the stale angle). */
START_TEST(flippers_from_latest_source)
{
    client_ready(NULL);
    feed("STA {Time 2.0} {Battery 99999} {Type GroundVehicle} {FRFlipper 0.0000} "
         "{FLFlipper 0.0000} {RRFlipper 0.0000} {RLFlipper 0.0000}\r\n");
    ck_assert(kn_usarsim_state(U)->have & KN_HAVE_FLIPPER);
    now_ns += 2 * S_NS;
    const double deg[4] = { 30, 30, 30, 30 };
    command(0, 0, 0x0F, deg, false);
    for (int i = 0; i < 5; i++) {
        now_ns += S_NS / 10;
        feed("STA {Time 4.0} {Battery 99999} {Type GroundVehicle} {LightToggle False}\r\n");
    }
    ck_assert(!(C.last.have & KN_HAVE_FLIPPER));
    struct kn_krp_status st = status();
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq(st.flipper_cdeg[k], 3000);
    ck_assert_str_eq(stat_str("sources", "flippers"), "command");
    ck_assert_double_eq_tol(stat_num("sources", "flipper_age_s"), 0.5, 1e-9);
    /* measurements that keep coming win again, newest first */
    feed("STA {Time 4.1} {Battery 99999} {Type GroundVehicle} {FRFlipper -0.5000} "
         "{FLFlipper -0.5000} {RRFlipper 0.5000} {RLFlipper 0.5000}\r\n");
    ck_assert(C.last.have & KN_HAVE_FLIPPER);
    ck_assert_double_eq_tol(C.last.flipper_rad[KN_FR], 0.5, 1e-12);
    ck_assert_str_eq(stat_str("sources", "flippers"), "sta");
    now_ns += S_NS / 10;
    feed("ASTA {Time 4.2} {Name FRFlipper} {Link 1} {Value -0.6000}\r\n");
    ck_assert_double_eq_tol(C.last.flipper_rad[KN_FR], 0.6, 1e-12);
    ck_assert_double_eq_tol(C.last.flipper_rad[KN_RR], 0.5, 1e-12);
    ck_assert(C.last.have & KN_HAVE_FLIPPER);
    client_free();
}

/* UDK without an answer to GETCONF {Type Encoder}: its W<i> encoders
 * still wrap after one turn (628 ticks at the default Resolution 0.01). */
START_TEST(encoder_wrap_without_conf)
{
    client_ready(NULL);
    feed("SEN {Time 5.0} {Type Encoder} {Name W0} {Tick 600} {Name W1} {Tick -600}\r\n");
    feed("SEN {Time 5.1} {Type Encoder} {Name W0} {Tick 620} {Name W1} {Tick -620}\r\n");
    feed("SEN {Time 5.2} {Type Encoder} {Name W0} {Tick 10} {Name W1} {Tick -10}\r\n");
    struct kn_krp_status st = status();
    ck_assert_int_eq(st.crawler_count[KN_RIGHT], 38);
    ck_assert_int_eq(st.crawler_count[KN_LEFT], -38);
    ck_assert_int_eq(stat_num("sources", "encoder_modulus"), 628);
    client_free();
}

/* A counter that wraps somewhere unknown (here every 2000 ticks, 0.5 m
 * at 4000 ticks/m): the jump is far beyond what the belts can do in that
 * time, so it is taken as a wrap and bridged at the last speed, never
 * counted as travel. */
START_TEST(encoder_jump_is_a_wrap)
{
    client_ready(NULL);
    /* UT2004 names: no per-turn default applies */
    feed("SEN {Time 5.0} {Type Encoder} {Name ECLeft Tick 1950} {Name ECRight Tick 150}\r\n");
    feed("SEN {Time 5.1} {Type Encoder} {Name ECLeft Tick 1970} {Name ECRight Tick 170}\r\n");
    feed("SEN {Time 5.2} {Type Encoder} {Name ECLeft Tick -10} {Name ECRight Tick 190}\r\n");
    struct kn_krp_status st = status();
    ck_assert_int_eq(st.crawler_count[KN_RIGHT], 40);
    ck_assert_int_eq(st.crawler_count[KN_LEFT], 40);
    ck_assert_int_eq(stat_num("received", "encoder_jumps"), 1);
    client_free();
}

/* MISSTA (and ASTA) carry the game time: the robot's clock follows it
 * even when none of their links is a flipper. */
START_TEST(missta_time_advances)
{
    client_ready(NULL);
    int before = C.states;
    feed(REAL_6);
    ck_assert_int_gt(C.states, before);
    ck_assert_double_eq_tol(C.last.time_s, 395.38, 1e-9);
    ck_assert_uint_eq(status().time_us, 395380000);
    client_free();
}

/* ---- encoders and derived quantities ---- */

START_TEST(encoder_wrap_and_speed)
{
    client_ready(NULL);
    feed("CONF {Type Encoder} {Name EncW0W1} {ScanInterval 0.1000} {Resolution 0.0100}\r\n");
    ck_assert_int_eq(stat_num("sources", "encoder_modulus"), 628);
    feed("SEN {Time 5.0} {Type Encoder} {Name W0} {Tick 600} {Name W1} {Tick -600}\r\n");
    feed("SEN {Time 5.1} {Type Encoder} {Name W0} {Tick 620} {Name W1} {Tick -620}\r\n");
    feed("SEN {Time 5.2} {Type Encoder} {Name W0} {Tick 10} {Name W1} {Tick -10}\r\n");
    /* 20 + 18 ticks forward on the right (through the wrap), back on the left */
    struct kn_krp_status st = status();
    ck_assert_int_eq(st.crawler_count[KN_RIGHT], 38);
    ck_assert_int_eq(st.crawler_count[KN_LEFT], -38);
    /* 18 ticks = 4.5 mm in 0.1 s */
    ck_assert_int_eq(st.crawler_speed_mm_s[KN_RIGHT], 45);
    ck_assert_int_eq(st.crawler_speed_mm_s[KN_LEFT], -45);
    /* counts go on across a reconnect, from the new robot's first tick */
    kn_usarsim_disconnected(U);
    kn_usarsim_connected(U, now_ns);
    feed("SEN {Time 9.0} {Type Encoder} {Name W0} {Tick 0} {Name W1} {Tick 0}\r\n");
    feed("SEN {Time 9.1} {Type Encoder} {Name W0} {Tick 2} {Name W1} {Tick 2}\r\n");
    st = status();
    ck_assert_int_eq(st.crawler_count[KN_RIGHT], 40);
    ck_assert_int_eq(st.crawler_count[KN_LEFT], -36);
    client_free();
}

START_TEST(encoder_counts_per_tick)
{
    client_ready(",\"counts_per_tick\":3.2");
    feed("SEN {Type Encoder} {Name ECLeft Tick 0} {Name ECRight Tick 0}\r\n");
    feed("SEN {Type Encoder} {Name ECLeft Tick 100} {Name ECRight Tick 50}\r\n");
    struct kn_krp_status st = status();
    ck_assert_int_eq(st.crawler_count[KN_LEFT], 320);
    ck_assert_int_eq(st.crawler_count[KN_RIGHT], 160);
    client_free();
}

START_TEST(rates_and_accel_derived)
{
    client_ready(NULL);
    feed("SEN {Time 1.000} {Type GroundTruth} {Name G} {Location 0.000,0.000,0.000} "
         "{Orientation 0.000,0.000,0.000}\r\n");
    feed("SEN {Time 1.100} {Type GroundTruth} {Name G} {Location 0.050,0.000,0.000} "
         "{Orientation 0.000,0.000,0.100}\r\n");
    /* z down, yaw + clockwise: 1 rad/s to the right is -1 rad/s about KRP z */
    const struct kn_state *s = kn_usarsim_state(U);
    ck_assert_double_eq_tol(s->rate_rad_s[2], -1.0, 1e-9);
    ck_assert_double_eq_tol(s->rate_rad_s[0], 0.0, 1e-9);
    ck_assert_str_eq(stat_str("sources", "rate"), "derived");
    feed("SEN {Time 1.200} {Type GroundTruth} {Name G} {Location 0.100,0.000,0.000} "
         "{Orientation 0.000,0.000,0.100}\r\n");
    /* constant speed: the accelerometer reads gravity only */
    ck_assert_double_eq_tol(s->accel_m_s2[0], 0.0, 1e-6);
    ck_assert_double_eq_tol(s->accel_m_s2[2], KN_GRAVITY, 1e-6);
    ck_assert_double_eq_tol(s->rate_rad_s[2], 0.0, 1e-9);
    feed("SEN {Time 1.300} {Type GroundTruth} {Name G} {Location 0.160,0.000,0.000} "
         "{Orientation 0.000,0.000,0.100}\r\n");
    /* 0.5 -> 0.6 m/s in 0.1 s along the world x: 1 m/s^2, seen in the body
     * turned 0.1 rad to the right (KRP yaw -0.1): ahead and to its left */
    ck_assert_double_eq_tol(s->accel_m_s2[0], cos(0.1), 1e-6);
    ck_assert_double_eq_tol(s->accel_m_s2[1], sin(0.1), 1e-6);
    ck_assert_str_eq(stat_str("sources", "accel"), "derived");
    client_free();
}

START_TEST(stats_shape)
{
    client_ready(NULL);
    cJSON *o = cJSON_CreateObject();
    kn_usarsim_stats(U, o);
    const char *keys[] = { "dialect",  "spawned", "last_init", "malformed",
                           "received", "sources", "server",    "sent" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ck_assert_msg(cJSON_GetObjectItemCaseSensitive(o, keys[i]) != NULL, "no %s", keys[i]);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "malformed");
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(m, "braces")));
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(m, "too_long")));
    cJSON_Delete(o);
    client_free();
}

/* ---- the world of an engine at an address ---- */

/* A client of that backend kind at host ("": an engine kenaf-simd
 * spawns), connected, with the robot spawned. */
static void world_client(enum kn_backend_kind kind, const char *host)
{
    struct kn_cfg_robot r = robot_cfg(NULL);
    r.backend.kind = kind;
    snprintf(r.backend.host, sizeof r.backend.host, "%s", host);
    client_from(&r);
    kn_usarsim_connected(U, now_ns);
    ck_assert_ptr_null(strstr(C.out, "World")); /* not before the robot exists */
    feed(REAL_22);
}

/* backend engine with an address: asked once spawned; whole answers go to
 * io.world, bad ones and an engine that does not know the command are
 * counted, and a USARSim or a spawned engine is never asked. */
START_TEST(engine_world_answer)
{
    world_client(KN_BACKEND_USARSIM, "127.0.0.1");
    ck_assert_ptr_null(strstr(C.out, "World"));
    client_free();
    world_client(KN_BACKEND_ENGINE, "");
    ck_assert_ptr_null(strstr(C.out, "World"));
    client_free();
    world_client(KN_BACKEND_ENGINE, "127.0.0.1");
    ck_assert_msg(strstr(C.out, "KENAF {Cmd World}\r\n") != NULL, "%s", C.out);
    ck_assert_double_eq(stat_num("world_asked", NULL), 1);
    /* a whole answer */
    const char *text = "{\"terrain\":{\"type\":\"flat\"},\"robot\":{}}";
    char line[KN_USARWORLD_LINE_MAX];
    ck_assert_int_gt(kn_usarworld_format(text, strlen(text), 0, line, sizeof line), 0);
    feed(line);
    ck_assert_int_eq(worlds, 1);
    ck_assert_str_eq(world_got, text);
    /* a part that does not read; a refusal; an engine that does not know it */
    feed("KENAF {Cmd World} {Status OK} {Part 1} {Parts 1} {Bytes 3} {Data YW$j}\r\n");
    feed("KENAF {Cmd World} {Status Failed} {Reason no world loaded}\r\n");
    kn_usarsim_disconnected(U);
    kn_usarsim_connected(U, now_ns);
    feed(REAL_22);
    ck_assert_double_eq(stat_num("world_asked", NULL), 2);
    feed("KENAF {Cmd Unknown} {Status Failed} {Reason no such command}\r\n");
    ck_assert_int_eq(worlds, 1);
    ck_assert_double_eq(stat_num("world_answers", NULL), 1);
    ck_assert_double_eq(stat_num("world_bad", NULL), 3);
    client_free();
    /* an engine that says nothing: warned and counted once after the
     * timeout, and an answer that comes later is still taken */
    world_client(KN_BACKEND_ENGINE, "127.0.0.1");
    worlds = 0;
    now_ns += KN_USARSIM_WORLD_TIMEOUT_NS - 1;
    feed(REAL_22);
    ck_assert_double_eq(stat_num("world_timeouts", NULL), 0);
    now_ns += 1;
    feed(REAL_22);
    now_ns += KN_USARSIM_WORLD_TIMEOUT_NS;
    feed(REAL_22);
    ck_assert_double_eq(stat_num("world_timeouts", NULL), 1);
    feed(line);
    ck_assert_int_eq(worlds, 1);
    ck_assert_double_eq(stat_num("world_answers", NULL), 1);
    client_free();
}
END_TEST

int main(void)
{
    kn_log_set_level(KN_LOG_WARN);
    h_comma_locale_setup();
    Suite *s = suite_create("usarsim-client");
    TCase *t = tcase_create("init");
    tcase_add_test(t, init_at_configured_pose);
    tcase_add_test(t, init_at_player_start);
    tcase_add_test(t, ready_only_after_sta_or_sen);
    tcase_add_test(t, unanswered_queries_time_out);
    tcase_add_test(t, reinit_at_last_pose);
    suite_add_tcase(s, t);
    t = tcase_create("real_lines");
    tcase_add_test(t, real_groundtruth_ut2004);
    tcase_add_test(t, real_groundtruth_udk);
    tcase_add_test(t, real_ins_alone_and_after_groundtruth);
    tcase_add_test(t, real_encoders);
    tcase_add_test(t, real_status_lines);
    tcase_add_test(t, real_flipper_angles);
    tcase_add_test(t, real_actuator_lines);
    tcase_add_test(t, real_conf_geo_nfo_camera);
    tcase_add_test(t, every_real_line_is_taken);
    suite_add_tcase(s, t);
    t = tcase_create("bad_input");
    tcase_add_test(t, malformed_lines_counted_and_survived);
    tcase_add_test(t, die_reconnects);
    tcase_add_test(t, framing_any_eol_and_split);
    suite_add_tcase(s, t);
    t = tcase_create("commands");
    tcase_add_test(t, commands_udk);
    tcase_add_test(t, commands_ut2004);
    tcase_add_test(t, commands_custom_joints_and_offsets);
    tcase_add_test(t, commands_under_comma_locale);
    suite_add_tcase(s, t);
    t = tcase_create("derived");
    tcase_add_test(t, encoder_wrap_and_speed);
    tcase_add_test(t, encoder_counts_per_tick);
    tcase_add_test(t, rates_and_accel_derived);
    tcase_add_test(t, stats_shape);
    suite_add_tcase(s, t);
    t = tcase_create("real_server_edges");
    tcase_add_test(t, odometry_through_spawn_pose);
    tcase_add_test(t, flippers_from_latest_source);
    tcase_add_test(t, encoder_wrap_without_conf);
    tcase_add_test(t, encoder_jump_is_a_wrap);
    tcase_add_test(t, missta_time_advances);
    suite_add_tcase(s, t);
    t = tcase_create("engine_world");
    tcase_add_test(t, engine_world_answer);
    suite_add_tcase(s, t);
    int rc = h_run_suite(s);
    h_comma_locale_teardown();
    return rc;
}
