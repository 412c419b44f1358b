/* A controller that never lets robot time pass: it sets a speed and then
 * computes forever without hrt_sleep or a motion. In lockstep the world
 * cannot move; kenaf-sim-run --scenario must report it, not hang. */
#include <stdio.h>

#include "kenaf.h"

int main(void)
{
    if (hrt_kenaf_init() < 0)
        return 2;
    hrt_set_crawler_speed(200, 200);
    volatile unsigned long n = 0;
    for (;;)
        n++;
}
