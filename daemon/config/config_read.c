/* Reading a config (or schema) file: its bytes checked (size, UTF-8, no
 * NUL), parsed with cJSON with the position of a syntax error, and the
 * schema it is checked against (the built-in one made from the key table
 * and parsed once per process). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_priv.h"
#include "jsonschema.h"

/* ---- reading bytes ---------------------------------------------------- */

/* Reads at most KN_CFG_MAX_FILE_BYTES + 1 bytes, so an oversized file (or
 * an endless one such as /dev/zero) is refused without reading it all. */
char *kn_config_read_file(const char *path, size_t *len, struct kn_cfg_errs *e, struct stat *st_out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        kn_config_errs_add(e, NULL, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    memset(&st, 0, sizeof st);
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        kn_config_errs_add(e, NULL, "expected a file, got a directory");
        close(fd);
        return NULL;
    }
    size_t cap = KN_CFG_MAX_FILE_BYTES + 1, n = 0;
    char *buf = malloc(cap);
    if (buf == NULL) {
        kn_config_errs_add(e, NULL, "out of memory");
        close(fd);
        return NULL;
    }
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            kn_config_errs_add(e, NULL, "cannot read: %s", strerror(errno));
            free(buf);
            close(fd);
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (n > KN_CFG_MAX_FILE_BYTES) {
        if (S_ISREG(st.st_mode))
            kn_config_errs_add(e, NULL,
                               "expected a file of at most 1 MiB (%d bytes), got %lld bytes",
                               KN_CFG_MAX_FILE_BYTES, (long long)st.st_size);
        else
            kn_config_errs_add(e, NULL, "expected a file of at most 1 MiB (%d bytes), got more",
                               KN_CFG_MAX_FILE_BYTES);
        free(buf);
        return NULL;
    }
    *len = n;
    if (st_out != NULL)
        *st_out = st;
    return buf;
}

/* 1-based line and column (in characters) of byte offset pos. */
static void line_col(const char *buf, size_t len, size_t pos, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < pos && i < len; i++) {
        unsigned char b = (unsigned char)buf[i];
        if (b == '\n') {
            l++;
            c = 1;
        } else if ((b & 0xC0u) != 0x80u) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char *p, size_t avail)
{
    unsigned char b = p[0];
    if (b < 0x80u)
        return 1;
    size_t n;
    unsigned char lo = 0x80u, hi = 0xBFu;
    if (b >= 0xC2u && b <= 0xDFu) {
        n = 2;
    } else if (b >= 0xE0u && b <= 0xEFu) {
        n = 3;
        if (b == 0xE0u)
            lo = 0xA0u;
        if (b == 0xEDu)
            hi = 0x9Fu;
    } else if (b >= 0xF0u && b <= 0xF4u) {
        n = 4;
        if (b == 0xF0u)
            lo = 0x90u;
        if (b == 0xF4u)
            hi = 0x8Fu;
    } else {
        return 0;
    }
    if (avail < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((p[i] & 0xC0u) != 0x80u)
            return 0;
    return n;
}

/* Plain ASCII text without a NUL byte or a "\u0000" anywhere, and not
 * blank: what nearly every config is, told by the C library's scans and
 * 8 bytes at a time instead of the ten tests a byte of the full check. */
static bool plain_text(const char *buf, size_t len)
{
    if (len == 0) /* (and buf may be NULL then, which memchr must not get) */
        return false;
    if (memchr(buf, '\0', len) != NULL || memmem(buf, len, "\\u0000", 6) != NULL)
        return false;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, buf + i, sizeof w);
        if (w & 0x8080808080808080ull)
            return false;
    }
    for (; i < len; i++)
        if ((unsigned char)buf[i] & 0x80u)
            return false;
    for (i = 0; i < len; i++)
        if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r')
            return true;
    return false;
}

/* Byte-level checks cJSON does not make: NUL bytes (also as \u0000, which
 * would silently cut a string), UTF-8 validity, emptiness. */
bool kn_config_check_bytes(const char *buf, size_t len, struct kn_cfg_errs *e)
{
    if (plain_text(buf, len))
        return true;
    const unsigned char *p = (const unsigned char *)buf;
    bool in_string = false, blank = true;
    int line, col;
    for (size_t i = 0; i < len;) {
        if (p[i] == 0) {
            line_col(buf, len, i, &line, &col);
            kn_config_errs_add(e, NULL, "%d:%d: expected UTF-8 JSON text, got a NUL byte", line,
                               col);
            return false;
        }
        size_t n = utf8_seq(p + i, len - i);
        if (n == 0) {
            line_col(buf, len, i, &line, &col);
            kn_config_errs_add(e, NULL, "%d:%d: expected UTF-8 JSON text, got byte 0x%02x", line,
                               col, p[i]);
            return false;
        }
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
            blank = false;
        if (in_string && p[i] == '\\' && i + 1 < len && p[i + 1] > 0 && p[i + 1] < 0x80u) {
            if (len - i >= 6 && memcmp(p + i + 1, "u0000", 5) == 0) {
                line_col(buf, len, i, &line, &col);
                kn_config_errs_add(e, NULL,
                                   "%d:%d: expected a string without NUL characters, got \\u0000",
                                   line, col);
                return false;
            }
            i += 2; /* an escaped quote does not end the string */
            continue;
        }
        if (p[i] == '"')
            in_string = !in_string;
        i += n;
    }
    if (blank) {
        kn_config_errs_add(e, NULL, "expected a JSON object, got an empty file");
        return false;
    }
    return true;
}

/* Deepest [ / { nesting up to and including byte pos (cJSON stops on the
 * bracket that would go one level too deep), for a clear error. */
static int nesting_upto(const char *buf, size_t pos)
{
    int depth = 0, max = 0;
    bool in_string = false;
    for (size_t i = 0; i <= pos && buf[i] != '\0'; i++) {
        char ch = buf[i];
        if (in_string) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_string = false;
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == '[' || ch == '{') {
            if (++depth > max)
                max = depth;
        } else if (ch == ']' || ch == '}') {
            depth--;
        }
    }
    return max;
}

/* Parses text that passed check_bytes; reports syntax errors as
 * FILE:LINE:COLUMN. The copy makes cJSON's input NUL-terminated whatever
 * the caller's buffer is. */
cJSON *kn_config_parse_json(const char *text, size_t len, struct kn_cfg_errs *e)
{
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) { /* UTF-8 byte order mark */
        text += 3;
        len -= 3;
    }
    char *buf = malloc(len + 1);
    if (buf == NULL) {
        kn_config_errs_add(e, NULL, "out of memory");
        return NULL;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(buf, len + 1, &end, true);
    if (doc == NULL) {
        size_t pos = end != NULL && end >= buf && end <= buf + len ? (size_t)(end - buf) : 0;
        int line, col;
        line_col(buf, len, pos, &line, &col);
        if (nesting_upto(buf, pos) >= CJSON_NESTING_LIMIT) {
            kn_config_errs_add(
                e, NULL, "%d:%d: expected JSON nested at most %d levels deep, got deeper nesting",
                line, col, CJSON_NESTING_LIMIT);
        } else if (pos >= len) {
            kn_config_errs_add(e, NULL,
                               "%d:%d: expected more JSON, got the end of the file "
                               "(unclosed string, array or object?)",
                               line, col);
        } else {
            /* Parsing again without the end check tells "one value, then
             * junk" apart from a broken value. */
            const char *end2 = NULL;
            cJSON *first = cJSON_ParseWithLengthOpts(buf, len + 1, &end2, false);
            cJSON_Delete(first);
            char snippet[40];
            size_t n = 0;
            while (n < 24 && pos + n < len && buf[pos + n] != '\n' && buf[pos + n] != '\r')
                n++;
            /* the text is valid UTF-8: end the snippet on a character boundary */
            while (n > 0 && pos + n < len && ((unsigned char)buf[pos + n] & 0xC0u) == 0x80u)
                n--;
            memcpy(snippet, buf + pos, n);
            snippet[n] = '\0';
            for (size_t i = 0; i < n; i++)
                if ((unsigned char)snippet[i] < 0x20u)
                    snippet[i] = ' ';
            if (first != NULL)
                kn_config_errs_add(
                    e, NULL, "%d:%d: expected the end of the file after the JSON value, got: %s",
                    line, col, snippet);
            else
                kn_config_errs_add(e, NULL, "%d:%d: expected valid JSON, got a syntax error at: %s",
                                   line, col, snippet);
        }
    }
    free(buf);
    return doc;
}

/* ---- schema ----------------------------------------------------------- */

/* The built-in schema is made from the key table (config_schema.c) once
 * per process, parsed and checked once: doing it for every config read
 * made each parse several times slower than the document it checks (the
 * fuzz target ran at a few thousand inputs/s). Only a schema that passed
 * is kept; a broken one is reported every time. */
static char *builtin_text;
static size_t builtin_len;
static cJSON *builtin_schema;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_schema_load(void)
{
    builtin_text = kn_config_schema_from_keys();
    builtin_len = builtin_text != NULL ? strlen(builtin_text) : 0;
    struct kn_cfg_errs quiet;
    memset(&quiet, 0, sizeof quiet);
    quiet.name = "(built-in schema)";
    cJSON *schema = NULL;
    if (builtin_text != NULL && kn_config_check_bytes(builtin_text, builtin_len, &quiet))
        schema = kn_config_parse_json(builtin_text, builtin_len, &quiet);
    if (schema != NULL && kn_jsonschema_check(schema, kn_config_errs_report, &quiet) > 0) {
        cJSON_Delete(schema);
        schema = NULL;
    }
    builtin_schema = schema;
}

const char *kn_config_schema_text(size_t *len)
{
    pthread_once(&builtin_once, builtin_schema_load);
    if (len != NULL)
        *len = builtin_len;
    return builtin_text != NULL ? builtin_text : "";
}

/* Problems in the schema itself are reported against the schema's name.
 * The built-in one comes back shared (is_builtin): not to be deleted. */
cJSON *kn_config_load_schema(const char *schema_path, struct kn_cfg_errs *e, bool *is_builtin)
{
    *is_builtin = false;
    if (schema_path == NULL) {
        pthread_once(&builtin_once, builtin_schema_load);
        if (builtin_schema != NULL) {
            *is_builtin = true;
            return builtin_schema;
        }
    }
    struct kn_cfg_errs se = *e;
    se.name = schema_path != NULL ? schema_path : "(built-in schema)";
    cJSON *schema = NULL;
    if (schema_path == NULL) {
        size_t len = 0;
        const char *text = kn_config_schema_text(&len);
        if (len == 0)
            kn_config_errs_add(&se, NULL, "out of memory");
        else if (kn_config_check_bytes(text, len, &se))
            schema = kn_config_parse_json(text, len, &se);
    } else {
        size_t len = 0;
        char *text = kn_config_read_file(schema_path, &len, &se, NULL);
        if (text != NULL && kn_config_check_bytes(text, len, &se))
            schema = kn_config_parse_json(text, len, &se);
        free(text);
    }
    if (schema != NULL && kn_jsonschema_check(schema, kn_config_errs_report, &se) > 0) {
        cJSON_Delete(schema);
        schema = NULL;
    }
    e->len = se.len;
    e->n = se.n;
    return schema;
}
