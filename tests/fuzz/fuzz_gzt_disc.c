/* libFuzzer target for gz-transport discovery datagrams (protocols/gzt/
 * gzt_disc.h). Any bytes are decoded or refused with a reason; whatever
 * decodes re-encodes to a datagram that decodes to the same struct, and
 * that encoding is a fixed point. Nothing may crash, leak or read outside
 * the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gzt_disc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t arena_mem[1 << 20];
static struct kn_pbarena arena;
static bool ready;
static uint8_t enc1[KN_GZT_DISC_MAX + 2], enc2[KN_GZT_DISC_MAX + 2];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        kn_pbarena_init(&arena, arena_mem, sizeof arena_mem);
        ready = true;
    }
    static struct kn_gzt_disc d, d2;
    int rc = kn_gzt_disc_decode(&arena, data, size, &d);
    if (rc != KN_GZT_DISC_OK) {
        if (!kn_gzt_disc_strerror(rc)[0])
            abort();
        return 0;
    }
    (void)kn_gzt_disc_type_name(d.type);
    /* what we re-encode: the fields the encoder writes for this type */
    if (d.type != KN_GZT_SUBSCRIBE)
        d.has_sub = false, d.sub_topic[0] = '\0';
    bool with_pub = d.type == KN_GZT_ADVERTISE || d.type == KN_GZT_UNADVERTISE ||
                    d.type == KN_GZT_NEW_CONNECTION || d.type == KN_GZT_END_CONNECTION;
    if (!with_pub)
        memset(&d.pub, 0, sizeof d.pub), d.has_pub = false;
    size_t n1 = kn_gzt_disc_encode(enc1, sizeof enc1, &d);
    if (n1 == 0)
        abort(); /* every decoded struct fits: its strings came from the input */
    if (kn_gzt_disc_decode(&arena, enc1, n1, &d2) != KN_GZT_DISC_OK)
        abort();
    size_t n2 = kn_gzt_disc_encode(enc2, sizeof enc2, &d2);
    if (n1 != n2 || memcmp(enc1, enc2, n1) != 0)
        abort();
    if (d2.version != d.version || d2.type != d.type ||
        strcmp(d2.process_uuid, d.process_uuid) != 0)
        abort();
    return 0;
}
