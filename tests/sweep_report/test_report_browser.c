/* A sweep's report.html in Debian's headless Chromium (kenaf-view's
 * browser harness, tests/view_browser): a synthetic sweep's report
 * written by kn_report_write is opened from its file; the page loads
 * without an error on the console, holds one chart per parameter with a
 * dot per judged value, and its boundary table shows the boundary the
 * statistics give. Skipped, saying why, without Chromium, node or
 * playwright-core, and under KN_WRAP. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_proc.h"
#include "report.h"
#include "synth.h"
#include "vb_harness.h"

/* Both seeds pass up to 0.15 m; seed 2 also at 0.17 (not monotone). */
static enum synth_outcome outcome(int h, int seed, void *arg)
{
    (void)arg;
    return h <= 5 || (seed == 2 && h == 7) ? SYN_PASS : SYN_FAIL;
}

static const char *text_of(struct vb_browser *b, const char *expr)
{
    static char out[256];
    cJSON *a = vb_cmd(b, H_LONG_MS, "{\"cmd\":\"eval\",\"expr\":\"%s\"}", expr);
    const cJSON *v = cJSON_GetObjectItem(a, "value");
    snprintf(out, sizeof out, "%s", cJSON_IsString(v) ? v->valuestring : "(not a string)");
    cJSON_Delete(a);
    return out;
}

static double num_of(struct vb_browser *b, const char *expr)
{
    cJSON *a = vb_cmd(b, H_LONG_MS, "{\"cmd\":\"eval\",\"expr\":\"%s\"}", expr);
    double v = vb_num(a, "value");
    cJSON_Delete(a);
    return v;
}

START_TEST(report_page)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", h_path("sweep"));
    struct synth sw = { "heights", "0123456789abcdef", 10, 2, 0, 0, outcome, NULL, false };
    synth_write(dir, &sw);
    char err[600] = "";
    ck_assert_msg(kn_report_write(dir, err, sizeof err) == 0, "%s", err);

    struct vb_browser b;
    vb_browser_start(&b, vb_shot_dir("sweep-report"), 1000, 900);
    cJSON_Delete(
        vb_cmd(&b, 3 * H_LONG_MS, "{\"cmd\":\"goto\",\"url\":\"file://%s/report.html\"}", dir));
    cJSON_Delete(vb_cmd(&b, 3 * H_LONG_MS,
                        "{\"cmd\":\"until\",\"expr\":\"document.readyState === 'complete'\","
                        "\"ms\":20000}"));
    /* one chart per parameter, drawn at a size, a dot per value */
    ck_assert_double_eq(num_of(&b, "document.querySelectorAll('figure.plot svg').length"), 2);
    ck_assert_double_eq(
        num_of(&b, "document.querySelectorAll(\\\"figure.plot[data-parameter='step_height_m'] "
                   "circle.rate\\\").length"),
        10);
    ck_assert(num_of(&b, "document.querySelector('figure.plot svg').getBoundingClientRect()"
                         ".width") > 300);
    /* the boundary: 0.15 (0.16 fails with both seeds); its interval ends
     * at 0.16 only if 0/2 is surely below 0.95 (Wilson hi 0.658) */
    ck_assert_str_eq(text_of(&b, "document.querySelector(\\\"#boundaries "
                                 "tr[data-parameter='step_height_m'] td.point\\\").textContent"),
                     "0.15");
    ck_assert_str_eq(text_of(&b, "document.querySelector(\\\"#boundaries "
                                 "tr[data-parameter='step_height_m'] td.interval\\\")"
                                 ".textContent"),
                     "[0.1, 0.16]");
    /* the failing cases link their trajectories */
    ck_assert_double_eq(
        num_of(&b, "document.querySelectorAll(\\\"#failures a[href$='/trajectory.svg']\\\")"
                   ".length"),
        7);
    cJSON_Delete(vb_cmd(&b, 3 * H_LONG_MS, "{\"cmd\":\"shot\",\"name\":\"report\"}"));
    vb_browser_quit(&b);
    const char *log = h_stderr(&b.proc);
    ck_assert_msg(!strstr(log, "page error:") && !strstr(log, "page console:"),
                  "the page logged errors:\n%s", log);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "report_page", report_page, 120, NULL, NULL },
    };
    return vb_main("sweep-report-browser", cases, sizeof cases / sizeof cases[0]);
}
