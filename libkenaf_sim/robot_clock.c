/* Robot clock interpolation. The rate is re-measured on every STATUS from
 * the last two samples; samples closer than 1 ms of wall time (a STATUS_REQ
 * answer right after a push) would give a meaningless rate and only move
 * the anchor. */
#include "robot_clock.h"

#include <string.h>

#include "convert.h"

#define KN_CLOCK_MIN_GAP_NS 1000000
#define KN_CLOCK_MAX_RATE 1000.0

void kn_clock_reset(struct kn_clock *c, int period_ms)
{
    memset(c, 0, sizeof *c);
    c->rate = 1.0;
    c->cap_ns = 2 * (int64_t)period_ms * 1000000;
}

static double robot_s(const struct kn_clock *c)
{
    return kn_conv_us_to_s(c->t_us) + c->offset_s;
}

void kn_clock_sample(struct kn_clock *c, uint64_t t_us, int64_t wall_ns)
{
    if (!c->have) {
        c->have = true;
        c->t_us = t_us;
        c->wall_ns = wall_ns;
        return;
    }
    if (t_us < c->t_us) {
        /* The robot clock started again (daemon or simulator restart):
         * carry on from the last sample instead of going back. */
        c->offset_s += kn_conv_us_to_s(c->t_us) - kn_conv_us_to_s(t_us);
    } else if (wall_ns - c->wall_ns >= KN_CLOCK_MIN_GAP_NS) {
        double rate = kn_conv_us_to_s(t_us - c->t_us) / ((double)(wall_ns - c->wall_ns) / 1e9);
        c->rate = rate > KN_CLOCK_MAX_RATE ? KN_CLOCK_MAX_RATE : rate;
    }
    c->t_us = t_us;
    c->wall_ns = wall_ns;
}

double kn_clock_now(struct kn_clock *c, int64_t wall_ns)
{
    if (!c->have)
        return c->last_out;
    int64_t ahead = wall_ns - c->wall_ns;
    if (ahead < 0)
        ahead = 0;
    if (ahead > c->cap_ns)
        ahead = c->cap_ns;
    double t = robot_s(c) + c->rate * ((double)ahead / 1e9);
    if (t < c->last_out)
        t = c->last_out;
    c->last_out = t;
    return t;
}

int64_t kn_clock_wall_until(const struct kn_clock *c, double target)
{
    if (!(c->rate > 1e-9))
        return -1;
    double left = target - c->last_out;
    if (left <= 0)
        return 0;
    double ns = left / c->rate * 1e9;
    return ns > 9e18 ? INT64_MAX : (int64_t)ns;
}
