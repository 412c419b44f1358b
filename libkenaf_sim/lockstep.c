/* Lockstep (docs/api.md, "Lockstep"): with a robot whose HELLO_ACK has
 * capability bit 2 the world moves only when the controller lets it. The
 * library asks for robot time to pass with KRP/1 STEP wherever the API
 * lets time pass (hrt_sleep, the blocking motions) and waits for the
 * STATUS that answers it; between those calls the simulated robot stands
 * still however long the program computes, so a run is the same on a busy
 * machine as on an idle one. hrt_time is the robot clock after the last
 * STEP, never interpolated with the wall clock. */
#include "lib.h"

#include <math.h>

#include "convert.h"

/* Robot time moves in whole milliseconds (the engine's physics step). */
#define KN_STEP_QUANTUM_US 1000u

static int error_rc(uint8_t code)
{
    switch (code) {
    case KN_KRP_ERR_BACKEND_DOWN: return HRT_EBACKEND;
    case KN_KRP_ERR_UNKNOWN_TYPE: return HRT_EINVAL; /* the robot cannot step */
    default: return HRT_ETIMEOUT;
    }
}

void kn_lockstep_status_locked(const struct kn_krp_status *s)
{
    if (!kn_lib.step_waiting || s->req_seq != kn_lib.step_seq)
        return;
    kn_lib.step_waiting = false;
    kn_lib.step_rc = HRT_OK;
    if (s->time_us > kn_lib.lock_us)
        kn_lib.lock_us = s->time_us;
    kn_lib.step_gen++;
}

void kn_lockstep_error_locked(const struct kn_krp_error *e)
{
    if (!kn_lib.step_waiting || e->offending_type != KN_KRP_STEP ||
        e->offending_seq != kn_lib.step_seq)
        return;
    kn_lib.step_waiting = false;
    kn_lib.step_rc = error_rc(e->code);
    kn_lib.step_gen++;
    kn_lib_debug("STEP seq %u refused: ERROR %u", e->offending_seq, e->code);
}

int kn_lockstep_step_locked(uint32_t advance_us)
{
    if (!kn_lib.running)
        return HRT_ENOTINIT;
    if (kn_lib.link != KN_LIB_LINK_UP)
        return HRT_ETIMEOUT;
    if (advance_us < KN_KRP_STEP_MIN_US)
        advance_us = KN_KRP_STEP_MIN_US;
    if (advance_us > KN_KRP_STEP_MAX_US)
        advance_us = KN_KRP_STEP_MAX_US;
    advance_us = (advance_us + KN_STEP_QUANTUM_US - 1) / KN_STEP_QUANTUM_US * KN_STEP_QUANTUM_US;
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_STEP, 0, 0);
    m.u.step.advance_us = advance_us;
    uint64_t gen = kn_lib.step_gen;
    if (kn_udp_send(&m) != 0)
        return HRT_ESYS;
    /* kn_udp_send put the seq in m; the answer is matched under mu, which
     * this thread holds until it waits, so it cannot be missed */
    kn_lib.step_seq = m.h.seq;
    kn_lib.step_waiting = true;
    int64_t deadline = kn_lib_now() + kn_lib.cfg.timeout_ms * KN_MS;
    while (kn_lib.running && kn_lib.step_gen == gen && kn_lib_now() < deadline)
        kn_lib_wait_locked(deadline);
    if (kn_lib.step_gen == gen) {
        kn_lib.step_waiting = false;
        kn_lib_debug("no answer to STEP seq %u within %d ms", kn_lib.step_seq,
                     kn_lib.cfg.timeout_ms);
        return kn_lib.running ? HRT_ETIMEOUT : HRT_ENOTINIT;
    }
    return kn_lib.step_rc;
}

double kn_lockstep_now_s_locked(void)
{
    return kn_conv_us_to_s(kn_lib.lock_us);
}

int kn_lockstep_sleep_locked(double seconds)
{
    uint64_t period = (uint64_t)kn_lib.cfg.status_ms * 1000u;
    /* to the nearest robot microsecond; the last STEP may end up to a
     * millisecond past the target (whole physics steps) */
    uint64_t target = kn_lib.lock_us + (uint64_t)llround(seconds * 1e6);
    while (kn_lib.lock_us < target) {
        uint64_t left = target - kn_lib.lock_us;
        uint64_t before = kn_lib.lock_us;
        int rc = kn_lockstep_step_locked((uint32_t)(left < period ? left : period));
        if (rc != HRT_OK)
            return rc;
        if (kn_lib.lock_us == before) {
            /* a STATUS that does not show the time moving: the robot's
             * clock is not ours to trust any more */
            kn_lib_debug("STEP answered without the robot clock moving (%llu us)",
                         (unsigned long long)before);
            return HRT_ETIMEOUT;
        }
    }
    return HRT_OK;
}
