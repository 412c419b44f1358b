/* One log line in a fixed buffer, for the programs that write their log
 * with a single write(2) (kenaf-simd, kenaf-engine): a line is never
 * interleaved with another writer's, and never torn by a full pipe. */
#ifndef KN_COMMON_LOGLINE_H
#define KN_COMMON_LOGLINE_H

#include <stdarg.h>
#include <stddef.h>

/* buf already holds a prefix of `used` bytes; appends fmt formatted
 * (truncated to fit), a newline and a NUL. Returns the line's length with
 * its newline, at most cap - 1. cap must be at least used + 2. */
size_t kn_logline_vformat(char *buf, size_t cap, size_t used, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

#endif
