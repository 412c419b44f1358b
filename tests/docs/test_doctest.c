/* The doctest extractor (doctest.h) on small documents: which blocks it
 * finds, where, with which options, and which documents it refuses. */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "doctest.h"
#include "harness_suite.h"

static struct kn_doctest_list list;
static char err[512];

static int extract(const char *text)
{
    kn_doctest_free(&list);
    err[0] = '\0';
    return kn_doctest_extract("doc.md", text, &list, err, sizeof err);
}

static void teardown(void)
{
    kn_doctest_free(&list);
}

START_TEST(marked_blocks_only)
{
    const char *doc = "# Title\n" /* 1 */
                      "\n"        /* 2 */
                      "```sh\n"   /* 3: not marked */
                      "echo not run\n"
                      "```\n"
                      "<!-- doctest -->\n" /* 6 */
                      "```sh\n"            /* 7 */
                      "echo one\n"
                      "echo two\n"
                      "```\n"
                      "text\n"
                      "<!-- doctest: needs=daemon timeout=120 -->\n" /* 12 */
                      "```sh\n"                                      /* 13 */
                      "build/main/daemon/kenaf-simd --stats\n"
                      "```\n";
    ck_assert_int_eq(extract(doc), 0);
    ck_assert_uint_eq(list.n, 2);
    ck_assert_str_eq(list.v[0].file, "doc.md");
    ck_assert_int_eq(list.v[0].line, 7);
    ck_assert_str_eq(list.v[0].text, "echo one\necho two\n");
    ck_assert(!list.v[0].needs_daemon);
    ck_assert_int_eq(list.v[0].timeout_s, 0);
    ck_assert_int_eq(list.v[1].line, 13);
    ck_assert_str_eq(list.v[1].text, "build/main/daemon/kenaf-simd --stats\n");
    ck_assert(list.v[1].needs_daemon);
    ck_assert_int_eq(list.v[1].timeout_s, 120);
}
END_TEST

START_TEST(fences_are_text)
{
    /* A marker inside a fence is an example, not a marker; a longer fence
     * holds a shorter one; CR LF line ends; an indented fence in a list. */
    const char *doc = "````markdown\r\n"
                      "<!-- doctest -->\r\n"
                      "```sh\r\n"
                      "echo inside\r\n"
                      "```\r\n"
                      "````\r\n"
                      "- item\r\n"
                      "\r\n"
                      "  ```sh\r\n"
                      "  <!-- doctest -->\r\n"
                      "  ```\r\n"
                      "<!-- doctest -->\r\n"
                      "```sh\r\n"
                      "echo outside\r\n"
                      "```\r\n";
    ck_assert_int_eq(extract(doc), 0);
    ck_assert_uint_eq(list.n, 1);
    ck_assert_int_eq(list.v[0].line, 13);
    ck_assert_str_eq(list.v[0].text, "echo outside\n");
}
END_TEST

START_TEST(no_blocks)
{
    ck_assert_int_eq(extract("just text\n```\ncode\n```\n"), 0);
    ck_assert_uint_eq(list.n, 0);
}
END_TEST

START_TEST(unterminated_fence)
{
    ck_assert_int_eq(extract("text\n\n```sh\necho never closed\n"), -1);
    ck_assert_str_eq(err, "doc.md:3: the fence opened here is never closed");
    ck_assert_int_eq(extract("<!-- doctest -->\n```sh\necho never closed\n``\n"), -1);
    ck_assert_str_eq(err, "doc.md:2: the fence opened here is never closed");
    /* a closing fence needs at least as many characters */
    ck_assert_int_eq(extract("````\n```\n"), -1);
    ck_assert_str_eq(err, "doc.md:1: the fence opened here is never closed");
}
END_TEST

START_TEST(marker_without_sh_fence)
{
    ck_assert_int_eq(extract("<!-- doctest -->\n\n```sh\necho x\n```\n"), -1);
    ck_assert_str_eq(err,
                     "doc.md:1: doctest marker not followed by a ```sh fence on the next line");
    ck_assert_int_eq(extract("a\n<!-- doctest -->\n```bash\necho x\n```\n"), -1);
    ck_assert_str_eq(err,
                     "doc.md:2: doctest marker not followed by a ```sh fence on the next line");
    ck_assert_int_eq(extract("<!-- doctest -->\n"), -1);
    ck_assert_str_eq(err,
                     "doc.md:1: doctest marker not followed by a ```sh fence on the next line");
}
END_TEST

START_TEST(bad_markers)
{
    ck_assert_int_eq(extract("<!-- doctest: needs=simulator -->\n```sh\necho\n```\n"), -1);
    ck_assert_str_eq(err, "doc.md:1: unknown doctest option \"needs=simulator\" "
                          "(expected needs=daemon, timeout=N)");
    ck_assert_int_eq(extract("<!-- doctest: timeout=0 -->\n```sh\necho\n```\n"), -1);
    ck_assert_str_eq(err, "doc.md:1: doctest option timeout=0: expected seconds 1..3600");
    ck_assert_int_eq(extract("<!-- doctest: timeout=9x -->\n```sh\necho\n```\n"), -1);
    ck_assert_int_eq(extract("<!-- doctests -->\n```sh\necho\n```\n"), -1);
    ck_assert_ptr_nonnull(strstr(err, "doc.md:1: malformed doctest marker"));
    ck_assert_int_eq(extract("<!-- doctest\n```sh\necho\n```\n"), -1);
    ck_assert_ptr_nonnull(strstr(err, "malformed doctest marker"));
    ck_assert_int_eq(extract("<!-- doctest -->\n```sh\n```\n"), -1);
    ck_assert_str_eq(err, "doc.md:2: the doctest block is empty");
}
END_TEST

START_TEST(blocks_before_a_problem_stay)
{
    ck_assert_int_eq(extract("<!-- doctest -->\n```sh\necho a\n```\n```\n"), -1);
    ck_assert_uint_eq(list.n, 1);
    ck_assert_str_eq(err, "doc.md:5: the fence opened here is never closed");
}
END_TEST

START_TEST(missing_file)
{
    struct kn_doctest_list l = { 0 };
    ck_assert_int_eq(kn_doctest_extract_file("/nonexistent/x.md", "x.md", &l, err, sizeof err), -1);
    ck_assert_str_eq(err, "/nonexistent/x.md: No such file or directory");
    kn_doctest_free(&l);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("doctest");
    TCase *tc = tcase_create("extract");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, marked_blocks_only);
    tcase_add_test(tc, fences_are_text);
    tcase_add_test(tc, no_blocks);
    tcase_add_test(tc, unterminated_fence);
    tcase_add_test(tc, marker_without_sh_fence);
    tcase_add_test(tc, bad_markers);
    tcase_add_test(tc, blocks_before_a_problem_stay);
    tcase_add_test(tc, missing_file);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
