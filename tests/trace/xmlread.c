/* The strict XML reader of the plot tests (see xmlread.h). */
#include "xmlread.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cursor {
    const char *s;
    size_t len, i;
    struct x_doc *d;
};

__attribute__((format(printf, 2, 3))) static int fail(struct cursor *c, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->d->err, sizeof c->d->err, "at byte %zu: %s", c->i, msg);
    return -1;
}

static bool at(const struct cursor *c, const char *lit)
{
    size_t n = strlen(lit);
    return c->i + n <= c->len && memcmp(c->s + c->i, lit, n) == 0;
}

static bool space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static void skip_space(struct cursor *c)
{
    while (c->i < c->len && space(c->s[c->i]))
        c->i++;
}

/* Length of the valid UTF-8 character XML allows at s[0..n), or 0. */
static size_t xml_char(const unsigned char *s, size_t n)
{
    unsigned b = s[0];
    size_t len = b < 0x80             ? 1
                 : (b & 0xE0) == 0xC0 ? 2
                 : (b & 0xF0) == 0xE0 ? 3
                 : (b & 0xF8) == 0xF0 ? 4
                                      : 0;
    if (len == 0 || len > n)
        return 0;
    uint32_t cp = len == 1 ? b : len == 2 ? b & 0x1F : len == 3 ? b & 0x0F : b & 0x07;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE ||
        cp == 0xFFFF)
        return 0;
    if (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r')
        return 0;
    return len;
}

/* Growable string. */
struct str {
    char *p;
    size_t n, cap;
};

static void put(struct str *s, const char *b, size_t n)
{
    if (s->n + n + 1 > s->cap) {
        s->cap = (s->n + n + 1) * 2;
        s->p = realloc(s->p, s->cap);
        if (!s->p)
            abort();
    }
    memcpy(s->p + s->n, b, n);
    s->n += n;
    s->p[s->n] = '\0';
}

/* An entity reference at c (on the '&'), decoded into out. */
static int entity(struct cursor *c, struct str *out)
{
    static const struct {
        const char *name, *ch;
    } known[] = {
        { "amp;", "&" }, { "lt;", "<" }, { "gt;", ">" }, { "quot;", "\"" }, { "apos;", "'" }
    };
    c->i++;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        if (at(c, known[k].name)) {
            c->i += strlen(known[k].name);
            put(out, known[k].ch, 1);
            return 0;
        }
    if (at(c, "#")) {
        c->i++;
        int base = 10;
        if (at(c, "x")) {
            base = 16;
            c->i++;
        }
        char *end;
        unsigned long cp = strtoul(c->s + c->i, &end, base);
        if (end == c->s + c->i || *end != ';' || cp == 0 || cp > 0x10FFFF)
            return fail(c, "bad character reference");
        c->i = (size_t)(end - c->s) + 1;
        put(out, "?", 1); /* the tests never look at these */
        return 0;
    }
    return fail(c, "'&' that starts no known entity");
}

/* Character data up to the next '<', the quote (-1: none) or the end,
 * checked and decoded. */
static int chars(struct cursor *c, struct str *out, int quote)
{
    while (c->i < c->len && c->s[c->i] != '<' && (unsigned char)c->s[c->i] != quote) {
        if (c->s[c->i] == '&') {
            if (entity(c, out))
                return -1;
            continue;
        }
        if (at(c, "]]>"))
            return fail(c, "']]>' in text");
        size_t n = xml_char((const unsigned char *)c->s + c->i, c->len - c->i);
        if (n == 0)
            return fail(c, "byte 0x%02x is not an XML character in UTF-8",
                        (unsigned char)c->s[c->i]);
        put(out, c->s + c->i, n);
        c->i += n;
    }
    return 0;
}

static int name(struct cursor *c, char *buf, size_t len)
{
    size_t n = 0;
    while (c->i < c->len) {
        char ch = c->s[c->i];
        bool first = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == ':';
        bool more = first || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.';
        if (!(n == 0 ? first : more))
            break;
        if (n + 1 >= len)
            return fail(c, "name too long");
        buf[n++] = ch;
        c->i++;
    }
    buf[n] = '\0';
    return n ? 0 : fail(c, "a name was expected");
}

static int attribute(struct cursor *c, struct x_elem *e)
{
    char an[64];
    if (name(c, an, sizeof an))
        return -1;
    for (int k = 0; k < e->nattr; k++)
        if (strcmp(e->attr_name[k], an) == 0)
            return fail(c, "attribute %s given twice on <%s>", an, e->name);
    skip_space(c);
    if (!at(c, "="))
        return fail(c, "'=' expected after %s", an);
    c->i++;
    skip_space(c);
    if (c->i >= c->len || (c->s[c->i] != '\'' && c->s[c->i] != '"'))
        return fail(c, "quoted value expected for %s", an);
    int q = (unsigned char)c->s[c->i++];
    struct str v = { 0 };
    put(&v, "", 0);
    if (chars(c, &v, q)) {
        free(v.p);
        return -1;
    }
    if (c->i >= c->len || (unsigned char)c->s[c->i] != q) {
        free(v.p);
        return fail(c, "'<' or the end inside the value of %s", an);
    }
    c->i++;
    if (e->nattr == X_MAX_ATTR) {
        free(v.p);
        return fail(c, "too many attributes");
    }
    e->attr_name[e->nattr] = strdup(an);
    e->attr_value[e->nattr++] = v.p;
    return 0;
}

static struct x_elem *new_elem(struct x_doc *d, int parent)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 64;
        d->e = realloc(d->e, (size_t)d->cap * sizeof *d->e);
        if (!d->e)
            abort();
    }
    struct x_elem *e = &d->e[d->n++];
    memset(e, 0, sizeof *e);
    e->parent = parent;
    return e;
}

/* Skips a comment or processing instruction at c; 1 when there was one. */
static int skip_markup(struct cursor *c)
{
    const char *open[2] = { "<!--", "<?" }, *close[2] = { "-->", "?>" };
    for (int k = 0; k < 2; k++) {
        if (!at(c, open[k]))
            continue;
        const char *end = memmem(c->s + c->i, c->len - c->i, close[k], strlen(close[k]));
        if (!end)
            return fail(c, "unterminated %s", open[k]);
        c->i = (size_t)(end - c->s) + strlen(close[k]);
        return 1;
    }
    if (at(c, "<!"))
        return fail(c, "DOCTYPE or CDATA: not expected");
    return 0;
}

/* A start tag at c; cur becomes the element when it is not empty. */
static int start_tag(struct cursor *c, int *cur, int *roots)
{
    c->i++;
    if (*cur < 0 && ++*roots > 1)
        return fail(c, "a second root element");
    struct x_elem *e = new_elem(c->d, *cur);
    int idx = c->d->n - 1;
    if (name(c, e->name, sizeof e->name))
        return -1;
    for (;;) {
        size_t before = c->i;
        skip_space(c);
        if (at(c, "/>")) {
            c->i += 2;
            return 0;
        }
        if (at(c, ">")) {
            c->i++;
            *cur = idx;
            return 0;
        }
        if (c->i == before)
            return fail(c, "space expected between attributes of <%s>", e->name);
        if (attribute(c, &c->d->e[idx]))
            return -1;
        e = &c->d->e[idx];
    }
}

static int end_tag(struct cursor *c, int *cur)
{
    c->i += 2;
    char n[32];
    if (name(c, n, sizeof n))
        return -1;
    skip_space(c);
    if (!at(c, ">"))
        return fail(c, "'>' expected");
    c->i++;
    if (*cur < 0 || strcmp(c->d->e[*cur].name, n) != 0)
        return fail(c, "</%s> does not close <%s>", n, *cur < 0 ? "(nothing)" : c->d->e[*cur].name);
    *cur = c->d->e[*cur].parent;
    return 0;
}

static int text(struct cursor *c, int cur)
{
    struct str t = { 0 };
    put(&t, "", 0);
    int rc = chars(c, &t, -1);
    bool blank = true;
    for (size_t k = 0; k < t.n; k++)
        blank &= space(t.p[k]);
    if (rc == 0 && cur < 0 && !blank)
        rc = fail(c, "text outside the root element");
    if (rc == 0 && cur >= 0) {
        struct x_elem *e = &c->d->e[cur];
        struct str all = { e->text, e->text ? strlen(e->text) : 0,
                           e->text ? strlen(e->text) + 1 : 0 };
        put(&all, t.p, t.n);
        e->text = all.p;
    }
    free(t.p);
    return rc;
}

int x_parse(const char *buf, size_t len, struct x_doc *d)
{
    memset(d, 0, sizeof *d);
    struct cursor c = { buf, len, 0, d };
    int cur = -1, roots = 0;
    while (c.i < c.len) {
        if (c.s[c.i] != '<') {
            if (text(&c, cur))
                return -1;
            continue;
        }
        int m = skip_markup(&c);
        if (m < 0)
            return -1;
        if (m > 0)
            continue;
        if (at(&c, "</") ? end_tag(&c, &cur) : start_tag(&c, &cur, &roots))
            return -1;
    }
    if (cur >= 0)
        return fail(&c, "<%s> is not closed", d->e[cur].name);
    if (roots != 1)
        return fail(&c, "no root element");
    return 0;
}

void x_free(struct x_doc *d)
{
    for (int i = 0; i < d->n; i++) {
        for (int k = 0; k < d->e[i].nattr; k++) {
            free(d->e[i].attr_name[k]);
            free(d->e[i].attr_value[k]);
        }
        free(d->e[i].text);
    }
    free(d->e);
    d->e = NULL;
    d->n = d->cap = 0;
}

const char *x_attr(const struct x_elem *e, const char *name)
{
    for (int k = 0; k < e->nattr; k++)
        if (strcmp(e->attr_name[k], name) == 0)
            return e->attr_value[k];
    return NULL;
}

bool x_class(const struct x_elem *e, const char *word)
{
    const char *c = x_attr(e, "class");
    size_t n = strlen(word);
    for (const char *p = c ? strstr(c, word) : NULL; p; p = strstr(p + 1, word))
        if ((p == c || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
            return true;
    return false;
}

bool x_within(const struct x_doc *d, int i, const char *word)
{
    for (int p = d->e[i].parent; p >= 0; p = d->e[p].parent)
        if (x_class(&d->e[p], word))
            return true;
    return false;
}

int x_find(const struct x_doc *d, int from, const char *name, const char *word)
{
    for (int i = from < 0 ? 0 : from; i < d->n; i++)
        if ((!name || strcmp(d->e[i].name, name) == 0) && (!word || x_class(&d->e[i], word)))
            return i;
    return -1;
}

int x_count(const struct x_doc *d, const char *word)
{
    int n = 0;
    for (int i = 0; i < d->n; i++)
        n += x_class(&d->e[i], word);
    return n;
}

char *x_read_stream(FILE *f, size_t *len)
{
    struct str s = { 0 };
    char buf[65536];
    size_t k;
    put(&s, "", 0);
    rewind(f);
    while ((k = fread(buf, 1, sizeof buf, f)) > 0)
        put(&s, buf, k);
    if (ferror(f)) {
        free(s.p);
        errno = EIO;
        return NULL;
    }
    *len = s.n;
    return s.p;
}

char *x_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = x_read_stream(f, len);
    fclose(f);
    return text;
}
