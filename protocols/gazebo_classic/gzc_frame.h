/* Sans-I/O framer of the Gazebo Classic transport (docs/gazebo.md;
 * gazebo/transport/Connection.cc): every frame on every connection is 8 ASCII hex digits
 * giving the payload length, then the payload. Bytes go in as they arrive
 * from a stream (one read may hold several frames, or a part of one);
 * complete payloads come out. A bad header (not hex, zero length) or a
 * payload over the cap stops the framer: the stream cannot be resynced,
 * so the caller counts it and resets the connection. No allocation: the
 * caller gives the storage for a frame that arrives in pieces. */
#ifndef KN_GZC_FRAME_H
#define KN_GZC_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KN_GZC_HEADER_LEN 8
/* The header can say up to 0xffffffff; nothing real comes near this. */
#define KN_GZC_FRAME_MAX (16u * 1024u * 1024u)

enum kn_gzc_frame_err {
    KN_GZC_FRAME_OK = 0,
    KN_GZC_FRAME_EHEX,    /* a header byte is not a hex digit */
    KN_GZC_FRAME_EEMPTY,  /* header 00000000: Gazebo never sends an empty payload */
    KN_GZC_FRAME_ETOOBIG, /* payload longer than the cap */
};

struct kn_gzc_framer {
    uint8_t *buf; /* caller's storage, cap bytes */
    size_t cap;   /* longest payload accepted */
    char hdr[KN_GZC_HEADER_LEN];
    size_t hlen;               /* header bytes seen of the current frame */
    size_t need;               /* payload length of the current frame (0: in header) */
    size_t have;               /* payload bytes stored so far */
    enum kn_gzc_frame_err err; /* set: the framer stopped; reset to go on */
    uint64_t frames;           /* complete payloads handed out */
    uint64_t bytes;            /* payload bytes handed out */
    uint64_t errors;           /* times the framer stopped */
};

/* Called for each complete payload; the pointer is valid only during the
 * call (it may point into the caller's input). Return false to stop
 * feeding early. */
typedef bool (*kn_gzc_frame_fn)(void *ctx, const uint8_t *payload, size_t len);

/* storage must hold cap bytes; 1 <= cap <= KN_GZC_FRAME_MAX. */
void kn_gzc_framer_init(struct kn_gzc_framer *f, uint8_t *storage, size_t cap);

/* Forgets any partial frame and a stop (after a reconnect); the counters stay. */
void kn_gzc_framer_reset(struct kn_gzc_framer *f);

/* Feeds n bytes; calls fn for every frame they complete. Returns the bytes
 * consumed: n, or fewer when fn returned false or the framer stopped
 * (then f->err says why). A stopped framer consumes nothing. */
size_t kn_gzc_framer_feed(struct kn_gzc_framer *f, const uint8_t *data, size_t n,
                          kn_gzc_frame_fn fn, void *ctx);

const char *kn_gzc_frame_strerror(enum kn_gzc_frame_err e);

/* Writes the header for a payload of len bytes ("%08x"); 0 < len <= 0xffffffff. */
void kn_gzc_frame_header(char out[KN_GZC_HEADER_LEN], size_t len);

#endif
