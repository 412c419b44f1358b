/* Sans-I/O line splitter for text links (the stand-in's JSON lines, the
 * USARSim protocol): accumulate bytes as they arrive from a stream, hand out
 * complete lines. Any of \n, \r\n or \r ends a line (a \r\n split across two
 * reads still counts as one end). Lines longer than the cap are discarded up
 * to their end and counted, so a peer that never sends an end of line cannot
 * grow memory. No allocation: the caller gives the storage. */
#ifndef KN_LINEBUF_H
#define KN_LINEBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kn_linebuf {
    char *buf;         /* caller's storage, cap + 1 bytes */
    size_t cap;        /* longest line kept, without its end of line */
    size_t len;        /* bytes of the current partial line */
    bool discarding;   /* current line overflowed: skip to its end */
    bool after_cr;     /* last byte seen was \r: a following \n belongs to it */
    uint64_t lines;    /* complete lines handed out */
    uint64_t overlong; /* lines dropped for exceeding cap */
};

/* Called for each complete line, without its end of line, NUL-terminated
 * (line[len] == '\0'; the line itself may contain NUL bytes). The pointer is
 * valid only during the call. Return false to stop feeding early. */
typedef bool (*kn_linebuf_fn)(void *ctx, char *line, size_t len);

/* storage must hold cap + 1 bytes; cap must be >= 1. */
void kn_linebuf_init(struct kn_linebuf *lb, char *storage, size_t cap);

/* Drops any partial line (after a reconnect); the counters stay. */
void kn_linebuf_reset(struct kn_linebuf *lb);

/* Feeds n bytes; calls fn for every line they complete. Returns the bytes
 * consumed: n, or fewer when fn returned false (the rest is not looked at;
 * feed it again to continue). */
size_t kn_linebuf_feed(struct kn_linebuf *lb, const char *data, size_t n, kn_linebuf_fn fn,
                       void *ctx);

#endif
