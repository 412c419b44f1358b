/* A spawned engine's terrain and robot files: see engine_files.h. */
#include "engine_files.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "datadir.h" /* engine/: kn_datadir_of */
#include "params.h"  /* engine/: kn_robotfile_load */
#include "terrain.h" /* engine/: kn_terrain_load */

static const char *const subdirs[] = { "terrains", "robots" };

const char *kn_engfiles_noun(enum kn_engfiles_kind kind)
{
    return kind == KN_ENGFILES_TERRAIN ? "terrain" : "robot";
}

/* The engine's own rule (engine/datadir.c), for the engine at exe. */
void kn_engfiles_dir(const char *exe, char *out, size_t len)
{
    kn_datadir_of(exe, out, len);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int kn_engfiles_path(enum kn_engfiles_kind kind, const char *dir, const char *spec, char *out,
                     size_t len, char *why, size_t whylen)
{
    int w;
    /* a name that is no file there (or not a name at all) fails the load */
    if (strchr(spec, '/') || ends_with(spec, ".json"))
        w = snprintf(out, len, "%s", spec);
    else
        w = snprintf(out, len, "%s/%s/%s.json", dir, subdirs[kind], spec);
    if (w < 0 || (size_t)w >= len) {
        snprintf(why, whylen, "path too long");
        return -1;
    }
    return 0;
}

int kn_engfiles_check(enum kn_engfiles_kind kind, const char *path, char *why, size_t whylen)
{
    int rc;
    if (kind == KN_ENGFILES_TERRAIN) {
        struct kn_terrain *t = calloc(1, sizeof *t);
        if (!t) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        rc = kn_terrain_load(path, NULL, t, why, whylen);
        if (rc == 0)
            kn_terrain_free(t);
        free(t);
    } else {
        struct kn_robot_params *rp = calloc(1, sizeof *rp);
        if (!rp) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        rc = kn_robotfile_load(path, rp, why, whylen);
        free(rp);
    }
    return rc == 0 ? 0 : -1;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void kn_engfiles_names(enum kn_engfiles_kind kind, const char *dir, char *out, size_t len)
{
    char path[PATH_MAX];
    if (len)
        out[0] = '\0';
    snprintf(path, sizeof path, "%s/%s", dir, subdirs[kind]);
    DIR *d = opendir(path);
    if (!d)
        return;
    char *names[64] = { NULL };
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 64) {
        size_t l = strlen(de->d_name);
        char *name = l > 5 && ends_with(de->d_name, ".json") ? strndup(de->d_name, l - 5) : NULL;
        if (name)
            names[n++] = name;
    }
    closedir(d);
    size_t used = 0;
    qsort(names, n, sizeof names[0], cmp_names);
    for (size_t i = 0; i < n; i++) {
        if (used < len) {
            int w = snprintf(out + used, len - used, "%s%s", used ? ", " : "", names[i]);
            used += w > 0 ? (size_t)w : 0;
        }
        free(names[i]);
    }
}
