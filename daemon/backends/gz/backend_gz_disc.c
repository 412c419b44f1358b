/* The gz backend's discovery (docs/gz.md#discovery): the node's
 * datagrams on the two multicast sockets, the world's arrival (the process
 * that publishes its clock) and loss, the publishers we subscribe to, the
 * subscribers of our topics, and what the world lacks for the robot (no
 * model, no drive, no flipper actuators, a type family that is not its
 * own). */
#include "backend_gz_priv.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <zmq.h>

#include "log.h"

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

void kn_gzsim_send_simple(struct gzb *b, int which, uint32_t type, const char *sub_topic)
{
    struct kn_gzt_disc d;
    memset(&d, 0, sizeof d);
    d.type = type;
    if (sub_topic)
        snprintf(d.sub_topic, sizeof d.sub_topic, "%s", sub_topic);
    disc_send(b, which, &d);
}

void kn_gzsim_type_name(struct gzb *b, const char *short_name, char *out, size_t cap)
{
    kn_gzt_type_name(out, cap, b->family == 1 ? KN_GZT_FAMILY_GZ : KN_GZT_FAMILY_IGNITION,
                     short_name);
}

void kn_gzsim_advertise(struct gzb *b, struct gz_topic *t, uint32_t type)
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
    kn_gzsim_type_name(b, t->type_short, d.pub.msg_type, sizeof d.pub.msg_type);
    disc_send(b, 0, &d);
}

void kn_gzsim_advertise_all(struct gzb *b)
{
    for (int i = 0; i < T_N; i++)
        if (b->topic[i].publish)
            kn_gzsim_advertise(b, &b->topic[i], KN_GZT_ADVERTISE);
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

void kn_gzsim_world_lost(struct gzb *b, const char *why)
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

void kn_gzsim_check_ready(struct gzb *b)
{
    if (b->wanted && b->world_there && b->family >= 0 && b->topic[T_CLOCK].have_pub) {
        if (!b->live) {
            b->live = true;
            b->live_ms = kn_gzsim_now_ms(b);
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
void kn_gzsim_check_world(struct gzb *b)
{
    if (!b->live)
        return;
    uint64_t now = kn_gzsim_now_ms(b);
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

int kn_gzsim_topic_by_fqn(struct gzb *b, const char *fqn)
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
    int i = kn_gzsim_topic_by_fqn(b, d->pub.topic);
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
                kn_gzsim_world_lost(b, "another process publishes the world's clock");
            snprintf(b->world_puuid, sizeof b->world_puuid, "%s", d->pub.process_uuid);
            b->world_there = true;
            b->world_arrivals++;
            b->world_heard_ms = kn_gzsim_now_ms(b);
            kn_gzsim_advertise_all(b);
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
    kn_gzsim_check_ready(b);
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
        b->world_heard_ms = kn_gzsim_now_ms(b);
    switch (d.type) {
    case KN_GZT_ADVERTISE:
        if (d.has_pub)
            on_advertise(b, &d);
        break;
    case KN_GZT_SUBSCRIBE:
        if (which == 0) {
            int i = kn_gzsim_topic_by_fqn(b, d.sub_topic);
            if (i >= 0 && b->topic[i].publish)
                kn_gzsim_advertise(b, &b->topic[i], KN_GZT_ADVERTISE);
        }
        break;
    case KN_GZT_NEW_CONNECTION:
    case KN_GZT_END_CONNECTION: {
        int i = kn_gzsim_topic_by_fqn(b, d.pub.topic);
        if (i < 0 || !b->topic[i].publish || strcmp(d.pub.ctrl, b->puuid) != 0)
            break;
        struct gz_topic *t = &b->topic[i];
        if (d.type == KN_GZT_NEW_CONNECTION) {
            sub_add(t, d.process_uuid);
            t->resend_at_ms = kn_gzsim_now_ms(b) + RESEND_MS;
        } else {
            sub_remove(t, d.process_uuid, false);
        }
        break;
    }
    case KN_GZT_UNADVERTISE: {
        int i = kn_gzsim_topic_by_fqn(b, d.pub.topic);
        if (i == T_CLOCK && b->world_there && strcmp(d.process_uuid, b->world_puuid) == 0) {
            kn_gzsim_world_lost(b, "the world unadvertised its clock");
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
            kn_gzsim_world_lost(b, "the world's process said BYE");
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

void kn_gzsim_on_udp(uv_poll_t *p, int status, int events)
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
