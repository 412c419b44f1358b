/* Finding the runnable shell blocks of a Markdown document: a fenced block
 * opened by a line "```sh" right after a line "<!-- doctest -->" (or
 * "<!-- doctest: OPTIONS -->", OPTIONS being "needs=daemon" and
 * "timeout=SECONDS", blank-separated). Other fences, and markers inside
 * fences, are text. A marker that is not followed by a ```sh fence, an
 * unknown option, or a fence that is never closed makes the document
 * wrong: better a failing test than a block that silently stops being run.
 * The docs test (test_docs.c) runs what this finds. */
#ifndef KN_DOCTEST_H
#define KN_DOCTEST_H

#include <stdbool.h>
#include <stddef.h>

struct kn_doctest_block {
    char file[256];    /* the document's name, as given */
    int line;          /* 1-based line of the opening ```sh fence */
    char *text;        /* the lines between the fences, each ending in '\n' */
    bool needs_daemon; /* needs=daemon: kenaf-simd (no flags) runs and is ready first */
    int timeout_s;     /* timeout=N, or 0 for the runner's default */
};

struct kn_doctest_list {
    struct kn_doctest_block *v;
    size_t n, cap;
};

/* Appends the runnable blocks of the document `text` (named `name` in
 * blocks and messages) to `out`. Returns 0, or -1 with "NAME:LINE: what is
 * wrong" in err (blocks found before the problem stay in `out`). */
int kn_doctest_extract(const char *name, const char *text, struct kn_doctest_list *out, char *err,
                       size_t errlen);

/* Reads the file at `path` and extracts its blocks as above, naming them
 * `name`. -1 with the reason in err when it cannot be read. */
int kn_doctest_extract_file(const char *path, const char *name, struct kn_doctest_list *out,
                            char *err, size_t errlen);

void kn_doctest_free(struct kn_doctest_list *l);

#endif
