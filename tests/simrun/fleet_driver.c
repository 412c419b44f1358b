/* A fleet member for the scenario run tests: drives straight ahead at
 * SPEED mm/s for SECONDS of robot time (hrt_sleep, so in lockstep the
 * world waits for it), then stops and exits 0. SPEED 0 is a controller
 * that does not drive at all, to be judged a failure.
 *   fleet_driver SPEED_MM_S SECONDS */
#include <stdio.h>
#include <stdlib.h>

#include "kenaf.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fleet_driver SPEED_MM_S SECONDS\n");
        return 2;
    }
    double speed = atof(argv[1]), seconds = atof(argv[2]);
    int rc = hrt_kenaf_init();
    if (rc < 0) {
        fprintf(stderr, "fleet_driver: %s\n", hrt_strerror(rc));
        return 2;
    }
    rc = hrt_set_crawler_speed(speed, speed);
    /* in slices, as a controller's loop would */
    for (double t = 0; rc >= 0 && t < seconds - 1e-9; t += 0.1)
        rc = hrt_sleep(0.1);
    printf("t=%.2f s: %s\n", hrt_time(), rc < 0 ? hrt_strerror(rc) : "done");
    hrt_stop();
    hrt_kenaf_exit();
    return rc < 0 ? 1 : 0;
}
