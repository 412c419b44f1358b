/* square: the published Kenaf controller program. Drives a 100 mm square:
 * four times show the status, go forward 100 mm, turn left 90 degrees;
 * then stop. Built against kenaf.h / libkenaf.so.1, it runs unchanged on
 * the robot's driver library or, through kenaf-sim-run, in simulation.
 * Exit status: 0 done, 1 a motion failed, 2 no connection to the robot. */
#include <stdio.h>

#include "kenaf.h"

int main(void)
{
    int rc = hrt_kenaf_init();
    if (rc < 0) {
        fprintf(stderr, "square: cannot connect to the robot: %s\n", hrt_strerror(rc));
        return 2;
    }
    for (int i = 0; i < 4 && rc >= 0; i++) {
        hrt_show_status();
        rc = hrt_go_forward(100);
        if (rc < 0) {
            fprintf(stderr, "square: leg %d: go forward: %s\n", i + 1, hrt_strerror(rc));
            break;
        }
        rc = hrt_turning(90);
        if (rc < 0)
            fprintf(stderr, "square: leg %d: turn: %s\n", i + 1, hrt_strerror(rc));
    }
    hrt_stop();
    if (rc >= 0)
        hrt_show_status();
    hrt_kenaf_exit();
    return rc < 0 ? 1 : 0;
}
