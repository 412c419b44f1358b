/* System tests of the gazebo backend against peers the test plays itself
 * with raw sockets: a master that sends garbage, a master that follows the
 * protocol but names publishers that misbehave, and subscribers that
 * connect to the daemon's data server. Checks the daemon's side of the
 * wire byte for byte (advertise, subscribe, "sub" naming the local end of
 * its own connection, latching), and that every bad frame or message is
 * counted and survived: the link is reset, never a crash. */
#include <check.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gzc_harness.h"
#include "harness_suite.h"

static struct h_daemon simd;
static struct h_udp ctl;
static uint8_t buf[1 << 20];
static uint8_t amem[1 << 20];
static struct kn_pbarena arena;
static int lfd = -1, mport;

#define STAT(path) h_stat(&simd, "robots.0.backend." path)

static const char *robots(int port)
{
    static char b[1024];
    snprintf(b, sizeof b,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":\"gazebo\","
             "\"address\":\"127.0.0.1:%d\",\"reconnect_max_s\":0.1,"
             "\"flippers\":{\"FL\":{\"joint\":\"fl_joint\"}},"
             "\"gazebo\":{\"model\":\"kenaf\",\"tracks_separation_m\":0.23,"
             "\"max_angular_speed_rad_s\":8}}}]",
             port);
    return b;
}

static void setup(void)
{
    h_setup();
    kn_pbarena_init(&arena, amem, sizeof amem);
    mport = 0;
    lfd = h_tcp_listen(&mport);
    h_daemon_start(&simd, robots(mport));
    h_udp_open(&ctl, simd.port[0]);
}

static void teardown(void)
{
    h_udp_close(&ctl);
    if (lfd >= 0)
        close(lfd);
    lfd = -1;
    h_teardown();
}

/* The peer closes the connection within the deadline. */
static bool closed_by_peer(int fd, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        int left = (int)((int64_t)(end - h_now_us()) / 1000);
        if (left <= 0)
            return false;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, left) <= 0)
            return false;
        char c[4096];
        ssize_t k = read(fd, c, sizeof c);
        if (k <= 0)
            return true;
    }
}

static const struct kn_gzc_stamp ST = { 1700000000, 0 };

static void send_init(int fd, const char *const *ns, size_t nns)
{
    uint8_t f[4096];
    size_t n = kn_gzc_enc_string(f, sizeof f, ST, KN_GZC_PKT_VERSION_INIT, "gazebo 9.0");
    h_write_all(fd, f, n);
    n = kn_gzc_enc_strings(f, sizeof f, ST, KN_GZC_PKT_NAMESPACES_INIT, ns, nns);
    h_write_all(fd, f, n);
    Gazebo__Msgs__Publishers none = GAZEBO__MSGS__PUBLISHERS__INIT;
    n = kn_gzc_encode_packet(f, sizeof f, ST, KN_GZC_PKT_PUBLISHERS_INIT, &none.base);
    h_write_all(fd, f, n);
}

START_TEST(garbage_masters)
{
    static const struct {
        const char *bytes;
        size_t len;
        const char *why;
    } cases[] = {
        { "zzzzzzzz", 8, "frame header is not 8 hex digits" },
        { "00000000", 8, "frame header says 0 bytes" },
        { "7fffffff", 8, "frame longer than the limit" },
        { "00000003abc", 11, "greeting is not a Packet" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int fd = h_tcp_accept(lfd, H_LONG_MS);
        ck_assert_msg(fd >= 0, "kenaf-simd did not (re)connect");
        h_write_all(fd, cases[i].bytes, cases[i].len);
        ck_assert_msg(closed_by_peer(fd, H_LONG_MS), "link not reset after: %s", cases[i].why);
        close(fd);
        const char *e = h_stat_str(&simd, "robots.0.backend.gazebo.last_error");
        ck_assert_msg(strstr(e, cases[i].why) != NULL, "last_error \"%s\"", e);
    }
    /* a well-framed Packet of the wrong kind first: not a Gazebo master */
    int fd = h_tcp_accept(lfd, H_LONG_MS);
    ck_assert_int_ge(fd, 0);
    uint8_t f[256];
    Gazebo__Msgs__Publishers none = GAZEBO__MSGS__PUBLISHERS__INIT;
    size_t n = kn_gzc_encode_packet(f, sizeof f, ST, KN_GZC_PKT_PUBLISHERS_INIT, &none.base);
    h_write_all(fd, f, n);
    ck_assert(closed_by_peer(fd, H_LONG_MS));
    close(fd);
    ck_assert(strstr(h_stat_str(&simd, "robots.0.backend.gazebo.last_error"),
                     "not a Gazebo master") != NULL);
    ck_assert_double_eq(STAT("gazebo.master.bad_frames"), 3);
    ck_assert_double_ge(STAT("gazebo.master.bad_packets"), 1);
    ck_assert_double_eq(STAT("up"), 0);
    /* the robot side is alive and says the backend is down */
    struct kn_krp_status s = h_status(&ctl);
    ck_assert_uint_eq(s.flags & KN_KRP_ST_BACKEND_UP, 0);
}
END_TEST

struct daemon_view {
    char host[64];
    int data_port;
    int adv, subs;
    bool latch_poses, latch_stats;
};

/* Reads the daemon's advertise and subscribe packets after the init. */
static void read_announcements(int fd, struct daemon_view *v)
{
    memset(v, 0, sizeof *v);
    static const char *const want_adv[3][2] = {
        { "/gazebo/default/kenaf/cmd_vel_twist", KN_GZC_TYPE_TWIST },
        { "/gazebo/default/kenaf/joint_cmd", KN_GZC_TYPE_JOINT_CMD },
        { "/gazebo/default/world_control", KN_GZC_TYPE_WORLD_CONTROL },
    };
    static const char *const want_sub[3][2] = {
        { "/gazebo/default/world_stats", KN_GZC_TYPE_WORLD_STATS },
        { "/gazebo/default/pose/info", KN_GZC_TYPE_POSES_STAMPED },
        { "/gazebo/default/kenaf/tracks_speed", KN_GZC_TYPE_VECTOR2D },
    };
    while (v->adv + v->subs < 6) {
        struct kn_gzc_packet pk;
        ck_assert_msg(gzc_read_packet(fd, &arena, buf, sizeof buf, &pk, H_LONG_MS),
                      "daemon sent %d advertise, %d subscribe", v->adv, v->subs);
        if (strcmp(pk.type, KN_GZC_PKT_ADVERTISE) == 0) {
            Gazebo__Msgs__Publish *p = kn_gzc_dec_publish(&arena, pk.data, pk.len);
            ck_assert_ptr_nonnull(p);
            bool known = false;
            for (int i = 0; i < 3; i++)
                known |= !strcmp(p->topic, want_adv[i][0]) && !strcmp(p->msg_type, want_adv[i][1]);
            ck_assert_msg(known, "advertised %s %s", p->topic, p->msg_type);
            snprintf(v->host, sizeof v->host, "%s", p->host);
            v->data_port = (int)p->port;
            v->adv++;
        } else {
            ck_assert_str_eq(pk.type, KN_GZC_PKT_SUBSCRIBE);
            Gazebo__Msgs__Subscribe *s = kn_gzc_dec_subscribe(&arena, pk.data, pk.len);
            ck_assert_ptr_nonnull(s);
            bool known = false;
            for (int i = 0; i < 3; i++)
                known |= !strcmp(s->topic, want_sub[i][0]) && !strcmp(s->msg_type, want_sub[i][1]);
            ck_assert_msg(known, "subscribed %s %s", s->topic, s->msg_type);
            ck_assert(s->has_latching);
            if (strstr(s->topic, "pose/info"))
                v->latch_poses = s->latching;
            if (strstr(s->topic, "world_stats"))
                v->latch_stats = s->latching;
            v->subs++;
        }
    }
    ck_assert_str_eq(v->host, "127.0.0.1");
    ck_assert_int_gt(v->data_port, 0);
    ck_assert(v->latch_poses);
    ck_assert(!v->latch_stats);
}

static void send_publish(int fd, const char *type, const char *topic, const char *msg_type,
                         int port)
{
    uint8_t f[1024];
    size_t n =
        kn_gzc_enc_publish(f, sizeof f, ST, type, topic, msg_type, "127.0.0.1", (uint32_t)port);
    h_write_all(fd, f, n);
}

static void expect_sub(int pfd, const char *topic, const char *type)
{
    struct kn_gzc_packet pk;
    ck_assert(gzc_read_packet(pfd, &arena, buf, sizeof buf, &pk, H_LONG_MS));
    ck_assert_str_eq(pk.type, KN_GZC_PKT_SUB);
    Gazebo__Msgs__Subscribe *s = kn_gzc_dec_subscribe(&arena, pk.data, pk.len);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s->topic, topic);
    ck_assert_str_eq(s->msg_type, type);
    /* the local end of this very data connection, as Gazebo does */
    ck_assert_str_eq(s->host, "127.0.0.1");
    ck_assert_int_eq((int)s->port, h_peer_port(pfd));
}

static void send_stats(int pfd, int32_t sec, uint64_t iterations)
{
    Gazebo__Msgs__Time a = GAZEBO__MSGS__TIME__INIT, z = GAZEBO__MSGS__TIME__INIT;
    Gazebo__Msgs__WorldStatistics m = GAZEBO__MSGS__WORLD_STATISTICS__INIT;
    a.sec = sec;
    m.sim_time = &a;
    m.pause_time = &z;
    m.real_time = &z;
    m.iterations = iterations;
    uint8_t f[256];
    size_t n = kn_gzc_encode_msg(f, sizeof f, &m.base);
    h_write_all(pfd, f, n);
}

START_TEST(protocol_master_and_bad_publishers)
{
    int fd = h_tcp_accept(lfd, H_LONG_MS);
    ck_assert_int_ge(fd, 0);
    const char *ns[] = { "default", "default/kenaf" };
    send_init(fd, ns, 2);
    struct daemon_view v;
    read_announcements(fd, &v);
    ck_assert(h_wait_stat(&simd, "robots.0.flags.BACKEND_UP", 1, H_LONG_MS));
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.backend.gazebo.version"), "gazebo 9.0");

    /* a publisher of world_stats: the daemon connects and says "sub" */
    int pport = 0, plfd = h_tcp_listen(&pport);
    send_publish(fd, KN_GZC_PKT_PUBLISHER_SUBSCRIBE, "/gazebo/default/world_stats",
                 KN_GZC_TYPE_WORLD_STATS, pport);
    int pfd = h_tcp_accept(plfd, H_LONG_MS);
    ck_assert_int_ge(pfd, 0);
    expect_sub(pfd, "/gazebo/default/world_stats", KN_GZC_TYPE_WORLD_STATS);
    send_stats(pfd, 5, 5000);
    ck_assert(
        h_wait_stat(&simd, "robots.0.backend.gazebo.world_stats.iterations", 5000, H_LONG_MS));
    ck_assert(h_wait_stat_eq(&simd, "robots.0.flags.STALE", 0, H_LONG_MS));

    /* a well-framed message that is no WorldStatistics: counted, link kept */
    h_write_all(pfd, "00000002\xff\xff", 10);
    ck_assert(h_wait_stat(&simd, "robots.0.backend.gazebo.data.bad_messages", 1, H_LONG_MS));
    send_stats(pfd, 6, 6000);
    ck_assert(
        h_wait_stat(&simd, "robots.0.backend.gazebo.world_stats.iterations", 6000, H_LONG_MS));

    /* a bad frame: counted, the link is reset and opened again */
    h_write_all(pfd, "xyz12345", 8);
    ck_assert(closed_by_peer(pfd, H_LONG_MS));
    close(pfd);
    ck_assert_double_ge(STAT("gazebo.data.bad_frames"), 1);
    pfd = h_tcp_accept(plfd, H_LONG_MS);
    ck_assert_msg(pfd >= 0, "data link not opened again");
    expect_sub(pfd, "/gazebo/default/world_stats", KN_GZC_TYPE_WORLD_STATS);
    send_stats(pfd, 7, 7000);
    ck_assert(
        h_wait_stat(&simd, "robots.0.backend.gazebo.world_stats.iterations", 7000, H_LONG_MS));

    /* publishers the daemon must never "sub": a topic it did not subscribe
     * to, and its topic under another type */
    int oport = 0, olfd = h_tcp_listen(&oport);
    send_publish(fd, KN_GZC_PKT_PUBLISHER_ADVERTISE, "/gazebo/default/secret", "gazebo.msgs.Any",
                 oport);
    send_publish(fd, KN_GZC_PKT_PUBLISHER_SUBSCRIBE, "/gazebo/default/world_stats",
                 KN_GZC_TYPE_TWIST, oport);
    ck_assert(
        h_wait_stat(&simd, "robots.0.backend.gazebo.master.publishers_refused", 1, H_LONG_MS));
    ck_assert(h_wait_stat(&simd, "robots.0.backend.gazebo.master.type_mismatch", 1, H_LONG_MS));
    ck_assert_int_eq(h_tcp_accept(olfd, 300), -1);

    /* a subscriber on the daemon's data server gets exact Twists */
    int sfd = h_tcp_connect(v.data_port);
    uint8_t f[1024];
    size_t n =
        kn_gzc_enc_subscribe(f, sizeof f, ST, KN_GZC_PKT_SUB, "/gazebo/default/kenaf/cmd_vel_twist",
                             "127.0.0.1", (uint32_t)h_local_port(sfd), KN_GZC_TYPE_TWIST, false);
    h_write_all(sfd, f, n);
    ck_assert(h_wait_stat(&simd, "robots.0.backend.gazebo.topics.cmd.subscribers", 1, H_LONG_MS));
    h_crawler(&ctl, 0, 0, 400, -200);
    long k;
    Gazebo__Msgs__Twist *tw = NULL;
    struct kn_conv_table conv;
    gzc_test_table(&conv);
    double belts[2] = { 0.4, -0.2 }, lin, ang;
    kn_conv_belts_to_twist(&conv, belts, &lin, &ang);
    do { /* skip a set-point replayed from before */
        k = gzc_read_frame(sfd, buf, sizeof buf, H_LONG_MS);
        ck_assert_int_gt(k, 0);
        kn_pbarena_reset(&arena);
        tw = kn_gzc_dec_twist(&arena, buf, (size_t)k);
        ck_assert_ptr_nonnull(tw);
    } while (tw->linear->x != lin);
    ck_assert_double_eq(tw->angular->z, ang);
    ck_assert_double_eq(tw->linear->y, 0);
    ck_assert_double_eq(tw->angular->x, 0);

    /* "sub" for a topic the daemon does not publish, or garbage: closed */
    int bfd = h_tcp_connect(v.data_port);
    n = kn_gzc_enc_subscribe(f, sizeof f, ST, KN_GZC_PKT_SUB, "/gazebo/default/world_stats",
                             "127.0.0.1", 1, KN_GZC_TYPE_WORLD_STATS, false);
    h_write_all(bfd, f, n);
    ck_assert(closed_by_peer(bfd, H_LONG_MS));
    close(bfd);
    bfd = h_tcp_connect(v.data_port);
    h_write_all(bfd, "not a frame at all", 18);
    ck_assert(closed_by_peer(bfd, H_LONG_MS));
    close(bfd);
    ck_assert_double_ge(STAT("gazebo.data.subscribers_bad"), 2);

    /* the publisher goes: its data link closes and stays closed */
    send_publish(fd, KN_GZC_PKT_UNADVERTISE, "/gazebo/default/world_stats", KN_GZC_TYPE_WORLD_STATS,
                 pport);
    ck_assert(closed_by_peer(pfd, H_LONG_MS));
    close(pfd);
    ck_assert_int_eq(h_tcp_accept(plfd, 500), -1);

    /* the master goes: the daemon reports the backend down and comes back */
    close(fd);
    ck_assert(h_wait_stat_eq(&simd, "robots.0.flags.BACKEND_UP", 0, H_LONG_MS));
    ck_assert(closed_by_peer(sfd, H_LONG_MS)); /* its data server went with it */
    close(sfd);
    fd = h_tcp_accept(lfd, H_LONG_MS);
    ck_assert_int_ge(fd, 0);
    close(fd);
    close(plfd);
    close(olfd);
}
END_TEST

START_TEST(late_namespace)
{
    /* a master without worlds yet: the daemon waits for topic_namespace_add */
    int fd = h_tcp_accept(lfd, H_LONG_MS);
    ck_assert_int_ge(fd, 0);
    send_init(fd, NULL, 0);
    h_sleep_ms(200);
    ck_assert_double_eq(STAT("up"), 0);
    uint8_t f[256];
    size_t n = kn_gzc_enc_string(f, sizeof f, ST, KN_GZC_PKT_NAMESPACE_ADD, "arena");
    h_write_all(fd, f, n);
    struct kn_gzc_packet pk;
    ck_assert(gzc_expect_packet(fd, &arena, buf, sizeof buf, KN_GZC_PKT_ADVERTISE, &pk, H_LONG_MS));
    Gazebo__Msgs__Publish *p = kn_gzc_dec_publish(&arena, pk.data, pk.len);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(strncmp(p->topic, "/gazebo/arena/", 14), 0);
    ck_assert(h_wait_stat(&simd, "robots.0.flags.BACKEND_UP", 1, H_LONG_MS));
    close(fd);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gazebo backend against raw peers");
    TCase *tc = tcase_create("robust");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, garbage_masters);
    tcase_add_test(tc, protocol_master_and_bad_publishers);
    tcase_add_test(tc, late_namespace);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
