/* The running executable's directory: see selfdir.h. */
#include "selfdir.h"

#include <string.h>
#include <unistd.h>

int kn_selfdir_get(char *out, size_t len)
{
    if (len < 2)
        return -1;
    ssize_t n = readlink("/proc/self/exe", out, len - 1);
    if (n <= 0 || (size_t)n >= len - 1)
        return -1;
    out[n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        return -1;
    *(slash == out ? slash + 1 : slash) = '\0';
    return 0;
}
