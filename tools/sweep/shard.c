/* Shards: the cases at 0-based index i with i % N == K-1 form shard K of
 * N, so N machines each run one and --merge joins them. */
#include "sweep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static int parse_int(const char *s, const char *end, long *out)
{
    if (s == end || end - s > 6)
        return -1;
    long v = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}

int kn_sweep_shard_parse(const char *s, int *k, int *n, char *err, size_t errlen)
{
    const char *slash = s;
    while (*slash && *slash != '/')
        slash++;
    const char *end = slash;
    while (*end)
        end++;
    long kk, nn;
    if (*slash != '/' || parse_int(s, slash, &kk) || parse_int(slash + 1, end, &nn)) {
        snprintf(err, errlen, "--shard %s: want K/N, e.g. 2/4", s);
        return -1;
    }
    if (nn < 1 || kk < 1 || kk > nn) {
        snprintf(err, errlen, "--shard %s: K must be 1..N and N at least 1", s);
        return -1;
    }
    *k = (int)kk;
    *n = (int)nn;
    return 0;
}

int kn_sweep_in_shard(size_t i, int k, int n)
{
    return n <= 1 || (int)(i % (size_t)n) == k - 1;
}
