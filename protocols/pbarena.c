/* The protobuf-c decoding arena: see pbarena.h. */
#include "pbarena.h"

#include <stdalign.h>
#include <string.h>

#define ARENA_ALIGN alignof(max_align_t)

static void *arena_alloc(void *data, size_t size)
{
    struct kn_pbarena *a = data;
    size_t at = (a->used + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (size == 0)
        size = 1;
    if (at > a->cap || size > a->cap - at) {
        a->exhausted++;
        return NULL;
    }
    a->used = at + size;
    return a->buf + at;
}

static void arena_free(void *data, void *p)
{
    (void)data;
    (void)p;
}

void kn_pbarena_init(struct kn_pbarena *a, void *storage, size_t cap)
{
    memset(a, 0, sizeof *a);
    a->buf = storage;
    a->cap = cap;
    a->pa.alloc = arena_alloc;
    a->pa.free = arena_free;
    a->pa.allocator_data = a;
}

void kn_pbarena_reset(struct kn_pbarena *a)
{
    a->used = 0;
}

ProtobufCMessage *kn_pbarena_unpack(struct kn_pbarena *a, const ProtobufCMessageDescriptor *d,
                                    const uint8_t *data, size_t len)
{
    ProtobufCMessage *m = protobuf_c_message_unpack(d, &a->pa, len, data);
    /* protobuf-c checks required fields on unpack; check again so a
     * future protobuf-c that does not cannot hand out NULL strings. */
    if (m && !protobuf_c_message_check(m))
        return NULL;
    return m;
}
