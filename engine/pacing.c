/* Pacing arithmetic of the engine server: see pacing.h. */
#include "pacing.h"

#include <math.h>
#include <strings.h>

void kn_pacing_init(struct kn_pacing *p, enum kn_pace_mode mode, double rate, double step_s,
                    uint32_t burst_max, double max_lag_s)
{
    *p = (struct kn_pacing){ 0 };
    p->mode = mode;
    p->rate = rate > 0 && isfinite(rate) ? rate : 1.0;
    p->step_ns = step_s > 0 ? step_s * 1e9 : 1e6;
    p->burst_max = burst_max ? burst_max : 1;
    p->max_lag_ns = max_lag_s > 0 ? max_lag_s * 1e9 : 1e9;
}

void kn_pacing_start(struct kn_pacing *p, uint64_t now_ns)
{
    p->t0_ns = now_ns;
    p->k = 0;
    p->running = true;
}

void kn_pacing_stop(struct kn_pacing *p)
{
    p->running = false;
}

void kn_pacing_set(struct kn_pacing *p, enum kn_pace_mode mode, double rate, uint64_t now_ns)
{
    p->mode = mode;
    if (rate > 0 && isfinite(rate))
        p->rate = rate;
    if (p->running)
        kn_pacing_start(p, now_ns);
}

/* Wall-clock ns per step under the current rate. */
static double wall_per_step(const struct kn_pacing *p)
{
    return p->step_ns / p->rate;
}

/* Steps whose deadline t0 + k * wall_per_step lies at or before now. */
static uint64_t due_total(const struct kn_pacing *p, uint64_t now_ns)
{
    if (now_ns <= p->t0_ns)
        return 0;
    return (uint64_t)floor((double)(now_ns - p->t0_ns) / wall_per_step(p));
}

uint32_t kn_pacing_due(struct kn_pacing *p, uint64_t now_ns)
{
    if (!p->running || p->mode == KN_PACE_STEP)
        return 0;
    p->ticks++;
    if (p->mode == KN_PACE_FAST)
        return p->burst_max;
    uint64_t due = due_total(p, now_ns);
    if (due <= p->k)
        return 0;
    uint64_t behind = due - p->k;
    double lag_ns = (double)behind * wall_per_step(p);
    if (lag_ns / 1e9 > p->max_lag_s)
        p->max_lag_s = lag_ns / 1e9;
    if (lag_ns > p->max_lag_ns) {
        /* Too far behind to catch up usefully (the process was stopped,
         * or the machine cannot keep up): give the debt up, say so, and
         * restart the schedule so we do not race for seconds. */
        p->slips++;
        p->slipped_s += (double)behind * p->step_ns / 1e9;
        p->t0_ns = now_ns;
        p->k = 0;
        return 0;
    }
    if (behind > p->burst_max) {
        p->overruns++;
        return p->burst_max;
    }
    return (uint32_t)behind;
}

void kn_pacing_done(struct kn_pacing *p, uint32_t steps)
{
    p->k += steps;
}

uint64_t kn_pacing_wait_ns(const struct kn_pacing *p, uint64_t now_ns)
{
    if (!p->running || p->mode == KN_PACE_STEP)
        return UINT64_MAX;
    if (p->mode == KN_PACE_FAST)
        return 0;
    double next = (double)p->t0_ns + (double)(p->k + 1) * wall_per_step(p);
    if (next <= (double)now_ns)
        return 0;
    return (uint64_t)ceil(next - (double)now_ns);
}

double kn_pacing_lead_s(const struct kn_pacing *p, uint64_t now_ns)
{
    if (!p->running || p->mode != KN_PACE_REALTIME)
        return 0;
    double sched = (double)p->t0_ns + (double)p->k * wall_per_step(p);
    return (sched - (double)now_ns) / 1e9;
}

const char *kn_pace_mode_name(enum kn_pace_mode m)
{
    switch (m) {
    case KN_PACE_REALTIME: return "realtime";
    case KN_PACE_FAST: return "fast";
    case KN_PACE_STEP: return "step";
    }
    return "?";
}

int kn_pace_mode_parse(const char *s, enum kn_pace_mode *out)
{
    static const enum kn_pace_mode all[] = { KN_PACE_REALTIME, KN_PACE_FAST, KN_PACE_STEP };
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcasecmp(s, kn_pace_mode_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    return -1;
}
