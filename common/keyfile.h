/* A shared key from a key file (docs/protocol.md "Extension: shared key"):
 * hex text, read only when the file passes kn_filetrust's SECRET rule
 * (owned by root or the reader, no access for group and others), so a key
 * others could read or swap is refused before it is used. */
#ifndef KN_KEYFILE_H
#define KN_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#define KN_KEYFILE_MIN 32 /* bytes: as long as SHA-256's output (RFC 2104's advice) */
#define KN_KEYFILE_MAX 64 /* SHA-256's block: a longer key would only be hashed first */

/* Key bytes from text: hex digits, any whitespace between them ignored,
 * 64 to 128 digits. key has room for KN_KEYFILE_MAX. 0, or -1 with *why. */
int kn_keyfile_parse(const char *text, size_t len, uint8_t *key, size_t *keylen, char *why,
                     size_t whylen);

/* Open path, check its owner and mode on the open file, read and parse it.
 * 0, or -1 with *why naming the path and what is wrong (errno text, owner
 * and mode against what is expected, or the parse error). */
int kn_keyfile_read(const char *path, uint8_t *key, size_t *keylen, char *why, size_t whylen);

#endif
