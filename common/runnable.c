/* runnable.c: can a named program be run (see runnable.h). */
#include "runnable.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int executable_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && !S_ISDIR(st.st_mode) && access(p, X_OK) == 0;
}

int kn_runnable_check(const char *prog, const char *path, char *why, size_t len)
{
    struct stat st;
    if (strchr(prog, '/')) {
        if (stat(prog, &st) < 0)
            snprintf(why, len, "cannot run %s: no such file", prog);
        else if (!executable_file(prog))
            snprintf(why, len, "cannot run %s: not an executable file", prog);
        else
            return 0;
        return -1;
    }
    char buf[PATH_MAX];
    /* an empty entry is the current directory, as execvp reads it */
    for (const char *p = path ? path : "/usr/bin:/bin";;) {
        size_t n = strcspn(p, ":");
        int w = n ? snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog)
                  : snprintf(buf, sizeof buf, "%s", prog);
        if (w > 0 && (size_t)w < sizeof buf && executable_file(buf))
            return 0;
        if (!p[n])
            break;
        p += n + 1;
    }
    snprintf(why, len, "cannot run %s: not found in PATH", prog);
    return -1;
}
