/* USARSim formatter tests: the exact bytes of every line we emit, in both
 * roles, reproducing the captured real lines where the inputs allow; what
 * every formatter refuses; and that what we write reads back. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "real_lines.h"

static char out[KN_USAR_MAX_LINE + 3];

/* The formatter's result must be exactly `want`, its length the return. */
#define ck_line(call, want)                                                                    \
    do {                                                                                       \
        int n_ = (call);                                                                       \
        ck_assert_msg(n_ >= 0, "%s: %s", #call, kn_usar_strerror((enum kn_usar_result) - n_)); \
        ck_assert_str_eq(out, (want));                                                         \
        ck_assert_int_eq(n_, (int)strlen(want));                                               \
    } while (0)

#define ck_fails(call, err)                                                              \
    do {                                                                                 \
        int n_ = (call);                                                                 \
        ck_assert_msg(n_ == -(int)(err), "%s: got %d, want -%d", #call, n_, (int)(err)); \
    } while (0)

/* ---- client side ---- */

START_TEST(client_init)
{
    const double loc[3] = { 1.0, 2.0, -0.5 };
    const double rot[3] = { 0.0, 0.0, 1.5707963267948966 };
    ck_line(kn_usar_fmt_init(out, sizeof out, "USARBot.Kenaf", "Kenaf1", loc, rot),
            "INIT {ClassName USARBot.Kenaf} {Name Kenaf1} {Location 1.0000,2.0000,-0.5000} "
            "{Rotation 0.0000,0.0000,1.5708}\r\n");
    ck_line(kn_usar_fmt_init(out, sizeof out, "USARBot.Kenaf", "Kenaf1", NULL, NULL),
            "INIT {ClassName USARBot.Kenaf} {Name Kenaf1}\r\n");
    ck_line(kn_usar_fmt_init_start(out, sizeof out, "USARBot.Kenaf", "Kenaf1", "PlayerStart1"),
            "INIT {ClassName USARBot.Kenaf} {Name Kenaf1} {Start PlayerStart1}\r\n");
    ck_fails(kn_usar_fmt_init(out, sizeof out, "USARBot.Kenaf", "my robot", NULL, NULL),
             KN_USAR_EARG);
    ck_fails(kn_usar_fmt_init(out, sizeof out, "", "K", NULL, NULL), KN_USAR_EARG);
    ck_fails(kn_usar_fmt_init(out, sizeof out, NULL, "K", NULL, NULL), KN_USAR_EARG);
    ck_fails(kn_usar_fmt_init(out, sizeof out, "USARBot.Kenaf", "K}", NULL, NULL), KN_USAR_EARG);
    ck_fails(kn_usar_fmt_init_start(out, sizeof out, "USARBot.Kenaf", "K", "a\tb"), KN_USAR_EARG);
    const double bad[3] = { 0.0, NAN, 0.0 };
    ck_fails(kn_usar_fmt_init(out, sizeof out, "USARBot.Kenaf", "K", bad, NULL), KN_USAR_ERANGE);
    ck_assert_str_eq(out, ""); /* nothing half-written is left to send */
}
END_TEST

START_TEST(client_drive)
{
    ck_line(kn_usar_fmt_drive(out, sizeof out, 1.25, -1.25),
            "DRIVE {Left 1.2500} {Right -1.2500}\r\n");
    ck_line(kn_usar_fmt_drive(out, sizeof out, 0.0, -0.0),
            "DRIVE {Left 0.0000} {Right -0.0000}\r\n");
    ck_line(kn_usar_fmt_drive(out, sizeof out, 6.283185307, 3.14159),
            "DRIVE {Left 6.2832} {Right 3.1416}\r\n");
    ck_fails(kn_usar_fmt_drive(out, sizeof out, INFINITY, 0.0), KN_USAR_ERANGE);
    ck_fails(kn_usar_fmt_drive(out, sizeof out, 0.0, NAN), KN_USAR_ERANGE);

    struct kn_usar_drive d;
    memset(&d, 0, sizeof d);
    d.has_left = d.has_right = true;
    d.left = 50;
    d.right = -50;
    d.has_normalized = d.normalized = true;
    d.has_light = true;
    d.has_flip = d.flip = true;
    ck_line(
        kn_usar_fmt_drive_full(out, sizeof out, &d),
        "DRIVE {Left 50.0000} {Right -50.0000} {Normalized true} {Light false} {Flip true}\r\n");
    memset(&d, 0, sizeof d);
    d.n_joints = 1;
    d.joint[0].name = kn_usar_s("FRFlipper");
    d.joint[0].has_value = true;
    d.joint[0].value = 0.5;
    d.joint[0].has_order = true;
    d.joint[0].order = 0;
    ck_line(kn_usar_fmt_drive_full(out, sizeof out, &d),
            "DRIVE {Name FRFlipper} {Value 0.5000} {Order 0}\r\n");
    d.n_joints = KN_USAR_MAX_ITEMS + 1;
    ck_fails(kn_usar_fmt_drive_full(out, sizeof out, &d), KN_USAR_EARG);
    memset(&d, 0, sizeof d);
    ck_line(kn_usar_fmt_drive_full(out, sizeof out, &d), "DRIVE\r\n");
}
END_TEST

START_TEST(client_joints_and_queries)
{
    ck_line(kn_usar_fmt_set_joint(out, sizeof out, "FRFlipper", -0.5),
            "SET {Type Joint} {Name FRFlipper} {Opcode Angle} {Params -0.5000}\r\n");
    ck_fails(kn_usar_fmt_set_joint(out, sizeof out, "FR Flipper", 0.5), KN_USAR_EARG);
    ck_fails(kn_usar_fmt_set_joint(out, sizeof out, "FRFlipper", NAN), KN_USAR_ERANGE);
    ck_line(kn_usar_fmt_set(out, sizeof out, "Odometry", "Odo", "RESET", NULL),
            "SET {Type Odometry} {Name Odo} {Opcode RESET}\r\n");
    ck_line(kn_usar_fmt_set(out, sizeof out, "INS", "I", "POSE", "1,2,3,0,0,0"),
            "SET {Type INS} {Name I} {Opcode POSE} {Params 1,2,3,0,0,0}\r\n");
    ck_fails(kn_usar_fmt_set(out, sizeof out, "INS", "I", "POSE", " 1"), KN_USAR_EARG);
    ck_fails(kn_usar_fmt_set(out, sizeof out, "INS", "I", "POSE", ""), KN_USAR_EARG);

    const double rad[KN_NFLIPPERS] = { [KN_FL] = 0.1, [KN_FR] = 0.2, [KN_RL] = 0.3, [KN_RR] = 0.4 };
    ck_line(kn_usar_fmt_multidrive_flippers(out, sizeof out, rad, 0xF),
            "MULTIDRIVE {FRFlipper 0.2000} {FLFlipper 0.1000} {RRFlipper 0.4000} "
            "{RLFlipper 0.3000}\r\n");
    ck_line(kn_usar_fmt_multidrive_flippers(out, sizeof out, rad, 1u << KN_RL),
            "MULTIDRIVE {RLFlipper 0.3000}\r\n");
    ck_fails(kn_usar_fmt_multidrive_flippers(out, sizeof out, rad, 0), KN_USAR_EARG);
    const char *names[] = { "FRFlipper", "FLFlipper", "RRFlipper", "RLFlipper" };
    const double v[] = { 0.78, 0.78, 0.78, 0.78 };
    ck_line(kn_usar_fmt_multidrive(out, sizeof out, names, v, 4),
            "MULTIDRIVE {FRFlipper 0.7800} {FLFlipper 0.7800} {RRFlipper 0.7800} "
            "{RLFlipper 0.7800}\r\n");
    ck_fails(kn_usar_fmt_multidrive(out, sizeof out, names, v, 0), KN_USAR_EARG);
    const char *badnames[] = { "FR,Flipper" };
    ck_fails(kn_usar_fmt_multidrive(out, sizeof out, badnames, v, 1), KN_USAR_EARG);

    ck_line(kn_usar_fmt_getconf(out, sizeof out, "Robot", NULL), "GETCONF {Type Robot}\r\n");
    ck_line(kn_usar_fmt_getgeo(out, sizeof out, "Robot", NULL), "GETGEO {Type Robot}\r\n");
    ck_line(kn_usar_fmt_getconf(out, sizeof out, "Robot", "Kenaf1"),
            "GETCONF {Type Robot} {Name Kenaf1}\r\n");
    ck_line(kn_usar_fmt_getgeo(out, sizeof out, "RangeScanner", "Scanner1"),
            "GETGEO {Type RangeScanner} {Name Scanner1}\r\n");
    ck_fails(kn_usar_fmt_getconf(out, sizeof out, NULL, NULL), KN_USAR_EARG);
    ck_line(kn_usar_fmt_getstartposes(out, sizeof out), "GETSTARTPOSES\r\n");

    struct kn_usar_links l;
    memset(&l, 0, sizeof l);
    l.name = kn_usar_s("CameraPanTilt");
    l.n = 2;
    l.link[0].link = 1;
    l.link[0].has_value = true;
    l.link[0].has_order = true;
    l.link[1].link = 2;
    l.link[1].has_value = true;
    l.link[1].value = 0.2;
    l.link[1].has_order = true;
    l.has_time = true; /* not sent by a client */
    ck_line(kn_usar_fmt_links(out, sizeof out, KN_USAR_K_MISPKG, &l),
            "MISPKG {Name CameraPanTilt} {Link 1} {Value 0.0000} {Order 0} {Link 2} "
            "{Value 0.2000} {Order 0}\r\n");
    l.n = 1;
    l.link[0].has_order = false;
    l.link[0].link = 0;
    ck_line(kn_usar_fmt_links(out, sizeof out, KN_USAR_K_ACT, &l),
            "ACT {Name CameraPanTilt} {Link 0} {Value 0.0000}\r\n");
    ck_fails(kn_usar_fmt_links(out, sizeof out, KN_USAR_K_DRIVE, &l), KN_USAR_EARG);
}
END_TEST

/* ---- server side ---- */

START_TEST(server_nfo)
{
    ck_line(kn_usar_fmt_nfo(out, sizeof out, "BotDeathMatch", "DM-USAR_yellow_250", 0), REAL_1);
    ck_line(kn_usar_fmt_nfo(out, sizeof out, "BotDeathMatch", "EmptyRoom", 20), REAL_12);
    ck_fails(kn_usar_fmt_nfo(out, sizeof out, "BotDeathMatch", "", 0), KN_USAR_EARG);
    ck_fails(kn_usar_fmt_nfo(out, sizeof out, "Bot DeathMatch", "X", 0), KN_USAR_EARG);

    struct kn_usar_pose p[2] = {
        { kn_usar_s("Start1"), { 1.0, 2.0, 0.0 }, { 0.0, 0.0, 1.5707963 } },
        { kn_usar_s("Start2"), { -1.0, 0.5, 0.1 }, { 0.0, 0.0, 3.14159265 } },
    };
    ck_line(kn_usar_fmt_startposes(out, sizeof out, p, 2),
            "NFO {StartPoses 2} {Start1 1.0000,2.0000,0.0000 0.0000,0.0000,1.5708 "
            "Start2 -1.0000,0.5000,0.1000 0.0000,0.0000,3.1416}\r\n");
    ck_line(kn_usar_fmt_startposes(out, sizeof out, NULL, 0), "NFO {StartPoses 0}\r\n");
    p[1].name = kn_usar_s("a,b");
    ck_fails(kn_usar_fmt_startposes(out, sizeof out, p, 2), KN_USAR_EARG);
    p[1].name = kn_usar_s("Start2");
    p[1].location[2] = NAN;
    ck_fails(kn_usar_fmt_startposes(out, sizeof out, p, 2), KN_USAR_ERANGE);
}
END_TEST

START_TEST(server_sta)
{
    struct kn_usar_sta s;
    memset(&s, 0, sizeof s);
    s.has_time = true;
    s.time = 477.7582;
    s.has_battery = true;
    s.battery = 99999;
    ck_line(kn_usar_fmt_sta(out, sizeof out, &s, KN_USAR_UDK), REAL_18);
    s.time = 395.38;
    s.battery = 1200;
    ck_line(kn_usar_fmt_sta(out, sizeof out, &s, KN_USAR_UT2004), REAL_7);
    s.time = 48.22;
    s.battery = 1196;
    s.flipper_mask = 0xF;
    s.flipper[KN_FR] = -0.0006;
    s.flipper[KN_FL] = -0.0005;
    s.flipper[KN_RR] = 0.0005;
    s.flipper[KN_RL] = 0.0006;
    ck_line(kn_usar_fmt_sta(out, sizeof out, &s, KN_USAR_UT2004), REAL_STA_FLIPPERS);
    s.time = 12.34567;
    s.battery = 3599.6;
    s.has_light_toggle = s.light_toggle = true;
    s.has_light_intensity = true;
    s.light_intensity = 50;
    s.type = kn_usar_s("GroundVehicle");
    ck_line(kn_usar_fmt_sta(out, sizeof out, &s, KN_USAR_UDK),
            "STA {Time 12.3457} {Battery 3600} {Type GroundVehicle} {LightToggle True} "
            "{LightIntensity 50} {FrontSteer 0} {RearSteer 0} {FRFlipper -0.0006} "
            "{FLFlipper -0.0005} {RRFlipper 0.0005} {RLFlipper 0.0006}\r\n");
    memset(&s, 0, sizeof s);
    ck_line(kn_usar_fmt_sta(out, sizeof out, &s, KN_USAR_UDK),
            "STA {Type GroundVehicle} {LightToggle False} {LightIntensity 100} {FrontSteer 0} "
            "{RearSteer 0}\r\n");
    s.has_time = true;
    s.time = NAN;
    ck_fails(kn_usar_fmt_sta(out, sizeof out, &s, KN_USAR_UDK), KN_USAR_ERANGE);
    s.time = 1.0;
    s.type = kn_usar_s("Ground Vehicle");
    ck_fails(kn_usar_fmt_sta(out, sizeof out, &s, KN_USAR_UDK), KN_USAR_EARG);
}
END_TEST

START_TEST(server_sen)
{
    struct kn_usar_sen s;
    memset(&s, 0, sizeof s);
    s.sen_type = KN_USAR_SEN_GROUNDTRUTH;
    s.has_time = true;
    s.time = 477.7582;
    s.name = kn_usar_s("GndTruth");
    s.location[0] = -0.0001;
    s.location[1] = -0.0002;
    s.location[2] = 0.0171;
    s.orientation[0] = -0.0001;
    s.orientation[1] = 0.0001;
    ck_line(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UDK), REAL_19);
    s.time = 395.3833;
    s.name = kn_usar_s("GroundTruth");
    s.location[0] = 4.5;
    s.location[1] = 1.9;
    s.location[2] = 1.85;
    s.orientation[0] = 0.0;
    s.orientation[1] = 6.2831;
    s.orientation[2] = 6.2831;
    ck_line(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UT2004), REAL_4);

    memset(&s, 0, sizeof s);
    s.sen_type = KN_USAR_SEN_INS;
    s.name = kn_usar_s("InsTest");
    s.location[2] = -0.2;
    ck_line(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UDK), REAL_22);
    ck_line(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UT2004), REAL_22);

    memset(&s, 0, sizeof s);
    s.sen_type = KN_USAR_SEN_ENCODER;
    s.has_time = true;
    s.time = 477.7582;
    s.n_ticks = 1;
    s.ticks[0].name = kn_usar_s("W1");
    ck_line(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UDK), REAL_20);
    s.has_time = false;
    s.n_ticks = 4;
    s.ticks[0].name = kn_usar_s("ECLeft");
    s.ticks[1].name = kn_usar_s("ECRight");
    s.ticks[2].name = kn_usar_s("ECTilt");
    s.ticks[3].name = kn_usar_s("ECPan");
    ck_line(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UT2004), REAL_2);
    s.n_ticks = 2;
    s.ticks[0].tick = -65535;
    s.ticks[1].tick = INT64_MIN;
    ck_line(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UDK),
            "SEN {Type Encoder} {Name ECLeft} {Tick -65535} {Name ECRight} "
            "{Tick -9223372036854775808}\r\n");
    s.ticks[1].name = kn_usar_s("");
    ck_fails(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UDK), KN_USAR_EARG);

    memset(&s, 0, sizeof s);
    s.sen_type = KN_USAR_SEN_ODOMETRY;
    s.name = kn_usar_s("Odometry");
    s.pose[0] = 0.032;
    s.pose[2] = 0.0296;
    ck_line(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UT2004),
            "SEN {Type Odometry} {Name Odometry} {Pose 0.0320,0.0000,0.0296}\r\n");
    s.has_time = true;
    s.time = 44.5467;
    ck_line(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UDK),
            "SEN {Time 44.5467} {Type Odometry} {Name Odometry} {Pose 0.0320,0.0000,0.0296}\r\n");

    memset(&s, 0, sizeof s);
    s.sen_type = KN_USAR_SEN_TOUCH;
    s.n_touches = 1;
    s.touches[0].name = kn_usar_s("Touch");
    ck_line(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UT2004),
            "SEN {Type Touch} {Name Touch Touch False}\r\n");
    s.touches[0].touch = true;
    ck_line(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UDK),
            "SEN {Type Touch} {Name Touch} {Touch True}\r\n");

    s.sen_type = KN_USAR_SEN_OTHER;
    ck_fails(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UDK), KN_USAR_EARG);
    s.sen_type = (enum kn_usar_sen_type)77;
    ck_fails(kn_usar_fmt_sen(out, sizeof out, &s, KN_USAR_UDK), KN_USAR_EARG);
}
END_TEST

START_TEST(server_links_conf_geo)
{
    struct kn_usar_links l;
    memset(&l, 0, sizeof l);
    l.has_time = true;
    l.time = 395.38;
    l.name = kn_usar_s("CameraPanTilt");
    l.n = 2;
    for (int i = 0; i < 2; i++) {
        l.link[i].link = i + 1;
        l.link[i].has_value = true;
        l.link[i].has_torque = true;
        l.link[i].torque = -20.0;
    }
    ck_line(kn_usar_fmt_links(out, sizeof out, KN_USAR_K_MISSTA, &l), REAL_6);
    l.time = 12.5;
    l.link[0].has_torque = l.link[1].has_torque = false;
    l.link[0].value = 0.5;
    l.link[1].value = -0.25;
    ck_line(kn_usar_fmt_links(out, sizeof out, KN_USAR_K_ASTA, &l),
            "ASTA {Time 12.5000} {Name CameraPanTilt} {Link 1} {Value 0.5000} {Link 2} "
            "{Value -0.2500}\r\n");
    l.name = kn_usar_s("");
    ck_fails(kn_usar_fmt_links(out, sizeof out, KN_USAR_K_ASTA, &l), KN_USAR_EARG);

    struct kn_usar_robot r;
    memset(&r, 0, sizeof r);
    r.name = kn_usar_s("P3AT");
    r.has_mass = r.has_max_speed = r.has_max_torque = true;
    r.mass = 11.90001; /* 11.9 itself prints 11.8999, as on UDK */
    r.max_speed = 1.3; /* prints 1.2999: UnitsConverter truncates */
    r.max_torque = 50000;
    ck_line(kn_usar_fmt_conf_robot(out, sizeof out, &r), REAL_13);
    r.has_dimensions = r.has_cog = true;
    r.dimensions[0] = 0.248;
    r.dimensions[1] = 0.36;
    r.has_wheel_radius = r.has_wheel_separation = r.has_wheel_base = true;
    r.wheel_radius = 0.098;
    r.wheel_separation = 0.36;
    r.wheel_base = 0.248;
    /* WheeledVehicle.uc order; the captured REAL_14 was hand-edited */
    ck_line(kn_usar_fmt_geo_robot(out, sizeof out, &r),
            "GEO {Type GroundVehicle} {Name P3AT} {Dimensions 0.2480,0.3600,0.0000} "
            "{COG 0.0000,0.0000,0.0000} {WheelRadius 0.0980} {WheelSeparation 0.3600} "
            "{WheelBase 0.2480}\r\n");
    r.name = kn_usar_s(NULL);
    ck_fails(kn_usar_fmt_geo_robot(out, sizeof out, &r), KN_USAR_EARG);
}
END_TEST

/* ---- writer, buffer sizes, canonical re-emission ---- */

START_TEST(writer_builds_any_line)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, out, sizeof out, "RES");
    kn_usar_w_knum(&w, "Time", 12.5, 2);
    kn_usar_w_kv(&w, "Type", "Joint");
    kn_usar_w_kv(&w, "Name", "FRFlipper");
    kn_usar_w_kv(&w, "Status", "OK");
    ck_line(kn_usar_w_end(&w), "RES {Time 12.50} {Type Joint} {Name FRFlipper} {Status OK}\r\n");

    kn_usar_w_init(&w, out, sizeof out, "SEN");
    kn_usar_w_kv(&w, "Type", "Sonar");
    kn_usar_w_kv(&w, "Name", "F1");
    kn_usar_w_more(&w, "Range");
    kn_usar_w_num(&w, 4.56041, 4, KN_USAR_ROUND);
    kn_usar_w_key(&w, "Flag");
    kn_usar_w_key(&w, "V");
    kn_usar_w_vec3(&w, (const double[3]){ 1, 2, 3 }, 1, KN_USAR_TRUNC);
    kn_usar_w_key(&w, "B");
    kn_usar_w_bool(&w, true, KN_USAR_BOOL_LOWER);
    kn_usar_w_key(&w, "I");
    kn_usar_w_int(&w, -42);
    kn_usar_w_kv(&w, "Text", "two  words");
    ck_line(kn_usar_w_end(&w), "SEN {Type Sonar} {Name F1 Range 4.5604} {Flag} {V 1.0,2.0,3.0} "
                               "{B true} {I -42} {Text two  words}\r\n");

    /* errors are sticky and reported at the end */
    kn_usar_w_init(&w, out, sizeof out, "STA");
    kn_usar_w_num(&w, 1.0, 2, KN_USAR_ROUND); /* value before any key */
    kn_usar_w_kv(&w, "Time", "1");
    ck_fails(kn_usar_w_end(&w), KN_USAR_EARG);
    ck_assert_str_eq(out, "");
    kn_usar_w_init(&w, out, sizeof out, "ST A");
    ck_fails(kn_usar_w_end(&w), KN_USAR_EARG);
    kn_usar_w_init(&w, out, sizeof out, "");
    ck_fails(kn_usar_w_end(&w), KN_USAR_EARG);
    kn_usar_w_init(&w, out, sizeof out, "STA");
    kn_usar_w_more(&w, "Time"); /* no open group */
    ck_fails(kn_usar_w_end(&w), KN_USAR_EARG);
    const char *bad_text[] = { "a}", "{a", "a\tb", "a\r", " a", "a ", "" };
    for (size_t i = 0; i < sizeof bad_text / sizeof bad_text[0]; i++) {
        kn_usar_w_init(&w, out, sizeof out, "STA");
        kn_usar_w_kv(&w, "Key", bad_text[i]);
        ck_fails(kn_usar_w_end(&w), KN_USAR_EARG);
    }
    const char *bad_keys[] = { "a b", "a,b", "", "{", NULL };
    for (size_t i = 0; i < sizeof bad_keys / sizeof bad_keys[0]; i++) {
        kn_usar_w_init(&w, out, sizeof out, "STA");
        kn_usar_w_key(&w, bad_keys[i]);
        ck_fails(kn_usar_w_end(&w), KN_USAR_EARG);
    }
}
END_TEST

START_TEST(every_buffer_size)
{
    const double loc[3] = { 1.0, 2.0, -0.5 };
    char want[256];
    int n = kn_usar_fmt_init(want, sizeof want, "USARBot.Kenaf", "Kenaf1", loc, loc);
    ck_assert_int_gt(n, 0);
    /* exactly n + 1 (the NUL) fits; every smaller buffer is refused intact */
    for (int cap = 0; cap <= n + 1; cap++) {
        char *b = malloc((size_t)cap + 1);
        ck_assert_ptr_nonnull(b);
        int got =
            kn_usar_fmt_init(cap ? b : NULL, (size_t)cap, "USARBot.Kenaf", "Kenaf1", loc, loc);
        if (cap == n + 1) {
            ck_assert_int_eq(got, n);
            ck_assert_str_eq(b, want);
        } else {
            ck_assert_int_eq(got, -KN_USAR_ENOSPACE);
            if (cap)
                ck_assert_str_eq(b, "");
        }
        free(b);
    }
}
END_TEST

static const char *const canonical_in[] = {
    REAL_1,
    REAL_2,
    REAL_4,
    REAL_6,
    REAL_7,
    REAL_12,
    REAL_13,
    REAL_18,
    REAL_19,
    REAL_20,
    REAL_22,
    REAL_C1,
    REAL_C2,
    REAL_C3A,
    REAL_C3B,
    REAL_C4,
    REAL_C5A,
    REAL_C5B,
    REAL_C7,
    REAL_C8,
    REAL_C9,
    REAL_C12,
    REAL_STA_FLIPPERS,
    REAL_POSES_UVA,
    REAL_GEO_SONAR,
};

START_TEST(canonical_lines_reemit_identically)
{
    const char *line = canonical_in[_i];
    tok_ok(line);
    int n = kn_usar_fmt_line(out, sizeof out, &L);
    ck_assert_int_gt(n, 0);
    ck_assert_str_eq(out, line);
}
END_TEST

START_TEST(quirky_lines_reemit_canonically)
{
    tok_ok(REAL_14);
    kn_usar_fmt_line(out, sizeof out, &L);
    ck_assert_str_eq(out, "GEO {Name P3AT} {Type GroundVehicle} {Dimensions 0.2480,0.3600,0.0000} "
                          "{COG 0.0000,0.0000,0.0000} {WheelRadius 0.0980} "
                          "{WheelSeparation 0.3600} {WheelBase 0.2480}\r\n");
    tok_ok(REAL_16);
    kn_usar_fmt_line(out, sizeof out, &L);
    ck_assert_str_eq(out, "GEO {Type RangeScanner} {Name lms200} {Location 0.21,-0.00,-0.20} "
                          "{Orientation 0.00,-0.00,-0.00} {Mount P3AT}\r\n");
    tok_ok(REAL_21);
    kn_usar_fmt_line(out, sizeof out, &L);
    ck_assert_str_eq(out, "SEN {Time 477.7743} {Type Camera}\r\n");
    tok_ok(REAL_C6);
    kn_usar_fmt_line(out, sizeof out, &L);
    ck_assert_str_eq(out, "MULTIDRIVE {FRFlipper 0.78} {FLflipper 0.78} {RRFlipper 0.78} "
                          "{RLflipper 0.78}\r\n");
    tok_ok(REAL_C10);
    kn_usar_fmt_line(out, sizeof out, &L);
    ck_assert_str_eq(out, "SET {Type Odometry} {Name Odometry} {Opcode RESET}\r\n");
    tok_ok(REAL_C11);
    kn_usar_fmt_line(out, sizeof out, &L);
    ck_assert_str_eq(out, "DRIVE {Speed 1.000000} {FrontSteer 0.100000} {RearSteer 0.000000}\r\n");
    tok_ok("  sen{Foo}{  Type   X  }  ");
    kn_usar_fmt_line(out, sizeof out, &L);
    ck_assert_str_eq(out, "sen {Foo} {Type X}\r\n");
    /* a tab inside a value cannot be written back */
    tok_ok("SET {Params a\tb}");
    ck_assert_int_eq(kn_usar_fmt_line(out, sizeof out, &L), -KN_USAR_EARG);
}
END_TEST

START_TEST(what_we_write_reads_back)
{
    /* client: our DRIVE, as the engine reads it */
    struct kn_usar_drive d, d2;
    memset(&d, 0, sizeof d);
    d.has_left = d.has_right = d.has_light = d.has_normalized = true;
    d.left = -3.14159;
    d.right = 2.5;
    d.n_joints = 2;
    d.joint[0].name = kn_usar_s("FRFlipper");
    d.joint[0].has_value = true;
    d.joint[0].value = 1.23456;
    d.joint[1].name = kn_usar_s("RLFlipper");
    d.joint[1].has_steer = d.joint[1].has_order = true;
    d.joint[1].steer = 0.1;
    d.joint[1].order = 11;
    ck_assert_int_gt(kn_usar_fmt_drive_full(out, sizeof out, &d), 0);
    tok_ok(out);
    ck_assert_int_eq(kn_usar_parse_drive(&L, &d2), KN_USAR_OK);
    ck_assert(d2.left == -3.1416 && d2.right == 2.5 && d2.has_light && !d2.light);
    ck_assert_int_eq(d2.n_joints, 2);
    ck_assert(d2.joint[0].value == 1.2346 && !d2.joint[0].has_order);
    ck_assert(d2.joint[1].order == 11 && d2.joint[1].steer == 0.1 && !d2.joint[1].has_value);

    /* server: our start poses, as the daemon reads them */
    struct kn_usar_pose p[3] = {
        { kn_usar_s("A"), { 1, 2, 3 }, { 0, 0, 1 } },
        { kn_usar_s("B"), { -1, -2, -3 }, { 0.1, 0.2, 0.3 } },
        { kn_usar_s("C"), { 0, 0, 0 }, { 0, 0, 6.2831 } },
    };
    ck_assert_int_gt(kn_usar_fmt_startposes(out, sizeof out, p, 3), 0);
    tok_ok(out);
    struct kn_usar_nfo n;
    ck_assert_int_eq(kn_usar_parse_nfo(&L, &n), KN_USAR_OK);
    ck_assert_int_eq(n.n_poses, 3);
    ck_assert_int_eq(n.start_poses, 3);
    ck_assert_view(n.pose[2].name, "C");
    ck_assert(n.pose[1].location[2] == -3.0 && n.pose[2].orientation[2] == 6.2831);

    /* server: UT2004 encoder and touch shapes read back as lists */
    struct kn_usar_sen s, s2;
    memset(&s, 0, sizeof s);
    s.sen_type = KN_USAR_SEN_ENCODER;
    s.n_ticks = 2;
    s.ticks[0].name = kn_usar_s("ECLeft");
    s.ticks[0].tick = 1234;
    s.ticks[1].name = kn_usar_s("ECRight");
    s.ticks[1].tick = -5;
    for (int dia = 0; dia < 2; dia++) {
        ck_assert_int_gt(kn_usar_fmt_sen(out, sizeof out, &s, (enum kn_usar_dialect)dia), 0);
        tok_ok(out);
        ck_assert_int_eq(kn_usar_parse_sen(&L, &s2), KN_USAR_OK);
        ck_assert_int_eq(s2.n_ticks, 2);
        ck_assert_int_eq(s2.ticks[1].tick, -5);
        ck_assert_view(s2.ticks[1].name, "ECRight");
    }

    /* server: STA with flippers in both dialects */
    struct kn_usar_sta st, st2;
    memset(&st, 0, sizeof st);
    st.has_time = st.has_battery = true;
    st.time = 10.0;
    st.battery = 100;
    st.flipper_mask = (1u << KN_FL) | (1u << KN_RR);
    st.flipper[KN_FL] = 0.7854;
    st.flipper[KN_RR] = -1.5708;
    for (int dia = 0; dia < 2; dia++) {
        ck_assert_int_gt(kn_usar_fmt_sta(out, sizeof out, &st, (enum kn_usar_dialect)dia), 0);
        tok_ok(out);
        ck_assert_int_eq(kn_usar_parse_sta(&L, &st2), KN_USAR_OK);
        ck_assert_uint_eq(st2.flipper_mask, st.flipper_mask);
        ck_assert(st2.flipper[KN_FL] == 0.7854 && st2.flipper[KN_RR] == -1.5708);
        ck_assert(st2.time == 10.0 && st2.battery == 100.0);
    }
}
END_TEST

static Suite *format_suite(void)
{
    Suite *s = suite_create("usarsim-format");
    TCase *c = tcase_create("client");
    tcase_add_test(c, client_init);
    tcase_add_test(c, client_drive);
    tcase_add_test(c, client_joints_and_queries);
    suite_add_tcase(s, c);
    TCase *v = tcase_create("server");
    tcase_add_test(v, server_nfo);
    tcase_add_test(v, server_sta);
    tcase_add_test(v, server_sen);
    tcase_add_test(v, server_links_conf_geo);
    suite_add_tcase(s, v);
    TCase *w = tcase_create("writer");
    tcase_add_test(w, writer_builds_any_line);
    tcase_add_test(w, every_buffer_size);
    tcase_add_loop_test(w, canonical_lines_reemit_identically, 0,
                        (int)(sizeof canonical_in / sizeof canonical_in[0]));
    tcase_add_test(w, quirky_lines_reemit_canonically);
    tcase_add_test(w, what_we_write_reads_back);
    suite_add_tcase(s, w);
    return s;
}

int main(void)
{
    return h_run_suite(format_suite());
}
