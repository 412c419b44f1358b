/* The streaming library's counters: encode times, taken by pad probes
 * around each encoder, and every camera's counters as one JSON document
 * (cJSON) for whoever serves stats. */
#include <cJSON.h>

#include "stream_int.h"

void kn_stream_timing_add(struct kn_stream_timing *t, gint64 us)
{
    if (us < 0)
        us = 0;
    t->n++;
    t->sum_us += (uint64_t)us;
    if ((uint64_t)us > t->max_us)
        t->max_us = (uint64_t)us;
}

static GstPadProbeReturn probe_in(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    (void)pad;
    (void)info;
    struct kn_stream_probe *p = data;
    p->t_in[p->head++ % KN_STREAM_PROBE_RING] = g_get_monotonic_time();
    return GST_PAD_PROBE_OK;
}

/* Frames leave in the order they came (x264enc's encoder base shifts the
 * timestamps, so they cannot be matched by value). */
static GstPadProbeReturn probe_out(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    (void)pad;
    (void)info;
    struct kn_stream_probe *p = data;
    gint64 us = -1;
    if (p->head - p->tail > KN_STREAM_PROBE_RING)
        p->tail = p->head - KN_STREAM_PROBE_RING;
    if (p->tail != p->head)
        us = g_get_monotonic_time() - p->t_in[p->tail++ % KN_STREAM_PROBE_RING];
    g_mutex_lock(&p->cam->s->mu);
    if (p->count_sent)
        p->cam->frames_sent++;
    if (us >= 0)
        kn_stream_timing_add(&p->cam->enc[p->h264], us);
    g_mutex_unlock(&p->cam->s->mu);
    return GST_PAD_PROBE_OK;
}

void kn_stream_probe_attach(struct kn_stream_cam *c, GstElement *enc, int h264, int count_sent)
{
    struct kn_stream_probe *p = g_new0(struct kn_stream_probe, 1);
    p->cam = c;
    p->h264 = h264;
    p->count_sent = count_sent;
    /* freed with the encoder, whose pads are the only users */
    g_object_set_data_full(G_OBJECT(enc), "kn-probe", p, g_free);
    GstPad *sink = gst_element_get_static_pad(enc, "sink");
    GstPad *out = gst_element_get_static_pad(enc, "src");
    gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER, probe_in, p, NULL);
    gst_pad_add_probe(out, GST_PAD_PROBE_TYPE_BUFFER, probe_out, p, NULL);
    gst_object_unref(sink);
    gst_object_unref(out);
}

char *kn_stream_raw_caps(const struct kn_stream_cam *c)
{
    return g_strdup_printf("video/x-raw,format=%s,width=%d,height=%d,framerate=%d/1",
                           c->c.format == KN_STREAM_RGB ? "RGB" : "RGBA", c->c.width, c->c.height,
                           c->c.fps);
}

static cJSON *timing_json(const struct kn_stream_timing *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "n", (double)t->n);
    cJSON_AddNumberToObject(o, "avg", t->n ? (double)t->sum_us / (double)t->n : 0.0);
    cJSON_AddNumberToObject(o, "max", (double)t->max_us);
    return o;
}

char *kn_stream_stats_json(struct kn_stream *s)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(root, "cameras");
    g_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->ncams; i++) {
        const struct kn_stream_cam *c = &s->cams[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "robot", c->robot);
        cJSON_AddStringToObject(o, "camera", c->name);
        cJSON_AddNumberToObject(o, "rtsp_clients", (double)c->rtsp_clients);
        cJSON_AddNumberToObject(o, "http_clients", (double)c->http_clients);
        cJSON_AddNumberToObject(o, "frames_in", (double)c->frames_in);
        cJSON_AddNumberToObject(o, "frames_bad", (double)c->frames_bad);
        cJSON_AddNumberToObject(o, "frames_sent", (double)c->frames_sent);
        cJSON_AddNumberToObject(o, "frames_dropped", (double)c->frames_dropped);
        cJSON_AddNumberToObject(o, "clients_dropped", (double)c->clients_dropped);
        cJSON *enc = cJSON_AddObjectToObject(o, "encode_us");
        cJSON_AddItemToObject(enc, "h264", timing_json(&c->enc[1]));
        cJSON_AddItemToObject(enc, "jpeg", timing_json(&c->enc[0]));
        cJSON_AddItemToArray(arr, o);
    }
    g_mutex_unlock(&s->mu);
    char *out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out;
}
