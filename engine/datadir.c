/* Where a kenaf-engine binary finds its robot, terrain and scenario files:
 * one rule for the engine itself and for kenaf-simd, which checks the files
 * of the engine it is about to spawn. */
#include "datadir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void kn_datadir_of(const char *exe, char *out, size_t len)
{
    const char *e = getenv("KENAF_CONFIG_DIR");
    if (e && *e) {
        snprintf(out, len, "%s", e);
        return;
    }
    /* a binary inside the build tree reads the source tree */
    char real[PATH_MAX];
    size_t rl = strlen(KN_BUILD_ROOT);
    if (realpath(exe, real) && strncmp(real, KN_BUILD_ROOT, rl) == 0 && real[rl] == '/') {
        snprintf(out, len, "%s", KN_CONFIG_DIR);
        return;
    }
    /* an installed one reads <datadir>/kenaf-sim when it exists */
    struct stat st;
    if (stat(KN_INSTALL_CONFIG_DIR "/robots", &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(out, len, "%s", KN_INSTALL_CONFIG_DIR);
        return;
    }
    snprintf(out, len, "%s", KN_CONFIG_DIR);
}
