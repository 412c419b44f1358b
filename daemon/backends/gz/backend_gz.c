/* The "gz" backend: kenaf-simd as a gz-transport node (modern Gazebo,
 * gz-sim; docs/gz.md). No connection of the link's: the node takes part in
 * discovery (UDP multicast, one socket for topics and one for services),
 * publishes on a ZeroMQ PUB socket, subscribes with a SUB socket, and calls
 * the world's control service through a ROUTER pair, all on the daemon's
 * libuv loop (uv_poll on the sockets' descriptors, one tick timer).
 *
 * The world counts as there while the process that publishes
 * /world/<W>/clock is heard (any discovery message, heartbeats every
 * second) and has not said BYE; it is ready for commands once the model's
 * topics can be published in the world's type family. Then the link calls
 * start and re-applies the set-points. The codec (protocols/gzt) knows the
 * bytes; this file only moves them. */
#include "backend_gz.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <zmq.h>

#include "gzt_disc.h"
#include "gzt_wire.h"
#include "krp.h"
#include "log.h"

#define TICK_MS 50
#define RESEND_MS 150 /* a new subscriber gets the latest set-point after this */
#define FRAME_MAX 65536
#define ARENA_BYTES (1u << 20)
#define LOOK_MS 1500 /* after the world came: does it have the model? */
/* A cmd_vel listener whose model sent no pose for this long is no model:
 * the world's pose publishers send every iteration or at 60 Hz, so the
 * first pose follows our subscription within one discovery heartbeat
 * (1 s); 2 s is that with a margin. */
#define POSE_MS 2000
#define SUBS_MAX 16 /* registered subscribers remembered per topic */

enum { T_CMD_VEL, T_CMD_POS0, T_CLOCK = T_CMD_POS0 + KN_NFLIPPERS, T_POSE, T_JOINTS, T_N };

struct gz_topic {
    char name[256];            /* /model/kenaf/cmd_vel */
    char fqn[KN_GZT_NAME_MAX]; /* @/partition@/model/kenaf/cmd_vel */
    const char *type_short;    /* "Twist" */
    bool publish;
    /* subscribed: the publisher we listen to */
    bool have_pub;
    char pub_addr[KN_GZT_NAME_MAX], pub_puuid[KN_GZT_UUID_MAX];
    bool pose_vector; /* T_POSE: Pose_V (else Pose) */
    /* published: the latest message, for subscribers that join later */
    uint8_t last[256];
    size_t last_len;
    uint64_t resend_at_ms;
    /* published: the process of each registered subscriber (NEW_CONNECTION
     * adds, END_CONNECTION and BYE remove; the oldest goes when full) */
    char sub_puuid[SUBS_MAX][KN_GZT_UUID_MAX];
    unsigned subscribers;
    uint64_t msgs, bad;
};

struct gzb {
    struct gzb *next_gz; /* the registry, for kn_gzsim_command */
    struct kn_link *link;
    uv_loop_t *loop;
    char robot[KN_CFG_NAME_LEN + 1];
    char model[64], world[128], partition[128], ip[64];
    char joint[KN_NFLIPPERS][64];
    int family; /* -1 until known */
    bool family_fixed;
    struct kn_conv_table conv;
    char puuid[40], nuuid[40], resp_id[40];
    unsigned handles;
    bool destroyed;

    void *zctx, *zpub, *zsub, *zreq, *zresp;
    char pub_addr[128], resp_addr[128];
    int udp[2]; /* message and service discovery */
    uv_poll_t udp_poll[2], sub_poll, resp_poll;
    uv_timer_t tick;
    uint64_t next_beat_ms;

    struct gz_topic topic[T_N];
    char ctl_fqn[KN_GZT_NAME_MAX];
    bool have_srv;
    char srv_addr[KN_GZT_NAME_MAX], srv_id[KN_GZT_UUID_MAX], srv_puuid[KN_GZT_UUID_MAX];
    char srv_req_type[KN_GZT_NAME_MAX], srv_rep_type[KN_GZT_NAME_MAX];
    char req_connected[KN_GZT_NAME_MAX];

    /* the world */
    char world_puuid[KN_GZT_UUID_MAX];
    uint64_t world_heard_ms;
    bool world_there;
    bool wanted; /* the link called start */
    bool live;   /* ready since live_ms */
    uint64_t live_ms;
    bool model_seen;      /* a pose of the model since the world came */
    uint64_t model_ms;    /* when its first pose came */
    uint64_t listener_ms; /* when the world's process took cmd_vel, 0: it has not */
    unsigned lacks;       /* KN_LINK_NO_* told to the link */
    bool warned_no_flippers;
    bool warned_family; /* this world's family mismatch was logged */
    uint64_t no_model_episodes, no_flippers_episodes, no_drive_episodes, poses_without_model;
    uint64_t family_mismatch;

    struct kn_gzsim_fb fb;
    struct kn_pbarena arena;
    void *arena_mem;
    uint8_t dbuf[FRAME_MAX];

    uint64_t disc_in, disc_bad, disc_version, disc_out, disc_send_errors;
    uint64_t frames_in, frames_bad, unknown_topic, type_mismatch;
    uint64_t cmds, world_arrivals, world_losses, ctl_sent, ctl_ok, ctl_refused, ctl_bad;
};

/* Every gz robot by name, for the stats socket's "world" command. */
static struct gzb *registry;

static uint64_t now_ms(struct gzb *b)
{
    return uv_now(b->loop);
}

static void random_uuid(char out[40])
{
    uint8_t r[16] = { 0 };
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, r, sizeof r) != (ssize_t)sizeof r)
            memset(r, 0, sizeof r);
        close(fd);
    }
    uint64_t t = uv_hrtime();
    for (int i = 0; i < 8; i++)
        r[i] ^= (uint8_t)(t >> (8 * i)); /* differs even without /dev/urandom */
    r[6] = (uint8_t)((r[6] & 0x0f) | 0x40);
    r[8] = (uint8_t)((r[8] & 0x3f) | 0x80);
    snprintf(out, 40, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", r[0],
             r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
             r[14], r[15]);
}

/* The library's rules: the config, else GZ_*, else IGN_*, else a default. */
static void from_env(char *out, size_t cap, const char *cfg, const char *gz, const char *ign)
{
    const char *v = cfg && cfg[0] ? cfg : getenv(gz);
    if (!v || !v[0])
        v = getenv(ign);
    snprintf(out, cap, "%s", v ? v : "");
}

static void default_partition(char *out, size_t cap)
{
    char host[128] = "";
    gethostname(host, sizeof host - 1);
    struct passwd *pw = getpwuid(getuid());
    snprintf(out, cap, "%s:%s", host, pw && pw->pw_name ? pw->pw_name : "");
}

/* The address of the interface the default route leaves by. */
static void default_ip(char *out, size_t cap)
{
    snprintf(out, cap, "127.0.0.1");
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9) };
    inet_pton(AF_INET, "192.0.2.1", &a.sin_addr); /* TEST-NET-1: never sent to */
    socklen_t al = sizeof a;
    if (connect(s, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(s, (struct sockaddr *)&a, &al) == 0)
        inet_ntop(AF_INET, &a.sin_addr, out, (socklen_t)cap);
    close(s);
}

/* ---- discovery ------------------------------------------------------------ */

static void disc_send(struct gzb *b, int which, struct kn_gzt_disc *d)
{
    uint8_t buf[2048];
    d->version = KN_GZT_WIRE_VERSION;
    snprintf(d->process_uuid, sizeof d->process_uuid, "%s", b->puuid);
    size_t n = kn_gzt_disc_encode(buf, sizeof buf, d);
    struct sockaddr_in to = { .sin_family = AF_INET };
    to.sin_port = htons(which ? KN_GZT_SRV_DISC_PORT : KN_GZT_MSG_DISC_PORT);
    inet_pton(AF_INET, KN_GZT_MCAST_GROUP, &to.sin_addr);
    if (n == 0 || sendto(b->udp[which], buf, n, 0, (struct sockaddr *)&to, sizeof to) != (ssize_t)n)
        b->disc_send_errors++;
    else
        b->disc_out++;
}

static void send_simple(struct gzb *b, int which, uint32_t type, const char *sub_topic)
{
    struct kn_gzt_disc d;
    memset(&d, 0, sizeof d);
    d.type = type;
    if (sub_topic)
        snprintf(d.sub_topic, sizeof d.sub_topic, "%s", sub_topic);
    disc_send(b, which, &d);
}

static void type_name(struct gzb *b, const char *short_name, char *out, size_t cap)
{
    kn_gzt_type_name(out, cap, b->family == 1 ? KN_GZT_FAMILY_GZ : KN_GZT_FAMILY_IGNITION,
                     short_name);
}

static void advertise(struct gzb *b, struct gz_topic *t, uint32_t type)
{
    if (b->family < 0)
        return;
    struct kn_gzt_disc d;
    memset(&d, 0, sizeof d);
    d.type = type;
    d.has_pub = true;
    snprintf(d.pub.topic, sizeof d.pub.topic, "%s", t->fqn);
    snprintf(d.pub.address, sizeof d.pub.address, "%s", b->pub_addr);
    snprintf(d.pub.process_uuid, sizeof d.pub.process_uuid, "%s", b->puuid);
    snprintf(d.pub.node_uuid, sizeof d.pub.node_uuid, "%s", b->nuuid);
    d.pub.scope = KN_GZT_SCOPE_ALL;
    d.pub.kind = KN_GZT_PUB_MSG;
    snprintf(d.pub.ctrl, sizeof d.pub.ctrl, "unused"); /* what the library itself sends */
    type_name(b, t->type_short, d.pub.msg_type, sizeof d.pub.msg_type);
    disc_send(b, 0, &d);
}

static void advertise_all(struct gzb *b)
{
    for (int i = 0; i < T_N; i++)
        if (b->topic[i].publish)
            advertise(b, &b->topic[i], KN_GZT_ADVERTISE);
}

/* Tells the publisher of t (through discovery, as the library does) that
 * this node subscribes: then it starts sending. */
static void register_with(struct gzb *b, struct gz_topic *t, const char *msg_type)
{
    struct kn_gzt_disc d;
    memset(&d, 0, sizeof d);
    d.type = KN_GZT_NEW_CONNECTION;
    d.has_pub = true;
    snprintf(d.pub.topic, sizeof d.pub.topic, "%s", t->fqn);
    snprintf(d.pub.address, sizeof d.pub.address, "%s", t->pub_addr);
    snprintf(d.pub.process_uuid, sizeof d.pub.process_uuid, "%s", b->puuid);
    snprintf(d.pub.node_uuid, sizeof d.pub.node_uuid, "%s", b->nuuid);
    d.pub.scope = KN_GZT_SCOPE_ALL;
    d.pub.kind = KN_GZT_PUB_MSG;
    /* the target publisher's process: only it registers us */
    snprintf(d.pub.ctrl, sizeof d.pub.ctrl, "%s", t->pub_puuid);
    snprintf(d.pub.msg_type, sizeof d.pub.msg_type, "%s", msg_type);
    disc_send(b, 0, &d);
}

static void world_lost(struct gzb *b, const char *why)
{
    if (!b->world_there)
        return;
    b->world_there = false;
    b->world_losses++;
    b->world_puuid[0] = '\0';
    b->have_srv = false;
    b->live = false;
    b->model_seen = false;
    b->model_ms = b->listener_ms = 0;
    b->warned_family = false;
    b->lacks = 0; /* the link forgets them with the connection */
    /* the registered subscribers stay: a world that was only silent (a
     * stopped process) keeps its subscriptions and does not register again */
    for (int i = 0; i < T_N; i++) {
        struct gz_topic *t = &b->topic[i];
        if (t->have_pub) {
            zmq_disconnect(b->zsub, t->pub_addr);
            t->have_pub = false;
        }
    }
    if (b->req_connected[0]) {
        zmq_disconnect(b->zreq, b->req_connected);
        b->req_connected[0] = '\0';
    }
    if (!b->family_fixed)
        b->family = -1;
    kn_gzsim_fb_restart(&b->fb);
    kn_warn("robot %s: gz world \"%s\" gone (%s)", b->robot, b->world, why);
    kn_link_fail(b->link, why);
}

static void check_ready(struct gzb *b)
{
    if (b->wanted && b->world_there && b->family >= 0 && b->topic[T_CLOCK].have_pub) {
        if (!b->live) {
            b->live = true;
            b->live_ms = now_ms(b);
        }
        kn_link_ready(b->link);
    }
}

/* Subscribers of published topic i in the world's own process: gz-sim
 * runs its systems (TrackedVehicle, JointPositionController) there, and
 * an echoing CLI or a world that has gone does not act on anything. */
static unsigned world_subscribers(const struct gzb *b, int i)
{
    unsigned n = 0;
    for (unsigned k = 0; k < b->topic[i].subscribers; k++)
        n += strcmp(b->topic[i].sub_puuid[k], b->world_puuid) == 0;
    return n;
}

/* Whether the world has what the robot needs, judged LOOK_MS after it came
 * and on every tick after that:
 *  - the model: a pose of it. With no pose and nobody on its cmd_vel it
 *    is missing; a cmd_vel listener (TrackedVehicle) without a pose gets
 *    POSE_MS from when it was seen before the model counts as missing
 *    too (a position nobody reported is no position).
 *  - a drive: the world's process subscribed to cmd_vel, LOOK_MS after
 *    the model's first pose (the system subscribes as the model loads).
 *  - flipper actuators: a subscriber on a cmd_pos topic.
 * What is missing goes to the link, so the robot answers ERROR instead of
 * accepting commands into the void and STATUS is STALE (rules.h); each
 * episode is warned once and counted. A bit already set stays set while
 * its grace runs again, so a late subscriber does not end an episode only
 * to start another. */
static void check_world(struct gzb *b)
{
    if (!b->live)
        return;
    uint64_t now = now_ms(b);
    unsigned drive = world_subscribers(b, T_CMD_VEL), flipper_subs = 0;
    if (drive && !b->listener_ms)
        b->listener_ms = now;
    else if (!drive)
        b->listener_ms = 0;
    if (now - b->live_ms < LOOK_MS)
        return;
    unsigned lacks = 0;
    if (!b->model_seen &&
        (!drive || now - b->listener_ms >= POSE_MS || (b->lacks & KN_LINK_NO_MODEL)))
        lacks |= KN_LINK_NO_MODEL;
    uint64_t model_since = b->model_ms > b->live_ms ? b->model_ms : b->live_ms;
    if (b->model_seen && !drive && (now - model_since >= LOOK_MS || (b->lacks & KN_LINK_NO_DRIVE)))
        lacks |= KN_LINK_NO_DRIVE;
    for (int k = 0; k < KN_NFLIPPERS; k++)
        flipper_subs += world_subscribers(b, T_CMD_POS0 + k);
    if (flipper_subs == 0)
        lacks |= KN_LINK_NO_FLIPPERS;
    unsigned came = lacks & ~b->lacks, went = b->lacks & ~lacks;
    b->lacks = lacks;
    kn_link_lacks(b->link, lacks);
    if (came & KN_LINK_NO_MODEL) {
        b->no_model_episodes++;
        if (drive)
            kn_warn("robot %s: model \"%s\" is not in gz world \"%s\": something subscribes "
                    "to %s, but no pose of it came on %s within %.1f s (no SceneBroadcaster or "
                    "PosePublisher? check gz.pose_topic); STATUS is STALE and commands are "
                    "answered ERROR NO_MODEL until a pose comes",
                    b->robot, b->model, b->world, b->topic[T_CMD_VEL].name, b->topic[T_POSE].name,
                    POSE_MS / 1000.0);
        else
            kn_warn("robot %s: model \"%s\" is not in gz world \"%s\": no pose of it on %s "
                    "and nobody subscribes to %s; STATUS is STALE and commands are answered "
                    "ERROR NO_MODEL until it appears (check gz.model)",
                    b->robot, b->model, b->world, b->topic[T_POSE].name, b->topic[T_CMD_VEL].name);
    }
    if (went & KN_LINK_NO_MODEL)
        kn_info("robot %s: model \"%s\" is in gz world \"%s\" now", b->robot, b->model, b->world);
    if (came & KN_LINK_NO_DRIVE) {
        b->no_drive_episodes++;
        kn_warn("robot %s: nothing in gz world \"%s\" subscribes to %s: model \"%s\" has no "
                "TrackedVehicle system (docs/gz.md); STATUS is STALE and CRAWLER is answered "
                "ERROR NO_ACTUATOR until one subscribes (counted in the stats)",
                b->robot, b->world, b->topic[T_CMD_VEL].name, b->model);
    }
    if (went & KN_LINK_NO_DRIVE)
        kn_info("robot %s: %s has a subscriber now: the belts are driven", b->robot,
                b->topic[T_CMD_VEL].name);
    if (came & KN_LINK_NO_FLIPPERS) {
        b->no_flippers_episodes++;
        if (!b->warned_no_flippers && !(lacks & KN_LINK_NO_MODEL))
            kn_warn("robot %s: nobody subscribes to the flipper cmd_pos topics (%s, ...): "
                    "FLIPPER is answered ERROR NO_ACTUATOR (a JointPositionController per "
                    "flipper joint, docs/gz.md)",
                    b->robot, b->topic[T_CMD_POS0].name);
        b->warned_no_flippers = b->warned_no_flippers || !(lacks & KN_LINK_NO_MODEL);
    }
    if (went & KN_LINK_NO_FLIPPERS)
        kn_info("robot %s: the flipper cmd_pos topics have subscribers now", b->robot);
}

/* A subscriber registered (NEW_CONNECTION addressed to us). */
static void sub_add(struct gz_topic *t, const char *puuid)
{
    if (t->subscribers == SUBS_MAX) {
        /* the oldest goes: most likely a process that died without a word */
        memmove(t->sub_puuid[0], t->sub_puuid[1], (SUBS_MAX - 1) * sizeof t->sub_puuid[0]);
        t->subscribers--;
    }
    snprintf(t->sub_puuid[t->subscribers++], sizeof t->sub_puuid[0], "%s", puuid);
}

/* One registration of process puuid ended (END_CONNECTION), or all of
 * them (BYE). */
static void sub_remove(struct gz_topic *t, const char *puuid, bool all)
{
    for (unsigned k = 0; k < t->subscribers;) {
        if (strcmp(t->sub_puuid[k], puuid) != 0) {
            k++;
            continue;
        }
        memmove(t->sub_puuid[k], t->sub_puuid[k + 1],
                (t->subscribers - k - 1) * sizeof t->sub_puuid[0]);
        t->subscribers--;
        if (!all)
            return;
    }
}

static int topic_by_fqn(struct gzb *b, const char *fqn)
{
    for (int i = 0; i < T_N; i++)
        if (strcmp(b->topic[i].fqn, fqn) == 0)
            return i;
    return -1;
}

static const char *family_name(int f)
{
    return f == KN_GZT_FAMILY_GZ         ? "gz.msgs"
           : f == KN_GZT_FAMILY_IGNITION ? "ignition.msgs"
                                         : "no family known";
}

/* A topic of ours advertised with a type of the other family (ignition.msgs
 * against gz.msgs), or of none: refused and counted; said once per world,
 * naming both families, because a clock refused keeps the robot from ever
 * becoming ready and the link alone can only say it did not in time. */
static void family_refused(struct gzb *b, const struct gz_topic *t, const char *type, int fam)
{
    b->type_mismatch++;
    b->family_mismatch++;
    if (b->warned_family)
        return;
    b->warned_family = true;
    const char *ours = family_name(b->family), *theirs = family_name(fam);
    bool clock = t == &b->topic[T_CLOCK];
    if (b->family_fixed)
        kn_warn("robot %s: gz world \"%s\" publishes %s as %s (%s), but this robot is configured "
                "for %s (\"messages\": \"%s\"): %s; set \"messages\" to \"auto\" or to the "
                "world's family (counted in type_mismatch)",
                b->robot, b->world, t->name, type, theirs, ours,
                b->family == KN_GZT_FAMILY_GZ ? "gz" : "ignition",
                clock ? "the world never becomes ready" : "that topic is ignored");
    else if (fam < 0)
        kn_warn("robot %s: %s is published as %s, a type of neither ignition.msgs nor gz.msgs: "
                "that topic is ignored (counted in type_mismatch)",
                b->robot, t->name, type);
    else
        kn_warn("robot %s: %s is published as %s (%s), but gz world \"%s\" speaks %s (the "
                "family of its clock): that topic is ignored (counted in type_mismatch)",
                b->robot, t->name, type, theirs, b->world, ours);
}

static void on_advertise(struct gzb *b, const struct kn_gzt_disc *d)
{
    if (d->pub.kind == KN_GZT_PUB_SRV) {
        if (strcmp(d->pub.topic, b->ctl_fqn) != 0)
            return;
        b->have_srv = true;
        snprintf(b->srv_addr, sizeof b->srv_addr, "%s", d->pub.address);
        snprintf(b->srv_id, sizeof b->srv_id, "%s", d->pub.socket_id);
        snprintf(b->srv_puuid, sizeof b->srv_puuid, "%s", d->pub.process_uuid);
        snprintf(b->srv_req_type, sizeof b->srv_req_type, "%s", d->pub.req_type);
        snprintf(b->srv_rep_type, sizeof b->srv_rep_type, "%s", d->pub.rep_type);
        return;
    }
    int i = topic_by_fqn(b, d->pub.topic);
    if (i < 0 || b->topic[i].publish)
        return;
    struct gz_topic *t = &b->topic[i];
    enum kn_gzt_family fam;
    const char *sh;
    if (kn_gzt_type_split(d->pub.msg_type, &fam, &sh) < 0) {
        family_refused(b, t, d->pub.msg_type, -1);
        return;
    }
    if (i == T_CLOCK) {
        if (b->family < 0 && !b->family_fixed) {
            b->family = (int)fam;
            kn_info("robot %s: gz world \"%s\" speaks %s.msgs", b->robot, b->world,
                    fam == KN_GZT_FAMILY_GZ ? "gz" : "ignition");
        }
        if (!b->world_there || strcmp(b->world_puuid, d->pub.process_uuid) != 0) {
            if (b->world_there)
                world_lost(b, "another process publishes the world's clock");
            snprintf(b->world_puuid, sizeof b->world_puuid, "%s", d->pub.process_uuid);
            b->world_there = true;
            b->world_arrivals++;
            b->world_heard_ms = now_ms(b);
            advertise_all(b);
        }
    }
    bool vector = strcmp(sh, "Pose_V") == 0;
    if (strcmp(sh, t->type_short) != 0 && !(i == T_POSE && (vector || strcmp(sh, "Pose") == 0))) {
        b->type_mismatch++;
        return;
    }
    if ((int)fam != b->family && b->family >= 0) {
        family_refused(b, t, d->pub.msg_type, (int)fam);
        return;
    }
    t->pose_vector = vector;
    if (t->have_pub && strcmp(t->pub_addr, d->pub.address) == 0)
        return; /* re-advertised every heartbeat: already listening */
    if (t->have_pub)
        zmq_disconnect(b->zsub, t->pub_addr);
    snprintf(t->pub_addr, sizeof t->pub_addr, "%s", d->pub.address);
    snprintf(t->pub_puuid, sizeof t->pub_puuid, "%s", d->pub.process_uuid);
    if (zmq_connect(b->zsub, t->pub_addr) != 0) {
        kn_warn("robot %s: gz: cannot connect to %s for %s: %s", b->robot, t->pub_addr, t->name,
                zmq_strerror(zmq_errno()));
        return;
    }
    t->have_pub = true;
    register_with(b, t, d->pub.msg_type);
    check_ready(b);
}

static void on_disc(struct gzb *b, int which, const uint8_t *buf, size_t n)
{
    struct kn_gzt_disc d;
    int rc = kn_gzt_disc_decode(&b->arena, buf, n, &d);
    b->disc_in++;
    if (rc != KN_GZT_DISC_OK) {
        if (b->disc_bad++ == 0)
            kn_warn("robot %s: gz: bad discovery datagram (%s); counted in stats", b->robot,
                    kn_gzt_disc_strerror(rc));
        return;
    }
    if (d.version != KN_GZT_WIRE_VERSION) {
        b->disc_version++;
        return;
    }
    if (strcmp(d.process_uuid, b->puuid) == 0)
        return; /* our own, looped back */
    if (b->world_there && strcmp(d.process_uuid, b->world_puuid) == 0)
        b->world_heard_ms = now_ms(b);
    switch (d.type) {
    case KN_GZT_ADVERTISE:
        if (d.has_pub)
            on_advertise(b, &d);
        break;
    case KN_GZT_SUBSCRIBE:
        if (which == 0) {
            int i = topic_by_fqn(b, d.sub_topic);
            if (i >= 0 && b->topic[i].publish)
                advertise(b, &b->topic[i], KN_GZT_ADVERTISE);
        }
        break;
    case KN_GZT_NEW_CONNECTION:
    case KN_GZT_END_CONNECTION: {
        int i = topic_by_fqn(b, d.pub.topic);
        if (i < 0 || !b->topic[i].publish || strcmp(d.pub.ctrl, b->puuid) != 0)
            break;
        struct gz_topic *t = &b->topic[i];
        if (d.type == KN_GZT_NEW_CONNECTION) {
            sub_add(t, d.process_uuid);
            t->resend_at_ms = now_ms(b) + RESEND_MS;
        } else {
            sub_remove(t, d.process_uuid, false);
        }
        break;
    }
    case KN_GZT_UNADVERTISE: {
        int i = topic_by_fqn(b, d.pub.topic);
        if (i == T_CLOCK && b->world_there && strcmp(d.process_uuid, b->world_puuid) == 0) {
            world_lost(b, "the world unadvertised its clock");
        } else if (i >= 0 && b->topic[i].have_pub &&
                   strcmp(b->topic[i].pub_addr, d.pub.address) == 0) {
            zmq_disconnect(b->zsub, b->topic[i].pub_addr);
            b->topic[i].have_pub = false;
        }
        if (strcmp(d.pub.topic, b->ctl_fqn) == 0)
            b->have_srv = false;
        break;
    }
    case KN_GZT_BYE:
        if (b->world_there && strcmp(d.process_uuid, b->world_puuid) == 0)
            world_lost(b, "the world's process said BYE");
        for (int i = 0; i < T_N; i++)
            if (b->topic[i].publish)
                sub_remove(&b->topic[i], d.process_uuid, true);
        for (int i = 0; i < T_N; i++)
            if (b->topic[i].have_pub && strcmp(b->topic[i].pub_puuid, d.process_uuid) == 0) {
                zmq_disconnect(b->zsub, b->topic[i].pub_addr);
                b->topic[i].have_pub = false;
            }
        break;
    default: break;
    }
}

static void on_udp(uv_poll_t *p, int status, int events)
{
    struct gzb *b = p->data;
    int which = p == &b->udp_poll[1];
    if (status < 0 || !(events & UV_READABLE))
        return;
    for (int k = 0; k < 64; k++) {
        ssize_t n = recv(b->udp[which], b->dbuf, sizeof b->dbuf, MSG_DONTWAIT);
        if (n < 0)
            return;
        on_disc(b, which, b->dbuf, (size_t)n);
    }
}

/* ---- ZeroMQ ------------------------------------------------------------------ */

/* Reads one multipart message into b->dbuf; frames point into it. Returns
 * the frame count, 0 when nothing is waiting, -1 for a message that does not
 * fit (drained and dropped). */
static int recv_multipart(struct gzb *b, void *sock, struct kn_gzt_frame *f)
{
    size_t used = 0, nf = 0;
    bool too_big = false;
    for (;;) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&m);
            return nf == 0 && !too_big ? 0 : -1;
        }
        size_t n = zmq_msg_size(&m);
        if (nf < KN_GZT_FRAMES_MAX && used + n <= sizeof b->dbuf) {
            memcpy(b->dbuf + used, zmq_msg_data(&m), n);
            f[nf].p = b->dbuf + used;
            f[nf].n = n;
            used += n;
            nf++;
        } else {
            too_big = true;
        }
        bool more = zmq_msg_more(&m);
        zmq_msg_close(&m);
        if (!more)
            break;
    }
    return too_big ? -1 : (int)nf;
}

static void on_data(struct gzb *b, int i, const struct kn_gzt_pubmsg *m)
{
    struct gz_topic *t = &b->topic[i];
    bool changed = false;
    t->msgs++;
    if (i == T_CLOCK) {
        int64_t ns;
        if (kn_gzt_dec_clock(&b->arena, m->data.p, m->data.n, &ns) < 0) {
            t->bad++;
            return;
        }
        changed = kn_gzsim_fb_clock(&b->fb, ns);
    } else if (i == T_POSE) {
        double pos[3], q[4];
        int64_t st;
        int rc = kn_gzt_dec_pose_of(&b->arena, m->data.p, m->data.n, t->pose_vector, b->model, pos,
                                    q, &st);
        if (rc < 0)
            t->bad++;
        if (rc == 0)
            b->poses_without_model++;
        if (rc <= 0)
            return;
        if (!b->model_seen)
            b->model_ms = now_ms(b);
        b->model_seen = true;
        changed = kn_gzsim_fb_pose(&b->fb, pos, q, st);
    } else if (i == T_JOINTS) {
        const char *names[KN_NFLIPPERS];
        for (int k = 0; k < KN_NFLIPPERS; k++)
            names[k] = b->joint[k];
        double jp[KN_NFLIPPERS] = { 0 };
        uint32_t found;
        int64_t st;
        if (kn_gzt_dec_joints(&b->arena, m->data.p, m->data.n, names, KN_NFLIPPERS, jp, &found,
                              &st) < 0) {
            t->bad++;
            return;
        }
        changed = kn_gzsim_fb_joints(&b->fb, jp, found);
    }
    if (changed && b->world_there)
        kn_link_state(b->link, &b->fb.st);
}

static void drain_sub(struct gzb *b)
{
    struct kn_gzt_frame f[KN_GZT_FRAMES_MAX];
    for (int k = 0; k < 256; k++) {
        int nf = recv_multipart(b, b->zsub, f);
        if (nf == 0)
            return;
        b->frames_in++;
        struct kn_gzt_pubmsg m;
        if (nf < 0 || kn_gzt_pubmsg_parse(f, (size_t)nf, &m) != KN_GZT_WIRE_OK) {
            b->frames_bad++;
            continue;
        }
        char fqn[256];
        if (m.topic.n >= sizeof fqn) {
            b->unknown_topic++;
            continue;
        }
        memcpy(fqn, m.topic.p, m.topic.n);
        fqn[m.topic.n] = '\0';
        int i = topic_by_fqn(b, fqn);
        if (i < 0 || b->topic[i].publish) {
            b->unknown_topic++;
            continue;
        }
        on_data(b, i, &m);
    }
}

static void drain_resp(struct gzb *b)
{
    struct kn_gzt_frame f[KN_GZT_FRAMES_MAX];
    for (int k = 0; k < 64; k++) {
        int nf = recv_multipart(b, b->zresp, f);
        if (nf == 0)
            return;
        struct kn_gzt_repmsg r;
        bool v = false;
        /* a ROUTER puts the sender's identity first */
        if (nf < 2 || kn_gzt_repmsg_parse(f + 1, (size_t)nf - 1, &r) != KN_GZT_WIRE_OK ||
            kn_gzt_dec_boolean(&b->arena, r.data.p, r.data.n, &v) < 0) {
            b->ctl_bad++;
            continue;
        }
        if (r.ok && v)
            b->ctl_ok++;
        else
            b->ctl_refused++;
    }
}

static void on_zmq(uv_poll_t *p, int status, int events)
{
    (void)status;
    (void)events;
    struct gzb *b = p->data;
    /* the descriptor only signals that ZMQ_EVENTS may have changed */
    if (p == &b->sub_poll)
        drain_sub(b);
    else
        drain_resp(b);
}

static int send_frames(void *sock, const struct kn_gzt_frame *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (zmq_send(sock, f[i].p, f[i].n, (i + 1 < n ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT) < 0)
            return -1;
    return 0;
}

static void publish(struct gzb *b, struct gz_topic *t, const uint8_t *data, size_t n)
{
    if (n > sizeof t->last)
        return;
    memcpy(t->last, data, n);
    t->last_len = n;
    if (b->family < 0)
        return;
    char type[KN_GZT_NAME_MAX];
    type_name(b, t->type_short, type, sizeof type);
    struct kn_gzt_pubmsg m = {
        kn_gzt_str(t->fqn), kn_gzt_str(b->pub_addr), { data, n }, kn_gzt_str(type)
    };
    struct kn_gzt_frame f[KN_GZT_FRAMES_MAX];
    if (send_frames(b->zpub, f, kn_gzt_pubmsg_build(&m, f)) == 0)
        t->msgs++;
    else
        t->bad++;
}

int kn_gzsim_world_control(struct kn_link *l, const struct kn_gzt_world_ctl *c)
{
    struct gzb *b = kn_link_backend(l, &kn_gzsim_ops);
    if (!b || !b->have_srv)
        return -1;
    if (strcmp(b->req_connected, b->srv_addr) != 0) {
        if (b->req_connected[0])
            zmq_disconnect(b->zreq, b->req_connected);
        if (zmq_connect(b->zreq, b->srv_addr) != 0)
            return -1;
        snprintf(b->req_connected, sizeof b->req_connected, "%s", b->srv_addr);
    }
    uint8_t data[128];
    size_t n = kn_gzt_enc_world_control(data, sizeof data, c);
    char req_uuid[40];
    random_uuid(req_uuid);
    struct kn_gzt_reqmsg m = { kn_gzt_str(b->ctl_fqn),      kn_gzt_str(b->resp_addr),
                               kn_gzt_str(b->resp_id),      kn_gzt_str(b->nuuid),
                               kn_gzt_str(req_uuid),        { data, n },
                               kn_gzt_str(b->srv_req_type), kn_gzt_str(b->srv_rep_type) };
    struct kn_gzt_frame f[KN_GZT_FRAMES_MAX + 1];
    f[0] = kn_gzt_str(b->srv_id); /* the ROUTER routes by the replier's identity */
    size_t nf = 1 + kn_gzt_reqmsg_build(&m, f + 1);
    if (send_frames(b->zreq, f, nf) < 0)
        return -1; /* EHOSTUNREACH: the replier's connection is not up yet */
    b->ctl_sent++;
    return 0;
}

static char *reply(bool ok, const char *robot, const char *what)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", ok);
    if (robot)
        cJSON_AddStringToObject(o, "robot", robot);
    cJSON_AddStringToObject(o, ok ? "sent" : "error", what);
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return t;
}

char *kn_gzsim_command(const char *args)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", args ? args : "");
    const char *robot = strtok_r(buf, " \t", &save);
    const char *verb = robot ? strtok_r(NULL, " \t", &save) : NULL;
    const char *arg = verb ? strtok_r(NULL, " \t", &save) : NULL;
    if (!verb)
        return reply(false, NULL,
                     "usage: world ROBOT pause | play | step [N] | "
                     "reset [all|time|model]");
    struct gzb *b = registry;
    while (b && strcmp(b->robot, robot) != 0)
        b = b->next_gz;
    if (!b)
        return reply(false, robot, "no gz robot of that name");
    struct kn_gzt_world_ctl c;
    memset(&c, 0, sizeof c);
    if (strcmp(verb, "pause") == 0) {
        c.pause = true;
    } else if (strcmp(verb, "play") == 0) {
        c.pause = false;
    } else if (strcmp(verb, "step") == 0) {
        c.pause = true; /* every request sets the pause state: stay paused */
        long n = arg ? strtol(arg, NULL, 10) : 1;
        if (n < 1 || n > 1000000)
            return reply(false, robot, "step takes 1..1000000 iterations");
        if (n == 1)
            c.step = true;
        else
            c.multi_step = (uint32_t)n;
    } else if (strcmp(verb, "reset") == 0) {
        c.pause = true;
        if (!arg || strcmp(arg, "all") == 0)
            c.reset_all = true;
        else if (strcmp(arg, "time") == 0)
            c.reset_time = true;
        else if (strcmp(arg, "model") == 0)
            c.reset_model = true;
        else
            return reply(false, robot, "reset takes all, time or model");
    } else {
        return reply(false, robot, "unknown world command (pause, play, step, reset)");
    }
    if (kn_gzsim_world_control(b->link, &c) < 0)
        return reply(false, robot,
                     b->have_srv ? "the request could not be sent (the control "
                                   "service's connection is not up yet)"
                                 : "the world offers no control service (yet)");
    return reply(true, robot, verb);
}

/* ---- the tick: heartbeats, re-advertising, liveness ----------------------- */

static void on_tick(uv_timer_t *t)
{
    struct gzb *b = t->data;
    uint64_t now = now_ms(b);
    drain_sub(b);
    drain_resp(b);
    if (now >= b->next_beat_ms) {
        b->next_beat_ms = now + KN_GZT_HEARTBEAT_MS;
        send_simple(b, 0, KN_GZT_HEARTBEAT, NULL);
        advertise_all(b);
        /* ask again for what we have no publisher of (a world started
         * later answers its ADVERTISE at once) */
        for (int i = 0; i < T_N; i++)
            if (!b->topic[i].publish && !b->topic[i].have_pub)
                send_simple(b, 0, KN_GZT_SUBSCRIBE, b->topic[i].fqn);
        if (!b->have_srv)
            send_simple(b, 1, KN_GZT_SUBSCRIBE, b->ctl_fqn);
    }
    if (b->world_there && now - b->world_heard_ms > KN_GZT_SILENCE_MS)
        world_lost(b, "the world's process fell silent");
    for (int i = 0; i < T_N; i++) {
        struct gz_topic *tp = &b->topic[i];
        if (tp->publish && tp->resend_at_ms && now >= tp->resend_at_ms) {
            tp->resend_at_ms = 0;
            if (tp->last_len)
                publish(b, tp, tp->last, tp->last_len);
        }
    }
    check_ready(b);
    check_world(b);
}

/* ---- backend ops -------------------------------------------------------- */

static void on_handle_closed(uv_handle_t *h)
{
    struct gzb *b = h->data;
    if (--b->handles == 0 && b->destroyed) {
        free(b->arena_mem);
        free(b);
    }
}

static int open_udp(struct gzb *b, int which)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0)
        return -1;
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    a.sin_port = htons(which ? KN_GZT_SRV_DISC_PORT : KN_GZT_MSG_DISC_PORT);
    struct ip_mreq mr;
    inet_pton(AF_INET, KN_GZT_MCAST_GROUP, &mr.imr_multiaddr);
    struct in_addr ifa;
    if (inet_pton(AF_INET, b->ip, &ifa) != 1 || bind(s, (struct sockaddr *)&a, sizeof a) < 0) {
        close(s);
        return -1;
    }
    mr.imr_interface = ifa;
    if (setsockopt(s, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof mr) < 0 ||
        setsockopt(s, IPPROTO_IP, IP_MULTICAST_IF, &ifa, sizeof ifa) < 0) {
        close(s);
        return -1;
    }
    unsigned char loop = 1, ttl = 1;
    setsockopt(s, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop);
    setsockopt(s, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl);
    b->udp[which] = s;
    return 0;
}

static void *zsocket_bound(struct gzb *b, int type, const char *identity, char *addr, size_t cap)
{
    void *s = zmq_socket(b->zctx, type);
    if (!s)
        return NULL;
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    if (identity)
        zmq_setsockopt(s, ZMQ_ROUTING_ID, identity, strlen(identity));
    char ep[96];
    snprintf(ep, sizeof ep, "tcp://%s:*", b->ip);
    size_t n = cap;
    if (zmq_bind(s, ep) != 0 || zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, addr, &n) != 0) {
        zmq_close(s);
        return NULL;
    }
    return s;
}

static int start_poll(struct gzb *b, uv_poll_t *p, int fd)
{
    if (uv_poll_init(b->loop, p, fd) != 0)
        return -1;
    p->data = b;
    b->handles++;
    return uv_poll_start(p, UV_READABLE,
                         p == &b->udp_poll[0] || p == &b->udp_poll[1] ? on_udp : on_zmq);
}

static void set_topic(struct gzb *b, int i, const char *name, const char *type, bool publish)
{
    struct gz_topic *t = &b->topic[i];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->type_short = type;
    t->publish = publish;
    if (kn_gzt_fqn(t->fqn, sizeof t->fqn, b->partition, name) < 0)
        t->fqn[0] = '\0';
}

static void gz_destroy(void *be);

static void *gz_create(struct kn_link *link, const struct kn_cfg_robot *cfg)
{
    struct gzb *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->link = link;
    b->loop = kn_link_loop(link);
    b->udp[0] = b->udp[1] = -1;
    const struct kn_cfg_backend *c = &cfg->backend;
    snprintf(b->robot, sizeof b->robot, "%s", cfg->name);
    snprintf(b->model, sizeof b->model, "%s", c->model);
    snprintf(b->world, sizeof b->world, "%s", c->world);
    from_env(b->partition, sizeof b->partition, c->partition, "GZ_PARTITION", "IGN_PARTITION");
    if (!b->partition[0])
        default_partition(b->partition, sizeof b->partition);
    from_env(b->ip, sizeof b->ip, c->gz_ip, "GZ_IP", "IGN_IP");
    if (!b->ip[0])
        default_ip(b->ip, sizeof b->ip);
    b->family = c->gz_family;
    b->family_fixed = c->gz_family >= 0;
    kn_conv_table_gazebo(&b->conv);
    b->conv.counts_per_tick = c->counts_per_tick;
    b->conv.wheel_radius_m = c->wheel_radius_m;
    b->conv.tracks_separation_m = c->tracks_separation_m;
    b->conv.steering_efficiency = c->steering_efficiency;
    b->conv.counts_per_m = cfg->counts_per_m;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        snprintf(b->joint[k], sizeof b->joint[k], "%s", c->flipper[k].name);
        b->conv.flipper_sign[k] = c->flipper[k].sign;
        b->conv.flipper_offset_rad[k] = c->flipper[k].offset_rad;
    }
    char err[128];
    if (kn_conv_table_check(&b->conv, err, sizeof err) < 0) {
        kn_err("robot %s: gz: %s", b->robot, err);
        free(b);
        return NULL;
    }
    kn_gzsim_fb_init(&b->fb, &b->conv);
    random_uuid(b->puuid);
    random_uuid(b->nuuid);
    random_uuid(b->resp_id);

    char name[256];
    snprintf(name, sizeof name, "/model/%s/cmd_vel", b->model);
    set_topic(b, T_CMD_VEL, name, "Twist", true);
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        snprintf(name, sizeof name, "/model/%s/joint/%s/0/cmd_pos", b->model, b->joint[k]);
        set_topic(b, T_CMD_POS0 + k, name, "Double", true);
    }
    snprintf(name, sizeof name, "/world/%s/clock", b->world);
    set_topic(b, T_CLOCK, name, "Clock", false);
    if (c->pose_topic[0])
        snprintf(name, sizeof name, "%s", c->pose_topic);
    else
        snprintf(name, sizeof name, "/world/%s/pose/info", b->world);
    set_topic(b, T_POSE, name, "Pose_V", false);
    snprintf(name, sizeof name, "/world/%s/model/%s/joint_state", b->world, b->model);
    set_topic(b, T_JOINTS, name, "Model", false);
    snprintf(name, sizeof name, "/world/%s/control", b->world);
    if (kn_gzt_fqn(b->ctl_fqn, sizeof b->ctl_fqn, b->partition, name) < 0)
        b->ctl_fqn[0] = '\0';
    for (int i = 0; i < T_N; i++)
        if (!b->topic[i].fqn[0] || !b->ctl_fqn[0]) {
            kn_err("robot %s: gz: partition \"%s\" or a topic name is not valid for "
                   "gz-transport",
                   b->robot, b->partition);
            free(b);
            return NULL;
        }

    b->arena_mem = malloc(ARENA_BYTES);
    b->zctx = zmq_ctx_new();
    if (!b->arena_mem || !b->zctx) {
        gz_destroy(b);
        return NULL;
    }
    kn_pbarena_init(&b->arena, b->arena_mem, ARENA_BYTES);
    b->zpub = zsocket_bound(b, ZMQ_PUB, NULL, b->pub_addr, sizeof b->pub_addr);
    b->zresp = zsocket_bound(b, ZMQ_ROUTER, b->resp_id, b->resp_addr, sizeof b->resp_addr);
    b->zsub = zmq_socket(b->zctx, ZMQ_SUB);
    b->zreq = zmq_socket(b->zctx, ZMQ_ROUTER);
    if (!b->zpub || !b->zresp || !b->zsub || !b->zreq || open_udp(b, 0) < 0 || open_udp(b, 1) < 0) {
        kn_err("robot %s: gz: cannot open the node's sockets on %s: %s", b->robot, b->ip,
               errno ? strerror(errno) : zmq_strerror(zmq_errno()));
        gz_destroy(b);
        return NULL;
    }
    int zero = 0, one = 1;
    zmq_setsockopt(b->zsub, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(b->zreq, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(b->zreq, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
    for (int i = 0; i < T_N; i++)
        if (!b->topic[i].publish)
            zmq_setsockopt(b->zsub, ZMQ_SUBSCRIBE, b->topic[i].fqn, strlen(b->topic[i].fqn));
    int fd;
    size_t fl = sizeof fd;
    if (start_poll(b, &b->udp_poll[0], b->udp[0]) < 0 ||
        start_poll(b, &b->udp_poll[1], b->udp[1]) < 0 ||
        zmq_getsockopt(b->zsub, ZMQ_FD, &fd, &fl) != 0 || start_poll(b, &b->sub_poll, fd) < 0 ||
        (fl = sizeof fd, zmq_getsockopt(b->zresp, ZMQ_FD, &fd, &fl) != 0) ||
        start_poll(b, &b->resp_poll, fd) < 0) {
        kn_err("robot %s: gz: cannot watch the node's sockets", b->robot);
        gz_destroy(b);
        return NULL;
    }
    uv_timer_init(b->loop, &b->tick);
    b->tick.data = b;
    b->handles++;
    uv_timer_start(&b->tick, on_tick, 0, TICK_MS);
    b->next_gz = registry;
    registry = b;
    kn_info("robot %s: gz node %s on %s, partition \"%s\", world \"%s\", model \"%s\"", b->robot,
            b->puuid, b->ip, b->partition, b->world, b->model);
    return b;
}

static void gz_destroy(void *be)
{
    struct gzb *b = be;
    for (struct gzb **p = &registry; *p; p = &(*p)->next_gz)
        if (*p == b) {
            *p = b->next_gz;
            break;
        }
    if (b->udp[0] >= 0 && b->pub_addr[0]) {
        for (int i = 0; i < T_N; i++)
            if (b->topic[i].publish)
                advertise(b, &b->topic[i], KN_GZT_UNADVERTISE);
        send_simple(b, 0, KN_GZT_BYE, NULL);
    }
    b->destroyed = true;
    uv_handle_t *hs[] = { (uv_handle_t *)&b->udp_poll[0], (uv_handle_t *)&b->udp_poll[1],
                          (uv_handle_t *)&b->sub_poll, (uv_handle_t *)&b->resp_poll,
                          (uv_handle_t *)&b->tick };
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
        if (hs[i]->data == b && !uv_is_closing(hs[i]))
            uv_close(hs[i], on_handle_closed);
    void *socks[] = { b->zpub, b->zsub, b->zreq, b->zresp };
    for (size_t i = 0; i < 4; i++)
        if (socks[i])
            zmq_close(socks[i]);
    if (b->zctx)
        zmq_ctx_term(b->zctx);
    for (int w = 0; w < 2; w++)
        if (b->udp[w] >= 0)
            close(b->udp[w]);
    if (b->handles == 0) {
        free(b->arena_mem);
        free(b);
    }
}

static void gz_start(void *be)
{
    struct gzb *b = be;
    b->wanted = true;
    check_ready(b);
}

static void gz_stop(void *be)
{
    struct gzb *b = be;
    b->wanted = false;
}

static void gz_input(void *be, const char *data, size_t len)
{
    (void)be;
    (void)data;
    (void)len; /* no link connection: nothing comes this way */
}

static void gz_send_command(void *be, const struct kn_command *cmd, bool reapply)
{
    struct gzb *b = be;
    (void)reapply;
    uint8_t buf[128];
    double v, w;
    kn_conv_belts_to_gz_twist(&b->conv, cmd->belt_speed_m_s, &v, &w);
    size_t n = kn_gzt_enc_twist(buf, sizeof buf, v, w);
    publish(b, &b->topic[T_CMD_VEL], buf, n);
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        if (!(cmd->flipper_mask & (1u << k)))
            continue;
        n = kn_gzt_enc_double(buf, sizeof buf,
                              kn_conv_flipper_to_joint(&b->conv, k, cmd->flipper_rad[k]));
        publish(b, &b->topic[T_CMD_POS0 + k], buf, n);
    }
    b->cmds++;
}

static void gz_stats(void *be, cJSON *o)
{
    struct gzb *b = be;
    if (!o)
        return;
    cJSON_AddStringToObject(o, "process_uuid", b->puuid);
    cJSON_AddStringToObject(o, "ip", b->ip);
    cJSON_AddStringToObject(o, "partition", b->partition);
    cJSON_AddStringToObject(o, "messages",
                            b->family < 0    ? "unknown"
                            : b->family == 1 ? "gz"
                                             : "ignition");
    cJSON_AddBoolToObject(o, "world", b->world_there);
    cJSON_AddNumberToObject(o, "world_arrivals", (double)b->world_arrivals);
    cJSON_AddNumberToObject(o, "world_losses", (double)b->world_losses);
    cJSON_AddNumberToObject(o, "discovery_in", (double)b->disc_in);
    cJSON_AddNumberToObject(o, "discovery_out", (double)b->disc_out);
    cJSON_AddNumberToObject(o, "discovery_bad", (double)b->disc_bad);
    cJSON_AddNumberToObject(o, "discovery_other_version", (double)b->disc_version);
    cJSON_AddNumberToObject(o, "discovery_send_errors", (double)b->disc_send_errors);
    cJSON_AddNumberToObject(o, "frames_in", (double)b->frames_in);
    cJSON_AddNumberToObject(o, "frames_bad", (double)b->frames_bad);
    cJSON_AddNumberToObject(o, "unknown_topic", (double)b->unknown_topic);
    cJSON_AddNumberToObject(o, "type_mismatch", (double)b->type_mismatch);
    cJSON_AddNumberToObject(o, "commands", (double)b->cmds);
    cJSON_AddNumberToObject(o, "control_sent", (double)b->ctl_sent);
    cJSON_AddNumberToObject(o, "control_ok", (double)b->ctl_ok);
    cJSON_AddNumberToObject(o, "control_refused", (double)b->ctl_refused);
    cJSON_AddNumberToObject(o, "control_bad", (double)b->ctl_bad);
    cJSON_AddNumberToObject(o, "world_resets", (double)b->fb.resets);
    cJSON_AddNumberToObject(o, "bad_numbers", (double)b->fb.bad_numbers);
    cJSON_AddBoolToObject(o, "no_model", b->lacks & KN_LINK_NO_MODEL);
    cJSON_AddBoolToObject(o, "no_flipper_subscriber", b->lacks & KN_LINK_NO_FLIPPERS);
    cJSON_AddBoolToObject(o, "no_drive_subscriber", b->lacks & KN_LINK_NO_DRIVE);
    cJSON_AddNumberToObject(o, "no_model_episodes", (double)b->no_model_episodes);
    cJSON_AddNumberToObject(o, "no_flipper_episodes", (double)b->no_flippers_episodes);
    cJSON_AddNumberToObject(o, "no_drive_episodes", (double)b->no_drive_episodes);
    cJSON_AddNumberToObject(o, "family_mismatch", (double)b->family_mismatch);
    cJSON_AddNumberToObject(o, "poses_without_model", (double)b->poses_without_model);
    cJSON *t = cJSON_AddObjectToObject(o, "topics");
    for (int i = 0; t && i < T_N; i++) {
        cJSON *e = cJSON_AddObjectToObject(t, b->topic[i].name);
        if (!e)
            continue;
        cJSON_AddNumberToObject(e, b->topic[i].publish ? "sent" : "received",
                                (double)b->topic[i].msgs);
        cJSON_AddNumberToObject(e, "bad", (double)b->topic[i].bad);
        if (b->topic[i].publish)
            cJSON_AddNumberToObject(e, "subscribers", b->topic[i].subscribers);
        else
            cJSON_AddBoolToObject(e, "publisher", b->topic[i].have_pub);
    }
}

const struct kn_backend_ops kn_gzsim_ops = {
    .name = "gz",
    .kind = KN_BACKEND_GZ,
    .krp_id = KN_KRP_BACKEND_GAZEBO, /* HELLO_ACK knows one Gazebo */
    .capabilities = KN_KRP_CAP_GROUND_TRUTH,
    .default_port = 0,
    .discovers = true,
    .create = gz_create,
    .destroy = gz_destroy,
    .start = gz_start,
    .stop = gz_stop,
    .input = gz_input,
    .send_command = gz_send_command,
    .stats = gz_stats,
};
