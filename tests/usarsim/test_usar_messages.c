/* USARSim typed parser tests: each real line read into its struct with the
 * values it carries, both dialects' shapes of the same message, and the
 * error each broken message earns. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "real_lines.h"

static void vec_eq(const double v[3], double x, double y, double z)
{
    ck_assert_near(v[0], x);
    ck_assert_near(v[1], y);
    ck_assert_near(v[2], z);
}

/* ---- server -> client ---- */

START_TEST(nfo_banners)
{
    struct kn_usar_nfo n;
    tok_ok(REAL_1);
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_OK);
    ck_assert_view(n.gametype, "BotDeathMatch");
    ck_assert_view(n.level, "DM-USAR_yellow_250");
    ck_assert(n.has_time_limit && n.time_limit == 0.0);
    ck_assert(!n.has_start_poses);
    ck_assert_int_eq(n.n_poses, 0);
    tok_ok(REAL_12);
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_OK);
    ck_assert_view(n.level, "EmptyRoom");
    ck_assert(n.time_limit == 20.0);
    tok_ok("NFO {Level X}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_OK);
    ck_assert(!n.has_time_limit);
    ck_assert_uint_eq(n.gametype.n, 0);
    tok_ok("NFO {TimeLimit soon}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_EVALUE);
    tok_ok(REAL_18);
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_EKIND);
}
END_TEST

START_TEST(nfo_start_poses_three_shapes)
{
    struct kn_usar_nfo n;
    /* UDK / UvA: all poses in one group */
    tok_ok(REAL_POSES_UVA);
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_OK);
    ck_assert(n.has_start_poses);
    ck_assert_int_eq(n.start_poses, 3);
    ck_assert_int_eq(n.n_poses, 3);
    ck_assert_view(n.pose[0].name, "BlueGoal");
    vec_eq(n.pose[0].location, -2.55, -0.0, -0.19);
    vec_eq(n.pose[0].orientation, 0.0, -0.03, -0.01);
    ck_assert_view(n.pose[1].name, "MiddleField");
    ck_assert_view(n.pose[2].name, "YellowGoal");
    vec_eq(n.pose[2].orientation, 0.0, 0.0, 3.13);
    /* USARGazebo: one group per pose */
    tok_ok("NFO {StartPoses 2} {Point1 1.00,2.00,0.10 0.00,0.00,1.57}{Point2 -1,0,0.1 0,0,0}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_OK);
    ck_assert_int_eq(n.n_poses, 2);
    ck_assert_view(n.pose[1].name, "Point2");
    vec_eq(n.pose[1].location, -1.0, 0.0, 0.1);
    /* UT2004 (MOAST comment): {Name n Location .. Orientation ..} */
    tok_ok("NFO {StartPoses 2} {Name UnitLoader1 Location 10.24,3.54,10.05 Orientation "
           "0.00,0.00,1.60} {Name UnitLoader2 Location 1,2,3 Orientation 0,0,0}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_OK);
    ck_assert_int_eq(n.n_poses, 2);
    ck_assert_view(n.pose[0].name, "UnitLoader1");
    vec_eq(n.pose[0].location, 10.24, 3.54, 10.05);
    vec_eq(n.pose[0].orientation, 0.0, 0.0, 1.60);
    /* the same with one pair per group */
    tok_ok("NFO {StartPoses 1} {Name P} {Location 1,2,3} {Orientation 0,0,1}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_OK);
    ck_assert_int_eq(n.n_poses, 1);
    vec_eq(n.pose[0].orientation, 0.0, 0.0, 1.0);
    /* none */
    tok_ok("NFO {StartPoses 0}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_OK);
    ck_assert(n.has_start_poses && n.start_poses == 0 && n.n_poses == 0);
    /* the announced count is reported, not enforced */
    tok_ok("NFO {StartPoses 5} {A 0,0,0 0,0,0}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_OK);
    ck_assert(n.start_poses == 5 && n.n_poses == 1);
}
END_TEST

START_TEST(nfo_start_poses_errors_and_caps)
{
    struct kn_usar_nfo n;
    tok_ok("NFO {StartPoses 1} {A 0,0,0}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_EVALUE);
    tok_ok("NFO {StartPoses 1} {A 0,0,0 0,0,0 B}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_EVALUE);
    tok_ok("NFO {StartPoses 1} {A 0,0 0,0,0}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_EVALUE);
    tok_ok("NFO {StartPoses x}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_EVALUE);
    tok_ok("NFO {StartPoses 1} {Name P Location 1,2,3}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_EMISSING);
    tok_ok("NFO {StartPoses 2} {Name P Location 1,2,3} {Name Q Location 1,2,3 Orientation 0,0,0}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_EMISSING);
    tok_ok("NFO {StartPoses 1} {Location 1,2,3} {Name P}");
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_ESEQUENCE);
    char buf[4096];
    size_t len = (size_t)snprintf(buf, sizeof buf, "NFO {StartPoses 20} {");
    for (int i = 0; i < 20; i++)
        len +=
            (size_t)snprintf(buf + len, sizeof buf - len, "%sP%d %d,0,0 0,0,0", i ? " " : "", i, i);
    snprintf(buf + len, sizeof buf - len, "}");
    tok_ok(buf);
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_OK);
    ck_assert_int_eq(n.n_poses, KN_USAR_MAX_ITEMS);
    ck_assert_int_eq(n.poses_dropped, 20 - KN_USAR_MAX_ITEMS);
    ck_assert_near(n.pose[15].location[0], 15.0);
}
END_TEST

START_TEST(sta_both_dialects)
{
    struct kn_usar_sta s;
    tok_ok(REAL_7); /* UT2004 */
    ck_assert_int_eq(kn_usar_parse_sta(&L, &s), KN_USAR_OK);
    ck_assert_view(s.type, "GroundVehicle");
    ck_assert(s.has_time && s.time == 395.38);
    ck_assert(s.has_battery && s.battery == 1200.0);
    ck_assert(s.has_light_toggle && !s.light_toggle);
    ck_assert(s.has_light_intensity && s.light_intensity == 0.0);
    ck_assert_uint_eq(s.flipper_mask, 0);
    tok_ok(REAL_18); /* UDK: other key order */
    ck_assert_int_eq(kn_usar_parse_sta(&L, &s), KN_USAR_OK);
    ck_assert(s.time == 477.7582);
    ck_assert(s.battery == 99999.0);
    ck_assert(s.light_intensity == 100.0);
    ck_assert_view(s.type, "GroundVehicle");
    tok_ok(REAL_STA_FLIPPERS);
    ck_assert_int_eq(kn_usar_parse_sta(&L, &s), KN_USAR_OK);
    ck_assert_uint_eq(s.flipper_mask, 0xF);
    ck_assert(s.flipper[KN_FR] == -0.0006);
    ck_assert(s.flipper[KN_FL] == -0.0005);
    ck_assert(s.flipper[KN_RR] == 0.0005);
    ck_assert(s.flipper[KN_RL] == 0.0006);
    ck_assert(s.battery == 1196.0);
    /* no Time, a lowercase flipper key, a repeated key (first wins) */
    tok_ok("STA {Battery 5} {flflipper 0.5} {FLFlipper 9} {Battery x}");
    ck_assert_int_eq(kn_usar_parse_sta(&L, &s), KN_USAR_OK);
    ck_assert(!s.has_time);
    ck_assert_uint_eq(s.flipper_mask, 1u << KN_FL);
    ck_assert(s.flipper[KN_FL] == 0.5);
    ck_assert(s.battery == 5.0);
    tok_ok("STA {Time 1,5}");
    ck_assert_int_eq(kn_usar_parse_sta(&L, &s), KN_USAR_EVALUE);
    tok_ok("STA {LightToggle maybe}");
    ck_assert_int_eq(kn_usar_parse_sta(&L, &s), KN_USAR_EVALUE);
    tok_ok("STA {FRFlipper nan}");
    ck_assert_int_eq(kn_usar_parse_sta(&L, &s), KN_USAR_EVALUE);
    tok_ok(REAL_20);
    ck_assert_int_eq(kn_usar_parse_sta(&L, &s), KN_USAR_EKIND);
    /* ASTA is not STA */
    tok_ok("ASTA {Time 1} {Name A} {Link 1} {Value 0}");
    ck_assert_int_eq(kn_usar_parse_sta(&L, &s), KN_USAR_EKIND);
}
END_TEST

START_TEST(sen_ground_truth_and_ins)
{
    struct kn_usar_sen s;
    tok_ok(REAL_4);
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.sen_type, KN_USAR_SEN_GROUNDTRUTH);
    ck_assert(s.has_time && s.time == 395.3833);
    ck_assert_view(s.name, "GroundTruth");
    vec_eq(s.location, 4.50, 1.90, 1.85);
    vec_eq(s.orientation, 0.0, 6.28, 6.28);
    tok_ok(REAL_19);
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_view(s.name, "GndTruth");
    ck_assert(s.location[0] == 0.0 && signbit(s.location[0]));
    ck_assert(s.location[2] == 0.017);
    ck_assert(signbit(s.orientation[0]) && !signbit(s.orientation[1]));
    tok_ok(REAL_22);
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.sen_type, KN_USAR_SEN_INS);
    ck_assert(!s.has_time);
    ck_assert_view(s.name, "InsTest");
    vec_eq(s.location, 0.0, 0.0, -0.20);
    /* type and keys in another case */
    tok_ok("sen {type groundtruth} {location 1,2,3} {orientation 0,0,1}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.sen_type, KN_USAR_SEN_GROUNDTRUTH);
    ck_assert_uint_eq(s.name.n, 0);
    tok_ok("SEN {Type GroundTruth} {Location 1,2,3}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_EMISSING);
    tok_ok("SEN {Type INS} {Location 1,2} {Orientation 0,0,0}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_EVALUE);
    tok_ok("SEN {Type INS} {Location 1 2 3} {Orientation 0,0,0}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_EVALUE);
    tok_ok("SEN {Time 1} {Name X}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_EMISSING);
    tok_ok("SEN {Time x} {Type INS}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_EVALUE);
}
END_TEST

START_TEST(sen_encoder_sequences)
{
    struct kn_usar_sen s;
    tok_ok(REAL_2); /* UT2004: {Name X Tick n} */
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.sen_type, KN_USAR_SEN_ENCODER);
    ck_assert(!s.has_time);
    ck_assert_int_eq(s.n_ticks, 4);
    ck_assert_view(s.ticks[0].name, "ECLeft");
    ck_assert_view(s.ticks[3].name, "ECPan");
    ck_assert_int_eq(s.ticks[3].tick, 0);
    tok_ok(REAL_20); /* UDK: {Name W1} {Tick 0} */
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.n_ticks, 1);
    ck_assert_view(s.ticks[0].name, "W1");
    ck_assert(s.time == 477.7582);
    tok_ok(
        "SEN {Type Encoder} {Name ECLeft Tick 12} {Name ECRight Tick -5} {Name W3} {Tick 7.0000}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.n_ticks, 3);
    ck_assert_int_eq(s.ticks[0].tick, 12);
    ck_assert_int_eq(s.ticks[1].tick, -5);
    ck_assert_int_eq(s.ticks[2].tick, 7);
    tok_ok("SEN {Type Encoder}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.n_ticks, 0);
    tok_ok("SEN {Type Encoder} {Tick 0} {Name W1}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_ESEQUENCE);
    tok_ok("SEN {Type Encoder} {Name W1} {Name W2} {Tick 0}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_EMISSING);
    tok_ok("SEN {Type Encoder} {Name W1} {Tick 0} {Name W2}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_EMISSING);
    tok_ok("SEN {Type Encoder} {Name W1} {Tick 2.5}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_EVALUE);
    char buf[2048];
    size_t n = (size_t)snprintf(buf, sizeof buf, "SEN {Type Encoder}");
    for (int i = 0; i < 20; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, " {Name W%d} {Tick %d}", i, i * 10);
    tok_ok(buf);
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.n_ticks, KN_USAR_MAX_ITEMS);
    ck_assert_int_eq(s.ticks_dropped, 4);
    ck_assert_int_eq(s.ticks[15].tick, 150);
    /* a dropped item is still checked */
    snprintf(buf + n, sizeof buf - n, " {Name Wx} {Tick bad}");
    tok_ok(buf);
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_EVALUE);
}
END_TEST

START_TEST(sen_odometry_touch_other)
{
    struct kn_usar_sen s;
    tok_ok("SEN {Type Odometry} {Name Odometry} {Pose 0.0320,0.0000,0.0296}\r\n");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.sen_type, KN_USAR_SEN_ODOMETRY);
    vec_eq(s.pose, 0.032, 0.0, 0.0296);
    tok_ok("SEN {Time 44.5467} {Type Odometry} {Name Odo}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_EMISSING);
    tok_ok("SEN {Type Touch} {Name Touch Touch False}\r\n");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.sen_type, KN_USAR_SEN_TOUCH);
    ck_assert_int_eq(s.n_touches, 1);
    ck_assert_view(s.touches[0].name, "Touch");
    ck_assert(!s.touches[0].touch);
    tok_ok("SEN {Time 2.0000} {Type Touch} {Name T1} {Touch True} {Name T2} {Touch false}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.n_touches, 2);
    ck_assert(s.touches[0].touch && !s.touches[1].touch);
    tok_ok("SEN {Type Touch} {Name T1} {Touch yes}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_EVALUE);
    /* unknown types are reported with their name, the rest stays in the line */
    tok_ok(REAL_21);
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.sen_type, KN_USAR_SEN_OTHER);
    ck_assert_view(s.type, "Camera");
    ck_assert(s.time == 477.7743);
    tok_ok(REAL_GPS);
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    ck_assert_int_eq(s.sen_type, KN_USAR_SEN_OTHER);
    ck_assert_view(s.type, "GPS");
    ck_assert_view(s.name, "GPS1");
    struct kn_usar_str lat;
    ck_assert_int_eq(kn_usar_get_str(&L, "Latitude", &lat), KN_USAR_OK);
    ck_assert_view(lat, "47,40.3323,N");
    tok_ok(REAL_GPS_UT);
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    /* UT2004 sonar: every sonar in one line */
    tok_ok("SEN {Type Sonar} {Name F1 Range 4.5604} {Name F2 Range 2.4576}\r\n");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    int r = kn_usar_find(&L, "Range", 0);
    r = kn_usar_find(&L, "Range", r + 1);
    ck_assert_view(L.pair[r].value, "2.4576");
    ck_assert_view(L.pair[r - 1].value, "F2");
    /* a RangeScanner list through the generic accessors */
    tok_ok("SEN {Time 1.0} {Type RangeScanner} {Name Scanner1} {Resolution 0.0174} {FOV 3.1415} "
           "{Range 4.50,4.51,1.20,0.35}");
    ck_assert_int_eq(kn_usar_parse_sen(&L, &s), KN_USAR_OK);
    struct kn_usar_str rs;
    ck_assert_int_eq(kn_usar_get_str(&L, "Range", &rs), KN_USAR_OK);
    double ranges[8];
    size_t n;
    ck_assert_int_eq(kn_usar_parse_list(rs, ranges, 8, &n, NULL), KN_USAR_OK);
    ck_assert_uint_eq(n, 4);
    ck_assert(ranges[3] == 0.35);
}
END_TEST

START_TEST(links_asta_missta)
{
    struct kn_usar_links a;
    tok_ok(REAL_6);
    ck_assert_int_eq(kn_usar_parse_links(&L, &a), KN_USAR_OK);
    ck_assert(a.has_time && a.time == 395.38);
    ck_assert_view(a.name, "CameraPanTilt");
    ck_assert_int_eq(a.n, 2);
    ck_assert_int_eq(a.link[0].link, 1);
    ck_assert_int_eq(a.link[1].link, 2);
    ck_assert(a.link[1].has_value && a.link[1].value == 0.0);
    ck_assert(a.link[1].has_torque && a.link[1].torque == -20.0);
    ck_assert(!a.link[0].has_order);
    ck_assert_view(a.link[1].name, "CameraPanTilt");
    tok_ok("ASTA {Time 12.5000} {Name Arm} {Link 1} {Value 0.5000} {Link 2} {Value -0.2500}");
    ck_assert_int_eq(kn_usar_parse_links(&L, &a), KN_USAR_OK);
    ck_assert_int_eq(a.n, 2);
    ck_assert(a.link[1].value == -0.25 && !a.link[1].has_torque);
    /* a second {Name} renames the links after it */
    tok_ok("ASTA {Name A} {Link 1} {Value 1} {Name B} {Link 1} {Value 2}");
    ck_assert_int_eq(kn_usar_parse_links(&L, &a), KN_USAR_OK);
    ck_assert_view(a.name, "A");
    ck_assert_view(a.link[1].name, "B");
    tok_ok("ASTA {Name A} {Value 1}");
    ck_assert_int_eq(kn_usar_parse_links(&L, &a), KN_USAR_ESEQUENCE);
    tok_ok("ASTA {Name A} {Torque 1}");
    ck_assert_int_eq(kn_usar_parse_links(&L, &a), KN_USAR_ESEQUENCE);
    tok_ok("ASTA {Name A} {Link one}");
    ck_assert_int_eq(kn_usar_parse_links(&L, &a), KN_USAR_EVALUE);
    tok_ok("ASTA {Name A} {Link 1} {Value 1,5}");
    ck_assert_int_eq(kn_usar_parse_links(&L, &a), KN_USAR_EVALUE);
    tok_ok(REAL_7);
    ck_assert_int_eq(kn_usar_parse_links(&L, &a), KN_USAR_EKIND);
    char buf[2048];
    size_t n = (size_t)snprintf(buf, sizeof buf, "ASTA {Name A}");
    for (int i = 1; i <= 18; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, " {Link %d} {Value %d}", i, i);
    tok_ok(buf);
    ck_assert_int_eq(kn_usar_parse_links(&L, &a), KN_USAR_OK);
    ck_assert_int_eq(a.n, KN_USAR_MAX_ITEMS);
    ck_assert_int_eq(a.dropped, 2);
}
END_TEST

START_TEST(robot_conf_geo)
{
    struct kn_usar_robot r;
    tok_ok(REAL_13);
    ck_assert_int_eq(kn_usar_parse_robot(&L, &r), KN_USAR_OK);
    ck_assert_view(r.name, "P3AT");
    ck_assert_view(r.type, "GroundVehicle");
    ck_assert_view(r.steering_type, "SkidSteered");
    ck_assert(r.has_mass && r.mass == 11.9);
    ck_assert(r.has_max_speed && r.max_speed == 1.2999);
    ck_assert(r.has_max_torque && r.max_torque == 50000.0);
    ck_assert(!r.has_wheel_radius && !r.has_dimensions);
    tok_ok(REAL_14);
    ck_assert_int_eq(kn_usar_parse_robot(&L, &r), KN_USAR_OK);
    ck_assert(r.has_dimensions);
    vec_eq(r.dimensions, 0.248, 0.36, 0.0);
    ck_assert(r.has_cog);
    ck_assert(r.wheel_radius == 0.098 && r.wheel_separation == 0.36 && r.wheel_base == 0.248);
    ck_assert(!r.has_mass);
    tok_ok(REAL_16);
    ck_assert_int_eq(kn_usar_parse_robot(&L, &r), KN_USAR_OK);
    ck_assert_view(r.type, "RangeScanner");
    ck_assert_view(r.name, "lms200");
    tok_ok(REAL_GEO_SONAR);
    ck_assert_int_eq(kn_usar_parse_robot(&L, &r), KN_USAR_OK);
    ck_assert_view(r.name, "F2");
    tok_ok(REAL_CONF_MISPKG);
    ck_assert_int_eq(kn_usar_parse_robot(&L, &r), KN_USAR_OK);
    ck_assert(r.max_speed == 0.17);
    tok_ok("GEO {Type GroundVehicle} {WheelRadius big}");
    ck_assert_int_eq(kn_usar_parse_robot(&L, &r), KN_USAR_EVALUE);
    tok_ok("CONF {Dimensions 1,2}");
    ck_assert_int_eq(kn_usar_parse_robot(&L, &r), KN_USAR_EVALUE);
    tok_ok(REAL_1);
    ck_assert_int_eq(kn_usar_parse_robot(&L, &r), KN_USAR_EKIND);
}
END_TEST

/* ---- client -> server ---- */

START_TEST(init_commands)
{
    struct kn_usar_init in;
    tok_ok(REAL_C1);
    ck_assert_int_eq(kn_usar_parse_init(&L, &in), KN_USAR_OK);
    ck_assert_view(in.class_name, "USARBot.P2DX");
    ck_assert_view(in.name, "R1");
    ck_assert(in.has_location && !in.has_rotation);
    vec_eq(in.location, 4.5, 1.9, 1.8);
    ck_assert_uint_eq(in.start.n, 0);
    tok_ok(REAL_C3B); /* Classname spelled as MOAST does */
    ck_assert_int_eq(kn_usar_parse_init(&L, &in), KN_USAR_OK);
    ck_assert_view(in.class_name, "USARBot.Kenaf");
    ck_assert_view(in.start, "Point1");
    ck_assert(!in.has_location);
    tok_ok(REAL_INIT_GAZEBO);
    ck_assert_int_eq(kn_usar_parse_init(&L, &in), KN_USAR_OK);
    ck_assert_view(in.name, "pioneer3at_with_sensors");
    ck_assert_view(in.start, "Point1");
    tok_ok("INIT {ClassName USARBot.Kenaf} {Name K} {Location 1,2,-0.5} {Rotation 0,0,1.5708}");
    ck_assert_int_eq(kn_usar_parse_init(&L, &in), KN_USAR_OK);
    vec_eq(in.rotation, 0.0, 0.0, 1.5708);
    /* UDK reads a group's whole rest as the value */
    tok_ok("INIT {ClassName USARBot.Kenaf} {Name My Robot}");
    ck_assert_int_eq(kn_usar_parse_init(&L, &in), KN_USAR_OK);
    ck_assert_view(in.name, "My Robot");
    /* Player's spaces in vectors */
    tok_ok(REAL_C12);
    ck_assert_int_eq(kn_usar_parse_init(&L, &in), KN_USAR_EVALUE);
    tok_ok("INIT {Name R1} {Location 1,2,3}");
    ck_assert_int_eq(kn_usar_parse_init(&L, &in), KN_USAR_EMISSING);
    tok_ok("INIT {ClassName} {Name R1}");
    ck_assert_int_eq(kn_usar_parse_init(&L, &in), KN_USAR_EMISSING);
    tok_ok("INIT {ClassName X} {Rotation 0,0}");
    ck_assert_int_eq(kn_usar_parse_init(&L, &in), KN_USAR_EVALUE);
    tok_ok(REAL_C3A);
    ck_assert_int_eq(kn_usar_parse_init(&L, &in), KN_USAR_EKIND);
    ck_assert_int_eq(kn_usar_kind(&L), KN_USAR_K_GETSTARTPOSES);
}
END_TEST

START_TEST(drive_commands)
{
    struct kn_usar_drive d;
    tok_ok(REAL_C2);
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_OK);
    ck_assert(d.has_left && d.has_right && d.left == 1.0 && d.right == 1.0);
    ck_assert(d.has_normalized && d.normalized);
    ck_assert(!d.has_light && !d.has_flip);
    tok_ok(REAL_C4);
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_OK);
    ck_assert(d.left == 0.5 && d.right == -0.5);
    tok_ok(REAL_C8);
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_OK);
    ck_assert(d.has_flip && d.flip && !d.has_left && !d.has_right);
    tok_ok(REAL_C11); /* Ackermann keys stay in the line */
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_OK);
    ck_assert(!d.has_left && !d.has_right);
    ck_assert_int_eq(kn_usar_find_group(&L, "Speed", 0), 0);
    tok_ok(REAL_DRIVE_UPPER);
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_OK);
    ck_assert(d.has_left && d.has_right && d.left == 1.0);
    tok_ok(REAL_DRIVE_COMMA);
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_EVALUE);
    /* True is accepted; UDK's exact "true" test stays possible on the raw value */
    tok_ok("DRIVE {Left 1} {Right 1} {Normalized True} {Light false}");
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_OK);
    ck_assert(d.normalized && d.has_light && !d.light);
    ck_assert(!kn_usar_str_eq(L.group[kn_usar_find_group(&L, "Normalized", 0)].value, "true"));
    tok_ok("DRIVE {Left 1} {Right 1} {Normalized yes}");
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_EVALUE);
    /* UT2004 joint form */
    tok_ok("DRIVE {Name FRFlipper} {Value 0.5} {Order 0} {Name FLFlipper} {Steer 0.1} {Value -1}");
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_OK);
    ck_assert_int_eq(d.n_joints, 2);
    ck_assert_view(d.joint[0].name, "FRFlipper");
    ck_assert(d.joint[0].has_value && d.joint[0].value == 0.5);
    ck_assert(d.joint[0].has_order && d.joint[0].order == 0);
    ck_assert(d.joint[1].has_steer && d.joint[1].steer == 0.1 && !d.joint[1].has_order);
    ck_assert(d.joint[1].value == -1.0);
    tok_ok("DRIVE {Value 1}");
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_ESEQUENCE);
    tok_ok("DRIVE {Order 1}");
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_ESEQUENCE);
    tok_ok("DRIVE {Name J} {Order 1.5}");
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_EVALUE);
    tok_ok("DRIVE {Left 1 2} {Right 1}");
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_EVALUE);
    /* first of a repeated key wins, as UDK's GetArgVal */
    tok_ok("DRIVE {Left 1} {Left 2} {Right 3}");
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d), KN_USAR_OK);
    ck_assert(d.left == 1.0);
    tok_ok(REAL_C2);
    struct kn_usar_set st;
    ck_assert_int_eq(kn_usar_parse_set(&L, &st), KN_USAR_EKIND);
}
END_TEST

START_TEST(set_multidrive_get)
{
    struct kn_usar_set s;
    tok_ok("SET {Type Joint} {Name FRFlipper} {Opcode Angle} {Params -0.5}\r\n");
    ck_assert_int_eq(kn_usar_parse_set(&L, &s), KN_USAR_OK);
    ck_assert_view(s.type, "Joint");
    ck_assert_view(s.name, "FRFlipper");
    ck_assert_view(s.opcode, "Angle");
    ck_assert(s.has_number && s.number == -0.5);
    tok_ok(REAL_C10);
    ck_assert_int_eq(kn_usar_parse_set(&L, &s), KN_USAR_OK);
    ck_assert_view(s.opcode, "RESET");
    ck_assert_uint_eq(s.params.n, 0);
    ck_assert(!s.has_number);
    tok_ok("SET {Type INS} {Name I} {Opcode POSE} {Params 1,2,3,0,0,0}");
    ck_assert_int_eq(kn_usar_parse_set(&L, &s), KN_USAR_OK);
    ck_assert(!s.has_number);
    ck_assert_view(s.params, "1,2,3,0,0,0");
    tok_ok("SET {Type Joint} {Name FRFlipper} {Params 1}");
    ck_assert_int_eq(kn_usar_parse_set(&L, &s), KN_USAR_EMISSING);
    tok_ok("SET {Name FRFlipper} {Opcode Angle}");
    ck_assert_int_eq(kn_usar_parse_set(&L, &s), KN_USAR_EMISSING);

    struct kn_usar_multidrive m;
    tok_ok(REAL_C6);
    ck_assert_int_eq(kn_usar_parse_multidrive(&L, &m), KN_USAR_OK);
    ck_assert_int_eq(m.n, 4);
    ck_assert_view(m.joint[1].name, "FLflipper");
    ck_assert_int_eq(kn_usar_flipper_index(m.joint[0].name), KN_FR);
    ck_assert_int_eq(kn_usar_flipper_index(m.joint[1].name), KN_FL);
    ck_assert_int_eq(kn_usar_flipper_index(m.joint[2].name), KN_RR);
    ck_assert_int_eq(kn_usar_flipper_index(m.joint[3].name), KN_RL);
    for (int i = 0; i < 4; i++)
        ck_assert(m.joint[i].value == 0.78);
    tok_ok(REAL_C7);
    ck_assert_int_eq(kn_usar_parse_multidrive(&L, &m), KN_USAR_OK);
    ck_assert(m.joint[0].value == -0.5 && m.joint[3].value == 0.0);
    tok_ok(REAL_MULTIDRIVE_15);
    ck_assert_int_eq(kn_usar_parse_multidrive(&L, &m), KN_USAR_OK);
    ck_assert(m.joint[2].value == 1.5);
    tok_ok("MULTIDRIVE");
    ck_assert_int_eq(kn_usar_parse_multidrive(&L, &m), KN_USAR_EMISSING);
    tok_ok("MULTIDRIVE {FRFlipper abc}");
    ck_assert_int_eq(kn_usar_parse_multidrive(&L, &m), KN_USAR_EVALUE);
    tok_ok("MULTIDRIVE {FRFlipper}");
    ck_assert_int_eq(kn_usar_parse_multidrive(&L, &m), KN_USAR_EVALUE);
    ck_assert_int_eq(kn_usar_flipper_index(kn_usar_s("Flipper")), -1);
    ck_assert_str_eq(kn_usar_flipper_name(KN_RR), "RRFlipper");
    ck_assert_ptr_null(kn_usar_flipper_name(4));

    struct kn_usar_get g;
    tok_ok(REAL_C5A);
    ck_assert_int_eq(kn_usar_parse_get(&L, &g), KN_USAR_OK);
    ck_assert_view(g.type, "Robot");
    ck_assert_view(g.name, "R1");
    tok_ok(REAL_C5B);
    ck_assert_int_eq(kn_usar_parse_get(&L, &g), KN_USAR_OK);
    tok_ok("GETCONF {Type MisPkg}");
    ck_assert_int_eq(kn_usar_parse_get(&L, &g), KN_USAR_OK);
    ck_assert_uint_eq(g.name.n, 0);
    tok_ok("GETGEO {Name R1}");
    ck_assert_int_eq(kn_usar_parse_get(&L, &g), KN_USAR_EMISSING);
    tok_ok(REAL_C6);
    ck_assert_int_eq(kn_usar_parse_get(&L, &g), KN_USAR_EKIND);
}
END_TEST

START_TEST(mispkg_act_commands)
{
    struct kn_usar_links a;
    tok_ok(REAL_C9);
    ck_assert_int_eq(kn_usar_parse_links(&L, &a), KN_USAR_OK);
    ck_assert(!a.has_time);
    ck_assert_view(a.name, "CameraPanTilt");
    ck_assert_int_eq(a.n, 2);
    ck_assert(a.link[1].value == 0.2 && !a.link[1].has_order);
    tok_ok("MISPKG {Name Arm} {Link 1} {Value 0.3} {Order 0}");
    ck_assert_int_eq(kn_usar_parse_links(&L, &a), KN_USAR_OK);
    ck_assert(a.link[0].has_order && a.link[0].order == 0);
    tok_ok("ACT {Name Arm} {Link 0} {Value 0.3} {Gripper 1}");
    ck_assert_int_eq(kn_usar_parse_links(&L, &a), KN_USAR_OK);
    ck_assert_int_eq(a.link[0].link, 0);
    ck_assert_int_eq(kn_usar_find(&L, "Gripper", 0), 3);
}
END_TEST

static Suite *messages_suite(void)
{
    Suite *s = suite_create("usarsim-messages");
    TCase *sv = tcase_create("server-to-client");
    tcase_add_test(sv, nfo_banners);
    tcase_add_test(sv, nfo_start_poses_three_shapes);
    tcase_add_test(sv, nfo_start_poses_errors_and_caps);
    tcase_add_test(sv, sta_both_dialects);
    tcase_add_test(sv, sen_ground_truth_and_ins);
    tcase_add_test(sv, sen_encoder_sequences);
    tcase_add_test(sv, sen_odometry_touch_other);
    tcase_add_test(sv, links_asta_missta);
    tcase_add_test(sv, robot_conf_geo);
    suite_add_tcase(s, sv);
    TCase *cl = tcase_create("client-to-server");
    tcase_add_test(cl, init_commands);
    tcase_add_test(cl, drive_commands);
    tcase_add_test(cl, set_multidrive_get);
    tcase_add_test(cl, mispkg_act_commands);
    suite_add_tcase(s, cl);
    return s;
}

int main(void)
{
    return h_run_suite(messages_suite());
}
