/* Test-only stand-in for the robot's hardware driver library: the same
 * header (kenaf.h), the same soname (libkenaf.so.1) and the same symbols,
 * but on this machine there is no robot, so every call fails the way the
 * real library does without its CAN bus. The drop-in test runs one
 * unchanged controller binary against this and against the simulation
 * library to show that only the library decides where it drives. */
#include <stdio.h>

#include "kenaf.h"

int hrt_kenaf_init(void)
{
    fprintf(stderr, "libkenaf (hardware): no CAN bus: cannot open can0\n");
    return HRT_ESYS;
}

void hrt_kenaf_exit(void)
{
}

int hrt_go_forward(double mm)
{
    (void)mm;
    return HRT_ENOTINIT;
}

int hrt_turning(double deg)
{
    (void)deg;
    return HRT_ENOTINIT;
}

int hrt_stop(void)
{
    return HRT_ENOTINIT;
}

void hrt_show_status(void)
{
    printf("Kenaf: no CAN bus\n");
}

int hrt_set_crawler_speed(double left_mm_s, double right_mm_s)
{
    (void)left_mm_s;
    (void)right_mm_s;
    return HRT_ENOTINIT;
}

int hrt_set_flipper_angle(int flipper, double deg)
{
    (void)flipper;
    (void)deg;
    return HRT_ENOTINIT;
}

int hrt_set_flipper_angles(const double deg[4])
{
    (void)deg;
    return HRT_ENOTINIT;
}

int hrt_get_status(hrt_status *st)
{
    (void)st;
    return HRT_ENOTINIT;
}

int hrt_is_simulated(void)
{
    return HRT_ENOTINIT;
}

double hrt_time(void)
{
    return HRT_ENOTINIT;
}

int hrt_sleep(double seconds)
{
    (void)seconds;
    return HRT_ENOTINIT;
}

const char *hrt_strerror(int err)
{
    return err == HRT_ESYS ? "no CAN bus" : "hardware library: not initialised";
}
