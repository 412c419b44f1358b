/* Whether two robot entries would behave the same, so that a SIGHUP keeps
 * the robot running: every key of a robot and of its backend in the key
 * table, compared by type or by the key's own hook. */
#include <string.h>

#include "config_priv.h"

static bool key_equal(const struct kn_cfg_key *k, const void *a, const void *b)
{
    const void *x = kn_config_key_cfield(k, a), *y = kn_config_key_cfield(k, b);
    switch (k->type) {
    case KN_CFG_NUMBER:
        if (k->unit == KN_CFG_UNIT_DEG_CDEG)
            return *(const int32_t *)x == *(const int32_t *)y;
        return *(const double *)x == *(const double *)y;
    case KN_CFG_INT32: return *(const int32_t *)x == *(const int32_t *)y;
    case KN_CFG_BOOL: return *(const bool *)x == *(const bool *)y;
    case KN_CFG_STRING: return strcmp(x, y) == 0;
    case KN_CFG_ENUM: return *(const int *)x == *(const int *)y;
    case KN_CFG_VEC:
        for (int i = 0; i < k->vec_n; i++)
            if (((const double *)x)[i] != ((const double *)y)[i])
                return false;
        return true;
    case KN_CFG_CUSTOM: return k->hooks == NULL || k->hooks->equal == NULL || k->hooks->equal(a, b);
    case KN_CFG_SECTION: return true;
    }
    return false;
}

static bool scope_equal(enum kn_cfg_scope scope, const void *a, const void *b)
{
    size_t n;
    const struct kn_cfg_key *keys = kn_config_keys_of(scope, &n);
    for (size_t i = 0; i < n; i++)
        if (!key_equal(&keys[i], a, b))
            return false;
    return true;
}

bool kn_config_robot_equal(const struct kn_cfg_robot *a, const struct kn_cfg_robot *b)
{
    /* fault_injection is the top-level key, copied into each robot */
    return a->fault_injection == b->fault_injection && scope_equal(KN_CFG_SCOPE_ROBOT, a, b) &&
           scope_equal(KN_CFG_SCOPE_BACKEND, &a->backend, &b->backend);
}
