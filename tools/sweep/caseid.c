/* Case ids and the sweep's hash: the canonical assignment string
 * "name=value;..." in the sweep's parameter order (numbers %.10g after
 * rounding to 1e-9, strings as they are), its FNV-1a 64, the id its first
 * 10 hex digits. The same case has the same id in every run, shard and
 * machine. */
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

uint64_t kn_sweep_fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

double kn_sweep_round9(double v)
{
    double r = round(v * 1e9) / 1e9;
    return r == 0 ? 0.0 : r; /* no "-0" */
}

void kn_sweep_value_text(const struct kn_sweep *sw, int p, double v, char *out, size_t outlen)
{
    const struct kn_sweep_param *pa = &sw->params[p];
    if (pa->known->is_string)
        snprintf(out, outlen, "%s", pa->strs[(size_t)v]);
    else
        snprintf(out, outlen, "%.10g", kn_sweep_round9(v));
}

size_t kn_sweep_canonical(const struct kn_sweep *sw, const struct kn_sweep_case *c, char *out,
                          size_t outlen)
{
    size_t n = 0;
    out[0] = '\0';
    for (int p = 0; p < sw->nparams && n + 1 < outlen; p++) {
        char val[64];
        kn_sweep_value_text(sw, p, c->v[p], val, sizeof val);
        int w =
            snprintf(out + n, outlen - n, "%s%s=%s", p ? ";" : "", sw->params[p].known->name, val);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    return n < outlen ? n : outlen - 1;
}

uint64_t kn_sweep_hash(const struct kn_sweep *sw, const char *scen, size_t scenlen)
{
    uint64_t h = kn_sweep_fnv(KN_SWEEP_FNV_INIT, sw->name, strlen(sw->name) + 1);
    h = kn_sweep_fnv(h, scen, scenlen);
    char var[32];
    int w = snprintf(var, sizeof var, "#%d", sw->variant);
    h = kn_sweep_fnv(h, var, (size_t)w + 1);
    char canon[2048];
    for (size_t i = 0; i < sw->ncases; i++) {
        size_t n = kn_sweep_canonical(sw, &sw->cases[i], canon, sizeof canon);
        /* the string, then its NUL as a byte of its own */
        h = kn_sweep_fnv(h, canon, n);
        h = kn_sweep_fnv(h, "", 1);
    }
    return h;
}
