/* The trial line between kenaf-engine and kenaf-simd (usarsim_trial.h):
 * every field of KRP/1's TRIAL under a key of its own, integers only, so
 * what the engine writes the daemon reads back exactly. */
#include "usarsim_trial.h"

#include <string.h>

static const char *const kind_keys[KN_KRP_TRIAL_FAULT_KINDS] = { "TipOver", "Wall", "Lane", "Estop",
                                                                 "Assist" };

static void w_int(struct kn_usar_writer *w, const char *key, int64_t v)
{
    kn_usar_w_key(w, key);
    kn_usar_w_int(w, v);
}

int kn_usartrial_format(const struct kn_krp_trial *t, char *buf, size_t cap)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "KENAF");
    kn_usar_w_kv(&w, "Cmd", "Trial");
    kn_usar_w_kv(&w, "Status", "OK");
    kn_usar_w_kv(&w, "Name", t->name[0] ? t->name : "-");
    w_int(&w, "Course", t->course);
    w_int(&w, "Flags", t->flags);
    w_int(&w, "End", t->end);
    w_int(&w, "Reps", t->reps);
    w_int(&w, "Rep", t->rep);
    w_int(&w, "ElapsedMs", t->rep_elapsed_ms);
    w_int(&w, "RepFaults", t->rep_faults);
    w_int(&w, "Completed", t->completed);
    w_int(&w, "Successes", t->successes);
    w_int(&w, "Faults", t->faults);
    for (int k = 0; k < KN_KRP_TRIAL_FAULT_KINDS; k++)
        w_int(&w, kind_keys[k], t->by_kind[k]);
    w_int(&w, "LimitMs", t->limit_ms);
    w_int(&w, "LeftMs", t->left_ms);
    return kn_usar_w_end(&w);
}

/* One integer field within [0, max]. */
static enum kn_usar_result get(const struct kn_usar_line *l, const char *key, int64_t max,
                               int64_t *v)
{
    enum kn_usar_result r = kn_usar_get_int(l, key, v);
    if (r != KN_USAR_OK)
        return r;
    return *v < 0 || *v > max ? KN_USAR_ERANGE : KN_USAR_OK;
}

enum kn_usar_result kn_usartrial_parse(const struct kn_usar_line *l, struct kn_krp_trial *t)
{
    memset(t, 0, sizeof *t);
    struct kn_usar_str name;
    enum kn_usar_result r = kn_usar_get_str(l, "Name", &name);
    if (r != KN_USAR_OK)
        return r;
    if (name.n == 0 || name.n > KN_KRP_TRIAL_NAME_LEN || memchr(name.p, '\0', name.n))
        return KN_USAR_ERANGE;
    if (!(name.n == 1 && name.p[0] == '-'))
        memcpy(t->name, name.p, name.n);
    int64_t v;
#define FIELD(key, max, dst)                          \
    do {                                              \
        if ((r = get(l, key, max, &v)) != KN_USAR_OK) \
            return r;                                 \
        dst = v;                                      \
    } while (0)
    FIELD("Course", KN_KRP_TRIAL_FIGURE8, t->course);
    FIELD("Flags", KN_KRP_TRIAL_F_UNDER_WAY | KN_KRP_TRIAL_F_ENDED, t->flags);
    FIELD("End", KN_KRP_TRIAL_END_PROGRAM, t->end);
    FIELD("Reps", UINT16_MAX, t->reps);
    FIELD("Rep", UINT16_MAX, t->rep);
    FIELD("ElapsedMs", UINT32_MAX, t->rep_elapsed_ms);
    FIELD("RepFaults", UINT16_MAX, t->rep_faults);
    FIELD("Completed", UINT16_MAX, t->completed);
    FIELD("Successes", UINT16_MAX, t->successes);
    FIELD("Faults", UINT16_MAX, t->faults);
    for (int k = 0; k < KN_KRP_TRIAL_FAULT_KINDS; k++)
        FIELD(kind_keys[k], UINT16_MAX, t->by_kind[k]);
    FIELD("LimitMs", UINT32_MAX, t->limit_ms);
    FIELD("LeftMs", UINT32_MAX, t->left_ms);
#undef FIELD
    return KN_USAR_OK;
}
