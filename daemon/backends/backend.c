/* The table of simulator backends, and what they share besides the link:
 * the conversion table from the config. A kind whose ops are NULL is known
 * to the config but not built into this kenaf-simd; naming it is a
 * config-time error (config_check.c). A backend with heavy libraries of
 * its own (gz: libzmq and what it pulls in, 2.4 MiB resident) is a
 * loadable module instead, opened the first time a robot's config names
 * it, so a kenaf-simd without such a robot never maps those libraries.
 * Adding a backend = its file (or folder) plus one line here. */
#include "backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "filetrust.h"
#include "log.h"
#include "selfdir.h"

extern const struct kn_backend_ops kn_backend_standin;
extern const struct kn_backend_ops kn_backend_engine;
extern const struct kn_backend_ops kn_gazebo_ops;
extern const struct kn_backend_ops kn_usarsim_ops;
#ifdef KN_GZ_MODULE
#define GZ_MODULE KN_GZ_MODULE /* "kenaf-simd-gz.so" */
#else
#define GZ_MODULE NULL /* built without libzmq */
#endif

/* A module's one entry point: its ops, the same vtable a built-in backend
 * has (backend.h). */
typedef const struct kn_backend_ops *(*module_entry_fn)(void);

static struct entry {
    enum kn_backend_kind kind;
    const char *name;
    const struct kn_backend_ops *ops; /* built in, or the loaded module's */
    const char *module;               /* file name of its module, or NULL */
    const char *entry;                /* the module's entry point */
    bool tried;                       /* the module was looked for */
    char error[640];                  /* why it did not load */
} table[] = {
    { KN_BACKEND_ENGINE, "engine", &kn_backend_engine, NULL, NULL, false, "" },
    { KN_BACKEND_USARSIM, "usarsim", &kn_usarsim_ops, NULL, NULL, false, "" },
    { KN_BACKEND_GAZEBO, "gazebo", &kn_gazebo_ops, NULL, NULL, false, "" },
    { KN_BACKEND_STANDIN, "standin", &kn_backend_standin, NULL, NULL, false, "" },
    { KN_BACKEND_GZ, "gz", NULL, GZ_MODULE, "kn_gzsim_module_ops", false, "" },
};
#define NTABLE (sizeof table / sizeof table[0])

static uint64_t module_failures;

static struct entry *entry_of(enum kn_backend_kind kind)
{
    for (size_t i = 0; i < NTABLE; i++)
        if (table[i].kind == kind)
            return &table[i];
    return NULL;
}

/* The module's path: beside this kenaf-simd (a build tree keeps it next
 * to the executable), else the private directory of an install. */
static void module_path(const char *file, char *out, size_t outlen)
{
    char self[PATH_MAX];
    if (kn_selfdir_get(self, sizeof self) == 0) {
        snprintf(out, outlen, "%s/%s", self, file);
        if (access(out, F_OK) == 0)
            return;
    }
    snprintf(out, outlen, "%s/%s", KN_MODULE_DIR, file);
}

/* dlopen()s the module once: a failure is kept (and logged once) for the
 * life of the process, so every robot naming the backend gets the same
 * clear refusal, and installing the module takes a restart. */
static void load_module(struct entry *e)
{
    e->tried = true;
    char path[PATH_MAX + 64];
    module_path(e->module, path, sizeof path);
    char why[256];
    if (access(path, F_OK) != 0) {
        snprintf(e->error, sizeof e->error, "module %.300s: %.250s", path, strerror(errno));
        goto fail;
    }
    /* code run as kenaf-simd's user: the rule for programs it runs */
    if (kn_filetrust_path(path, 0, why, sizeof why) < 0) {
        snprintf(e->error, sizeof e->error, "module %.300s: %.250s", path, why);
        goto fail;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *d = dlerror();
        snprintf(e->error, sizeof e->error, "module %.300s: %.250s", path, d ? d : "cannot load");
        goto fail;
    }
    module_entry_fn entry;
    /* POSIX: a data pointer from dlsym() converts to a function pointer */
    *(void **)&entry = dlsym(h, e->entry);
    const struct kn_backend_ops *ops = entry ? entry() : NULL;
    if (!ops || ops->kind != e->kind || strcmp(ops->name, e->name) != 0) {
        snprintf(e->error, sizeof e->error, "module %.300s: no %s() giving the \"%s\" backend",
                 path, e->entry, e->name);
        dlclose(h);
        goto fail;
    }
    /* never closed: its code runs until kenaf-simd exits */
    e->ops = ops;
    kn_debug("backend \"%s\": loaded %s", e->name, path);
    return;
fail:
    kn_err("backend \"%s\": %s", e->name, e->error);
}

const struct kn_backend_ops *kn_backend_find(enum kn_backend_kind kind)
{
    struct entry *e = entry_of(kind);
    if (!e)
        return NULL;
    if (!e->ops && e->module && !e->tried)
        load_module(e);
    if (!e->ops && e->module)
        module_failures++;
    return e->ops;
}

const struct kn_backend_ops *kn_backend_loaded(enum kn_backend_kind kind)
{
    const struct entry *e = entry_of(kind);
    return e ? e->ops : NULL;
}

const char *kn_backend_error(enum kn_backend_kind kind)
{
    const struct entry *e = entry_of(kind);
    return e && e->error[0] ? e->error : NULL;
}

uint64_t kn_backend_module_failures(void)
{
    return module_failures;
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
            if (!table[i].ops && !table[i].module)
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
