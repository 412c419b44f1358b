/* Line splitter: see linebuf.h. One pass over the input, copying only the
 * bytes of the line being assembled. */
#include "linebuf.h"

#include <string.h>

void kn_linebuf_init(struct kn_linebuf *lb, char *storage, size_t cap)
{
    memset(lb, 0, sizeof *lb);
    lb->buf = storage;
    lb->cap = cap;
    lb->buf[0] = '\0';
}

void kn_linebuf_reset(struct kn_linebuf *lb)
{
    lb->len = 0;
    lb->discarding = false;
    lb->after_cr = false;
    lb->buf[0] = '\0';
}

/* Ends the current line; returns what the callback said. */
static bool end_line(struct kn_linebuf *lb, kn_linebuf_fn fn, void *ctx)
{
    bool go_on = true;
    if (lb->discarding) {
        lb->overlong++;
    } else {
        lb->buf[lb->len] = '\0';
        lb->lines++;
        go_on = fn(ctx, lb->buf, lb->len);
    }
    lb->len = 0;
    lb->discarding = false;
    return go_on;
}

/* Offset of the first CR or LF in d[0..n), or n. Two memchr calls
 * bounded by each other's result keep it one pass over the run. */
static size_t next_eol(const char *d, size_t n)
{
    const char *lf = memchr(d, '\n', n);
    size_t end = lf ? (size_t)(lf - d) : n;
    const char *cr = memchr(d, '\r', end);
    return cr ? (size_t)(cr - d) : end;
}

size_t kn_linebuf_feed(struct kn_linebuf *lb, const char *data, size_t n, kn_linebuf_fn fn,
                       void *ctx)
{
    size_t i = 0;
    while (i < n) {
        char c = data[i];
        if (lb->after_cr) {
            lb->after_cr = false;
            if (c == '\n') { /* second half of \r\n */
                i++;
                continue;
            }
        }
        if (c == '\n' || c == '\r') {
            lb->after_cr = (c == '\r');
            i++;
            if (!end_line(lb, fn, ctx))
                return i;
            continue;
        }
        /* Copy the run of ordinary bytes up to the next end of line,
         * found with memchr: a byte loop here is most of what a long
         * run costs, under coverage instrumentation above all. */
        size_t j = next_eol(data + i, n - i) + i;
        size_t run = j - i;
        if (!lb->discarding) {
            if (run > lb->cap - lb->len) {
                lb->discarding = true;
                lb->len = 0;
            } else {
                memcpy(lb->buf + lb->len, data + i, run);
                lb->len += run;
            }
        }
        i = j;
    }
    return n;
}
