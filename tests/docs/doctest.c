/* Finding a Markdown document's runnable shell blocks: see doctest.h. */
#include "doctest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARKER "<!-- doctest"
#define MAX_TIMEOUT_S 3600

/* One line of the document: a view into the text, without its end of
 * line (a CR before the LF is dropped too). */
struct line {
    const char *s;
    size_t len;
};

/* A fence line: indentation, then three or more backticks or tildes, then
 * the info string. Fences inside list items are indented, so any
 * indentation counts: this reader only has to know what is code. */
struct fence {
    char ch;
    size_t n;         /* how many fence characters */
    const char *info; /* after them, blanks trimmed */
    size_t info_len;
};

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static struct line trimmed(struct line l)
{
    while (l.len && (*l.s == ' ' || *l.s == '\t'))
        l.s++, l.len--;
    while (l.len && (l.s[l.len - 1] == ' ' || l.s[l.len - 1] == '\t'))
        l.len--;
    return l;
}

static bool is_fence(struct line l, struct fence *f)
{
    l = trimmed(l);
    if (l.len < 3 || (l.s[0] != '`' && l.s[0] != '~'))
        return false;
    size_t n = 0;
    while (n < l.len && l.s[n] == l.s[0])
        n++;
    if (n < 3)
        return false;
    struct line info = trimmed((struct line){ l.s + n, l.len - n });
    *f = (struct fence){ l.s[0], n, info.s, info.len };
    return true;
}

static bool closes(const struct fence *open, const struct fence *f)
{
    return f->ch == open->ch && f->n >= open->n && f->info_len == 0;
}

/* Parses the options of a marker ("needs=daemon timeout=120"). */
static int parse_options(const char *name, int lineno, const char *s, size_t len,
                         struct kn_doctest_block *b, char *err, size_t errlen)
{
    size_t i = 0;
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
            i++;
        size_t start = i;
        while (i < len && s[i] != ' ' && s[i] != '\t')
            i++;
        if (i == start)
            break;
        const char *opt = s + start;
        int olen = (int)(i - start);
        if (olen == 12 && strncmp(opt, "needs=daemon", 12) == 0) {
            b->needs_daemon = true;
        } else if (olen > 8 && strncmp(opt, "timeout=", 8) == 0) {
            char num[16] = "";
            char *end;
            snprintf(num, sizeof num, "%.*s", olen - 8, opt + 8);
            long t = strtol(num, &end, 10);
            if (*end || olen - 8 >= (int)sizeof num || t < 1 || t > MAX_TIMEOUT_S)
                return fail(err, errlen, "%s:%d: doctest option %.*s: expected seconds 1..%d", name,
                            lineno, olen, opt, MAX_TIMEOUT_S);
            b->timeout_s = (int)t;
        } else {
            return fail(err, errlen,
                        "%s:%d: unknown doctest option \"%.*s\" (expected needs=daemon, timeout=N)",
                        name, lineno, olen, opt);
        }
    }
    return 0;
}

/* Whether l is a marker; -1 (with err) when it starts like one but is not
 * well-formed, so a typo cannot turn a block off unseen. */
static int read_marker(const char *name, int lineno, struct line l, struct kn_doctest_block *b,
                       char *err, size_t errlen)
{
    l = trimmed(l);
    size_t m = strlen(MARKER);
    if (l.len < m || strncmp(l.s, MARKER, m) != 0)
        return 0;
    if (l.len < m + 3 || strncmp(l.s + l.len - 3, "-->", 3) != 0)
        return fail(err, errlen,
                    "%s:%d: malformed doctest marker (expected \"%s -->\" or "
                    "\"%s: OPTIONS -->\")",
                    name, lineno, MARKER, MARKER);
    const char *rest = l.s + m;
    size_t rlen = l.len - m - 3;
    if (rlen && rest[0] == ':')
        return parse_options(name, lineno, rest + 1, rlen - 1, b, err, errlen) < 0 ? -1 : 1;
    if (trimmed((struct line){ rest, rlen }).len == 0)
        return 1;
    return fail(err, errlen,
                "%s:%d: malformed doctest marker (expected \"%s -->\" or "
                "\"%s: OPTIONS -->\")",
                name, lineno, MARKER, MARKER);
}

/* The next line of text at *pos, or false at the end. */
static bool next_line(const char *text, size_t *pos, struct line *l)
{
    if (!text[*pos])
        return false;
    const char *s = text + *pos;
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    *pos += len + (nl ? 1 : 0);
    if (len && s[len - 1] == '\r')
        len--;
    *l = (struct line){ s, len };
    return true;
}

static int push(struct kn_doctest_list *out, struct kn_doctest_block *b)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 16;
        struct kn_doctest_block *v = realloc(out->v, cap * sizeof *v);
        if (!v)
            return -1;
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n++] = *b;
    return 0;
}

static int append(char **buf, size_t *len, struct line l)
{
    char *t = realloc(*buf, *len + l.len + 2);
    if (!t)
        return -1;
    memcpy(t + *len, l.s, l.len);
    *len += l.len;
    t[(*len)++] = '\n';
    t[*len] = '\0';
    *buf = t;
    return 0;
}

int kn_doctest_extract(const char *name, const char *text, struct kn_doctest_list *out, char *err,
                       size_t errlen)
{
    size_t pos = 0;
    int lineno = 0;
    struct line l;
    struct fence open, f;
    bool in_fence = false;
    int open_line = 0;
    while (next_line(text, &pos, &l)) {
        lineno++;
        if (in_fence) {
            if (is_fence(l, &f) && closes(&open, &f))
                in_fence = false;
            continue;
        }
        if (is_fence(l, &open)) {
            in_fence = true;
            open_line = lineno;
            continue;
        }
        struct kn_doctest_block b = { .line = 0 };
        int m = read_marker(name, lineno, l, &b, err, errlen);
        if (m < 0)
            return -1;
        if (m == 0)
            continue;
        int marker_line = lineno;
        if (!next_line(text, &pos, &l) || (lineno++, !is_fence(l, &open)) || open.ch != '`' ||
            open.info_len != 2 || strncmp(open.info, "sh", 2) != 0)
            return fail(err, errlen,
                        "%s:%d: doctest marker not followed by a ```sh fence on the "
                        "next line",
                        name, marker_line);
        b.line = lineno;
        snprintf(b.file, sizeof b.file, "%s", name);
        size_t len = 0;
        bool closed = false;
        while (next_line(text, &pos, &l)) {
            lineno++;
            if (is_fence(l, &f) && closes(&open, &f)) {
                closed = true;
                break;
            }
            if (append(&b.text, &len, l) < 0) {
                free(b.text);
                return fail(err, errlen, "%s:%d: out of memory", name, lineno);
            }
        }
        if (!closed) {
            free(b.text);
            return fail(err, errlen, "%s:%d: the fence opened here is never closed", name, b.line);
        }
        if (!b.text) {
            return fail(err, errlen, "%s:%d: the doctest block is empty", name, b.line);
        }
        if (push(out, &b) < 0) {
            free(b.text);
            return fail(err, errlen, "%s:%d: out of memory", name, b.line);
        }
    }
    if (in_fence)
        return fail(err, errlen, "%s:%d: the fence opened here is never closed", name, open_line);
    return 0;
}

int kn_doctest_extract_file(const char *path, const char *name, struct kn_doctest_list *out,
                            char *err, size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return fail(err, errlen, "%s: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[65536];
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        if (len + n + 1 > cap) {
            cap = 2 * (len + n + 1);
            char *t = realloc(text, cap);
            if (!t) {
                free(text);
                fclose(fp);
                return fail(err, errlen, "%s: out of memory", path);
            }
            text = t;
        }
        memcpy(text + len, chunk, n);
        len += n;
    }
    bool bad = ferror(fp);
    fclose(fp);
    if (bad) {
        free(text);
        return fail(err, errlen, "%s: read error", path);
    }
    if (!text || memchr(text, '\0', len)) {
        free(text);
        return fail(err, errlen, "%s: %s", path, text ? "a NUL byte in the text" : "empty");
    }
    text[len] = '\0';
    int rc = kn_doctest_extract(name, text, out, err, errlen);
    free(text);
    return rc;
}

void kn_doctest_free(struct kn_doctest_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].text);
    free(l->v);
    *l = (struct kn_doctest_list){ 0 };
}
