/* The table of simulator backends. A kind whose ops are NULL is known to
 * the config but not built into this kenaf-simd; naming it is a
 * config-time error (config_check.c). Adding a backend = its file plus one
 * line here. */
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
