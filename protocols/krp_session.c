/* Client sessions: see krp_session.h. */
#include "krp_session.h"

#include <string.h>

void kn_krp_session_hello(const struct kn_krp_session *s, struct kn_krp_msg *m, const char *name,
                          bool observe)
{
    uint16_t flags = KN_KRP_F_SESSION | (observe ? KN_KRP_F_OBSERVER : 0);
    kn_krp_init(m, KN_KRP_HELLO, 0, flags);
    strncpy(m->u.hello.name, name, KN_KRP_NAME_LEN);
    kn_krp_session_stamp(s, m);
}

void kn_krp_session_stamp(const struct kn_krp_session *s, struct kn_krp_msg *m)
{
    if (!s->on)
        return;
    m->h.flags |= KN_KRP_F_TOKEN;
    m->h.token = s->token;
}

bool kn_krp_session_accept(struct kn_krp_session *s, const struct kn_krp_hello_ack *a,
                           uint32_t next_seq)
{
    if (!a->session) {
        /* A robot without sessions (or one that could not keep state for
         * us): plain KRP/1, nothing to stamp. */
        s->on = false;
        s->legacy = !(a->capabilities & KN_KRP_CAP_SESSIONS);
        s->role = 0;
        return false;
    }
    bool fresh = !s->on || s->token != a->token;
    s->on = true;
    s->legacy = false;
    s->role = a->role;
    if (fresh) {
        s->token = a->token;
        s->first_seq = next_seq;
    }
    return fresh;
}

bool kn_krp_session_lost(struct kn_krp_session *s, const struct kn_krp_error *e)
{
    if (e->code != KN_KRP_ERR_BAD_SESSION || !s->on)
        return false;
    /* An answer to a datagram sent before this token is old news. */
    if (kn_krp_seq_newer(s->first_seq, e->offending_seq))
        return false;
    s->on = false;
    s->role = 0;
    return true;
}
