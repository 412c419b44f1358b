/* climb_step: climbs a step of up to about 250 mm with the flippers, the
 * way an operator does it (after Kurose et al., IROS 2008): front flippers
 * up to reach over the edge, then down to lever the nose onto it, rear
 * flippers down to push the tail up once the nose is high, and everything
 * folded in line once the robot lies level on top. It senses only what a
 * Kenaf controller has (pitch, encoders, time), never the simulation's
 * position. Built against kenaf.h / libkenaf.so.1.
 *
 *   climb_step [MAX_SECONDS]   (default 40)
 *
 * Exit status: 0 on top and level, 1 it gave up (time out, a call failed),
 * 2 no connection to the robot. */
#include <stdio.h>
#include <stdlib.h>

#include "kenaf.h"

#define BELT_MM_S 150.0
#define TICK_S 0.05

/* pitch + lowers the nose: nose up is negative */
#define NOSE_UP_DEG (-8.0)    /* the front is on the edge: lever it up */
#define NOSE_HIGH_DEG (-20.0) /* push the tail up */
#define LEVEL_DEG 10.0        /* nose down again after the climb */

static int set4(double fl, double fr, double rl, double rr)
{
    const double a[4] = { fl, fr, rl, rr };
    int rc = hrt_set_flipper_angles(a);
    return rc == HRT_ERANGE ? HRT_OK : rc;
}

int main(int argc, char **argv)
{
    double max_s = argc > 1 ? atof(argv[1]) : 40.0;
    int rc = hrt_kenaf_init();
    if (rc < 0) {
        fprintf(stderr, "climb_step: cannot connect to the robot: %s\n", hrt_strerror(rc));
        return 2;
    }
    enum { APPROACH, LEVER, PUSH, LEVEL, DONE } phase = APPROACH;
    double t0 = hrt_time(), phase_t = t0, min_pitch = 0;
    rc = set4(70, 70, 0, 0);
    if (rc >= 0)
        rc = hrt_set_crawler_speed(BELT_MM_S, BELT_MM_S);
    while (rc >= 0 && phase != DONE) {
        rc = hrt_sleep(TICK_S);
        if (rc < 0)
            break;
        hrt_status st;
        rc = hrt_get_status(&st);
        if (rc < 0)
            break;
        double t = hrt_time();
        if (st.pitch < min_pitch)
            min_pitch = st.pitch;
        if (t - t0 > max_s) {
            fprintf(stderr, "climb_step: not on top after %.0f s (phase %d)\n", max_s, phase);
            rc = HRT_ETIMEOUT;
            break;
        }
        switch (phase) {
        case APPROACH:
            if (st.pitch < NOSE_UP_DEG) {
                printf("t=%.2f s: nose on the edge (pitch %.1f deg): front flippers down\n", t,
                       st.pitch);
                rc = set4(-30, -30, 0, 0);
                phase = LEVER;
                phase_t = t;
            }
            break;
        case LEVER:
            if (st.pitch < NOSE_HIGH_DEG || t - phase_t > 4.0) {
                printf("t=%.2f s: nose high (pitch %.1f deg): rear flippers push\n", t, st.pitch);
                rc = set4(-30, -30, -75, -75);
                phase = PUSH;
                phase_t = t;
            }
            break;
        case PUSH:
            /* over the edge the nose drops again */
            if (st.pitch > -LEVEL_DEG && t - phase_t > 0.5) {
                printf("t=%.2f s: over the edge (pitch %.1f deg): flippers in line\n", t, st.pitch);
                rc = set4(0, 0, 0, 0);
                phase = LEVEL;
                phase_t = t;
            }
            break;
        case LEVEL:
            if (t - phase_t > 3.0) {
                rc = hrt_stop();
                if (rc >= 0)
                    rc = hrt_sleep(1.0);
                phase = DONE;
            }
            break;
        case DONE: break;
        }
    }
    hrt_stop();
    hrt_status st;
    if (hrt_get_status(&st) >= 0)
        printf("end: t=%.2f s, pitch %.1f deg, roll %.1f deg, highest nose %.1f deg\n", hrt_time(),
               st.pitch, st.roll, min_pitch);
    hrt_kenaf_exit();
    return rc < 0 ? 1 : 0;
}
