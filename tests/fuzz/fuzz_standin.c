/* libFuzzer target for the stand-in link's line parser: any bytes give a
 * defined kind, a malformed line says why, and a parsed state is finite. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "backend_standin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kn_state s, merged = { 0 };
    const char *why = NULL;
    enum kn_standin_kind k = kn_standin_parse((const char *)data, size, &s, &why);
    if (k == KN_STANDIN_MALFORMED && (why == NULL || why[0] == '\0'))
        abort();
    if (k != KN_STANDIN_STATE)
        return 0;
    kn_standin_merge(&merged, &s);
    const double *v = (const double *)&merged;
    for (size_t i = 0; i < offsetof(struct kn_state, have) / sizeof(double); i++)
        if (!isfinite(v[i]))
            abort(); /* a non-finite number must be refused, not passed on */
    return 0;
}
