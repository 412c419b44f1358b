/* The engine's World answer codec (usarsim_world.h): texts of every size
 * around a part's boundary go out in lines the link reader takes and come
 * back byte for byte; each kind of bad part is refused with its own
 * result and drops what was gathered, and a new answer's first part
 * starts over. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "usarsim_world.h"

#define RAW (KN_USARWORLD_CHUNK / 4 * 3)

static char line[KN_USARWORLD_LINE_MAX];
static struct kn_usar_line tl;

/* A JSON-like text of len bytes, no NUL, every byte value but 0 used. */
static char *text_of(size_t len)
{
    char *t = malloc(len + 1);
    ck_assert_ptr_nonnull(t);
    for (size_t i = 0; i < len; i++)
        t[i] = (char)(1 + (i * 7) % 255);
    t[len] = '\0';
    return t;
}

static enum kn_usarworld_result feed_text(struct kn_usarworld_asm *a, const char *s)
{
    ck_assert_int_eq(kn_usar_tokenize(s, strlen(s), &tl), KN_USAR_OK);
    return kn_usarworld_feed(a, &tl);
}

static enum kn_usarworld_result feed_part(struct kn_usarworld_asm *a, const char *text, size_t len,
                                          int i)
{
    int n = kn_usarworld_format(text, len, i, line, sizeof line);
    ck_assert_int_gt(n, 0);
    ck_assert_int_le(n, KN_USAR_MAX_LINE + 2); /* the link reader's limit, CR LF aside */
    ck_assert_int_eq(kn_usar_tokenize(line, (size_t)n, &tl), KN_USAR_OK);
    return kn_usarworld_feed(a, &tl);
}

static const size_t sizes[] = {
    1, 2, 3, 4, 100, RAW - 1, RAW, RAW + 1, 2 * RAW, 3 * RAW + 2, KN_USARWORLD_MAX
};

START_TEST(round_trip)
{
    size_t len = sizes[_i];
    char *t = text_of(len);
    int parts = kn_usarworld_parts(len);
    ck_assert_int_eq(parts, (int)((len + RAW - 1) / RAW));
    struct kn_usarworld_asm a = { 0 };
    for (int i = 0; i < parts; i++)
        ck_assert_int_eq(feed_part(&a, t, len, i),
                         i + 1 == parts ? KN_USARWORLD_DONE : KN_USARWORLD_MORE);
    size_t got;
    char *back = kn_usarworld_take(&a, &got);
    ck_assert_uint_eq(got, len);
    ck_assert_int_eq(memcmp(back, t, len), 0);
    ck_assert_int_eq(back[len], '\0');
    ck_assert_ptr_null(a.buf);
    free(back);
    free(t);
}
END_TEST

START_TEST(exact_line)
{
    const char *t = "{\"a\":1}";
    int n = kn_usarworld_format(t, strlen(t), 0, line, sizeof line);
    ck_assert_str_eq(line, "KENAF {Cmd World} {Status OK} {Part 1} {Parts 1} {Bytes 7} "
                           "{Data eyJhIjoxfQ==}\r\n");
    ck_assert_int_eq(n, (int)strlen(line));
}
END_TEST

START_TEST(format_refuses)
{
    char *t = text_of(2 * RAW);
    ck_assert_int_eq(kn_usarworld_parts(0), 0);
    ck_assert_int_eq(kn_usarworld_parts(KN_USARWORLD_MAX), KN_USARWORLD_MAX_PARTS);
    ck_assert_int_eq(kn_usarworld_parts(KN_USARWORLD_MAX + 1), 0);
    ck_assert_int_eq(kn_usarworld_format(t, 2 * RAW, 2, line, sizeof line), -KN_USAR_EARG);
    ck_assert_int_eq(kn_usarworld_format(t, 2 * RAW, -1, line, sizeof line), -KN_USAR_EARG);
    ck_assert_int_eq(kn_usarworld_format(t, 0, 0, line, sizeof line), -KN_USAR_EARG);
    ck_assert_int_eq(kn_usarworld_format(t, 2 * RAW, 0, line, 200), -KN_USAR_ENOSPACE);
    free(t);
}
END_TEST

#define HEAD "KENAF {Cmd World} {Status OK} "

START_TEST(bad_parts)
{
    struct kn_usarworld_asm a = { 0 };
    /* no Data; Part beyond Parts; Parts that do not fit Bytes; too many */
    ck_assert_int_eq(feed_text(&a, HEAD "{Part 1} {Parts 1} {Bytes 3}"), KN_USARWORLD_EFIELD);
    ck_assert_int_eq(feed_text(&a, HEAD "{Part 2} {Parts 1} {Bytes 3} {Data YWJj}"),
                     KN_USARWORLD_EFIELD);
    ck_assert_int_eq(feed_text(&a, HEAD "{Part 1} {Parts 2} {Bytes 3} {Data YWJj}"),
                     KN_USARWORLD_EFIELD);
    ck_assert_int_eq(feed_text(&a, HEAD "{Part 1} {Parts 99} {Bytes 600000} {Data YWJj}"),
                     KN_USARWORLD_EFIELD);
    /* not base64; a NUL in it; bad padding; short of Bytes */
    ck_assert_int_eq(feed_text(&a, HEAD "{Part 1} {Parts 1} {Bytes 3} {Data YW$j}"),
                     KN_USARWORLD_EDATA);
    ck_assert_int_eq(feed_text(&a, HEAD "{Part 1} {Parts 1} {Bytes 3} {Data YQBi}"),
                     KN_USARWORLD_EDATA);
    ck_assert_int_eq(feed_text(&a, HEAD "{Part 1} {Parts 1} {Bytes 2} {Data YW=j}"),
                     KN_USARWORLD_EDATA);
    ck_assert_int_eq(feed_text(&a, HEAD "{Part 1} {Parts 1} {Bytes 3} {Data YWI=}"),
                     KN_USARWORLD_ELENGTH);
    /* white space, which a lenient decoder skips; padding alone; a group
     * after the padding */
    ck_assert_int_eq(feed_text(&a, HEAD "{Part 1} {Parts 1} {Bytes 2} {Data YW j}"),
                     KN_USARWORLD_EDATA);
    ck_assert_int_eq(feed_text(&a, HEAD "{Part 1} {Parts 1} {Bytes 1} {Data Y===}"),
                     KN_USARWORLD_EDATA);
    ck_assert_int_eq(feed_text(&a, HEAD "{Part 1} {Parts 1} {Bytes 4} {Data YQ==YWJj}"),
                     KN_USARWORLD_EDATA);
    ck_assert_ptr_null(a.buf);
    ck_assert_int_eq(feed_text(&a, HEAD "{Part 1} {Parts 1} {Bytes 3} {Data YWJj}"),
                     KN_USARWORLD_DONE);
    ck_assert_str_eq(a.buf, "abc");
    kn_usarworld_reset(&a);
}
END_TEST

START_TEST(order_and_restart)
{
    size_t len = 2 * RAW + 5;
    char *t = text_of(len);
    struct kn_usarworld_asm a = { 0 };
    /* a second part without its first */
    ck_assert_int_eq(feed_part(&a, t, len, 1), KN_USARWORLD_EORDER);
    /* a part skipped */
    ck_assert_int_eq(feed_part(&a, t, len, 0), KN_USARWORLD_MORE);
    ck_assert_int_eq(feed_part(&a, t, len, 2), KN_USARWORLD_EORDER);
    ck_assert_ptr_null(a.buf);
    /* a part of another answer (other Bytes) */
    char *u = text_of(len + 1);
    ck_assert_int_eq(feed_part(&a, t, len, 0), KN_USARWORLD_MORE);
    ck_assert_int_eq(feed_part(&a, u, len + 1, 1), KN_USARWORLD_EORDER);
    /* an answer cut short by a new one: the new one counts */
    ck_assert_int_eq(feed_part(&a, u, len + 1, 0), KN_USARWORLD_MORE);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(feed_part(&a, t, len, i), i == 2 ? KN_USARWORLD_DONE : KN_USARWORLD_MORE);
    ck_assert_int_eq(memcmp(a.buf, t, len), 0);
    kn_usarworld_reset(&a);
    for (int r = KN_USARWORLD_DONE; r <= KN_USARWORLD_ENOMEM; r++)
        ck_assert_str_ne(kn_usarworld_strerror((enum kn_usarworld_result)r), "unknown result");
    free(u);
    free(t);
}
END_TEST

static Suite *world_suite(void)
{
    Suite *s = suite_create("usarsim-world");
    TCase *c = tcase_create("world");
    tcase_add_loop_test(c, round_trip, 0, (int)(sizeof sizes / sizeof sizes[0]));
    tcase_add_test(c, exact_line);
    tcase_add_test(c, format_refuses);
    tcase_add_test(c, bad_parts);
    tcase_add_test(c, order_and_restart);
    suite_add_tcase(s, c);
    return s;
}

int main(void)
{
    return h_run_suite(world_suite());
}
