/* The "standin" backend: a plain JSON-lines link over TCP to the test
 * stand-in simulator (tests/daemon/standin_sim.c) or any custom simulator
 * that speaks it (docs/custom-simulator.md). State lines in, command
 * lines out, neutral SI units both ways. A malformed line is counted and
 * skipped; it never drops the link. */
#include "backend_standin.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "krp.h"
#include "linebuf.h"
#include "log.h"

/* ---- pure part --------------------------------------------------------- */

static bool get_vec(const cJSON *obj, const char *key, double *out, int n, bool *present,
                    const char **why)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    *present = false;
    if (!a || cJSON_IsNull(a))
        return true;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n) {
        *why = key;
        return false;
    }
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble)) {
            *why = key;
            return false;
        }
        out[i++] = e->valuedouble;
    }
    *present = true;
    return true;
}

static bool get_num(const cJSON *obj, const char *key, double *out, bool *present, const char **why)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *present = false;
    if (!v || cJSON_IsNull(v))
        return true;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
        *why = key;
        return false;
    }
    *out = v->valuedouble;
    *present = true;
    return true;
}

enum kn_standin_kind kn_standin_parse(const char *line, size_t len, struct kn_state *s,
                                      const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    *why = NULL;
    memset(s, 0, sizeof *s);
    cJSON *j = cJSON_ParseWithLength(line, len);
    if (!j) {
        *why = "not JSON";
        return KN_STANDIN_MALFORMED;
    }
    enum kn_standin_kind kind = KN_STANDIN_MALFORMED;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
    if (!cJSON_IsObject(j) || !cJSON_IsString(type)) {
        *why = "no \"type\"";
        goto out;
    }
    if (strcmp(type->valuestring, "ready") == 0) {
        kind = KN_STANDIN_READY;
        goto out;
    }
    if (strcmp(type->valuestring, "state") != 0) {
        kind = KN_STANDIN_OTHER;
        goto out;
    }
    /* where each key goes: the state's own members, no casts */
    const struct {
        const char *key;
        double *dst;
        int n;
        uint32_t bit;
    } fields[] = {
        { "t", &s->time_s, 0, KN_HAVE_TIME },
        { "belt_pos", s->belt_pos_m, 2, KN_HAVE_BELT_POS },
        { "belt_speed", s->belt_speed_m_s, 2, KN_HAVE_BELT_SPEED },
        { "flipper", s->flipper_rad, 4, KN_HAVE_FLIPPER },
        { "flipper_torque", s->flipper_torque_nm, 4, KN_HAVE_TORQUE },
        { "rpy", s->rpy_rad, 3, KN_HAVE_ATTITUDE },
        { "rate", s->rate_rad_s, 3, KN_HAVE_RATE },
        { "accel", s->accel_m_s2, 3, KN_HAVE_ACCEL },
        { "pos", s->pos_m, 3, KN_HAVE_POSITION },
        { "battery", &s->battery_v, 0, KN_HAVE_BATTERY },
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        double *dst = fields[i].dst;
        bool present;
        bool ok = fields[i].n ? get_vec(j, fields[i].key, dst, fields[i].n, &present, why)
                              : get_num(j, fields[i].key, dst, &present, why);
        if (!ok) {
            memset(s, 0, sizeof *s);
            goto out;
        }
        if (present)
            s->have |= fields[i].bit;
    }
    kind = KN_STANDIN_STATE;
out:
    cJSON_Delete(j);
    return kind;
}

void kn_standin_merge(struct kn_state *d, const struct kn_state *s)
{
    uint32_t h = s->have;
    if (h & KN_HAVE_TIME)
        d->time_s = s->time_s;
    if (h & KN_HAVE_BELT_POS)
        memcpy(d->belt_pos_m, s->belt_pos_m, sizeof d->belt_pos_m);
    if (h & KN_HAVE_BELT_SPEED)
        memcpy(d->belt_speed_m_s, s->belt_speed_m_s, sizeof d->belt_speed_m_s);
    if (h & KN_HAVE_FLIPPER)
        memcpy(d->flipper_rad, s->flipper_rad, sizeof d->flipper_rad);
    if (h & KN_HAVE_TORQUE)
        memcpy(d->flipper_torque_nm, s->flipper_torque_nm, sizeof d->flipper_torque_nm);
    if (h & KN_HAVE_ATTITUDE)
        memcpy(d->rpy_rad, s->rpy_rad, sizeof d->rpy_rad);
    if (h & KN_HAVE_RATE)
        memcpy(d->rate_rad_s, s->rate_rad_s, sizeof d->rate_rad_s);
    if (h & KN_HAVE_ACCEL)
        memcpy(d->accel_m_s2, s->accel_m_s2, sizeof d->accel_m_s2);
    if (h & KN_HAVE_POSITION)
        memcpy(d->pos_m, s->pos_m, sizeof d->pos_m);
    if (h & KN_HAVE_BATTERY)
        d->battery_v = s->battery_v;
    d->have |= h;
}

static double finite_or_0(double v)
{
    return isfinite(v) ? v : 0.0;
}

size_t kn_standin_format_cmd(char *buf, size_t cap, const struct kn_command *c, bool reapply)
{
    char fl[KN_NFLIPPERS][32];
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        if (c->flipper_mask & (1u << k))
            snprintf(fl[k], sizeof fl[k], "%.15g", finite_or_0(c->flipper_rad[k]));
        else
            snprintf(fl[k], sizeof fl[k], "null");
    }
    int n = snprintf(buf, cap,
                     "{\"type\":\"cmd\",\"belts\":[%.15g,%.15g],\"flippers\":[%s,%s,%s,%s]%s}\n",
                     finite_or_0(c->belt_speed_m_s[0]), finite_or_0(c->belt_speed_m_s[1]), fl[0],
                     fl[1], fl[2], fl[3], reapply ? ",\"reapply\":true" : "");
    return (n < 0 || (size_t)n >= cap) ? 0 : (size_t)n;
}

size_t kn_standin_format_hello(char *buf, size_t cap, const char *robot)
{
    /* Robot names are [A-Za-z0-9_.-] (config schema): no escaping needed. */
    int n = snprintf(buf, cap, "{\"type\":\"hello\",\"protocol\":1,\"robot\":\"%s\"}\n", robot);
    return (n < 0 || (size_t)n >= cap) ? 0 : (size_t)n;
}

/* ---- the backend ------------------------------------------------------- */

struct standin {
    struct kn_link *link;
    char robot[KN_CFG_NAME_LEN + 1];
    struct kn_linebuf lb;
    char lbuf[KN_STANDIN_MAX_LINE + 1];
    struct kn_state state; /* merged from state lines */
    bool connected;
    uint64_t lines, malformed, ignored, states, readies;
    char last_malformed[64];
};

static void *standin_create(struct kn_link *link, const struct kn_cfg_robot *cfg)
{
    struct standin *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->link = link;
    snprintf(b->robot, sizeof b->robot, "%s", cfg->name);
    kn_linebuf_init(&b->lb, b->lbuf, KN_STANDIN_MAX_LINE);
    return b;
}

static void standin_destroy(void *be)
{
    free(be);
}

static void standin_start(void *be)
{
    struct standin *b = be;
    char line[128];
    b->connected = true;
    kn_linebuf_reset(&b->lb);
    memset(&b->state, 0, sizeof b->state); /* a new simulator run */
    size_t n = kn_standin_format_hello(line, sizeof line, b->robot);
    kn_link_write(b->link, line, n);
}

static void standin_stop(void *be)
{
    struct standin *b = be;
    b->connected = false;
}

static bool on_line(void *ctx, char *line, size_t len)
{
    struct standin *b = ctx;
    if (len == 0)
        return true;
    b->lines++;
    struct kn_state s;
    const char *why;
    switch (kn_standin_parse(line, len, &s, &why)) {
    case KN_STANDIN_READY:
        b->readies++;
        kn_link_ready(b->link);
        break;
    case KN_STANDIN_STATE:
        b->states++;
        kn_standin_merge(&b->state, &s);
        kn_link_state(b->link, &b->state);
        break;
    case KN_STANDIN_OTHER: b->ignored++; break;
    default:
        if (b->malformed++ == 0)
            kn_warn("robot %s: malformed line from the simulator (%s), skipped; "
                    "further ones are only counted",
                    b->robot, why ? why : "?");
        snprintf(b->last_malformed, sizeof b->last_malformed, "%s", why ? why : "?");
        break;
    }
    /* kn_link_ready/state may have ended the connection: stop then. */
    return b->connected;
}

static void standin_input(void *be, const char *data, size_t len)
{
    struct standin *b = be;
    kn_linebuf_feed(&b->lb, data, len, on_line, b);
}

static void standin_send(void *be, const struct kn_command *cmd, bool reapply)
{
    struct standin *b = be;
    char line[512];
    size_t n = kn_standin_format_cmd(line, sizeof line, cmd, reapply);
    if (n)
        kn_link_write(b->link, line, n);
}

static void standin_stats(void *be, cJSON *o)
{
    struct standin *b = be;
    cJSON_AddNumberToObject(o, "lines", (double)b->lines);
    cJSON_AddNumberToObject(o, "states", (double)b->states);
    cJSON_AddNumberToObject(o, "readies", (double)b->readies);
    cJSON_AddNumberToObject(o, "malformed", (double)b->malformed);
    cJSON_AddNumberToObject(o, "overlong", (double)b->lb.overlong);
    cJSON_AddNumberToObject(o, "ignored", (double)b->ignored);
    cJSON_AddStringToObject(o, "last_malformed", b->last_malformed);
}

const struct kn_backend_ops kn_backend_standin = {
    .name = "standin",
    .kind = KN_BACKEND_STANDIN,
    /* KRP/1 has no id for "other simulator"; the stand-in ships with
     * kenaf-sim, so it reports the built-in one (docs/protocol.md,
     * "HELLO_ACK"). */
    .krp_id = KN_KRP_BACKEND_ENGINE,
    .capabilities = KN_KRP_CAP_GROUND_TRUTH,
    .default_port = 0,
    .create = standin_create,
    .destroy = standin_destroy,
    .start = standin_start,
    .stop = standin_stop,
    .input = standin_input,
    .send_command = standin_send,
    .stats = standin_stats,
};
