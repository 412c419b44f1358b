/* kenaf-simd configuration loader: reads the JSON file, checks the bytes
 * (size, UTF-8, no NUL), parses it with cJSON, validates it against the
 * schema (embedded at build time unless a schema file is given), then fills
 * struct kn_config with defaults and applies the rules a schema cannot
 * express. Every problem is reported as "FILE: PATH: expected X, got Y". */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "capdir.h"
#include "convert.h"
#include "hostport.h"
#include "jsonschema.h"
#include "keyfile.h"
#include "sockdir.h"

/* Generated from config/kenaf-simd.schema.json by embed_file.c. */
extern const char kn_config_schema_json[];
extern const size_t kn_config_schema_json_len;

#define DEFAULT_LISTEN "127.0.0.1:9750"
#define USARSIM_PORT 3000 /* also the engine's: it serves the USARSim protocol */
#define GAZEBO_PORT 11345
#define DEFAULT_BACKEND_HOST "127.0.0.1"

static const char *const log_level_names[] = { "error", "warn", "info", "debug" };
static const char *const backend_names[] = { "engine", "usarsim", "gazebo", "standin", "gz" };
static const char *const gz_family_names[] = { "auto", "ignition", "gz" };
static const char *const dialect_names[] = { "udk", "ut2004" };
static const char *const command_names[] = { "twist", "pose" };
static const char *const flipper_keys[KN_NFLIPPERS] = { "FL", "FR", "RL", "RR" };

/* ---- error collection ------------------------------------------------- */

struct errs {
    const char *name; /* file name used in every message */
    char *buf;
    size_t cap;
    size_t len;
    size_t n; /* problems recorded (those past the cap included) */
    /* The schema pass and the loader both look at every value: a path the
     * schema already reported is not reported again by the loader. */
    bool recording; /* schema pass: remember the paths */
    size_t nseen;
    char seen[KN_CFG_MAX_ERRORS][160];
};

/* path is seen, or lies inside a value that is ("$.a" covers "$.a.b"). */
static bool errs_covered(const struct errs *e, const char *path)
{
    for (size_t i = 0; i < e->nseen; i++) {
        size_t n = strlen(e->seen[i]);
        if (strncmp(path, e->seen[i], n) == 0 &&
            (path[n] == '\0' || path[n] == '.' || path[n] == '['))
            return true;
    }
    return false;
}

static void errs_append(struct errs *e, const char *line)
{
    if (e->buf == NULL || e->cap == 0)
        return;
    size_t room = e->cap - e->len; /* includes the NUL */
    if (room <= 1)
        return;
    if (e->len > 0) {
        e->buf[e->len++] = '\n';
        e->buf[e->len] = '\0';
        room--;
    }
    size_t n = strlen(line);
    if (n < room) {
        memcpy(e->buf + e->len, line, n + 1);
        e->len += n;
        return;
    }
    /* Cut, and say so, rather than overflow the caller's buffer. */
    memcpy(e->buf + e->len, line, room - 1);
    e->len += room - 1;
    e->buf[e->len] = '\0';
    if (room > 4)
        memcpy(e->buf + e->len - 3, "...", 3);
}

__attribute__((format(printf, 3, 4))) static void errs_add(struct errs *e, const char *path,
                                                           const char *fmt, ...)
{
    if (path != NULL && !e->recording && errs_covered(e, path))
        return;
    if (path != NULL && e->recording && e->nseen < KN_CFG_MAX_ERRORS)
        snprintf(e->seen[e->nseen++], sizeof e->seen[0], "%s", path);
    e->n++;
    if (e->n > KN_CFG_MAX_ERRORS)
        return;
    char msg[1024], line[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (path != NULL)
        snprintf(line, sizeof line, "%s: %s: %s", e->name, path, msg);
    else
        snprintf(line, sizeof line, "%s: %s", e->name, msg);
    errs_append(e, line);
    if (e->n == KN_CFG_MAX_ERRORS) {
        snprintf(line, sizeof line, "%s: stopped after %d errors", e->name, KN_CFG_MAX_ERRORS);
        errs_append(e, line);
    }
}

static void report_cb(void *ctx, const char *path, const char *message)
{
    errs_add(ctx, path, "%s", message);
}

void kn_config_add_problem(char *err, size_t errlen, const char *file, const char *path,
                           const char *fmt, ...)
{
    struct errs e;
    memset(&e, 0, sizeof e);
    e.name = file;
    e.buf = err;
    e.cap = errlen;
    e.len = err != NULL && errlen > 0 ? strnlen(err, errlen - 1) : 0;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    errs_add(&e, path, "%s", msg);
}

static size_t errs_room(const struct errs *e)
{
    return e->n >= KN_CFG_MAX_ERRORS ? 0 : KN_CFG_MAX_ERRORS - e->n;
}

/* ---- reading bytes ---------------------------------------------------- */

/* Reads at most KN_CFG_MAX_FILE_BYTES + 1 bytes, so an oversized file (or
 * an endless one such as /dev/zero) is refused without reading it all. */
static char *read_file(const char *path, size_t *len, struct errs *e, struct stat *st_out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        errs_add(e, NULL, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    memset(&st, 0, sizeof st);
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        errs_add(e, NULL, "expected a file, got a directory");
        close(fd);
        return NULL;
    }
    size_t cap = KN_CFG_MAX_FILE_BYTES + 1, n = 0;
    char *buf = malloc(cap);
    if (buf == NULL) {
        errs_add(e, NULL, "out of memory");
        close(fd);
        return NULL;
    }
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            errs_add(e, NULL, "cannot read: %s", strerror(errno));
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
            errs_add(e, NULL, "expected a file of at most 1 MiB (%d bytes), got %lld bytes",
                     KN_CFG_MAX_FILE_BYTES, (long long)st.st_size);
        else
            errs_add(e, NULL, "expected a file of at most 1 MiB (%d bytes), got more",
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
static bool check_bytes(const char *buf, size_t len, struct errs *e)
{
    if (plain_text(buf, len))
        return true;
    const unsigned char *p = (const unsigned char *)buf;
    bool in_string = false, blank = true;
    int line, col;
    for (size_t i = 0; i < len;) {
        if (p[i] == 0) {
            line_col(buf, len, i, &line, &col);
            errs_add(e, NULL, "%d:%d: expected UTF-8 JSON text, got a NUL byte", line, col);
            return false;
        }
        size_t n = utf8_seq(p + i, len - i);
        if (n == 0) {
            line_col(buf, len, i, &line, &col);
            errs_add(e, NULL, "%d:%d: expected UTF-8 JSON text, got byte 0x%02x", line, col, p[i]);
            return false;
        }
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
            blank = false;
        if (in_string && p[i] == '\\' && i + 1 < len && p[i + 1] > 0 && p[i + 1] < 0x80u) {
            if (len - i >= 6 && memcmp(p + i + 1, "u0000", 5) == 0) {
                line_col(buf, len, i, &line, &col);
                errs_add(e, NULL, "%d:%d: expected a string without NUL characters, got \\u0000",
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
        errs_add(e, NULL, "expected a JSON object, got an empty file");
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
static cJSON *parse_json(const char *text, size_t len, struct errs *e)
{
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) { /* UTF-8 byte order mark */
        text += 3;
        len -= 3;
    }
    char *buf = malloc(len + 1);
    if (buf == NULL) {
        errs_add(e, NULL, "out of memory");
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
            errs_add(e, NULL,
                     "%d:%d: expected JSON nested at most %d levels deep, got deeper nesting", line,
                     col, CJSON_NESTING_LIMIT);
        } else if (pos >= len) {
            errs_add(e, NULL,
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
                errs_add(e, NULL,
                         "%d:%d: expected the end of the file after the JSON value, got: %s", line,
                         col, snippet);
            else
                errs_add(e, NULL, "%d:%d: expected valid JSON, got a syntax error at: %s", line,
                         col, snippet);
        }
    }
    free(buf);
    return doc;
}

/* ---- schema ----------------------------------------------------------- */

const char *kn_config_schema_text(size_t *len)
{
    if (len != NULL)
        *len = kn_config_schema_json_len;
    return kn_config_schema_json;
}

/* The built-in schema, parsed and checked once per process: doing it for
 * every config read made each parse several times slower than the
 * document it checks (the fuzz target ran at a few thousand inputs/s).
 * Only a schema that passed is kept; a broken one is read and reported
 * again every time. */
static cJSON *builtin_schema;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_schema_load(void)
{
    struct errs quiet;
    memset(&quiet, 0, sizeof quiet);
    quiet.name = "(built-in schema)";
    cJSON *schema = NULL;
    if (check_bytes(kn_config_schema_json, kn_config_schema_json_len, &quiet))
        schema = parse_json(kn_config_schema_json, kn_config_schema_json_len, &quiet);
    if (schema != NULL && kn_jsonschema_check(schema, report_cb, &quiet) > 0) {
        cJSON_Delete(schema);
        schema = NULL;
    }
    builtin_schema = schema;
}

/* Problems in the schema itself are reported against the schema's name.
 * The built-in one comes back shared (is_builtin): not to be deleted. */
static cJSON *load_schema(const char *schema_path, struct errs *e, bool *is_builtin)
{
    *is_builtin = false;
    if (schema_path == NULL) {
        pthread_once(&builtin_once, builtin_schema_load);
        if (builtin_schema != NULL) {
            *is_builtin = true;
            return builtin_schema;
        }
    }
    struct errs se = *e;
    se.name = schema_path != NULL ? schema_path : "(built-in schema)";
    cJSON *schema = NULL;
    if (schema_path == NULL) {
        if (check_bytes(kn_config_schema_json, kn_config_schema_json_len, &se))
            schema = parse_json(kn_config_schema_json, kn_config_schema_json_len, &se);
    } else {
        size_t len = 0;
        char *text = read_file(schema_path, &len, &se, NULL);
        if (text != NULL && check_bytes(text, len, &se))
            schema = parse_json(text, len, &se);
        free(text);
    }
    if (schema != NULL && kn_jsonschema_check(schema, report_cb, &se) > 0) {
        cJSON_Delete(schema);
        schema = NULL;
    }
    e->len = se.len;
    e->n = se.n;
    return schema;
}

/* ---- host:port -------------------------------------------------------- */

/* The one host:port parser (common/hostport.h) under the config's rules:
 * an IPv6 address is always written in brackets (a config is read by
 * people, "::1:9750" is ambiguous to them); default_port < 0 makes the port
 * required; ip_only refuses host names (listen addresses are bound, not
 * resolved); min_port 0 lets a listen address ask for any free port. On
 * error *why says what is wrong. */
static bool parse_hostport(const char *s, int default_port, bool ip_only, int min_port, char *host,
                           size_t hostcap, uint16_t *port, const char **why)
{
    unsigned flags = KN_HOSTPORT_BRACKETS | (default_port < 0 ? KN_HOSTPORT_NEED_PORT : 0u) |
                     (ip_only ? KN_HOSTPORT_IP_ONLY : 0u) |
                     (min_port == 0 ? KN_HOSTPORT_PORT_ZERO : 0u);
    uint16_t def = default_port < 0 ? 0 : (uint16_t)default_port;
    return kn_hostport_split(s, def, flags, host, hostcap, port, why) == 0;
}

/* ---- loading ---------------------------------------------------------- */

/* The loader does not trust the schema (a schema file may be given on the
 * command line): every read checks type and size before touching memory. */
struct ld {
    struct errs *e;
};

static const cJSON *member(const cJSON *obj, const char *key)
{
    return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

static void join(char *out, size_t len, const char *base, const char *key)
{
    snprintf(out, len, "%s.%s", base, key);
}

static void got(const cJSON *v, char *buf, size_t len)
{
    kn_jsonschema_describe(v, true, buf, len);
}

static bool opt_number(struct ld *l, const cJSON *obj, const char *base, const char *key,
                       double *out)
{
    const cJSON *v = member(obj, key);
    if (v == NULL)
        return false;
    char p[256], g[400];
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
        join(p, sizeof p, base, key);
        got(v, g, sizeof g);
        errs_add(l->e, p, "expected a number, got %s", g);
        return false;
    }
    *out = v->valuedouble;
    return true;
}

static bool opt_int32(struct ld *l, const cJSON *obj, const char *base, const char *key,
                      int32_t *out)
{
    const cJSON *v = member(obj, key);
    if (v == NULL)
        return false;
    char p[256], g[400];
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        floor(v->valuedouble) != v->valuedouble || v->valuedouble < INT32_MIN ||
        v->valuedouble > INT32_MAX) {
        join(p, sizeof p, base, key);
        got(v, g, sizeof g);
        errs_add(l->e, p, "expected an integer in the 32-bit range, got %s", g);
        return false;
    }
    *out = (int32_t)v->valuedouble;
    return true;
}

static bool opt_string(struct ld *l, const cJSON *obj, const char *base, const char *key, char *dst,
                       size_t cap)
{
    const cJSON *v = member(obj, key);
    if (v == NULL)
        return false;
    char p[256], g[400];
    join(p, sizeof p, base, key);
    if (!cJSON_IsString(v) || v->valuestring == NULL) {
        got(v, g, sizeof g);
        errs_add(l->e, p, "expected a string, got %s", g);
        return false;
    }
    if (strlen(v->valuestring) >= cap) {
        got(v, g, sizeof g);
        errs_add(l->e, p, "expected a string of at most %zu bytes, got %s (%zu bytes)", cap - 1, g,
                 strlen(v->valuestring));
        return false;
    }
    strcpy(dst, v->valuestring);
    return true;
}

static bool opt_enum(struct ld *l, const cJSON *obj, const char *base, const char *key,
                     const char *const *names, size_t n, int *out)
{
    const cJSON *v = member(obj, key);
    if (v == NULL)
        return false;
    for (size_t i = 0; cJSON_IsString(v) && i < n; i++)
        if (strcmp(v->valuestring, names[i]) == 0) {
            *out = (int)i;
            return true;
        }
    char p[256], g[400], list[200] = "";
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s\"%s\"", i ? ", " : "", names[i]);
    }
    join(p, sizeof p, base, key);
    got(v, g, sizeof g);
    errs_add(l->e, p, "expected one of %s, got %s", list, g);
    return false;
}

/* Returns the object at key, or NULL (and an error if it is not one). */
static const cJSON *opt_object(struct ld *l, const cJSON *obj, const char *base, const char *key)
{
    const cJSON *v = member(obj, key);
    if (v == NULL || cJSON_IsObject(v))
        return v;
    char p[256], g[400];
    join(p, sizeof p, base, key);
    got(v, g, sizeof g);
    errs_add(l->e, p, "expected an object, got %s", g);
    return NULL;
}

/* Angles in the file are degrees, resolved to 0.01 degree like KRP/1. */
static double deg_to_rad(double deg)
{
    return kn_conv_cdeg_to_rad(kn_conv_deg_to_cdeg(deg));
}

static double rad_to_deg(double rad)
{
    return kn_conv_cdeg_to_deg(kn_conv_rad_to_cdeg(rad));
}

static bool opt_vec(struct ld *l, const cJSON *obj, const char *base, const char *key, int n,
                    double *out)
{
    const cJSON *v = member(obj, key);
    if (v == NULL)
        return false;
    char p[256], g[400];
    join(p, sizeof p, base, key);
    bool ok = cJSON_IsArray(v) && cJSON_GetArraySize(v) == n;
    for (int i = 0; ok && i < n; i++) {
        const cJSON *x = cJSON_GetArrayItem(v, i);
        ok = cJSON_IsNumber(x) && isfinite(x->valuedouble);
    }
    if (!ok) {
        got(v, g, sizeof g);
        errs_add(l->e, p, "expected an array of %d numbers, got %s", n, g);
        return false;
    }
    for (int i = 0; i < n; i++)
        out[i] = cJSON_GetArrayItem(v, i)->valuedouble;
    return true;
}

static void backend_defaults(struct kn_cfg_backend *b, enum kn_backend_kind kind)
{
    static const char *const joints[KN_NFLIPPERS] = { "FLFlipper", "FRFlipper", "RLFlipper",
                                                      "RRFlipper" };
    /* USARSim Kenaf: front joints turn the other way from the rear ones
     * for the same tip motion (published clients drive the Kenaf's
     * flippers with -h front, +h rear; docs/usarsim.md). */
    static const double signs[KN_NFLIPPERS] = { -1.0, -1.0, 1.0, 1.0 };
    memset(b, 0, sizeof *b);
    b->kind = kind;
    if (kind == KN_BACKEND_USARSIM) {
        strcpy(b->host, DEFAULT_BACKEND_HOST);
        b->port = USARSIM_PORT;
    } else if (kind == KN_BACKEND_GAZEBO) {
        strcpy(b->host, DEFAULT_BACKEND_HOST);
        b->port = GAZEBO_PORT;
    }
    b->connect_timeout_s = 1.0;
    b->reconnect_max_s = 1.0;
    b->encoder_sign[0] = b->encoder_sign[1] = 1.0;
    b->stale_ms = 500.0;
    b->wheel_radius_m = 0.08;
    b->counts_per_tick = 1.0;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        strcpy(b->flipper[k].name, joints[k]);
        b->flipper[k].sign = signs[k];
        b->flipper[k].offset_rad = 0.0;
    }
    b->dialect = KN_USARSIM_UDK;
    strcpy(b->class_name, "USARBot.Kenaf");
    strcpy(b->terrain, "flat");
    strcpy(b->robot, "kenaf");
    b->silent_restart_s = 3.0;
    strcpy(b->model, "kenaf");
    b->twist_cmd = true;
    b->tracks_separation_m = 0.23;
    b->steering_efficiency = 0.5;
    b->max_linear_speed_m_s = 1.0; /* the tracked-vehicle plugin's defaults */
    b->max_angular_speed_rad_s = 1.0;
    strcpy(b->world, "default");
    b->gz_family = -1;
}

static void robot_defaults(struct kn_cfg_robot *r)
{
    memset(r, 0, sizeof *r);
    strcpy(r->bind_host, "127.0.0.1");
    r->port = 9750;
    r->watchdog_ms = 500.0;
    r->max_speed_mm_s = 800;
    r->flipper_min_cdeg = -11950;
    r->flipper_max_cdeg = 11950;
    r->counts_per_m = 4000;
    r->battery_v = 24.0;
    backend_defaults(&r->backend, KN_BACKEND_ENGINE);
}

static void part_fits(struct ld *l, const cJSON *jb, const char *base, const char *key,
                      const char *noun, enum kn_backend_kind kind, bool fits,
                      const char *applies_to)
{
    if (member(jb, key) == NULL || fits)
        return;
    char p[256];
    join(p, sizeof p, base, key);
    errs_add(l->e, p, "expected no \"%s\" %s for backend type \"%s\" (it applies to %s), got one",
             key, noun, backend_names[kind], applies_to);
}

static void load_flippers(struct ld *l, const cJSON *jb, const char *base, struct kn_cfg_backend *b)
{
    char fp[200];
    join(fp, sizeof fp, base, "flippers");
    const cJSON *jf = opt_object(l, jb, base, "flippers");
    for (int k = 0; jf != NULL && k < KN_NFLIPPERS; k++) {
        char jp[220];
        join(jp, sizeof jp, fp, flipper_keys[k]);
        const cJSON *jj = opt_object(l, jf, fp, flipper_keys[k]);
        if (jj == NULL)
            continue;
        opt_string(l, jj, jp, "joint", b->flipper[k].name, sizeof b->flipper[k].name);
        part_fits(l, jj, jp, "link", "key", b->kind, b->kind == KN_BACKEND_GAZEBO, "gazebo");
        if (b->kind == KN_BACKEND_GAZEBO)
            opt_string(l, jj, jp, "link", b->flipper[k].link, sizeof b->flipper[k].link);
        double sign;
        if (opt_number(l, jj, jp, "sign", &sign)) {
            if (sign == 1.0 || sign == -1.0) {
                b->flipper[k].sign = sign;
            } else {
                char p[256];
                join(p, sizeof p, jp, "sign");
                errs_add(l->e, p, "expected one of -1, 1, got %g", sign);
            }
        }
        double off;
        if (opt_number(l, jj, jp, "offset_deg", &off))
            b->flipper[k].offset_rad = deg_to_rad(off);
    }
}

/* A number in [lo, hi]; the loader checks the range itself because a
 * schema file given on the command line may not. */
static void opt_ranged(struct ld *l, const cJSON *obj, const char *base, const char *key, double lo,
                       double hi, double *out)
{
    double v;
    if (!opt_number(l, obj, base, key, &v))
        return;
    if (v < lo || v > hi) {
        char p[256];
        join(p, sizeof p, base, key);
        errs_add(l->e, p, "expected number %g..%g, got %g", lo, hi, v);
        return;
    }
    *out = v;
}

static void load_backend(struct ld *l, const cJSON *jr, const char *rbase, struct kn_cfg_backend *b)
{
    char base[128];
    join(base, sizeof base, rbase, "backend");
    const cJSON *jb = opt_object(l, jr, rbase, "backend");
    int kind = -1;
    if (jb == NULL || !opt_enum(l, jb, base, "type", backend_names, 5, &kind)) {
        if (jb == NULL && member(jr, "backend") == NULL)
            errs_add(l->e, rbase, "missing required key \"backend\"");
        else if (jb != NULL && member(jb, "type") == NULL)
            errs_add(l->e, base, "missing required key \"type\"");
        return;
    }
    backend_defaults(b, (enum kn_backend_kind)kind);

    char addr[KN_CFG_HOST_LEN + 8] = "";
    if (opt_string(l, jb, base, "address", addr, sizeof addr)) {
        int def_port = kind == KN_BACKEND_GAZEBO    ? GAZEBO_PORT
                       : kind == KN_BACKEND_STANDIN ? -1
                                                    : USARSIM_PORT;
        const char *why = "";
        if (!parse_hostport(addr, def_port, false, 1, b->host, sizeof b->host, &b->port, &why)) {
            char p[256], q[400];
            join(p, sizeof p, base, "address");
            kn_jsonschema_quote(addr, q, sizeof q);
            errs_add(l->e, p, "expected %s, got %s (%s)",
                     def_port < 0 ? "\"HOST:PORT\" or \"[IPv6]:PORT\""
                                  : "\"HOST[:PORT]\" or \"[IPv6][:PORT]\"",
                     q, why);
        }
    } else if (kind == KN_BACKEND_STANDIN && member(jb, "address") == NULL) {
        char p[256];
        join(p, sizeof p, base, "address");
        errs_add(l->e, p, "expected an address for backend type \"standin\", got none");
    }

    opt_number(l, jb, base, "connect_timeout_s", &b->connect_timeout_s);
    opt_number(l, jb, base, "reconnect_max_s", &b->reconnect_max_s);
    opt_number(l, jb, base, "stale_ms", &b->stale_ms);
    opt_number(l, jb, base, "wheel_radius_m", &b->wheel_radius_m);
    opt_number(l, jb, base, "counts_per_tick", &b->counts_per_tick);
    load_flippers(l, jb, base, b);
    const cJSON *jl = member(jb, "lockstep");
    if (jl != NULL) {
        char p[256], g[400];
        join(p, sizeof p, base, "lockstep");
        if (!cJSON_IsBool(jl)) {
            got(jl, g, sizeof g);
            errs_add(l->e, p, "expected true or false, got %s", g);
        } else if (kind != KN_BACKEND_ENGINE && cJSON_IsTrue(jl)) {
            errs_add(l->e, p,
                     "expected false for backend type \"%s\" (only the built-in engine "
                     "steps on request), got true",
                     backend_names[kind]);
        } else {
            b->lockstep = cJSON_IsTrue(jl);
        }
    }

    bool usar = kind == KN_BACKEND_USARSIM || kind == KN_BACKEND_ENGINE;
    bool spawned = kind == KN_BACKEND_ENGINE && b->host[0] == '\0';
    part_fits(l, jb, base, "usarsim", "section", kind, usar, "usarsim and engine");
    part_fits(l, jb, base, "engine", "section", kind, spawned,
              "engine when kenaf-simd spawns it, that is without address");
    part_fits(l, jb, base, "gazebo", "section", kind, kind == KN_BACKEND_GAZEBO, "gazebo");
    part_fits(l, jb, base, "gz", "section", kind, kind == KN_BACKEND_GZ, "gz");
    if (kind == KN_BACKEND_GZ)
        part_fits(l, jb, base, "address", "key", kind, false,
                  "all but gz (it finds the world "
                  "by discovery)");

    char sp[160];
    join(sp, sizeof sp, base, "usarsim");
    const cJSON *ju = opt_object(l, jb, base, "usarsim");
    if (ju != NULL && usar) {
        int d;
        if (opt_enum(l, ju, sp, "dialect", dialect_names, 2, &d))
            b->dialect = (enum kn_usarsim_dialect)d;
        opt_string(l, ju, sp, "class_name", b->class_name, sizeof b->class_name);
        opt_string(l, ju, sp, "start", b->start_tag, sizeof b->start_tag);
        opt_vec(l, ju, sp, "location_m", 3, b->spawn_location_m);
        double rot[3];
        if (opt_vec(l, ju, sp, "rotation_deg", 3, rot))
            for (int i = 0; i < 3; i++)
                b->spawn_rpy_rad[i] = deg_to_rad(rot[i]);
        double sg[2];
        if (opt_vec(l, ju, sp, "encoder_sign", 2, sg)) {
            if ((sg[0] == 1 || sg[0] == -1) && (sg[1] == 1 || sg[1] == -1)) {
                b->encoder_sign[0] = sg[0];
                b->encoder_sign[1] = sg[1];
            } else {
                char p[256];
                join(p, sizeof p, sp, "encoder_sign");
                errs_add(l->e, p, "expected [L, R] of -1 or 1 each, got [%g, %g]", sg[0], sg[1]);
            }
        }
    }

    join(sp, sizeof sp, base, "engine");
    const cJSON *je = opt_object(l, jb, base, "engine");
    if (je != NULL && spawned) {
        opt_string(l, je, sp, "path", b->engine_path, sizeof b->engine_path);
        opt_string(l, je, sp, "terrain", b->terrain, sizeof b->terrain);
        opt_string(l, je, sp, "robot", b->robot, sizeof b->robot);
        opt_number(l, je, sp, "silent_restart_s", &b->silent_restart_s);
    }

    join(sp, sizeof sp, base, "gazebo");
    const cJSON *jg = opt_object(l, jb, base, "gazebo");
    if (jg != NULL && kind == KN_BACKEND_GAZEBO) {
        opt_string(l, jg, sp, "model", b->model, sizeof b->model);
        int c;
        if (opt_enum(l, jg, sp, "command", command_names, 2, &c))
            b->twist_cmd = c == 0;
        opt_number(l, jg, sp, "tracks_separation_m", &b->tracks_separation_m);
        opt_number(l, jg, sp, "steering_efficiency", &b->steering_efficiency);
        opt_ranged(l, jg, sp, "max_linear_speed_m_s", 0.001, 10, &b->max_linear_speed_m_s);
        opt_ranged(l, jg, sp, "max_angular_speed_rad_s", 0.001, 100, &b->max_angular_speed_rad_s);
    }

    join(sp, sizeof sp, base, "gz");
    const cJSON *jz = opt_object(l, jb, base, "gz");
    if (jz != NULL && kind == KN_BACKEND_GZ) {
        opt_string(l, jz, sp, "model", b->model, sizeof b->model);
        opt_string(l, jz, sp, "world", b->world, sizeof b->world);
        opt_string(l, jz, sp, "partition", b->partition, sizeof b->partition);
        opt_string(l, jz, sp, "ip", b->gz_ip, sizeof b->gz_ip);
        opt_string(l, jz, sp, "pose_topic", b->pose_topic, sizeof b->pose_topic);
        int f;
        if (opt_enum(l, jz, sp, "messages", gz_family_names, 3, &f))
            b->gz_family = f - 1;
        opt_number(l, jz, sp, "tracks_separation_m", &b->tracks_separation_m);
        opt_number(l, jz, sp, "steering_efficiency", &b->steering_efficiency);
    }
}

static void load_fault_link(struct ld *l, const cJSON *jf, const char *base, const char *key,
                            struct kn_cfg_faults *f)
{
    char p[200];
    join(p, sizeof p, base, key);
    const cJSON *o = opt_object(l, jf, base, key);
    if (o == NULL)
        return;
    opt_ranged(l, o, p, "drop", 0, 1, &f->drop);
    opt_ranged(l, o, p, "duplicate", 0, 1, &f->duplicate);
    opt_ranged(l, o, p, "reorder", 0, 1, &f->reorder);
    opt_ranged(l, o, p, "delay_ms", 0, 60000, &f->delay_ms);
    opt_ranged(l, o, p, "jitter_ms", 0, 60000, &f->jitter_ms);
    double seed = 0;
    opt_ranged(l, o, p, "seed", 0, 9007199254740991.0, &seed);
    if (floor(seed) != seed) {
        char sp[256];
        join(sp, sizeof sp, p, "seed");
        errs_add(l->e, sp, "expected an integer, got %g", seed);
        seed = 0;
    }
    f->seed = (uint64_t)seed;
}

static void load_faults(struct ld *l, const cJSON *jr, const char *rbase, struct kn_cfg_robot *r)
{
    char base[128];
    join(base, sizeof base, rbase, "faults");
    const cJSON *jf = opt_object(l, jr, rbase, "faults");
    if (jf == NULL)
        return;
    load_fault_link(l, jf, base, "krp", &r->faults_krp);
    load_fault_link(l, jf, base, "sim", &r->faults_sim);
}

/* "consoles": IP addresses, each with a port or without one (every
 * port); "hello_to_drive": a boolean. */
static void load_consoles(struct ld *l, const cJSON *jr, const char *base, struct kn_cfg_robot *r)
{
    char p[256], g[400];
    const cJSON *h = member(jr, "hello_to_drive");
    if (h != NULL) {
        if (cJSON_IsBool(h)) {
            r->hello_to_drive = cJSON_IsTrue(h);
        } else {
            join(p, sizeof p, base, "hello_to_drive");
            got(h, g, sizeof g);
            errs_add(l->e, p, "expected true or false, got %s", g);
        }
    }
    const cJSON *v = member(jr, "consoles");
    if (v == NULL)
        return;
    join(p, sizeof p, base, "consoles");
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > KN_CFG_MAX_CONSOLES) {
        got(v, g, sizeof g);
        errs_add(l->e, p, "expected an array of at most %d addresses, got %s", KN_CFG_MAX_CONSOLES,
                 g);
        return;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, v)
    {
        char q[300];
        snprintf(q, sizeof q, "%s[%zu]", p, r->n_consoles);
        const char *why = "not a string";
        struct kn_cfg_console *e = &r->consoles[r->n_consoles];
        if (!cJSON_IsString(c) || c->valuestring == NULL ||
            !parse_hostport(c->valuestring, 0, true, 0, e->host, sizeof e->host, &e->port, &why)) {
            got(c, g, sizeof g);
            errs_add(l->e, q, "expected \"IPv4[:PORT]\" or \"[IPv6][:PORT]\", got %s (%s)", g, why);
            memset(e, 0, sizeof *e);
            continue;
        }
        r->n_consoles++;
    }
}

/* key_file: the key is read here, so --check-config and a start alike
 * name a key file that is missing, readable by others or malformed. */
static void load_key(struct ld *l, const cJSON *jr, const char *base, struct kn_cfg_robot *r)
{
    if (!opt_string(l, jr, base, "key_file", r->key_file, sizeof r->key_file))
        return;
    char p[256];
    join(p, sizeof p, base, "key_file");
#ifdef KN_HAVE_KEYS
    char why[KN_CFG_PATH_LEN + 256];
    if (kn_keyfile_read(r->key_file, r->key, &r->key_len, why, sizeof why) < 0) {
        errs_add(l->e, p, "%s", why);
        r->key_len = 0;
    }
#else
    errs_add(l->e, p,
             "kenaf-simd was built without shared-key support (nettle-dev; "
             "meson -Dkeys=enabled), so key %s cannot be used",
             r->key_file);
#endif
}

/* allow_drivers / allow_observers: networks or addresses (access.h). */
static void load_allow(struct ld *l, const cJSON *jr, const char *rbase, const char *key,
                       struct kn_access *a, struct kn_access_net *list, uint8_t *n)
{
    const cJSON *v = member(jr, key);
    if (v == NULL)
        return;
    char p[160], g[400];
    join(p, sizeof p, rbase, key);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > KN_ACCESS_MAX_NETS) {
        got(v, g, sizeof g);
        errs_add(l->e, p, "expected an array of at most %d addresses or networks, got %s",
                 KN_ACCESS_MAX_NETS, g);
        return;
    }
    a->on = true;
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
    {
        char ip[180];
        snprintf(ip, sizeof ip, "%s[%d]", p, i++);
        const char *why = "expected a string";
        if (!cJSON_IsString(it) || kn_access_parse(it->valuestring, &list[*n], &why) < 0) {
            got(it, g, sizeof g);
            errs_add(l->e, ip, "%s (\"10.1.2.0/24\", \"::1/128\", \"127.0.0.1\"), got %s", why, g);
            continue;
        }
        (*n)++;
    }
}

static void load_robot(struct ld *l, const cJSON *jr, size_t i, struct kn_cfg_robot *r)
{
    char base[64], p[128], g[400];
    snprintf(base, sizeof base, "$.robots[%zu]", i);
    robot_defaults(r);
    if (!cJSON_IsObject(jr)) {
        got(jr, g, sizeof g);
        errs_add(l->e, base, "expected an object, got %s", g);
        return;
    }
    if (!opt_string(l, jr, base, "name", r->name, sizeof r->name)) {
        if (member(jr, "name") == NULL)
            errs_add(l->e, base, "missing required key \"name\"");
    } else if (r->name[0] == '\0') {
        join(p, sizeof p, base, "name");
        errs_add(l->e, p, "expected a non-empty name, got \"\"");
    }

    char listen[KN_CFG_HOST_LEN + 8] = DEFAULT_LISTEN;
    if (opt_string(l, jr, base, "listen", listen, sizeof listen)) {
        const char *why = "";
        if (!parse_hostport(listen, -1, true, 0, r->bind_host, sizeof r->bind_host, &r->port,
                            &why)) {
            char q[400];
            join(p, sizeof p, base, "listen");
            kn_jsonschema_quote(listen, q, sizeof q);
            errs_add(l->e, p,
                     "expected \"IPv4:PORT\" or \"[IPv6]:PORT\" with PORT 0..65535, got %s (%s)", q,
                     why);
        }
    }
    opt_number(l, jr, base, "watchdog_ms", &r->watchdog_ms);
    opt_int32(l, jr, base, "counts_per_m", &r->counts_per_m);
    opt_number(l, jr, base, "battery_v", &r->battery_v);
    load_consoles(l, jr, base, r);

    char lb[96];
    join(lb, sizeof lb, base, "limits");
    const cJSON *jl = opt_object(l, jr, base, "limits");
    if (jl != NULL) {
        opt_int32(l, jl, lb, "max_speed_mm_s", &r->max_speed_mm_s);
        double mn = kn_conv_cdeg_to_deg(r->flipper_min_cdeg);
        double mx = kn_conv_cdeg_to_deg(r->flipper_max_cdeg);
        opt_number(l, jl, lb, "flipper_min_deg", &mn);
        opt_number(l, jl, lb, "flipper_max_deg", &mx);
        r->flipper_min_cdeg = kn_conv_deg_to_cdeg(mn);
        r->flipper_max_cdeg = kn_conv_deg_to_cdeg(mx);
        if (r->flipper_min_cdeg >= r->flipper_max_cdeg)
            errs_add(l->e, lb,
                     "expected flipper_min_deg < flipper_max_deg, got %g >= %g "
                     "(compared at 0.01 degree)",
                     mn, mx);
    }
    load_backend(l, jr, base, &r->backend);
    load_faults(l, jr, base, r);
    load_allow(l, jr, base, "allow_drivers", &r->access, r->access.drivers, &r->access.n_drivers);
    load_allow(l, jr, base, "allow_observers", &r->access, r->access.observers,
               &r->access.n_observers);
    load_key(l, jr, base, r);
}

/* Two listen addresses clash when the same port could not be bound twice:
 * the same address, an IPv4 wildcard against any IPv4 address, or an IPv6
 * wildcard against anything (Linux binds [::] dual-stack by default). */
static bool listen_clash(const struct kn_cfg_robot *a, const struct kn_cfg_robot *b)
{
    if (a->port == 0 || a->port != b->port)
        return false;
    unsigned char aa[16], bb[16];
    bool a6 = inet_pton(AF_INET6, a->bind_host, aa) == 1;
    bool b6 = inet_pton(AF_INET6, b->bind_host, bb) == 1;
    if (!a6 && inet_pton(AF_INET, a->bind_host, aa) != 1)
        return false;
    if (!b6 && inet_pton(AF_INET, b->bind_host, bb) != 1)
        return false;
    static const unsigned char zero[16] = { 0 };
    bool aw = memcmp(aa, zero, a6 ? 16 : 4) == 0, bw = memcmp(bb, zero, b6 ? 16 : 4) == 0;
    if ((a6 && aw) || (b6 && bw))
        return true;
    if (a6 != b6)
        return false;
    return aw || bw || memcmp(aa, bb, a6 ? 16 : 4) == 0;
}

static void check_robots(struct ld *l, const struct kn_config *cfg)
{
    char p[96], q[400], lbuf[KN_CFG_HOST_LEN + 16];
    for (size_t i = 0; i < cfg->n_robots; i++) {
        const struct kn_cfg_robot *r = &cfg->robots[i];
        for (size_t j = 0; j < i; j++) {
            if (r->name[0] != '\0' && strcasecmp(r->name, cfg->robots[j].name) == 0) {
                snprintf(p, sizeof p, "$.robots[%zu].name", i);
                kn_jsonschema_quote(r->name, q, sizeof q);
                errs_add(l->e, p,
                         "expected a name no other robot has (compared ignoring case), "
                         "got %s, also used by $.robots[%zu]",
                         q, j);
                break;
            }
        }
        for (size_t j = 0; j < i; j++) {
            if (listen_clash(r, &cfg->robots[j])) {
                snprintf(p, sizeof p, "$.robots[%zu].listen", i);
                kn_hostport_format(r->bind_host, r->port, lbuf, sizeof lbuf);
                kn_jsonschema_quote(lbuf, q, sizeof q);
                char other[KN_CFG_HOST_LEN + 16];
                kn_hostport_format(cfg->robots[j].bind_host, cfg->robots[j].port, other,
                                   sizeof other);
                errs_add(l->e, p,
                         "expected an address and port no other robot listens on, got %s, "
                         "which clashes with %s of $.robots[%zu]",
                         q, other, j);
                break;
            }
        }
    }
}

/* "0660": octal permission bits for the stats socket, read and write for
 * owner and group at most: others get nothing and nobody gets execute
 * bits, which mean nothing on a socket and would hide a typo. */
static void load_socket_mode(struct ld *l, const cJSON *doc, struct kn_config *cfg)
{
    char s[8], g[400];
    if (!opt_string(l, doc, "$", "stats_socket_mode", s, sizeof s))
        return;
    size_t n = strlen(s);
    char *end = NULL;
    unsigned long m = strtoul(s, &end, 8);
    if (n < 3 || n > 4 || *end || (n == 4 && s[0] != '0') || strspn(s, "01234567") != n) {
        got(member(doc, "stats_socket_mode"), g, sizeof g);
        errs_add(l->e, "$.stats_socket_mode", "expected an octal mode such as \"0660\", got %s", g);
        return;
    }
    if (m & ~(unsigned long)KN_CFG_SOCKET_MODE) {
        errs_add(l->e, "$.stats_socket_mode",
                 "expected a mode within 0660 (read and write for "
                 "owner and group; nothing for others, no execute bits), got \"%s\"%s%s",
                 s, m & 07 ? " (grants access to others)" : "", m & 0110 ? " (execute bits)" : "");
        return;
    }
    cfg->stats_socket_mode = (unsigned)m;
}

/* A group name, or its number as a string or an integer. */
static void load_socket_group(struct ld *l, const cJSON *doc, struct kn_config *cfg)
{
    const cJSON *v = member(doc, "stats_socket_group");
    char g[400];
    if (v == NULL)
        return;
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 2147483647.0 &&
        floor(v->valuedouble) == v->valuedouble) {
        snprintf(cfg->stats_socket_group, sizeof cfg->stats_socket_group, "%.0f", v->valuedouble);
        return;
    }
    if (cJSON_IsString(v) && v->valuestring[0] && strlen(v->valuestring) <= KN_CFG_GROUP_LEN &&
        !strchr(v->valuestring, ':')) {
        snprintf(cfg->stats_socket_group, sizeof cfg->stats_socket_group, "%s", v->valuestring);
        return;
    }
    got(v, g, sizeof g);
    errs_add(l->e, "$.stats_socket_group",
             "expected a group name of 1..%d bytes or a group "
             "number 0..2147483647, got %s",
             KN_CFG_GROUP_LEN, g);
}

static void load_capture(struct ld *l, const cJSON *doc, struct kn_config *cfg)
{
    if (member(doc, "capture_dir") != NULL) {
        if (opt_string(l, doc, "$", "capture_dir", cfg->capture_dir, sizeof cfg->capture_dir) &&
            cfg->capture_dir[0] != '/') {
            errs_add(l->e, "$.capture_dir", "expected an absolute directory path, got \"%s\"",
                     cfg->capture_dir);
            cfg->capture_dir[0] = '\0';
        }
    } else {
        /* none found (no HOME): run-time captures are refused and say so */
        cfg->capture_dir_default = true;
        if (kn_capdir_default(cfg->capture_dir, sizeof cfg->capture_dir) < 0)
            cfg->capture_dir[0] = '\0';
    }
    double mb = (double)(cfg->capture_max_bytes >> 20);
    opt_ranged(l, doc, "$", "capture_max_mb", 0, 1024.0 * 1024, &mb);
    if (floor(mb) != mb) {
        errs_add(l->e, "$.capture_max_mb", "expected a whole number of MiB, got %g", mb);
        mb = floor(mb);
    }
    cfg->capture_max_bytes = (uint64_t)mb << 20;
}

static void load_config(struct ld *l, const cJSON *doc, struct kn_config *cfg)
{
    char g[400];
    cfg->stats_socket_mode = KN_CFG_SOCKET_MODE;
    cfg->capture_max_bytes = KN_CFG_CAPTURE_MAX_MB << 20;
    cfg->ready_timeout_s = KN_CFG_READY_TIMEOUT_S;
    cfg->fault_injection = true;
    if (!cJSON_IsObject(doc)) {
        got(doc, g, sizeof g);
        errs_add(l->e, "$", "expected an object, got %s", g);
        return;
    }
    int lv;
    if (opt_enum(l, doc, "$", "log_level", log_level_names, 4, &lv))
        cfg->log_level = (enum kn_log_level)lv;
    if (member(doc, "stats_socket") != NULL) {
        opt_string(l, doc, "$", "stats_socket", cfg->stats_socket, sizeof cfg->stats_socket);
    } else {
        cfg->stats_socket_default = true;
        if (kn_sockdir_default(cfg->stats_socket, sizeof cfg->stats_socket) < 0)
            errs_add(l->e, "$.stats_socket",
                     "expected a default stats socket path of at most "
                     "%zu bytes, got a longer one (set \"stats_socket\")",
                     sizeof cfg->stats_socket - 1);
    }
    load_socket_mode(l, doc, cfg);
    load_socket_group(l, doc, cfg);
    load_capture(l, doc, cfg);
    opt_ranged(l, doc, "$", "ready_timeout_s", 0, 3600, &cfg->ready_timeout_s);
    const cJSON *fi = member(doc, "fault_injection");
    if (fi != NULL && !cJSON_IsBool(fi)) {
        got(fi, g, sizeof g);
        errs_add(l->e, "$.fault_injection", "expected true or false, got %s", g);
    } else if (fi != NULL) {
        cfg->fault_injection = cJSON_IsTrue(fi);
    }
    const cJSON *robots = member(doc, "robots");
    if (robots == NULL) {
        errs_add(l->e, "$", "missing required key \"robots\"");
        return;
    }
    int n = cJSON_GetArraySize(robots);
    if (!cJSON_IsArray(robots) || n < 1 || n > KN_CFG_MAX_ROBOTS) {
        got(robots, g, sizeof g);
        errs_add(l->e, "$.robots", "expected an array of 1..%d robots, got %s%s", KN_CFG_MAX_ROBOTS,
                 g, cJSON_IsArray(robots) ? " of another size" : "");
        return;
    }
    const cJSON *jr;
    cJSON_ArrayForEach(jr, robots)
    {
        size_t i = cfg->n_robots++;
        load_robot(l, jr, i, &cfg->robots[i]);
        cfg->robots[i].fault_injection = cfg->fault_injection;
        if (!cfg->fault_injection && member(jr, "faults") != NULL) {
            char p[64];
            snprintf(p, sizeof p, "$.robots[%zu].faults", i);
            errs_add(l->e, p,
                     "expected no faults section, since \"fault_injection\" is false, "
                     "got one");
        }
    }
    check_robots(l, cfg);
}

/* ---- public ----------------------------------------------------------- */

/* partial: fill *out with what loaded even when there are problems. */
static int parse_checked(const char *json, size_t len, struct errs *e, const char *schema_path,
                         struct kn_config *out, bool partial)
{
    if (partial) {
        memset(out, 0, sizeof *out);
        snprintf(out->source, sizeof out->source, "%s", e->name);
        out->log_level = KN_LOG_INFO;
    }
    if (json == NULL && len > 0) {
        errs_add(e, NULL, "no data");
        return -1;
    }
    if (len > KN_CFG_MAX_FILE_BYTES) {
        errs_add(e, NULL, "expected a file of at most 1 MiB (%d bytes), got %zu bytes",
                 KN_CFG_MAX_FILE_BYTES, len);
        return -1;
    }
    if (!check_bytes(json, len, e))
        return -1;
    cJSON *doc = parse_json(json, len, e);
    if (doc == NULL)
        return -1;
    bool schema_builtin;
    cJSON *schema = load_schema(schema_path, e, &schema_builtin);
    if (schema == NULL) {
        cJSON_Delete(doc);
        return -1;
    }
    /* schema problems do not stop the loader: its rules (and the checks
     * after it) report what the schema cannot see, in the same run */
    e->recording = true;
    kn_jsonschema_validate(schema, doc, errs_room(e), report_cb, e);
    e->recording = false;
    if (!schema_builtin)
        cJSON_Delete(schema);
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    if (cfg == NULL) {
        cJSON_Delete(doc);
        errs_add(e, NULL, "out of memory");
        return -1;
    }
    snprintf(cfg->source, sizeof cfg->source, "%s", e->name);
    cfg->log_level = KN_LOG_INFO;
    struct ld l = { e };
    load_config(&l, doc, cfg);
    cJSON_Delete(doc);
    if (e->n == 0 || partial)
        memcpy(out, cfg, sizeof *cfg);
    free(cfg);
    return e->n > 0 ? -1 : 0;
}

static void errs_init(struct errs *e, const char *name, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    e->name = name != NULL ? name : "(config)";
    e->buf = err;
    e->cap = err != NULL ? errlen : 0;
    if (e->cap > 0)
        err[0] = '\0';
}

int kn_config_parse(const char *json, size_t len, const char *name, const char *schema_path,
                    struct kn_config *out, char *err, size_t errlen)
{
    struct errs e;
    errs_init(&e, name, err, errlen);
    return parse_checked(json, len, &e, schema_path, out, false);
}

static size_t load_file(const char *path, const char *schema_path, struct kn_config *out, char *err,
                        size_t errlen, bool partial)
{
    struct errs e;
    errs_init(&e, path, err, errlen);
    if (partial) {
        memset(out, 0, sizeof *out);
        snprintf(out->source, sizeof out->source, "%s", e.name);
    }
    if (path == NULL) {
        errs_add(&e, NULL, "no config file given");
        return e.n;
    }
    size_t len = 0;
    struct stat st;
    char *text = read_file(path, &len, &e, &st);
    if (text != NULL)
        parse_checked(text, len, &e, schema_path, out, partial);
    if (text != NULL && (partial || e.n == 0)) {
        /* what was read is what the trust rule looks at (config_check.c) */
        out->source_stat = st;
        out->source_stat_ok = true;
    }
    free(text);
    return e.n;
}

int kn_config_load(const char *path, const char *schema_path, struct kn_config *out, char *err,
                   size_t errlen)
{
    return load_file(path, schema_path, out, err, errlen, false) > 0 ? -1 : 0;
}

size_t kn_config_load_all(const char *path, const char *schema_path, struct kn_config *out,
                          char *err, size_t errlen)
{
    return load_file(path, schema_path, out, err, errlen, true);
}

/* ---- effective config as JSON ----------------------------------------- */

struct jb {
    bool failed;
};

static cJSON *add(struct jb *j, cJSON *obj, const char *key, cJSON *item)
{
    if (item == NULL || obj == NULL) {
        j->failed = true;
        cJSON_Delete(item);
        return NULL;
    }
    cJSON_AddItemToObject(obj, key, item);
    return item;
}

static void add_num(struct jb *j, cJSON *obj, const char *key, double v)
{
    add(j, obj, key, cJSON_CreateNumber(v));
}

static void add_str(struct jb *j, cJSON *obj, const char *key, const char *s)
{
    add(j, obj, key, cJSON_CreateString(s));
}

static void add_vec(struct jb *j, cJSON *obj, const char *key, const double *v, int n)
{
    add(j, obj, key, cJSON_CreateDoubleArray(v, n));
}

static const char *name_of(const char *const *names, size_t n, int i, const char *fallback)
{
    return i >= 0 && (size_t)i < n ? names[i] : fallback;
}

static void backend_to_json(struct jb *j, cJSON *jr, const struct kn_cfg_backend *b)
{
    cJSON *o = add(j, jr, "backend", cJSON_CreateObject());
    add_str(j, o, "type", name_of(backend_names, 5, (int)b->kind, "engine"));
    if (b->host[0] != '\0') {
        char addr[KN_CFG_HOST_LEN + 16];
        kn_hostport_format(b->host, b->port, addr, sizeof addr);
        add_str(j, o, "address", addr);
    }
    add_num(j, o, "connect_timeout_s", b->connect_timeout_s);
    add_num(j, o, "reconnect_max_s", b->reconnect_max_s);
    add_num(j, o, "stale_ms", b->stale_ms);
    add_num(j, o, "wheel_radius_m", b->wheel_radius_m);
    add_num(j, o, "counts_per_tick", b->counts_per_tick);
    if (b->kind == KN_BACKEND_ENGINE)
        add(j, o, "lockstep", cJSON_CreateBool(b->lockstep));
    cJSON *fl = add(j, o, "flippers", cJSON_CreateObject());
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        cJSON *f = add(j, fl, flipper_keys[k], cJSON_CreateObject());
        add_str(j, f, "joint", b->flipper[k].name);
        if (b->flipper[k].link[0] != '\0')
            add_str(j, f, "link", b->flipper[k].link);
        add_num(j, f, "sign", b->flipper[k].sign);
        add_num(j, f, "offset_deg", rad_to_deg(b->flipper[k].offset_rad));
    }
    if (b->kind == KN_BACKEND_USARSIM || b->kind == KN_BACKEND_ENGINE) {
        cJSON *u = add(j, o, "usarsim", cJSON_CreateObject());
        add_str(j, u, "dialect", name_of(dialect_names, 2, (int)b->dialect, "udk"));
        add_str(j, u, "class_name", b->class_name);
        add_str(j, u, "start", b->start_tag);
        add_vec(j, u, "location_m", b->spawn_location_m, 3);
        double rot[3];
        for (int i = 0; i < 3; i++)
            rot[i] = rad_to_deg(b->spawn_rpy_rad[i]);
        add_vec(j, u, "rotation_deg", rot, 3);
        add_vec(j, u, "encoder_sign", b->encoder_sign, 2);
    }
    if (b->kind == KN_BACKEND_ENGINE && b->host[0] == '\0') {
        cJSON *e = add(j, o, "engine", cJSON_CreateObject());
        add_str(j, e, "path", b->engine_path);
        add_str(j, e, "terrain", b->terrain);
        add_str(j, e, "robot", b->robot);
        add_num(j, e, "silent_restart_s", b->silent_restart_s);
    }
    if (b->kind == KN_BACKEND_GAZEBO) {
        cJSON *g = add(j, o, "gazebo", cJSON_CreateObject());
        add_str(j, g, "model", b->model);
        add_str(j, g, "command", b->twist_cmd ? "twist" : "pose");
        add_num(j, g, "tracks_separation_m", b->tracks_separation_m);
        add_num(j, g, "steering_efficiency", b->steering_efficiency);
        add_num(j, g, "max_linear_speed_m_s", b->max_linear_speed_m_s);
        add_num(j, g, "max_angular_speed_rad_s", b->max_angular_speed_rad_s);
    }
    if (b->kind == KN_BACKEND_GZ) {
        cJSON *g = add(j, o, "gz", cJSON_CreateObject());
        add_str(j, g, "model", b->model);
        add_str(j, g, "world", b->world);
        add_str(j, g, "partition", b->partition);
        add_str(j, g, "ip", b->gz_ip);
        add_str(j, g, "pose_topic", b->pose_topic);
        add_str(j, g, "messages", gz_family_names[b->gz_family + 1]);
        add_num(j, g, "tracks_separation_m", b->tracks_separation_m);
        add_num(j, g, "steering_efficiency", b->steering_efficiency);
    }
}

static void allow_to_json(struct jb *j, cJSON *jr, const char *key,
                          const struct kn_access_net *list, unsigned n)
{
    cJSON *arr = add(j, jr, key, cJSON_CreateArray());
    for (unsigned i = 0; arr != NULL && i < n; i++) {
        char net[80];
        kn_access_format(&list[i], net, sizeof net);
        cJSON *s = cJSON_CreateString(net);
        if (s == NULL || !cJSON_AddItemToArray(arr, s))
            j->failed = true;
    }
}

static void faults_to_json(struct jb *j, cJSON *jf, const char *key, const struct kn_cfg_faults *f)
{
    cJSON *o = add(j, jf, key, cJSON_CreateObject());
    add_num(j, o, "drop", f->drop);
    add_num(j, o, "duplicate", f->duplicate);
    add_num(j, o, "reorder", f->reorder);
    add_num(j, o, "delay_ms", f->delay_ms);
    add_num(j, o, "jitter_ms", f->jitter_ms);
    add_num(j, o, "seed", (double)f->seed);
}

/* A growing text buffer for the printer below. */
struct out {
    char *buf;
    size_t len, cap;
    bool failed;
};

static void out_put(struct out *o, const char *s, size_t n)
{
    if (o->failed)
        return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (o->len + n + 1 > cap)
            cap *= 2;
        char *nb = realloc(o->buf, cap);
        if (nb == NULL) {
            o->failed = true;
            return;
        }
        o->buf = nb;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

static void out_str(struct out *o, const char *s)
{
    out_put(o, s, strlen(s));
}

static void out_indent(struct out *o, int n)
{
    for (int i = 0; i < n; i++)
        out_put(o, "  ", 2);
}

/* cJSON's own escaping and number formatting (shortest exact form). */
static void out_scalar(struct out *o, const cJSON *v)
{
    char *s = cJSON_PrintUnformatted(v);
    if (s == NULL) {
        o->failed = true;
        return;
    }
    out_str(o, s);
    cJSON_free(s);
}

static void out_key(struct out *o, const char *key)
{
    cJSON *k = cJSON_CreateString(key);
    if (k == NULL) {
        o->failed = true;
        return;
    }
    out_scalar(o, k);
    cJSON_Delete(k);
    out_put(o, ": ", 2);
}

/* Two-space indentation, arrays of scalars on one line: the layout of the
 * shipped config files, so the output can be diffed against them. */
static void out_value(struct out *o, const cJSON *v, int depth)
{
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) {
        out_scalar(o, v);
        return;
    }
    bool obj = cJSON_IsObject(v), flat = !obj;
    const cJSON *c;
    cJSON_ArrayForEach(c, v) if (cJSON_IsObject(c) || cJSON_IsArray(c)) flat = false;
    out_str(o, obj ? "{" : "[");
    if (v->child == NULL) {
        out_str(o, obj ? "}" : "]");
        return;
    }
    cJSON_ArrayForEach(c, v)
    {
        if (flat) {
            if (c != v->child)
                out_str(o, ", ");
        } else {
            out_str(o, c != v->child ? ",\n" : "\n");
            out_indent(o, depth + 1);
        }
        if (obj)
            out_key(o, c->string ? c->string : "");
        out_value(o, c, depth + 1);
    }
    if (!flat) {
        out_str(o, "\n");
        out_indent(o, depth);
    }
    out_str(o, obj ? "}" : "]");
}

char *kn_config_to_json(const struct kn_config *cfg)
{
    struct jb j = { false };
    cJSON *root = cJSON_CreateObject();
    if (root == NULL)
        return NULL;
    add_str(&j, root, "log_level", name_of(log_level_names, 4, (int)cfg->log_level, "info"));
    add_str(&j, root, "stats_socket", cfg->stats_socket);
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", cfg->stats_socket_mode);
    add_str(&j, root, "stats_socket_mode", mode);
    if (cfg->stats_socket_group[0])
        add_str(&j, root, "stats_socket_group", cfg->stats_socket_group);
    if (cfg->capture_dir[0])
        add_str(&j, root, "capture_dir", cfg->capture_dir);
    add_num(&j, root, "capture_max_mb", (double)(cfg->capture_max_bytes >> 20));
    add_num(&j, root, "ready_timeout_s", cfg->ready_timeout_s);
    add(&j, root, "fault_injection", cJSON_CreateBool(cfg->fault_injection));
    cJSON *robots = add(&j, root, "robots", cJSON_CreateArray());
    for (size_t i = 0; robots != NULL && i < cfg->n_robots && i < KN_CFG_MAX_ROBOTS; i++) {
        const struct kn_cfg_robot *r = &cfg->robots[i];
        cJSON *jr = cJSON_CreateObject();
        if (jr == NULL || !cJSON_AddItemToArray(robots, jr)) {
            cJSON_Delete(jr);
            j.failed = true;
            break;
        }
        char listen[KN_CFG_HOST_LEN + 16];
        kn_hostport_format(r->bind_host, r->port, listen, sizeof listen);
        add_str(&j, jr, "name", r->name);
        add_str(&j, jr, "listen", listen);
        add_num(&j, jr, "watchdog_ms", r->watchdog_ms);
        add_num(&j, jr, "counts_per_m", r->counts_per_m);
        add_num(&j, jr, "battery_v", r->battery_v);
        cJSON *jc = add(&j, jr, "consoles", cJSON_CreateArray());
        for (size_t k = 0; jc != NULL && k < r->n_consoles; k++) {
            char a[96];
            if (r->consoles[k].port)
                kn_hostport_format(r->consoles[k].host, r->consoles[k].port, a, sizeof a);
            else
                snprintf(a, sizeof a, "%s", r->consoles[k].host);
            cJSON *js = cJSON_CreateString(a);
            if (js == NULL || !cJSON_AddItemToArray(jc, js)) {
                cJSON_Delete(js);
                j.failed = true;
            }
        }
        add(&j, jr, "hello_to_drive", cJSON_CreateBool(r->hello_to_drive));
        cJSON *lim = add(&j, jr, "limits", cJSON_CreateObject());
        add_num(&j, lim, "max_speed_mm_s", r->max_speed_mm_s);
        add_num(&j, lim, "flipper_min_deg", kn_conv_cdeg_to_deg(r->flipper_min_cdeg));
        add_num(&j, lim, "flipper_max_deg", kn_conv_cdeg_to_deg(r->flipper_max_cdeg));
        if (r->key_file[0])
            add_str(&j, jr, "key_file", r->key_file);
        if (r->access.on) {
            allow_to_json(&j, jr, "allow_drivers", r->access.drivers, r->access.n_drivers);
            allow_to_json(&j, jr, "allow_observers", r->access.observers, r->access.n_observers);
        }
        backend_to_json(&j, jr, &r->backend);
        if (cfg->fault_injection) {
            cJSON *jf = add(&j, jr, "faults", cJSON_CreateObject());
            faults_to_json(&j, jf, "krp", &r->faults_krp);
            faults_to_json(&j, jf, "sim", &r->faults_sim);
        }
    }
    struct out o = { NULL, 0, 0, j.failed };
    out_value(&o, root, 0);
    cJSON_Delete(root);
    if (o.failed) {
        free(o.buf);
        return NULL;
    }
    return o.buf;
}

/* ---- equality --------------------------------------------------------- */

static bool joint_equal(const struct kn_cfg_joint *a, const struct kn_cfg_joint *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->link, b->link) == 0 && a->sign == b->sign &&
           a->offset_rad == b->offset_rad;
}

static bool backend_equal(const struct kn_cfg_backend *a, const struct kn_cfg_backend *b)
{
    for (int k = 0; k < KN_NFLIPPERS; k++)
        if (!joint_equal(&a->flipper[k], &b->flipper[k]))
            return false;
    for (int i = 0; i < 3; i++)
        if (a->spawn_location_m[i] != b->spawn_location_m[i] ||
            a->spawn_rpy_rad[i] != b->spawn_rpy_rad[i])
            return false;
    if (a->encoder_sign[0] != b->encoder_sign[0] || a->encoder_sign[1] != b->encoder_sign[1])
        return false;
    return a->kind == b->kind && strcmp(a->host, b->host) == 0 && a->port == b->port &&
           a->connect_timeout_s == b->connect_timeout_s &&
           a->reconnect_max_s == b->reconnect_max_s && a->stale_ms == b->stale_ms &&
           a->wheel_radius_m == b->wheel_radius_m && a->counts_per_tick == b->counts_per_tick &&
           a->dialect == b->dialect && strcmp(a->class_name, b->class_name) == 0 &&
           strcmp(a->start_tag, b->start_tag) == 0 && strcmp(a->engine_path, b->engine_path) == 0 &&
           strcmp(a->terrain, b->terrain) == 0 && strcmp(a->robot, b->robot) == 0 &&
           a->silent_restart_s == b->silent_restart_s && a->lockstep == b->lockstep &&
           strcmp(a->model, b->model) == 0 && a->twist_cmd == b->twist_cmd &&
           a->tracks_separation_m == b->tracks_separation_m &&
           a->steering_efficiency == b->steering_efficiency &&
           a->max_linear_speed_m_s == b->max_linear_speed_m_s &&
           a->max_angular_speed_rad_s == b->max_angular_speed_rad_s &&
           strcmp(a->world, b->world) == 0 && strcmp(a->partition, b->partition) == 0 &&
           strcmp(a->gz_ip, b->gz_ip) == 0 && a->gz_family == b->gz_family &&
           strcmp(a->pose_topic, b->pose_topic) == 0;
}

static bool faults_equal(const struct kn_cfg_faults *a, const struct kn_cfg_faults *b)
{
    return a->drop == b->drop && a->duplicate == b->duplicate && a->reorder == b->reorder &&
           a->delay_ms == b->delay_ms && a->jitter_ms == b->jitter_ms && a->seed == b->seed;
}

static bool consoles_equal(const struct kn_cfg_robot *a, const struct kn_cfg_robot *b)
{
    if (a->n_consoles != b->n_consoles)
        return false;
    for (size_t i = 0; i < a->n_consoles; i++)
        if (strcmp(a->consoles[i].host, b->consoles[i].host) != 0 ||
            a->consoles[i].port != b->consoles[i].port)
            return false;
    return true;
}

/* The key itself, not the file's name: a key file rewritten in place is a
 * new key, the same key under another name is not. */
static bool keys_equal(const struct kn_cfg_robot *a, const struct kn_cfg_robot *b)
{
    return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

bool kn_config_robot_equal(const struct kn_cfg_robot *a, const struct kn_cfg_robot *b)
{
    return a->fault_injection == b->fault_injection && keys_equal(a, b) &&
           memcmp(&a->access, &b->access, sizeof a->access) == 0 &&
           faults_equal(&a->faults_krp, &b->faults_krp) &&
           faults_equal(&a->faults_sim, &b->faults_sim) && strcmp(a->name, b->name) == 0 &&
           strcmp(a->bind_host, b->bind_host) == 0 && a->port == b->port &&
           a->watchdog_ms == b->watchdog_ms && a->max_speed_mm_s == b->max_speed_mm_s &&
           a->flipper_min_cdeg == b->flipper_min_cdeg &&
           a->flipper_max_cdeg == b->flipper_max_cdeg && a->counts_per_m == b->counts_per_m &&
           a->battery_v == b->battery_v && a->hello_to_drive == b->hello_to_drive &&
           consoles_equal(a, b) && backend_equal(&a->backend, &b->backend);
}
