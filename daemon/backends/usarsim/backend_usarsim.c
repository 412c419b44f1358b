/* The "usarsim" backend: the USARSim client (backend_usarsim_client.c)
 * on the generic link. The built-in engine serves the same protocol, so
 * the same ops also drive an engine that runs at an address
 * (kn_usarsim_engine_ops); only the names and the HELLO_ACK backend id
 * differ, and only the engine steps on request (lockstep). */
#include <stdio.h>
#include <stdlib.h>

#include "backend.h"
#include "backend_usarsim.h"
#include "krp.h"
#include "log.h"
#include "usarsim_codec.h"

struct usar_be {
    struct kn_link *link;
    struct kn_usarsim *u;
};

static void io_write(void *ctx, const char *data, size_t len)
{
    struct usar_be *b = ctx;
    kn_link_write(b->link, data, len);
}

static void io_ready(void *ctx)
{
    struct usar_be *b = ctx;
    kn_link_ready(b->link);
}

static void io_state(void *ctx, const struct kn_state *s)
{
    struct usar_be *b = ctx;
    kn_link_state(b->link, s);
}

static void io_fail(void *ctx, const char *why)
{
    struct usar_be *b = ctx;
    kn_link_fail(b->link, why);
}

static void io_refused(void *ctx, const char *why)
{
    struct usar_be *b = ctx;
    kn_link_refused(b->link, why);
}

static void io_stepped(void *ctx, bool ok)
{
    struct usar_be *b = ctx;
    kn_link_stepped(b->link, ok);
}

static void io_trial(void *ctx, const struct kn_krp_trial *t)
{
    struct usar_be *b = ctx;
    kn_link_trial(b->link, t);
}

static void io_world(void *ctx, const char *text, size_t len)
{
    struct usar_be *b = ctx;
    kn_link_world(b->link, text, len);
}

static void *usar_create(struct kn_link *link, const struct kn_cfg_robot *cfg)
{
    struct usar_be *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->link = link;
    struct kn_usarsim_io io = {
        .ctx = b,
        .write = io_write,
        .ready = io_ready,
        .state = io_state,
        .fail = io_fail,
        .refused = io_refused,
        .stepped = io_stepped,
        .trial = io_trial,
        .world = io_world,
    };
    char err[160];
    b->u = kn_usarsim_new(cfg, &io, err, sizeof err);
    if (!b->u) {
        kn_err("robot %s: USARSim backend: %s", cfg->name, err);
        free(b);
        return NULL;
    }
    return b;
}

static void usar_destroy(void *be)
{
    struct usar_be *b = be;
    kn_usarsim_free(b->u);
    free(b);
}

static void usar_start(void *be)
{
    struct usar_be *b = be;
    kn_usarsim_connected(b->u, uv_hrtime());
}

static void usar_stop(void *be)
{
    struct usar_be *b = be;
    kn_usarsim_disconnected(b->u);
}

static void usar_input(void *be, const char *data, size_t len)
{
    struct usar_be *b = be;
    kn_usarsim_feed(b->u, data, len, uv_hrtime());
}

static void usar_send(void *be, const struct kn_command *cmd, bool reapply)
{
    struct usar_be *b = be;
    kn_usarsim_command(b->u, cmd, reapply, uv_hrtime());
}

static void usar_step(void *be, uint32_t advance_us)
{
    struct usar_be *b = be;
    kn_usarsim_step(b->u, advance_us);
}

static void usar_trial(void *be, bool reset)
{
    struct usar_be *b = be;
    kn_usarsim_trial(b->u, reset);
}

static void usar_stats(void *be, cJSON *o)
{
    struct usar_be *b = be;
    kn_usarsim_stats(b->u, o);
}

/* HELLO_ACK capabilities: USARSim's GroundTruth sensor gives the true
 * pose. Angular rates and accelerations are derived from successive poses
 * (KRP/1 has no capability bit to say so; the stats do), flipper torque
 * is not reported, and USARSim has no lockstep. */
const struct kn_backend_ops kn_usarsim_ops = {
    .name = "usarsim",
    .kind = KN_BACKEND_USARSIM,
    .krp_id = KN_KRP_BACKEND_USARSIM,
    .capabilities = KN_KRP_CAP_GROUND_TRUTH,
    .default_port = KN_USAR_DEFAULT_PORT,
    .create = usar_create,
    .destroy = usar_destroy,
    .start = usar_start,
    .stop = usar_stop,
    .input = usar_input,
    .send_command = usar_send,
    .stats = usar_stats,
};

/* The built-in engine reached at backend.address: same protocol, same
 * code, reported as the built-in engine. Not in the backend table by
 * itself: the engine entry also covers spawning the engine when no
 * address is given. */
const struct kn_backend_ops kn_usarsim_engine_ops = {
    .name = "engine",
    .kind = KN_BACKEND_ENGINE,
    .krp_id = KN_KRP_BACKEND_ENGINE,
    .capabilities = KN_KRP_CAP_GROUND_TRUTH,
    .default_port = KN_USAR_DEFAULT_PORT,
    .create = usar_create,
    .destroy = usar_destroy,
    .start = usar_start,
    .stop = usar_stop,
    .input = usar_input,
    .send_command = usar_send,
    .stats = usar_stats,
    .step = usar_step,
    .trial = usar_trial,
};
