/* libFuzzer target for the sweep file's parser and expansion
 * (tools/sweep): any bytes are taken or refused with a one-line reason;
 * what is taken expands within max_cases into cases whose ids are unique
 * and whose canonical strings name every parameter. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kn_sweep sw;
    char err[1024];
    static const char *const terrains[] = { "step", "trench", "stairs", "ramp", "rough" };
    if (kn_sweep_parse((const char *)data, size, &sw, err, sizeof err) != 0) {
        if (!err[0] || strchr(err, '\n'))
            abort(); /* a refusal says why, on one line */
        kn_sweep_free(&sw);
        return 0;
    }
    (void)kn_sweep_check_terrain(&sw, terrains[size % 5], err, sizeof err);
    if (kn_sweep_expand(&sw, err, sizeof err) != 0) {
        if (!err[0])
            abort();
        kn_sweep_free(&sw);
        return 0;
    }
    if (sw.ncases == 0 || sw.ncases > (size_t)sw.max_cases)
        abort();
    char canon[2048];
    for (size_t i = 0; i < sw.ncases; i++) {
        if (strlen(sw.cases[i].id) != KN_SWEEP_ID_LEN)
            abort();
        kn_sweep_canonical(&sw, &sw.cases[i], canon, sizeof canon);
        if (!strstr(canon, sw.params[0].known->name))
            abort();
    }
    (void)kn_sweep_hash(&sw, (const char *)data, size);
    kn_sweep_free(&sw);
    return 0;
}
