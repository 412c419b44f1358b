/* OUT/junit.xml: one test case per case that has a result in OUT, named
 * by its id and parameters, classname the sweep's name; fail and error as
 * JUnit's failure and error, the reason and mode in the message. Read
 * back from the files, so a merged directory gets one the same way. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "outdir.h"

/* Text for XML attributes: the five entities, control characters dropped. */
static void xml(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '&')
            fputs("&amp;", f);
        else if (c == '<')
            fputs("&lt;", f);
        else if (c == '>')
            fputs("&gt;", f);
        else if (c == '"')
            fputs("&quot;", f);
        else if (c >= 0x20 || c == '\t' || c == '\n')
            fputc(c, f);
    }
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(s) ? s->valuestring : "";
}

/* "id k=v k=v" */
static void case_name(const cJSON *r, char *out, size_t outlen)
{
    size_t n = (size_t)snprintf(out, outlen, "%s", str(r, "id"));
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(r, "params"))
    {
        if (n >= outlen)
            break;
        if (cJSON_IsString(p))
            n += (size_t)snprintf(out + n, outlen - n, " %s=%s", p->string, p->valuestring);
        else
            n += (size_t)snprintf(out + n, outlen - n, " %s=%.10g", p->string, p->valuedouble);
    }
}

int kn_sweep_write_junit(const char *out, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/results.json", out);
    cJSON *res = kn_sweep_read_json(path);
    snprintf(path, sizeof path, "%s/sweep.json", out);
    cJSON *sw = kn_sweep_read_json(path);
    if (!res || !sw) {
        snprintf(err, errlen, "%s: no sweep.json or results.json", out);
        cJSON_Delete(res);
        cJSON_Delete(sw);
        return -1;
    }
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(res, "cases");
    int n = 0, nfail = 0, nerr = 0;
    double total = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cases)
    {
        n++;
        nfail += strcmp(str(r, "status"), "fail") == 0;
        nerr += strcmp(str(r, "status"), "error") == 0;
        snprintf(path, sizeof path, "%s/cases/%s/timing.json", out, str(r, "id"));
        cJSON *t = kn_sweep_read_json(path);
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(t, "wall_s");
        total += cJSON_IsNumber(w) ? w->valuedouble : 0;
        cJSON_Delete(t);
    }
    snprintf(path, sizeof path, "%s/junit.xml", out);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        cJSON_Delete(res);
        cJSON_Delete(sw);
        return -1;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n", n, nfail,
            nerr, total);
    fputs("  <testsuite name=\"", f);
    xml(f, str(sw, "name"));
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n", n, nfail, nerr,
            total);
    cJSON_ArrayForEach(r, cases)
    {
        char name[1024];
        case_name(r, name, sizeof name);
        snprintf(path, sizeof path, "%s/cases/%s/timing.json", out, str(r, "id"));
        cJSON *t = kn_sweep_read_json(path);
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(t, "wall_s");
        fputs("    <testcase classname=\"", f);
        xml(f, str(sw, "name"));
        fputs("\" name=\"", f);
        xml(f, name);
        fprintf(f, "\" time=\"%.3f\">\n", cJSON_IsNumber(w) ? w->valuedouble : 0);
        cJSON_Delete(t);
        const char *st = str(r, "status");
        if (strcmp(st, "pass") != 0) {
            fprintf(f, "      <%s type=\"", strcmp(st, "fail") == 0 ? "failure" : "error");
            xml(f, str(r, "mode"));
            fputs("\" message=\"", f);
            xml(f, str(r, "why"));
            fputs("\"/>\n", f);
        }
        fputs("    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    cJSON_Delete(res);
    cJSON_Delete(sw);
    if (fclose(f) != 0) {
        snprintf(err, errlen, "cannot write %s/junit.xml", out);
        return -1;
    }
    return 0;
}
