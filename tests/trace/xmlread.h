/* A strict reader for the XML the plot writer produces, for its tests: it
 * refuses what an XML parser refuses (bad nesting, a duplicate or
 * unquoted attribute, a raw '&' or '<', an unknown entity, invalid UTF-8,
 * control characters, text outside the root) and keeps every element
 * with its attributes and text (entities decoded) in document order. No
 * DTDs, no CDATA: the writer makes neither. */
#ifndef KN_TEST_XMLREAD_H
#define KN_TEST_XMLREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define X_MAX_ATTR 24

struct x_elem {
    char name[32];
    int nattr;
    char *attr_name[X_MAX_ATTR];
    char *attr_value[X_MAX_ATTR];
    char *text; /* the element's own character data, concatenated */
    int parent; /* index, -1 for the root */
};

struct x_doc {
    struct x_elem *e;
    int n, cap;
    char err[256]; /* why x_parse refused, with the byte offset */
};

/* 0, or -1 with the reason in d->err. x_free in either case. */
int x_parse(const char *buf, size_t len, struct x_doc *d);
void x_free(struct x_doc *d);

/* The attribute's value or NULL. */
const char *x_attr(const struct x_elem *e, const char *name);
/* True when the class attribute holds word (space-separated). */
bool x_class(const struct x_elem *e, const char *word);
/* True when element i is inside an element that has class word. */
bool x_within(const struct x_doc *d, int i, const char *word);
/* The next element from index from on with class word (and tag name,
 * unless NULL); -1 when none. */
int x_find(const struct x_doc *d, int from, const char *name, const char *word);
/* How many elements have class word. */
int x_count(const struct x_doc *d, const char *word);

/* Reads a whole file, or a stream from its start (a tmpfile a writer
 * wrote); NUL-terminated, NULL (errno set) on failure. Caller frees. */
char *x_read_file(const char *path, size_t *len);
char *x_read_stream(FILE *f, size_t *len);

#endif
