/* Unit tests of kenaf-cameras' PTZ module (cameras/process/ptz.c): the
 * VAPIX ptz.cgi subset read from query strings, applied to a state with
 * the front camera's documented limits and speeds, the answers' text,
 * and continuous moves over times the test gives (no clock). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness_suite.h"
#include "ptz.h"

/* docs/cameras.md: pan ±170°, tilt −60..60°, zoom 1..10; 90°/s, 60°/s,
 * 3×/s at speed 100 */
static const struct kn_ptz_limits lim = { .pan_max_deg = 170,
                                          .tilt_min_deg = -60,
                                          .tilt_max_deg = 60,
                                          .zoom_max = 10,
                                          .pan_speed_dps = 90,
                                          .tilt_speed_dps = 60,
                                          .zoom_speed = 3 };

#define S_NS 1000000000ull

/* Applies `q` to s at time t; the answer's text in out; the clamp count. */
static int run(struct kn_ptz_state *s, const char *q, uint64_t t, char *out, size_t outlen)
{
    struct kn_ptz_req r;
    char err[256] = "";
    ck_assert_msg(kn_ptz_parse(q, strlen(q), &r, err, sizeof err) == 0, "%s refused: %s", q, err);
    return kn_ptz_apply(s, &lim, &r, t, out, outlen);
}

static const char *answer(struct kn_ptz_state *s, const char *q, uint64_t t)
{
    static char out[1024];
    run(s, q, t, out, sizeof out);
    return out;
}

static void refused(const char *q, const char *msg)
{
    struct kn_ptz_req r;
    char err[256] = "";
    ck_assert_msg(kn_ptz_parse(q, strlen(q), &r, err, sizeof err) == -1, "%s accepted", q);
    ck_assert_str_eq(err, msg);
}

START_TEST(absolute_and_query)
{
    struct kn_ptz_state s;
    kn_ptz_home(&s, 0);
    ck_assert_str_eq(answer(&s, "query=position", 0), "pan=0.00\ntilt=0.00\nzoom=1\n");
    /* Axis's pan + is right: the renderer's pan (+ left) is its negative */
    ck_assert_str_eq(answer(&s, "pan=30&tilt=-12.5&zoom=5000", 0), "");
    ck_assert(fabs(s.pan_deg + 30) < 1e-9);
    ck_assert(fabs(s.tilt_deg + 12.5) < 1e-9);
    /* 5000 of 1..9999 is a factor 1 + 4999 * 9 / 9998 */
    ck_assert(fabs(s.zoom - (1 + 4999.0 * 9 / 9998)) < 1e-9);
    ck_assert_str_eq(answer(&s, "query=position", 0), "pan=30.00\ntilt=-12.50\nzoom=5000\n");
    ck_assert_str_eq(answer(&s, "zoom=9999&query=position", 0),
                     "pan=30.00\ntilt=-12.50\nzoom=9999\n");
    ck_assert(fabs(s.zoom - 10) < 1e-9);
    ck_assert_str_eq(answer(&s, "query=limits", 0),
                     "MinPan=-170.00\nMaxPan=170.00\nMinTilt=-60.00\nMaxTilt=60.00\n"
                     "MinZoom=1\nMaxZoom=9999\n");
}
END_TEST

START_TEST(relative_and_home)
{
    struct kn_ptz_state s;
    kn_ptz_home(&s, 0);
    answer(&s, "pan=10&tilt=5&zoom=100", 0);
    ck_assert_str_eq(answer(&s, "rpan=-25&rtilt=+10&rzoom=900&query=position", 0),
                     "pan=-15.00\ntilt=15.00\nzoom=1000\n");
    ck_assert_str_eq(answer(&s, "move=home&query=position", 0), "pan=0.00\ntilt=0.00\nzoom=1\n");
    ck_assert(s.zoom == 1 && s.pan_deg == 0 && s.tilt_deg == 0);
    /* %-escapes and an empty part are read as a browser sends them */
    ck_assert_str_eq(answer(&s, "camera=1&&%70an=%2D20&query=position", 0),
                     "pan=-20.00\ntilt=0.00\nzoom=1\n");
}
END_TEST

START_TEST(clamped_and_said)
{
    struct kn_ptz_state s;
    kn_ptz_home(&s, 0);
    char out[1024];
    ck_assert_int_eq(run(&s, "pan=400&tilt=-90&zoom=20000&query=position", 0, out, sizeof out), 3);
    ck_assert_str_eq(out, "clamped pan=400.00: pan=170.00\n"
                          "clamped tilt=-90.00: tilt=-60.00\n"
                          "clamped zoom=20000.00: zoom=9999.00\n"
                          "pan=170.00\ntilt=-60.00\nzoom=9999\n");
    ck_assert(s.pan_deg == -170 && s.tilt_deg == -60 && s.zoom == 10);
    kn_ptz_home(&s, 0);
    ck_assert_int_eq(run(&s, "rpan=-200&rzoom=-5", 0, out, sizeof out), 2);
    ck_assert_str_eq(out, "clamped rpan=-200.00: pan=-170.00\nclamped rzoom=-5.00: zoom=1.00\n");
    ck_assert_int_eq(run(&s, "continuouspantiltmove=150,-101", 0, out, sizeof out), 2);
    ck_assert_str_eq(out, "clamped continuouspantiltmove=150.00: panspeed=100.00\n"
                          "clamped continuouspantiltmove=-101.00: tiltspeed=-100.00\n");
    ck_assert(s.pan_speed == 100 && s.tilt_speed == -100);
    /* within the limits nothing is said */
    ck_assert_int_eq(run(&s, "pan=170&tilt=60&zoom=1", 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(continuous_moves)
{
    struct kn_ptz_state s;
    kn_ptz_home(&s, 0);
    /* speed 50 right: 45°/s; speed 100 up: 60°/s; zoom in at 100: 3x/s */
    answer(&s, "continuouspantiltmove=50,100", 0);
    answer(&s, "continuouszoommove=100", 0);
    ck_assert_str_eq(answer(&s, "query=position", S_NS / 2), "pan=22.50\ntilt=30.00\nzoom=1667\n");
    /* the tilt stops at its limit, the others run on */
    kn_ptz_advance(&s, &lim, 2 * S_NS);
    ck_assert(s.tilt_deg == 60 && s.tilt_speed == 0);
    ck_assert(fabs(s.pan_deg + 90) < 1e-9);
    ck_assert(s.zoom == 7);
    /* a clock that goes back is no time */
    kn_ptz_advance(&s, &lim, S_NS);
    ck_assert(fabs(s.pan_deg + 90) < 1e-9 && s.t_ns == 2 * S_NS);
    /* stop: 0,0; and an absolute move of an axis ends its move */
    answer(&s, "continuouspantiltmove=0,0", 2 * S_NS);
    answer(&s, "zoom=1", 2 * S_NS);
    ck_assert(s.zoom_speed == 0 && s.pan_speed == 0);
    ck_assert_str_eq(answer(&s, "query=position", 10 * S_NS), "pan=90.00\ntilt=60.00\nzoom=1\n");
    /* zooming out at -100 stops at 1 */
    answer(&s, "zoom=9999&continuouszoommove=-100", 10 * S_NS);
    ck_assert_str_eq(answer(&s, "query=position", 20 * S_NS), "pan=90.00\ntilt=60.00\nzoom=1\n");
    ck_assert(s.zoom_speed == 0);
    /* a relative move ends the pan move too */
    answer(&s, "continuouspantiltmove=-100,0", 20 * S_NS);
    answer(&s, "rpan=5", 21 * S_NS);
    ck_assert_str_eq(answer(&s, "query=position", 30 * S_NS), "pan=5.00\ntilt=60.00\nzoom=1\n");
}
END_TEST

START_TEST(parse_fields)
{
    struct kn_ptz_req r;
    char err[256];
    const char *q = "camera=2&continuouspantiltmove=-10.5,20&query=limits";
    ck_assert_int_eq(kn_ptz_parse(q, strlen(q), &r, err, sizeof err), 0);
    ck_assert_uint_eq(r.set, KN_PTZ_CAMERA | KN_PTZ_CPT | KN_PTZ_QUERY);
    ck_assert_int_eq(r.camera, 2);
    ck_assert(r.cpan == -10.5 && r.ctilt == 20);
    ck_assert_int_eq(r.query, KN_PTZ_Q_LIMITS);
    /* the length bounds the text: what follows is not read */
    ck_assert_int_eq(kn_ptz_parse("pan=1&bogus=2", 5, &r, err, sizeof err), 0);
    ck_assert(r.set == KN_PTZ_PAN && r.pan == 1);
}
END_TEST

START_TEST(refusals)
{
    refused("", "no PTZ parameter (pan, tilt, zoom, rpan, rtilt, rzoom, continuouspantiltmove, "
                "continuouszoommove, move=home, query)");
    refused("camera=1", "no PTZ parameter (pan, tilt, zoom, rpan, rtilt, rzoom, "
                        "continuouspantiltmove, continuouszoommove, move=home, query)");
    refused("bogus=1", "unknown parameter \"bogus\"");
    refused("speed=50&pan=1", "unknown parameter \"speed\"");
    refused("pan=abc", "pan: \"abc\" is not a number");
    refused("pan=1e3", "pan: \"1e3\" is not a number");
    refused("pan=0x10", "pan: \"0x10\" is not a number");
    refused("tilt=nan", "tilt: \"nan\" is not a number");
    refused("zoom=", "zoom: \"\" is not a number");
    refused("rzoom=-", "rzoom: \"-\" is not a number");
    refused("pan=1.2.3", "pan: \"1.2.3\" is not a number");
    refused("pan", "pan: no value");
    refused("pan=1&pan=2", "pan given twice");
    refused("pan=1&rpan=2", "pan and rpan together");
    refused("zoom=1&rzoom=2", "zoom and rzoom together");
    refused("continuouspantiltmove=10",
            "continuouspantiltmove: \"10\" is not PAN_SPEED,TILT_SPEED");
    refused("continuouspantiltmove=10,x",
            "continuouspantiltmove: \"10,x\" is not PAN_SPEED,TILT_SPEED");
    refused("move=left", "move: \"left\" is not supported (only move=home)");
    refused("query=presetposall", "query: \"presetposall\" is not supported (position or limits)");
    refused("camera=0&pan=1", "camera: \"0\" is not a camera number (1, 2, ...)");
    refused("camera=1.5&pan=1", "camera: \"1.5\" is not a camera number (1, 2, ...)");
    refused("pan=%4", "a bad %-escape in a value");
    refused("pan=%zz", "a bad %-escape in a value");
    refused("pan=%0a", "a control or non-ASCII byte in a value");
    refused("p%C3%A4n=1", "a control or non-ASCII byte in a parameter name");
    refused("pan=1234567890123456", "pan: \"1234567890123456\" is not a number");
    refused("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1",
            "a parameter name longer than 31 characters");
}
END_TEST

/* The answer never overruns the caller's buffer and stays terminated. */
START_TEST(short_buffer)
{
    struct kn_ptz_state s;
    kn_ptz_home(&s, 0);
    char out[12];
    memset(out, 'x', sizeof out);
    run(&s, "pan=400&query=limits", 0, out, sizeof out);
    ck_assert_uint_eq(strlen(out), sizeof out - 1);
    ck_assert_str_eq(out, "clamped pan");
}
END_TEST

static Suite *ptz_suite(void)
{
    Suite *s = suite_create("cameras-ptz");
    TCase *t = tcase_create("ptz");
    tcase_add_test(t, absolute_and_query);
    tcase_add_test(t, relative_and_home);
    tcase_add_test(t, clamped_and_said);
    tcase_add_test(t, continuous_moves);
    tcase_add_test(t, parse_fields);
    tcase_add_test(t, refusals);
    tcase_add_test(t, short_buffer);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return h_run_suite(ptz_suite());
}
