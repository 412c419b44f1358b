/* Reading calls: hrt_get_status, hrt_show_status, hrt_is_simulated,
 * hrt_time, hrt_sleep, hrt_strerror. All of them read the cached state the
 * I/O thread keeps; only hrt_sleep waits (on the condvar, woken by every
 * STATUS). */
#include "lib.h"

#include <math.h>
#include <stdio.h>

#include "status_fill.h"

static int health_locked(void)
{
    if (kn_lib.link == KN_LIB_LINK_LOST)
        return HRT_ETIMEOUT;
    if (kn_lib.hello.simulated && !(kn_lib.raw.flags & KN_KRP_ST_BACKEND_UP))
        return HRT_EBACKEND;
    return HRT_OK;
}

int hrt_get_status(hrt_status *st)
{
    int rc;
    pthread_mutex_lock(&kn_lib.mu);
    if (!kn_lib.running) {
        rc = HRT_ENOTINIT;
    } else if (st == NULL) {
        rc = HRT_EINVAL;
    } else {
        *st = kn_lib.st;
        rc = health_locked();
    }
    pthread_mutex_unlock(&kn_lib.mu);
    return rc;
}

void hrt_show_status(void)
{
    hrt_status st;
    char name[KN_KRP_NAME_LEN + 1];
    pthread_mutex_lock(&kn_lib.mu);
    bool running = kn_lib.running;
    int health = running ? health_locked() : HRT_ENOTINIT;
    st = kn_lib.st;
    snprintf(name, sizeof name, "%s", kn_lib.hello.robot_name);
    pthread_mutex_unlock(&kn_lib.mu);

    if (!running) {
        printf("Kenaf: not connected (hrt_kenaf_init has not succeeded)\n");
    } else {
        char block[1024];
        kn_status_format(&st, name[0] ? name : "robot", block, sizeof block);
        fputs(block, stdout);
        if (health != HRT_OK)
            printf("  warning   %s\n", hrt_strerror(health));
    }
    fflush(stdout);
}

int hrt_is_simulated(void)
{
    pthread_mutex_lock(&kn_lib.mu);
    int rc = !kn_lib.running ? HRT_ENOTINIT : kn_lib.hello.simulated ? 1 : 0;
    pthread_mutex_unlock(&kn_lib.mu);
    return rc;
}

double hrt_time(void)
{
    double t;
    pthread_mutex_lock(&kn_lib.mu);
    if (!kn_lib.running)
        t = HRT_ENOTINIT;
    else if (kn_lib.lockstep)
        t = kn_lockstep_now_s_locked();
    else
        t = kn_clock_now(&kn_lib.clock, kn_lib_now());
    pthread_mutex_unlock(&kn_lib.mu);
    return t;
}

/* Between STATUS messages the wait is cut to this, so a rate estimate that
 * changes (simulator paused or sped up) is picked up promptly. */
#define KN_SLEEP_SLICE_NS (50 * KN_MS)

int hrt_sleep(double seconds)
{
    int rc = HRT_OK;
    pthread_mutex_lock(&kn_lib.mu);
    if (!kn_lib.running) {
        rc = HRT_ENOTINIT;
        goto out;
    }
    if (!isfinite(seconds) || seconds < 0) {
        rc = HRT_EINVAL;
        goto out;
    }
    if (kn_lib.lockstep) {
        rc = kn_lockstep_sleep_locked(seconds);
        goto out;
    }
    int64_t now = kn_lib_now();
    double target = kn_clock_now(&kn_lib.clock, now) + seconds;
    for (;;) {
        if (!kn_lib.running) {
            rc = HRT_ENOTINIT;
            break;
        }
        if (kn_clock_now(&kn_lib.clock, now) >= target)
            break;
        if (kn_lib.link != KN_LIB_LINK_UP) {
            rc = HRT_ETIMEOUT;
            break;
        }
        int64_t wait = kn_clock_wall_until(&kn_lib.clock, target);
        if (wait < 0 || wait > KN_SLEEP_SLICE_NS)
            wait = KN_SLEEP_SLICE_NS;
        kn_lib_wait_locked(now + wait);
        now = kn_lib_now();
    }
out:
    pthread_mutex_unlock(&kn_lib.mu);
    return rc;
}

const char *hrt_strerror(int err)
{
    switch (err) {
    case HRT_OK: return "success";
    case HRT_ENOTINIT: return "library not initialised (hrt_kenaf_init has not succeeded)";
    case HRT_ETIMEOUT: return "robot does not answer (timeout)";
    case HRT_ERANGE: return "value out of range, clamped to the robot's limit";
    case HRT_EESTOP: return "emergency stop engaged";
    case HRT_EBACKEND: return "simulator not connected";
    case HRT_EINVAL: return "invalid argument or setting";
    case HRT_ESYS: return "operating system error";
    default: return "unknown error code";
    }
}
