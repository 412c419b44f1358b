/* Gazebo Classic transport messages: see gzc_codec.h. */
#include "gzc_codec.h"

#include <stdio.h>
#include <string.h>

#include "hostport.h"

/* ---- encoding --------------------------------------------------------------- */

size_t kn_gzc_encode_msg(uint8_t *buf, size_t cap, const ProtobufCMessage *m)
{
    if (!protobuf_c_message_check(m))
        return 0;
    size_t n = protobuf_c_message_get_packed_size(m);
    if (n == 0 || n > 0xffffffffu || cap < KN_GZC_HEADER_LEN || n > cap - KN_GZC_HEADER_LEN)
        return 0;
    kn_gzc_frame_header((char *)buf, n);
    return KN_GZC_HEADER_LEN + protobuf_c_message_pack(m, buf + KN_GZC_HEADER_LEN);
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* A proto int32 is sign-extended to 64 bits on the wire. */
static uint64_t int32_wire(int32_t v)
{
    return (uint64_t)(int64_t)v;
}

/* The Packet envelope is written by hand so the inner message can be
 * packed once, straight into the output (protobuf-c would need it in a
 * separate buffer first); the bytes are those protobuf-c writes for
 * Packet, which the unit tests check. */
size_t kn_gzc_encode_packet(uint8_t *buf, size_t cap, struct kn_gzc_stamp stamp, const char *type,
                            const ProtobufCMessage *m)
{
    if (!type || !protobuf_c_message_check(m))
        return 0;
    size_t tlen = strlen(type);
    size_t n = protobuf_c_message_get_packed_size(m);
    uint64_t sec = int32_wire(stamp.sec), nsec = int32_wire(stamp.nsec);
    size_t time_len = 1 + varint_len(sec) + 1 + varint_len(nsec);
    size_t head =
        1 + varint_len(time_len) + time_len + 1 + varint_len(tlen) + tlen + 1 + varint_len(n);
    if (cap < KN_GZC_HEADER_LEN || head > cap - KN_GZC_HEADER_LEN ||
        n > cap - KN_GZC_HEADER_LEN - head || head + n > 0xffffffffu)
        return 0;
    uint8_t *p = buf + KN_GZC_HEADER_LEN;
    kn_gzc_frame_header((char *)buf, head + n);
    p[0] = 0x0a; /* field 1, length-delimited: stamp */
    size_t k = 1 + put_varint(p + 1, time_len);
    p[k++] = 0x08;
    k += put_varint(p + k, sec);
    p[k++] = 0x10;
    k += put_varint(p + k, nsec);
    p[k++] = 0x12; /* field 2: type */
    k += put_varint(p + k, tlen);
    /* a length-delimited protobuf field, not a C string: no NUL */
    /* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
    memcpy(p + k, type, tlen);
    k += tlen;
    p[k++] = 0x1a; /* field 3: serialized_data */
    k += put_varint(p + k, n);
    protobuf_c_message_pack(m, p + k);
    return KN_GZC_HEADER_LEN + k + n;
}

static char *mutable_str(const char *s)
{
    return (char *)(s ? s : "");
}

size_t kn_gzc_enc_publish(uint8_t *buf, size_t cap, struct kn_gzc_stamp stamp, const char *type,
                          const char *topic, const char *msg_type, const char *host, uint32_t port)
{
    Gazebo__Msgs__Publish m = GAZEBO__MSGS__PUBLISH__INIT;
    m.topic = mutable_str(topic);
    m.msg_type = mutable_str(msg_type);
    m.host = mutable_str(host);
    m.port = port;
    return kn_gzc_encode_packet(buf, cap, stamp, type, &m.base);
}

size_t kn_gzc_enc_subscribe(uint8_t *buf, size_t cap, struct kn_gzc_stamp stamp, const char *type,
                            const char *topic, const char *host, uint32_t port,
                            const char *msg_type, bool latching)
{
    Gazebo__Msgs__Subscribe m = GAZEBO__MSGS__SUBSCRIBE__INIT;
    m.topic = mutable_str(topic);
    m.host = mutable_str(host);
    m.port = port;
    m.msg_type = mutable_str(msg_type);
    m.has_latching = 1;
    m.latching = latching;
    return kn_gzc_encode_packet(buf, cap, stamp, type, &m.base);
}

size_t kn_gzc_enc_request(uint8_t *buf, size_t cap, struct kn_gzc_stamp stamp, int32_t id,
                          const char *request, const char *data)
{
    Gazebo__Msgs__Request m = GAZEBO__MSGS__REQUEST__INIT;
    m.id = id;
    m.request = mutable_str(request);
    m.data = data ? (char *)data : NULL;
    return kn_gzc_encode_packet(buf, cap, stamp, KN_GZC_PKT_REQUEST, &m.base);
}

size_t kn_gzc_enc_string(uint8_t *buf, size_t cap, struct kn_gzc_stamp stamp, const char *type,
                         const char *data)
{
    Gazebo__Msgs__GzString m = GAZEBO__MSGS__GZ_STRING__INIT;
    m.data = mutable_str(data);
    return kn_gzc_encode_packet(buf, cap, stamp, type, &m.base);
}

size_t kn_gzc_enc_strings(uint8_t *buf, size_t cap, struct kn_gzc_stamp stamp, const char *type,
                          const char *const *data, size_t n)
{
    Gazebo__Msgs__GzStringV m = GAZEBO__MSGS__GZ_STRING__V__INIT;
    m.n_data = n;
    m.data = (char **)data;
    for (size_t i = 0; i < n; i++)
        if (!data[i])
            return 0;
    return kn_gzc_encode_packet(buf, cap, stamp, type, &m.base);
}

size_t kn_gzc_enc_twist(uint8_t *buf, size_t cap, double linear_x, double angular_z)
{
    Gazebo__Msgs__Vector3d lin = GAZEBO__MSGS__VECTOR3D__INIT;
    Gazebo__Msgs__Vector3d ang = GAZEBO__MSGS__VECTOR3D__INIT;
    Gazebo__Msgs__Twist m = GAZEBO__MSGS__TWIST__INIT;
    lin.x = linear_x;
    ang.z = angular_z;
    m.linear = &lin;
    m.angular = &ang;
    return kn_gzc_encode_msg(buf, cap, &m.base);
}

size_t kn_gzc_enc_pose(uint8_t *buf, size_t cap, const char *name, const double pos[3],
                       const double q[4])
{
    Gazebo__Msgs__Vector3d p = GAZEBO__MSGS__VECTOR3D__INIT;
    Gazebo__Msgs__Quaternion o = GAZEBO__MSGS__QUATERNION__INIT;
    Gazebo__Msgs__Pose m = GAZEBO__MSGS__POSE__INIT;
    p.x = pos[0];
    p.y = pos[1];
    p.z = pos[2];
    o.x = q[0];
    o.y = q[1];
    o.z = q[2];
    o.w = q[3];
    m.name = name ? (char *)name : NULL;
    m.position = &p;
    m.orientation = &o;
    return kn_gzc_encode_msg(buf, cap, &m.base);
}

size_t kn_gzc_enc_joint_cmd(uint8_t *buf, size_t cap, const char *name, double target)
{
    Gazebo__Msgs__PID pid = GAZEBO__MSGS__PID__INIT;
    Gazebo__Msgs__JointCmd m = GAZEBO__MSGS__JOINT_CMD__INIT;
    pid.has_target = 1;
    pid.target = target;
    m.name = mutable_str(name);
    m.position = &pid;
    return kn_gzc_encode_msg(buf, cap, &m.base);
}

size_t kn_gzc_enc_vector2d(uint8_t *buf, size_t cap, double x, double y)
{
    Gazebo__Msgs__Vector2d m = GAZEBO__MSGS__VECTOR2D__INIT;
    m.x = x;
    m.y = y;
    return kn_gzc_encode_msg(buf, cap, &m.base);
}

size_t kn_gzc_enc_world_control(uint8_t *buf, size_t cap, const struct kn_gzc_world_ctl *c)
{
    Gazebo__Msgs__WorldReset r = GAZEBO__MSGS__WORLD_RESET__INIT;
    Gazebo__Msgs__WorldControl m = GAZEBO__MSGS__WORLD_CONTROL__INIT;
    if (c->set_pause) {
        m.has_pause = 1;
        m.pause = c->pause;
    }
    if (c->step) {
        m.has_step = 1;
        m.step = 1;
    }
    if (c->multi_step) {
        m.has_multi_step = 1;
        m.multi_step = c->multi_step;
    }
    switch (c->reset) {
    case KN_GZC_RESET_ALL:
        r.has_all = 1;
        r.all = 1;
        m.reset = &r;
        break;
    case KN_GZC_RESET_TIME:
        r.has_time_only = 1;
        r.time_only = 1;
        m.reset = &r;
        break;
    case KN_GZC_RESET_MODEL:
        r.has_model_only = 1;
        r.model_only = 1;
        m.reset = &r;
        break;
    default: break;
    }
    return kn_gzc_encode_msg(buf, cap, &m.base);
}

/* ---- decoding ------------------------------------------------------------ */

int kn_gzc_dec_packet(struct kn_pbarena *a, const uint8_t *p, size_t n, struct kn_gzc_packet *out)
{
    Gazebo__Msgs__Packet *m =
        (Gazebo__Msgs__Packet *)kn_pbarena_unpack(a, &gazebo__msgs__packet__descriptor, p, n);
    if (!m)
        return -1;
    out->type = m->type;
    out->data = m->serialized_data.data;
    out->len = m->serialized_data.len;
    out->stamp.sec = m->stamp->sec;
    out->stamp.nsec = m->stamp->nsec;
    return 0;
}

#define DEC(fn, T, desc)                                    \
    T *fn(struct kn_pbarena *a, const uint8_t *p, size_t n) \
    {                                                       \
        return (T *)kn_pbarena_unpack(a, &(desc), p, n);    \
    }

DEC(kn_gzc_dec_publish, Gazebo__Msgs__Publish, gazebo__msgs__publish__descriptor)
DEC(kn_gzc_dec_subscribe, Gazebo__Msgs__Subscribe, gazebo__msgs__subscribe__descriptor)
DEC(kn_gzc_dec_publishers, Gazebo__Msgs__Publishers, gazebo__msgs__publishers__descriptor)
DEC(kn_gzc_dec_string, Gazebo__Msgs__GzString, gazebo__msgs__gz_string__descriptor)
DEC(kn_gzc_dec_strings, Gazebo__Msgs__GzStringV, gazebo__msgs__gz_string__v__descriptor)
DEC(kn_gzc_dec_request, Gazebo__Msgs__Request, gazebo__msgs__request__descriptor)
DEC(kn_gzc_dec_world_stats, Gazebo__Msgs__WorldStatistics,
    gazebo__msgs__world_statistics__descriptor)
DEC(kn_gzc_dec_poses, Gazebo__Msgs__PosesStamped, gazebo__msgs__poses_stamped__descriptor)
DEC(kn_gzc_dec_vector2d, Gazebo__Msgs__Vector2d, gazebo__msgs__vector2d__descriptor)
DEC(kn_gzc_dec_twist, Gazebo__Msgs__Twist, gazebo__msgs__twist__descriptor)
DEC(kn_gzc_dec_pose, Gazebo__Msgs__Pose, gazebo__msgs__pose__descriptor)
DEC(kn_gzc_dec_joint_cmd, Gazebo__Msgs__JointCmd, gazebo__msgs__joint_cmd__descriptor)
DEC(kn_gzc_dec_world_control, Gazebo__Msgs__WorldControl, gazebo__msgs__world_control__descriptor)

void kn_gzc_world_ctl_from_msg(const Gazebo__Msgs__WorldControl *m, struct kn_gzc_world_ctl *c)
{
    memset(c, 0, sizeof *c);
    c->set_pause = m->has_pause;
    c->pause = m->has_pause && m->pause;
    c->step = m->has_step; /* present means step, whatever its value */
    c->multi_step = m->has_multi_step ? m->multi_step : 0;
    if (m->reset) {
        const Gazebo__Msgs__WorldReset *r = m->reset;
        if (r->has_all && r->all)
            c->reset = KN_GZC_RESET_ALL;
        else if (r->has_time_only && r->time_only)
            c->reset = KN_GZC_RESET_TIME;
        else if (r->has_model_only && r->model_only)
            c->reset = KN_GZC_RESET_MODEL;
    }
}

int64_t kn_gzc_time_ns(int32_t sec, int32_t nsec)
{
    return (int64_t)sec * 1000000000 + nsec;
}

struct kn_gzc_stamp kn_gzc_stamp_from_ns(int64_t ns)
{
    int64_t s = ns / 1000000000, r = ns % 1000000000;
    if (r < 0) {
        r += 1000000000;
        s--;
    }
    if (s > INT32_MAX)
        s = INT32_MAX;
    if (s < INT32_MIN)
        s = INT32_MIN;
    struct kn_gzc_stamp st = { (int32_t)s, (int32_t)r };
    return st;
}

const Gazebo__Msgs__Pose *kn_gzc_poses_find(const Gazebo__Msgs__PosesStamped *m, const char *name)
{
    for (size_t i = 0; i < m->n_pose; i++)
        if (m->pose[i]->name && strcmp(m->pose[i]->name, name) == 0)
            return m->pose[i];
    return NULL;
}

/* ---- names ------------------------------------------------------------------ */

int kn_gzc_topic(char *out, size_t cap, const char *ns, const char *name)
{
    /* Node::DecodeTopicName: "~" is "/gazebo/" + namespace, then the first
     * "//" becomes "/". */
    char tmp[2 * KN_GZC_TOPIC_MAX];
    int w = snprintf(tmp, sizeof tmp, "/gazebo/%s/%s", ns, name);
    if (w < 0 || (size_t)w >= sizeof tmp)
        return -1;
    char *dd = strstr(tmp, "//");
    if (dd)
        memmove(dd, dd + 1, strlen(dd + 1) + 1);
    if (strlen(tmp) >= cap)
        return -1;
    memcpy(out, tmp, strlen(tmp) + 1);
    return 0;
}

int kn_gzc_parse_master_uri(const char *uri, char *host, size_t hostcap, uint16_t *port, char *err,
                            size_t errlen)
{
    const char *s = uri;
    const char *scheme = strstr(s, "://");
    if (scheme)
        s = scheme + 3;
    size_t len = strlen(s);
    while (len > 0 && s[len - 1] == '/')
        len--;
    char spec[KN_GZC_URI_MAX];
    if (len >= sizeof spec) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "longer than %d characters", KN_GZC_URI_MAX - 1);
        return -1;
    }
    memcpy(spec, s, len);
    spec[len] = '\0';
    /* a URI writes an IPv6 address in brackets (RFC 3986) */
    return kn_hostport_parse_flags(spec, KN_GZC_MASTER_PORT, KN_HOSTPORT_BRACKETS, host, hostcap,
                                   port, err, errlen);
}
