/* The built-in engine's world answer (docs/engine.md, "The world it
 * runs"): kenaf-simd asks an engine it reaches at an address with
 * `KENAF {Cmd World}`, and the engine answers with one JSON text, the
 * terrain it runs and its robot file, in parts:
 *
 *   KENAF {Cmd World} {Status OK} {Part i} {Parts n} {Bytes total} {Data b64}
 *
 * USARSim segments cannot hold braces, so the JSON goes base64-encoded,
 * KN_USARWORLD_CHUNK characters a line (within the link reader's
 * KN_USAR_MAX_LINE). Sans-I/O: the engine formats the lines, the daemon
 * reassembles them; both through the USARSim codec. */
#ifndef KN_USARSIM_WORLD_H
#define KN_USARSIM_WORLD_H

#include <stddef.h>

#include "usarsim_codec.h"

#define KN_USARWORLD_CHUNK 8192   /* base64 characters a line (6144 bytes of JSON) */
#define KN_USARWORLD_MAX_PARTS 24 /* a longer answer is refused by both sides */
#define KN_USARWORLD_MAX ((size_t)KN_USARWORLD_MAX_PARTS * (KN_USARWORLD_CHUNK / 4 * 3))
#define KN_USARWORLD_LINE_MAX (KN_USARWORLD_CHUNK + 160) /* one line, CR LF included */

enum kn_usarworld_result {
    KN_USARWORLD_DONE = 0, /* the last part came: the text is whole */
    KN_USARWORLD_MORE,     /* a part taken, more to come */
    KN_USARWORLD_EFIELD,   /* Part, Parts, Bytes or Data missing or out of range */
    KN_USARWORLD_EORDER,   /* a part out of order, or a different Parts/Bytes than part 1's */
    KN_USARWORLD_EDATA,    /* not base64, or it decodes to a NUL byte */
    KN_USARWORLD_ELENGTH,  /* the parts decode to more or fewer bytes than Bytes */
    KN_USARWORLD_ENOMEM,
};

/* Short English text for a result; never NULL. */
const char *kn_usarworld_strerror(enum kn_usarworld_result r);

/* Parts the text of len bytes takes; 0 when it is empty or longer than
 * KN_USARWORLD_MAX. */
int kn_usarworld_parts(size_t len);

/* Writes part i (0-based) of text as one line (CR LF included) into buf;
 * its length, or a negative enum kn_usar_result (i out of range:
 * KN_USAR_EARG; buf too small: KN_USAR_ENOSPACE). */
int kn_usarworld_format(const char *text, size_t len, int i, char *buf, size_t cap);

/* The reassembly of one answer. Zero it to start; kn_usarworld_reset
 * frees what it holds. */
struct kn_usarworld_asm {
    char *buf; /* the decoded text so far, NUL-terminated when done */
    size_t len, total;
    int next, parts; /* the part awaited (1-based), of how many */
};

/* One tokenized `KENAF {Cmd World} {Status OK}` line. A part 1 always
 * starts over (an answer cut short by a new one); an error drops what
 * was gathered. */
enum kn_usarworld_result kn_usarworld_feed(struct kn_usarworld_asm *a,
                                           const struct kn_usar_line *l);

/* After DONE: the text (len bytes, NUL-terminated), now the caller's to
 * free(); the assembler is empty again. */
char *kn_usarworld_take(struct kn_usarworld_asm *a, size_t *len);

void kn_usarworld_reset(struct kn_usarworld_asm *a);

#endif
