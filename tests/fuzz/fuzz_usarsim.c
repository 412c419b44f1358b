/* libFuzzer target for the USARSim codec (and the engine's trial line
 * on it, usarsim_trial.h): any bytes, as one line, either
 * fail with a tokenizer error or tokenize into views inside the input; a
 * tokenized line re-emits canonically to a fixed point; every typed parser
 * gives a defined result; and what a parser accepts, its formatter writes
 * back to a line that parses to the same values within the printed
 * precision. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "usarsim_codec.h"
#include "usarsim_trial.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *in_lo, *in_hi;
static char out[2 * KN_USAR_MAX_LINE + 4096];
static struct kn_usar_line line, again;

static void inside(struct kn_usar_str v)
{
    if (v.n && (v.p < in_lo || v.p + v.n > in_hi))
        abort();
}

static bool same(struct kn_usar_str a, struct kn_usar_str b)
{
    return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

/* |a - b| within what `dec` printed decimals can lose (rounded, or
 * truncated in single precision when trunc), plus the double's own
 * spacing at that magnitude. */
static void near(double a, double b, int dec, bool trunc)
{
    double unit = pow(10.0, -dec);
    double tol =
        trunc ? unit * (1 + 1e-9) + fabs(a) * 1.2e-7 : 0.5 * unit * (1 + 1e-9) + fabs(a) * 4e-16;
    tol += 1e-300;
    if (!(fabs(a - b) <= tol))
        abort();
}

static void near3(const double a[3], const double b[3], int dec, bool trunc)
{
    for (int i = 0; i < 3; i++)
        near(a[i], b[i], dec, trunc);
}

/* A formatter may refuse what the parser took (a name with a space, a
 * number too large to print); anything else is a bug. Returns true when
 * there is a line to read back. */
static bool formatted(int n)
{
    if (n >= 0)
        return true;
    if (n != -(int)KN_USAR_EARG && n != -(int)KN_USAR_ERANGE)
        abort();
    return false;
}

static void retokenize(int n)
{
    if (kn_usar_tokenize(out, (size_t)n, &again) != KN_USAR_OK)
        abort();
}

static char *cstr(struct kn_usar_str v, char *buf, size_t cap)
{
    if (v.n >= cap)
        return NULL;
    if (v.n)
        memcpy(buf, v.p, v.n);
    buf[v.n] = '\0';
    return buf;
}

static void check_tokens(void)
{
    inside(line.head);
    int p = 0;
    for (int i = 0; i < line.n_groups; i++) {
        const struct kn_usar_group *g = &line.group[i];
        inside(g->key);
        inside(g->value);
        if (g->key.n == 0 || g->first_pair != p)
            abort();
        for (int j = 0; j < g->n_pairs; j++)
            if (line.pair[p + j].group != i)
                abort();
        p += g->n_pairs;
    }
    if (p != line.n_pairs)
        abort();
    for (int i = 0; i < line.n_pairs; i++) {
        inside(line.pair[i].key);
        inside(line.pair[i].value);
    }
}

static void check_canonical(void)
{
    int n = kn_usar_fmt_line(out, sizeof out, &line);
    if (n < 0) {
        /* only a tab inside a value cannot be written back */
        bool tab = false;
        for (int i = 0; i < line.n_groups; i++)
            if (line.group[i].value.n && memchr(line.group[i].value.p, '\t', line.group[i].value.n))
                tab = true;
        if (n != -(int)KN_USAR_EARG || !tab)
            abort();
        return;
    }
    if ((size_t)n - 2 > KN_USAR_MAX_LINE)
        return; /* the added spaces pushed it past the limit */
    retokenize(n);
    if (!same(again.head, line.head) || again.n_groups != line.n_groups)
        abort();
    for (int i = 0; i < line.n_groups; i++)
        if (!same(again.group[i].key, line.group[i].key) ||
            !same(again.group[i].value, line.group[i].value))
            abort();
    if (line.pairs_dropped == 0) {
        if (again.n_pairs != line.n_pairs)
            abort();
        for (int i = 0; i < line.n_pairs; i++)
            if (!same(again.pair[i].key, line.pair[i].key) ||
                !same(again.pair[i].value, line.pair[i].value))
                abort();
    }
    static char twice[sizeof out];
    int m = kn_usar_fmt_line(twice, sizeof twice, &again);
    if (m != n || memcmp(twice, out, (size_t)n) != 0)
        abort();
}

static void check_numbers(void)
{
    for (int i = 0; i < line.n_pairs; i++) {
        double v, back;
        if (kn_usar_parse_double(line.pair[i].value, &v) != KN_USAR_OK)
            continue;
        if (!isfinite(v))
            abort();
        for (int mode = 0; mode < 2; mode++) {
            char buf[64];
            int n = kn_usar_fmt_fixed(buf, sizeof buf, v, 9, (enum kn_usar_round)mode);
            if (fabs(v) >= KN_USAR_NUM_MAX) {
                if (n != -(int)KN_USAR_ERANGE)
                    abort();
                continue;
            }
            if (n <= 0 || kn_usar_parse_double((struct kn_usar_str){ buf, (size_t)n }, &back))
                abort();
            near(v, back, 9, mode == KN_USAR_TRUNC);
        }
    }
}

static void check_sta(void)
{
    struct kn_usar_sta a, b;
    if (kn_usar_parse_sta(&line, &a) != KN_USAR_OK)
        return;
    inside(a.type);
    for (int d = 0; d < 2; d++) {
        int n = kn_usar_fmt_sta(out, sizeof out, &a, (enum kn_usar_dialect)d);
        if (!formatted(n))
            continue;
        retokenize(n);
        if (kn_usar_parse_sta(&again, &b) != KN_USAR_OK || b.flipper_mask != a.flipper_mask ||
            b.has_time != a.has_time || b.has_battery != a.has_battery)
            abort();
        if (a.has_time)
            near(a.time, b.time, d == KN_USAR_UDK ? 4 : 2, false);
        if (a.has_battery)
            near(a.battery, b.battery, 0, false);
        for (int k = 0; k < KN_NFLIPPERS; k++)
            if (a.flipper_mask & (1u << k))
                near(a.flipper[k], b.flipper[k], 4, false);
        if ((a.has_light_toggle && a.light_toggle) != b.light_toggle)
            abort();
    }
}

static void check_sen(void)
{
    struct kn_usar_sen a, b;
    enum kn_usar_result r = kn_usar_parse_sen(&line, &a);
    if (r != KN_USAR_OK)
        return;
    inside(a.type);
    inside(a.name);
    for (int i = 0; i < a.n_ticks; i++)
        inside(a.ticks[i].name);
    if (a.sen_type == KN_USAR_SEN_OTHER)
        return;
    for (int d = 0; d < 2; d++) {
        int n = kn_usar_fmt_sen(out, sizeof out, &a, (enum kn_usar_dialect)d);
        if (!formatted(n))
            continue;
        retokenize(n);
        if (kn_usar_parse_sen(&again, &b) != KN_USAR_OK || b.sen_type != a.sen_type)
            abort();
        if (a.has_time)
            near(a.time, b.time, 4, false);
        switch (a.sen_type) {
        case KN_USAR_SEN_GROUNDTRUTH:
        case KN_USAR_SEN_INS: {
            int dec = (a.sen_type == KN_USAR_SEN_GROUNDTRUTH && d == KN_USAR_UDK) ? 3 : 2;
            near3(a.location, b.location, dec, false);
            near3(a.orientation, b.orientation, dec, false);
            break;
        }
        case KN_USAR_SEN_ODOMETRY: near3(a.pose, b.pose, 4, false); break;
        case KN_USAR_SEN_ENCODER:
            if (b.n_ticks != a.n_ticks)
                abort();
            for (int i = 0; i < a.n_ticks; i++)
                if (b.ticks[i].tick != a.ticks[i].tick || !same(b.ticks[i].name, a.ticks[i].name))
                    abort();
            break;
        case KN_USAR_SEN_TOUCH:
            if (b.n_touches != a.n_touches)
                abort();
            for (int i = 0; i < a.n_touches; i++)
                if (b.touches[i].touch != a.touches[i].touch)
                    abort();
            break;
        case KN_USAR_SEN_OTHER: break;
        }
    }
}

static void check_links(void)
{
    struct kn_usar_links a, b;
    if (kn_usar_parse_links(&line, &a) != KN_USAR_OK)
        return;
    inside(a.name);
    enum kn_usar_kind k = kn_usar_kind(&line);
    int n = kn_usar_fmt_links(out, sizeof out, k, &a);
    if (!formatted(n))
        return;
    retokenize(n);
    if (kn_usar_parse_links(&again, &b) != KN_USAR_OK || b.n != a.n)
        abort();
    bool server = k == KN_USAR_K_ASTA || k == KN_USAR_K_MISSTA;
    if (server && a.has_time)
        near(a.time, b.time, k == KN_USAR_K_MISSTA ? 2 : 4, false);
    for (int i = 0; i < a.n; i++) {
        const struct kn_usar_link *x = &a.link[i], *y = &b.link[i];
        if (x->link != y->link || x->has_value != y->has_value || x->has_torque != y->has_torque ||
            x->has_order != y->has_order)
            abort();
        if (x->has_value)
            near(x->value, y->value, 4, false);
        if (x->has_torque)
            near(x->torque, y->torque, 2, false);
        if (x->has_order && x->order != y->order)
            abort();
    }
}

static void check_nfo(void)
{
    struct kn_usar_nfo a, b;
    if (kn_usar_parse_nfo(&line, &a) != KN_USAR_OK)
        return;
    inside(a.gametype);
    inside(a.level);
    if (!a.has_start_poses)
        return;
    int n = kn_usar_fmt_startposes(out, sizeof out, a.pose, a.n_poses);
    if (!formatted(n))
        return;
    retokenize(n);
    if (kn_usar_parse_nfo(&again, &b) != KN_USAR_OK || b.n_poses != a.n_poses)
        abort();
    for (int i = 0; i < a.n_poses; i++) {
        inside(a.pose[i].name);
        if (!same(a.pose[i].name, b.pose[i].name))
            abort();
        near3(a.pose[i].location, b.pose[i].location, 4, false);
        near3(a.pose[i].orientation, b.pose[i].orientation, 4, false);
    }
}

static void check_robot(void)
{
    struct kn_usar_robot a, b;
    if (kn_usar_parse_robot(&line, &a) != KN_USAR_OK)
        return;
    int n = kn_usar_fmt_conf_robot(out, sizeof out, &a);
    if (formatted(n)) {
        retokenize(n);
        if (kn_usar_parse_robot(&again, &b) != KN_USAR_OK || b.has_mass != a.has_mass)
            abort();
        if (a.has_max_speed)
            near(a.max_speed, b.max_speed, 4, true);
    }
    n = kn_usar_fmt_geo_robot(out, sizeof out, &a);
    if (formatted(n)) {
        retokenize(n);
        if (kn_usar_parse_robot(&again, &b) != KN_USAR_OK || b.has_cog != a.has_cog)
            abort();
        if (a.has_dimensions)
            near3(a.dimensions, b.dimensions, 4, true);
        if (a.has_wheel_radius)
            near(a.wheel_radius, b.wheel_radius, 4, true);
    }
}

static void check_commands(void)
{
    char c1[128], c2[128], c3[128], c4[256];
    struct kn_usar_init in, in2;
    if (kn_usar_parse_init(&line, &in) == KN_USAR_OK) {
        const char *cls = cstr(in.class_name, c1, sizeof c1);
        const char *name = cstr(in.name, c2, sizeof c2);
        if (cls && name) {
            int n =
                kn_usar_fmt_init(out, sizeof out, cls, name, in.has_location ? in.location : NULL,
                                 in.has_rotation ? in.rotation : NULL);
            if (formatted(n)) {
                retokenize(n);
                if (kn_usar_parse_init(&again, &in2) != KN_USAR_OK ||
                    !same(in.class_name, in2.class_name) || in2.has_location != in.has_location)
                    abort();
                if (in.has_location)
                    near3(in.location, in2.location, 4, false);
                if (in.has_rotation)
                    near3(in.rotation, in2.rotation, 4, false);
            }
        }
    }
    struct kn_usar_drive d, d2;
    if (kn_usar_parse_drive(&line, &d) == KN_USAR_OK) {
        int n = kn_usar_fmt_drive_full(out, sizeof out, &d);
        if (formatted(n)) {
            retokenize(n);
            if (kn_usar_parse_drive(&again, &d2) != KN_USAR_OK || d2.n_joints != d.n_joints ||
                d2.has_left != d.has_left || d2.has_flip != d.has_flip ||
                (d.has_flip && d2.flip != d.flip) ||
                (d.has_normalized && d2.normalized != d.normalized))
                abort();
            if (d.has_left)
                near(d.left, d2.left, 4, false);
            if (d.has_right)
                near(d.right, d2.right, 4, false);
            for (int i = 0; i < d.n_joints; i++) {
                if (!same(d.joint[i].name, d2.joint[i].name))
                    abort();
                if (d.joint[i].has_value)
                    near(d.joint[i].value, d2.joint[i].value, 4, false);
            }
        }
    }
    struct kn_usar_set s, s2;
    if (kn_usar_parse_set(&line, &s) == KN_USAR_OK) {
        const char *t = cstr(s.type, c1, sizeof c1), *nm = cstr(s.name, c2, sizeof c2);
        const char *op = cstr(s.opcode, c3, sizeof c3), *pa = cstr(s.params, c4, sizeof c4);
        if (t && nm && op && pa) {
            int n = kn_usar_fmt_set(out, sizeof out, t, nm, op, s.params.n ? pa : NULL);
            if (formatted(n)) {
                retokenize(n);
                if (kn_usar_parse_set(&again, &s2) != KN_USAR_OK || !same(s.params, s2.params) ||
                    !same(s.opcode, s2.opcode) || s2.has_number != s.has_number)
                    abort();
            }
        }
    }
    struct kn_usar_multidrive m, m2;
    if (kn_usar_parse_multidrive(&line, &m) == KN_USAR_OK && m.n <= 4) {
        char names[4][64];
        const char *np[4];
        double vals[4];
        bool ok = true;
        for (int i = 0; i < m.n; i++) {
            np[i] = cstr(m.joint[i].name, names[i], sizeof names[i]);
            vals[i] = m.joint[i].value;
            ok = ok && np[i];
        }
        int n = ok ? kn_usar_fmt_multidrive(out, sizeof out, np, vals, m.n) : -1;
        if (ok && formatted(n)) {
            retokenize(n);
            if (kn_usar_parse_multidrive(&again, &m2) != KN_USAR_OK || m2.n != m.n)
                abort();
            for (int i = 0; i < m.n; i++)
                near(m.joint[i].value, m2.joint[i].value, 4, false);
        }
    }
    struct kn_usar_get g;
    if (kn_usar_parse_get(&line, &g) == KN_USAR_OK) {
        inside(g.type);
        inside(g.name);
    }
}

/* The engine's trial line (usarsim_trial.h): what parses formats back to
 * a line that parses to the same fields, exactly (integers only). */
static void check_trial(void)
{
    struct kn_krp_trial a, b;
    if (kn_usartrial_parse(&line, &a) != KN_USAR_OK)
        return;
    int n = kn_usartrial_format(&a, out, sizeof out);
    if (!formatted(n))
        return; /* a name the writer cannot carry (a blank) */
    retokenize(n);
    if (kn_usartrial_parse(&again, &b) != KN_USAR_OK || memcmp(&a, &b, sizeof a) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    in_lo = s;
    in_hi = s + size;
    enum kn_usar_result r = kn_usar_tokenize(s, size, &line);
    if (r != KN_USAR_OK) {
        if (r < KN_USAR_EEMPTY || r > KN_USAR_ESTRAY || line.n_groups || line.n_pairs)
            abort(); /* a tokenizer error, and nothing half-filled */
        return 0;
    }
    if (kn_usar_kind_name(kn_usar_kind(&line)) == NULL)
        abort();
    check_tokens();
    check_numbers();
    check_sta();
    check_sen();
    check_links();
    check_nfo();
    check_robot();
    check_commands();
    check_trial();
    check_canonical();
    return 0;
}
