/* hrt_go_forward / hrt_turning: motion.c's control law fed with every new
 * STATUS (the wait is on the condvar the I/O thread broadcasts, no
 * polling), its belt speeds handed to setpoints.c. Whatever ends a motion,
 * the robot is left stopped: at the target a zero set-point, and the call
 * returns once the belts have stopped (so the next motion starts from
 * rest and a status read right after shows the final pose); on every
 * failure STOP. */
#include "lib.h"

#include <math.h>
#include <stdlib.h>

#include "convert.h"
#include "motion.h"

/* Bounds that keep the arithmetic exact: the wrap-safe count difference
 * covers less than 2^31 counts, the yaw accumulator 2^31 hundredths of a
 * degree. */
#define KN_MAX_TRAVEL_COUNTS 1.0e9
#define KN_MAX_TURN_DEG 1.0e6

/* At the target: wait for both measured belt speeds to reach this, at most
 * KN_SETTLE_MAX_S of robot time (a belt that never reads exactly still
 * must not hold the program up). */
#define KN_SETTLE_SPEED_MM_S 1
#define KN_SETTLE_MAX_S 1.0

static int precheck_locked(enum kn_motion_kind kind, double amount)
{
    if (!kn_lib.running)
        return HRT_ENOTINIT;
    if (!isfinite(amount))
        return HRT_EINVAL;
    if (kind == KN_MOTION_FORWARD &&
        fabs(amount) / kn_lib_mm_per_count_locked() > KN_MAX_TRAVEL_COUNTS)
        return HRT_EINVAL;
    if (kind == KN_MOTION_TURN && fabs(amount) > KN_MAX_TURN_DEG)
        return HRT_EINVAL;
    if (kn_lib.raw.flags & KN_KRP_ST_ESTOP)
        return HRT_EESTOP;
    if (kn_lib.link != KN_LIB_LINK_UP)
        return HRT_ETIMEOUT;
    if (kn_lib.hello.simulated && !(kn_lib.raw.flags & KN_KRP_ST_BACKEND_UP))
        return HRT_EBACKEND;
    return HRT_OK;
}

/* Waits for a STATUS newer than *gen, at most until the link timeout runs
 * out since the last one. True when one came. */
static bool wait_status_locked(uint64_t *gen)
{
    int64_t timeout = kn_lib.cfg.timeout_ms * KN_MS;
    while (kn_lib.running && kn_lib.status_gen == *gen && kn_lib.link == KN_LIB_LINK_UP) {
        int64_t deadline = kn_lib.status_wall + timeout;
        if (kn_lib_now() >= deadline)
            break;
        kn_lib_wait_locked(deadline);
    }
    if (!kn_lib.running || kn_lib.status_gen == *gen)
        return false;
    *gen = kn_lib.status_gen;
    return true;
}

static bool belts_stopped_locked(void)
{
    return abs(kn_lib.raw.crawler_speed_mm_s[0]) <= KN_SETTLE_SPEED_MM_S &&
           abs(kn_lib.raw.crawler_speed_mm_s[1]) <= KN_SETTLE_SPEED_MM_S;
}

static int32_t belt_setpoint(double mm_s)
{
    int32_t max = kn_lib.hello.max_speed_mm_s;
    int32_t v = kn_conv_round_i32(mm_s);
    return v > max ? max : v < -max ? -max : v;
}

static int run_motion(enum kn_motion_kind kind, double amount)
{
    pthread_mutex_lock(&kn_lib.motion_mu);
    pthread_mutex_lock(&kn_lib.mu);
    int rc = precheck_locked(kind, amount);
    if (rc != HRT_OK)
        goto out;

    struct kn_motion m;
    kn_motion_start(&m, kind, amount, kn_lib_mm_per_count_locked(), &kn_lib.raw);
    uint64_t gen = kn_lib.status_gen;
    double settle_from = -1; /* robot time the target was reached */
    for (;;) {
        /* lockstep: one status period of robot time per turn of the loop,
         * as a STATUS push would bring in real time */
        if (kn_lib.lockstep) {
            rc = kn_lockstep_step_locked((uint32_t)kn_lib.cfg.status_ms * 1000u);
            if (rc != HRT_OK)
                break;
        } else if (!wait_status_locked(&gen)) {
            rc = kn_lib.running ? HRT_ETIMEOUT : HRT_ENOTINIT;
            break;
        }
        if (kn_lib.raw.flags & KN_KRP_ST_ESTOP) {
            rc = HRT_EESTOP;
            break;
        }
        if (kn_lib.hello.simulated && !(kn_lib.raw.flags & KN_KRP_ST_BACKEND_UP)) {
            rc = HRT_EBACKEND;
            break;
        }
        if (settle_from >= 0) {
            if (belts_stopped_locked() ||
                kn_conv_us_to_s(kn_lib.raw.time_us) - settle_from > KN_SETTLE_MAX_S)
                break;
            continue;
        }
        double belt[2];
        enum kn_motion_result r = kn_motion_update(&m, &kn_lib.raw, belt);
        if (r == KN_MOTION_DONE) {
            kn_sp_crawler_locked(0, 0, kn_lib_now());
            settle_from = kn_conv_us_to_s(kn_lib.raw.time_us);
            continue;
        }
        if (r == KN_MOTION_STALL) {
            kn_lib_debug("%s: no progress for %.0f s of robot time, %.1f %s left",
                         kind == KN_MOTION_FORWARD ? "go_forward" : "turning", KN_MOTION_STALL_S,
                         m.remaining, kind == KN_MOTION_FORWARD ? "mm" : "deg");
            rc = HRT_ETIMEOUT;
            break;
        }
        kn_sp_crawler_locked(belt_setpoint(belt[0]), belt_setpoint(belt[1]), kn_lib_now());
    }
    /* After hrt_kenaf_exit (ENOTINIT) exit itself has stopped the robot. */
    if (rc != HRT_OK && rc != HRT_ENOTINIT)
        kn_sp_stop_locked(kn_lib_now());
out:
    pthread_mutex_unlock(&kn_lib.mu);
    pthread_mutex_unlock(&kn_lib.motion_mu);
    return rc;
}

int hrt_go_forward(double mm)
{
    return run_motion(KN_MOTION_FORWARD, mm);
}

int hrt_turning(double deg)
{
    return run_motion(KN_MOTION_TURN, deg);
}
