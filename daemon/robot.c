/* A robot's I/O: see robot.h. */
#include "robot.h"
#include "robot_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "access.h"
#ifdef KN_HAVE_KEYS
#include "keyring.h"
#include "krp_mac.h"
#endif
#include "backend.h"
#include "capture.h"
#include "coalesce.h"
#include "engine_proc.h"
#include "faults.h"
#include "krp.h"
#include "log.h"
#include "peers.h"
#include "rules.h"
#include "stats.h"
#include "world_doc.h"

static void reschedule(struct kn_robot *r);

#ifdef KN_HAVE_KEYS
/* The wall clock in microseconds since 1970: the shared key's counters
 * and freshness window are in it (docs/protocol.md, "Counters"). */
static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
#endif

/* ---- rules -> world -------------------------------------------------- */

static void on_sent(uv_udp_send_t *req, int status)
{
    struct kn_robot *r = req->handle->data;
    if (status < 0 && status != UV_ECANCELED)
        r->send_errors++;
    free(req);
}

/* Fault injection carries datagrams and commands as items: the peer
 * address followed by the datagram, or a command with its receive time. */
struct sim_item {
    struct kn_command cmd;
    uint64_t t_rx;
};
static uint8_t in_item[sizeof(struct kn_addr) + KN_ROBOT_RX_DGRAM_MAX];
static uint8_t out_item[sizeof(struct kn_addr) + KN_KRP_MAX_DGRAM + 64];

static void capture_out(struct kn_robot *r, const struct kn_addr *to, const uint8_t *buf,
                        size_t len)
{
    kn_capture_udp((const struct sockaddr *)&r->local, (const struct sockaddr *)&to->ss, buf, len,
                   KN_PCAPNG_DIR_OUT, NULL);
}

/* The socket is full (or datagrams already wait): libuv's queue, bounded. */
static void udp_queue(struct kn_robot *r, const struct kn_addr *to, const uint8_t *buf, size_t len)
{
    if (uv_udp_get_send_queue_count(&r->udp) >= UDP_QUEUE_MAX) {
        r->send_queue_full++;
        return;
    }
    struct udp_sreq *q = malloc(sizeof *q + len);
    if (!q) {
        r->send_queue_full++;
        return;
    }
    memcpy(q->data, buf, len);
    uv_buf_t b = uv_buf_init((char *)q->data, (unsigned)len);
    if (uv_udp_send(&q->req, &r->udp, &b, 1, (const struct sockaddr *)&to->ss, on_sent) < 0) {
        free(q);
        r->send_errors++;
        return;
    }
    r->send_queued++;
    capture_out(r, to, buf, len);
}

/* One datagram at once: uv_udp_try_send, the queue on UV_EAGAIN. */
static void udp_send_one(struct kn_robot *r, const struct kn_addr *to, const uint8_t *buf,
                         size_t len)
{
    uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
    int rc = uv_udp_try_send(&r->udp, &b, 1, (const struct sockaddr *)&to->ss);
    if (rc >= 0) {
        capture_out(r, to, buf, len);
        return;
    }
    if (rc != UV_EAGAIN) {
        r->send_errors++;
        kn_debug("robot %s: UDP send failed: %s", r->cfg.name, uv_strerror(rc));
        return;
    }
    udp_queue(r, to, buf, len);
}

/* Sends what the turn held, in order, with sendmmsg(2): each datagram is
 * sent, queued or counted as udp_send_one would. Behind datagrams already
 * queued, or when the socket is full (EAGAIN, ENOBUFS: uv_udp_try_send's
 * UV_EAGAIN), the rest go to the queue; any other error belongs to the
 * first datagram not sent, which is counted and skipped. */
static void out_flush(struct kn_robot *r)
{
    struct mmsghdr msg[OUT_BATCH_MAX];
    struct iovec iov[OUT_BATCH_MAX];
    size_t i = 0, n = r->nout;
    uv_os_fd_t fd = -1;
    r->nout = 0;
    uv_check_stop(&r->flush);
    if (uv_fileno((const uv_handle_t *)&r->udp, &fd) != 0)
        fd = -1;
    while (i < n) {
        struct out_dgram *o = r->out + i;
        if (fd < 0 || uv_udp_get_send_queue_count(&r->udp) > 0) {
            udp_send_one(r, &o->to, o->data, o->len); /* keeps the queue's order */
            i++;
            continue;
        }
        size_t k = n - i;
        for (size_t j = 0; j < k; j++) {
            iov[j].iov_base = o[j].data;
            iov[j].iov_len = o[j].len;
            memset(&msg[j], 0, sizeof msg[j]);
            msg[j].msg_hdr.msg_name = &o[j].to.ss;
            msg[j].msg_hdr.msg_namelen = o[j].to.len;
            msg[j].msg_hdr.msg_iov = &iov[j];
            msg[j].msg_hdr.msg_iovlen = 1;
        }
        int sent;
        do
            sent = sendmmsg(fd, msg, (unsigned)k, 0);
        while (sent < 0 && errno == EINTR);
        if (sent > 0) {
            for (int j = 0; j < sent; j++)
                capture_out(r, &o[j].to, o[j].data, o[j].len);
            i += (size_t)sent;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
            for (; i < n; i++)
                udp_queue(r, &r->out[i].to, r->out[i].data, r->out[i].len);
        } else {
            r->send_errors++;
            kn_debug("robot %s: UDP send failed: %s", r->cfg.name, strerror(errno));
            i++;
        }
    }
}

static void on_flush(uv_check_t *h)
{
    out_flush(h->data);
}

/* Holds a datagram for the turn's sendmmsg(2): the flush check sends it
 * once the loop has handled what was ready to read. */
static void udp_send_now(struct kn_robot *r, const struct kn_addr *to, const uint8_t *buf,
                         size_t len)
{
    if (r->out_closed || len > OUT_DGRAM_MAX || to->len > sizeof to->ss) {
        udp_send_one(r, to, buf, len);
        return;
    }
    if (r->nout == r->out_cap) {
        size_t cap = r->out_cap ? r->out_cap * 2 : 4;
        struct out_dgram *grown =
            cap <= OUT_BATCH_MAX ? realloc(r->out, cap * sizeof *grown) : NULL;
        if (grown) {
            r->out = grown;
            r->out_cap = cap;
        } else {
            out_flush(r); /* full, or no memory to grow: send what is held */
        }
    }
    if (r->nout == r->out_cap) { /* no memory at all: at once */
        udp_send_one(r, to, buf, len);
        return;
    }
    struct out_dgram *o = &r->out[r->nout++];
    o->to = *to;
    o->len = len;
    memcpy(o->data, buf, len);
    uv_check_start(&r->flush, on_flush);
}

static void deliver_out(void *ctx, const void *item, size_t len)
{
    struct kn_addr to;
    memcpy(&to, item, sizeof to);
    udp_send_now(ctx, &to, (const uint8_t *)item + sizeof to, len - sizeof to);
}

static void rules_send(void *ctx, const struct kn_addr *to, const uint8_t *buf, size_t len)
{
    struct kn_robot *r = ctx;
#ifdef KN_HAVE_KEYS
    uint8_t signed_buf[KN_KRP_MAX_DGRAM + KN_KRPMAC_TRAILER];
    if (r->replay && len <= KN_KRP_MAX_DGRAM) {
        memcpy(signed_buf, buf, len);
        r->key_counter = kn_krpmac_counter_next(r->key_counter, wall_us());
        len = kn_krpmac_sign(&r->key, r->key_counter, signed_buf, len, sizeof signed_buf);
        buf = signed_buf;
    }
#endif
    if (!kn_faults_active(r->faults, KN_FAULT_KRP_OUT) || len > sizeof out_item - sizeof *to) {
        udp_send_now(r, to, buf, len);
        return;
    }
    memcpy(out_item, to, sizeof *to);
    memcpy(out_item + sizeof *to, buf, len);
    kn_faults_submit(r->faults, KN_FAULT_KRP_OUT, out_item, sizeof *to + len);
}

/* Session tokens from the kernel's random source, so one cannot be
 * guessed from another. */
static uint32_t rules_random32(void *ctx)
{
    (void)ctx;
    uint32_t v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
        v = (uint32_t)uv_hrtime() * 2654435761u; /* never short for 4 bytes; still a value */
    return v;
}

static void deliver_sim(void *ctx, const void *item, size_t len)
{
    struct kn_robot *r = ctx;
    struct sim_item it;
    (void)len;
    memcpy(&it, item, sizeof it);
    kn_link_command(r->link, &it.cmd, it.t_rx);
}

static void rules_command(void *ctx, const struct kn_command *cmd, uint64_t t_rx)
{
    struct kn_robot *r = ctx;
    if (r->halting || !kn_faults_active(r->faults, KN_FAULT_SIM)) {
        kn_link_command(r->link, cmd, t_rx);
        return;
    }
    struct sim_item it = { .cmd = *cmd, .t_rx = t_rx };
    kn_faults_submit(r->faults, KN_FAULT_SIM, &it, sizeof it);
}

/* ---- world -> rules -------------------------------------------------- */

/* The world description WORLD_REQ is answered from: what the backend
 * knows now (a spawned engine's files), built again whenever the link
 * comes up, since a re-spawned engine may run a file that changed. */
static void update_world(struct kn_robot *r)
{
    const char *terrain = NULL, *robot = NULL;
    if (r->cfg.backend.kind == KN_BACKEND_ENGINE)
        kn_engine_world_files(r->link, &terrain, &robot);
    char note[1024];
    size_t len = 0;
    char *doc = kn_worlddoc_build(r->ops->name, robot, terrain, &len, note, sizeof note);
    if (!doc || kn_rules_set_world(r->rules, doc, len) < 0)
        kn_warn("robot %s: no world description: out of memory", r->cfg.name);
    else if (note[0] && strcmp(note, r->world_note) != 0)
        kn_warn("robot %s: world description incomplete: %s", r->cfg.name, note);
    snprintf(r->world_note, sizeof r->world_note, "%s", note);
    free(doc);
}

/* An engine at an address told the world it runs (KENAF {Cmd World}):
 * the description from that, once the engine's loaders took it; one that
 * does not read stays without terrain (as before the answer), warned and
 * counted. */
static void link_world(void *ctx, const char *text, size_t textlen)
{
    struct kn_robot *r = ctx;
    (void)textlen;
    char note[1024];
    size_t len = 0;
    char *doc = kn_worlddoc_from_engine(r->ops->name, text, &len, note, sizeof note);
    if (!doc || kn_rules_set_world(r->rules, doc, len) < 0) {
        kn_warn("robot %s: no world description: out of memory", r->cfg.name);
    } else if (note[0]) {
        r->world_bad++;
        kn_warn("robot %s: the engine's world answer is refused: %s", r->cfg.name, note);
    } else {
        r->world_answers++;
        kn_info("robot %s: world description from the engine's answer (%zu bytes)", r->cfg.name,
                len);
    }
    snprintf(r->world_note, sizeof r->world_note, "%s", note);
    free(doc);
}

static void link_up(void *ctx, bool up)
{
    struct kn_robot *r = ctx;
    if (up)
        update_world(r);
    kn_rules_backend(r->rules, up);
    if (r->on_link)
        r->on_link(r->ctx, r, up);
}

static void link_lacks(void *ctx, unsigned lacks)
{
    struct kn_robot *r = ctx;
    kn_rules_lacks(r->rules, lacks & KN_LINK_NO_MODEL, lacks & KN_LINK_NO_FLIPPERS,
                   lacks & KN_LINK_NO_DRIVE);
}

static void link_state(void *ctx, const struct kn_state *s, uint64_t now)
{
    struct kn_robot *r = ctx;
    kn_rules_state(r->rules, s, now);
}

/* Lockstep: a STEP through the link, and its end back to the rules. */
static int rules_step(void *ctx, uint32_t advance_us)
{
    struct kn_robot *r = ctx;
    return kn_link_step(r->link, advance_us);
}

/* A judged trial: its state to the rules, a reset or an e-stop to the link. */
static int rules_trial(void *ctx, bool reset)
{
    struct kn_robot *r = ctx;
    return kn_link_trial_cmd(r->link, reset);
}

static void link_trial(void *ctx, const struct kn_krp_trial *t)
{
    struct kn_robot *r = ctx;
    kn_rules_trial(r->rules, t);
}

static void link_stepped(void *ctx, bool ok)
{
    struct kn_robot *r = ctx;
    kn_rules_stepped(r->rules, ok, uv_hrtime());
}

/* The allow-lists, before faults and rules see a datagram: one from an
 * unlisted address gets no answer at all (a scanner learns nothing), a
 * driving command from an observer-only address an ERROR. */
static bool admitted(struct kn_robot *r, const struct sockaddr *addr, const struct kn_addr *from,
                     const uint8_t *buf, size_t len, uint64_t now)
{
    enum kn_access_verdict v = kn_access_check(&r->cfg.access, addr, buf, len);
    if (v == KN_ACCESS_PASS)
        return true;
    kn_capture_udp(addr, (const struct sockaddr *)&r->local, buf, len, KN_PCAPNG_DIR_IN,
                   v == KN_ACCESS_DROP ? "not in the allow-lists: dropped"
                                       : "observer only: refused");
    if (v == KN_ACCESS_DROP) {
        r->access_dropped++;
        return false;
    }
    r->access_refused++;
    kn_rules_refuse(r->rules, from, buf, len, KN_KRP_ERR_NOT_ALLOWED, now);
    return false;
}

/* The shared key, before anything else: a datagram without a valid MAC,
 * or one the key's replay filter refuses (taken before, whoever sent it,
 * or its counter outside the window or below the floor), is dropped
 * without answer and counted by reason; a good one loses its trailer
 * (*len) and goes on as plain KRP/1. */
static bool key_verified(struct kn_robot *r, const struct sockaddr *addr, uint8_t *buf, size_t *len)
{
#ifdef KN_HAVE_KEYS
    if (!r->replay)
        return true;
    uint64_t ctr = 0;
    size_t n = *len;
    enum kn_krpmac_verdict v = kn_krpmac_verify(&r->key, buf, &n, &ctr);
    const char *why = kn_krpmac_verdict_name(v);
    if (v == KN_KRPMAC_OK) {
        enum kn_krpreplay_verdict f =
            kn_krpreplay_check(r->replay, ctr, kn_krpmac_mac(buf, n), (uint64_t)wall_us());
        if (f == KN_KRPREPLAY_OK) {
            r->key_accepted++;
            *len = n;
            return true;
        }
        r->key_refused[f]++;
        why = kn_krpreplay_verdict_name(f);
        kn_krpmac_unverify(buf, n); /* verified first: captured as it arrived */
    } else {
        (*(v == KN_KRPMAC_MISSING ? &r->key_missing : &r->key_bad))++;
    }
    char note[64];
    snprintf(note, sizeof note, "shared key: %s, dropped", why);
    kn_capture_udp(addr, (const struct sockaddr *)&r->local, buf, *len, KN_PCAPNG_DIR_IN, note);
    return false;
#else
    (void)r, (void)addr, (void)buf, (void)len;
    return true;
#endif
}

void kn_robot_on_datagram(struct kn_robot *r, ssize_t nread, const uv_buf_t *buf,
                          const struct sockaddr *addr)
{
    uint64_t now = uv_hrtime();
    kn_coalesce_note(now);
    struct kn_addr from;
    if (kn_addr_set(&from, addr) < 0)
        return;
    size_t len = (size_t)nread;
    if (!key_verified(r, addr, (uint8_t *)buf->base, &len))
        return;
    nread = (ssize_t)len;
    if (!admitted(r, addr, &from, (const uint8_t *)buf->base, (size_t)nread, now))
        return;
    if (!kn_faults_active(r->faults, KN_FAULT_KRP_IN)) {
        kn_capture_udp(addr, (const struct sockaddr *)&r->local, buf->base, (size_t)nread,
                       KN_PCAPNG_DIR_IN, NULL);
        kn_rules_datagram(r->rules, &from, (const uint8_t *)buf->base, (size_t)nread, now);
        reschedule(r);
        return;
    }
    struct kn_fault_decision d;
    kn_faults_decide(r->faults, KN_FAULT_KRP_IN, &d);
    if (kn_capture_on()) {
        char note[96];
        kn_fault_describe(&d, note, sizeof note);
        kn_capture_udp(addr, (const struct sockaddr *)&r->local, buf->base, (size_t)nread,
                       KN_PCAPNG_DIR_IN, note[0] ? note : NULL);
    }
    memcpy(in_item, &from, sizeof from);
    memcpy(in_item + sizeof from, buf->base, (size_t)nread);
    kn_faults_apply(r->faults, KN_FAULT_KRP_IN, &d, in_item, sizeof from + (size_t)nread);
}

static void deliver_in(void *ctx, const void *item, size_t len)
{
    struct kn_robot *r = ctx;
    struct kn_addr from;
    memcpy(&from, item, sizeof from);
    kn_rules_datagram(r->rules, &from, (const uint8_t *)item + sizeof from, len - sizeof from,
                      uv_hrtime());
    reschedule(r);
}

static void on_tick(uv_timer_t *t)
{
    struct kn_robot *r = t->data;
    r->deadline = 0;
    kn_rules_tick(r->rules, uv_hrtime());
    reschedule(r);
}

/* Every CRAWLER feeds the watchdog and so moves the next deadline a
 * little later: a timer already armed for an earlier one is left alone
 * (no timer heap work per datagram); it fires early, kn_rules_tick finds
 * nothing due yet, and on_tick arms it for the deadline of then. */
static void reschedule(struct kn_robot *r)
{
    uint64_t d = kn_rules_next_deadline(r->rules);
    if (d == r->deadline || (d != UINT64_MAX && r->deadline != 0 && d > r->deadline))
        return;
    r->deadline = d;
    if (d == UINT64_MAX) {
        uv_timer_stop(&r->timer);
        return;
    }
    uint64_t now = uv_hrtime();
    uint64_t ms = d > now ? (d - now + 999999) / 1000000 : 0;
    uv_timer_start(&r->timer, on_tick, ms, 0);
}

/* ---- life cycle ------------------------------------------------------ */

static int resolve(const char *host, uint16_t port, struct sockaddr_storage *ss)
{
    if (uv_ip4_addr(host, port, (struct sockaddr_in *)ss) == 0)
        return 0;
    if (uv_ip6_addr(host, port, (struct sockaddr_in6 *)ss) == 0)
        return 0;
    return UV_EINVAL;
}

static void free_robot(struct kn_robot *r)
{
    void (*done)(void *) = r->done;
    void *arg = r->done_arg;
    kn_rules_free(r->rules);
    kn_faults_free(r->faults); /* no-op when kn_robot_stop freed them */
#ifdef KN_HAVE_KEYS
    kn_keyring_put(r->replay);
#endif
    free(r->out);
    free(r);
    if (done)
        done(arg);
}

void kn_robot_part_closed(struct kn_robot *r)
{
    if (--r->open == 0)
        free_robot(r);
}

static void on_handle_closed(uv_handle_t *h)
{
    kn_robot_part_closed(h->data);
}

static void on_link_closed(void *arg)
{
    kn_robot_part_closed(arg);
}

int kn_robot_start(uv_loop_t *loop, const struct kn_cfg_robot *cfg, kn_robot_link_fn on_link,
                   void *ctx, struct kn_robot **out, char *err, size_t errlen)
{
    *out = NULL;
    const struct kn_backend_ops *ops = kn_backend_find(cfg->backend.kind);
    if (!ops && kn_backend_error(cfg->backend.kind)) {
        snprintf(err, errlen, "robot %s: backend \"%s\": %s", cfg->name,
                 kn_backend_kind_name(cfg->backend.kind), kn_backend_error(cfg->backend.kind));
        return -1;
    }
    if (!ops) {
        snprintf(err, errlen, "robot %s: backend \"%s\" is not built in (built: %s)", cfg->name,
                 kn_backend_kind_name(cfg->backend.kind), kn_backend_built_list());
        return -1;
    }
    struct sockaddr_storage ss;
    if (resolve(cfg->bind_host, cfg->port, &ss) < 0) {
        snprintf(err, errlen,
                 "robot %s: listen address \"%s\" is not a numeric IPv4 or IPv6 address", cfg->name,
                 cfg->bind_host);
        return -1;
    }
    struct kn_robot *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "robot %s: out of memory", cfg->name);
        return -1;
    }
    r->loop = loop;
    r->rx_fd = -1;
    r->cfg = *cfg;
    r->ops = ops;
    r->on_link = on_link;
    r->ctx = ctx;
    r->started_ns = uv_hrtime();
    r->deadline = UINT64_MAX;
#ifdef KN_HAVE_KEYS
    if (cfg->key_len > 0) {
        /* A key no robot holds yet gets a filter whose floor is now:
         * nothing signed before this start passes (docs/protocol.md,
         * "Counters and replay"). The counter signed with starts there too
         * and follows the clock (kn_krpmac_counter_next). */
        int64_t now = wall_us();
        r->replay = kn_krpmac_key_set(&r->key, cfg->key, cfg->key_len) == 0
                        ? kn_keyring_get(cfg->key, cfg->key_len, (uint64_t)now)
                        : NULL;
        if (!r->replay) {
            snprintf(err, errlen, "robot %s: cannot set up its shared key (%zu bytes)", cfg->name,
                     cfg->key_len);
            free(r);
            return -1;
        }
    }
#endif

    int rc = uv_udp_init_ex(loop, &r->udp, (unsigned)ss.ss_family);
    if (rc < 0) {
        snprintf(err, errlen, "robot %s: cannot open a UDP socket: %s", cfg->name, uv_strerror(rc));
        free_robot(r); /* no handle yet */
        return -1;
    }
    r->udp.data = r;
    uv_check_init(loop, &r->flush);
    r->flush.data = r;
    rc = uv_udp_bind(&r->udp, (const struct sockaddr *)&ss, 0);
    if (rc < 0) {
        snprintf(err, errlen, "robot %s: cannot bind UDP %s%s%s:%u: %s", cfg->name,
                 ss.ss_family == AF_INET6 ? "[" : "", cfg->bind_host,
                 ss.ss_family == AF_INET6 ? "]" : "", cfg->port, uv_strerror(rc));
        r->open = 2;
        uv_close((uv_handle_t *)&r->udp, on_handle_closed);
        uv_close((uv_handle_t *)&r->flush, on_handle_closed);
        return -1;
    }
    /* A daemon descheduled on a shared machine must not lose a burst of
     * set-points: ask for 1 MiB of receive buffer. The kernel caps it at
     * net.core.rmem_max; a refusal leaves the default, which still works. */
    int rcvbuf = 1 << 20;
    (void)uv_recv_buffer_size((uv_handle_t *)&r->udp, &rcvbuf);

    struct sockaddr_storage bound;
    int blen = sizeof bound;
    struct kn_addr ba;
    memcpy(&r->local, &ss, sizeof ss);
    snprintf(r->listen, sizeof r->listen, "%s:%u", cfg->bind_host, cfg->port);
    if (uv_udp_getsockname(&r->udp, (struct sockaddr *)&bound, &blen) == 0) {
        memcpy(&r->local, &bound, sizeof bound);
        if (kn_addr_set(&ba, (struct sockaddr *)&bound) == 0)
            kn_addr_format(&ba, r->listen, sizeof r->listen);
    }

    struct kn_rules_params p;
    memset(&p, 0, sizeof p);
    snprintf(p.name, sizeof p.name, "%s", cfg->name);
    p.backend_id = ops->krp_id;
    p.capabilities = ops->capabilities;
#ifdef KN_HAVE_KEYS
    if (r->replay)
        p.capabilities |= KN_KRPMAC_CAP_KEY;
#endif
    p.counts_per_m = cfg->counts_per_m;
    p.max_speed_mm_s = cfg->max_speed_mm_s;
    p.flipper_min_cdeg = cfg->flipper_min_cdeg;
    p.flipper_max_cdeg = cfg->flipper_max_cdeg;
    p.watchdog_ms = cfg->watchdog_ms;
    p.stale_ms = cfg->backend.stale_ms;
    p.battery_v = cfg->battery_v;
    p.hello_to_drive = cfg->hello_to_drive;
    if (cfg->backend.lockstep && ops->step) {
        p.lockstep = true;
        p.capabilities |= KN_KRP_CAP_LOCKSTEP;
    }
    for (size_t i = 0; i < cfg->n_consoles && p.n_consoles < KN_RULES_MAX_CONSOLES; i++) {
        struct sockaddr_storage cs;
        if (resolve(cfg->consoles[i].host, cfg->consoles[i].port, &cs) == 0 &&
            kn_addr_set(&p.consoles[p.n_consoles], (struct sockaddr *)&cs) == 0)
            p.n_consoles++;
    }
    struct kn_rules_io io = { .ctx = r,
                              .send = rules_send,
                              .command = rules_command,
                              .random32 = rules_random32,
                              .step = rules_step,
                              .trial = rules_trial };
    r->rules = kn_rules_new(&p, &io, uv_hrtime());
    struct kn_link_events ev = {
        .ctx = r, .up = link_up, .state = link_state, .lacks = link_lacks
    };
    r->faults =
        r->rules ? kn_faults_new(loop, cfg->name, &cfg->faults_krp, &cfg->faults_sim) : NULL;
    r->link = r->faults ? kn_link_new(loop, cfg, ops, &ev) : NULL;
    if (r->link) {
        kn_link_on_step(r->link, link_stepped, r);
        kn_link_on_trial(r->link, link_trial, r);
        kn_link_on_world(r->link, link_world, r);
    }
    if (!r->link) {
        snprintf(err, errlen, "robot %s: out of memory", cfg->name);
        r->open = 2;
        uv_close((uv_handle_t *)&r->udp, on_handle_closed);
        uv_close((uv_handle_t *)&r->flush, on_handle_closed);
        return -1;
    }
    kn_faults_set_allowed(r->faults, cfg->fault_injection);
    kn_faults_set_sink(r->faults, KN_FAULT_KRP_IN, deliver_in, r);
    kn_faults_set_sink(r->faults, KN_FAULT_KRP_OUT, deliver_out, r);
    kn_faults_set_sink(r->faults, KN_FAULT_SIM, deliver_sim, r);
    update_world(r);
    uv_timer_init(loop, &r->timer);
    r->timer.data = r;
    rc = kn_robot_rx_start(r);
    if (rc < 0) {
        snprintf(err, errlen, "robot %s: cannot receive on UDP %s: %s", cfg->name, r->listen,
                 uv_strerror(rc));
        kn_robot_stop(r, NULL, NULL);
        return -1;
    }
    kn_info("robot %s: KRP/1 on udp %s, simulator backend %s", cfg->name, r->listen, ops->name);
    kn_link_start(r->link);
    *out = r;
    return 0;
}

void kn_robot_stop(struct kn_robot *r, void (*done)(void *arg), void *arg)
{
    r->done = done;
    r->done_arg = arg;
    r->on_link = NULL;
    /* The last thing the simulator hears from this robot: belts 0, past
     * any fault injection; what the injector still holds is discarded. */
    r->halting = true;
    kn_rules_halt(r->rules, uv_hrtime());
    kn_faults_free(r->faults);
    r->faults = NULL;
    out_flush(r); /* what this turn answered still goes out */
    r->out_closed = true;
    r->open = 4;
    kn_robot_rx_close(r);
    uv_close((uv_handle_t *)&r->flush, on_handle_closed);
    uv_close((uv_handle_t *)&r->udp, on_handle_closed);
    uv_close((uv_handle_t *)&r->timer, on_handle_closed);
    kn_link_close(r->link, on_link_closed, r);
}

const char *kn_robot_name(const struct kn_robot *r)
{
    return r->cfg.name;
}

const char *kn_robot_listen(const struct kn_robot *r)
{
    return r->listen;
}

bool kn_robot_link_up(const struct kn_robot *r)
{
    return kn_link_is_up(r->link);
}

/* ---- stats ----------------------------------------------------------- */

/* The types this side expects always appear; others only when seen. */
static void add_types(cJSON *o, const uint64_t *count, uint64_t total, bool to_robot)
{
    cJSON_AddNumberToObject(o, "total", (double)total);
    for (unsigned t = 0; t < 256; t++) {
        const char *n = kn_krp_type_name((uint8_t)t);
        if (n && (kn_krp_is_to_robot((uint8_t)t) == to_robot || count[t]))
            cJSON_AddNumberToObject(o, n, (double)count[t]);
    }
}

static const char *engager_kind[] = {
    [KN_RULES_ENG_PLAIN] = "plain",
    [KN_RULES_ENG_SESSION] = "session",
    [KN_RULES_ENG_CONSOLE] = "console",
    [KN_RULES_ENG_ADMIN] = "admin",
};

/* The e-stop circuit: every engagement that holds, and from whom. */
static void estop_stats(struct kn_robot *r, cJSON *o, uint64_t now)
{
    const struct kn_rules_stats *st = kn_rules_stats(r->rules);
    const struct kn_rules_engagement *e;
    unsigned n = kn_rules_estop(r->rules, &e);
    char a[80];
    cJSON *je = cJSON_AddObjectToObject(o, "estop");
    cJSON_AddNumberToObject(je, "engaged", n);
    cJSON *by = cJSON_AddArrayToObject(je, "by");
    for (unsigned i = 0; i < n; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToArray(by, x);
        cJSON_AddStringToObject(x, "kind", engager_kind[e[i].kind]);
        if (e[i].kind != KN_RULES_ENG_ADMIN) {
            kn_addr_format(&e[i].addr, a, sizeof a);
            cJSON_AddStringToObject(x, "addr", a);
        }
        cJSON_AddStringToObject(x, "name", e[i].name);
        cJSON_AddNumberToObject(x, "held_s", (double)(now - e[i].since_ns) / 1e9);
        cJSON_AddBoolToObject(x, "present", kn_rules_engager_present(r->rules, &e[i], now));
    }
    cJSON_AddNumberToObject(je, "engagements", (double)st->estop_engagements);
    cJSON_AddNumberToObject(je, "released", (double)st->estop_released);
    cJSON_AddNumberToObject(je, "console_resets", (double)st->estop_console_resets);
    cJSON_AddNumberToObject(je, "admin_resets", (double)st->estop_admin_resets);
    cJSON_AddNumberToObject(je, "release_refused", (double)st->estop_release_refused);
    cJSON_AddNumberToObject(je, "table_full", (double)st->estop_table_full);
    /* the engagement made last, as before the circuit had several */
    if (n && e[n - 1].kind != KN_RULES_ENG_ADMIN) {
        kn_addr_format(&e[n - 1].addr, a, sizeof a);
        cJSON_AddStringToObject(o, "estop_by", a);
    } else if (n) {
        cJSON_AddStringToObject(o, "estop_by", "admin");
    } else {
        cJSON_AddNullToObject(o, "estop_by");
    }
}

char *kn_robot_estop_command(struct kn_robot *r, const char *action, const char *who)
{
    uint64_t now = uv_hrtime();
    unsigned before = kn_rules_estop(r->rules, NULL);
    if (!strcmp(action, "release")) {
        kn_rules_estop_reset(r->rules);
        kn_info("robot %s: e-stop reset by %s (%u engagement%s released)", r->cfg.name, who, before,
                before == 1 ? "" : "s");
    } else if (!strcmp(action, "engage")) {
        kn_rules_estop_engage(r->rules, who, now);
        kn_info("robot %s: e-stop engaged by %s", r->cfg.name, who);
    } else if (strcmp(action, "status") != 0) {
        return kn_stats_error_reply("usage: estop engage|release|status ROBOT");
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", true);
    cJSON_AddStringToObject(o, "robot", r->cfg.name);
    cJSON_AddStringToObject(o, "action", action);
    cJSON_AddNumberToObject(o, "engaged_before", before);
    estop_stats(r, o, now);
    cJSON_DeleteItemFromObject(o, "estop_by");
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return t;
}

/* Who drives, who holds the e-stop, and how sessions came and went. */
static void session_stats(struct kn_robot *r, cJSON *o, uint64_t now)
{
    const struct kn_rules_stats *st = kn_rules_stats(r->rules);
    char a[80];
    const struct kn_peer *d = kn_rules_driver(r->rules);
    if (d) {
        cJSON *jd = cJSON_AddObjectToObject(o, "driver");
        kn_addr_format(&d->addr, a, sizeof a);
        cJSON_AddStringToObject(jd, "addr", a);
        cJSON_AddStringToObject(jd, "name", d->name);
        cJSON_AddBoolToObject(jd, "session", d->session);
        cJSON_AddBoolToObject(jd, "console", d->console);
        cJSON_AddBoolToObject(jd, "idle", kn_rules_driver_idle(r->rules, now));
    } else {
        cJSON_AddNullToObject(o, "driver");
    }
    estop_stats(r, o, now);
    cJSON_AddNumberToObject(o, "active", kn_rules_sessions(r->rules));
    cJSON_AddNumberToObject(o, "opened", (double)st->sessions_opened);
    cJSON_AddNumberToObject(o, "closed", (double)st->sessions_closed);
    cJSON_AddNumberToObject(o, "expired", (double)st->sessions_expired);
    cJSON_AddNumberToObject(o, "driver_claims", (double)st->driver_claims);
    cJSON_AddNumberToObject(o, "driver_takeovers", (double)st->driver_takeovers);
    cJSON_AddNumberToObject(o, "driver_idle_claims", (double)st->driver_idle_claims);
    cJSON_AddNumberToObject(o, "driver_released", (double)st->driver_released);
    cJSON_AddNumberToObject(o, "driver_watchdog", (double)st->driver_watchdog);
    cJSON_AddNumberToObject(o, "not_owner", (double)st->not_owner);
    cJSON_AddNumberToObject(o, "estop_release_refused", (double)st->estop_release_refused);
    cJSON_AddNumberToObject(o, "bad_session", (double)st->bad_session);
}

void kn_robot_stats(struct kn_robot *r, cJSON *arr)
{
    uint64_t now = uv_hrtime();
    const struct kn_rules_stats *st = kn_rules_stats(r->rules);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "name", r->cfg.name);
    cJSON_AddStringToObject(o, "listen", r->listen);
    cJSON_AddNumberToObject(o, "uptime_s", (double)(now - r->started_ns) / 1e9);

    uint16_t f = kn_rules_flags(r->rules, now);
    cJSON *fl = cJSON_AddObjectToObject(o, "flags");
    cJSON_AddBoolToObject(fl, "ESTOP", f & KN_KRP_ST_ESTOP);
    cJSON_AddBoolToObject(fl, "BACKEND_UP", f & KN_KRP_ST_BACKEND_UP);
    cJSON_AddBoolToObject(fl, "SIMULATED", f & KN_KRP_ST_SIMULATED);
    cJSON_AddBoolToObject(fl, "WATCHDOG", f & KN_KRP_ST_WATCHDOG);
    cJSON_AddBoolToObject(fl, "CLAMPED", f & KN_KRP_ST_CLAMPED);
    cJSON_AddBoolToObject(fl, "STALE", f & KN_KRP_ST_STALE);

    add_types(cJSON_AddObjectToObject(o, "datagrams_in"), st->in_type, st->in_total, true);
    add_types(cJSON_AddObjectToObject(o, "datagrams_out"), st->out_type, st->out_total, false);

    cJSON *env = cJSON_AddObjectToObject(o, "envelope");
    cJSON_AddNumberToObject(env, "bad_magic", (double)st->envelope[KN_KRP_EMAGIC]);
    cJSON_AddNumberToObject(env, "short", (double)st->envelope[KN_KRP_ESHORT]);
    cJSON_AddNumberToObject(env, "too_big", (double)st->envelope[KN_KRP_ETOOBIG]);
    cJSON_AddNumberToObject(env, "bad_version", (double)st->envelope[KN_KRP_EVERSION]);
    cJSON_AddNumberToObject(env, "bad_length", (double)st->envelope[KN_KRP_ELENGTH]);
    cJSON_AddNumberToObject(env, "unknown_type", (double)st->envelope[KN_KRP_ETYPE]);
    cJSON_AddNumberToObject(env, "bad_payload_length", (double)st->envelope[KN_KRP_EPAYLOAD]);
    cJSON_AddNumberToObject(env, "not_to_robot", (double)st->not_to_robot);

    cJSON *e = cJSON_AddObjectToObject(o, "errors");
    double other = 0;
    for (int c = 0; c < KN_KRP_ERR_CODES; c++) {
        const char *name = kn_krp_error_name((uint8_t)c);
        if (name)
            cJSON_AddNumberToObject(e, name, (double)st->errors_sent[c]);
        else
            other += (double)st->errors_sent[c];
    }
    cJSON_AddNumberToObject(e, "other", other); /* codes without a name: none sent today */

    cJSON *d = cJSON_AddObjectToObject(o, "drops");
    cJSON_AddNumberToObject(d, "bad_magic", (double)st->drop_bad_magic);
    cJSON_AddNumberToObject(d, "rate_limited", (double)st->drop_rate_limited);
    cJSON_AddNumberToObject(d, "stale_seq", (double)st->drop_stale_seq);
    cJSON_AddNumberToObject(d, "estop_refused", (double)st->estop_refused);
    cJSON_AddNumberToObject(d, "estop_bad_value", (double)st->estop_bad_value);
    cJSON_AddNumberToObject(d, "subscribe_busy", (double)st->sub_busy);
    cJSON_AddNumberToObject(d, "peer_table_full", (double)st->peers_overflow);
    cJSON_AddNumberToObject(d, "udp_send_failed", (double)r->send_errors);
    cJSON_AddNumberToObject(d, "udp_queue_full", (double)r->send_queue_full);
    cJSON_AddNumberToObject(d, "udp_recv_errors", (double)r->recv_errors);

    cJSON *rl = cJSON_AddObjectToObject(o, "rules");
    cJSON_AddNumberToObject(rl, "commands", (double)st->commands);
    cJSON_AddNumberToObject(rl, "clamped", (double)st->clamped);
    cJSON_AddNumberToObject(rl, "watchdog_trips", (double)st->watchdog_trips);
    cJSON_AddNumberToObject(rl, "estop_engaged", (double)st->estop_engaged);
    cJSON_AddNumberToObject(rl, "while_backend_down", (double)st->while_backend_down);
    cJSON_AddNumberToObject(rl, "while_no_model", (double)st->while_no_model);
    cJSON_AddNumberToObject(rl, "no_actuator", (double)st->no_actuator);
    cJSON_AddNumberToObject(rl, "udp_send_queued", (double)r->send_queued);
    cJSON_AddNumberToObject(rl, "world_bad_offset", (double)st->world_bad_offset);
    cJSON_AddNumberToObject(rl, "world_answers", (double)r->world_answers);
    cJSON_AddNumberToObject(rl, "world_answers_bad", (double)r->world_bad);
    cJSON_AddNumberToObject(rl, "steps", (double)st->steps);
    cJSON_AddNumberToObject(rl, "steps_done", (double)st->steps_done);
    cJSON_AddNumberToObject(rl, "steps_failed", (double)st->steps_failed);
    cJSON_AddNumberToObject(rl, "step_refused", (double)st->step_refused);
    cJSON_AddNumberToObject(rl, "step_busy", (double)st->step_busy);
    cJSON_AddNumberToObject(rl, "step_range", (double)st->step_range);
    cJSON_AddBoolToObject(rl, "trial", kn_rules_has_trial(r->rules));
    cJSON_AddNumberToObject(rl, "trial_states", (double)st->trial_states);
    cJSON_AddNumberToObject(rl, "trial_reqs", (double)st->trial_reqs);
    cJSON_AddNumberToObject(rl, "trial_resets", (double)st->trial_resets);
    cJSON_AddNumberToObject(rl, "trial_refused", (double)st->trial_refused);
    cJSON_AddNumberToObject(rl, "trial_range", (double)st->trial_range);
    cJSON_AddNumberToObject(rl, "no_trial", (double)st->no_trial);
    cJSON_AddNumberToObject(rl, "trial_estops", (double)st->trial_estops);

    cJSON *sb = cJSON_AddObjectToObject(o, "subscriptions");
    cJSON_AddNumberToObject(sb, "active", kn_rules_subscribers(r->rules));
    cJSON_AddNumberToObject(sb, "max", KN_RULES_MAX_SUBS);
    cJSON_AddNumberToObject(sb, "pushes", (double)st->sub_pushes);
    cJSON_AddNumberToObject(sb, "clamped", (double)st->sub_clamped);
    cJSON_AddNumberToObject(sb, "busy", (double)st->sub_busy);
    cJSON_AddNumberToObject(sb, "lapsed", (double)st->sub_lapsed);
    cJSON_AddNumberToObject(sb, "cancelled", (double)st->sub_cancelled);

    session_stats(r, cJSON_AddObjectToObject(o, "sessions"), now);

    struct kn_peers *pt = kn_rules_peers(r->rules);
    cJSON *pe = cJSON_AddObjectToObject(o, "peers");
    cJSON_AddNumberToObject(pe, "capacity", pt->cap);
    cJSON_AddNumberToObject(pe, "in_use", pt->used);
    cJSON_AddNumberToObject(pe, "added", (double)st->peers_added);
    cJSON_AddNumberToObject(pe, "evicted", (double)st->peers_evicted);
    cJSON_AddNumberToObject(pe, "overflow", (double)st->peers_overflow);
    cJSON_AddNumberToObject(pe, "marks_forgotten", (double)st->marks_forgotten);
    cJSON *list = cJSON_AddArrayToObject(pe, "recent");
    int shown = 0;
    for (int32_t i = pt->newest; i >= 0 && shown < STATS_PEERS_MAX;
         i = kn_peers_at(pt, i)->older, shown++) {
        const struct kn_peer *p = kn_peers_at(pt, i);
        char a[80];
        kn_addr_format(&p->addr, a, sizeof a);
        cJSON *po = cJSON_CreateObject();
        cJSON_AddItemToArray(list, po);
        cJSON_AddStringToObject(po, "addr", a);
        cJSON_AddStringToObject(po, "name", p->name);
        cJSON_AddNumberToObject(po, "in", (double)p->dgrams_in);
        cJSON_AddNumberToObject(po, "out", (double)p->dgrams_out);
        cJSON_AddNumberToObject(po, "errors", (double)p->errors_sent);
        cJSON_AddNumberToObject(po, "errors_suppressed", (double)p->errors_suppressed);
        cJSON_AddNumberToObject(po, "subscribed_ms", p->sub_period_ms);
        cJSON_AddNumberToObject(po, "idle_ms", (double)(now - p->last_seen_ns) / 1e6);
    }

    cJSON *ac = cJSON_AddObjectToObject(o, "access");
    cJSON_AddBoolToObject(ac, "lists", r->cfg.access.on);
    cJSON_AddNumberToObject(ac, "dropped_not_listed", (double)r->access_dropped);
    cJSON_AddNumberToObject(ac, "refused_observer", (double)r->access_refused);
#ifdef KN_HAVE_KEYS
    if (r->replay) {
        cJSON *k = cJSON_AddObjectToObject(o, "keys");
        cJSON_AddNumberToObject(k, "accepted", (double)r->key_accepted);
        cJSON_AddNumberToObject(k, "missing", (double)r->key_missing);
        cJSON_AddNumberToObject(k, "bad", (double)r->key_bad);
        cJSON_AddNumberToObject(k, "replayed", (double)r->key_refused[KN_KRPREPLAY_REPLAYED]);
        cJSON_AddNumberToObject(k, "too_old", (double)r->key_refused[KN_KRPREPLAY_TOO_OLD]);
        cJSON_AddNumberToObject(k, "too_new", (double)r->key_refused[KN_KRPREPLAY_TOO_NEW]);
        cJSON_AddNumberToObject(k, "below_floor", (double)r->key_refused[KN_KRPREPLAY_FLOOR]);
        /* the key's filter, shared with every robot of the same key */
        cJSON_AddNumberToObject(k, "held", (double)kn_krpreplay_held(r->replay));
        cJSON_AddNumberToObject(k, "evicted", (double)kn_krpreplay_evicted(r->replay));
        cJSON_AddNumberToObject(k, "floor_us", (double)kn_krpreplay_floor(r->replay));
    }
#endif

    if (r->faults)
        kn_faults_stats(r->faults, cJSON_AddObjectToObject(o, "faults"));

    cJSON *b = cJSON_AddObjectToObject(o, "backend");
    kn_link_stats(r->link, b, now);
    cJSON_AddBoolToObject(b, "stale", f & KN_KRP_ST_STALE);
    cJSON *dq = cJSON_GetObjectItemCaseSensitive(b, "commands");
    cJSON *co = dq ? cJSON_GetObjectItemCaseSensitive(dq, "coalesced") : NULL;
    cJSON_AddNumberToObject(d, "queue_coalesced", co ? co->valuedouble : 0);
}
