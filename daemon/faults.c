/* Seeded fault injection: see faults.h. Waiting items sit in a list per
 * stream sorted by due time (bounded in count and bytes), with one timer
 * per stream; an item held back for reordering waits in its own slot until
 * the next item of the stream has been delivered, or a hold limit. */
#include "faults.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

#define MAX_WAITING 4096             /* items waiting per stream */
#define MAX_WAITING_BYTES (4u << 20) /* and their bytes */
#define HOLD_BASE_NS 100000000ull    /* a held item waits at most this + delay + jitter */

static const char *const stream_names[KN_FAULT_NSTREAMS] = { "in", "out", "out" };

/* ---- decisions ------------------------------------------------------------ */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void kn_fault_rng_seed(struct kn_fault_rng *r, uint64_t seed, unsigned stream)
{
    /* stream 0 is splitmix64 started at the seed itself, so its outputs
     * are the published splitmix64 sequence */
    r->s = stream ? mix64(seed + 0xD1B54A32D192ED03ull * stream) : seed;
}

uint64_t kn_fault_rng_next(struct kn_fault_rng *r)
{
    r->s += 0x9E3779B97F4A7C15ull;
    return mix64(r->s);
}

double kn_fault_rng_unit(struct kn_fault_rng *r)
{
    return (double)(kn_fault_rng_next(r) >> 11) * 0x1.0p-53;
}

bool kn_fault_params_active(const struct kn_cfg_faults *p)
{
    return p->drop > 0 || p->duplicate > 0 || p->reorder > 0 || p->delay_ms > 0 || p->jitter_ms > 0;
}

void kn_fault_decide(struct kn_fault_rng *r, const struct kn_cfg_faults *p,
                     struct kn_fault_decision *d)
{
    double u_drop = kn_fault_rng_unit(r), u_dup = kn_fault_rng_unit(r);
    double u_reorder = kn_fault_rng_unit(r), u_jitter = kn_fault_rng_unit(r);
    memset(d, 0, sizeof *d);
    d->drop = u_drop < p->drop;
    if (d->drop)
        return;
    d->duplicate = u_dup < p->duplicate;
    d->reorder = u_reorder < p->reorder;
    double ms = p->delay_ms + (2.0 * u_jitter - 1.0) * p->jitter_ms;
    if (ms > 0 && isfinite(ms))
        d->delay_ns = (uint64_t)(ms * 1e6 + 0.5);
}

void kn_fault_describe(const struct kn_fault_decision *d, char *buf, size_t len)
{
    char t[96] = "";
    if (d->drop) {
        strcpy(t, "dropped");
    } else {
        if (d->delay_ns)
            snprintf(t, sizeof t, "delayed %.1f ms", (double)d->delay_ns / 1e6);
        if (d->reorder)
            strcat(strcat(t, t[0] ? ", " : ""), "held back (reordered)");
        if (d->duplicate)
            strcat(strcat(t, t[0] ? ", " : ""), "duplicated");
    }
    if (len)
        snprintf(buf, len, "%s", t);
}

/* ---- streams -------------------------------------------------------------- */

struct item {
    struct item *next;
    uint64_t due_ns;
    unsigned copies;
    size_t len;
    unsigned char data[];
};

struct stream {
    struct kn_faults *owner;
    enum kn_fault_stream_id id;
    struct kn_cfg_faults p;
    struct kn_fault_rng rng;
    kn_fault_deliver_fn deliver;
    void *ctx;
    struct item *waiting; /* sorted by due_ns, ties in arrival order */
    size_t n_waiting, waiting_bytes;
    struct item *held; /* reordered: goes out after the next item */
    uint64_t held_until;
    uv_timer_t timer;
    uint64_t timer_due; /* 0: not armed */
    uint64_t seen, passed, dropped, delayed, duplicated, reordered, overflow;
};

struct kn_faults {
    struct kn_faults *next_reg; /* registry of live robots */
    uv_loop_t *loop;
    char robot[KN_CFG_NAME_LEN + 1];
    struct stream st[KN_FAULT_NSTREAMS];
    unsigned timers_open;
    bool closing;
    bool refuse;      /* "fault_injection": false: commands refused */
    uint64_t refused; /* commands refused for that */
};

static struct kn_faults *registry;

static uint64_t now_ns(void)
{
    return uv_hrtime();
}

static void free_items(struct item *it)
{
    while (it) {
        struct item *n = it->next;
        free(it);
        it = n;
    }
}

static void arm(struct stream *s);

static void deliver_item(struct stream *s, struct item *it)
{
    for (unsigned c = 0; c < it->copies && !s->owner->closing; c++)
        if (s->deliver)
            s->deliver(s->ctx, it->data, it->len);
}

/* After an item went out: the one held back follows it. */
static void release_held(struct stream *s)
{
    struct item *h = s->held;
    if (!h)
        return;
    s->held = NULL;
    deliver_item(s, h);
    free(h);
}

static void on_timer(uv_timer_t *t)
{
    struct stream *s = t->data;
    s->timer_due = 0;
    uint64_t now = now_ns();
    /* items are taken off the list before delivery: a delivery may submit
     * more items to this stream (an answer to a delayed request) */
    while (s->waiting && s->waiting->due_ns <= now && !s->owner->closing) {
        struct item *it = s->waiting;
        s->waiting = it->next;
        s->n_waiting--;
        s->waiting_bytes -= it->len;
        deliver_item(s, it);
        free(it);
        release_held(s);
    }
    if (s->held && s->held_until <= now)
        release_held(s); /* nothing came after it in time */
    arm(s);
}

static void arm(struct stream *s)
{
    if (s->owner->closing)
        return;
    uint64_t due = UINT64_MAX;
    if (s->waiting)
        due = s->waiting->due_ns;
    if (s->held && s->held_until < due)
        due = s->held_until;
    if (due == UINT64_MAX) {
        if (s->timer_due)
            uv_timer_stop(&s->timer);
        s->timer_due = 0;
        return;
    }
    if (s->timer_due == due)
        return;
    uint64_t now = now_ns();
    uint64_t ms = due > now ? (due - now + 999999u) / 1000000u : 0;
    s->timer_due = due;
    uv_timer_start(&s->timer, on_timer, ms, 0);
}

static struct item *copy_item(const void *data, size_t len)
{
    struct item *it = malloc(sizeof *it + len);
    if (!it)
        return NULL;
    memset(it, 0, sizeof *it);
    it->len = len;
    it->copies = 1;
    if (len)
        memcpy(it->data, data, len);
    return it;
}

static bool room_for(const struct stream *s, size_t len)
{
    return s->n_waiting < MAX_WAITING && s->waiting_bytes + len <= MAX_WAITING_BYTES;
}

static void enqueue(struct stream *s, struct item *it)
{
    struct item **pp = &s->waiting;
    while (*pp && (*pp)->due_ns <= it->due_ns)
        pp = &(*pp)->next;
    it->next = *pp;
    *pp = it;
    s->n_waiting++;
    s->waiting_bytes += it->len;
}

struct kn_faults *kn_faults_new(uv_loop_t *loop, const char *robot, const struct kn_cfg_faults *krp,
                                const struct kn_cfg_faults *sim)
{
    struct kn_faults *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->loop = loop;
    snprintf(f->robot, sizeof f->robot, "%s", robot);
    for (int i = 0; i < KN_FAULT_NSTREAMS; i++) {
        struct stream *s = &f->st[i];
        s->owner = f;
        s->id = (enum kn_fault_stream_id)i;
        uv_timer_init(loop, &s->timer);
        s->timer.data = s;
        f->timers_open++;
    }
    struct kn_cfg_faults none;
    memset(&none, 0, sizeof none);
    kn_faults_set(f, true, krp ? krp : &none);
    kn_faults_set(f, false, sim ? sim : &none);
    f->next_reg = registry;
    registry = f;
    return f;
}

void kn_faults_set_sink(struct kn_faults *f, enum kn_fault_stream_id s, kn_fault_deliver_fn fn,
                        void *ctx)
{
    f->st[s].deliver = fn;
    f->st[s].ctx = ctx;
}

void kn_faults_set(struct kn_faults *f, bool krp, const struct kn_cfg_faults *p)
{
    for (int i = 0; i < KN_FAULT_NSTREAMS; i++) {
        bool is_krp = i != KN_FAULT_SIM;
        if (is_krp != krp)
            continue;
        f->st[i].p = *p;
        kn_fault_rng_seed(&f->st[i].rng, p->seed, (unsigned)i);
    }
}

bool kn_faults_active(const struct kn_faults *f, enum kn_fault_stream_id s)
{
    if (!f)
        return false; /* the robot is stopping */
    const struct stream *st = &f->st[s];
    return kn_fault_params_active(&st->p) || st->waiting || st->held;
}

void kn_faults_decide(struct kn_faults *f, enum kn_fault_stream_id s, struct kn_fault_decision *d)
{
    kn_fault_decide(&f->st[s].rng, &f->st[s].p, d);
}

void kn_faults_apply(struct kn_faults *f, enum kn_fault_stream_id sid,
                     const struct kn_fault_decision *d, const void *data, size_t len)
{
    struct stream *s = &f->st[sid];
    if (f->closing)
        return;
    s->seen++;
    if (d->drop) {
        s->dropped++;
        return;
    }
    bool faulted = false;
    unsigned copies = d->duplicate ? 2u : 1u;
    if (d->duplicate) {
        s->duplicated++;
        faulted = true;
    }
    if (d->reorder && !s->held && room_for(s, len)) {
        struct item *it = copy_item(data, len);
        if (it) {
            it->copies = copies;
            s->held = it;
            s->held_until =
                now_ns() + HOLD_BASE_NS + (uint64_t)((s->p.delay_ms + s->p.jitter_ms) * 1e6);
            s->reordered++;
            arm(s);
            return;
        }
    }
    /* waiting items are ordered by when they are due, so an item delayed
     * less (or not at all) overtakes them, as on a real network */
    if (d->delay_ns) {
        if (!room_for(s, len)) {
            s->overflow++;
            return;
        }
        struct item *it = copy_item(data, len);
        if (!it) {
            s->overflow++;
            return;
        }
        it->copies = copies;
        it->due_ns = now_ns() + d->delay_ns;
        enqueue(s, it);
        s->delayed++;
        arm(s);
        return;
    }
    if (!faulted)
        s->passed++;
    for (unsigned c = 0; c < copies && !f->closing; c++)
        if (s->deliver)
            s->deliver(s->ctx, data, len);
    release_held(s);
    arm(s);
}

void kn_faults_submit(struct kn_faults *f, enum kn_fault_stream_id s, const void *item, size_t len)
{
    struct kn_fault_decision d;
    kn_faults_decide(f, s, &d);
    kn_faults_apply(f, s, &d, item, len);
}

static void on_timer_closed(uv_handle_t *h)
{
    struct stream *s = h->data;
    struct kn_faults *f = s->owner;
    if (--f->timers_open == 0)
        free(f);
}

void kn_faults_free(struct kn_faults *f)
{
    if (!f || f->closing)
        return;
    f->closing = true;
    for (struct kn_faults **pp = &registry; *pp; pp = &(*pp)->next_reg)
        if (*pp == f) {
            *pp = f->next_reg;
            break;
        }
    for (int i = 0; i < KN_FAULT_NSTREAMS; i++) {
        struct stream *s = &f->st[i];
        free_items(s->waiting);
        s->waiting = NULL;
        free(s->held);
        s->held = NULL;
        uv_close((uv_handle_t *)&s->timer, on_timer_closed);
    }
}

/* ---- stats and the run-time command ------------------------------------------ */

static void params_json(cJSON *o, const struct kn_cfg_faults *p)
{
    cJSON_AddBoolToObject(o, "active", kn_fault_params_active(p));
    cJSON_AddNumberToObject(o, "drop", p->drop);
    cJSON_AddNumberToObject(o, "duplicate", p->duplicate);
    cJSON_AddNumberToObject(o, "reorder", p->reorder);
    cJSON_AddNumberToObject(o, "delay_ms", p->delay_ms);
    cJSON_AddNumberToObject(o, "jitter_ms", p->jitter_ms);
    cJSON_AddNumberToObject(o, "seed", (double)p->seed);
}

static void counters_json(cJSON *o, const struct stream *s)
{
    cJSON_AddNumberToObject(o, "seen", (double)s->seen);
    cJSON_AddNumberToObject(o, "passed", (double)s->passed);
    cJSON_AddNumberToObject(o, "dropped", (double)s->dropped);
    cJSON_AddNumberToObject(o, "delayed", (double)s->delayed);
    cJSON_AddNumberToObject(o, "duplicated", (double)s->duplicated);
    cJSON_AddNumberToObject(o, "reordered", (double)s->reordered);
    cJSON_AddNumberToObject(o, "overflow", (double)s->overflow);
    cJSON_AddNumberToObject(o, "waiting", (double)(s->n_waiting + (s->held != NULL)));
}

static void link_json(cJSON *o, const struct kn_faults *f, bool krp)
{
    params_json(o, &f->st[krp ? KN_FAULT_KRP_IN : KN_FAULT_SIM].p);
    uint64_t dropped = 0, injected = 0;
    for (int i = 0; i < KN_FAULT_NSTREAMS; i++) {
        if ((i != KN_FAULT_SIM) != krp)
            continue;
        const struct stream *s = &f->st[i];
        counters_json(cJSON_AddObjectToObject(o, stream_names[i]), s);
        dropped += s->dropped + s->overflow;
        injected += s->dropped + s->overflow + s->delayed + s->duplicated + s->reordered;
    }
    cJSON_AddNumberToObject(o, "dropped", (double)dropped);
    cJSON_AddNumberToObject(o, "injected", (double)injected);
}

void kn_faults_set_allowed(struct kn_faults *f, bool allowed)
{
    if (f)
        f->refuse = !allowed;
}

void kn_faults_stats(const struct kn_faults *f, cJSON *obj)
{
    cJSON_AddBoolToObject(obj, "enabled", !f->refuse);
    cJSON_AddNumberToObject(obj, "commands_refused", (double)f->refused);
    link_json(cJSON_AddObjectToObject(obj, "krp"), f, true);
    link_json(cJSON_AddObjectToObject(obj, "sim"), f, false);
}

static char *reply_error(const char *fmt, const char *arg)
{
    char msg[300];
    snprintf(msg, sizeof msg, fmt, arg);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", false);
    cJSON_AddStringToObject(o, "error", msg);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* One key=value into p; NULL or the reason it is refused. */
static const char *set_key(struct kn_cfg_faults *p, const char *key, const char *val)
{
    char *end = NULL;
    double v = strtod(val, &end);
    if (!*val || !end || *end || !isfinite(v))
        return "expected a number";
    if (!strcmp(key, "seed")) {
        if (v < 0 || v > 9007199254740991.0 || floor(v) != v)
            return "expected an integer 0..2^53-1";
        p->seed = (uint64_t)v;
        return NULL;
    }
    double *dst = !strcmp(key, "drop")        ? &p->drop
                  : !strcmp(key, "duplicate") ? &p->duplicate
                  : !strcmp(key, "reorder")   ? &p->reorder
                  : !strcmp(key, "delay_ms")  ? &p->delay_ms
                  : !strcmp(key, "jitter_ms") ? &p->jitter_ms
                                              : NULL;
    if (!dst)
        return "unknown key (expected drop, duplicate, reorder, delay_ms, jitter_ms or seed)";
    double hi = dst == &p->delay_ms || dst == &p->jitter_ms ? 60000 : 1;
    if (v < 0 || v > hi)
        return hi == 1 ? "expected a probability 0..1" : "expected 0..60000 ms";
    *dst = v;
    return NULL;
}

char *kn_faults_command(const char *args)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", args ? args : "");
    char *save = NULL;
    const char *robot = strtok_r(buf, " \t", &save);
    const char *link = robot ? strtok_r(NULL, " \t", &save) : NULL;
    if (!robot || !link)
        return reply_error("%s", "usage: faults ROBOT krp|sim [off | key=value ...]");
    struct kn_faults *f = registry;
    while (f && strcasecmp(f->robot, robot) != 0)
        f = f->next_reg;
    if (!f)
        return reply_error("no robot named \"%s\"", robot);
    if (f->refuse) {
        /* a production daemon: nobody with the socket may break its links */
        f->refused++;
        kn_warn("robot %s: faults command refused: fault injection is disabled", f->robot);
        return reply_error("fault injection is disabled on robot \"%s\" (\"fault_injection\": "
                           "false in the config)",
                           f->robot);
    }
    bool krp;
    if (!strcmp(link, "krp"))
        krp = true;
    else if (!strcmp(link, "sim"))
        krp = false;
    else
        return reply_error("link must be krp or sim, got \"%s\"", link);
    struct kn_cfg_faults p = f->st[krp ? KN_FAULT_KRP_IN : KN_FAULT_SIM].p;
    for (char *kv = strtok_r(NULL, " \t", &save); kv; kv = strtok_r(NULL, " \t", &save)) {
        if (!strcmp(kv, "off")) {
            memset(&p, 0, sizeof p);
            continue;
        }
        char *eq = strchr(kv, '=');
        if (!eq)
            return reply_error("expected key=value, got \"%s\"", kv);
        *eq = '\0';
        const char *why = set_key(&p, kv, eq + 1);
        if (why) {
            char msg[200];
            snprintf(msg, sizeof msg, "%s: %s", kv, why);
            return reply_error("%s", msg);
        }
    }
    kn_faults_set(f, krp, &p);
    kn_info("robot %s: faults on the %s link now drop=%g duplicate=%g reorder=%g delay_ms=%g "
            "jitter_ms=%g seed=%llu",
            f->robot, link, p.drop, p.duplicate, p.reorder, p.delay_ms, p.jitter_ms,
            (unsigned long long)p.seed);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", true);
    cJSON_AddStringToObject(o, "robot", f->robot);
    cJSON_AddStringToObject(o, "link", link);
    link_json(cJSON_AddObjectToObject(o, "faults"), f, krp);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}
