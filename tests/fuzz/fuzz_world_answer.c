/* libFuzzer target for what kenaf-simd makes of an engine's World answer
 * once its parts are put together (world_doc.h, kn_worlddoc_from_engine):
 * the text of a remote engine, JSON with a terrain (a heightfield's
 * samples among it) and a robot file, checked with the engine's own
 * loaders. Whatever the text, the answer is a description that parses as
 * JSON, or none with the reason in the note; never a crash or a leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "world_doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 18)
        return 0; /* longer than any World answer may be */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char note[512] = "";
    size_t len = 0;
    char *doc = kn_worlddoc_from_engine("engine", text, &len, note, sizeof note);
    if (doc) {
        if (len != strlen(doc))
            abort();
        cJSON *o = cJSON_Parse(doc);
        if (!o)
            abort();
        cJSON_Delete(o);
    }
    free(doc);
    free(text);
    return 0;
}
