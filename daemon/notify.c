/* sd_notify wrappers: see notify.h. libsystemd (with libgcrypt, liblz4,
 * libzstd, liblzma and libcap under it: 1 MiB resident) is opened only
 * when systemd gave kenaf-simd something to talk to, NOTIFY_SOCKET or
 * WATCHDOG_USEC; without either, sd_notify() and sd_watchdog_enabled()
 * do nothing, so kenaf-simd started by hand, by a test or by
 * kenaf-sim-run skips them and never maps the libraries. */
#include "notify.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <systemd/sd-daemon.h>

#include "log.h"

/* The two calls, checked against the header's prototypes. */
static __typeof__(sd_notify) *notify_fn;
static __typeof__(sd_watchdog_enabled) *watchdog_fn;

static bool systemd_open(void)
{
    static bool tried;
    if (tried)
        return notify_fn && watchdog_fn;
    tried = true;
    if (!getenv("NOTIFY_SOCKET") && !getenv("WATCHDOG_USEC"))
        return false;
    void *h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        kn_err("systemd notifications off: %s", e ? e : "cannot load libsystemd.so.0");
        return false;
    }
    /* POSIX: dlsym()'s data pointer converts to a function pointer */
    *(void **)&notify_fn = dlsym(h, "sd_notify");
    *(void **)&watchdog_fn = dlsym(h, "sd_watchdog_enabled");
    if (!notify_fn || !watchdog_fn)
        kn_err("systemd notifications off: libsystemd.so.0 lacks sd_notify");
    return notify_fn && watchdog_fn; /* never closed */
}

void kn_notify(const char *fmt, ...)
{
    if (!systemd_open())
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int rc = notify_fn(0, msg);
    if (rc < 0)
        kn_debug("sd_notify failed: %d", rc);
}

bool kn_notify_watchdog(uint64_t *usec)
{
    uint64_t u = 0;
    if (systemd_open() && watchdog_fn(0, &u) > 0 && u > 0) {
        *usec = u;
        return true;
    }
    return false;
}
