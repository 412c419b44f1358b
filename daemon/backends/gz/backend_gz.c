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
 * bytes; these files only move them: this one is the node (its sockets,
 * the tick, the ops and stats), backend_gz_disc.c discovery and
 * backend_gz_msgs.c the ZeroMQ messages and world control. */
#include "backend_gz_priv.h"

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

#include "krp.h"
#include "log.h"

/* Every gz robot by name, for the stats socket's "world" command. */
static struct gzb *registry;

struct gzb *kn_gzsim_find(const char *robot)
{
    struct gzb *b = registry;
    while (b && strcmp(b->robot, robot) != 0)
        b = b->next_gz;
    return b;
}

void kn_gzsim_uuid(char out[40])
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

/* ---- the tick: heartbeats, re-advertising, liveness ----------------------- */

static void on_tick(uv_timer_t *t)
{
    struct gzb *b = t->data;
    uint64_t now = kn_gzsim_now_ms(b);
    kn_gzsim_drain_sub(b);
    kn_gzsim_drain_resp(b);
    if (now >= b->next_beat_ms) {
        b->next_beat_ms = now + KN_GZT_HEARTBEAT_MS;
        kn_gzsim_send_simple(b, 0, KN_GZT_HEARTBEAT, NULL);
        kn_gzsim_advertise_all(b);
        /* ask again for what we have no publisher of (a world started
         * later answers its ADVERTISE at once) */
        for (int i = 0; i < T_N; i++)
            if (!b->topic[i].publish && !b->topic[i].have_pub)
                kn_gzsim_send_simple(b, 0, KN_GZT_SUBSCRIBE, b->topic[i].fqn);
        if (!b->have_srv)
            kn_gzsim_send_simple(b, 1, KN_GZT_SUBSCRIBE, b->ctl_fqn);
    }
    if (b->world_there && now - b->world_heard_ms > KN_GZT_SILENCE_MS)
        kn_gzsim_world_lost(b, "the world's process fell silent");
    for (int i = 0; i < T_N; i++) {
        struct gz_topic *tp = &b->topic[i];
        if (tp->publish && tp->resend_at_ms && now >= tp->resend_at_ms) {
            tp->resend_at_ms = 0;
            if (tp->last_len)
                kn_gzsim_publish(b, tp, tp->last, tp->last_len);
        }
    }
    kn_gzsim_check_ready(b);
    kn_gzsim_check_world(b);
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
                         p == &b->udp_poll[0] || p == &b->udp_poll[1] ? kn_gzsim_on_udp
                                                                      : kn_gzsim_on_zmq);
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
    kn_backend_conv_from_cfg(KN_FRAME_Z_UP, cfg, &b->conv);
    for (int k = 0; k < KN_NFLIPPERS; k++)
        snprintf(b->joint[k], sizeof b->joint[k], "%s", c->flipper[k].name);
    char err[128];
    if (kn_conv_table_check(&b->conv, err, sizeof err) < 0) {
        kn_err("robot %s: gz: %s", b->robot, err);
        free(b);
        return NULL;
    }
    kn_gzsim_fb_init(&b->fb, &b->conv);
    kn_gzsim_uuid(b->puuid);
    kn_gzsim_uuid(b->nuuid);
    kn_gzsim_uuid(b->resp_id);

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
                kn_gzsim_advertise(b, &b->topic[i], KN_GZT_UNADVERTISE);
        kn_gzsim_send_simple(b, 0, KN_GZT_BYE, NULL);
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
    kn_gzsim_check_ready(b);
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
    kn_gzsim_publish(b, &b->topic[T_CMD_VEL], buf, n);
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        if (!(cmd->flipper_mask & (1u << k)))
            continue;
        n = kn_gzt_enc_double(buf, sizeof buf,
                              kn_conv_flipper_to_joint(&b->conv, k, cmd->flipper_rad[k]));
        kn_gzsim_publish(b, &b->topic[T_CMD_POS0 + k], buf, n);
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
    .command = kn_gzsim_command,
};

/* The module's one entry point (kenaf-simd-gz.so; backend.c's table). */
const struct kn_backend_ops *kn_gzsim_module_ops(void)
{
    return &kn_gzsim_ops;
}
