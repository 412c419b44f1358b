/* A decoding arena for protobuf-c: a bump allocator that protobuf-c
 * unpacks into, so a decoder allocates nothing on the hot path and a
 * hostile message can use at most the arena. Both protobuf codecs share
 * it: Gazebo Classic's (gazebo_classic/) and gz-transport's (gzt/).
 * Sans-I/O; the caller owns the storage. */
#ifndef KN_PBARENA_H
#define KN_PBARENA_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

/* Frees are no-ops; reset between frames. An exhausted arena makes the
 * unpack fail (counted). */
struct kn_pbarena {
    ProtobufCAllocator pa;
    uint8_t *buf;
    size_t cap, used;
    uint64_t exhausted;
};

/* storage must hold cap bytes and be aligned for any type (malloc). */
void kn_pbarena_init(struct kn_pbarena *a, void *storage, size_t cap);
void kn_pbarena_reset(struct kn_pbarena *a);

/* Unpacks one message of type d into the arena (not reset: a Packet and
 * its inner message can live side by side). NULL for malformed bytes,
 * a missing required field or an exhausted arena. */
ProtobufCMessage *kn_pbarena_unpack(struct kn_pbarena *a, const ProtobufCMessageDescriptor *d,
                                    const uint8_t *data, size_t len);

#endif
