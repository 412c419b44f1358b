/* Unit tests of the Gazebo Classic messages (protocols/gazebo_classic/gzc_codec.c):
 * every encoding against golden bytes (generated with Gazebo's own
 * .proto files, gazebo/msgs/NAME.proto of Gazebo 10.1, and parsed by
 * Gazebo's transport code), the hand-written Packet envelope against
 * protobuf-c's own Packet encoding, required fields, decoders, the arena,
 * topic names and GAZEBO_MASTER_URI. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gzc_codec.h"
#include "harness_suite.h"

static uint8_t out[4096];
static uint8_t arena_mem[1 << 16];
static struct kn_pbarena arena;

static void setup(void)
{
    kn_pbarena_init(&arena, arena_mem, sizeof arena_mem);
}

/* "0a 08 ..." to bytes; text in quotes goes in as is. */
static size_t golden(const char *spec, uint8_t *buf)
{
    size_t n = 0;
    for (const char *p = spec; *p;) {
        if (*p == ' ') {
            p++;
        } else if (*p == '"') {
            const char *e = strchr(p + 1, '"');
            memcpy(buf + n, p + 1, (size_t)(e - p - 1));
            n += (size_t)(e - p - 1);
            p = e + 1;
        } else {
            unsigned v;
            ck_assert_int_eq(sscanf(p, "%2x", &v), 1);
            buf[n++] = (uint8_t)v;
            p += 2;
        }
    }
    return n;
}

static void check_golden(const uint8_t *got, size_t n, const char *spec)
{
    uint8_t want[1024];
    size_t wn = golden(spec, want);
    if (n != wn || memcmp(got, want, n) != 0) {
        char a[3000] = "", b[3000] = "";
        for (size_t i = 0; i < n && i < 900; i++)
            sprintf(a + 3 * i, "%02x ", got[i]);
        for (size_t i = 0; i < wn && i < 900; i++)
            sprintf(b + 3 * i, "%02x ", want[i]);
        ck_abort_msg("bytes differ\n got  %s\n want %s", a, b);
    }
}

static const struct kn_gzc_stamp STAMP = { 1700000000, 0 };

START_TEST(advertise_golden)
{
    size_t n = kn_gzc_enc_publish(out, sizeof out, STAMP, KN_GZC_PKT_ADVERTISE,
                                  "/gazebo/default/robot/cmd_vel_twist", KN_GZC_TYPE_TWIST,
                                  "127.0.0.1", 40000);
    check_golden(out, n,
                 "\"0000005e\" 0a 08 08 80 e2 cf aa 06 10 00 12 09 \"advertise\" 1a 47 0a 23 "
                 "\"/gazebo/default/robot/cmd_vel_twist\" 12 11 \"gazebo.msgs.Twist\" 1a 09 "
                 "\"127.0.0.1\" 20 c0 b8 02");
}
END_TEST

START_TEST(subscribe_golden)
{
    size_t n = kn_gzc_enc_subscribe(out, sizeof out, STAMP, KN_GZC_PKT_SUBSCRIBE,
                                    "/gazebo/default/world_stats", "127.0.0.1", 40000,
                                    KN_GZC_TYPE_WORLD_STATS, false);
    check_golden(out, n,
                 "\"00000062\" 0a 08 08 80 e2 cf aa 06 10 00 12 09 \"subscribe\" 1a 4b 0a 1b "
                 "\"/gazebo/default/world_stats\" 12 09 \"127.0.0.1\" 18 c0 b8 02 22 1b "
                 "\"gazebo.msgs.WorldStatistics\" 28 00");
}
END_TEST

START_TEST(sub_golden)
{
    size_t n =
        kn_gzc_enc_subscribe(out, sizeof out, STAMP, KN_GZC_PKT_SUB, "/gazebo/default/world_stats",
                             "127.0.0.1", 51234, KN_GZC_TYPE_WORLD_STATS, false);
    check_golden(out, n,
                 "\"0000005c\" 0a 08 08 80 e2 cf aa 06 10 00 12 03 \"sub\" 1a 4b 0a 1b "
                 "\"/gazebo/default/world_stats\" 12 09 \"127.0.0.1\" 18 a2 90 03 22 1b "
                 "\"gazebo.msgs.WorldStatistics\" 28 00");
}
END_TEST

START_TEST(request_golden)
{
    size_t n = kn_gzc_enc_request(out, sizeof out, STAMP, 1, "get_publishers", NULL);
    check_golden(out, n,
                 "\"00000027\" 0a 08 08 80 e2 cf aa 06 10 00 12 07 \"request\" 1a 12 08 01 12 0e "
                 "\"get_publishers\"");
}
END_TEST

START_TEST(twist_golden)
{
    size_t n = kn_gzc_enc_twist(out, sizeof out, 0.5, 0.3);
    check_golden(out, n,
                 "\"0000003a\" 12 1b 09 000000000000e03f 11 0000000000000000 19 0000000000000000 "
                 "1a 1b 09 0000000000000000 11 0000000000000000 19 333333333333d33f");
    /* zeros are written: Vector3d x, y, z are required */
    n = kn_gzc_enc_twist(out, sizeof out, 0, 0);
    ck_assert_uint_eq(n, 8 + 58);
}
END_TEST

START_TEST(world_control_golden)
{
    struct kn_gzc_world_ctl c = { 0 };
    c.set_pause = true;
    c.pause = true;
    size_t n = kn_gzc_enc_world_control(out, sizeof out, &c);
    check_golden(out, n, "\"00000002\" 08 01");
    memset(&c, 0, sizeof c);
    c.multi_step = 250;
    n = kn_gzc_enc_world_control(out, sizeof out, &c);
    check_golden(out, n, "\"00000003\" 18 fa 01");
    memset(&c, 0, sizeof c);
    c.set_pause = true; /* run */
    n = kn_gzc_enc_world_control(out, sizeof out, &c);
    check_golden(out, n, "\"00000002\" 08 00");
    memset(&c, 0, sizeof c);
    c.step = true;
    n = kn_gzc_enc_world_control(out, sizeof out, &c);
    check_golden(out, n, "\"00000002\" 10 01");
    memset(&c, 0, sizeof c);
    c.reset = KN_GZC_RESET_ALL;
    n = kn_gzc_enc_world_control(out, sizeof out, &c);
    check_golden(out, n, "\"00000004\" 22 02 08 01");
    c.reset = KN_GZC_RESET_TIME;
    n = kn_gzc_enc_world_control(out, sizeof out, &c);
    check_golden(out, n, "\"00000004\" 22 02 10 01");
    c.reset = KN_GZC_RESET_MODEL;
    n = kn_gzc_enc_world_control(out, sizeof out, &c);
    check_golden(out, n, "\"00000004\" 22 02 18 01");
    memset(&c, 0, sizeof c); /* nothing asked: nothing to send */
    ck_assert_uint_eq(kn_gzc_enc_world_control(out, sizeof out, &c), 0);
}
END_TEST

START_TEST(joint_cmd_golden)
{
    size_t n = kn_gzc_enc_joint_cmd(out, sizeof out, "robot::front_left_flipper_j", 0.7);
    check_golden(out, n,
                 "\"00000028\" 0a 1b \"robot::front_left_flipper_j\" 22 09 09 666666666666e63f");
}
END_TEST

START_TEST(master_init_golden)
{
    /* the three frames a Gazebo 10.1 master sent (stamps as captured) */
    struct kn_gzc_stamp s1 = { 1795263993, 198558285 };
    size_t n = kn_gzc_enc_string(out, sizeof out, s1, KN_GZC_PKT_VERSION_INIT, "gazebo 10.1");
    check_golden(out, n,
                 "\"0000002a\" 0a 0b 08 f9 9b 86 d8 06 10 cd 84 d7 5e 12 0c \"version_init\" "
                 "1a 0d 0a 0b \"gazebo 10.1\"");
    struct kn_gzc_stamp s2 = { 1795264688, 501531812 };
    const char *ns[] = { "default" };
    n = kn_gzc_enc_strings(out, sizeof out, s2, KN_GZC_PKT_NAMESPACES_INIT, ns, 1);
    check_golden(out, n,
                 "\"0000002f\" 0a 0c 08 b0 a1 86 d8 06 10 a4 89 93 ef 01 12 14 "
                 "\"topic_namepaces_init\" 1a 09 0a 07 \"default\"");
    Gazebo__Msgs__Publish p = GAZEBO__MSGS__PUBLISH__INIT;
    Gazebo__Msgs__Publish *pp = &p;
    Gazebo__Msgs__Publishers m = GAZEBO__MSGS__PUBLISHERS__INIT;
    p.topic = "/gazebo/default/world_control";
    p.msg_type = KN_GZC_TYPE_WORLD_CONTROL;
    p.host = "127.0.0.1";
    p.port = 36317;
    m.n_publisher = 1;
    m.publisher = &pp;
    n = kn_gzc_encode_packet(out, sizeof out, s2, KN_GZC_PKT_PUBLISHERS_INIT, &m.base);
    check_golden(out, n,
                 "\"0000006b\" 0a 0c 08 b0 a1 86 d8 06 10 a4 89 93 ef 01 12 0f \"publishers_init\" "
                 "1a 4a 0a 48 0a 1d \"/gazebo/default/world_control\" 12 18 "
                 "\"gazebo.msgs.WorldControl\" 1a 09 \"127.0.0.1\" 20 dd 9b 02");
}
END_TEST

/* The envelope is written by hand; protobuf-c must agree byte for byte. */
START_TEST(envelope_matches_protobuf_c)
{
    static const struct kn_gzc_stamp stamps[] = {
        { 0, 0 }, { 1, 999999999 }, { -1, -5 }, { INT32_MAX, INT32_MAX }, { INT32_MIN, 7 },
    };
    static const char *const types[] = { "a", "advertise", "topic_namepaces_init" };
    char big[300];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    for (size_t i = 0; i < sizeof stamps / sizeof stamps[0]; i++)
        for (size_t j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++) {
                Gazebo__Msgs__GzString inner = GAZEBO__MSGS__GZ_STRING__INIT;
                inner.data = k ? big : "";
                size_t n = kn_gzc_encode_packet(out, sizeof out, stamps[i], types[j], &inner.base);
                ck_assert_uint_gt(n, 8);

                uint8_t innerb[512], want[1024];
                size_t in = gazebo__msgs__gz_string__pack(&inner, innerb);
                Gazebo__Msgs__Time t = GAZEBO__MSGS__TIME__INIT;
                t.sec = stamps[i].sec;
                t.nsec = stamps[i].nsec;
                Gazebo__Msgs__Packet pk = GAZEBO__MSGS__PACKET__INIT;
                pk.stamp = &t;
                pk.type = (char *)types[j];
                pk.serialized_data.data = innerb;
                pk.serialized_data.len = in;
                size_t wn = gazebo__msgs__packet__pack(&pk, want);
                ck_assert_uint_eq(n, 8 + wn);
                ck_assert_mem_eq(out + 8, want, wn);
                char h[9];
                snprintf(h, sizeof h, "%08zx", wn);
                ck_assert_mem_eq(out, h, 8);
            }
}
END_TEST

START_TEST(required_fields_enforced)
{
    /* protobuf-c would pack these; Gazebo would throw on them */
    Gazebo__Msgs__Vector3d v = GAZEBO__MSGS__VECTOR3D__INIT;
    Gazebo__Msgs__Twist t = GAZEBO__MSGS__TWIST__INIT;
    t.linear = &v;
    ck_assert_uint_eq(kn_gzc_encode_msg(out, sizeof out, &t.base), 0); /* no angular */
    Gazebo__Msgs__Publish p = GAZEBO__MSGS__PUBLISH__INIT;
    p.topic = "/t";
    p.msg_type = "x";
    ck_assert_uint_eq(kn_gzc_encode_packet(out, sizeof out, STAMP, "advertise", &p.base), 0);
    Gazebo__Msgs__JointCmd j = GAZEBO__MSGS__JOINT_CMD__INIT;
    ck_assert_uint_eq(kn_gzc_encode_msg(out, sizeof out, &j.base), 0); /* no name */
    /* every encoder used on the wire passes the check */
    ck_assert_uint_gt(kn_gzc_enc_publish(out, sizeof out, STAMP, "advertise", NULL, NULL, NULL, 0),
                      0);
    double pos[3] = { 1, 2, 3 }, q[4] = { 0, 0, 0, 1 };
    ck_assert_uint_gt(kn_gzc_enc_pose(out, sizeof out, NULL, pos, q), 0);
}
END_TEST

START_TEST(buffer_too_small)
{
    uint8_t small[20];
    ck_assert_uint_eq(kn_gzc_enc_twist(small, sizeof small, 1, 2), 0);
    ck_assert_uint_eq(
        kn_gzc_enc_publish(small, sizeof small, STAMP, "advertise", "/t", "x", "127.0.0.1", 1), 0);
    ck_assert_uint_eq(kn_gzc_enc_twist(small, 7, 1, 2), 0);
    size_t need = kn_gzc_enc_joint_cmd(out, sizeof out, "m::j", 1.0);
    ck_assert_uint_eq(kn_gzc_enc_joint_cmd(out, need, "m::j", 1.0), need);
    ck_assert_uint_eq(kn_gzc_enc_joint_cmd(out, need - 1, "m::j", 1.0), 0);
}
END_TEST

START_TEST(pose_cmd_encoding)
{
    double pos[3] = { 0.25, 0, 0 }, q[4] = { 0, 0, 0.5, 0.8660254037844386 };
    size_t n = kn_gzc_enc_pose(out, sizeof out, NULL, pos, q);
    /* position = 3, orientation = 4; Quaternion fields start at 2 */
    check_golden(out, n,
                 "\"00000043\" 1a 1b 09 000000000000d03f 11 0000000000000000 19 0000000000000000 "
                 "22 24 11 0000000000000000 19 0000000000000000 21 000000000000e03f "
                 "29 aa4c58e87ab6eb3f");
    kn_pbarena_reset(&arena);
    Gazebo__Msgs__Pose *m = kn_gzc_dec_pose(&arena, out + 8, n - 8);
    ck_assert_ptr_nonnull(m);
    ck_assert_double_eq(m->position->x, 0.25);
    ck_assert_double_eq(m->orientation->z, 0.5);
    ck_assert_double_eq(m->orientation->w, 0.8660254037844386);
    ck_assert_ptr_null(m->name);
}
END_TEST

START_TEST(vector2d_encoding)
{
    size_t n = kn_gzc_enc_vector2d(out, sizeof out, 0.5, -0.25);
    check_golden(out, n, "\"00000012\" 09 000000000000e03f 11 000000000000d0bf");
}
END_TEST

START_TEST(decode_packets)
{
    uint8_t buf[512];
    size_t n = golden("0a 08 08 80 e2 cf aa 06 10 00 12 13 \"publisher_subscribe\" 1a 49 0a 1b "
                      "\"/gazebo/default/world_stats\" 12 1b \"gazebo.msgs.WorldStatistics\" 1a 09 "
                      "\"127.0.0.1\" 20 c0 b8 02",
                      buf);
    struct kn_gzc_packet pk;
    ck_assert_int_eq(kn_gzc_dec_packet(&arena, buf, n - 13, &pk), -1); /* cut short */
    kn_pbarena_reset(&arena);
    ck_assert_int_eq(kn_gzc_dec_packet(&arena, buf, n, &pk), 0);
    ck_assert_str_eq(pk.type, KN_GZC_PKT_PUBLISHER_SUBSCRIBE);
    ck_assert_int_eq(pk.stamp.sec, 1700000000);
    Gazebo__Msgs__Publish *p = kn_gzc_dec_publish(&arena, pk.data, pk.len);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->topic, "/gazebo/default/world_stats");
    ck_assert_str_eq(p->msg_type, KN_GZC_TYPE_WORLD_STATS);
    ck_assert_str_eq(p->host, "127.0.0.1");
    ck_assert_uint_eq(p->port, 40000);
    /* a Publish lacking its port is refused (required) */
    ck_assert_ptr_null(kn_gzc_dec_publish(&arena, pk.data, pk.len - 4));
}
END_TEST

START_TEST(decode_world_stats_and_missing_required)
{
    Gazebo__Msgs__Time a = GAZEBO__MSGS__TIME__INIT, b = GAZEBO__MSGS__TIME__INIT,
                       c = GAZEBO__MSGS__TIME__INIT;
    Gazebo__Msgs__WorldStatistics m = GAZEBO__MSGS__WORLD_STATISTICS__INIT;
    a.sec = 12;
    a.nsec = 345000000;
    m.sim_time = &a;
    m.pause_time = &b;
    m.real_time = &c;
    m.paused = 1;
    m.iterations = 12345;
    size_t n = kn_gzc_encode_msg(out, sizeof out, &m.base);
    ck_assert_uint_gt(n, 8);
    Gazebo__Msgs__WorldStatistics *d = kn_gzc_dec_world_stats(&arena, out + 8, n - 8);
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq(d->sim_time->sec, 12);
    ck_assert_int_eq(kn_gzc_time_ns(d->sim_time->sec, d->sim_time->nsec), 12345000000LL);
    ck_assert(d->paused);
    ck_assert_uint_eq(d->iterations, 12345);
    /* without iterations (a required field) it is not a WorldStatistics */
    Gazebo__Msgs__Time t = GAZEBO__MSGS__TIME__INIT;
    uint8_t tb[32];
    size_t tn = gazebo__msgs__time__pack(&t, tb);
    uint8_t partial[64];
    size_t k = 0;
    partial[k++] = 0x12;
    partial[k++] = (uint8_t)tn;
    memcpy(partial + k, tb, tn);
    k += tn;
    ck_assert_ptr_null(kn_gzc_dec_world_stats(&arena, partial, k));
    /* a Twist with a linear part only */
    ck_assert_ptr_null(kn_gzc_dec_twist(&arena, (const uint8_t *)"\x12\x00", 2));
}
END_TEST

START_TEST(decode_poses)
{
    Gazebo__Msgs__Vector3d v[2];
    Gazebo__Msgs__Quaternion q[2];
    Gazebo__Msgs__Pose p[2], *pp[2];
    for (int i = 0; i < 2; i++) {
        Gazebo__Msgs__Vector3d vi = GAZEBO__MSGS__VECTOR3D__INIT;
        Gazebo__Msgs__Quaternion qi = GAZEBO__MSGS__QUATERNION__INIT;
        Gazebo__Msgs__Pose pi = GAZEBO__MSGS__POSE__INIT;
        v[i] = vi;
        q[i] = qi;
        p[i] = pi;
        v[i].x = i + 1;
        q[i].w = 1;
        p[i].position = &v[i];
        p[i].orientation = &q[i];
        pp[i] = &p[i];
    }
    p[0].name = "kenaf";
    p[1].name = "kenaf::front_left_flipper";
    Gazebo__Msgs__Time t = GAZEBO__MSGS__TIME__INIT;
    t.sec = 3;
    Gazebo__Msgs__PosesStamped m = GAZEBO__MSGS__POSES_STAMPED__INIT;
    m.time = &t;
    m.n_pose = 2;
    m.pose = pp;
    size_t n = kn_gzc_encode_msg(out, sizeof out, &m.base);
    Gazebo__Msgs__PosesStamped *d = kn_gzc_dec_poses(&arena, out + 8, n - 8);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(d->n_pose, 2);
    ck_assert_ptr_nonnull(kn_gzc_poses_find(d, "kenaf::front_left_flipper"));
    ck_assert_double_eq(kn_gzc_poses_find(d, "kenaf")->position->x, 1);
    ck_assert_ptr_null(kn_gzc_poses_find(d, "other"));
    /* a small arena cannot hold it: refused and counted, no crash */
    uint8_t tiny[64];
    struct kn_pbarena ta;
    kn_pbarena_init(&ta, tiny, sizeof tiny);
    ck_assert_ptr_null(kn_gzc_dec_poses(&ta, out + 8, n - 8));
    ck_assert_uint_gt(ta.exhausted, 0);
}
END_TEST

START_TEST(world_control_roundtrip)
{
    struct kn_gzc_world_ctl in[] = {
        { .set_pause = true, .pause = true },
        { .set_pause = true, .pause = false },
        { .step = true },
        { .multi_step = 1000000 },
        { .reset = KN_GZC_RESET_ALL },
        { .reset = KN_GZC_RESET_TIME },
        { .reset = KN_GZC_RESET_MODEL, .set_pause = true, .pause = true },
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        size_t n = kn_gzc_enc_world_control(out, sizeof out, &in[i]);
        ck_assert_uint_gt(n, 8);
        kn_pbarena_reset(&arena);
        Gazebo__Msgs__WorldControl *m = kn_gzc_dec_world_control(&arena, out + 8, n - 8);
        ck_assert_ptr_nonnull(m);
        struct kn_gzc_world_ctl o;
        kn_gzc_world_ctl_from_msg(m, &o);
        ck_assert_int_eq(o.set_pause, in[i].set_pause);
        ck_assert_int_eq(o.pause, in[i].pause);
        ck_assert_int_eq(o.step, in[i].step);
        ck_assert_uint_eq(o.multi_step, in[i].multi_step);
        ck_assert_int_eq(o.reset, in[i].reset);
    }
    /* step present but false still steps (World::OnControl checks presence) */
    kn_pbarena_reset(&arena);
    Gazebo__Msgs__WorldControl *m =
        kn_gzc_dec_world_control(&arena, (const uint8_t *)"\x10\x00", 2);
    struct kn_gzc_world_ctl o;
    kn_gzc_world_ctl_from_msg(m, &o);
    ck_assert(o.step);
    /* reset without all, time_only or model_only resets nothing */
    m = kn_gzc_dec_world_control(&arena, (const uint8_t *)"\x22\x00", 2);
    kn_gzc_world_ctl_from_msg(m, &o);
    ck_assert_int_eq(o.reset, KN_GZC_RESET_NONE);
}
END_TEST

START_TEST(time_and_stamps)
{
    ck_assert_int_eq(kn_gzc_time_ns(1, 500000000), 1500000000LL);
    ck_assert_int_eq(kn_gzc_time_ns(-1, 0), -1000000000LL);
    struct kn_gzc_stamp s = kn_gzc_stamp_from_ns(12345000000LL);
    ck_assert_int_eq(s.sec, 12);
    ck_assert_int_eq(s.nsec, 345000000);
    s = kn_gzc_stamp_from_ns(-1);
    ck_assert_int_eq(s.sec, -1);
    ck_assert_int_eq(s.nsec, 999999999);
    s = kn_gzc_stamp_from_ns(INT64_MAX);
    ck_assert_int_eq(s.sec, INT32_MAX);
}
END_TEST

START_TEST(topic_names)
{
    char t[KN_GZC_TOPIC_MAX];
    ck_assert_int_eq(kn_gzc_topic(t, sizeof t, "default", "world_stats"), 0);
    ck_assert_str_eq(t, "/gazebo/default/world_stats");
    ck_assert_int_eq(kn_gzc_topic(t, sizeof t, "default/kenaf", "cmd_vel_twist"), 0);
    ck_assert_str_eq(t, "/gazebo/default/kenaf/cmd_vel_twist");
    ck_assert_int_eq(kn_gzc_topic(t, sizeof t, "", "x"), 0); /* the first "//" collapses */
    ck_assert_str_eq(t, "/gazebo/x");
    char small[10];
    ck_assert_int_eq(kn_gzc_topic(small, sizeof small, "default", "x"), -1);
}
END_TEST

START_TEST(master_uri)
{
    char h[64];
    uint16_t p;
    ck_assert_int_eq(kn_gzc_parse_master_uri("http://localhost:11345", h, sizeof h, &p, NULL, 0),
                     0);
    ck_assert_str_eq(h, "localhost");
    ck_assert_uint_eq(p, 11345);
    ck_assert_int_eq(kn_gzc_parse_master_uri("http://10.0.0.2:12000/", h, sizeof h, &p, NULL, 0),
                     0);
    ck_assert_str_eq(h, "10.0.0.2");
    ck_assert_uint_eq(p, 12000);
    ck_assert_int_eq(kn_gzc_parse_master_uri("192.168.1.5", h, sizeof h, &p, NULL, 0), 0);
    ck_assert_uint_eq(p, 11345);
    ck_assert_int_eq(kn_gzc_parse_master_uri("[::1]:4000", h, sizeof h, &p, NULL, 0), 0);
    ck_assert_str_eq(h, "::1");
    ck_assert_uint_eq(p, 4000);
    const char *bad[] = { "",           "http://",  "http://:11345", "host:", "host:0",
                          "host:65536", "host:12a", "::1",           "[::1",  "[]:1",
                          "[::1]x",     "a b:1",    "host:123456" };
    char err[200];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(kn_gzc_parse_master_uri(bad[i], h, sizeof h, &p, err, sizeof err) == -1,
                      "accepted %s", bad[i]);
    ck_assert_int_eq(kn_gzc_parse_master_uri("http://[::1:80/", h, sizeof h, &p, err, sizeof err),
                     -1);
    ck_assert_str_eq(err, "\"[::1:80\": missing ']'");
    ck_assert_int_eq(kn_gzc_parse_master_uri("http://::1", h, sizeof h, &p, err, sizeof err), -1);
    ck_assert_str_eq(err, "\"::1\": an IPv6 address needs brackets, as in [::1]:9750");
    char tiny[4];
    ck_assert_int_eq(kn_gzc_parse_master_uri("longhost", tiny, sizeof tiny, &p, NULL, 0), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gazebo messages");
    TCase *tc = tcase_create("codec");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, advertise_golden);
    tcase_add_test(tc, subscribe_golden);
    tcase_add_test(tc, sub_golden);
    tcase_add_test(tc, request_golden);
    tcase_add_test(tc, twist_golden);
    tcase_add_test(tc, world_control_golden);
    tcase_add_test(tc, joint_cmd_golden);
    tcase_add_test(tc, master_init_golden);
    tcase_add_test(tc, envelope_matches_protobuf_c);
    tcase_add_test(tc, required_fields_enforced);
    tcase_add_test(tc, buffer_too_small);
    tcase_add_test(tc, pose_cmd_encoding);
    tcase_add_test(tc, vector2d_encoding);
    tcase_add_test(tc, decode_packets);
    tcase_add_test(tc, decode_world_stats_and_missing_required);
    tcase_add_test(tc, decode_poses);
    tcase_add_test(tc, world_control_roundtrip);
    tcase_add_test(tc, time_and_stamps);
    tcase_add_test(tc, topic_names);
    tcase_add_test(tc, master_uri);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
