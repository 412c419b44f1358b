/* The gz-transport codec (protocols/gzt): discovery datagrams, names, the
 * ZeroMQ multipart layouts and the messages, against golden bytes written
 * by hand from the protobuf encoding rules and the field numbers
 * (docs/gz.md), plus round trips and refusals. */
#include <string.h>

#include "gzt_disc.h"
#include "gzt_msgs.h"
#include "gzt_wire.h"
#include "harness_suite.h"

static uint8_t arena_mem[1 << 16];
static struct kn_pbarena arena;

static void setup(void)
{
    kn_pbarena_init(&arena, arena_mem, sizeof arena_mem);
}

/* HEARTBEAT from process "p": version 10 (field 2), process_uuid (3), type
 * 4 (4); the 2-byte little-endian length first. */
static const uint8_t heartbeat[] = { 0x07, 0x00, 0x10, 0x0a, 0x1a, 0x01, 'p', 0x20, 0x04 };

START_TEST(heartbeat_golden)
{
    struct kn_gzt_disc d;
    memset(&d, 0, sizeof d);
    d.version = KN_GZT_WIRE_VERSION;
    d.type = KN_GZT_HEARTBEAT;
    strcpy(d.process_uuid, "p");
    uint8_t buf[64];
    size_t n = kn_gzt_disc_encode(buf, sizeof buf, &d);
    ck_assert_uint_eq(n, sizeof heartbeat);
    ck_assert_mem_eq(buf, heartbeat, n);
    struct kn_gzt_disc back;
    ck_assert_int_eq(kn_gzt_disc_decode(&arena, heartbeat, sizeof heartbeat, &back), 0);
    ck_assert_uint_eq(back.version, 10);
    ck_assert_uint_eq(back.type, KN_GZT_HEARTBEAT);
    ck_assert_str_eq(back.process_uuid, "p");
    ck_assert(!back.has_pub && !back.has_sub);
}
END_TEST

/* SUBSCRIBE to "@@/t": ... type 2, sub (field 6) { topic (1) }. */
static const uint8_t subscribe[] = { 0x0f, 0x00, 0x10, 0x0a, 0x1a, 0x01, 'p', 0x20, 0x02,
                                     0x32, 0x06, 0x0a, 0x04, '@',  '@',  '/', 't' };

START_TEST(subscribe_golden)
{
    struct kn_gzt_disc d;
    memset(&d, 0, sizeof d);
    d.version = 10;
    d.type = KN_GZT_SUBSCRIBE;
    strcpy(d.process_uuid, "p");
    strcpy(d.sub_topic, "@@/t");
    uint8_t buf[64];
    size_t n = kn_gzt_disc_encode(buf, sizeof buf, &d);
    ck_assert_uint_eq(n, sizeof subscribe);
    ck_assert_mem_eq(buf, subscribe, n);
    struct kn_gzt_disc back;
    ck_assert_int_eq(kn_gzt_disc_decode(&arena, subscribe, sizeof subscribe, &back), 0);
    ck_assert(back.has_sub);
    ck_assert_str_eq(back.sub_topic, "@@/t");
}
END_TEST

/* ADVERTISE: pub (7) { topic (1) "@@/t", address (2) "a", process_uuid (3)
 * "p", node_uuid (4) "n", scope (5) ALL = 2, msg_pub (6) { ctrl (1) "c",
 * msg_type (2) "T" } }. */
static const uint8_t advertise[] = {
    0x22, 0x00, 0x10, 0x0a, 0x1a, 0x01, 'p',  0x20, 0x01, 0x3a, 0x19, 0x0a,
    0x04, '@',  '@',  '/',  't',  0x12, 0x01, 'a',  0x1a, 0x01, 'p',  0x22,
    0x01, 'n',  0x28, 0x02, 0x32, 0x06, 0x0a, 0x01, 'c',  0x12, 0x01, 'T',
};

START_TEST(advertise_golden)
{
    struct kn_gzt_disc d;
    memset(&d, 0, sizeof d);
    d.version = 10;
    d.type = KN_GZT_ADVERTISE;
    strcpy(d.process_uuid, "p");
    d.has_pub = true;
    strcpy(d.pub.topic, "@@/t");
    strcpy(d.pub.address, "a");
    strcpy(d.pub.process_uuid, "p");
    strcpy(d.pub.node_uuid, "n");
    d.pub.scope = KN_GZT_SCOPE_ALL;
    d.pub.kind = KN_GZT_PUB_MSG;
    strcpy(d.pub.ctrl, "c");
    strcpy(d.pub.msg_type, "T");
    uint8_t buf[128];
    size_t n = kn_gzt_disc_encode(buf, sizeof buf, &d);
    ck_assert_uint_eq(n, sizeof advertise);
    ck_assert_mem_eq(buf, advertise, n);
    struct kn_gzt_disc back;
    ck_assert_int_eq(kn_gzt_disc_decode(&arena, advertise, sizeof advertise, &back), 0);
    ck_assert(back.has_pub);
    ck_assert_int_eq(back.pub.kind, KN_GZT_PUB_MSG);
    ck_assert_str_eq(back.pub.address, "a");
    ck_assert_str_eq(back.pub.ctrl, "c");
    ck_assert_str_eq(back.pub.msg_type, "T");
    ck_assert_uint_eq(back.pub.scope, 2);
}
END_TEST

START_TEST(service_advertise_round_trip)
{
    struct kn_gzt_disc d, back;
    memset(&d, 0, sizeof d);
    d.version = 10;
    d.type = KN_GZT_ADVERTISE;
    strcpy(d.process_uuid, "proc");
    d.has_pub = true;
    strcpy(d.pub.topic, "@/host:user@/world/w/control");
    strcpy(d.pub.address, "tcp://127.0.0.1:40000");
    d.pub.kind = KN_GZT_PUB_SRV;
    strcpy(d.pub.socket_id, "sock");
    strcpy(d.pub.req_type, "ignition.msgs.WorldControl");
    strcpy(d.pub.rep_type, "ignition.msgs.Boolean");
    uint8_t buf[512];
    size_t n = kn_gzt_disc_encode(buf, sizeof buf, &d);
    ck_assert_uint_gt(n, 2);
    ck_assert_int_eq(kn_gzt_disc_decode(&arena, buf, n, &back), 0);
    ck_assert_int_eq(back.pub.kind, KN_GZT_PUB_SRV);
    ck_assert_str_eq(back.pub.socket_id, "sock");
    ck_assert_str_eq(back.pub.req_type, "ignition.msgs.WorldControl");
    ck_assert_str_eq(back.pub.rep_type, "ignition.msgs.Boolean");
}
END_TEST

START_TEST(discovery_refusals)
{
    struct kn_gzt_disc d;
    ck_assert_int_eq(kn_gzt_disc_decode(&arena, heartbeat, 1, &d), KN_GZT_DISC_ESHORT);
    ck_assert_int_eq(kn_gzt_disc_decode(&arena, heartbeat, sizeof heartbeat - 1, &d),
                     KN_GZT_DISC_ELENGTH);
    /* the pre-8 form counted its own 2 bytes in the length */
    uint8_t old[sizeof heartbeat];
    memcpy(old, heartbeat, sizeof old);
    old[0] = sizeof old;
    ck_assert_int_eq(kn_gzt_disc_decode(&arena, old, sizeof old, &d), KN_GZT_DISC_ELENGTH);
    const uint8_t junk[] = { 0x02, 0x00, 0x0a, 0x05 }; /* a string longer than the body */
    ck_assert_int_eq(kn_gzt_disc_decode(&arena, junk, sizeof junk, &d), KN_GZT_DISC_EPROTO);
    uint8_t longname[600];
    memset(&d, 0, sizeof d);
    d.version = 10;
    d.type = KN_GZT_SUBSCRIBE;
    memset(d.sub_topic, 'x', sizeof d.sub_topic - 1);
    size_t n = kn_gzt_disc_encode(longname, sizeof longname, &d);
    ck_assert_uint_gt(n, 0);
    /* one byte over what the decoder keeps */
    ck_assert_int_eq(kn_gzt_disc_decode(&arena, longname, n, &d), 0);
    ck_assert_uint_eq(kn_gzt_disc_encode(longname, 10, &d), 0);
}
END_TEST

START_TEST(names)
{
    char b[128];
    ck_assert_int_eq(kn_gzt_fqn(b, sizeof b, "host:user", "/model/kenaf/cmd_vel"), 32);
    ck_assert_str_eq(b, "@/host:user@/model/kenaf/cmd_vel");
    ck_assert_int_gt(kn_gzt_fqn(b, sizeof b, "", "/t"), 0);
    ck_assert_str_eq(b, "@@/t");
    ck_assert_int_gt(kn_gzt_fqn(b, sizeof b, "/p/", "/t"), 0);
    ck_assert_str_eq(b, "@/p@/t");
    ck_assert_int_gt(kn_gzt_fqn(b, sizeof b, "/", "/t"), 0);
    ck_assert_str_eq(b, "@@/t");
    ck_assert_int_eq(kn_gzt_fqn(b, sizeof b, "a@b", "/t"), -1);
    ck_assert_int_eq(kn_gzt_fqn(b, sizeof b, "p", "t"), -1);
    ck_assert_int_eq(kn_gzt_fqn(b, sizeof b, "p", "/a b"), -1);
    ck_assert_int_eq(kn_gzt_fqn(b, sizeof b, "p:=q", "/t"), -1);
    ck_assert_int_eq(kn_gzt_fqn(b, 8, "p", "/topic"), -1);
    char p[64], t[64];
    ck_assert_int_eq(kn_gzt_fqn_split("@/host:user@/world/w/clock", p, sizeof p, t, sizeof t), 0);
    ck_assert_str_eq(p, "host:user");
    ck_assert_str_eq(t, "/world/w/clock");
    ck_assert_int_eq(kn_gzt_fqn_split("/no/partition", p, sizeof p, t, sizeof t), -1);
    ck_assert_int_eq(kn_gzt_type_name(b, sizeof b, KN_GZT_FAMILY_IGNITION, "Twist"), 19);
    ck_assert_str_eq(b, "ignition.msgs.Twist");
    ck_assert_int_gt(kn_gzt_type_name(b, sizeof b, KN_GZT_FAMILY_GZ, "Twist"), 0);
    ck_assert_str_eq(b, "gz.msgs.Twist");
    enum kn_gzt_family f;
    const char *s;
    ck_assert_int_eq(kn_gzt_type_split("gz.msgs.Pose_V", &f, &s), 0);
    ck_assert_int_eq(f, KN_GZT_FAMILY_GZ);
    ck_assert_str_eq(s, "Pose_V");
    ck_assert_int_eq(kn_gzt_type_split("ignition.msgs.Clock", &f, &s), 0);
    ck_assert_int_eq(f, KN_GZT_FAMILY_IGNITION);
    ck_assert_int_eq(kn_gzt_type_split("gazebo.msgs.Pose", &f, &s), -1);
}
END_TEST

START_TEST(multipart_layouts)
{
    struct kn_gzt_frame f[KN_GZT_FRAMES_MAX];
    struct kn_gzt_pubmsg pm = { kn_gzt_str("@@/t"), kn_gzt_str("tcp://1.2.3.4:5"),
                                kn_gzt_str("DATA"), kn_gzt_str("gz.msgs.Twist") };
    size_t n = kn_gzt_pubmsg_build(&pm, f);
    ck_assert_uint_eq(n, 4);
    ck_assert(kn_gzt_frame_is(f[0], "@@/t") && kn_gzt_frame_is(f[3], "gz.msgs.Twist"));
    struct kn_gzt_pubmsg back;
    ck_assert_int_eq(kn_gzt_pubmsg_parse(f, n, &back), 0);
    ck_assert(kn_gzt_frame_is(back.data, "DATA"));
    ck_assert_int_eq(kn_gzt_pubmsg_parse(f, 3, &back), KN_GZT_WIRE_EFRAMES);

    struct kn_gzt_ctlmsg cm = { kn_gzt_str("@@/t"), kn_gzt_str("P"), kn_gzt_str("N"),
                                kn_gzt_str("T"), true };
    n = kn_gzt_ctlmsg_build(&cm, f);
    ck_assert_uint_eq(n, 5);
    ck_assert(kn_gzt_frame_is(f[4], "6"));
    struct kn_gzt_ctlmsg cb;
    ck_assert_int_eq(kn_gzt_ctlmsg_parse(f, n, &cb), 0);
    ck_assert(cb.connect);
    f[4] = kn_gzt_str("7");
    ck_assert_int_eq(kn_gzt_ctlmsg_parse(f, n, &cb), 0);
    ck_assert(!cb.connect);
    f[4] = kn_gzt_str("66");
    ck_assert_int_eq(kn_gzt_ctlmsg_parse(f, n, &cb), KN_GZT_WIRE_EVALUE);

    struct kn_gzt_reqmsg rq = { kn_gzt_str("@@/world/w/control"),
                                kn_gzt_str("tcp://a:1"),
                                kn_gzt_str("ID"),
                                kn_gzt_str("N"),
                                kn_gzt_str("R"),
                                kn_gzt_str("X"),
                                kn_gzt_str("gz.msgs.WorldControl"),
                                kn_gzt_str("gz.msgs.Boolean") };
    n = kn_gzt_reqmsg_build(&rq, f);
    ck_assert_uint_eq(n, 8);
    struct kn_gzt_reqmsg rqb;
    ck_assert_int_eq(kn_gzt_reqmsg_parse(f, n, &rqb), 0);
    ck_assert(kn_gzt_frame_is(rqb.reply_id, "ID") &&
              kn_gzt_frame_is(rqb.rep_type, "gz.msgs.Boolean"));
    f[1] = kn_gzt_str("");
    ck_assert_int_eq(kn_gzt_reqmsg_parse(f, n, &rqb), KN_GZT_WIRE_EEMPTY);

    struct kn_gzt_repmsg rp = { kn_gzt_str("@@/world/w/control"), kn_gzt_str("N"), kn_gzt_str("R"),
                                kn_gzt_str("Y"), true };
    n = kn_gzt_repmsg_build(&rp, f);
    ck_assert(kn_gzt_frame_is(f[4], "1"));
    struct kn_gzt_repmsg rpb;
    ck_assert_int_eq(kn_gzt_repmsg_parse(f, n, &rpb), 0);
    ck_assert(rpb.ok && kn_gzt_frame_is(rpb.req_uuid, "R"));
}
END_TEST

/* Twist{linear (2) {x (2) = 0.5}, angular (3) {z (4) = 0.25}}. */
static const uint8_t twist[] = { 0x12, 0x09, 0x11, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f,
                                 0x1a, 0x09, 0x21, 0, 0, 0, 0, 0, 0, 0xd0, 0x3f };
/* Double{data (2) = -1.0}. */
static const uint8_t dbl[] = { 0x11, 0, 0, 0, 0, 0, 0, 0xf0, 0xbf };
/* WorldControl{pause (2) true, multi_step (4) 3, reset (5) {all (2) true}}. */
static const uint8_t wctl[] = { 0x10, 0x01, 0x20, 0x03, 0x2a, 0x02, 0x10, 0x01 };

START_TEST(messages_golden)
{
    uint8_t b[256];
    size_t n = kn_gzt_enc_twist(b, sizeof b, 0.5, 0.25);
    ck_assert_uint_eq(n, sizeof twist);
    ck_assert_mem_eq(b, twist, n);
    double lx, az;
    ck_assert_int_eq(kn_gzt_dec_twist(&arena, twist, sizeof twist, &lx, &az), 0);
    ck_assert(lx == 0.5 && az == 0.25);
    n = kn_gzt_enc_double(b, sizeof b, -1.0);
    ck_assert_uint_eq(n, sizeof dbl);
    ck_assert_mem_eq(b, dbl, n);
    struct kn_gzt_world_ctl c = { .pause = true, .multi_step = 3, .reset_all = true };
    n = kn_gzt_enc_world_control(b, sizeof b, &c);
    ck_assert_uint_eq(n, sizeof wctl);
    ck_assert_mem_eq(b, wctl, n);
    struct kn_gzt_world_ctl cb;
    ck_assert_int_eq(kn_gzt_dec_world_control(&arena, wctl, sizeof wctl, &cb), 0);
    ck_assert(cb.pause && cb.multi_step == 3 && cb.reset_all && !cb.step);
    ck_assert_uint_eq(kn_gzt_enc_twist(b, 4, 0.5, 0.25), 0);
    /* Boolean{data (2) true} */
    const uint8_t yes[] = { 0x10, 0x01 };
    bool v = false;
    ck_assert_int_eq(kn_gzt_dec_boolean(&arena, yes, sizeof yes, &v), 0);
    ck_assert(v);
}
END_TEST

START_TEST(poses_clock_joints)
{
    uint8_t b[512];
    const double pos[3] = { 1.5, -2.0, 0.1 },
                 q[4] = { 0, 0, 0.7071067811865476, 0.7071067811865476 };
    size_t n = kn_gzt_enc_pose(b, sizeof b, true, "kenaf", pos, q);
    ck_assert_uint_gt(n, 0);
    double p2[3], q2[4];
    int64_t st;
    ck_assert_int_eq(kn_gzt_dec_pose_of(&arena, b, n, true, "kenaf", p2, q2, &st), 1);
    ck_assert(p2[0] == 1.5 && p2[1] == -2.0 && q2[3] == q[3]);
    ck_assert_int_eq(kn_gzt_dec_pose_of(&arena, b, n, true, "other", p2, q2, &st), 0);
    n = kn_gzt_enc_pose(b, sizeof b, false, "kenaf", pos, q);
    ck_assert_int_eq(kn_gzt_dec_pose_of(&arena, b, n, false, "kenaf", p2, q2, &st), 1);
    const uint8_t bad[] = { 0x12, 0x7f };
    ck_assert_int_eq(kn_gzt_dec_pose_of(&arena, bad, sizeof bad, true, "kenaf", p2, q2, &st), -1);

    n = kn_gzt_enc_clock(b, sizeof b, 12500000000LL);
    int64_t t;
    ck_assert_int_eq(kn_gzt_dec_clock(&arena, b, n, &t), 0);
    ck_assert(t == 12500000000LL);
    /* Clock{sim (4) {sec (1) 2, nsec (2) 5}} written by hand */
    const uint8_t clk[] = { 0x22, 0x04, 0x08, 0x02, 0x10, 0x05 };
    ck_assert_int_eq(kn_gzt_dec_clock(&arena, clk, sizeof clk, &t), 0);
    ck_assert(t == 2000000005LL);

    const char *names[2] = { "front_left_flipper_joint", "rear_right_flipper_joint" };
    const double jp[2] = { 0.5, -0.25 };
    n = kn_gzt_enc_joints(b, sizeof b, "kenaf", names, 2, jp);
    const char *want[4] = { "x", "rear_right_flipper_joint", "front_left_flipper_joint", NULL };
    double got[4] = { 0 };
    uint32_t found;
    ck_assert_int_eq(kn_gzt_dec_joints(&arena, b, n, want, 4, got, &found, &st), 0);
    ck_assert_uint_eq(found, 0x6);
    ck_assert(got[1] == -0.25 && got[2] == 0.5);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "heartbeat", heartbeat_golden, 10, setup, NULL },
        { "subscribe", subscribe_golden, 10, setup, NULL },
        { "advertise", advertise_golden, 10, setup, NULL },
        { "service", service_advertise_round_trip, 10, setup, NULL },
        { "refusals", discovery_refusals, 10, setup, NULL },
        { "names", names, 10, setup, NULL },
        { "multipart", multipart_layouts, 10, setup, NULL },
        { "messages", messages_golden, 10, setup, NULL },
        { "feedback", poses_clock_joints, 10, setup, NULL },
    };
    return h_run_cases("gzt-codec", cases, sizeof cases / sizeof cases[0]);
}
