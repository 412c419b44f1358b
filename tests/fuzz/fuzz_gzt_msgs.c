/* libFuzzer target for the gz-transport multipart layouts and messages
 * (protocols/gzt/gzt_wire.h, gzt_msgs.h). Input: frames, each a length
 * byte and that many bytes (the rest of the input the last frame). The
 * frame list goes through every layout parser (a parsed one rebuilds to
 * the same frames); each frame through every message decoder (a decoded
 * Twist, Double or WorldControl re-encodes to bytes that decode to the same
 * values) and the name helpers. Nothing may crash, leak or read outside
 * the input. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gzt_msgs.h"
#include "gzt_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t arena_mem[1 << 20];
static struct kn_pbarena arena;
static bool ready;

static bool same(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static void same_frames(const struct kn_gzt_frame *a, const struct kn_gzt_frame *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        /* b[0..n) is what the caller's *_build just wrote and counted;
         * cppcheck sees the array declared uninitialised, not the build */
        /* cppcheck-suppress uninitvar */
        if (a[i].n != b[i].n || (a[i].n && memcmp(a[i].p, b[i].p, a[i].n) != 0))
            abort();
}

static void messages(const uint8_t *p, size_t n)
{
    uint8_t enc[4096];
    double x, z, v;
    if (kn_gzt_dec_twist(&arena, p, n, &x, &z) == 0) {
        size_t m = kn_gzt_enc_twist(enc, sizeof enc, x, z);
        double x2, z2;
        if (m == 0 && (x != 0 || z != 0))
            abort();
        if (kn_gzt_dec_twist(&arena, enc, m, &x2, &z2) != 0 || !same(x, x2) || !same(z, z2))
            abort();
    }
    if (kn_gzt_dec_double(&arena, p, n, &v) == 0) {
        size_t m = kn_gzt_enc_double(enc, sizeof enc, v);
        double v2;
        if (kn_gzt_dec_double(&arena, enc, m, &v2) != 0 || !same(v, v2))
            abort();
    }
    struct kn_gzt_world_ctl c, c2;
    if (kn_gzt_dec_world_control(&arena, p, n, &c) == 0) {
        size_t m = kn_gzt_enc_world_control(enc, sizeof enc, &c);
        if (kn_gzt_dec_world_control(&arena, enc, m, &c2) != 0 || memcmp(&c, &c2, sizeof c) != 0)
            abort();
    }
    bool b;
    (void)kn_gzt_dec_boolean(&arena, p, n, &b);
    int64_t t;
    (void)kn_gzt_dec_clock(&arena, p, n, &t);
    double pos[3], q[4];
    (void)kn_gzt_dec_pose_of(&arena, p, n, false, "kenaf", pos, q, &t);
    (void)kn_gzt_dec_pose_of(&arena, p, n, true, "kenaf", pos, q, &t);
    const char *names[4] = { "fl", "fr", "rl", "rr" };
    double jp[4];
    uint32_t found;
    (void)kn_gzt_dec_joints(&arena, p, n, names, 4, jp, &found, &t);
}

static void names(const uint8_t *p, size_t n)
{
    char s[300], part[300], topic[300], out[700], out2[700];
    if (n >= sizeof s)
        n = sizeof s - 1;
    memcpy(s, p, n);
    s[n] = '\0';
    /* "@//p@" and "@/p@" name the same partition, so the property is on
     * the canonical form: a name built from split parts builds again from
     * its own parts to itself */
    if (kn_gzt_fqn_split(s, part, sizeof part, topic, sizeof topic) == 0 &&
        kn_gzt_fqn(out, sizeof out, part, topic) > 0) {
        char p2[300], t2[300];
        if (kn_gzt_fqn_split(out, p2, sizeof p2, t2, sizeof t2) != 0 ||
            kn_gzt_fqn(out2, sizeof out2, p2, t2) < 0 || strcmp(out, out2) != 0 ||
            strcmp(t2, topic) != 0)
            abort();
    }
    enum kn_gzt_family f;
    const char *sh;
    if (kn_gzt_type_split(s, &f, &sh) == 0 && kn_gzt_type_name(out, sizeof out, f, sh) > 0 &&
        strcmp(out, s) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        kn_pbarena_init(&arena, arena_mem, sizeof arena_mem);
        ready = true;
    }
    struct kn_gzt_frame f[KN_GZT_FRAMES_MAX], g[KN_GZT_FRAMES_MAX];
    size_t nf = 0, off = 0;
    while (off < size && nf < KN_GZT_FRAMES_MAX) {
        size_t len = data[off++];
        if (len > size - off || nf == KN_GZT_FRAMES_MAX - 1)
            len = size - off;
        f[nf].p = data + off;
        f[nf].n = len;
        nf++;
        off += len;
    }
    struct kn_gzt_pubmsg pm;
    if (kn_gzt_pubmsg_parse(f, nf, &pm) == 0)
        same_frames(f, g, kn_gzt_pubmsg_build(&pm, g));
    struct kn_gzt_ctlmsg cm;
    if (kn_gzt_ctlmsg_parse(f, nf, &cm) == 0)
        same_frames(f, g, kn_gzt_ctlmsg_build(&cm, g));
    struct kn_gzt_reqmsg rq;
    if (kn_gzt_reqmsg_parse(f, nf, &rq) == 0)
        same_frames(f, g, kn_gzt_reqmsg_build(&rq, g));
    struct kn_gzt_repmsg rp;
    int rc = kn_gzt_repmsg_parse(f, nf, &rp);
    if (rc == 0)
        same_frames(f, g, kn_gzt_repmsg_build(&rp, g));
    else if (!kn_gzt_wire_strerror(rc)[0])
        abort();
    for (size_t i = 0; i < nf; i++) {
        messages(f[i].p, f[i].n);
        names(f[i].p, f[i].n);
    }
    return 0;
}
