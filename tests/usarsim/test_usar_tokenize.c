/* USARSim tokenizer tests: every real line of real_lines.h, every quirk
 * real servers and clients show (docs/usarsim.md, "Lines we accept"), the
 * caps, and each malformed-line error code. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "real_lines.h"

struct shape {
    const char *line;
    const char *head;
    int groups;
    int pairs;
    enum kn_usar_kind kind;
};

static const struct shape real_shapes[] = {
    { REAL_1, "NFO", 3, 3, KN_USAR_K_NFO },
    { REAL_2, "SEN", 5, 9, KN_USAR_K_SEN },
    { REAL_4, "SEN", 5, 5, KN_USAR_K_SEN },
    { REAL_6, "MISSTA", 8, 8, KN_USAR_K_MISSTA },
    { REAL_7, "STA", 8, 8, KN_USAR_K_STA },
    { REAL_12, "NFO", 3, 3, KN_USAR_K_NFO },
    { REAL_13, "CONF", 8, 8, KN_USAR_K_CONF },
    { REAL_14, "GEO", 7, 7, KN_USAR_K_GEO },
    { REAL_16, "GEO", 5, 5, KN_USAR_K_GEO },
    { REAL_18, "STA", 7, 7, KN_USAR_K_STA },
    { REAL_19, "SEN", 5, 5, KN_USAR_K_SEN },
    { REAL_20, "SEN", 4, 4, KN_USAR_K_SEN },
    { REAL_21, "SEN", 2, 2, KN_USAR_K_SEN },
    { REAL_22, "SEN", 4, 4, KN_USAR_K_SEN },
    { REAL_STA_FLIPPERS, "STA", 12, 12, KN_USAR_K_STA },
    { REAL_POSES_UVA, "NFO", 2, 2, KN_USAR_K_NFO },
    { REAL_GPS, "SEN", 6, 6, KN_USAR_K_SEN },
    { REAL_GPS_UT, "SEN", 4, 4, KN_USAR_K_SEN },
    { REAL_GEO_SONAR, "GEO", 2, 5, KN_USAR_K_GEO },
    { REAL_CONF_MISPKG, "CONF", 8, 8, KN_USAR_K_CONF },
    { REAL_C1, "INIT", 3, 3, KN_USAR_K_INIT },
    { REAL_C2, "DRIVE", 3, 3, KN_USAR_K_DRIVE },
    { REAL_C3A, "GETSTARTPOSES", 0, 0, KN_USAR_K_GETSTARTPOSES },
    { REAL_C3B, "INIT", 3, 3, KN_USAR_K_INIT },
    { REAL_C4, "Drive", 2, 2, KN_USAR_K_DRIVE },
    { REAL_C5A, "GETCONF", 2, 2, KN_USAR_K_GETCONF },
    { REAL_C5B, "GETGEO", 2, 2, KN_USAR_K_GETGEO },
    { REAL_C6, "MULTIDRIVE", 4, 4, KN_USAR_K_MULTIDRIVE },
    { REAL_C7, "MULTIDRIVE", 4, 4, KN_USAR_K_MULTIDRIVE },
    { REAL_C8, "DRIVE", 1, 1, KN_USAR_K_DRIVE },
    { REAL_C9, "MISPKG", 5, 5, KN_USAR_K_MISPKG },
    { REAL_C10, "SET", 3, 3, KN_USAR_K_SET },
    { REAL_C11, "DRIVE", 3, 3, KN_USAR_K_DRIVE },
    { REAL_C12, "INIT", 4, 4, KN_USAR_K_INIT },
    { REAL_INIT_GAZEBO, "INIT", 4, 4, KN_USAR_K_INIT },
    { REAL_DRIVE_UPPER, "DRIVE", 2, 2, KN_USAR_K_DRIVE },
    { REAL_DRIVE_COMMA, "DRIVE", 2, 2, KN_USAR_K_DRIVE },
    { REAL_MULTIDRIVE_15, "MULTIDRIVE", 4, 4, KN_USAR_K_MULTIDRIVE },
};

/* Every view must lie inside the bytes handed in. */
static void assert_views_inside(const char *s, size_t n)
{
    const struct kn_usar_str *all[2 * KN_USAR_MAX_GROUPS + 2 * KN_USAR_MAX_PAIRS + 1];
    size_t k = 0;
    all[k++] = &L.head;
    for (int i = 0; i < L.n_groups; i++) {
        all[k++] = &L.group[i].key;
        all[k++] = &L.group[i].value;
    }
    for (int i = 0; i < L.n_pairs; i++) {
        all[k++] = &L.pair[i].key;
        all[k++] = &L.pair[i].value;
    }
    for (size_t i = 0; i < k; i++) {
        if (all[i]->n == 0)
            continue;
        ck_assert(all[i]->p >= s && all[i]->p + all[i]->n <= s + n);
    }
}

START_TEST(real_lines_tokenize)
{
    const struct shape *t = &real_shapes[_i];
    tok_ok(t->line);
    ck_assert_view(L.head, t->head);
    ck_assert_int_eq(L.n_groups, t->groups);
    ck_assert_int_eq(L.n_pairs, t->pairs);
    ck_assert_int_eq(L.groups_dropped, 0);
    ck_assert_int_eq(L.pairs_dropped, 0);
    ck_assert_int_eq(kn_usar_kind(&L), t->kind);
    assert_views_inside(t->line, strlen(t->line));
    /* pairs point back at groups in order */
    for (int i = 0, p = 0; i < L.n_groups; i++) {
        ck_assert_int_eq(L.group[i].first_pair, p);
        ck_assert_int_ge(L.group[i].n_pairs, 1);
        for (int j = 0; j < L.group[i].n_pairs; j++)
            ck_assert_int_eq(L.pair[p + j].group, i);
        p += L.group[i].n_pairs;
    }
}
END_TEST

START_TEST(multi_pair_groups)
{
    tok_ok(REAL_2);
    ck_assert_view(L.pair[0].key, "Type");
    ck_assert_view(L.pair[0].value, "Encoder");
    const char *names[] = { "ECLeft", "ECRight", "ECTilt", "ECPan" };
    for (int i = 0; i < 4; i++) {
        ck_assert_view(L.pair[1 + 2 * i].key, "Name");
        ck_assert_view(L.pair[1 + 2 * i].value, names[i]);
        ck_assert_view(L.pair[2 + 2 * i].key, "Tick");
        ck_assert_view(L.pair[2 + 2 * i].value, "0");
    }
    /* the group view keeps UDK's reading: key + the rest */
    ck_assert_view(L.group[1].key, "Name");
    ck_assert_view(L.group[1].value, "ECLeft Tick 0");

    tok_ok(REAL_GEO_SONAR);
    ck_assert_view(L.pair[1].key, "Name");
    ck_assert_view(L.pair[1].value, "F2");
    ck_assert_view(L.pair[2].key, "Location");
    ck_assert_view(L.pair[2].value, "0.1850,-0.1150,0.0000");
    ck_assert_view(L.pair[3].key, "Orientation");
    ck_assert_view(L.pair[4].key, "Mount");
    ck_assert_view(L.pair[4].value, "HARD");

    tok_ok("SEN {Type Touch} {Name Touch Touch False}\r\n");
    ck_assert_int_eq(L.n_pairs, 3);
    ck_assert_view(L.pair[2].key, "Touch");
    ck_assert_view(L.pair[2].value, "False");
}
END_TEST

START_TEST(values_with_spaces_stay_one_pair)
{
    /* the Player bug: numbers at even places are not keys */
    tok_ok("INIT {Location 1 2 3}");
    ck_assert_int_eq(L.n_pairs, 1);
    ck_assert_view(L.pair[0].value, "1 2 3");
    tok_ok("INIT {Location 1.0 2.0 3.0 4.0}");
    ck_assert_int_eq(L.n_pairs, 1);
    /* an odd word count is never split */
    tok_ok("INIT {Name My Robot}");
    ck_assert_int_eq(L.n_pairs, 1);
    ck_assert_view(L.pair[0].value, "My Robot");
    tok_ok("SEN {Name F1 Range}");
    ck_assert_int_eq(L.n_pairs, 1);
    ck_assert_view(L.pair[0].value, "F1 Range");
    /* inner blanks are kept as sent, outer ones trimmed */
    tok_ok("SET {Params   a  b\tc  }");
    ck_assert_view(L.group[0].key, "Params");
    ck_assert_view(L.group[0].value, "a  b\tc");
    /* UDK start poses: vectors at even places, so one pair */
    tok_ok(REAL_POSES_UVA);
    ck_assert_int_eq(L.n_pairs, 2);
    ck_assert_view(L.pair[1].key, "BlueGoal");
}
END_TEST

START_TEST(group_spacing_quirks)
{
    /* no space between groups */
    tok_ok(REAL_16);
    ck_assert_view(L.group[3].key, "Orientation");
    ck_assert_view(L.group[3].value, "0.00,-0.00,-0.00");
    ck_assert_view(L.group[4].key, "Mount");
    ck_assert_view(L.group[4].value, "P3AT");
    tok_ok("NFO{Gametype X}{Level Y}");
    ck_assert_view(L.head, "NFO");
    ck_assert_int_eq(L.n_groups, 2);
    /* two spaces after the head, trailing space, tabs, leading blanks */
    tok_ok(REAL_14);
    ck_assert_view(L.group[0].key, "Name");
    tok_ok(REAL_21);
    ck_assert_view(L.group[1].value, "Camera");
    tok_ok(" \tSTA\t{Time 1}\t \r\n");
    ck_assert_view(L.head, "STA");
    ck_assert_view(L.group[0].value, "1");
    tok_ok("STA {  Time    1.5   }");
    ck_assert_view(L.group[0].key, "Time");
    ck_assert_view(L.group[0].value, "1.5");
    /* a key without a value: accepted, value empty */
    tok_ok("SEN {Foo} {Type X}");
    ck_assert_view(L.group[0].key, "Foo");
    ck_assert_uint_eq(L.group[0].value.n, 0);
    ck_assert_int_eq(L.n_pairs, 2);
    ck_assert_int_eq(kn_usar_find(&L, "type", 0), 1);
}
END_TEST

START_TEST(line_endings)
{
    /* CR LF, LF CR, bare LF, bare CR, none, and several of them */
    const char *ends[] = { "\r\n", "\n\r", "\n", "\r", "", "\r\n\r\n", "\r\r\n" };
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "STA {Time 1}%s", ends[i]);
        tok_ok(buf);
        ck_assert_view(L.group[0].value, "1");
    }
    tok_ok(REAL_C11);
    ck_assert_view(L.group[2].value, "0.000000");
}
END_TEST

START_TEST(repeated_keys_keep_order)
{
    tok_ok(REAL_6);
    int a = kn_usar_find(&L, "Link", 0);
    int b = kn_usar_find(&L, "Link", a + 1);
    int c = kn_usar_find(&L, "Link", b + 1);
    ck_assert_int_eq(a, 2);
    ck_assert_int_eq(b, 5);
    ck_assert_int_eq(c, -1);
    ck_assert_view(L.pair[a].value, "1");
    ck_assert_view(L.pair[b].value, "2");
    ck_assert_int_eq(kn_usar_find(&L, "torque", b), 7);
    ck_assert_int_eq(kn_usar_find_group(&L, "VALUE", 4), 6);
    ck_assert_int_eq(kn_usar_find(&L, "Link", -5), 2);
    ck_assert_int_eq(kn_usar_find(&L, "Link", 100), -1);
}
END_TEST

START_TEST(heads_any_word_any_case)
{
    tok_ok("Drive {Left 1}");
    ck_assert_int_eq(kn_usar_kind(&L), KN_USAR_K_DRIVE);
    tok_ok("sen {Type X}");
    ck_assert_int_eq(kn_usar_kind(&L), KN_USAR_K_SEN);
    tok_ok("FOO {Bar baz}");
    ck_assert_int_eq(kn_usar_kind(&L), KN_USAR_K_UNKNOWN);
    ck_assert_view(L.head, "FOO");
    tok_ok("KN_STEP");
    ck_assert_int_eq(L.n_groups, 0);
    tok_ok("A1");
    ck_assert_str_eq(kn_usar_kind_name(KN_USAR_K_MULTIDRIVE), "MULTIDRIVE");
    ck_assert_str_eq(kn_usar_kind_name(KN_USAR_K_UNKNOWN), "");
    ck_assert_str_eq(kn_usar_kind_name((enum kn_usar_kind)999), "");
}
END_TEST

START_TEST(accessors)
{
    tok_ok(REAL_18);
    double d;
    int64_t i;
    bool b;
    double v[3];
    struct kn_usar_str s;
    ck_assert_int_eq(kn_usar_get_double(&L, "time", &d), KN_USAR_OK);
    ck_assert_near(d, 477.7582);
    ck_assert_int_eq(kn_usar_get_int(&L, "Battery", &i), KN_USAR_OK);
    ck_assert_int_eq(i, 99999);
    ck_assert_int_eq(kn_usar_get_bool(&L, "LightToggle", &b), KN_USAR_OK);
    ck_assert(!b);
    ck_assert_int_eq(kn_usar_get_str(&L, "Type", &s), KN_USAR_OK);
    ck_assert_view(s, "GroundVehicle");
    ck_assert_int_eq(kn_usar_get_double(&L, "Nope", &d), KN_USAR_EMISSING);
    ck_assert_int_eq(kn_usar_get_str(&L, "Nope", &s), KN_USAR_EMISSING);
    ck_assert_int_eq(kn_usar_get_vec3(&L, "Time", v), KN_USAR_EVALUE);
    ck_assert_int_eq(kn_usar_get_bool(&L, "Type", &b), KN_USAR_EVALUE);
    tok_ok(REAL_16);
    ck_assert_int_eq(kn_usar_get_vec3(&L, "Location", v), KN_USAR_OK);
    ck_assert_near(v[0], 0.21);
    ck_assert_near(v[2], -0.20);
    ck_assert(kn_usar_str_is(kn_usar_s("GroundTruth"), "groundtruth"));
    ck_assert(!kn_usar_str_eq(kn_usar_s("True"), "true"));
    ck_assert(!kn_usar_str_is(kn_usar_s("Tim"), "Time"));
    ck_assert(kn_usar_str_eq(kn_usar_s(NULL), ""));
}
END_TEST

struct bad {
    const char *line;
    enum kn_usar_result want;
};

static const struct bad bad_lines[] = {
    { "", KN_USAR_EEMPTY },
    { "\r\n", KN_USAR_EEMPTY },
    { "   \t \r\n", KN_USAR_EEMPTY },
    { "{Time 1}", KN_USAR_EHEAD },
    { "  {Time 1}", KN_USAR_EHEAD },
    { "ST-A {Time 1}", KN_USAR_EHEAD },
    { "STA, {Time 1}", KN_USAR_EHEAD },
    { "}", KN_USAR_EHEAD },
    { "\xc3\xa9T {a b}", KN_USAR_EHEAD },
    { "STA {Time 1", KN_USAR_EBRACE },
    { "STA {Time 1} {", KN_USAR_EBRACE },
    { "STA {Time {1}}", KN_USAR_EBRACE },
    { "STA {Time 1}}", KN_USAR_EBRACE },
    { "STA }", KN_USAR_EBRACE },
    { "STA {}", KN_USAR_EGROUP },
    { "STA { \t }", KN_USAR_EGROUP },
    { "STA {a,b 1}", KN_USAR_EGROUP },
    { "STA {Time 1} x", KN_USAR_ESTRAY },
    { "STA Time 1", KN_USAR_ESTRAY },
    { "STA {Time 1} , {Type X}", KN_USAR_ESTRAY },
    { "STA {Time\r1}", KN_USAR_ECTRL },
    { "STA {Time 1}\x1b[0m", KN_USAR_ECTRL },
    { "STA {Time 1\x7f}", KN_USAR_ECTRL },
    { REAL_C3_WRITE, KN_USAR_ECTRL },
    { "STA {Time 1}\nSTA {Time 2}", KN_USAR_ECTRL },
};

START_TEST(malformed_lines)
{
    const struct bad *t = &bad_lines[_i];
    enum kn_usar_result r = kn_usar_tokenize(t->line, strlen(t->line), &L);
    ck_assert_msg(r == t->want, "\"%s\": got %s, want %s", t->line, kn_usar_strerror(r),
                  kn_usar_strerror(t->want));
    ck_assert_int_eq(L.n_groups, 0);
    ck_assert_int_eq(L.n_pairs, 0);
    ck_assert_str_ne(kn_usar_strerror(r), "unknown result");
}
END_TEST

START_TEST(nul_byte_and_null_pointer)
{
    static const char with_nul[] = "STA {Time 1\0} {Type X}";
    ck_assert_int_eq(kn_usar_tokenize(with_nul, sizeof with_nul - 1, &L), KN_USAR_ECTRL);
    ck_assert_int_eq(kn_usar_tokenize(NULL, 0, &L), KN_USAR_EEMPTY);
    ck_assert_int_eq(kn_usar_tokenize(NULL, 5, &L), KN_USAR_EEMPTY);
    ck_assert_str_eq(kn_usar_strerror((enum kn_usar_result)999), "unknown result");
}
END_TEST

START_TEST(length_limit)
{
    size_t n = KN_USAR_MAX_LINE + 2;
    char *buf = malloc(n + 1);
    ck_assert_ptr_nonnull(buf);
    memcpy(buf, "SEN {Range ", 11);
    memset(buf + 11, '1', KN_USAR_MAX_LINE - 12);
    buf[KN_USAR_MAX_LINE - 1] = '}';
    buf[KN_USAR_MAX_LINE] = '\r';
    buf[KN_USAR_MAX_LINE + 1] = '\n';
    ck_assert_int_eq(kn_usar_tokenize(buf, n, &L), KN_USAR_OK);
    ck_assert_uint_eq(L.group[0].value.n, KN_USAR_MAX_LINE - 12);
    /* one byte more before the EOL */
    memmove(buf + 12, buf + 11, n - 11);
    buf[11] = '1';
    ck_assert_int_eq(kn_usar_tokenize(buf, n + 1, &L), KN_USAR_ETOOLONG);
    free(buf);
}
END_TEST

START_TEST(reads_only_len_bytes)
{
    /* an exact-size copy without NUL: ASan flags any read past it */
    const char *src = "SEN {Type Encoder} {Name W1} {Tick 0}";
    size_t n = strlen(src);
    char *exact = malloc(n);
    ck_assert_ptr_nonnull(exact);
    memcpy(exact, src, n);
    ck_assert_int_eq(kn_usar_tokenize(exact, n, &L), KN_USAR_OK);
    ck_assert_view(L.pair[2].value, "0");
    /* a prefix is a different, shorter line */
    ck_assert_int_eq(kn_usar_tokenize(exact, n - 1, &L), KN_USAR_EBRACE);
    ck_assert_int_eq(kn_usar_tokenize(exact, 3, &L), KN_USAR_OK);
    ck_assert_view(L.head, "SEN");
    free(exact);
}
END_TEST

START_TEST(caps_are_counted)
{
    char buf[8192];
    size_t n = (size_t)snprintf(buf, sizeof buf, "SEN {Type Encoder}");
    for (int i = 0; i < 70; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, " {Name W%d}", i);
    tok_ok(buf);
    ck_assert_int_eq(L.n_groups, KN_USAR_MAX_GROUPS);
    ck_assert_int_eq(L.groups_dropped, 71 - KN_USAR_MAX_GROUPS);
    ck_assert_int_eq(L.n_pairs, KN_USAR_MAX_GROUPS);
    ck_assert_int_eq(L.pairs_dropped, 71 - KN_USAR_MAX_GROUPS);
    /* pairs run out before groups: 3 pairs per group */
    n = (size_t)snprintf(buf, sizeof buf, "SEN");
    for (int i = 0; i < 50; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, " {Name S%d Range 1.0 Foo 2}", i);
    tok_ok(buf);
    ck_assert_int_eq(L.n_groups, 50);
    ck_assert_int_eq(L.groups_dropped, 0);
    ck_assert_int_eq(L.n_pairs, KN_USAR_MAX_PAIRS);
    ck_assert_int_eq(L.pairs_dropped, 150 - KN_USAR_MAX_PAIRS);
    int sum = 0;
    for (int i = 0; i < L.n_groups; i++)
        sum += L.group[i].n_pairs;
    ck_assert_int_eq(sum, KN_USAR_MAX_PAIRS);
    ck_assert_int_eq(L.group[42].n_pairs, 2);
    ck_assert_int_eq(L.group[43].n_pairs, 0);
    /* a malformed group after the caps still fails the line */
    n = (size_t)snprintf(buf, sizeof buf, "SEN");
    for (int i = 0; i < 70; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, " {Name W%d}", i);
    snprintf(buf + n, sizeof buf - n, " {}");
    ck_assert_int_eq(kn_usar_tokenize(buf, strlen(buf), &L), KN_USAR_EGROUP);
}
END_TEST

static Suite *tokenize_suite(void)
{
    Suite *s = suite_create("usarsim-tokenize");
    TCase *r = tcase_create("real");
    tcase_add_loop_test(r, real_lines_tokenize, 0,
                        (int)(sizeof real_shapes / sizeof real_shapes[0]));
    suite_add_tcase(s, r);
    TCase *q = tcase_create("quirks");
    tcase_add_test(q, multi_pair_groups);
    tcase_add_test(q, values_with_spaces_stay_one_pair);
    tcase_add_test(q, group_spacing_quirks);
    tcase_add_test(q, line_endings);
    tcase_add_test(q, repeated_keys_keep_order);
    tcase_add_test(q, heads_any_word_any_case);
    tcase_add_test(q, accessors);
    suite_add_tcase(s, q);
    TCase *e = tcase_create("errors");
    tcase_add_loop_test(e, malformed_lines, 0, (int)(sizeof bad_lines / sizeof bad_lines[0]));
    tcase_add_test(e, nul_byte_and_null_pointer);
    tcase_add_test(e, length_limit);
    tcase_add_test(e, reads_only_len_bytes);
    tcase_add_test(e, caps_are_counted);
    suite_add_tcase(s, e);
    return s;
}

int main(void)
{
    return h_run_suite(tokenize_suite());
}
