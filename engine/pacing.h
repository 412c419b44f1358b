/* Pacing of kenaf-engine's server: how many physics steps are due at a
 * given wall-clock instant. Pure arithmetic on nanosecond timestamps (the
 * caller reads the clock and runs the timer), so it can be tested without
 * a loop. Real time uses absolute deadlines from a start instant: step k
 * is due at t0 + k * step / rate, so rounding never accumulates into
 * drift, and a late tick catches up in bounded bursts instead of
 * sleeping the difference away. */
#ifndef KN_ENGINE_PACING_H
#define KN_ENGINE_PACING_H

#include <stdbool.h>
#include <stdint.h>

enum kn_pace_mode {
    KN_PACE_REALTIME = 0, /* simulation time follows the wall clock times rate */
    KN_PACE_FAST = 1,     /* as fast as the CPU allows, in bursts */
    KN_PACE_STEP = 2,     /* only on request (lockstep clients) */
};

struct kn_pacing {
    enum kn_pace_mode mode;
    double rate;        /* real time multiplier (REALTIME) */
    double step_ns;     /* one physics step in ns of simulated time */
    uint32_t burst_max; /* most steps handed out by one call */
    double max_lag_ns;  /* wall-clock debt beyond which the schedule restarts */
    uint64_t t0_ns;     /* start instant of the current schedule */
    uint64_t k;         /* steps done since t0 */
    bool running;
    /* counters */
    uint64_t ticks;    /* calls to kn_pacing_due while running */
    uint64_t overruns; /* calls that had more steps due than burst_max */
    uint64_t slips;    /* schedule restarts because the debt grew too large */
    double slipped_s;  /* simulated seconds given up by those restarts */
    double max_lag_s;  /* largest debt seen at a call [s of wall time] */
};

/* rate > 0 (ignored unless REALTIME); step_s > 0; burst_max >= 1;
 * max_lag_s > 0: a debt larger than this is dropped (counted as a slip)
 * instead of being caught up. The schedule is stopped until
 * kn_pacing_start(). */
void kn_pacing_init(struct kn_pacing *p, enum kn_pace_mode mode, double rate, double step_s,
                    uint32_t burst_max, double max_lag_s);

/* (Re)starts the schedule at now: step 1 is due one step later. Used at
 * start, on resume, after a reset and on a change of mode or rate. */
void kn_pacing_start(struct kn_pacing *p, uint64_t now_ns);
void kn_pacing_stop(struct kn_pacing *p);
void kn_pacing_set(struct kn_pacing *p, enum kn_pace_mode mode, double rate, uint64_t now_ns);

/* Steps to run now (0..burst_max). REALTIME: those whose deadline has
 * passed, at most burst_max (more due: an overrun); FAST: burst_max; STEP
 * or stopped: 0. The caller runs them and reports with kn_pacing_done(). */
uint32_t kn_pacing_due(struct kn_pacing *p, uint64_t now_ns);
void kn_pacing_done(struct kn_pacing *p, uint32_t steps);

/* Wall-clock ns until the next step is due (0 if one is due now);
 * UINT64_MAX when no step will become due by itself. */
uint64_t kn_pacing_wait_ns(const struct kn_pacing *p, uint64_t now_ns);

/* Simulated minus scheduled time at now, in seconds of wall time:
 * negative = behind. */
double kn_pacing_lead_s(const struct kn_pacing *p, uint64_t now_ns);

const char *kn_pace_mode_name(enum kn_pace_mode m);
/* "realtime", "fast", "step" (any letter case); -1 if none. */
int kn_pace_mode_parse(const char *s, enum kn_pace_mode *out);

#endif
