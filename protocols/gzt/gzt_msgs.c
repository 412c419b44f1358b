/* gz/ignition message encoders and decoders: see gzt_msgs.h. */
#include "gzt_msgs.h"

#include <string.h>

#include "gzt_model.pb-c.h"
#include "gzt_pose.pb-c.h"
#include "gzt_scalar.pb-c.h"
#include "gzt_world_control.pb-c.h"

static size_t pack(uint8_t *buf, size_t cap, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    if (n > cap)
        return 0;
    return protobuf_c_message_pack(m, buf);
}

static ProtobufCMessage *unpack(struct kn_pbarena *a, const ProtobufCMessageDescriptor *d,
                                const uint8_t *p, size_t n)
{
    kn_pbarena_reset(a);
    return kn_pbarena_unpack(a, d, p, n);
}

size_t kn_gzt_enc_twist(uint8_t *buf, size_t cap, double linear_x, double angular_z)
{
    Kngz__Twist t = KNGZ__TWIST__INIT;
    Kngz__Vector3d lin = KNGZ__VECTOR3D__INIT, ang = KNGZ__VECTOR3D__INIT;
    lin.x = linear_x;
    ang.z = angular_z;
    t.linear = &lin;
    t.angular = &ang;
    return pack(buf, cap, &t.base);
}

size_t kn_gzt_enc_double(uint8_t *buf, size_t cap, double v)
{
    Kngz__Double d = KNGZ__DOUBLE__INIT;
    d.data = v;
    return pack(buf, cap, &d.base);
}

size_t kn_gzt_enc_boolean(uint8_t *buf, size_t cap, bool v)
{
    Kngz__Boolean b = KNGZ__BOOLEAN__INIT;
    b.data = v;
    return pack(buf, cap, &b.base);
}

size_t kn_gzt_enc_pose(uint8_t *buf, size_t cap, bool vector, const char *name, const double pos[3],
                       const double q[4])
{
    Kngz__Pose ps = KNGZ__POSE__INIT;
    Kngz__Vector3d v = KNGZ__VECTOR3D__INIT;
    Kngz__Quaternion o = KNGZ__QUATERNION__INIT;
    v.x = pos[0];
    v.y = pos[1];
    v.z = pos[2];
    o.x = q[0];
    o.y = q[1];
    o.z = q[2];
    o.w = q[3];
    ps.name = (char *)name;
    ps.position = &v;
    ps.orientation = &o;
    if (!vector)
        return pack(buf, cap, &ps.base);
    Kngz__PoseV pv = KNGZ__POSE__V__INIT;
    Kngz__Pose *list[1] = { &ps };
    pv.n_pose = 1;
    pv.pose = list;
    return pack(buf, cap, &pv.base);
}

size_t kn_gzt_enc_clock(uint8_t *buf, size_t cap, int64_t sim_ns)
{
    Kngz__Clock c = KNGZ__CLOCK__INIT;
    Kngz__Time t = KNGZ__TIME__INIT;
    t.sec = sim_ns / 1000000000;
    t.nsec = (int32_t)(sim_ns % 1000000000);
    c.sim = &t;
    return pack(buf, cap, &c.base);
}

size_t kn_gzt_enc_world_control(uint8_t *buf, size_t cap, const struct kn_gzt_world_ctl *c)
{
    Kngz__WorldControl w = KNGZ__WORLD_CONTROL__INIT;
    Kngz__WorldReset r = KNGZ__WORLD_RESET__INIT;
    w.pause = c->pause;
    w.step = c->step;
    w.multi_step = c->multi_step;
    if (c->reset_all || c->reset_time || c->reset_model) {
        r.all = c->reset_all;
        r.time_only = c->reset_time;
        r.model_only = c->reset_model;
        w.reset = &r;
    }
    return pack(buf, cap, &w.base);
}

int kn_gzt_dec_world_control(struct kn_pbarena *a, const uint8_t *p, size_t n,
                             struct kn_gzt_world_ctl *c)
{
    Kngz__WorldControl *w = (Kngz__WorldControl *)unpack(a, &kngz__world_control__descriptor, p, n);
    if (!w)
        return -1;
    memset(c, 0, sizeof *c);
    c->pause = w->pause;
    c->step = w->step;
    c->multi_step = w->multi_step;
    if (w->reset) {
        c->reset_all = w->reset->all;
        c->reset_time = w->reset->time_only;
        c->reset_model = w->reset->model_only;
    }
    return 0;
}

int kn_gzt_dec_twist(struct kn_pbarena *a, const uint8_t *p, size_t n, double *linear_x,
                     double *angular_z)
{
    Kngz__Twist *t = (Kngz__Twist *)unpack(a, &kngz__twist__descriptor, p, n);
    if (!t)
        return -1;
    *linear_x = t->linear ? t->linear->x : 0.0;
    *angular_z = t->angular ? t->angular->z : 0.0;
    return 0;
}

int kn_gzt_dec_double(struct kn_pbarena *a, const uint8_t *p, size_t n, double *v)
{
    Kngz__Double *d = (Kngz__Double *)unpack(a, &kngz__double__descriptor, p, n);
    if (!d)
        return -1;
    *v = d->data;
    return 0;
}

int kn_gzt_dec_boolean(struct kn_pbarena *a, const uint8_t *p, size_t n, bool *v)
{
    Kngz__Boolean *b = (Kngz__Boolean *)unpack(a, &kngz__boolean__descriptor, p, n);
    if (!b)
        return -1;
    *v = b->data;
    return 0;
}

static int64_t time_ns(const Kngz__Time *t)
{
    if (!t)
        return -1;
    /* saturate instead of overflowing on absurd stamps */
    if (t->sec > 9000000000LL || t->sec < -9000000000LL)
        return t->sec > 0 ? INT64_MAX : INT64_MIN;
    return t->sec * 1000000000LL + t->nsec;
}

int kn_gzt_dec_clock(struct kn_pbarena *a, const uint8_t *p, size_t n, int64_t *sim_ns)
{
    Kngz__Clock *c = (Kngz__Clock *)unpack(a, &kngz__clock__descriptor, p, n);
    if (!c || !c->sim)
        return -1;
    *sim_ns = time_ns(c->sim);
    return 0;
}

static int64_t header_ns(const Kngz__Header *h)
{
    return h ? time_ns(h->stamp) : -1;
}

static bool header_child_is(const Kngz__Header *h, const char *name)
{
    if (!h)
        return false;
    for (size_t i = 0; i < h->n_data; i++) {
        const Kngz__Header__Map *m = h->data[i];
        if (m && m->key && strcmp(m->key, "child_frame_id") == 0)
            for (size_t k = 0; k < m->n_value; k++)
                if (m->value[k] && strcmp(m->value[k], name) == 0)
                    return true;
    }
    return false;
}

static int take_pose(const Kngz__Pose *ps, const char *name, double pos[3], double q[4],
                     int64_t *stamp_ns)
{
    if (!ps || !((ps->name && strcmp(ps->name, name) == 0) || header_child_is(ps->header, name)))
        return 0;
    pos[0] = ps->position ? ps->position->x : 0.0;
    pos[1] = ps->position ? ps->position->y : 0.0;
    pos[2] = ps->position ? ps->position->z : 0.0;
    if (ps->orientation) {
        q[0] = ps->orientation->x;
        q[1] = ps->orientation->y;
        q[2] = ps->orientation->z;
        q[3] = ps->orientation->w;
    } else {
        q[0] = q[1] = q[2] = 0.0;
        q[3] = 1.0;
    }
    int64_t t = header_ns(ps->header);
    if (t >= 0)
        *stamp_ns = t;
    return 1;
}

int kn_gzt_dec_pose_of(struct kn_pbarena *a, const uint8_t *p, size_t n, bool vector,
                       const char *name, double pos[3], double q[4], int64_t *stamp_ns)
{
    *stamp_ns = -1;
    if (!vector) {
        Kngz__Pose *ps = (Kngz__Pose *)unpack(a, &kngz__pose__descriptor, p, n);
        if (!ps)
            return -1;
        return take_pose(ps, name, pos, q, stamp_ns);
    }
    Kngz__PoseV *pv = (Kngz__PoseV *)unpack(a, &kngz__pose__v__descriptor, p, n);
    if (!pv)
        return -1;
    for (size_t i = 0; i < pv->n_pose; i++)
        if (take_pose(pv->pose[i], name, pos, q, stamp_ns)) {
            int64_t t = header_ns(pv->header);
            if (t >= 0)
                *stamp_ns = t;
            return 1;
        }
    return 0;
}

int kn_gzt_dec_joints(struct kn_pbarena *a, const uint8_t *p, size_t n, const char *const *names,
                      int nj, double *pos, uint32_t *found, int64_t *stamp_ns)
{
    Kngz__Model *m = (Kngz__Model *)unpack(a, &kngz__model__descriptor, p, n);
    *found = 0;
    if (!m)
        return -1;
    *stamp_ns = header_ns(m->header);
    for (size_t i = 0; i < m->n_joint; i++) {
        const Kngz__Joint *j = m->joint[i];
        if (!j || !j->name || !j->axis1)
            continue;
        for (int k = 0; k < nj && k < 32; k++)
            if (names[k] && strcmp(names[k], j->name) == 0) {
                pos[k] = j->axis1->position;
                *found |= 1u << k;
            }
    }
    return 0;
}

size_t kn_gzt_enc_joints(uint8_t *buf, size_t cap, const char *model, const char *const *names,
                         int nj, const double *pos)
{
    enum { MAXJ = 8 };
    if (nj < 0 || nj > MAXJ)
        return 0;
    Kngz__Model m = KNGZ__MODEL__INIT;
    Kngz__Joint j[MAXJ];
    Kngz__Axis ax[MAXJ];
    Kngz__Joint *list[MAXJ];
    for (int k = 0; k < nj; k++) {
        kngz__joint__init(&j[k]);
        kngz__axis__init(&ax[k]);
        ax[k].position = pos[k];
        j[k].name = (char *)names[k];
        j[k].axis1 = &ax[k];
        list[k] = &j[k];
    }
    m.name = (char *)model;
    m.n_joint = (size_t)nj;
    m.joint = list;
    return pack(buf, cap, &m.base);
}
