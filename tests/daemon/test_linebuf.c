/* Unit tests of the line splitter (protocols/linebuf.c): every end of line,
 * splits across feeds, the length cap and its counter. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "linebuf.h"

static char got[64][128];
static int ngot;
static int stop_after = -1;

static bool collect(void *ctx, char *line, size_t len)
{
    (void)ctx;
    ck_assert_uint_eq(strlen(line), len);
    ck_assert_int_lt(ngot, 64);
    snprintf(got[ngot++], sizeof got[0], "%s", line);
    return stop_after < 0 || ngot < stop_after;
}

static struct kn_linebuf lb;
static char store[17];

static void setup(void)
{
    ngot = 0;
    stop_after = -1;
    kn_linebuf_init(&lb, store, 16);
}

static void feed(const char *s)
{
    ck_assert_uint_eq(kn_linebuf_feed(&lb, s, strlen(s), collect, NULL), strlen(s));
}

START_TEST(all_eols)
{
    feed("a\nb\r\nc\rd\n\ne");
    ck_assert_int_eq(ngot, 5);
    ck_assert_str_eq(got[0], "a");
    ck_assert_str_eq(got[1], "b");
    ck_assert_str_eq(got[2], "c");
    ck_assert_str_eq(got[3], "d");
    ck_assert_str_eq(got[4], "");
    feed("\n");
    ck_assert_int_eq(ngot, 6);
    ck_assert_str_eq(got[5], "e");
    ck_assert_uint_eq(lb.lines, 6);
}
END_TEST

START_TEST(split_across_feeds)
{
    feed("hel");
    feed("lo\r");
    ck_assert_int_eq(ngot, 1);
    feed("\nworld\r"); /* the \n finishes \r\n: no empty line */
    feed("\r\n");      /* \r then \r\n: one empty line */
    ck_assert_int_eq(ngot, 3);
    ck_assert_str_eq(got[0], "hello");
    ck_assert_str_eq(got[1], "world");
    ck_assert_str_eq(got[2], "");
    /* byte by byte */
    const char *s = "{\"a\":1}\r\nxy\n";
    for (size_t i = 0; i < strlen(s); i++)
        kn_linebuf_feed(&lb, s + i, 1, collect, NULL);
    ck_assert_int_eq(ngot, 5);
    ck_assert_str_eq(got[3], "{\"a\":1}");
    ck_assert_str_eq(got[4], "xy");
}
END_TEST

START_TEST(overlong_dropped_counted)
{
    feed("0123456789abcdef\n");      /* exactly the cap: kept */
    feed("0123456789abcdefX\nok\n"); /* one over: dropped */
    ck_assert_int_eq(ngot, 2);
    ck_assert_str_eq(got[0], "0123456789abcdef");
    ck_assert_str_eq(got[1], "ok");
    ck_assert_uint_eq(lb.overlong, 1);
    /* an endless line never grows memory and ends at the next EOL */
    for (int i = 0; i < 1000; i++)
        feed("xxxxxxxxxx");
    feed("\rnext\n");
    ck_assert_int_eq(ngot, 3);
    ck_assert_str_eq(got[2], "next");
    ck_assert_uint_eq(lb.overlong, 2);
}
END_TEST

START_TEST(stop_early_and_reset)
{
    stop_after = 1;
    const char *s = "one\ntwo\nthree\n";
    size_t used = kn_linebuf_feed(&lb, s, strlen(s), collect, NULL);
    ck_assert_uint_eq(used, 4);
    ck_assert_int_eq(ngot, 1);
    stop_after = -1;
    kn_linebuf_feed(&lb, s + used, strlen(s) - used, collect, NULL);
    ck_assert_int_eq(ngot, 3);
    feed("partial");
    kn_linebuf_reset(&lb);
    feed("new\n");
    ck_assert_str_eq(got[3], "new");
}
END_TEST

static bool check_len3(void *ctx, char *line, size_t len)
{
    (void)line;
    *(size_t *)ctx = len;
    return true;
}

START_TEST(nul_bytes_length)
{
    const char s[] = { 'a', 0, 'b', '\n' };
    size_t len = 0;
    kn_linebuf_feed(&lb, s, sizeof s, check_len3, &len);
    ck_assert_uint_eq(len, 3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("linebuf");
    TCase *tc = tcase_create("linebuf");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, all_eols);
    tcase_add_test(tc, split_across_feeds);
    tcase_add_test(tc, overlong_dropped_counted);
    tcase_add_test(tc, stop_early_and_reset);
    tcase_add_test(tc, nul_bytes_length);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
