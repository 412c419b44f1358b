/* The gz backend's messages over ZeroMQ: what the world publishes (clock,
 * the model's pose, its joint states) into the feedback, what we publish
 * (cmd_vel, the flippers' cmd_pos), and the world's control service (the
 * request, its Boolean reply, and the stats socket's "world" command). */
#include "backend_gz_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

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
            b->model_ms = kn_gzsim_now_ms(b);
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

void kn_gzsim_drain_sub(struct gzb *b)
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
        int i = kn_gzsim_topic_by_fqn(b, fqn);
        if (i < 0 || b->topic[i].publish) {
            b->unknown_topic++;
            continue;
        }
        on_data(b, i, &m);
    }
}

void kn_gzsim_drain_resp(struct gzb *b)
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

void kn_gzsim_on_zmq(uv_poll_t *p, int status, int events)
{
    (void)status;
    (void)events;
    struct gzb *b = p->data;
    /* the descriptor only signals that ZMQ_EVENTS may have changed */
    if (p == &b->sub_poll)
        kn_gzsim_drain_sub(b);
    else
        kn_gzsim_drain_resp(b);
}

static int send_frames(void *sock, const struct kn_gzt_frame *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (zmq_send(sock, f[i].p, f[i].n, (i + 1 < n ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT) < 0)
            return -1;
    return 0;
}

void kn_gzsim_publish(struct gzb *b, struct gz_topic *t, const uint8_t *data, size_t n)
{
    if (n > sizeof t->last)
        return;
    memcpy(t->last, data, n);
    t->last_len = n;
    if (b->family < 0)
        return;
    char type[KN_GZT_NAME_MAX];
    kn_gzsim_type_name(b, t->type_short, type, sizeof type);
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
    kn_gzsim_uuid(req_uuid);
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
    struct gzb *b = kn_gzsim_find(robot);
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
