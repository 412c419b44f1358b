/* The comma-decimal locale of the locale tests: see comma_locale.h. */
#include "comma_locale.h"

#include <fcntl.h>
#include <locale.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <check.h>

#include "harness_proc.h"

extern char **environ;

static char loc_dir[256];
static const char *loc_name;

static bool comma_in_force(const char *name)
{
    return setlocale(LC_ALL, name) && localeconv()->decimal_point[0] == ',';
}

/* localedef -i de_DE -f UTF-8 into loc_dir; true when the result works. */
static bool compile_locale(void)
{
    char out[512];
    snprintf(out, sizeof out, "%s/de_DE.UTF-8", loc_dir);
    char *argv[] = { "localedef", "-i", "de_DE", "-f", "UTF-8", out, NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int st;
    bool ok = false;
    /* localedef exits 1 on mere warnings, so its status is not checked:
     * setlocale tells whether the locale is usable */
    if (posix_spawnp(&pid, "localedef", &fa, NULL, argv, environ) == 0 &&
        waitpid(pid, &st, 0) == pid) {
        setenv("LOCPATH", loc_dir, 1);
        ok = comma_in_force("de_DE.UTF-8");
    }
    posix_spawn_file_actions_destroy(&fa);
    return ok;
}

void h_comma_locale_setup(void)
{
    static const char *const names[] = { "de_DE.UTF-8", "de_DE.utf8",  "fr_FR.UTF-8",
                                         "fr_FR.utf8",  "nl_NL.UTF-8", "ru_RU.UTF-8" };
    loc_name = NULL;
    loc_dir[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !loc_name; i++)
        if (comma_in_force(names[i]))
            loc_name = names[i];
    if (!loc_name) {
        snprintf(loc_dir, sizeof loc_dir, "/tmp/kn-comma-locale-XXXXXX");
        if (!mkdtemp(loc_dir))
            loc_dir[0] = '\0';
        else if (compile_locale())
            loc_name = "de_DE.UTF-8";
    }
    setlocale(LC_ALL, "C");
}

void h_comma_locale_teardown(void)
{
    if (loc_dir[0])
        h_remove_tree(loc_dir);
    loc_dir[0] = '\0';
}

bool h_comma_locale_enter(const char *test)
{
    if (!loc_name) {
        fprintf(stderr, "%s: SKIPPED, no comma-decimal locale and no localedef\n", test);
        return false;
    }
    fprintf(stderr, "%s: using %s%s\n", test, loc_name,
            loc_dir[0] ? " (compiled with localedef)" : "");
    ck_assert(comma_in_force(loc_name));
    char probe[16];
    snprintf(probe, sizeof probe, "%.1f", 1.5);
    ck_assert_str_eq(probe, "1,5"); /* the C library really uses the comma now */
    return true;
}
