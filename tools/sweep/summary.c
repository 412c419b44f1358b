/* The boundary lines of the closing summary (summary.h), read back from
 * the report so the terminal and report.json never disagree. */
#include "summary.h"

#include <cjson/cJSON.h>

#include "outdir.h"
#include "run.h"

static void value(FILE *f, const cJSON *v)
{
    if (cJSON_IsNumber(v))
        fprintf(f, "%.10g", v->valuedouble);
    else
        fputs("none", f);
}

void kn_sweep_print_boundaries(const char *out, FILE *f)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/report.json", out);
    cJSON *rep = kn_sweep_read_json(path);
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(rep, "boundaries"))
    {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(b, "parameter");
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(b, "harder");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(b, "target");
        const cJSON *iv = cJSON_GetObjectItemCaseSensitive(b, "interval");
        fprintf(f, "%s: boundary %s (%s is harder, target rate %.3g): point ", KN_SWEEP_ME,
                cJSON_IsString(p) ? p->valuestring : "?", cJSON_IsString(h) ? h->valuestring : "?",
                cJSON_IsNumber(t) ? t->valuedouble : 0);
        value(f, cJSON_GetObjectItemCaseSensitive(b, "point"));
        fputs(", confident ", f);
        value(f, cJSON_GetObjectItemCaseSensitive(b, "confident"));
        fputs(", 95% interval [", f);
        value(f, cJSON_GetArrayItem(iv, 0));
        fputs(", ", f);
        value(f, cJSON_GetArrayItem(iv, 1));
        fputs("]\n", f);
    }
    fprintf(f, "%s: report: %s/report.html\n", KN_SWEEP_ME, out);
    cJSON_Delete(rep);
}
