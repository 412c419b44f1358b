/* gz-transport discovery datagrams (ignition-transport 8 and later, gz-
 * transport): a 2-byte length in the sender's byte order (little-endian on
 * every platform Gazebo ships for) followed by a protobuf Discovery message
 * of that many bytes. Sans-I/O: bytes in, a flat struct out, and back.
 * Facts and field numbers: docs/gz.md#discovery. */
#ifndef KN_GZT_DISC_H
#define KN_GZT_DISC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pbarena.h"

/* The wire version ignition-transport 11 and gz-transport put in every
 * message; a receiver ignores other versions (+100 when the sender runs
 * with topic statistics). */
#define KN_GZT_WIRE_VERSION 10u
#define KN_GZT_MCAST_GROUP "239.255.0.7"
#define KN_GZT_MSG_DISC_PORT 10317 /* topics */
#define KN_GZT_SRV_DISC_PORT 10318 /* services */
#define KN_GZT_HEARTBEAT_MS 1000   /* heartbeat and re-advertise period */
#define KN_GZT_SILENCE_MS 3000     /* a process silent this long is gone */
#define KN_GZT_DISC_MAX 65535u     /* largest datagram a receiver reads */

enum kn_gzt_disc_type {
    KN_GZT_UNINITIALIZED = 0,
    KN_GZT_ADVERTISE = 1,
    KN_GZT_SUBSCRIBE = 2,
    KN_GZT_UNADVERTISE = 3,
    KN_GZT_HEARTBEAT = 4,
    KN_GZT_BYE = 5,
    KN_GZT_NEW_CONNECTION = 6,
    KN_GZT_END_CONNECTION = 7,
};

enum kn_gzt_scope { KN_GZT_SCOPE_PROCESS = 0, KN_GZT_SCOPE_HOST = 1, KN_GZT_SCOPE_ALL = 2 };

enum kn_gzt_pub_kind { KN_GZT_PUB_NONE = 0, KN_GZT_PUB_MSG = 6, KN_GZT_PUB_SRV = 7 };

#define KN_GZT_NAME_MAX 256 /* topics, addresses, type names we keep */
#define KN_GZT_UUID_MAX 64

/* One discovery message, flattened. Strings are NUL-terminated copies. */
struct kn_gzt_disc {
    uint32_t version;
    uint32_t type; /* enum kn_gzt_disc_type, or unknown */
    char process_uuid[KN_GZT_UUID_MAX];
    bool relay, no_relay; /* flags */
    bool has_sub;         /* SUBSCRIBE: sub.topic */
    char sub_topic[KN_GZT_NAME_MAX];
    bool has_pub; /* ADVERTISE, UNADVERTISE, *_CONNECTION */
    struct {
        char topic[KN_GZT_NAME_MAX]; /* fully qualified: @/partition@/topic */
        char address[KN_GZT_NAME_MAX];
        char process_uuid[KN_GZT_UUID_MAX];
        char node_uuid[KN_GZT_UUID_MAX];
        uint32_t scope; /* enum kn_gzt_scope */
        enum kn_gzt_pub_kind kind;
        /* KN_GZT_PUB_MSG */
        char ctrl[KN_GZT_NAME_MAX];
        char msg_type[KN_GZT_NAME_MAX];
        bool throttled;
        uint64_t msgs_per_sec;
        /* KN_GZT_PUB_SRV */
        char socket_id[KN_GZT_UUID_MAX];
        char req_type[KN_GZT_NAME_MAX];
        char rep_type[KN_GZT_NAME_MAX];
    } pub;
};

enum kn_gzt_disc_err {
    KN_GZT_DISC_OK = 0,
    KN_GZT_DISC_ESHORT = -1,   /* fewer than 2 bytes */
    KN_GZT_DISC_ELENGTH = -2,  /* the length prefix is not the rest's length */
    KN_GZT_DISC_EPROTO = -3,   /* the body is no Discovery message */
    KN_GZT_DISC_ETOOLONG = -4, /* a string longer than we keep */
};

/* Decodes one datagram; the arena is reset first. Returns KN_GZT_DISC_OK
 * or the first rule the datagram breaks (out then undefined). A version
 * or type the caller does not know is decoded, not refused. */
int kn_gzt_disc_decode(struct kn_pbarena *a, const uint8_t *buf, size_t len,
                       struct kn_gzt_disc *out);
const char *kn_gzt_disc_strerror(int err);
const char *kn_gzt_disc_type_name(uint32_t type);

/* Encodes d as the real library does: version, type, process_uuid; sub
 * for SUBSCRIBE; pub for ADVERTISE, UNADVERTISE and the *_CONNECTION
 * types; nothing more for HEARTBEAT and BYE; flags only when set. Returns
 * the datagram length, 0 when it does not fit in cap. */
size_t kn_gzt_disc_encode(uint8_t *buf, size_t cap, const struct kn_gzt_disc *d);

#endif
