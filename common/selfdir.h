/* The directory of the running executable, for a program that finds its
 * companions beside it: kenaf-simd its engine and its backend modules, in
 * a build tree and in an install alike. */
#ifndef KN_SELFDIR_H
#define KN_SELFDIR_H

#include <stddef.h>

/* /proc/self/exe without its last component ("/usr/bin"); 0, or -1 when
 * it cannot be read or does not fit in len. */
int kn_selfdir_get(char *out, size_t len);

#endif
