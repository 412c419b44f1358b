/* libFuzzer target for the KRP/1 decoder: any bytes decode to a defined
 * result, and what decodes re-encodes to a datagram that decodes the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "krp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kn_krp_msg m, again;
    enum kn_krp_result r = kn_krp_decode(data, size, &m);
    if (r != KN_KRP_OK) {
        if (r != KN_KRP_EMAGIC && kn_krp_error_code(r) == 0)
            abort(); /* every envelope fault must map to an ERROR code */
        return 0;
    }
    uint8_t buf[KN_KRP_MAX_DGRAM];
    size_t n = kn_krp_encode(&m, buf, sizeof buf);
    if (n != size)
        abort();
    if (kn_krp_decode(buf, n, &again) != KN_KRP_OK)
        abort();
    if (memcmp(&m, &again, sizeof m) != 0)
        abort();
    return 0;
}
