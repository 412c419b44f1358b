/* libFuzzer target for the sweep report's reader (tools/sweep/
 * report_read.c): the input up to its first NUL byte is a sweep.json,
 * each later NUL-separated part a result.json for the next case. A
 * sweep is taken or refused with a one-line reason; a taken one is
 * analysed and written as report.json and report.html (to memory), so
 * whatever the reader lets through, the statistics and writers take. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(const char *err)
{
    if (err[0] == '\0' || strchr(err, '\n'))
        abort(); /* a refusal says why, on one line */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t head = nul ? (size_t)(nul - text) : size;
    struct kn_report_sweep s;
    char err[600] = "";
    if (kn_report_parse_sweep(text, head, &s, err, sizeof err) != 0) {
        one_line(err);
        kn_report_sweep_free(&s);
        return 0;
    }
    size_t off = nul ? head + 1 : size;
    for (size_t i = 0; i < s.ncases && off < size; i++) {
        const char *part = text + off;
        const char *end = memchr(part, '\0', size - off);
        size_t len = end ? (size_t)(end - part) : size - off;
        err[0] = '\0';
        if (kn_report_parse_result(&s, i, part, len, err, sizeof err) != 0) {
            one_line(err);
            kn_report_case_bad(&s, i, err);
        }
        off += len + 1;
    }
    struct kn_report_stats st;
    if (kn_report_analyse(&s, &st) == 0) {
        cJSON *j = kn_report_json(&s, &st);
        char *printed = j ? cJSON_PrintUnformatted(j) : NULL;
        /* what was written reads back as JSON */
        cJSON *back = printed ? cJSON_Parse(printed) : NULL;
        if (printed && !back)
            abort();
        cJSON_Delete(back);
        free(printed);
        cJSON_Delete(j);
        char *html = NULL;
        size_t hlen = 0;
        FILE *f = open_memstream(&html, &hlen);
        if (f) {
            kn_report_html(f, &s, &st);
            fclose(f);
        }
        free(html);
        kn_report_stats_free(&s, &st);
    }
    kn_report_sweep_free(&s);
    return 0;
}
