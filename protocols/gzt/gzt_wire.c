/* gz-transport names and multipart layouts: see gzt_wire.h. */
#include "gzt_wire.h"

#include <stdio.h>
#include <string.h>

bool kn_gzt_name_valid(const char *s, bool topic)
{
    size_t n = strlen(s);
    if (topic && n == 0)
        return false;
    if (strchr(s, '@') || strchr(s, '~') || strstr(s, ":=") || strstr(s, "//"))
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
            return false;
    return true;
}

int kn_gzt_fqn(char *out, size_t cap, const char *partition, const char *topic)
{
    if (!kn_gzt_name_valid(partition, false) || !kn_gzt_name_valid(topic, true) || topic[0] != '/')
        return -1;
    /* as the library writes it: one leading '/' (added or kept), no
     * trailing one, so "p", "/p" and "/p/" are one partition */
    if (partition[0] == '/')
        partition++;
    int pn = (int)strlen(partition);
    if (pn > 0 && partition[pn - 1] == '/')
        pn--;
    int n = snprintf(out, cap, "@%s%.*s@%s", pn ? "/" : "", pn, partition, topic);
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

int kn_gzt_fqn_split(const char *fqn, char *partition, size_t pcap, char *topic, size_t tcap)
{
    if (fqn[0] != '@')
        return -1;
    const char *end = strchr(fqn + 1, '@');
    if (!end)
        return -1;
    const char *p = fqn + 1;
    if (*p == '/')
        p++;
    size_t pn = p <= end ? (size_t)(end - p) : 0;
    size_t tn = strlen(end + 1);
    if (pn >= pcap || tn >= tcap || tn == 0)
        return -1;
    memcpy(partition, p, pn);
    partition[pn] = '\0';
    memcpy(topic, end + 1, tn + 1);
    return 0;
}

static const char *const family_prefix[] = { "ignition.msgs.", "gz.msgs." };

int kn_gzt_type_name(char *out, size_t cap, enum kn_gzt_family f, const char *short_name)
{
    int n = snprintf(out, cap, "%s%s", family_prefix[f == KN_GZT_FAMILY_GZ], short_name);
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

int kn_gzt_type_split(const char *type, enum kn_gzt_family *f, const char **short_name)
{
    for (int i = 0; i < 2; i++) {
        size_t n = strlen(family_prefix[i]);
        if (strncmp(type, family_prefix[i], n) == 0 && type[n]) {
            *f = (enum kn_gzt_family)i;
            *short_name = type + n;
            return 0;
        }
    }
    return -1;
}

/* ---- multipart layouts --------------------------------------------------- */

struct kn_gzt_frame kn_gzt_str(const char *s)
{
    struct kn_gzt_frame f = { (const uint8_t *)s, strlen(s) };
    return f;
}

bool kn_gzt_frame_is(struct kn_gzt_frame f, const char *s)
{
    size_t n = strlen(s);
    return f.n == n && (n == 0 || memcmp(f.p, s, n) == 0);
}

int kn_gzt_pubmsg_parse(const struct kn_gzt_frame *f, size_t nf, struct kn_gzt_pubmsg *out)
{
    if (nf != 4)
        return KN_GZT_WIRE_EFRAMES;
    if (f[0].n == 0 || f[3].n == 0)
        return KN_GZT_WIRE_EEMPTY;
    out->topic = f[0];
    out->sender = f[1];
    out->data = f[2];
    out->type = f[3];
    return KN_GZT_WIRE_OK;
}

int kn_gzt_ctlmsg_parse(const struct kn_gzt_frame *f, size_t nf, struct kn_gzt_ctlmsg *out)
{
    if (nf != 5)
        return KN_GZT_WIRE_EFRAMES;
    if (f[0].n == 0 || f[1].n == 0)
        return KN_GZT_WIRE_EEMPTY;
    if (kn_gzt_frame_is(f[4], "6"))
        out->connect = true;
    else if (kn_gzt_frame_is(f[4], "7"))
        out->connect = false;
    else
        return KN_GZT_WIRE_EVALUE;
    out->topic = f[0];
    out->proc_uuid = f[1];
    out->node_uuid = f[2];
    out->type = f[3];
    return KN_GZT_WIRE_OK;
}

int kn_gzt_reqmsg_parse(const struct kn_gzt_frame *f, size_t nf, struct kn_gzt_reqmsg *out)
{
    if (nf != 8)
        return KN_GZT_WIRE_EFRAMES;
    if (f[0].n == 0 || f[1].n == 0 || f[2].n == 0)
        return KN_GZT_WIRE_EEMPTY;
    out->topic = f[0];
    out->reply_addr = f[1];
    out->reply_id = f[2];
    out->node_uuid = f[3];
    out->req_uuid = f[4];
    out->data = f[5];
    out->req_type = f[6];
    out->rep_type = f[7];
    return KN_GZT_WIRE_OK;
}

int kn_gzt_repmsg_parse(const struct kn_gzt_frame *f, size_t nf, struct kn_gzt_repmsg *out)
{
    if (nf != 5)
        return KN_GZT_WIRE_EFRAMES;
    if (f[0].n == 0)
        return KN_GZT_WIRE_EEMPTY;
    if (kn_gzt_frame_is(f[4], "1"))
        out->ok = true;
    else if (kn_gzt_frame_is(f[4], "0"))
        out->ok = false;
    else
        return KN_GZT_WIRE_EVALUE;
    out->topic = f[0];
    out->node_uuid = f[1];
    out->req_uuid = f[2];
    out->data = f[3];
    return KN_GZT_WIRE_OK;
}

const char *kn_gzt_wire_strerror(int err)
{
    switch (err) {
    case KN_GZT_WIRE_OK: return "ok";
    case KN_GZT_WIRE_EFRAMES: return "wrong number of frames";
    case KN_GZT_WIRE_EEMPTY: return "a required frame is empty";
    case KN_GZT_WIRE_EVALUE: return "a control or result frame holds an unknown value";
    default: return "unknown error";
    }
}

size_t kn_gzt_pubmsg_build(const struct kn_gzt_pubmsg *m, struct kn_gzt_frame *f)
{
    f[0] = m->topic;
    f[1] = m->sender;
    f[2] = m->data;
    f[3] = m->type;
    return 4;
}

size_t kn_gzt_ctlmsg_build(const struct kn_gzt_ctlmsg *m, struct kn_gzt_frame *f)
{
    f[0] = m->topic;
    f[1] = m->proc_uuid;
    f[2] = m->node_uuid;
    f[3] = m->type;
    f[4] = kn_gzt_str(m->connect ? "6" : "7");
    return 5;
}

size_t kn_gzt_reqmsg_build(const struct kn_gzt_reqmsg *m, struct kn_gzt_frame *f)
{
    f[0] = m->topic;
    f[1] = m->reply_addr;
    f[2] = m->reply_id;
    f[3] = m->node_uuid;
    f[4] = m->req_uuid;
    f[5] = m->data;
    f[6] = m->req_type;
    f[7] = m->rep_type;
    return 8;
}

size_t kn_gzt_repmsg_build(const struct kn_gzt_repmsg *m, struct kn_gzt_frame *f)
{
    f[0] = m->topic;
    f[1] = m->node_uuid;
    f[2] = m->req_uuid;
    f[3] = m->data;
    f[4] = kn_gzt_str(m->ok ? "1" : "0");
    return 5;
}
