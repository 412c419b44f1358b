/* The parameters a sweep may vary, the only ones (docs/scenario-runs.md,
 * "Sweeps"): unit, the terrain each fits and the direction in which the
 * task gets harder. What each changes in a case's scenario is casefile.c's. */
#include "sweep.h"

#include <string.h>

static const struct kn_sweep_known known[] = {
    { "step_height_m", "m", "step", +1, 0, 0 },
    { "trench_width_m", "m", "trench", +1, 0, 0 },
    { "stair_rise_m", "m", "stairs", +1, 0, 0 },
    { "stair_run_m", "m", "stairs", -1, 0, 0 },
    { "ramp_angle_deg", "deg", "ramp", +1, 0, 0 },
    { "friction", "", NULL, -1, 0, 0 },
    { "belt_speed_max_m_s", "m/s", NULL, 0, 0, 0 },
    { "start_dx_m", "m", NULL, 0, 0, 0 },
    { "start_dy_m", "m", NULL, 0, 0, 0 },
    { "start_yaw_deg", "deg", NULL, 0, 0, 0 },
    { "seed", "", NULL, 0, 0, 1 },
    { "terrain_family", "", NULL, 0, 1, 0 },
    { "terrain_seed", "", "family", 0, 0, 1 },
};

const struct kn_sweep_known *kn_sweep_known_find(const char *name)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i].name, name) == 0)
            return &known[i];
    return NULL;
}

const char *kn_sweep_known_list(void)
{
    return "step_height_m, trench_width_m, stair_rise_m, stair_run_m, ramp_angle_deg, friction, "
           "belt_speed_max_m_s, start_dx_m, start_dy_m, start_yaw_deg, seed, terrain_family, "
           "terrain_seed";
}
