/* libFuzzer target for the engine's World answer (usarsim_world.h), what
 * kenaf-simd reassembles from an engine at an address: the input is
 * lines, each tokenized and fed to one assembler as the daemon feeds its
 * KENAF {Cmd World} lines. A finished text must be exactly Bytes long,
 * without a NUL; whatever it is, formatted again it reads back the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "usarsim_world.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct kn_usar_line line;
static char out[KN_USARWORLD_LINE_MAX];

static void round_trip(const char *text, size_t len)
{
    struct kn_usarworld_asm a = { 0 };
    int parts = kn_usarworld_parts(len);
    for (int i = 0; i < parts; i++) {
        int n = kn_usarworld_format(text, len, i, out, sizeof out);
        if (n <= 0 || kn_usar_tokenize(out, (size_t)n, &line) != KN_USAR_OK)
            abort();
        enum kn_usarworld_result r = kn_usarworld_feed(&a, &line);
        if (r != (i + 1 == parts ? KN_USARWORLD_DONE : KN_USARWORLD_MORE))
            abort();
    }
    size_t back_len;
    char *back = kn_usarworld_take(&a, &back_len);
    if (back_len != len || memcmp(back, text, len) != 0)
        abort();
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kn_usarworld_asm a = { 0 };
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (kn_usar_tokenize(p, n, &line) == KN_USAR_OK) {
            enum kn_usarworld_result r = kn_usarworld_feed(&a, &line);
            if (!kn_usarworld_strerror(r)[0])
                abort();
            if (r == KN_USARWORLD_DONE) {
                size_t len;
                char *text = kn_usarworld_take(&a, &len);
                if (!text || len == 0 || strlen(text) != len)
                    abort();
                round_trip(text, len);
                free(text);
            }
        }
        p += n + 1;
    }
    kn_usarworld_reset(&a);
    return 0;
}
