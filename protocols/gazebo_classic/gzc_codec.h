/* Gazebo Classic transport messages (docs/gazebo.md; the wire format of
 * Gazebo 7 to 11's gazebo/transport and gazebo/msgs): the Packet envelope, the control messages of the master link
 * and the data messages kenaf-sim sends and reads, on top of the
 * protobuf-c code generated from the .proto files next to this one.
 * Sans-I/O: encoders write one complete frame (header + payload) into the
 * caller's buffer; decoders read one frame payload into an arena the
 * caller owns, so nothing is allocated on the hot path and a hostile
 * frame can use at most the arena. Every encoder sets every `required`
 * field (checked with protobuf_c_message_check before packing: protobuf-c
 * would silently pack a message Gazebo then throws on). Time stamps are
 * the caller's: no clock here. */
#ifndef KN_GZC_CODEC_H
#define KN_GZC_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "gzc_frame.h"
#include "pbarena.h"
#include "gz_string.pb-c.h"
#include "gz_string_v.pb-c.h"
#include "joint_cmd.pb-c.h"
#include "packet.pb-c.h"
#include "pose.pb-c.h"
#include "poses_stamped.pb-c.h"
#include "publish.pb-c.h"
#include "publishers.pb-c.h"
#include "request.pb-c.h"
#include "subscribe.pb-c.h"
#include "topic_info.pb-c.h"
#include "twist.pb-c.h"
#include "vector2d.pb-c.h"
#include "world_control.pb-c.h"
#include "world_stats.pb-c.h"

/* ---- names on the wire ------------------------------------------------- */

#define KN_GZC_MASTER_PORT 11345

/* Message type strings: protobuf full names, compared exactly by Gazebo. */
#define KN_GZC_TYPE_TWIST "gazebo.msgs.Twist"
#define KN_GZC_TYPE_POSE "gazebo.msgs.Pose"
#define KN_GZC_TYPE_JOINT_CMD "gazebo.msgs.JointCmd"
#define KN_GZC_TYPE_WORLD_CONTROL "gazebo.msgs.WorldControl"
#define KN_GZC_TYPE_WORLD_STATS "gazebo.msgs.WorldStatistics"
#define KN_GZC_TYPE_POSES_STAMPED "gazebo.msgs.PosesStamped"
#define KN_GZC_TYPE_VECTOR2D "gazebo.msgs.Vector2d"

/* Packet.type values. The second init frame is spelled "namepaces" by
 * Gazebo; it must match exactly. */
#define KN_GZC_PKT_VERSION_INIT "version_init"
#define KN_GZC_PKT_NAMESPACES_INIT "topic_namepaces_init"
#define KN_GZC_PKT_PUBLISHERS_INIT "publishers_init"
#define KN_GZC_PKT_REGISTER_NAMESPACE "register_topic_namespace"
#define KN_GZC_PKT_NAMESPACE_ADD "topic_namespace_add"
#define KN_GZC_PKT_ADVERTISE "advertise"
#define KN_GZC_PKT_UNADVERTISE "unadvertise"
#define KN_GZC_PKT_SUBSCRIBE "subscribe"
#define KN_GZC_PKT_UNSUBSCRIBE "unsubscribe"
#define KN_GZC_PKT_SUB "sub"
#define KN_GZC_PKT_REQUEST "request"
#define KN_GZC_PKT_PUBLISHER_ADD "publisher_add"
#define KN_GZC_PKT_PUBLISHER_DEL "publisher_del"
#define KN_GZC_PKT_PUBLISHER_SUBSCRIBE "publisher_subscribe"
#define KN_GZC_PKT_PUBLISHER_ADVERTISE "publisher_advertise"
#define KN_GZC_PKT_PUBLISHER_UPDATE "publisher_update"

/* Topic names are full names on the wire ("~" exists only in client
 * libraries): "/gazebo/" + namespace + "/" + name. */
#define KN_GZC_TOPIC_MAX 256

/* ---- generic encoders ------------------------------------------------------ */

struct kn_gzc_stamp {
    int32_t sec, nsec;
};

/* One frame holding the bare message m (a data link frame). Returns the
 * frame length, or 0 when m lacks a required field or the frame does not
 * fit in cap. */
size_t kn_gzc_encode_msg(uint8_t *buf, size_t cap, const ProtobufCMessage *m);

/* One frame holding Packet{stamp, type, serialized m} (the master link,
 * and "sub"). 0 as above. */
size_t kn_gzc_encode_packet(uint8_t *buf, size_t cap, struct kn_gzc_stamp stamp, const char *type,
                            const ProtobufCMessage *m);

/* ---- what a client sends ------------------------------------------------- */

/* advertise / unadvertise / publisher_* : Packet{type, Publish{...}}. */
size_t kn_gzc_enc_publish(uint8_t *buf, size_t cap, struct kn_gzc_stamp stamp, const char *type,
                          const char *topic, const char *msg_type, const char *host, uint32_t port);

/* subscribe / unsubscribe / sub : Packet{type, Subscribe{...}} with
 * latching always present. */
size_t kn_gzc_enc_subscribe(uint8_t *buf, size_t cap, struct kn_gzc_stamp stamp, const char *type,
                            const char *topic, const char *host, uint32_t port,
                            const char *msg_type, bool latching);

/* request : Packet{"request", Request{id, request[, data]}}; data may be NULL. */
size_t kn_gzc_enc_request(uint8_t *buf, size_t cap, struct kn_gzc_stamp stamp, int32_t id,
                          const char *request, const char *data);

/* GzString / GzString_V packets (version_init, namespaces). */
size_t kn_gzc_enc_string(uint8_t *buf, size_t cap, struct kn_gzc_stamp stamp, const char *type,
                         const char *data);
size_t kn_gzc_enc_strings(uint8_t *buf, size_t cap, struct kn_gzc_stamp stamp, const char *type,
                          const char *const *data, size_t n);

/* Bare Twist{linear (x, 0, 0), angular (0, 0, z)}: the tracked-vehicle
 * plugin reads linear.x and angular.z. */
size_t kn_gzc_enc_twist(uint8_t *buf, size_t cap, double linear_x, double angular_z);

/* Bare Pose{position, orientation (x, y, z, w)}, name left out when NULL. */
size_t kn_gzc_enc_pose(uint8_t *buf, size_t cap, const char *name, const double pos[3],
                       const double q[4]);

/* Bare JointCmd{name, position{target}}: a position target, the
 * controller's own PID gains. */
size_t kn_gzc_enc_joint_cmd(uint8_t *buf, size_t cap, const char *name, double target);

/* Bare Vector2d{x, y}. */
size_t kn_gzc_enc_vector2d(uint8_t *buf, size_t cap, double x, double y);

enum kn_gzc_reset {
    KN_GZC_RESET_NONE = 0,
    KN_GZC_RESET_ALL,
    KN_GZC_RESET_TIME,
    KN_GZC_RESET_MODEL
};

/* What one ~/world_control message asks (World::OnControl): pause or run;
 * step once; multi_step N (forces a pause, then N steps); reset. */
struct kn_gzc_world_ctl {
    bool set_pause;
    bool pause;
    bool step;
    uint32_t multi_step; /* 0: not sent */
    enum kn_gzc_reset reset;
};

/* Bare WorldControl; 0 when c asks nothing. */
size_t kn_gzc_enc_world_control(uint8_t *buf, size_t cap, const struct kn_gzc_world_ctl *c);

/* ---- decoding ------------------------------------------------------------ */

struct kn_gzc_packet {
    const char *type;
    const uint8_t *data;
    size_t len;
    struct kn_gzc_stamp stamp;
};

/* A frame payload as a Packet. 0, or -1 when it is not one. */
int kn_gzc_dec_packet(struct kn_pbarena *a, const uint8_t *p, size_t n, struct kn_gzc_packet *out);

/* Typed unpacks (NULL when malformed); results live in the arena. */
Gazebo__Msgs__Publish *kn_gzc_dec_publish(struct kn_pbarena *a, const uint8_t *p, size_t n);
Gazebo__Msgs__Subscribe *kn_gzc_dec_subscribe(struct kn_pbarena *a, const uint8_t *p, size_t n);
Gazebo__Msgs__Publishers *kn_gzc_dec_publishers(struct kn_pbarena *a, const uint8_t *p, size_t n);
Gazebo__Msgs__GzString *kn_gzc_dec_string(struct kn_pbarena *a, const uint8_t *p, size_t n);
Gazebo__Msgs__GzStringV *kn_gzc_dec_strings(struct kn_pbarena *a, const uint8_t *p, size_t n);
Gazebo__Msgs__Request *kn_gzc_dec_request(struct kn_pbarena *a, const uint8_t *p, size_t n);
Gazebo__Msgs__WorldStatistics *kn_gzc_dec_world_stats(struct kn_pbarena *a, const uint8_t *p,
                                                      size_t n);
Gazebo__Msgs__PosesStamped *kn_gzc_dec_poses(struct kn_pbarena *a, const uint8_t *p, size_t n);
Gazebo__Msgs__Vector2d *kn_gzc_dec_vector2d(struct kn_pbarena *a, const uint8_t *p, size_t n);
Gazebo__Msgs__Twist *kn_gzc_dec_twist(struct kn_pbarena *a, const uint8_t *p, size_t n);
Gazebo__Msgs__Pose *kn_gzc_dec_pose(struct kn_pbarena *a, const uint8_t *p, size_t n);
Gazebo__Msgs__JointCmd *kn_gzc_dec_joint_cmd(struct kn_pbarena *a, const uint8_t *p, size_t n);
Gazebo__Msgs__WorldControl *kn_gzc_dec_world_control(struct kn_pbarena *a, const uint8_t *p,
                                                     size_t n);

/* What a WorldControl asks, the reverse of kn_gzc_enc_world_control (a
 * reset with `all` absent or false reads as time and/or model only, as
 * World::OnControl reads it; neither gives KN_GZC_RESET_NONE). */
void kn_gzc_world_ctl_from_msg(const Gazebo__Msgs__WorldControl *m, struct kn_gzc_world_ctl *c);

/* A Time message as one count of nanoseconds, the wire's own unit
 * (nsec outside 0..999999999 is taken as given, Gazebo normalizes). */
int64_t kn_gzc_time_ns(int32_t sec, int32_t nsec);
/* And back, for encoders: sec and nsec with 0 <= nsec < 1e9. */
struct kn_gzc_stamp kn_gzc_stamp_from_ns(int64_t ns);

/* The pose named `name` in a PosesStamped, or NULL. */
const Gazebo__Msgs__Pose *kn_gzc_poses_find(const Gazebo__Msgs__PosesStamped *m, const char *name);

/* ---- names ----------------------------------------------------------------- */

/* "/gazebo/" + ns + "/" + name into out; -1 when it does not fit. */
int kn_gzc_topic(char *out, size_t cap, const char *ns, const char *name);

/* GAZEBO_MASTER_URI ("http://host:port", "host:port", "host", with or
 * without the scheme and trailing '/'; "[v6]:port") into host and port
 * (default 11345), by the common host:port rules (common/hostport.h). 0,
 * or -1 with `"<host:port>": <reason>` in err (which may be NULL). */
#define KN_GZC_URI_MAX 512
int kn_gzc_parse_master_uri(const char *uri, char *host, size_t hostcap, uint16_t *port, char *err,
                            size_t errlen);

#endif
