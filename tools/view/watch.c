/* kenaf-view's KRP/1 observer of one robot: see watch.h. */
#include "watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krp_session.h"

/* The world document being fetched: chunk k is bytes [480 k, 480 (k+1)). */
struct fetch {
    bool on;
    uint32_t total; /* 0: not known yet (offset 0 asked first) */
    char *buf;
    uint8_t *got;       /* per chunk */
    uint64_t *asked_ns; /* per chunk, 0: never */
    uint32_t nchunks, nreceived, first_missing;
    uint64_t started_ns, answer_ns, ask0_ns;
};

struct kn_watch {
    struct kn_watch_io io;
    char name[KN_KRP_NAME_LEN + 1];
    uint32_t seq;
    struct kn_krp_session sess; /* an observer's session, where the robot has them */
    bool acked;                 /* HELLO_ACK since the link last went down */
    bool up;                    /* STATUS within the last second */
    bool busy;                  /* subscription refused: polling */
    bool backend_up;            /* the last STATUS's BACKEND_UP */
    uint32_t caps;
    uint64_t hello_ns, sub_ns, poll_ns, status_ns, check_ns;

    char *doc; /* the world the page has, or NULL */
    size_t doc_len;
    bool told; /* the page was told something (doc or null) */
    struct fetch f;

    bool trial_asking; /* the robot has the capability and did not refuse */
    bool trial_told;   /* the page was told a trial (or that there is none) */
    bool trial_have;   /* ... and it was one: trial holds it */
    uint64_t trial_ns; /* the last TRIAL_REQ */
    struct kn_krp_trial trial;

    struct kn_watch_stats st;
};

static uint64_t after(uint64_t t, uint64_t d)
{
    return t + d < t ? UINT64_MAX : t + d;
}

static void send_msg(struct kn_watch *w, struct kn_krp_msg *m)
{
    uint8_t buf[KN_KRP_MAX_DGRAM];
    m->h.seq = ++w->seq;
    kn_krp_session_stamp(&w->sess, m);
    size_t n = kn_krp_encode(m, buf, sizeof buf);
    if (n == 0)
        return;
    w->st.sent[m->h.type]++;
    w->io.send(w->io.ctx, buf, n);
}

static void send_simple(struct kn_watch *w, uint8_t type)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, type, 0, 0);
    if (type == KN_KRP_HELLO) /* to observe: kenaf-view never drives */
        kn_krp_session_hello(&w->sess, &m, w->name, true);
    else if (type == KN_KRP_SUBSCRIBE)
        m.u.subscribe.period_ms = KN_WATCH_SUB_MS;
    send_msg(w, &m);
}

static void send_world_req(struct kn_watch *w, uint32_t offset)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_WORLD_REQ, 0, 0);
    m.u.world_req.offset = offset;
    send_msg(w, &m);
}

/* ---- the world ------------------------------------------------------- */

static void fetch_stop(struct kn_watch *w, uint64_t now)
{
    free(w->f.buf);
    free(w->f.got);
    free(w->f.asked_ns);
    memset(&w->f, 0, sizeof w->f);
    w->check_ns = after(now, KN_WATCH_WORLD_CHECK_NS);
}

static void fetch_start(struct kn_watch *w, uint64_t now)
{
    fetch_stop(w, now);
    w->f.on = true;
    w->f.started_ns = now;
    w->st.world_fetches++;
}

/* The page learns the world (doc) or that there is none (NULL), once per
 * change. */
static void tell_world(struct kn_watch *w, char *doc, size_t len)
{
    if (w->told && !doc && !w->doc) {
        free(doc);
        return;
    }
    if (w->told && doc && w->doc && len == w->doc_len && memcmp(doc, w->doc, len) == 0) {
        free(doc);
        return;
    }
    if (w->told)
        w->st.world_changes++;
    free(w->doc);
    w->doc = doc;
    w->doc_len = doc ? len : 0;
    w->told = true;
    w->io.world(w->io.ctx, w->doc, w->doc_len);
}

static void no_world(struct kn_watch *w, uint64_t now)
{
    fetch_stop(w, now);
    tell_world(w, NULL, 0);
}

static int fetch_size(struct kn_watch *w, uint32_t total)
{
    w->f.total = total;
    w->f.nchunks = (total + KN_KRP_WORLD_CHUNK - 1) / KN_KRP_WORLD_CHUNK;
    w->f.buf = malloc(total);
    w->f.got = calloc(w->f.nchunks, 1);
    w->f.asked_ns = calloc(w->f.nchunks, sizeof *w->f.asked_ns);
    return w->f.buf && w->f.got && w->f.asked_ns ? 0 : -1;
}

/* Asks for what is missing: chunks never asked, or asked more than a
 * retry interval ago, at most KN_WATCH_WORLD_WINDOW in flight. */
static void fetch_pump(struct kn_watch *w, uint64_t now)
{
    if (!w->f.on || !w->up)
        return;
    if (w->f.total == 0) {
        if (!w->f.ask0_ns || now >= after(w->f.ask0_ns, KN_WATCH_WORLD_RETRY_NS)) {
            w->f.ask0_ns = now;
            send_world_req(w, 0);
        }
        return;
    }
    while (w->f.first_missing < w->f.nchunks && w->f.got[w->f.first_missing])
        w->f.first_missing++;
    unsigned inflight = 0;
    for (uint32_t k = w->f.first_missing; k < w->f.nchunks; k++) {
        if (w->f.got[k])
            continue;
        uint64_t a = w->f.asked_ns[k];
        if (a && now < after(a, KN_WATCH_WORLD_RETRY_NS)) {
            inflight++;
        } else if (inflight < KN_WATCH_WORLD_WINDOW) {
            w->f.asked_ns[k] = now;
            inflight++;
            send_world_req(w, k * KN_KRP_WORLD_CHUNK);
        }
        if (inflight >= KN_WATCH_WORLD_WINDOW)
            break;
    }
}

/* A robot that answers STATUS but none of several rounds of WORLD_REQ
 * does not describe its world. */
static void fetch_give_up_check(struct kn_watch *w, uint64_t now)
{
    uint64_t since = w->f.answer_ns > w->f.started_ns ? w->f.answer_ns : w->f.started_ns;
    if (!w->f.on || !w->up || now < after(since, KN_WATCH_WORLD_TRIES * KN_WATCH_WORLD_RETRY_NS))
        return;
    if (w->doc)
        fetch_stop(w, now); /* keep the world we have; try again later */
    else
        no_world(w, now);
}

static bool first_chunk_same(const struct kn_watch *w, const struct kn_krp_world *c)
{
    return w->doc && c->total_len == w->doc_len && c->offset == 0 &&
           memcmp(c->data, w->doc, c->n) == 0;
}

static void on_world(struct kn_watch *w, const struct kn_krp_world *c, uint64_t now)
{
    if (!w->f.on)
        return; /* late answer to a finished fetch */
    w->f.answer_ns = now;
    if (c->total_len == 0) {
        no_world(w, now);
        return;
    }
    if (c->total_len > KN_WATCH_WORLD_MAX) {
        w->st.world_too_big++;
        no_world(w, now);
        return;
    }
    if (w->f.total != c->total_len) {
        /* first answer, or the document changed under the fetch */
        bool first = w->f.total == 0;
        if (!first)
            fetch_start(w, now);
        if (fetch_size(w, c->total_len) < 0) {
            fetch_stop(w, now);
            return;
        }
    }
    uint32_t k = c->offset / KN_KRP_WORLD_CHUNK;
    uint32_t want = k + 1 < w->f.nchunks ? KN_KRP_WORLD_CHUNK : w->f.total - k * KN_KRP_WORLD_CHUNK;
    if (c->offset % KN_KRP_WORLD_CHUNK || k >= w->f.nchunks || c->n != want) {
        w->st.world_bad_chunks++;
        return;
    }
    w->st.world_chunks++;
    if (k == 0 && first_chunk_same(w, c)) {
        fetch_stop(w, now); /* same generation: nothing to fetch */
        return;
    }
    if (!w->f.got[k]) {
        memcpy(w->f.buf + c->offset, c->data, c->n);
        w->f.got[k] = 1;
        w->f.nreceived++;
    }
    if (w->f.nreceived == w->f.nchunks) {
        char *doc = w->f.buf;
        size_t len = w->f.total;
        w->f.buf = NULL;
        fetch_stop(w, now);
        tell_world(w, doc, len);
        return;
    }
    fetch_pump(w, now);
}

/* After HELLO_ACK: fetch (or check) the world, or say there is none. */
static void world_after_ack(struct kn_watch *w, uint64_t now)
{
    if (!(w->caps & KN_KRP_CAP_WORLD)) {
        no_world(w, now);
        return;
    }
    fetch_start(w, now);
    fetch_pump(w, now);
}

/* ---- the trial ------------------------------------------------------- */

static void send_trial_req(struct kn_watch *w, uint64_t now)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_TRIAL_REQ, 0, 0);
    m.u.trial_req.op = KN_KRP_TRIAL_OP_STATE;
    w->trial_ns = now;
    send_msg(w, &m);
}

/* The page learns the trial (t) or that there is none (NULL), on change. */
static void tell_trial(struct kn_watch *w, const struct kn_krp_trial *t)
{
    if (w->trial_told && !t && !w->trial_have)
        return;
    if (w->trial_told && t && w->trial_have && kn_krp_trial_equal(t, &w->trial))
        return;
    w->trial_told = true;
    w->trial_have = t != NULL;
    if (t) {
        w->trial = *t;
        w->st.trial_changes++;
    }
    if (w->io.trial)
        w->io.trial(w->io.ctx, t);
}

static void on_trial(struct kn_watch *w, const struct kn_krp_trial *t)
{
    w->st.trials++;
    tell_trial(w, t);
}

/* ---- messages from the robot ----------------------------------------- */

static void link_down(struct kn_watch *w, uint64_t now)
{
    w->up = false;
    w->acked = false;
    w->busy = false;
    w->st.links_down++;
    if (w->f.on)
        fetch_stop(w, now);
    w->hello_ns = 0; /* HELLO at once */
    w->io.link(w->io.ctx, false, "no STATUS for 1.0 s");
}

static void on_hello_ack(struct kn_watch *w, const struct kn_krp_hello_ack *a, uint64_t now)
{
    w->st.hello_acks++;
    w->acked = true;
    kn_krp_session_accept(&w->sess, a, w->seq + 1);
    w->caps = a->capabilities;
    w->io.hello(w->io.ctx, a);
    w->trial_asking = w->caps & KN_KRP_CAP_TRIAL;
    w->trial_ns = 0; /* asked at once, once the link is up */
    if (!w->trial_asking)
        tell_trial(w, NULL);
    w->sub_ns = now;
    send_simple(w, KN_KRP_SUBSCRIBE);
    send_simple(w, KN_KRP_STATUS_REQ); /* a state for the page right away */
    if (w->up)
        world_after_ack(w, now);
}

static void on_status(struct kn_watch *w, const struct kn_krp_status *s, uint64_t now)
{
    w->st.statuses++;
    w->status_ns = now;
    if (s->req_seq == 0)
        w->busy = false; /* a push: the subscription holds */
    bool backend_up = s->flags & KN_KRP_ST_BACKEND_UP;
    bool came_back = backend_up && !w->backend_up;
    w->backend_up = backend_up;
    if (!w->up) {
        w->up = true;
        w->st.links_up++;
        w->io.link(w->io.ctx, true, NULL);
        if (w->acked)
            world_after_ack(w, now);
    } else if (came_back && w->acked && (w->caps & KN_KRP_CAP_WORLD) && !w->f.on) {
        /* a simulator that came back may run another world */
        fetch_start(w, now);
        fetch_pump(w, now);
    }
    w->io.status(w->io.ctx, s, now);
}

static void on_error(struct kn_watch *w, const struct kn_krp_error *e, uint64_t now)
{
    w->st.errors[e->code]++;
    if (kn_krp_session_lost(&w->sess, e)) {
        w->acked = false; /* the robot forgot the session (restarted): HELLO again */
        w->hello_ns = 0;
    } else if (e->offending_type == KN_KRP_SUBSCRIBE && e->code == KN_KRP_ERR_BUSY) {
        w->st.sub_busy++;
        if (!w->busy)
            w->poll_ns = now; /* the first poll one period from now */
        w->busy = true;
    } else if (e->offending_type == KN_KRP_TRIAL_REQ &&
               (e->code == KN_KRP_ERR_NO_TRIAL || e->code == KN_KRP_ERR_UNKNOWN_TYPE)) {
        /* its trial ended and was taken away, or it never had one: asked
         * again after the next HELLO_ACK only */
        w->st.no_trial++;
        w->trial_asking = false;
        tell_trial(w, NULL);
    } else if (e->offending_type == KN_KRP_WORLD_REQ && w->f.on) {
        if (e->code == KN_KRP_ERR_RANGE) {
            fetch_start(w, now); /* the document shrank: from the start */
            fetch_pump(w, now);
        } else {
            no_world(w, now); /* UNKNOWN_TYPE: a robot without the extension */
        }
    }
}

void kn_watch_datagram(struct kn_watch *w, const uint8_t *buf, size_t len, uint64_t now)
{
    struct kn_krp_msg m;
    w->st.dgrams_in++;
    if (kn_krp_decode(buf, len, &m) != KN_KRP_OK) {
        w->st.bad_dgrams++;
        return;
    }
    switch (m.h.type) {
    case KN_KRP_HELLO_ACK: on_hello_ack(w, &m.u.hello_ack, now); break;
    case KN_KRP_STATUS: on_status(w, &m.u.status, now); break;
    case KN_KRP_ERROR: on_error(w, &m.u.error, now); break;
    case KN_KRP_WORLD: on_world(w, &m.u.world, now); break;
    case KN_KRP_TRIAL: on_trial(w, &m.u.trial); break;
    case KN_KRP_ACK: break;
    default: w->st.not_from_robot_types++; break;
    }
}

/* ---- time ------------------------------------------------------------ */

void kn_watch_tick(struct kn_watch *w, uint64_t now)
{
    if (w->up && now >= after(w->status_ns, KN_WATCH_SILENCE_NS))
        link_down(w, now);
    if (!w->acked && (!w->hello_ns || now >= after(w->hello_ns, KN_WATCH_HELLO_NS))) {
        w->hello_ns = now;
        send_simple(w, KN_KRP_HELLO);
    }
    if (w->acked && now >= after(w->sub_ns, KN_WATCH_RENEW_NS)) {
        w->sub_ns = now;
        send_simple(w, KN_KRP_SUBSCRIBE);
    }
    if (w->acked && w->busy && now >= after(w->poll_ns, KN_WATCH_POLL_NS)) {
        w->poll_ns = now;
        send_simple(w, KN_KRP_STATUS_REQ);
    }
    if (w->f.on) {
        fetch_give_up_check(w, now);
        fetch_pump(w, now);
    } else if (w->acked && w->up && (w->caps & KN_KRP_CAP_WORLD) && now >= w->check_ns) {
        fetch_start(w, now);
        fetch_pump(w, now);
    }
    if (w->acked && w->up && w->trial_asking &&
        (!w->trial_ns || now >= after(w->trial_ns, KN_WATCH_TRIAL_NS)))
        send_trial_req(w, now);
}

static uint64_t fetch_deadline(const struct kn_watch *w)
{
    if (!w->f.on || !w->up)
        return UINT64_MAX;
    uint64_t since = w->f.answer_ns > w->f.started_ns ? w->f.answer_ns : w->f.started_ns;
    uint64_t d = after(since, KN_WATCH_WORLD_TRIES * KN_WATCH_WORLD_RETRY_NS);
    if (w->f.total == 0)
        return w->f.ask0_ns ? (after(w->f.ask0_ns, KN_WATCH_WORLD_RETRY_NS) < d
                                   ? after(w->f.ask0_ns, KN_WATCH_WORLD_RETRY_NS)
                                   : d)
                            : 0;
    for (uint32_t k = w->f.first_missing; k < w->f.nchunks; k++) {
        uint64_t t = w->f.got[k]        ? UINT64_MAX
                     : w->f.asked_ns[k] ? after(w->f.asked_ns[k], KN_WATCH_WORLD_RETRY_NS)
                                        : 0;
        if (t < d)
            d = t;
        if (!w->f.got[k] && !w->f.asked_ns[k])
            break; /* never asked: due now, nothing earlier after it */
    }
    return d;
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

uint64_t kn_watch_next_deadline(const struct kn_watch *w)
{
    uint64_t d = UINT64_MAX;
    if (w->up)
        d = earliest(d, after(w->status_ns, KN_WATCH_SILENCE_NS));
    if (!w->acked)
        d = earliest(d, w->hello_ns ? after(w->hello_ns, KN_WATCH_HELLO_NS) : 0);
    else
        d = earliest(d, after(w->sub_ns, KN_WATCH_RENEW_NS));
    if (w->acked && w->busy)
        d = earliest(d, after(w->poll_ns, KN_WATCH_POLL_NS));
    if (w->f.on)
        d = earliest(d, fetch_deadline(w));
    else if (w->acked && w->up && (w->caps & KN_KRP_CAP_WORLD))
        d = earliest(d, w->check_ns);
    if (w->acked && w->up && w->trial_asking)
        d = earliest(d, w->trial_ns ? after(w->trial_ns, KN_WATCH_TRIAL_NS) : 0);
    return d;
}

/* ---- life ------------------------------------------------------------ */

struct kn_watch *kn_watch_new(const struct kn_watch_io *io, const char *name, uint64_t now)
{
    struct kn_watch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->io = *io;
    snprintf(w->name, sizeof w->name, "%s", name ? name : "");
    w->check_ns = after(now, KN_WATCH_WORLD_CHECK_NS);
    return w;
}

void kn_watch_free(struct kn_watch *w)
{
    if (!w)
        return;
    fetch_stop(w, 0);
    free(w->doc);
    free(w);
}

bool kn_watch_up(const struct kn_watch *w)
{
    return w->up;
}

const struct kn_watch_stats *kn_watch_stats(const struct kn_watch *w)
{
    return &w->st;
}
