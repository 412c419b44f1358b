/* libFuzzer target for the Gazebo Classic transport codec and the gazebo
 * backend's feedback. Input: one byte choosing how the rest is cut into
 * reads, then a byte stream as it would arrive on a master or data link.
 * The framer must hand out exactly the frames in it, whatever the cuts;
 * each frame goes through the Packet decoder and, as Gazebo does, the
 * inner message decoder its type names, and through every data message
 * decoder. Whatever decodes must re-encode (all required fields present)
 * to bytes that decode and re-encode to themselves; decoded feedback goes
 * into the neutral state. Also: GAZEBO_MASTER_URI parsing. Nothing may
 * crash, leak or read outside the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend_gazebo.h"
#include "gzc_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP 65536

static uint8_t frame_store[CAP];
static uint8_t arena_mem[1 << 20];
static uint8_t enc1[CAP + 64], enc2[CAP + 64];
static struct kn_pbarena arena;
static struct kn_gazebo_fb fb;
static size_t frames_seen;

/* protobuf-c keeps unknown fields, even a non-minimal tag 0 it would not
 * read back once written minimally; none of our encoders writes unknown
 * fields, so the fixed point is checked on the known ones. */
static void strip_unknown(ProtobufCMessage *m)
{
    m->n_unknown_fields = 0;
    m->unknown_fields = NULL;
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        char *base = (char *)m + f->offset;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(size_t *)((char *)m + f->quantifier_offset);
            ProtobufCMessage **v = *(ProtobufCMessage ***)base;
            for (size_t k = 0; k < n; k++)
                strip_unknown(v[k]);
        } else if (*(ProtobufCMessage **)base) {
            strip_unknown(*(ProtobufCMessage **)base);
        }
    }
}

/* Re-encode m, decode that, re-encode again: the two encodings agree. */
static void fixpoint(ProtobufCMessage *m)
{
    strip_unknown(m);
    size_t n1 = kn_gzc_encode_msg(enc1, sizeof enc1, m);
    if (n1 == 0) {
        /* only an empty message or one too big for the buffer may refuse */
        if (protobuf_c_message_get_packed_size(m) != 0 &&
            protobuf_c_message_get_packed_size(m) + 8 <= sizeof enc1)
            abort();
        return;
    }
    struct kn_pbarena a2;
    static uint8_t mem2[1 << 20];
    kn_pbarena_init(&a2, mem2, sizeof mem2);
    ProtobufCMessage *again = kn_pbarena_unpack(&a2, m->descriptor, enc1 + 8, n1 - 8);
    if (!again)
        abort();
    size_t n2 = kn_gzc_encode_msg(enc2, sizeof enc2, again);
    if (n2 != n1 || memcmp(enc1, enc2, n1) != 0)
        abort();
}

static void data_decoders(const uint8_t *p, size_t n)
{
    Gazebo__Msgs__WorldStatistics *ws = kn_gzc_dec_world_stats(&arena, p, n);
    if (ws) {
        fixpoint(&ws->base);
        kn_gazebo_fb_world_stats(&fb, ws);
    }
    Gazebo__Msgs__PosesStamped *ps = kn_gzc_dec_poses(&arena, p, n);
    if (ps) {
        fixpoint(&ps->base);
        kn_gazebo_fb_poses(&fb, ps);
    }
    Gazebo__Msgs__Vector2d *v = kn_gzc_dec_vector2d(&arena, p, n);
    if (v) {
        fixpoint(&v->base);
        kn_gazebo_fb_tracks(&fb, v);
    }
    Gazebo__Msgs__Twist *tw = kn_gzc_dec_twist(&arena, p, n);
    if (tw)
        fixpoint(&tw->base);
    Gazebo__Msgs__Pose *po = kn_gzc_dec_pose(&arena, p, n);
    if (po)
        fixpoint(&po->base);
    Gazebo__Msgs__JointCmd *jc = kn_gzc_dec_joint_cmd(&arena, p, n);
    if (jc)
        fixpoint(&jc->base);
    Gazebo__Msgs__WorldControl *wc = kn_gzc_dec_world_control(&arena, p, n);
    if (wc) {
        fixpoint(&wc->base);
        struct kn_gzc_world_ctl c, back;
        kn_gzc_world_ctl_from_msg(wc, &c);
        size_t k = kn_gzc_enc_world_control(enc1, sizeof enc1, &c);
        if (k) {
            struct kn_pbarena a3;
            static uint8_t mem3[4096];
            kn_pbarena_init(&a3, mem3, sizeof mem3);
            Gazebo__Msgs__WorldControl *w2 = kn_gzc_dec_world_control(&a3, enc1 + 8, k - 8);
            if (!w2)
                abort();
            kn_gzc_world_ctl_from_msg(w2, &back);
            if (memcmp(&c, &back, sizeof c) != 0)
                abort();
        }
    }
}

static void control_decoders(const struct kn_gzc_packet *pk)
{
    ProtobufCMessage *m = NULL;
    const char *t = pk->type;
    if (!strcmp(t, KN_GZC_PKT_VERSION_INIT) || !strcmp(t, KN_GZC_PKT_NAMESPACE_ADD) ||
        !strcmp(t, KN_GZC_PKT_REGISTER_NAMESPACE))
        m = (ProtobufCMessage *)kn_gzc_dec_string(&arena, pk->data, pk->len);
    else if (!strcmp(t, KN_GZC_PKT_NAMESPACES_INIT))
        m = (ProtobufCMessage *)kn_gzc_dec_strings(&arena, pk->data, pk->len);
    else if (!strcmp(t, KN_GZC_PKT_PUBLISHERS_INIT))
        m = (ProtobufCMessage *)kn_gzc_dec_publishers(&arena, pk->data, pk->len);
    else if (!strcmp(t, KN_GZC_PKT_SUBSCRIBE) || !strcmp(t, KN_GZC_PKT_UNSUBSCRIBE) ||
             !strcmp(t, KN_GZC_PKT_SUB))
        m = (ProtobufCMessage *)kn_gzc_dec_subscribe(&arena, pk->data, pk->len);
    else if (!strcmp(t, KN_GZC_PKT_REQUEST))
        m = (ProtobufCMessage *)kn_gzc_dec_request(&arena, pk->data, pk->len);
    else
        m = (ProtobufCMessage *)kn_gzc_dec_publish(&arena, pk->data, pk->len);
    if (m)
        fixpoint(m);
}

static bool on_frame(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx;
    if (n == 0 || n > CAP)
        abort();
    frames_seen++;
    kn_pbarena_reset(&arena);
    struct kn_gzc_packet pk;
    if (kn_gzc_dec_packet(&arena, p, n, &pk) == 0) {
        if (!pk.type || (pk.len && !pk.data))
            abort();
        control_decoders(&pk);
    }
    kn_pbarena_reset(&arena);
    data_decoders(p, n);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool init;
    static const char *const joints[4] = { "front_left_flipper_joint", "front_right_flipper_joint",
                                           "rear_left_flipper_joint", "rear_right_flipper_joint" };
    struct kn_conv_table t;
    if (!init) {
        kn_pbarena_init(&arena, arena_mem, sizeof arena_mem);
        init = true;
    }
    kn_conv_table_gazebo(&t);
    kn_gazebo_fb_init(&fb, &t, "kenaf", joints, NULL);
    if (size == 0)
        return 0;

    /* the URI parser on the input as text */
    char uri[300], host[256];
    uint16_t port;
    size_t ul = size - 1 < sizeof uri - 1 ? size - 1 : sizeof uri - 1;
    memcpy(uri, data + 1, ul);
    uri[ul] = '\0';
    if (kn_gzc_parse_master_uri(uri, host, sizeof host, &port, NULL, 0) == 0 &&
        (port == 0 || !host[0]))
        abort();

    /* the stream, cut in reads of 1..(data[0] % 64 + 1) bytes */
    struct kn_gzc_framer fr;
    kn_gzc_framer_init(&fr, frame_store, sizeof frame_store);
    unsigned step = (unsigned)(data[0] % 64) + 1;
    const uint8_t *p = data + 1;
    size_t left = size - 1, consumed = 0, k = 0;
    frames_seen = 0;
    while (left > 0 && !fr.err) {
        size_t cut = 1 + (k++ * 7 + data[0]) % step;
        if (cut > left)
            cut = left;
        size_t used = kn_gzc_framer_feed(&fr, p, cut, on_frame, NULL);
        if (used > cut || (used < cut && !fr.err))
            abort();
        consumed += used;
        p += cut;
        left -= cut;
    }
    if (frames_seen != fr.frames)
        abort();

    /* the same stream in one read yields the same frames */
    struct kn_gzc_framer one;
    kn_gzc_framer_init(&one, frame_store, sizeof frame_store);
    kn_gzc_framer_feed(&one, data + 1, size - 1, on_frame, NULL);
    if (one.frames != fr.frames || one.err != fr.err || one.bytes != fr.bytes)
        abort();
    (void)consumed;
    return 0;
}
