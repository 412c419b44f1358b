/* The table of simulator backends, and what they share besides the link:
 * the conversion table from the config. A kind whose ops are NULL is known
 * to the config but not built into this kenaf-simd; naming it is a
 * config-time error (config_check.c). Adding a backend = its file (or
 * folder) plus one line here. */
#include "backend.h"

#include <stdio.h>
#include <string.h>

extern const struct kn_backend_ops kn_backend_standin;
extern const struct kn_backend_ops kn_backend_engine;
extern const struct kn_backend_ops kn_gazebo_ops;
extern const struct kn_backend_ops kn_usarsim_ops;
#ifdef KN_HAVE_GZ
extern const struct kn_backend_ops kn_gzsim_ops;
#define GZ_OPS (&kn_gzsim_ops)
#else
#define GZ_OPS NULL /* built without libzmq */
#endif

static const struct {
    enum kn_backend_kind kind;
    const char *name;
    const struct kn_backend_ops *ops;
} table[] = {
    { KN_BACKEND_ENGINE, "engine", &kn_backend_engine },
    { KN_BACKEND_USARSIM, "usarsim", &kn_usarsim_ops },
    { KN_BACKEND_GAZEBO, "gazebo", &kn_gazebo_ops },
    { KN_BACKEND_STANDIN, "standin", &kn_backend_standin },
    { KN_BACKEND_GZ, "gz", GZ_OPS },
};
#define NTABLE (sizeof table / sizeof table[0])

const struct kn_backend_ops *kn_backend_find(enum kn_backend_kind kind)
{
    for (size_t i = 0; i < NTABLE; i++)
        if (table[i].kind == kind)
            return table[i].ops;
    return NULL;
}

const char *kn_backend_kind_name(enum kn_backend_kind kind)
{
    for (size_t i = 0; i < NTABLE; i++)
        if (table[i].kind == kind)
            return table[i].name;
    return "?";
}

const char *kn_backend_built_list(void)
{
    static char list[128];
    if (!list[0]) {
        size_t n = 0;
        for (size_t i = 0; i < NTABLE; i++) {
            if (!table[i].ops)
                continue;
            int w = snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", table[i].name);
            if (w < 0 || (size_t)w >= sizeof list - n)
                break;
            n += (size_t)w;
        }
    }
    return list;
}

void kn_backend_conv_from_cfg(enum kn_conv_frame frame, const struct kn_cfg_robot *cfg,
                              struct kn_conv_table *t)
{
    const struct kn_cfg_backend *b = &cfg->backend;
    if (frame == KN_FRAME_Z_DOWN)
        kn_conv_table_usarsim(t);
    else
        kn_conv_table_gazebo(t);
    t->wheel_radius_m = b->wheel_radius_m;
    t->counts_per_m = cfg->counts_per_m;
    t->counts_per_tick = b->counts_per_tick;
    t->tick_sign[KN_LEFT] = b->encoder_sign[0];
    t->tick_sign[KN_RIGHT] = b->encoder_sign[1];
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        t->flipper_sign[k] = b->flipper[k].sign;
        t->flipper_offset_rad[k] = b->flipper[k].offset_rad;
    }
    t->tracks_separation_m = b->tracks_separation_m;
    t->steering_efficiency = b->steering_efficiency;
    t->max_linear_speed_m_s = b->max_linear_speed_m_s;
    t->max_angular_speed_rad_s = b->max_angular_speed_rad_s;
}
