/* kenaf-engine --validate as a test that can fail both ways: the table's
 * rows that disagree with the real robot must be exactly the ones named on
 * the command line (docs/engine.md has their study). A row that newly
 * disagrees fails, and so does a named row that comes to agree (then it
 * is taken off the list), instead of one open-ended expected failure.
 * Usage: test_engine_validate ENGINE SCENARIO-DIR ROW... */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "harness_suite.h"

static int g_argc;
static char **g_argv;

static bool named(const char *scenario)
{
    for (int i = 3; i < g_argc; i++)
        if (strcmp(g_argv[i], scenario) == 0)
            return true;
    return false;
}

START_TEST(rows_that_disagree)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' --validate --json --dir '%s'", g_argv[1], g_argv[2]);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    size_t n;
    while ((n = fread(out + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            char *bigger = realloc(out, cap);
            ck_assert_ptr_nonnull(bigger);
            out = bigger;
        }
    }
    out[len] = '\0';
    int st = pclose(f);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "kenaf-engine --validate --json wrote no JSON: %.300s", out);
    cJSON *rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
    ck_assert_msg(cJSON_IsArray(rows) && cJSON_GetArraySize(rows) > 0, "no rows");
    int disagree = 0, found = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, rows)
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "scenario"));
        const char *detail = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "detail"));
        bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "ok"));
        ck_assert_ptr_nonnull(name);
        if (named(name)) {
            found++;
            ck_assert_msg(!ok, "%s now agrees with the reference (%s): take it off the list", name,
                          detail ? detail : "");
            /* what --validate says of it: a measure from the run, and the
             * perturbations of its study file run at its parameter value */
            const char *measured =
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "measured"));
            const cJSON *study = cJSON_GetObjectItemCaseSensitive(r, "study");
            ck_assert_msg(measured && measured[0], "%s: no measure", name);
            ck_assert_msg(cJSON_IsArray(study) && cJSON_GetArraySize(study) > 0,
                          "%s: no perturbations run", name);
            int flips = 0;
            const cJSON *it;
            cJSON_ArrayForEach(it, study)
            {
                ck_assert_ptr_nonnull(
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "title")));
                flips += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "flips"));
            }
            printf("%s: %s; %d of %d perturbations flip it\n", name, measured, flips,
                   cJSON_GetArraySize(study));
        } else {
            ck_assert_msg(ok, "%s disagrees with the reference: %s", name, detail ? detail : "");
        }
        disagree += !ok;
    }
    printf("kenaf-engine --validate: %d rows, %d disagree, as listed\n", cJSON_GetArraySize(rows),
           disagree);
    ck_assert_msg(found == g_argc - 3, "%d of the %d listed rows are not in the table",
                  g_argc - 3 - found, g_argc - 3);
    /* the exit status says the same: 1 when a row disagrees */
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), disagree ? 1 : 0);
    cJSON_Delete(j);
    free(out);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s ENGINE SCENARIO-DIR ROW...\n", argv[0]);
        return 2;
    }
    g_argc = argc;
    g_argv = argv;
    Suite *s = suite_create("validate");
    TCase *tc = tcase_create("validate");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, rows_that_disagree);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
