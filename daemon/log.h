/* kenaf-simd logging: one line per event on stderr with a level. Under
 * systemd (JOURNAL_STREAM set) each line starts with its syslog priority
 * ("<3>") so journald keeps the level. Nothing here is per datagram at the
 * default level: the hot paths log at debug only. */
#ifndef KN_LOG_H
#define KN_LOG_H

#include <stdbool.h>

#include "config.h"

void kn_log_init(void); /* reads JOURNAL_STREAM */
void kn_log_set_level(enum kn_log_level level);
enum kn_log_level kn_log_get_level(void);
bool kn_log_enabled(enum kn_log_level level);

/* "error", "warn", "info", "debug"; returns -1 for anything else. */
int kn_log_parse_level(const char *s);
const char *kn_log_level_name(enum kn_log_level level);

void kn_log(enum kn_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define kn_err(...) kn_log(KN_LOG_ERROR, __VA_ARGS__)
#define kn_warn(...) kn_log(KN_LOG_WARN, __VA_ARGS__)
#define kn_info(...) kn_log(KN_LOG_INFO, __VA_ARGS__)
#define kn_debug(...)                          \
    do {                                       \
        if (kn_log_enabled(KN_LOG_DEBUG))      \
            kn_log(KN_LOG_DEBUG, __VA_ARGS__); \
    } while (0)

#endif
