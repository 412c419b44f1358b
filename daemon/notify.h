/* systemd service notifications (the sd_notify protocol, spoken without
 * libsystemd): READY, RELOADING, STOPPING, WATCHDOG and STATUS lines.
 * No-ops when not started by systemd (no NOTIFY_SOCKET). */
#ifndef KN_NOTIFY_H
#define KN_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

void kn_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* True and the interval when systemd expects WATCHDOG=1 pings. */
bool kn_notify_watchdog(uint64_t *usec);

#endif
