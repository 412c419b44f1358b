/* System tests of gazebo_standin itself, with clients the test plays with
 * raw sockets, written from Gazebo's transport (docs/gazebo.md) rather
 * than from the daemon:
 * the master greets with exactly version_init, topic_namepaces_init and
 * publishers_init; routes advertise/subscribe/unsubscribe/unadvertise and
 * namespaces to the right connections as gazebo::Master does; answers
 * requests; cleans up after a closed connection. The world's node serves a
 * "sub" with bare messages and connects to a publisher the master names,
 * opening with its own "sub". */
#include <check.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gzc_harness.h"
#include "harness_suite.h"

static struct h_standin sim;
static uint8_t buf[1 << 20];
static uint8_t amem[1 << 20];
static struct kn_pbarena arena;
static const struct kn_gzc_stamp ST = { 1700000000, 0 };

static void setup_master(void)
{
    h_setup();
    kn_pbarena_init(&arena, amem, sizeof amem);
    const char *extra[] = { "--no-world", "--version", "gazebo 10.1", NULL };
    gzc_sim_start(&sim, 0, "master", extra);
}

static void setup_world(void)
{
    h_setup();
    kn_pbarena_init(&arena, amem, sizeof amem);
    const char *extra[] = { "--version", "gazebo 10.1", NULL };
    gzc_sim_start(&sim, 0, "world", extra);
    ck_assert(h_log_wait(sim.log, "world_ready", 1, H_LONG_MS));
}

static void expect(int fd, const char *type, struct kn_gzc_packet *pk)
{
    ck_assert_msg(gzc_read_packet(fd, &arena, buf, sizeof buf, pk, H_LONG_MS), "no %s", type);
    ck_assert_str_eq(pk->type, type);
}

/* Connects and reads the greeting; returns the fd and the publishers. */
static int client(size_t *npub, const char *const *want_ns, size_t nns)
{
    int fd = h_tcp_connect(sim.port);
    struct kn_gzc_packet pk;
    expect(fd, KN_GZC_PKT_VERSION_INIT, &pk);
    Gazebo__Msgs__GzString *v = kn_gzc_dec_string(&arena, pk.data, pk.len);
    ck_assert_ptr_nonnull(v);
    ck_assert_str_eq(v->data, "gazebo 10.1");
    expect(fd, KN_GZC_PKT_NAMESPACES_INIT, &pk);
    Gazebo__Msgs__GzStringV *ns = kn_gzc_dec_strings(&arena, pk.data, pk.len);
    ck_assert_ptr_nonnull(ns);
    ck_assert_uint_eq(ns->n_data, nns);
    for (size_t i = 0; i < nns; i++)
        ck_assert_str_eq(ns->data[i], want_ns[i]);
    expect(fd, KN_GZC_PKT_PUBLISHERS_INIT, &pk);
    Gazebo__Msgs__Publishers *p = kn_gzc_dec_publishers(&arena, pk.data, pk.len);
    ck_assert_ptr_nonnull(p);
    *npub = p->n_publisher;
    return fd;
}

static void send(int fd, size_t n)
{
    ck_assert_uint_gt(n, 0);
    h_write_all(fd, buf, n);
}

static bool silent(int fd, int ms)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return poll(&p, 1, ms) == 0;
}

static void expect_publish(int fd, const char *type, const char *topic, uint32_t port)
{
    struct kn_gzc_packet pk;
    expect(fd, type, &pk);
    Gazebo__Msgs__Publish *p = kn_gzc_dec_publish(&arena, pk.data, pk.len);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p->topic, topic);
    ck_assert_str_eq(p->host, "127.0.0.1");
    ck_assert_uint_eq(p->port, port);
}

START_TEST(master_routes_like_gazebo)
{
    size_t np;
    int a = client(&np, NULL, 0);
    ck_assert_uint_eq(np, 0);
    /* a namespace goes to everyone */
    send(a, kn_gzc_enc_string(buf, sizeof buf, ST, KN_GZC_PKT_REGISTER_NAMESPACE, "w"));
    struct kn_gzc_packet pk;
    expect(a, KN_GZC_PKT_NAMESPACE_ADD, &pk);
    /* A subscribes before anyone publishes: nothing comes back yet */
    send(a, kn_gzc_enc_subscribe(buf, sizeof buf, ST, KN_GZC_PKT_SUBSCRIBE, "/gazebo/w/t",
                                 "127.0.0.1", 1111, "gazebo.msgs.Vector2d", false));
    ck_assert(silent(a, 200));

    const char *ns[] = { "w" };
    int b = client(&np, ns, 1);
    send(b, kn_gzc_enc_publish(buf, sizeof buf, ST, KN_GZC_PKT_ADVERTISE, "/gazebo/w/t",
                               "gazebo.msgs.Vector2d", "127.0.0.1", 2222));
    expect_publish(b, KN_GZC_PKT_PUBLISHER_ADD, "/gazebo/w/t", 2222);
    /* A: publisher_add (to all) and publisher_advertise (a subscriber) */
    expect_publish(a, KN_GZC_PKT_PUBLISHER_ADD, "/gazebo/w/t", 2222);
    expect_publish(a, KN_GZC_PKT_PUBLISHER_ADVERTISE, "/gazebo/w/t", 2222);

    /* C sees the publisher in its greeting and gets publisher_subscribe */
    int c = client(&np, ns, 1);
    ck_assert_uint_eq(np, 1);
    send(c, kn_gzc_enc_subscribe(buf, sizeof buf, ST, KN_GZC_PKT_SUBSCRIBE, "/gazebo/w/t",
                                 "127.0.0.1", 3333, "gazebo.msgs.Vector2d", true));
    expect_publish(c, KN_GZC_PKT_PUBLISHER_SUBSCRIBE, "/gazebo/w/t", 2222);

    /* requests */
    send(a, kn_gzc_enc_request(buf, sizeof buf, ST, 7, "get_topics", NULL));
    expect(a, "topic_list", &pk);
    Gazebo__Msgs__GzStringV *tl = kn_gzc_dec_strings(&arena, pk.data, pk.len);
    ck_assert_uint_eq(tl->n_data, 1);
    ck_assert_str_eq(tl->data[0], "/gazebo/w/t");
    send(a, kn_gzc_enc_request(buf, sizeof buf, ST, 8, "topic_info", "/gazebo/w/t"));
    expect(a, "topic_info_response", &pk);
    Gazebo__Msgs__TopicInfo *ti = (Gazebo__Msgs__TopicInfo *)kn_pbarena_unpack(
        &arena, &gazebo__msgs__topic_info__descriptor, pk.data, pk.len);
    ck_assert_ptr_nonnull(ti);
    ck_assert_str_eq(ti->msg_type, "gazebo.msgs.Vector2d");
    ck_assert_uint_eq(ti->n_publisher, 1);
    ck_assert_uint_eq(ti->n_subscriber, 2);
    send(a, kn_gzc_enc_request(buf, sizeof buf, ST, 9, "get_publishers", NULL));
    expect(a, "publisher_list", &pk);
    ck_assert_uint_eq(kn_gzc_dec_publishers(&arena, pk.data, pk.len)->n_publisher, 1);

    /* C unsubscribes: the publisher's connection hears of it */
    send(c, kn_gzc_enc_subscribe(buf, sizeof buf, ST, KN_GZC_PKT_UNSUBSCRIBE, "/gazebo/w/t",
                                 "127.0.0.1", 3333, "gazebo.msgs.Vector2d", true));
    expect(b, KN_GZC_PKT_UNSUBSCRIBE, &pk);
    Gazebo__Msgs__Subscribe *s = kn_gzc_dec_subscribe(&arena, pk.data, pk.len);
    ck_assert_uint_eq(s->port, 3333);

    /* B goes away: its publisher is removed, subscribers are told */
    close(b);
    expect_publish(a, KN_GZC_PKT_UNADVERTISE, "/gazebo/w/t", 2222);
    expect_publish(a, KN_GZC_PKT_PUBLISHER_DEL, "/gazebo/w/t", 2222);
    ck_assert(
        gzc_expect_packet(c, &arena, buf, sizeof buf, KN_GZC_PKT_PUBLISHER_DEL, &pk, H_LONG_MS));
    ck_assert(silent(c, 200)); /* C no longer subscribes: no unadvertise */
    int d = client(&np, ns, 1);
    ck_assert_uint_eq(np, 0);
    close(a);
    close(c);
    close(d);
    ck_assert_int_eq(h_log_count(sim.log, "bad_"), 0);
}
END_TEST

START_TEST(world_serves_and_subscribes)
{
    size_t np;
    const char *ns[] = { "default", "default/kenaf" };
    int m = client(&np, ns, 2);
    ck_assert_uint_eq(np, 3); /* world_stats, pose/info, tracks_speed */

    /* subscribe to world_stats; open the data link the master names */
    send(m, kn_gzc_enc_subscribe(buf, sizeof buf, ST, KN_GZC_PKT_SUBSCRIBE,
                                 "/gazebo/default/world_stats", "127.0.0.1", 1,
                                 KN_GZC_TYPE_WORLD_STATS, false));
    struct kn_gzc_packet pk;
    expect(m, KN_GZC_PKT_PUBLISHER_SUBSCRIBE, &pk);
    Gazebo__Msgs__Publish *p = kn_gzc_dec_publish(&arena, pk.data, pk.len);
    ck_assert_str_eq(p->msg_type, KN_GZC_TYPE_WORLD_STATS);
    int port = (int)p->port;
    int dfd = h_tcp_connect(port);
    send(dfd, kn_gzc_enc_subscribe(buf, sizeof buf, ST, KN_GZC_PKT_SUB,
                                   "/gazebo/default/world_stats", "127.0.0.1",
                                   (uint32_t)h_local_port(dfd), KN_GZC_TYPE_WORLD_STATS, false));
    double t_prev = -1;
    for (int i = 0; i < 3; i++) {
        long n = gzc_read_frame(dfd, buf, sizeof buf, H_LONG_MS);
        ck_assert_int_gt(n, 0);
        kn_pbarena_reset(&arena);
        Gazebo__Msgs__WorldStatistics *w = kn_gzc_dec_world_stats(&arena, buf, (size_t)n);
        ck_assert_ptr_nonnull(w); /* a bare message, no Packet around it */
        double t = (double)kn_gzc_time_ns(w->sim_time->sec, w->sim_time->nsec) / 1e9;
        ck_assert_double_gt(t, t_prev);
        ck_assert(!w->paused);
        t_prev = t;
    }

    /* publish cmd_vel_twist: the world connects to us and says "sub" */
    int pport = 0, plfd = h_tcp_listen(&pport);
    send(m, kn_gzc_enc_publish(buf, sizeof buf, ST, KN_GZC_PKT_ADVERTISE,
                               "/gazebo/default/kenaf/cmd_vel_twist", KN_GZC_TYPE_TWIST,
                               "127.0.0.1", (uint32_t)pport));
    int wfd = h_tcp_accept(plfd, H_LONG_MS);
    ck_assert_int_ge(wfd, 0);
    ck_assert(gzc_read_packet(wfd, &arena, buf, sizeof buf, &pk, H_LONG_MS));
    ck_assert_str_eq(pk.type, KN_GZC_PKT_SUB);
    Gazebo__Msgs__Subscribe *s = kn_gzc_dec_subscribe(&arena, pk.data, pk.len);
    ck_assert_str_eq(s->topic, "/gazebo/default/kenaf/cmd_vel_twist");
    ck_assert_str_eq(s->msg_type, KN_GZC_TYPE_TWIST);
    ck_assert_int_eq((int)s->port, h_peer_port(wfd));
    size_t n = kn_gzc_enc_twist(buf, sizeof buf, 0.25, -0.5);
    h_write_all(wfd, buf, n);
    /* the plugin's formula: L = v + w s / 2 e, R = v - w s / 2 e (s 0.23, e 0.5) */
    static struct gzc_twist tw[64];
    int k = -1;
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    while (k < 0 && h_now_us() < end) {
        int cnt = gzc_log_twists(sim.log, tw, 64);
        for (int i = 0; i < cnt; i++)
            if (tw[i].lin == 0.25 && tw[i].ang == -0.5)
                k = i;
        if (k < 0)
            h_sleep_ms(10);
    }
    ck_assert_int_ge(k, 0);
    ck_assert_double_eq_tol(tw[k].belts[0], 0.135, 1e-12);
    ck_assert_double_eq_tol(tw[k].belts[1], 0.365, 1e-12);
    close(wfd);
    close(plfd);
    close(dfd);
    close(m);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "master", master_routes_like_gazebo, 60, setup_master, h_teardown },
        { "world", world_serves_and_subscribes, 60, setup_world, h_teardown },
    };
    return h_run_cases("gazebo_standin against raw clients", cases, sizeof cases / sizeof cases[0]);
}
