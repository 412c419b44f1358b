/* A controller that is not one of the project's examples, for the scenario
 * run tests: the test compiles it against kenaf.h alone and runs the
 * binary, unchanged, through kenaf-sim-run --scenario. It climbs the 200 mm
 * step of config/scenarios/ci/climb-step.json open loop, by the robot
 * clock only (hrt_sleep): flippers up while it drives to the edge, front
 * flippers down to lever the nose up, rear flippers down to push, all in
 * line on top. Exit 0 when every call succeeded. */
#include <stdio.h>

#include "kenaf.h"

static int flippers(double front, double rear)
{
    const double a[4] = { front, front, rear, rear };
    int rc = hrt_set_flipper_angles(a);
    return rc == HRT_ERANGE ? 0 : rc;
}

int main(void)
{
    static const struct {
        double front, rear, belt, seconds;
    } plan[] = {
        { 70, 0, 150, 3.4 },    /* to the edge */
        { -30, 0, 150, 0.6 },   /* lever the nose up */
        { -30, -75, 150, 2.4 }, /* push the tail up */
        { 0, 0, 150, 2.0 },     /* in line on top */
        { 0, 0, 0, 1.0 },       /* stand */
    };
    int rc = hrt_kenaf_init();
    if (rc < 0) {
        fprintf(stderr, "own_climber: %s\n", hrt_strerror(rc));
        return 2;
    }
    for (unsigned i = 0; rc >= 0 && i < sizeof plan / sizeof plan[0]; i++) {
        rc = flippers(plan[i].front, plan[i].rear);
        if (rc >= 0)
            rc = hrt_set_crawler_speed(plan[i].belt, plan[i].belt);
        if (rc >= 0)
            rc = hrt_sleep(plan[i].seconds);
        printf("t=%.2f s: step %u %s\n", hrt_time(), i, rc < 0 ? hrt_strerror(rc) : "done");
    }
    hrt_stop();
    hrt_kenaf_exit();
    return rc < 0 ? 1 : 0;
}
