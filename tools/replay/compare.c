/* Answer comparison for kenaf-replay: see compare.h. */
#include "compare.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "krp.h"

static const char *errname(uint8_t code)
{
    const char *n = kn_krp_error_name(code);
    return n ? n : "?";
}

static void ref(char *key, size_t len, uint8_t type, uint32_t seq)
{
    const char *n = type == 0 ? "header" : kn_krp_type_name(type);
    if (n)
        snprintf(key, len, "%s#%u", n, seq);
    else
        snprintf(key, len, "0x%02x#%u", type, seq);
}

/* Flags that follow from the commands, not from timing. */
#define STABLE_FLAGS                                                                     \
    (KN_KRP_ST_ESTOP | KN_KRP_ST_BACKEND_UP | KN_KRP_ST_SIMULATED | KN_KRP_ST_WATCHDOG | \
     KN_KRP_ST_CLAMPED)

static void flag_text(uint16_t f, char *buf, size_t len)
{
    static const char *const names[] = { "ESTOP", "BACKEND_UP", "SIMULATED", "WATCHDOG",
                                         "CLAMPED" };
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < 5; i++) {
        if (!(f & (1u << i)))
            continue;
        int w = snprintf(buf + n, len - n, "%s%s", n ? "|" : "", names[i]);
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
    if (!n)
        snprintf(buf, len, "none");
}

enum kn_compare_kind kn_compare_describe(const uint8_t *data, size_t len, uint32_t last_hello,
                                         struct kn_compare_answer *a)
{
    struct kn_krp_msg m;
    a->key[0] = a->val[0] = '\0';
    if (kn_krp_decode(data, len, &m) != KN_KRP_OK)
        return KN_COMPARE_UNDECODABLE;
    char fl[64];
    switch (m.h.type) {
    case KN_KRP_ACK:
        ref(a->key, sizeof a->key, m.u.ack.acked_type, m.u.ack.acked_seq);
        snprintf(a->val, sizeof a->val, "ACK");
        return KN_COMPARE_ANSWER;
    case KN_KRP_ERROR:
        ref(a->key, sizeof a->key, m.u.error.offending_type, m.u.error.offending_seq);
        snprintf(a->val, sizeof a->val, "ERROR %s", errname(m.u.error.code));
        return KN_COMPARE_ANSWER;
    case KN_KRP_STATUS:
        if (m.u.status.req_seq == 0)
            return KN_COMPARE_PUSH;
        ref(a->key, sizeof a->key, KN_KRP_STATUS_REQ, m.u.status.req_seq);
        flag_text(m.u.status.flags & STABLE_FLAGS, fl, sizeof fl);
        snprintf(a->val, sizeof a->val, "STATUS flags=%s", fl);
        return KN_COMPARE_ANSWER;
    case KN_KRP_HELLO_ACK: {
        const struct kn_krp_hello_ack *h = &m.u.hello_ack;
        ref(a->key, sizeof a->key, KN_KRP_HELLO, last_hello);
        /* a session's role counts; its token is random by design */
        char role[32] = "";
        if (h->session)
            snprintf(role, sizeof role, " session role=%s",
                     h->role == KN_KRP_ROLE_DRIVER     ? "driver"
                     : h->role == KN_KRP_ROLE_OBSERVER ? "observer"
                                                       : "?");
        snprintf(a->val, sizeof a->val,
                 "HELLO_ACK \"%s\" protocol=%u simulated=%u backend=%u caps=0x%x counts_per_m=%d "
                 "max_speed=%d flippers=%d..%d%s",
                 h->robot_name, h->protocol, h->simulated, h->backend, h->capabilities,
                 h->counts_per_m, h->max_speed_mm_s, h->flipper_min_cdeg, h->flipper_max_cdeg,
                 role);
        return KN_COMPARE_ANSWER;
    }
    default: return KN_COMPARE_UNDECODABLE; /* a controller->robot type coming back */
    }
}

static int cmp_answer(const void *x, const void *y)
{
    const struct kn_compare_answer *a = x, *b = y;
    if (a->ctl != b->ctl)
        return a->ctl < b->ctl ? -1 : 1;
    int c = strcmp(a->key, b->key);
    return c ? c : strcmp(a->val, b->val);
}

static int cmp_group(const struct kn_compare_answer *a, const struct kn_compare_answer *b)
{
    if (a->ctl != b->ctl)
        return a->ctl < b->ctl ? -1 : 1;
    return strcmp(a->key, b->key);
}

static void list(FILE *f, const struct kn_compare_answer *a, size_t n)
{
    if (n == 0)
        fprintf(f, "nothing");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%s", i ? " + " : "", a[i].val);
}

void kn_compare_answers(struct kn_compare_answer *cap, size_t ncap, struct kn_compare_answer *rep,
                        size_t nrep, struct kn_compare_result *res, FILE *report, int max_lines)
{
    memset(res, 0, sizeof *res);
    res->answers_captured = ncap;
    res->answers_replayed = nrep;
    if (ncap)
        qsort(cap, ncap, sizeof *cap, cmp_answer);
    if (nrep)
        qsort(rep, nrep, sizeof *rep, cmp_answer);
    size_t i = 0, j = 0;
    int lines = 0;
    while (i < ncap || j < nrep) {
        /* the next group: the smaller head */
        const struct kn_compare_answer *g;
        if (i < ncap && (j >= nrep || cmp_group(&cap[i], &rep[j]) <= 0))
            g = &cap[i];
        else
            g = &rep[j];
        size_t ci = i, rj = j;
        while (ci < ncap && cmp_group(&cap[ci], g) == 0)
            ci++;
        while (rj < nrep && cmp_group(&rep[rj], g) == 0)
            rj++;
        /* multiset intersection of two sorted runs */
        size_t a = i, b = j, same = 0;
        while (a < ci && b < rj) {
            int c = strcmp(cap[a].val, rep[b].val);
            if (c == 0) {
                same++;
                a++;
                b++;
            } else if (c < 0) {
                a++;
            } else {
                b++;
            }
        }
        size_t nc = ci - i, nr = rj - j;
        res->requests++;
        res->answers_matching += same;
        res->answers_missing += nc - same;
        res->answers_extra += nr - same;
        if (same == nc && same == nr) {
            res->requests_matching++;
        } else {
            res->requests_diverging++;
            if (report && lines < max_lines) {
                fprintf(report, "  controller %d, %s: captured ", g->ctl + 1, g->key);
                list(report, cap + i, nc);
                fprintf(report, "; replayed ");
                list(report, rep + j, nr);
                fprintf(report, "\n");
                lines++;
            } else if (report && lines == max_lines) {
                fprintf(report, "  (more divergences not listed)\n");
                lines++;
            }
        }
        i = ci;
        j = rj;
    }
}
