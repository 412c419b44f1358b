/* gz-transport discovery datagrams: see gzt_disc.h. */
#include "gzt_disc.h"

#include <string.h>

#include "gzt_discovery.pb-c.h"

static int copy(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= cap)
        return -1;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
    return 0;
}

int kn_gzt_disc_decode(struct kn_pbarena *a, const uint8_t *buf, size_t len,
                       struct kn_gzt_disc *out)
{
    if (len < 2)
        return KN_GZT_DISC_ESHORT;
    size_t body = (size_t)buf[0] | (size_t)buf[1] << 8;
    if (body != len - 2)
        return KN_GZT_DISC_ELENGTH;
    kn_pbarena_reset(a);
    Kngz__Discovery *m =
        (Kngz__Discovery *)kn_pbarena_unpack(a, &kngz__discovery__descriptor, buf + 2, body);
    if (!m)
        return KN_GZT_DISC_EPROTO;
    memset(out, 0, sizeof *out);
    out->version = m->version;
    out->type = (uint32_t)m->type;
    if (copy(out->process_uuid, sizeof out->process_uuid, m->process_uuid) < 0)
        return KN_GZT_DISC_ETOOLONG;
    if (m->flags) {
        out->relay = m->flags->relay;
        out->no_relay = m->flags->no_relay;
    }
    if (m->disc_contents_case == KNGZ__DISCOVERY__DISC_CONTENTS_SUB && m->sub) {
        out->has_sub = true;
        if (copy(out->sub_topic, sizeof out->sub_topic, m->sub->topic) < 0)
            return KN_GZT_DISC_ETOOLONG;
    } else if (m->disc_contents_case == KNGZ__DISCOVERY__DISC_CONTENTS_PUB && m->pub) {
        const Kngz__Discovery__Publisher *p = m->pub;
        out->has_pub = true;
        if (copy(out->pub.topic, sizeof out->pub.topic, p->topic) < 0 ||
            copy(out->pub.address, sizeof out->pub.address, p->address) < 0 ||
            copy(out->pub.process_uuid, sizeof out->pub.process_uuid, p->process_uuid) < 0 ||
            copy(out->pub.node_uuid, sizeof out->pub.node_uuid, p->node_uuid) < 0)
            return KN_GZT_DISC_ETOOLONG;
        out->pub.scope = (uint32_t)p->scope;
        if (p->pub_type_case == KNGZ__DISCOVERY__PUBLISHER__PUB_TYPE_MSG_PUB && p->msg_pub) {
            out->pub.kind = KN_GZT_PUB_MSG;
            out->pub.throttled = p->msg_pub->throttled;
            out->pub.msgs_per_sec = p->msg_pub->msgs_per_sec;
            if (copy(out->pub.ctrl, sizeof out->pub.ctrl, p->msg_pub->ctrl) < 0 ||
                copy(out->pub.msg_type, sizeof out->pub.msg_type, p->msg_pub->msg_type) < 0)
                return KN_GZT_DISC_ETOOLONG;
        } else if (p->pub_type_case == KNGZ__DISCOVERY__PUBLISHER__PUB_TYPE_SRV_PUB && p->srv_pub) {
            out->pub.kind = KN_GZT_PUB_SRV;
            if (copy(out->pub.socket_id, sizeof out->pub.socket_id, p->srv_pub->socket_id) < 0 ||
                copy(out->pub.req_type, sizeof out->pub.req_type, p->srv_pub->request_type) < 0 ||
                copy(out->pub.rep_type, sizeof out->pub.rep_type, p->srv_pub->response_type) < 0)
                return KN_GZT_DISC_ETOOLONG;
        }
    }
    return KN_GZT_DISC_OK;
}

const char *kn_gzt_disc_strerror(int err)
{
    switch (err) {
    case KN_GZT_DISC_OK: return "ok";
    case KN_GZT_DISC_ESHORT: return "datagram shorter than its 2-byte length";
    case KN_GZT_DISC_ELENGTH: return "length prefix does not match the datagram";
    case KN_GZT_DISC_EPROTO: return "body is not a Discovery message";
    case KN_GZT_DISC_ETOOLONG: return "a name in it is too long";
    default: return "unknown error";
    }
}

const char *kn_gzt_disc_type_name(uint32_t type)
{
    static const char *const names[] = {
        "UNINITIALIZED", "ADVERTISE", "SUBSCRIBE",      "UNADVERTISE",
        "HEARTBEAT",     "BYE",       "NEW_CONNECTION", "END_CONNECTION",
    };
    return type < sizeof names / sizeof names[0] ? names[type] : "unknown";
}

size_t kn_gzt_disc_encode(uint8_t *buf, size_t cap, const struct kn_gzt_disc *d)
{
    Kngz__Discovery m = KNGZ__DISCOVERY__INIT;
    Kngz__Discovery__Flags fl = KNGZ__DISCOVERY__FLAGS__INIT;
    Kngz__Discovery__Subscriber sub = KNGZ__DISCOVERY__SUBSCRIBER__INIT;
    Kngz__Discovery__Publisher pub = KNGZ__DISCOVERY__PUBLISHER__INIT;
    Kngz__Discovery__Publisher__MessagePublisher mp =
        KNGZ__DISCOVERY__PUBLISHER__MESSAGE_PUBLISHER__INIT;
    Kngz__Discovery__Publisher__ServicePublisher sp =
        KNGZ__DISCOVERY__PUBLISHER__SERVICE_PUBLISHER__INIT;
    m.version = d->version;
    m.type = (Kngz__Discovery__Type)d->type;
    m.process_uuid = (char *)d->process_uuid;
    if (d->relay || d->no_relay) {
        fl.relay = d->relay;
        fl.no_relay = d->no_relay;
        m.flags = &fl;
    }
    switch (d->type) {
    case KN_GZT_SUBSCRIBE:
        sub.topic = (char *)d->sub_topic;
        m.disc_contents_case = KNGZ__DISCOVERY__DISC_CONTENTS_SUB;
        m.sub = &sub;
        break;
    case KN_GZT_ADVERTISE:
    case KN_GZT_UNADVERTISE:
    case KN_GZT_NEW_CONNECTION:
    case KN_GZT_END_CONNECTION:
        pub.topic = (char *)d->pub.topic;
        pub.address = (char *)d->pub.address;
        pub.process_uuid = (char *)d->pub.process_uuid;
        pub.node_uuid = (char *)d->pub.node_uuid;
        pub.scope = (Kngz__Discovery__Publisher__Scope)d->pub.scope;
        if (d->pub.kind == KN_GZT_PUB_MSG) {
            mp.ctrl = (char *)d->pub.ctrl;
            mp.msg_type = (char *)d->pub.msg_type;
            mp.throttled = d->pub.throttled;
            mp.msgs_per_sec = d->pub.msgs_per_sec;
            pub.pub_type_case = KNGZ__DISCOVERY__PUBLISHER__PUB_TYPE_MSG_PUB;
            pub.msg_pub = &mp;
        } else if (d->pub.kind == KN_GZT_PUB_SRV) {
            sp.socket_id = (char *)d->pub.socket_id;
            sp.request_type = (char *)d->pub.req_type;
            sp.response_type = (char *)d->pub.rep_type;
            pub.pub_type_case = KNGZ__DISCOVERY__PUBLISHER__PUB_TYPE_SRV_PUB;
            pub.srv_pub = &sp;
        }
        m.disc_contents_case = KNGZ__DISCOVERY__DISC_CONTENTS_PUB;
        m.pub = &pub;
        break;
    default: break;
    }
    size_t n = protobuf_c_message_get_packed_size(&m.base);
    if (n > 0xffff || cap < 2 || n > cap - 2)
        return 0;
    buf[0] = (uint8_t)(n & 0xff);
    buf[1] = (uint8_t)(n >> 8);
    protobuf_c_message_pack(&m.base, buf + 2);
    return n + 2;
}
