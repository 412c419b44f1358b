/* kn-config-reference: writes what the config key table makes into the
 * files that carry it, or checks that they carry it.
 *   kn-config-reference schema            the JSON Schema, to stdout
 *   kn-config-reference check FILE...     exit 1 when a file differs
 *   kn-config-reference update FILE...    rewrite the files
 * A .json file is the schema; any other file holds blocks between
 * "keys: PARENTS" and "/keys" marker lines (an HTML comment in Markdown,
 * a ";" comment in scdoc), each replaced by the reference of the keys held
 * by PARENTS: a Markdown table, or scdoc entries in a .scd file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_keys.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    size_t r;
    while (s != NULL && (r = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            char *ns = realloc(s, cap *= 2);
            if (ns == NULL) {
                free(s);
                s = NULL;
            }
            s = ns;
        }
    }
    fclose(f);
    if (s != NULL)
        s[n] = '\0';
    return s;
}

/* text with every marker block regenerated; NULL on a broken block */
static char *regenerate(const char *path, const char *text)
{
    bool md = strstr(path, ".scd") == NULL;
    const char *open = md ? "<!-- keys: " : "; keys: ";
    const char *close = md ? "<!-- /keys -->" : "; /keys";
    size_t cap = strlen(text) * 2 + 65536, n = 0;
    char *out = malloc(cap);
    const char *p = text;
    while (out != NULL) {
        const char *m = strstr(p, open);
        if (m == NULL) {
            snprintf(out + n, cap - n, "%s", p);
            return out;
        }
        const char *eol = strchr(m, '\n');
        const char *end = eol != NULL ? strstr(eol, close) : NULL;
        if (eol == NULL || end == NULL) {
            fprintf(stderr, "%s: a \"%s\" block without \"%s\"\n", path, open, close);
            free(out);
            return NULL;
        }
        char parents[256];
        snprintf(parents, sizeof parents, "%.*s", (int)(eol - m - strlen(open)), m + strlen(open));
        char *q = strstr(parents, " -->");
        if (q != NULL)
            *q = '\0';
        char *ref = kn_config_reference(parents, md);
        if (ref == NULL) {
            fprintf(stderr, "%s: no keys held by \"%s\"\n", path, parents);
            free(out);
            return NULL;
        }
        int w = snprintf(out + n, cap - n, "%.*s%s", (int)(eol + 1 - p), p, ref);
        free(ref);
        if (w < 0 || (size_t)w >= cap - n) {
            free(out);
            return NULL;
        }
        n += (size_t)w;
        p = end;
    }
    return out;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "schema") == 0) {
        char *s = kn_config_schema_from_keys();
        if (s == NULL)
            return 2;
        fputs(s, stdout);
        free(s);
        return 0;
    }
    if (argc < 3 || (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "update") != 0)) {
        fprintf(stderr, "usage: %s schema | check FILE... | update FILE...\n", argv[0]);
        return 2;
    }
    bool update = strcmp(argv[1], "update") == 0;
    int status = 0;
    for (int i = 2; i < argc; i++) {
        char *text = slurp(argv[i]);
        if (text == NULL) {
            perror(argv[i]);
            return 2;
        }
        size_t len = strlen(argv[i]);
        bool schema = len > 5 && strcmp(argv[i] + len - 5, ".json") == 0;
        char *want = schema ? kn_config_schema_from_keys() : regenerate(argv[i], text);
        if (want == NULL) {
            free(text);
            return 2;
        }
        if (strcmp(want, text) != 0) {
            if (update) {
                FILE *f = fopen(argv[i], "wb");
                if (f == NULL || fputs(want, f) < 0 || fclose(f) != 0) {
                    perror(argv[i]);
                    status = 2;
                }
                printf("%s: updated from the config key table\n", argv[i]);
            } else {
                printf("%s: differs from what the config key table makes; run "
                       "tools/update-config-reference\n",
                       argv[i]);
                status = 1;
            }
        } else {
            printf("%s: as the config key table makes it\n", argv[i]);
        }
        free(want);
        free(text);
    }
    return status;
}
