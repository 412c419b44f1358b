/* Logging to stderr: see log.h. A whole line is formatted first and written
 * with one write() so lines from a crash-time flush never interleave. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logline.h"

static enum kn_log_level cur_level = KN_LOG_INFO;
static bool journal;

static const char *const level_names[] = { "error", "warn", "info", "debug" };
/* syslog priorities: err, warning, info, debug */
static const int level_prio[] = { 3, 4, 6, 7 };

void kn_log_init(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    journal = js && *js;
}

void kn_log_set_level(enum kn_log_level level)
{
    cur_level = level;
}

enum kn_log_level kn_log_get_level(void)
{
    return cur_level;
}

bool kn_log_enabled(enum kn_log_level level)
{
    return level <= cur_level;
}

int kn_log_parse_level(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, level_names[i]) == 0)
            return i;
    return -1;
}

const char *kn_log_level_name(enum kn_log_level level)
{
    return (unsigned)level < 4 ? level_names[level] : "?";
}

void kn_log(enum kn_log_level level, const char *fmt, ...)
{
    if (!kn_log_enabled(level))
        return;
    char line[1024];
    int n;
    if (journal)
        n = snprintf(line, sizeof line, "<%d>", level_prio[level]);
    else
        n = snprintf(line, sizeof line, "kenaf-simd: %s: ", level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    size_t len = kn_logline_vformat(line, sizeof line, n < 0 ? 0 : (size_t)n, fmt, ap);
    va_end(ap);
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
