/* sd_notify wrappers: see notify.h. */
#include "notify.h"

#include <stdarg.h>
#include <stdio.h>

#include <systemd/sd-daemon.h>

#include "log.h"

void kn_notify(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int rc = sd_notify(0, msg);
    if (rc < 0)
        kn_debug("sd_notify failed: %d", rc);
}

bool kn_notify_watchdog(uint64_t *usec)
{
    uint64_t u = 0;
    if (sd_watchdog_enabled(0, &u) > 0 && u > 0) {
        *usec = u;
        return true;
    }
    return false;
}
