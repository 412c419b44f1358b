/* Set-point calls: hrt_set_crawler_speed, hrt_set_flipper_angle(s),
 * hrt_stop. They never wait for the robot: they clamp to the limits the
 * robot announced in HELLO_ACK, hand the value to setpoints.c (which sends
 * it at once and repeats it) and report what they know from the latest
 * STATUS. */
#include "lib.h"

#include <math.h>

#include "convert.h"

static bool estopped_locked(void)
{
    return (kn_lib.raw.flags & KN_KRP_ST_ESTOP) != 0;
}

/* What a set-point that was accepted reports, in order of importance. */
static int outcome_locked(bool clamped)
{
    if (kn_lib.link == KN_LIB_LINK_LOST)
        return HRT_ETIMEOUT;
    if (kn_lib.hello.simulated && !(kn_lib.raw.flags & KN_KRP_ST_BACKEND_UP))
        return HRT_EBACKEND;
    return clamped ? HRT_ERANGE : HRT_OK;
}

static int32_t clamp_i32(int32_t v, int32_t lo, int32_t hi, bool *clamped)
{
    if (v < lo) {
        *clamped = true;
        return lo;
    }
    if (v > hi) {
        *clamped = true;
        return hi;
    }
    return v;
}

int hrt_set_crawler_speed(double left_mm_s, double right_mm_s)
{
    int rc;
    pthread_mutex_lock(&kn_lib.mu);
    if (!kn_lib.running) {
        rc = HRT_ENOTINIT;
    } else if (!isfinite(left_mm_s) || !isfinite(right_mm_s)) {
        rc = HRT_EINVAL;
    } else if (estopped_locked()) {
        rc = HRT_EESTOP;
    } else {
        int32_t max = kn_lib.hello.max_speed_mm_s;
        bool clamped = false;
        int32_t l = clamp_i32(kn_conv_round_i32(left_mm_s), -max, max, &clamped);
        int32_t r = clamp_i32(kn_conv_round_i32(right_mm_s), -max, max, &clamped);
        kn_sp_crawler_locked(l, r, kn_lib_now());
        rc = outcome_locked(clamped);
    }
    pthread_mutex_unlock(&kn_lib.mu);
    return rc;
}

static int set_flippers(uint8_t mask, const double deg[4])
{
    int rc;
    pthread_mutex_lock(&kn_lib.mu);
    if (!kn_lib.running) {
        rc = HRT_ENOTINIT;
        goto out;
    }
    for (int k = 0; k < 4; k++) {
        if ((mask & (1u << k)) && !isfinite(deg[k])) {
            rc = HRT_EINVAL;
            goto out;
        }
    }
    if (estopped_locked()) {
        rc = HRT_EESTOP;
        goto out;
    }
    int32_t cdeg[4] = { 0, 0, 0, 0 };
    bool clamped = false;
    for (int k = 0; k < 4; k++)
        if (mask & (1u << k))
            cdeg[k] = clamp_i32(kn_conv_deg_to_cdeg(deg[k]), kn_lib.hello.flipper_min_cdeg,
                                kn_lib.hello.flipper_max_cdeg, &clamped);
    kn_sp_flipper_locked(mask, cdeg, kn_lib_now());
    rc = outcome_locked(clamped);
out:
    pthread_mutex_unlock(&kn_lib.mu);
    return rc;
}

int hrt_set_flipper_angle(int flipper, double deg)
{
    if (flipper < HRT_FLIPPER_FL || flipper > HRT_FLIPPER_RR) {
        pthread_mutex_lock(&kn_lib.mu);
        int rc = kn_lib.running ? HRT_EINVAL : HRT_ENOTINIT;
        pthread_mutex_unlock(&kn_lib.mu);
        return rc;
    }
    double all[4] = { 0, 0, 0, 0 };
    all[flipper] = deg;
    return set_flippers((uint8_t)(1u << flipper), all);
}

int hrt_set_flipper_angles(const double deg[4])
{
    if (deg == NULL) {
        pthread_mutex_lock(&kn_lib.mu);
        int rc = kn_lib.running ? HRT_EINVAL : HRT_ENOTINIT;
        pthread_mutex_unlock(&kn_lib.mu);
        return rc;
    }
    return set_flippers(0x0f, deg);
}

int hrt_stop(void)
{
    int rc = HRT_OK;
    pthread_mutex_lock(&kn_lib.mu);
    if (!kn_lib.running) {
        rc = HRT_ENOTINIT;
    } else {
        kn_sp_stop_locked(kn_lib_now());
        if (kn_lib.link == KN_LIB_LINK_LOST)
            rc = HRT_ETIMEOUT;
    }
    pthread_mutex_unlock(&kn_lib.mu);
    return rc;
}
