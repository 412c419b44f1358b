/* One log line in a fixed buffer: see logline.h. */
#include "logline.h"

#include <stdio.h>

size_t kn_logline_vformat(char *buf, size_t cap, size_t used, const char *fmt, va_list ap)
{
    if (used > cap - 2)
        used = cap - 2;
    int m = vsnprintf(buf + used, cap - used - 1, fmt, ap);
    size_t len = used + (m < 0 ? 0 : (size_t)m);
    if (len > cap - 2)
        len = cap - 2; /* truncated: still one line */
    buf[len++] = '\n';
    buf[len] = '\0';
    return len;
}
