/* gz-transport on ZeroMQ, sans-I/O: the fully qualified topic names
 * ("@/partition@/topic"), the two message type-name families
 * ("ignition.msgs.X" up to Fortress, "gz.msgs.X" from Garden on), and the
 * layouts of the multipart messages nodes exchange:
 *   publish   (PUB -> SUB):        topic, sender address, data, type
 *   control   (-> publisher ctrl): topic, process uuid, node uuid, type, "6"|"7"
 *   request   (ROUTER -> replier): topic, reply-to address, reply-to identity,
 *                                  node uuid, request uuid, data, req type, rep type
 *   response  (replier -> ROUTER): topic, node uuid, request uuid, data, "1"|"0"
 * (a ROUTER adds or strips the peer identity frame in front of request and
 * response; these layouts start after it). docs/gz.md#messages. */
#ifndef KN_GZT_WIRE_H
#define KN_GZT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- names ----------------------------------------------------------------- */

/* "@/" partition "@" topic; an empty partition gives "@@" topic; a
 * partition's own leading or trailing '/' is dropped first. The topic
 * must start with '/'. Returns the length, or -1 when partition or topic is
 * invalid (empty topic, '@', "~", ":=", white space, "//") or it does not
 * fit in cap. */
int kn_gzt_fqn(char *out, size_t cap, const char *partition, const char *topic);

/* Splits a fully qualified name into partition (without its leading '/')
 * and topic. -1 when it has no "@...@" form or a part does not fit. */
int kn_gzt_fqn_split(const char *fqn, char *partition, size_t pcap, char *topic, size_t tcap);

/* A partition or topic name as the real library accepts it. */
bool kn_gzt_name_valid(const char *s, bool topic);

enum kn_gzt_family { KN_GZT_FAMILY_IGNITION = 0, KN_GZT_FAMILY_GZ = 1 };

/* "ignition.msgs.<short>" or "gz.msgs.<short>"; -1 when it does not fit. */
int kn_gzt_type_name(char *out, size_t cap, enum kn_gzt_family f, const char *short_name);
/* The family of a type name and its short name (after the package), or -1
 * for a name in neither family. */
int kn_gzt_type_split(const char *type, enum kn_gzt_family *f, const char **short_name);

/* ---- multipart layouts --------------------------------------------------- */

struct kn_gzt_frame {
    const uint8_t *p;
    size_t n;
};

#define KN_GZT_FRAMES_MAX 10

struct kn_gzt_pubmsg {
    struct kn_gzt_frame topic, sender, data, type;
};
struct kn_gzt_ctlmsg {
    struct kn_gzt_frame topic, proc_uuid, node_uuid, type;
    bool connect; /* "6": new connection, "7": its end */
};
struct kn_gzt_reqmsg {
    struct kn_gzt_frame topic, reply_addr, reply_id, node_uuid, req_uuid, data, req_type, rep_type;
};
struct kn_gzt_repmsg {
    struct kn_gzt_frame topic, node_uuid, req_uuid, data;
    bool ok; /* "1" */
};

enum kn_gzt_wire_err {
    KN_GZT_WIRE_OK = 0,
    KN_GZT_WIRE_EFRAMES = -1, /* wrong number of frames */
    KN_GZT_WIRE_EEMPTY = -2,  /* a frame that must not be empty is */
    KN_GZT_WIRE_EVALUE = -3,  /* the control or result frame is no known value */
};

/* Each parse checks the frame count and the frames that carry values,
 * and points into the frames (no copy). */
int kn_gzt_pubmsg_parse(const struct kn_gzt_frame *f, size_t nf, struct kn_gzt_pubmsg *out);
int kn_gzt_ctlmsg_parse(const struct kn_gzt_frame *f, size_t nf, struct kn_gzt_ctlmsg *out);
int kn_gzt_reqmsg_parse(const struct kn_gzt_frame *f, size_t nf, struct kn_gzt_reqmsg *out);
int kn_gzt_repmsg_parse(const struct kn_gzt_frame *f, size_t nf, struct kn_gzt_repmsg *out);
const char *kn_gzt_wire_strerror(int err);

/* Each build fills f (KN_GZT_FRAMES_MAX entries) and returns the count.
 * Values point into the struct or its strings, which must outlive f. */
size_t kn_gzt_pubmsg_build(const struct kn_gzt_pubmsg *m, struct kn_gzt_frame *f);
size_t kn_gzt_ctlmsg_build(const struct kn_gzt_ctlmsg *m, struct kn_gzt_frame *f);
size_t kn_gzt_reqmsg_build(const struct kn_gzt_reqmsg *m, struct kn_gzt_frame *f);
size_t kn_gzt_repmsg_build(const struct kn_gzt_repmsg *m, struct kn_gzt_frame *f);

/* A frame from a C string. */
struct kn_gzt_frame kn_gzt_str(const char *s);
/* Frame equals the C string s. */
bool kn_gzt_frame_is(struct kn_gzt_frame f, const char *s);

#endif
