/* The robot clock between STATUS messages: hrt_time() reads STATUS time_us,
 * advanced by wall time at the rate the robot clock was seen to run, so it
 * follows a paused or faster-than-real-time simulator. No I/O, no locking:
 * the caller holds the library lock. */
#ifndef KN_ROBOT_CLOCK_H
#define KN_ROBOT_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct kn_clock {
    bool have;       /* at least one sample */
    uint64_t t_us;   /* robot time of the latest sample */
    int64_t wall_ns; /* monotonic wall time it arrived */
    double rate;     /* robot seconds per wall second */
    double offset_s; /* added to robot time after the robot clock restarted */
    double last_out; /* last value returned: never go below it */
    int64_t cap_ns;  /* longest extrapolation past the latest sample */
};

/* period_ms: the status period; extrapolation stops after two of them. */
void kn_clock_reset(struct kn_clock *c, int period_ms);

/* A STATUS with robot time t_us arrived at wall_ns. */
void kn_clock_sample(struct kn_clock *c, uint64_t t_us, int64_t wall_ns);

/* Robot time in seconds at wall_ns; never less than a previous result. */
double kn_clock_now(struct kn_clock *c, int64_t wall_ns);

/* Wall nanoseconds from the last kn_clock_now() until the robot clock
 * reaches `target` seconds at the current rate, or -1 when it is not
 * advancing (paused simulator). */
int64_t kn_clock_wall_until(const struct kn_clock *c, double target);

#endif
