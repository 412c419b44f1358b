/* USARSim text protocol codec: the tokenizer, locale-free number reading
 * and writing, typed parsers for both directions and the line writer the
 * formatters share. The grammar, its quirks, and what this file accepts
 * and emits are in docs/usarsim.md ("The text protocol codec"). */
#include "usarsim_codec.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

/* ---- Results, strings -------------------------------------------------- */

const char *kn_usar_strerror(enum kn_usar_result r)
{
    switch (r) {
    case KN_USAR_OK: return "ok";
    case KN_USAR_EEMPTY: return "empty line";
    case KN_USAR_ETOOLONG: return "line too long";
    case KN_USAR_ECTRL: return "control byte in line";
    case KN_USAR_EHEAD: return "missing or malformed head word";
    case KN_USAR_EBRACE: return "unbalanced braces";
    case KN_USAR_EGROUP: return "empty group or malformed key";
    case KN_USAR_ESTRAY: return "text outside a group";
    case KN_USAR_EKIND: return "not the expected message";
    case KN_USAR_EMISSING: return "required field missing";
    case KN_USAR_EVALUE: return "malformed value";
    case KN_USAR_ESEQUENCE: return "field before the item it belongs to";
    case KN_USAR_ENOSPACE: return "output buffer too small";
    case KN_USAR_ERANGE: return "number not finite or too large";
    case KN_USAR_EARG: return "argument cannot be sent";
    }
    return "unknown result";
}

static int lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

static bool is_blank(int c)
{
    return c == ' ' || c == '\t';
}

static bool is_alpha(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static bool is_head_char(int c)
{
    return is_alpha(c) || is_digit(c) || c == '_';
}

/* Control bytes end or corrupt a line on every USARSim parser; bytes from
 * 0x80 up are left alone so UTF-8 level or robot names pass. */
static bool is_ctrl(int c)
{
    return (c < 0x20 && c != '\t') || c == 0x7F;
}

bool kn_usar_str_is(struct kn_usar_str s, const char *lit)
{
    size_t n = strlen(lit);
    if (s.n != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)s.p[i]) != lower((unsigned char)lit[i]))
            return false;
    return true;
}

bool kn_usar_str_eq(struct kn_usar_str s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && (n == 0 || memcmp(s.p, lit, n) == 0);
}

static struct kn_usar_str view(const char *p, size_t n)
{
    struct kn_usar_str v = { p, n };
    return v;
}

/* ---- Tokenizer --------------------------------------------------------- */

/* Words of a group body are separated by blanks. */
static size_t next_word(const char *p, size_t n, size_t i, size_t *ws, size_t *we)
{
    while (i < n && is_blank((unsigned char)p[i]))
        i++;
    *ws = i;
    while (i < n && !is_blank((unsigned char)p[i]))
        i++;
    *we = i;
    return i;
}

static bool has_comma(const char *p, size_t n)
{
    return memchr(p, ',', n) != NULL;
}

/* A word that can be a key inside a multi-pair group. Requiring a letter
 * first and no comma keeps numbers and vectors out, so "{Location 1 2 3}"
 * stays one pair while "{Name F1 Range 4.5}" becomes two. */
static bool key_like(const char *p, size_t n)
{
    return n > 0 && is_alpha((unsigned char)p[0]) && !has_comma(p, n);
}

static void add_pair(struct kn_usar_line *l, bool keep, uint16_t gi, struct kn_usar_str k,
                     struct kn_usar_str v)
{
    if (!keep || l->n_pairs >= KN_USAR_MAX_PAIRS) {
        l->pairs_dropped++;
        return;
    }
    struct kn_usar_pair *pp = &l->pair[l->n_pairs++];
    pp->key = k;
    pp->value = v;
    pp->group = gi;
    l->group[gi].n_pairs++;
}

static enum kn_usar_result add_group(struct kn_usar_line *l, const char *p, size_t n)
{
    size_t ks, ke;
    size_t i = next_word(p, n, 0, &ks, &ke);
    if (ks == ke)
        return KN_USAR_EGROUP;
    if (has_comma(p + ks, ke - ks))
        return KN_USAR_EGROUP;
    while (i < n && is_blank((unsigned char)p[i]))
        i++;
    size_t ve = n;
    while (ve > i && is_blank((unsigned char)p[ve - 1]))
        ve--;

    bool keep = l->n_groups < KN_USAR_MAX_GROUPS;
    uint16_t gi = l->n_groups;
    if (keep) {
        struct kn_usar_group *g = &l->group[l->n_groups++];
        g->key = view(p + ks, ke - ks);
        g->value = view(p + i, ve - i);
        g->first_pair = l->n_pairs;
        g->n_pairs = 0;
    } else {
        l->groups_dropped++;
    }

    /* Decide the pair shape: count words, check every even one. */
    size_t words = 0;
    bool keys_ok = true;
    size_t pos = 0, ws, we;
    for (;;) {
        pos = next_word(p, n, pos, &ws, &we);
        if (ws == we)
            break;
        if (words % 2 == 0 && !key_like(p + ws, we - ws))
            keys_ok = false;
        words++;
    }
    if (words >= 4 && words % 2 == 0 && keys_ok) {
        pos = 0;
        for (;;) {
            size_t a0, a1, b0, b1;
            pos = next_word(p, n, pos, &a0, &a1);
            if (a0 == a1)
                break;
            pos = next_word(p, n, pos, &b0, &b1);
            add_pair(l, keep, gi, view(p + a0, a1 - a0), view(p + b0, b1 - b0));
        }
    } else {
        add_pair(l, keep, gi, view(p + ks, ke - ks), view(p + i, ve - i));
    }
    return KN_USAR_OK;
}

static enum kn_usar_result tokenize(const char *s, size_t len, struct kn_usar_line *l)
{
    while (len > 0 && (s[len - 1] == '\r' || s[len - 1] == '\n'))
        len--;
    if (len > KN_USAR_MAX_LINE)
        return KN_USAR_ETOOLONG;
    for (size_t i = 0; i < len; i++)
        if (is_ctrl((unsigned char)s[i]))
            return KN_USAR_ECTRL;
    size_t i = 0;
    while (i < len && is_blank((unsigned char)s[i]))
        i++;
    if (i == len)
        return KN_USAR_EEMPTY;
    size_t hs = i;
    while (i < len && is_head_char((unsigned char)s[i]))
        i++;
    if (i == hs)
        return KN_USAR_EHEAD;
    if (i < len && !is_blank((unsigned char)s[i]) && s[i] != '{')
        return KN_USAR_EHEAD;
    l->head = view(s + hs, i - hs);
    for (;;) {
        while (i < len && is_blank((unsigned char)s[i]))
            i++;
        if (i == len)
            return KN_USAR_OK;
        if (s[i] == '}')
            return KN_USAR_EBRACE;
        if (s[i] != '{')
            return KN_USAR_ESTRAY;
        size_t gs = ++i;
        while (i < len && s[i] != '}' && s[i] != '{')
            i++;
        if (i == len || s[i] == '{')
            return KN_USAR_EBRACE;
        enum kn_usar_result r = add_group(l, s + gs, i - gs);
        if (r != KN_USAR_OK)
            return r;
        i++;
    }
}

enum kn_usar_result kn_usar_tokenize(const char *line, size_t len, struct kn_usar_line *out)
{
    out->head = view(line, 0);
    out->n_groups = out->n_pairs = 0;
    out->groups_dropped = out->pairs_dropped = 0;
    if (line == NULL)
        return KN_USAR_EEMPTY;
    enum kn_usar_result r = tokenize(line, len, out);
    if (r != KN_USAR_OK) {
        out->head = view(line, 0);
        out->n_groups = out->n_pairs = 0;
        out->groups_dropped = out->pairs_dropped = 0;
    }
    return r;
}

int kn_usar_find(const struct kn_usar_line *l, const char *key, int from)
{
    if (from < 0)
        from = 0;
    for (int i = from; i < (int)l->n_pairs; i++)
        if (kn_usar_str_is(l->pair[i].key, key))
            return i;
    return -1;
}

int kn_usar_find_group(const struct kn_usar_line *l, const char *key, int from)
{
    if (from < 0)
        from = 0;
    for (int i = from; i < (int)l->n_groups; i++)
        if (kn_usar_str_is(l->group[i].key, key))
            return i;
    return -1;
}

/* ---- Numbers in ------------------------------------------------------- */

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

/* glibc hands out its static C locale object here, so nothing leaks. */
static void c_locale_init(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* Checks the decimal grammar before strtod_l sees the text, so strtod's
 * extras (hex, "inf", "nan", leading blanks) never get in. */
static bool number_syntax(const char *p, size_t n)
{
    size_t i = 0, digits = 0;
    if (i < n && (p[i] == '+' || p[i] == '-'))
        i++;
    while (i < n && is_digit((unsigned char)p[i]))
        i++, digits++;
    if (i < n && p[i] == '.') {
        i++;
        while (i < n && is_digit((unsigned char)p[i]))
            i++, digits++;
    }
    if (digits == 0)
        return false;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            i++;
        size_t ed = 0;
        while (i < n && is_digit((unsigned char)p[i]))
            i++, ed++;
        if (ed == 0)
            return false;
    }
    return i == n;
}

enum kn_usar_result kn_usar_parse_double(struct kn_usar_str s, double *out)
{
    char tmp[128];
    if (s.n == 0 || s.n >= sizeof tmp || !number_syntax(s.p, s.n))
        return KN_USAR_EVALUE;
    pthread_once(&c_locale_once, c_locale_init);
    if (c_locale == (locale_t)0)
        return KN_USAR_EVALUE;
    memcpy(tmp, s.p, s.n);
    tmp[s.n] = '\0';
    char *end = NULL;
    double v = strtod_l(tmp, &end, c_locale);
    if (end != tmp + s.n || !isfinite(v))
        return KN_USAR_EVALUE;
    *out = v;
    return KN_USAR_OK;
}

enum kn_usar_result kn_usar_parse_int(struct kn_usar_str s, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < s.n && (s.p[i] == '+' || s.p[i] == '-'))
        neg = s.p[i++] == '-';
    if (i == s.n)
        return KN_USAR_EVALUE;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; i < s.n; i++) {
        int c = (unsigned char)s.p[i];
        if (!is_digit(c))
            return KN_USAR_EVALUE;
        uint64_t d = (uint64_t)(c - '0');
        if (v > (limit - d) / 10)
            return KN_USAR_EVALUE;
        v = v * 10 + d;
    }
    if (neg)
        *out = v == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    return KN_USAR_OK;
}

enum kn_usar_result kn_usar_parse_bool(struct kn_usar_str s, bool *out)
{
    if (kn_usar_str_is(s, "true") || kn_usar_str_eq(s, "1")) {
        *out = true;
        return KN_USAR_OK;
    }
    if (kn_usar_str_is(s, "false") || kn_usar_str_eq(s, "0")) {
        *out = false;
        return KN_USAR_OK;
    }
    return KN_USAR_EVALUE;
}

enum kn_usar_result kn_usar_parse_list(struct kn_usar_str s, double *out, size_t cap, size_t *n,
                                       size_t *dropped)
{
    size_t got = 0, lost = 0, i = 0;
    if (s.n == 0)
        return KN_USAR_EVALUE;
    for (;;) {
        size_t st = i;
        while (i < s.n && s.p[i] != ',')
            i++;
        double v;
        if (kn_usar_parse_double(view(s.p + st, i - st), &v) != KN_USAR_OK)
            return KN_USAR_EVALUE;
        if (got < cap)
            out[got++] = v;
        else
            lost++;
        if (i == s.n)
            break;
        i++; /* the comma; a trailing one leaves an empty last field */
    }
    *n = got;
    if (dropped)
        *dropped = lost;
    return KN_USAR_OK;
}

enum kn_usar_result kn_usar_parse_vec3(struct kn_usar_str s, double out[3])
{
    double v[4];
    size_t n = 0, lost = 0;
    if (kn_usar_parse_list(s, v, 4, &n, &lost) != KN_USAR_OK || n != 3)
        return KN_USAR_EVALUE;
    out[0] = v[0];
    out[1] = v[1];
    out[2] = v[2];
    return KN_USAR_OK;
}

/* An encoder tick is an integer; "5.0000" is taken too, "2.5" is not. */
static enum kn_usar_result parse_tick(struct kn_usar_str s, int64_t *out)
{
    if (kn_usar_parse_int(s, out) == KN_USAR_OK)
        return KN_USAR_OK;
    double d;
    if (kn_usar_parse_double(s, &d) != KN_USAR_OK || d != floor(d) || fabs(d) >= 9.2e18)
        return KN_USAR_EVALUE;
    *out = (int64_t)d;
    return KN_USAR_OK;
}

enum kn_usar_result kn_usar_get_str(const struct kn_usar_line *l, const char *key,
                                    struct kn_usar_str *out)
{
    int i = kn_usar_find(l, key, 0);
    if (i < 0)
        return KN_USAR_EMISSING;
    *out = l->pair[i].value;
    return KN_USAR_OK;
}

enum kn_usar_result kn_usar_get_double(const struct kn_usar_line *l, const char *key, double *out)
{
    int i = kn_usar_find(l, key, 0);
    return i < 0 ? KN_USAR_EMISSING : kn_usar_parse_double(l->pair[i].value, out);
}

enum kn_usar_result kn_usar_get_int(const struct kn_usar_line *l, const char *key, int64_t *out)
{
    int i = kn_usar_find(l, key, 0);
    return i < 0 ? KN_USAR_EMISSING : kn_usar_parse_int(l->pair[i].value, out);
}

enum kn_usar_result kn_usar_get_bool(const struct kn_usar_line *l, const char *key, bool *out)
{
    int i = kn_usar_find(l, key, 0);
    return i < 0 ? KN_USAR_EMISSING : kn_usar_parse_bool(l->pair[i].value, out);
}

enum kn_usar_result kn_usar_get_vec3(const struct kn_usar_line *l, const char *key, double out[3])
{
    int i = kn_usar_find(l, key, 0);
    return i < 0 ? KN_USAR_EMISSING : kn_usar_parse_vec3(l->pair[i].value, out);
}

/* ---- Numbers out ------------------------------------------------------- */

static const uint64_t pow10u[KN_USAR_MAX_DECIMALS + 1] = {
    1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u, 1000000000u,
};

/* Rounding: integer and fraction are split first (both exact in binary),
 * so the fraction is scaled on its own and large values keep their digits;
 * fma gives the exact product error, which settles every case the rounded
 * product alone would get wrong, ties included. The result is that of a
 * correctly rounding printf("%.*f").
 * Truncation is UnitsConverter.FloatString step by step, in single
 * precision as UnrealScript floats are: int part, fraction, fraction times
 * 10^decimals, truncated; a '-' only when the float is below zero. Only
 * the float arithmetic gives the captured "MaxSpeed 1.2999" for 1.3 while
 * keeping 0.248 at "0.2480". */
int kn_usar_fmt_fixed(char *buf, size_t cap, double v, int decimals, enum kn_usar_round mode)
{
    if (decimals < 0 || decimals > KN_USAR_MAX_DECIMALS)
        return -(int)KN_USAR_EARG;
    if (!isfinite(v) || fabs(v) >= KN_USAR_NUM_MAX)
        return -(int)KN_USAR_ERANGE;
    uint64_t scale = pow10u[decimals];
    bool neg;
    uint64_t ipart, f;
    if (mode == KN_USAR_TRUNC) {
        float fv = (float)v;
        neg = fv < 0.0f;
        float a = neg ? -fv : fv;
        ipart = (uint64_t)a;
        float frac = a - (float)ipart;
        float p = frac * (float)scale;
        f = (uint64_t)p;
    } else {
        neg = signbit(v) != 0;
        double a = fabs(v);
        double ip = floor(a);
        double fr = a - ip;
        double p = fr * (double)scale;
        double r = floor(p);
        ipart = (uint64_t)ip;
        f = (uint64_t)r;
        double d = p - r;
        double e = fma(fr, (double)scale, -p);
        bool up;
        if (d > 0.5)
            up = true;
        else if (d < 0.5)
            up = false;
        else if (e != 0.0)
            up = e > 0.0;
        else
            up = ((decimals > 0 ? f : ipart) & 1u) != 0;
        if (up)
            f++;
    }
    if (f >= scale) {
        f -= scale;
        ipart++;
    }

    char tmp[48];
    size_t n = 0;
    char digits[24];
    size_t nd = 0;
    do {
        digits[nd++] = (char)('0' + ipart % 10);
        ipart /= 10;
    } while (ipart);
    if (neg)
        tmp[n++] = '-';
    while (nd)
        tmp[n++] = digits[--nd];
    if (decimals > 0) {
        tmp[n++] = '.';
        for (int k = decimals - 1; k >= 0; k--) {
            tmp[n + (size_t)k] = (char)('0' + f % 10);
            f /= 10;
        }
        n += (size_t)decimals;
    }
    if (buf == NULL || cap < n + 1)
        return -(int)KN_USAR_ENOSPACE;
    memcpy(buf, tmp, n);
    buf[n] = '\0';
    return (int)n;
}

/* ---- Kinds, flippers --------------------------------------------------- */

static const char *const kind_names[] = {
    [KN_USAR_K_UNKNOWN] = "",
    [KN_USAR_K_NFO] = "NFO",
    [KN_USAR_K_STA] = "STA",
    [KN_USAR_K_SEN] = "SEN",
    [KN_USAR_K_ASTA] = "ASTA",
    [KN_USAR_K_MISSTA] = "MISSTA",
    [KN_USAR_K_CONF] = "CONF",
    [KN_USAR_K_GEO] = "GEO",
    [KN_USAR_K_RES] = "RES",
    [KN_USAR_K_EFF] = "EFF",
    [KN_USAR_K_DIE] = "DIE",
    [KN_USAR_K_INIT] = "INIT",
    [KN_USAR_K_DRIVE] = "DRIVE",
    [KN_USAR_K_SET] = "SET",
    [KN_USAR_K_MULTIDRIVE] = "MULTIDRIVE",
    [KN_USAR_K_MISPKG] = "MISPKG",
    [KN_USAR_K_ACT] = "ACT",
    [KN_USAR_K_GETCONF] = "GETCONF",
    [KN_USAR_K_GETGEO] = "GETGEO",
    [KN_USAR_K_GETSTARTPOSES] = "GETSTARTPOSES",
};

enum kn_usar_kind kn_usar_kind(const struct kn_usar_line *l)
{
    for (size_t k = 1; k < sizeof kind_names / sizeof kind_names[0]; k++)
        if (kn_usar_str_is(l->head, kind_names[k]))
            return (enum kn_usar_kind)k;
    return KN_USAR_K_UNKNOWN;
}

const char *kn_usar_kind_name(enum kn_usar_kind k)
{
    if ((size_t)k >= sizeof kind_names / sizeof kind_names[0])
        return "";
    return kind_names[k];
}

static const char *const flipper_names[KN_NFLIPPERS] = {
    [KN_FL] = "FLFlipper",
    [KN_FR] = "FRFlipper",
    [KN_RL] = "RLFlipper",
    [KN_RR] = "RRFlipper",
};

/* Clients send front-right first (MOAST, UvA, USARcommandSample). */
static const int flipper_wire_order[KN_NFLIPPERS] = { KN_FR, KN_FL, KN_RR, KN_RL };

const char *kn_usar_flipper_name(int k)
{
    return (k >= 0 && k < KN_NFLIPPERS) ? flipper_names[k] : NULL;
}

int kn_usar_flipper_index(struct kn_usar_str name)
{
    for (int k = 0; k < KN_NFLIPPERS; k++)
        if (kn_usar_str_is(name, flipper_names[k]))
            return k;
    return -1;
}

/* ---- Server -> client parsers ------------------------------------------ */

#define TRY(expr)                            \
    do {                                     \
        enum kn_usar_result try_r_ = (expr); \
        if (try_r_ != KN_USAR_OK)            \
            return try_r_;                   \
    } while (0)

/* A repeated field keeps its first value (later copies are ignored, not
 * errors); a malformed first value is an error. `type` is a type name,
 * which parentheses would break. */
/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define FIRST_OF(name, type, parse)                                             \
    static enum kn_usar_result name(struct kn_usar_str v, bool *has, type *out) \
    {                                                                           \
        if (*has)                                                               \
            return KN_USAR_OK;                                                  \
        TRY(parse(v, out));                                                     \
        *has = true;                                                            \
        return KN_USAR_OK;                                                      \
    }
/* NOLINTEND(bugprone-macro-parentheses) */
FIRST_OF(first_double, double, kn_usar_parse_double)
FIRST_OF(first_int, int64_t, kn_usar_parse_int)
FIRST_OF(first_bool, bool, kn_usar_parse_bool)

enum kn_usar_result kn_usar_parse_sta(const struct kn_usar_line *l, struct kn_usar_sta *out)
{
    memset(out, 0, sizeof *out);
    if (kn_usar_kind(l) != KN_USAR_K_STA)
        return KN_USAR_EKIND;
    bool type_seen = false;
    for (int i = 0; i < (int)l->n_pairs; i++) {
        struct kn_usar_str k = l->pair[i].key, v = l->pair[i].value;
        if (kn_usar_str_is(k, "Time")) {
            TRY(first_double(v, &out->has_time, &out->time));
        } else if (kn_usar_str_is(k, "Battery")) {
            TRY(first_double(v, &out->has_battery, &out->battery));
        } else if (kn_usar_str_is(k, "Type")) {
            if (!type_seen)
                out->type = v;
            type_seen = true;
        } else if (kn_usar_str_is(k, "LightToggle")) {
            TRY(first_bool(v, &out->has_light_toggle, &out->light_toggle));
        } else if (kn_usar_str_is(k, "LightIntensity")) {
            TRY(first_double(v, &out->has_light_intensity, &out->light_intensity));
        } else {
            int f = kn_usar_flipper_index(k);
            if (f >= 0 && !(out->flipper_mask & (1u << f))) {
                TRY(kn_usar_parse_double(v, &out->flipper[f]));
                out->flipper_mask |= (uint8_t)(1u << f);
            }
        }
    }
    return KN_USAR_OK;
}

static enum kn_usar_sen_type sen_type_of(struct kn_usar_str t)
{
    if (kn_usar_str_is(t, "GroundTruth"))
        return KN_USAR_SEN_GROUNDTRUTH;
    if (kn_usar_str_is(t, "INS"))
        return KN_USAR_SEN_INS;
    if (kn_usar_str_is(t, "Encoder"))
        return KN_USAR_SEN_ENCODER;
    if (kn_usar_str_is(t, "Odometry"))
        return KN_USAR_SEN_ODOMETRY;
    if (kn_usar_str_is(t, "Touch"))
        return KN_USAR_SEN_TOUCH;
    return KN_USAR_SEN_OTHER;
}

/* Encoder and Touch lines: each {Name} opens an item that needs exactly
 * one value key before the next {Name}. Items past the cap are still
 * checked, then counted as dropped. */
static enum kn_usar_result sen_items(const struct kn_usar_line *l, struct kn_usar_sen *out,
                                     bool touch)
{
    const char *vkey = touch ? "Touch" : "Tick";
    bool open = false, filled = false, stored = false;
    for (int i = 0; i < (int)l->n_pairs; i++) {
        struct kn_usar_str k = l->pair[i].key, v = l->pair[i].value;
        if (kn_usar_str_is(k, "Name")) {
            if (open && !filled)
                return KN_USAR_EMISSING;
            open = true;
            filled = false;
            uint16_t *n = touch ? &out->n_touches : &out->n_ticks;
            stored = *n < KN_USAR_MAX_ITEMS;
            if (stored) {
                if (touch)
                    out->touches[*n].name = v;
                else
                    out->ticks[*n].name = v;
                (*n)++;
            } else if (touch) {
                out->touches_dropped++;
            } else {
                out->ticks_dropped++;
            }
        } else if (kn_usar_str_is(k, vkey)) {
            if (!open)
                return KN_USAR_ESEQUENCE;
            if (filled)
                continue; /* first one wins */
            if (touch) {
                bool b;
                TRY(kn_usar_parse_bool(v, &b));
                if (stored)
                    out->touches[out->n_touches - 1].touch = b;
            } else {
                int64_t t;
                TRY(parse_tick(v, &t));
                if (stored)
                    out->ticks[out->n_ticks - 1].tick = t;
            }
            filled = true;
        }
    }
    if (open && !filled)
        return KN_USAR_EMISSING;
    return KN_USAR_OK;
}

enum kn_usar_result kn_usar_parse_sen(const struct kn_usar_line *l, struct kn_usar_sen *out)
{
    memset(out, 0, sizeof *out);
    if (kn_usar_kind(l) != KN_USAR_K_SEN)
        return KN_USAR_EKIND;
    int ti = kn_usar_find(l, "Time", 0);
    if (ti >= 0) {
        TRY(kn_usar_parse_double(l->pair[ti].value, &out->time));
        out->has_time = true;
    }
    int yi = kn_usar_find(l, "Type", 0);
    if (yi < 0)
        return KN_USAR_EMISSING;
    out->type = l->pair[yi].value;
    out->sen_type = sen_type_of(out->type);
    int ni = kn_usar_find(l, "Name", 0);
    if (ni >= 0)
        out->name = l->pair[ni].value;
    switch (out->sen_type) {
    case KN_USAR_SEN_GROUNDTRUTH:
    case KN_USAR_SEN_INS:
        TRY(kn_usar_get_vec3(l, "Location", out->location));
        TRY(kn_usar_get_vec3(l, "Orientation", out->orientation));
        return KN_USAR_OK;
    case KN_USAR_SEN_ODOMETRY: return kn_usar_get_vec3(l, "Pose", out->pose);
    case KN_USAR_SEN_ENCODER: return sen_items(l, out, false);
    case KN_USAR_SEN_TOUCH: return sen_items(l, out, true);
    case KN_USAR_SEN_OTHER: break;
    }
    return KN_USAR_OK;
}

enum kn_usar_result kn_usar_parse_links(const struct kn_usar_line *l, struct kn_usar_links *out)
{
    memset(out, 0, sizeof *out);
    enum kn_usar_kind kind = kn_usar_kind(l);
    if (kind != KN_USAR_K_ASTA && kind != KN_USAR_K_MISSTA && kind != KN_USAR_K_MISPKG &&
        kind != KN_USAR_K_ACT)
        return KN_USAR_EKIND;
    struct kn_usar_str cur_name = { NULL, 0 };
    bool name_seen = false;
    struct kn_usar_link scratch;
    struct kn_usar_link *cur = NULL;
    for (int i = 0; i < (int)l->n_pairs; i++) {
        struct kn_usar_str k = l->pair[i].key, v = l->pair[i].value;
        if (kn_usar_str_is(k, "Time")) {
            TRY(first_double(v, &out->has_time, &out->time));
        } else if (kn_usar_str_is(k, "Name")) {
            cur_name = v;
            if (!name_seen)
                out->name = v;
            name_seen = true;
        } else if (kn_usar_str_is(k, "Link")) {
            if (out->n < KN_USAR_MAX_ITEMS) {
                cur = &out->link[out->n++];
            } else {
                out->dropped++;
                cur = &scratch;
            }
            memset(cur, 0, sizeof *cur);
            cur->name = cur_name;
            TRY(kn_usar_parse_int(v, &cur->link));
        } else if (kn_usar_str_is(k, "Value")) {
            if (!cur)
                return KN_USAR_ESEQUENCE;
            TRY(first_double(v, &cur->has_value, &cur->value));
        } else if (kn_usar_str_is(k, "Torque")) {
            if (!cur)
                return KN_USAR_ESEQUENCE;
            TRY(first_double(v, &cur->has_torque, &cur->torque));
        } else if (kn_usar_str_is(k, "Order")) {
            if (!cur)
                return KN_USAR_ESEQUENCE;
            TRY(first_int(v, &cur->has_order, &cur->order));
        }
    }
    return KN_USAR_OK;
}

/* Words of one group body, key included: the UDK start-pose list. */
static enum kn_usar_result pose_triples(const struct kn_usar_group *g, struct kn_usar_nfo *out)
{
    const char *p = g->key.p;
    size_t n = g->value.n ? (size_t)(g->value.p + g->value.n - p) : g->key.n;
    size_t pos = 0;
    for (;;) {
        size_t a0, a1, b0, b1, c0, c1;
        pos = next_word(p, n, pos, &a0, &a1);
        if (a0 == a1)
            return KN_USAR_OK;
        pos = next_word(p, n, pos, &b0, &b1);
        pos = next_word(p, n, pos, &c0, &c1);
        if (b0 == b1 || c0 == c1)
            return KN_USAR_EVALUE;
        struct kn_usar_pose tmp, *ps = &tmp;
        if (out->n_poses < KN_USAR_MAX_ITEMS)
            ps = &out->pose[out->n_poses];
        ps->name = view(p + a0, a1 - a0);
        TRY(kn_usar_parse_vec3(view(p + b0, b1 - b0), ps->location));
        TRY(kn_usar_parse_vec3(view(p + c0, c1 - c0), ps->orientation));
        if (ps == &tmp)
            out->poses_dropped++;
        else
            out->n_poses++;
    }
}

enum kn_usar_result kn_usar_parse_nfo(const struct kn_usar_line *l, struct kn_usar_nfo *out)
{
    memset(out, 0, sizeof *out);
    if (kn_usar_kind(l) != KN_USAR_K_NFO)
        return KN_USAR_EKIND;
    bool gt_seen = false, lv_seen = false;
    /* a UT2004-shaped pose being filled: {Name n Location .. Orientation ..} */
    bool open = false, have_loc = false, have_ori = false;
    struct kn_usar_pose scratch, *cur = NULL;
    for (int gi = 0; gi < (int)l->n_groups; gi++) {
        const struct kn_usar_group *g = &l->group[gi];
        if (kn_usar_str_is(g->key, "Gametype")) {
            if (!gt_seen)
                out->gametype = g->value;
            gt_seen = true;
        } else if (kn_usar_str_is(g->key, "Level")) {
            if (!lv_seen)
                out->level = g->value;
            lv_seen = true;
        } else if (kn_usar_str_is(g->key, "TimeLimit")) {
            TRY(first_double(g->value, &out->has_time_limit, &out->time_limit));
        } else if (kn_usar_str_is(g->key, "StartPoses")) {
            TRY(first_int(g->value, &out->has_start_poses, &out->start_poses));
        } else if (!out->has_start_poses) {
            continue; /* unknown banner field: stays in the line */
        } else if (kn_usar_str_is(g->key, "Name") || kn_usar_str_is(g->key, "Location") ||
                   kn_usar_str_is(g->key, "Orientation")) {
            for (int i = g->first_pair; i < g->first_pair + g->n_pairs; i++) {
                struct kn_usar_str k = l->pair[i].key, v = l->pair[i].value;
                if (kn_usar_str_is(k, "Name")) {
                    if (open && !(have_loc && have_ori))
                        return KN_USAR_EMISSING;
                    open = true;
                    have_loc = have_ori = false;
                    if (out->n_poses < KN_USAR_MAX_ITEMS) {
                        cur = &out->pose[out->n_poses++];
                    } else {
                        out->poses_dropped++;
                        cur = &scratch;
                    }
                    memset(cur, 0, sizeof *cur);
                    cur->name = v;
                } else if (kn_usar_str_is(k, "Location") || kn_usar_str_is(k, "Orientation")) {
                    if (!open)
                        return KN_USAR_ESEQUENCE;
                    bool loc = kn_usar_str_is(k, "Location");
                    TRY(kn_usar_parse_vec3(v, loc ? cur->location : cur->orientation));
                    if (loc)
                        have_loc = true;
                    else
                        have_ori = true;
                }
            }
        } else {
            if (open && !(have_loc && have_ori))
                return KN_USAR_EMISSING;
            open = false;
            TRY(pose_triples(g, out));
        }
    }
    if (open && !(have_loc && have_ori))
        return KN_USAR_EMISSING;
    return KN_USAR_OK;
}

static enum kn_usar_result opt_double(const struct kn_usar_line *l, const char *key, bool *has,
                                      double *out)
{
    enum kn_usar_result r = kn_usar_get_double(l, key, out);
    *has = r == KN_USAR_OK;
    return r == KN_USAR_EMISSING ? KN_USAR_OK : r;
}

static enum kn_usar_result opt_vec3(const struct kn_usar_line *l, const char *key, bool *has,
                                    double out[3])
{
    enum kn_usar_result r = kn_usar_get_vec3(l, key, out);
    *has = r == KN_USAR_OK;
    return r == KN_USAR_EMISSING ? KN_USAR_OK : r;
}

enum kn_usar_result kn_usar_parse_robot(const struct kn_usar_line *l, struct kn_usar_robot *out)
{
    memset(out, 0, sizeof *out);
    enum kn_usar_kind kind = kn_usar_kind(l);
    if (kind != KN_USAR_K_CONF && kind != KN_USAR_K_GEO)
        return KN_USAR_EKIND;
    (void)kn_usar_get_str(l, "Name", &out->name);
    (void)kn_usar_get_str(l, "Type", &out->type);
    (void)kn_usar_get_str(l, "SteeringType", &out->steering_type);
    TRY(opt_double(l, "Mass", &out->has_mass, &out->mass));
    TRY(opt_double(l, "MaxSpeed", &out->has_max_speed, &out->max_speed));
    TRY(opt_double(l, "MaxTorque", &out->has_max_torque, &out->max_torque));
    TRY(opt_vec3(l, "Dimensions", &out->has_dimensions, out->dimensions));
    TRY(opt_vec3(l, "COG", &out->has_cog, out->cog));
    TRY(opt_double(l, "WheelRadius", &out->has_wheel_radius, &out->wheel_radius));
    TRY(opt_double(l, "WheelSeparation", &out->has_wheel_separation, &out->wheel_separation));
    TRY(opt_double(l, "WheelBase", &out->has_wheel_base, &out->wheel_base));
    return KN_USAR_OK;
}

/* ---- Client -> server parsers ------------------------------------------ */

static const struct kn_usar_group *group_of(const struct kn_usar_line *l, const char *key)
{
    int i = kn_usar_find_group(l, key, 0);
    return i < 0 ? NULL : &l->group[i];
}

static struct kn_usar_str group_value(const struct kn_usar_line *l, const char *key)
{
    const struct kn_usar_group *g = group_of(l, key);
    return g ? g->value : view(NULL, 0);
}

enum kn_usar_result kn_usar_parse_init(const struct kn_usar_line *l, struct kn_usar_init *out)
{
    memset(out, 0, sizeof *out);
    if (kn_usar_kind(l) != KN_USAR_K_INIT)
        return KN_USAR_EKIND;
    out->class_name = group_value(l, "ClassName");
    out->name = group_value(l, "Name");
    out->start = group_value(l, "Start");
    const struct kn_usar_group *g = group_of(l, "Location");
    if (g) {
        TRY(kn_usar_parse_vec3(g->value, out->location));
        out->has_location = true;
    }
    g = group_of(l, "Rotation");
    if (g) {
        TRY(kn_usar_parse_vec3(g->value, out->rotation));
        out->has_rotation = true;
    }
    if (out->class_name.n == 0)
        return KN_USAR_EMISSING;
    return KN_USAR_OK;
}

enum kn_usar_result kn_usar_parse_drive(const struct kn_usar_line *l, struct kn_usar_drive *out)
{
    memset(out, 0, sizeof *out);
    if (kn_usar_kind(l) != KN_USAR_K_DRIVE)
        return KN_USAR_EKIND;
    struct kn_usar_joint_cmd scratch, *cur = NULL;
    for (int gi = 0; gi < (int)l->n_groups; gi++) {
        const struct kn_usar_group *g = &l->group[gi];
        struct kn_usar_str k = g->key;
        if (kn_usar_str_is(k, "Left")) {
            TRY(first_double(g->value, &out->has_left, &out->left));
        } else if (kn_usar_str_is(k, "Right")) {
            TRY(first_double(g->value, &out->has_right, &out->right));
        } else if (kn_usar_str_is(k, "Normalized")) {
            TRY(first_bool(g->value, &out->has_normalized, &out->normalized));
        } else if (kn_usar_str_is(k, "Light")) {
            TRY(first_bool(g->value, &out->has_light, &out->light));
        } else if (kn_usar_str_is(k, "Flip")) {
            TRY(first_bool(g->value, &out->has_flip, &out->flip));
        } else if (kn_usar_str_is(k, "Name")) {
            if (out->n_joints < KN_USAR_MAX_ITEMS) {
                cur = &out->joint[out->n_joints++];
            } else {
                out->joints_dropped++;
                cur = &scratch;
            }
            memset(cur, 0, sizeof *cur);
            cur->name = g->value;
        } else if (kn_usar_str_is(k, "Value")) {
            if (!cur)
                return KN_USAR_ESEQUENCE;
            TRY(first_double(g->value, &cur->has_value, &cur->value));
        } else if (kn_usar_str_is(k, "Steer")) {
            if (!cur)
                return KN_USAR_ESEQUENCE;
            TRY(first_double(g->value, &cur->has_steer, &cur->steer));
        } else if (kn_usar_str_is(k, "Order")) {
            if (!cur)
                return KN_USAR_ESEQUENCE;
            TRY(first_int(g->value, &cur->has_order, &cur->order));
        }
    }
    return KN_USAR_OK;
}

enum kn_usar_result kn_usar_parse_set(const struct kn_usar_line *l, struct kn_usar_set *out)
{
    memset(out, 0, sizeof *out);
    if (kn_usar_kind(l) != KN_USAR_K_SET)
        return KN_USAR_EKIND;
    out->type = group_value(l, "Type");
    out->name = group_value(l, "Name");
    out->opcode = group_value(l, "Opcode");
    out->params = group_value(l, "Params");
    if (out->type.n == 0 || out->name.n == 0 || out->opcode.n == 0)
        return KN_USAR_EMISSING;
    out->has_number = kn_usar_parse_double(out->params, &out->number) == KN_USAR_OK;
    if (!out->has_number)
        out->number = 0.0;
    return KN_USAR_OK;
}

enum kn_usar_result kn_usar_parse_multidrive(const struct kn_usar_line *l,
                                             struct kn_usar_multidrive *out)
{
    memset(out, 0, sizeof *out);
    if (kn_usar_kind(l) != KN_USAR_K_MULTIDRIVE)
        return KN_USAR_EKIND;
    if (l->n_groups == 0)
        return KN_USAR_EMISSING;
    for (int gi = 0; gi < (int)l->n_groups; gi++) {
        double v;
        TRY(kn_usar_parse_double(l->group[gi].value, &v));
        if (out->n < KN_USAR_MAX_ITEMS) {
            out->joint[out->n].name = l->group[gi].key;
            out->joint[out->n].value = v;
            out->n++;
        } else {
            out->dropped++;
        }
    }
    return KN_USAR_OK;
}

enum kn_usar_result kn_usar_parse_get(const struct kn_usar_line *l, struct kn_usar_get *out)
{
    memset(out, 0, sizeof *out);
    enum kn_usar_kind kind = kn_usar_kind(l);
    if (kind != KN_USAR_K_GETCONF && kind != KN_USAR_K_GETGEO)
        return KN_USAR_EKIND;
    out->type = group_value(l, "Type");
    out->name = group_value(l, "Name");
    return out->type.n ? KN_USAR_OK : KN_USAR_EMISSING;
}

/* ---- Line writer ------------------------------------------------------- */

/* A single word: no blanks, braces or control bytes. */
static bool valid_word(struct kn_usar_str s)
{
    if (s.n == 0)
        return false;
    for (size_t i = 0; i < s.n; i++) {
        int c = (unsigned char)s.p[i];
        if (c <= ' ' || c == 0x7F || c == '{' || c == '}')
            return false;
    }
    return true;
}

static bool valid_key(struct kn_usar_str s)
{
    return valid_word(s) && !has_comma(s.p, s.n);
}

/* Inner single or multiple spaces are fine; the tokenizer trims only the
 * ends, so the text comes back as written. */
static bool valid_text(struct kn_usar_str s)
{
    if (s.n == 0 || s.p[0] == ' ' || s.p[s.n - 1] == ' ')
        return false;
    for (size_t i = 0; i < s.n; i++) {
        int c = (unsigned char)s.p[i];
        if (c < ' ' || c == 0x7F || c == '{' || c == '}')
            return false;
    }
    return true;
}

static void w_fail(struct kn_usar_writer *w, enum kn_usar_result r)
{
    if (w->err == KN_USAR_OK)
        w->err = r;
}

static void w_raw(struct kn_usar_writer *w, const char *p, size_t n)
{
    if (w->err != KN_USAR_OK)
        return;
    if (w->buf == NULL || w->cap - w->len < n + 1) {
        w_fail(w, KN_USAR_ENOSPACE);
        return;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void w_init_view(struct kn_usar_writer *w, char *buf, size_t cap, struct kn_usar_str h)
{
    w->buf = buf;
    w->cap = cap;
    w->len = 0;
    w->err = KN_USAR_OK;
    w->open = false;
    if (buf && cap)
        buf[0] = '\0';
    bool ok = h.n > 0;
    for (size_t i = 0; i < h.n; i++)
        if (!is_head_char((unsigned char)h.p[i]))
            ok = false;
    if (!ok) {
        w_fail(w, KN_USAR_EARG);
        return;
    }
    w_raw(w, h.p, h.n);
}

void kn_usar_w_init(struct kn_usar_writer *w, char *buf, size_t cap, const char *head)
{
    w_init_view(w, buf, cap, kn_usar_s(head));
}

void kn_usar_w_key(struct kn_usar_writer *w, const char *key)
{
    struct kn_usar_str k = kn_usar_s(key);
    if (!valid_key(k)) {
        w_fail(w, KN_USAR_EARG);
        return;
    }
    if (w->open)
        w_raw(w, "}", 1);
    w_raw(w, " {", 2);
    w_raw(w, k.p, k.n);
    w->open = true;
}

void kn_usar_w_more(struct kn_usar_writer *w, const char *key)
{
    struct kn_usar_str k = kn_usar_s(key);
    if (!w->open || !valid_key(k)) {
        w_fail(w, KN_USAR_EARG);
        return;
    }
    w_raw(w, " ", 1);
    w_raw(w, k.p, k.n);
}

static bool w_value_start(struct kn_usar_writer *w)
{
    if (!w->open) {
        w_fail(w, KN_USAR_EARG);
        return false;
    }
    w_raw(w, " ", 1);
    return w->err == KN_USAR_OK;
}

void kn_usar_w_text(struct kn_usar_writer *w, struct kn_usar_str text)
{
    if (!valid_text(text)) {
        w_fail(w, KN_USAR_EARG);
        return;
    }
    if (w_value_start(w))
        w_raw(w, text.p, text.n);
}

static void w_fixed(struct kn_usar_writer *w, double v, int decimals, enum kn_usar_round mode)
{
    if (w->err != KN_USAR_OK)
        return;
    int n = kn_usar_fmt_fixed(w->buf + w->len, w->cap - w->len, v, decimals, mode);
    if (n < 0)
        w_fail(w, (enum kn_usar_result) - n);
    else
        w->len += (size_t)n;
}

void kn_usar_w_num(struct kn_usar_writer *w, double v, int decimals, enum kn_usar_round mode)
{
    if (w_value_start(w))
        w_fixed(w, v, decimals, mode);
}

void kn_usar_w_int(struct kn_usar_writer *w, int64_t v)
{
    char tmp[24];
    size_t n = 0;
    uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[sizeof tmp - 1 - n++] = (char)('0' + m % 10);
        m /= 10;
    } while (m);
    if (v < 0)
        tmp[sizeof tmp - 1 - n++] = '-';
    if (w_value_start(w))
        w_raw(w, tmp + sizeof tmp - n, n);
}

void kn_usar_w_vec3(struct kn_usar_writer *w, const double v[3], int decimals,
                    enum kn_usar_round mode)
{
    if (!w_value_start(w))
        return;
    for (int i = 0; i < 3; i++) {
        if (i)
            w_raw(w, ",", 1);
        w_fixed(w, v[i], decimals, mode);
    }
}

void kn_usar_w_bool(struct kn_usar_writer *w, bool v, enum kn_usar_bool_style style)
{
    const char *t = style == KN_USAR_BOOL_CAPS ? (v ? "True" : "False") : (v ? "true" : "false");
    if (w_value_start(w))
        w_raw(w, t, strlen(t));
}

void kn_usar_w_kv(struct kn_usar_writer *w, const char *key, const char *text)
{
    kn_usar_w_key(w, key);
    kn_usar_w_text(w, kn_usar_s(text));
}

void kn_usar_w_knum(struct kn_usar_writer *w, const char *key, double v, int decimals)
{
    kn_usar_w_key(w, key);
    kn_usar_w_num(w, v, decimals, KN_USAR_ROUND);
}

int kn_usar_w_end(struct kn_usar_writer *w)
{
    if (w->open)
        w_raw(w, "}", 1);
    w->open = false;
    w_raw(w, "\r\n", 2);
    if (w->err != KN_USAR_OK) {
        if (w->buf && w->cap)
            w->buf[0] = '\0';
        return -(int)w->err;
    }
    return (int)w->len;
}

int kn_usar_fmt_line(char *buf, size_t cap, const struct kn_usar_line *l)
{
    struct kn_usar_writer w;
    w_init_view(&w, buf, cap, l->head);
    for (int i = 0; i < (int)l->n_groups; i++) {
        const struct kn_usar_group *g = &l->group[i];
        if (!valid_key(g->key)) {
            w_fail(&w, KN_USAR_EARG);
            break;
        }
        /* the key is a view, not a C string: write it the way w_key does */
        if (w.open)
            w_raw(&w, "}", 1);
        w_raw(&w, " {", 2);
        w_raw(&w, g->key.p, g->key.n);
        w.open = true;
        if (g->value.n)
            kn_usar_w_text(&w, g->value);
    }
    return kn_usar_w_end(&w);
}

/* ---- Formatters -------------------------------------------------------- */

#define CMD_DECIMALS 4

static void w_word(struct kn_usar_writer *w, const char *key, struct kn_usar_str value)
{
    kn_usar_w_key(w, key);
    if (!valid_word(value))
        w_fail(w, KN_USAR_EARG);
    else
        kn_usar_w_text(w, value);
}

int kn_usar_fmt_init(char *buf, size_t cap, const char *class_name, const char *name,
                     const double location[3], const double rotation[3])
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "INIT");
    w_word(&w, "ClassName", kn_usar_s(class_name));
    w_word(&w, "Name", kn_usar_s(name));
    if (location) {
        kn_usar_w_key(&w, "Location");
        kn_usar_w_vec3(&w, location, CMD_DECIMALS, KN_USAR_ROUND);
    }
    if (rotation) {
        kn_usar_w_key(&w, "Rotation");
        kn_usar_w_vec3(&w, rotation, CMD_DECIMALS, KN_USAR_ROUND);
    }
    return kn_usar_w_end(&w);
}

int kn_usar_fmt_init_start(char *buf, size_t cap, const char *class_name, const char *name,
                           const char *start)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "INIT");
    w_word(&w, "ClassName", kn_usar_s(class_name));
    w_word(&w, "Name", kn_usar_s(name));
    w_word(&w, "Start", kn_usar_s(start));
    return kn_usar_w_end(&w);
}

int kn_usar_fmt_drive(char *buf, size_t cap, double left, double right)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "DRIVE");
    kn_usar_w_knum(&w, "Left", left, CMD_DECIMALS);
    kn_usar_w_knum(&w, "Right", right, CMD_DECIMALS);
    return kn_usar_w_end(&w);
}

int kn_usar_fmt_drive_full(char *buf, size_t cap, const struct kn_usar_drive *d)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "DRIVE");
    if (d->has_left)
        kn_usar_w_knum(&w, "Left", d->left, CMD_DECIMALS);
    if (d->has_right)
        kn_usar_w_knum(&w, "Right", d->right, CMD_DECIMALS);
    if (d->has_normalized) {
        kn_usar_w_key(&w, "Normalized");
        kn_usar_w_bool(&w, d->normalized, KN_USAR_BOOL_LOWER);
    }
    if (d->has_light) {
        kn_usar_w_key(&w, "Light");
        kn_usar_w_bool(&w, d->light, KN_USAR_BOOL_LOWER);
    }
    if (d->has_flip) {
        kn_usar_w_key(&w, "Flip");
        kn_usar_w_bool(&w, d->flip, KN_USAR_BOOL_LOWER);
    }
    if (d->n_joints > KN_USAR_MAX_ITEMS)
        w_fail(&w, KN_USAR_EARG);
    for (int i = 0; i < d->n_joints && i < KN_USAR_MAX_ITEMS; i++) {
        const struct kn_usar_joint_cmd *j = &d->joint[i];
        w_word(&w, "Name", j->name);
        if (j->has_value)
            kn_usar_w_knum(&w, "Value", j->value, CMD_DECIMALS);
        if (j->has_steer)
            kn_usar_w_knum(&w, "Steer", j->steer, CMD_DECIMALS);
        if (j->has_order) {
            kn_usar_w_key(&w, "Order");
            kn_usar_w_int(&w, j->order);
        }
    }
    return kn_usar_w_end(&w);
}

int kn_usar_fmt_set_joint(char *buf, size_t cap, const char *joint, double angle_rad)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "SET");
    kn_usar_w_kv(&w, "Type", "Joint");
    w_word(&w, "Name", kn_usar_s(joint));
    kn_usar_w_kv(&w, "Opcode", "Angle");
    kn_usar_w_knum(&w, "Params", angle_rad, CMD_DECIMALS);
    return kn_usar_w_end(&w);
}

int kn_usar_fmt_set(char *buf, size_t cap, const char *type, const char *name, const char *opcode,
                    const char *params)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "SET");
    w_word(&w, "Type", kn_usar_s(type));
    w_word(&w, "Name", kn_usar_s(name));
    w_word(&w, "Opcode", kn_usar_s(opcode));
    if (params)
        kn_usar_w_kv(&w, "Params", params);
    return kn_usar_w_end(&w);
}

int kn_usar_fmt_multidrive(char *buf, size_t cap, const char *const names[], const double values[],
                           size_t n)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "MULTIDRIVE");
    if (n == 0 || names == NULL || values == NULL)
        w_fail(&w, KN_USAR_EARG);
    for (size_t i = 0; w.err == KN_USAR_OK && i < n; i++)
        kn_usar_w_knum(&w, names[i], values[i], CMD_DECIMALS);
    return kn_usar_w_end(&w);
}

int kn_usar_fmt_multidrive_flippers(char *buf, size_t cap, const double rad[KN_NFLIPPERS],
                                    uint8_t mask)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "MULTIDRIVE");
    if ((mask & ((1u << KN_NFLIPPERS) - 1u)) == 0)
        w_fail(&w, KN_USAR_EARG);
    for (int i = 0; i < KN_NFLIPPERS; i++) {
        int k = flipper_wire_order[i];
        if (mask & (1u << k))
            kn_usar_w_knum(&w, flipper_names[k], rad[k], CMD_DECIMALS);
    }
    return kn_usar_w_end(&w);
}

static int fmt_get(char *buf, size_t cap, const char *head, const char *type, const char *name)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, head);
    w_word(&w, "Type", kn_usar_s(type));
    if (name)
        w_word(&w, "Name", kn_usar_s(name));
    return kn_usar_w_end(&w);
}

int kn_usar_fmt_getconf(char *buf, size_t cap, const char *type, const char *name)
{
    return fmt_get(buf, cap, "GETCONF", type, name);
}

int kn_usar_fmt_getgeo(char *buf, size_t cap, const char *type, const char *name)
{
    return fmt_get(buf, cap, "GETGEO", type, name);
}

int kn_usar_fmt_getstartposes(char *buf, size_t cap)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "GETSTARTPOSES");
    return kn_usar_w_end(&w);
}

int kn_usar_fmt_nfo(char *buf, size_t cap, const char *gametype, const char *level,
                    int64_t time_limit)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "NFO");
    w_word(&w, "Gametype", kn_usar_s(gametype));
    w_word(&w, "Level", kn_usar_s(level));
    kn_usar_w_key(&w, "TimeLimit");
    kn_usar_w_int(&w, time_limit);
    return kn_usar_w_end(&w);
}

/* UDK prints floats with 4 decimals (string(float)). */
#define UDK_FLOAT 4

static bool reserved_nfo_key(struct kn_usar_str k)
{
    static const char *const keys[] = { "Gametype", "Level",    "TimeLimit",  "StartPoses",
                                        "Name",     "Location", "Orientation" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (kn_usar_str_is(k, keys[i]))
            return true;
    return false;
}

int kn_usar_fmt_startposes(char *buf, size_t cap, const struct kn_usar_pose *poses, size_t n)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "NFO");
    kn_usar_w_key(&w, "StartPoses");
    kn_usar_w_int(&w, (int64_t)n);
    if (n > 0 && poses == NULL)
        w_fail(&w, KN_USAR_EARG);
    for (size_t i = 0; w.err == KN_USAR_OK && i < n; i++) {
        struct kn_usar_str tag = poses[i].name;
        char key[256];
        /* a tag goes where a key goes, so it must also be a key, and not
         * one a reader would take for another NFO field */
        if (!valid_key(tag) || tag.n >= sizeof key || reserved_nfo_key(tag)) {
            w_fail(&w, KN_USAR_EARG);
            break;
        }
        memcpy(key, tag.p, tag.n);
        key[tag.n] = '\0';
        if (i == 0)
            kn_usar_w_key(&w, key);
        else
            kn_usar_w_more(&w, key);
        kn_usar_w_vec3(&w, poses[i].location, UDK_FLOAT, KN_USAR_ROUND);
        kn_usar_w_vec3(&w, poses[i].orientation, UDK_FLOAT, KN_USAR_ROUND);
    }
    return kn_usar_w_end(&w);
}

static struct kn_usar_str or_default(struct kn_usar_str s, const char *def)
{
    return s.n ? s : kn_usar_s(def);
}

static void w_flippers(struct kn_usar_writer *w, const struct kn_usar_sta *s)
{
    for (int i = 0; i < KN_NFLIPPERS; i++) {
        int k = flipper_wire_order[i];
        if (s->flipper_mask & (1u << k))
            kn_usar_w_knum(w, flipper_names[k], s->flipper[k], 4);
    }
}

int kn_usar_fmt_sta(char *buf, size_t cap, const struct kn_usar_sta *s,
                    enum kn_usar_dialect dialect)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "STA");
    struct kn_usar_str type = or_default(s->type, "GroundVehicle");
    bool udk = dialect != KN_USAR_UT2004;
    double intensity = s->has_light_intensity ? s->light_intensity : (udk ? 100.0 : 0.0);
    bool light = s->has_light_toggle && s->light_toggle;
    if (udk) {
        /* USARVehicle, then WheeledVehicle, then SkidSteeredVehicle */
        if (s->has_time)
            kn_usar_w_knum(&w, "Time", s->time, 4);
        if (s->has_battery)
            kn_usar_w_knum(&w, "Battery", s->battery, 0);
        w_word(&w, "Type", type);
        kn_usar_w_key(&w, "LightToggle");
        kn_usar_w_bool(&w, light, KN_USAR_BOOL_CAPS);
        kn_usar_w_knum(&w, "LightIntensity", intensity, 0);
        kn_usar_w_kv(&w, "FrontSteer", "0");
        kn_usar_w_kv(&w, "RearSteer", "0");
        w_flippers(&w, s);
    } else {
        w_word(&w, "Type", type);
        if (s->has_time)
            kn_usar_w_knum(&w, "Time", s->time, 2);
        kn_usar_w_kv(&w, "FrontSteer", "0.0000");
        kn_usar_w_kv(&w, "RearSteer", "0.0000");
        w_flippers(&w, s);
        kn_usar_w_key(&w, "LightToggle");
        kn_usar_w_bool(&w, light, KN_USAR_BOOL_CAPS);
        kn_usar_w_knum(&w, "LightIntensity", intensity, 0);
        if (s->has_battery)
            kn_usar_w_knum(&w, "Battery", s->battery, 0);
        kn_usar_w_kv(&w, "View", "-1");
    }
    return kn_usar_w_end(&w);
}

int kn_usar_fmt_sen(char *buf, size_t cap, const struct kn_usar_sen *s,
                    enum kn_usar_dialect dialect)
{
    struct kn_usar_writer w;
    bool udk = dialect != KN_USAR_UT2004;
    static const char *const type_names[] = {
        [KN_USAR_SEN_OTHER] = NULL,          [KN_USAR_SEN_GROUNDTRUTH] = "GroundTruth",
        [KN_USAR_SEN_INS] = "INS",           [KN_USAR_SEN_ENCODER] = "Encoder",
        [KN_USAR_SEN_ODOMETRY] = "Odometry", [KN_USAR_SEN_TOUCH] = "Touch",
    };
    kn_usar_w_init(&w, buf, cap, "SEN");
    if ((size_t)s->sen_type >= sizeof type_names / sizeof type_names[0] ||
        type_names[s->sen_type] == NULL) {
        w_fail(&w, KN_USAR_EARG);
        return kn_usar_w_end(&w);
    }
    if (s->has_time)
        kn_usar_w_knum(&w, "Time", s->time, 4);
    kn_usar_w_kv(&w, "Type", type_names[s->sen_type]);
    switch (s->sen_type) {
    case KN_USAR_SEN_GROUNDTRUTH:
    case KN_USAR_SEN_INS: {
        int dec = (s->sen_type == KN_USAR_SEN_GROUNDTRUTH && udk) ? 3 : 2;
        if (s->name.n)
            w_word(&w, "Name", s->name);
        kn_usar_w_key(&w, "Location");
        kn_usar_w_vec3(&w, s->location, dec, KN_USAR_ROUND);
        kn_usar_w_key(&w, "Orientation");
        kn_usar_w_vec3(&w, s->orientation, dec, KN_USAR_ROUND);
        break;
    }
    case KN_USAR_SEN_ODOMETRY:
        if (s->name.n)
            w_word(&w, "Name", s->name);
        kn_usar_w_key(&w, "Pose");
        kn_usar_w_vec3(&w, s->pose, 4, KN_USAR_ROUND);
        break;
    case KN_USAR_SEN_ENCODER:
    case KN_USAR_SEN_TOUCH: {
        bool touch = s->sen_type == KN_USAR_SEN_TOUCH;
        int n = touch ? s->n_touches : s->n_ticks;
        if (n > KN_USAR_MAX_ITEMS)
            w_fail(&w, KN_USAR_EARG);
        for (int i = 0; i < n && i < KN_USAR_MAX_ITEMS; i++) {
            w_word(&w, "Name", touch ? s->touches[i].name : s->ticks[i].name);
            const char *vkey = touch ? "Touch" : "Tick";
            if (udk)
                kn_usar_w_key(&w, vkey);
            else
                kn_usar_w_more(&w, vkey);
            if (touch)
                kn_usar_w_bool(&w, s->touches[i].touch, KN_USAR_BOOL_CAPS);
            else
                kn_usar_w_int(&w, s->ticks[i].tick);
        }
        break;
    }
    case KN_USAR_SEN_OTHER: break;
    }
    return kn_usar_w_end(&w);
}

int kn_usar_fmt_links(char *buf, size_t cap, enum kn_usar_kind head, const struct kn_usar_links *l)
{
    struct kn_usar_writer w;
    bool server = head == KN_USAR_K_ASTA || head == KN_USAR_K_MISSTA;
    if (!server && head != KN_USAR_K_MISPKG && head != KN_USAR_K_ACT) {
        kn_usar_w_init(&w, buf, cap, "X");
        w_fail(&w, KN_USAR_EARG);
        return kn_usar_w_end(&w);
    }
    kn_usar_w_init(&w, buf, cap, kn_usar_kind_name(head));
    if (server && l->has_time)
        kn_usar_w_knum(&w, "Time", l->time, head == KN_USAR_K_MISSTA ? 2 : 4);
    w_word(&w, "Name", l->name);
    if (l->n > KN_USAR_MAX_ITEMS)
        w_fail(&w, KN_USAR_EARG);
    for (int i = 0; i < l->n && i < KN_USAR_MAX_ITEMS; i++) {
        const struct kn_usar_link *k = &l->link[i];
        kn_usar_w_key(&w, "Link");
        kn_usar_w_int(&w, k->link);
        if (k->has_value)
            kn_usar_w_knum(&w, "Value", k->value, 4);
        if (k->has_torque)
            kn_usar_w_knum(&w, "Torque", k->torque, 2);
        if (k->has_order) {
            kn_usar_w_key(&w, "Order");
            kn_usar_w_int(&w, k->order);
        }
    }
    return kn_usar_w_end(&w);
}

static void w_trunc(struct kn_usar_writer *w, const char *key, double v)
{
    kn_usar_w_key(w, key);
    kn_usar_w_num(w, v, 4, KN_USAR_TRUNC);
}

int kn_usar_fmt_conf_robot(char *buf, size_t cap, const struct kn_usar_robot *r)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "CONF");
    w_word(&w, "Name", r->name);
    w_word(&w, "Type", or_default(r->type, "GroundVehicle"));
    w_word(&w, "SteeringType", or_default(r->steering_type, "SkidSteered"));
    if (r->has_mass)
        w_trunc(&w, "Mass", r->mass);
    if (r->has_max_speed)
        w_trunc(&w, "MaxSpeed", r->max_speed);
    if (r->has_max_torque)
        w_trunc(&w, "MaxTorque", r->max_torque);
    kn_usar_w_kv(&w, "MaxFrontSteer", "0");
    kn_usar_w_kv(&w, "MaxRearSteer", "0");
    return kn_usar_w_end(&w);
}

int kn_usar_fmt_geo_robot(char *buf, size_t cap, const struct kn_usar_robot *r)
{
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "GEO");
    w_word(&w, "Type", or_default(r->type, "GroundVehicle"));
    w_word(&w, "Name", r->name);
    if (r->has_dimensions) {
        kn_usar_w_key(&w, "Dimensions");
        kn_usar_w_vec3(&w, r->dimensions, 4, KN_USAR_TRUNC);
    }
    if (r->has_cog) {
        kn_usar_w_key(&w, "COG");
        kn_usar_w_vec3(&w, r->cog, 4, KN_USAR_TRUNC);
    }
    if (r->has_wheel_radius)
        w_trunc(&w, "WheelRadius", r->wheel_radius);
    if (r->has_wheel_separation)
        w_trunc(&w, "WheelSeparation", r->wheel_separation);
    if (r->has_wheel_base)
        w_trunc(&w, "WheelBase", r->wheel_base);
    return kn_usar_w_end(&w);
}
