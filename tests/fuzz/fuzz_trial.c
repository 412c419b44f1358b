/* libFuzzer target for a trial's score.json reader (tools/trial/score.c,
 * what kenaf-sim-run --trial-history reads from anywhere): a file is
 * taken or refused with a one-line reason; a taken one is written again
 * as score.json (which must read back the same), score.html and a
 * history page, to memory, so whatever the reader lets through, the
 * writers take. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "score.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct kn_trialscore s, back;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[600] = "";
    if (kn_trialscore_parse((const char *)data, size, &s, err, sizeof err) != 0) {
        if (err[0] == '\0' || strchr(err, '\n'))
            abort(); /* a refusal says why, on one line */
        return 0;
    }
    cJSON *j = kn_trialscore_json(&s);
    char *printed = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (printed) {
        /* what was written reads back, with the same counts */
        if (kn_trialscore_parse(printed, strlen(printed), &back, err, sizeof err) != 0 ||
            back.completed != s.completed || back.successes != s.successes || back.asked != s.asked)
            abort();
        free(printed);
    }
    char *html = NULL;
    size_t hlen = 0;
    FILE *f = open_memstream(&html, &hlen);
    if (f) {
        const double t[2] = { 0, 1 }, x[2] = { 0, 1 }, y[2] = { 0, 0 }, yaw[2] = { 0, 0 };
        const struct kn_trialscore_path p = { 2, t, x, y, yaw };
        const struct kn_trialscore *one[1] = { &s };
        kn_trialscore_html(f, &s, &p);
        kn_trialscore_history_html(f, one, 1);
        fclose(f);
    }
    free(html);
    return 0;
}
