/* The HTTP side's JPEG encoder: one GStreamer pipeline a camera (appsrc
 * ! videoconvert ! jpegenc ! appsink), fed only while someone watches
 * over HTTP; each JPEG goes to the main context for the clients. */
#include <stdio.h>

#include "stream_int.h"

#include <gst/app/gstappsink.h>

struct delivery {
    struct kn_stream_cam *c;
    GBytes *jpeg;
};

static gboolean deliver(gpointer data)
{
    struct delivery *d = data;
    kn_stream_http_deliver(d->c, d->jpeg);
    return G_SOURCE_REMOVE;
}

static void delivery_free(gpointer data)
{
    struct delivery *d = data;
    g_bytes_unref(d->jpeg);
    g_free(d);
}

/* appsink's streaming thread. */
static GstFlowReturn on_sample(GstAppSink *sink, gpointer data)
{
    struct kn_stream_cam *c = data;
    GstSample *sample = gst_app_sink_pull_sample(sink);
    if (!sample)
        return GST_FLOW_EOS;
    GstBuffer *buf = gst_sample_get_buffer(sample);
    GstMapInfo map;
    if (buf && gst_buffer_map(buf, &map, GST_MAP_READ)) {
        struct delivery *d = g_new(struct delivery, 1);
        d->c = c;
        d->jpeg = g_bytes_new(map.data, map.size);
        gst_buffer_unmap(buf, &map);
        g_main_context_invoke_full(c->s->ctx, G_PRIORITY_DEFAULT, deliver, d, delivery_free);
    }
    gst_sample_unref(sample);
    return GST_FLOW_OK;
}

int kn_stream_jpeg_start(struct kn_stream_cam *c, char *err, size_t errlen)
{
    char *caps = kn_stream_raw_caps(c);
    char *desc = g_strdup_printf("appsrc name=src format=time caps=\"%s\" ! videoconvert ! "
                                 "jpegenc name=enc quality=%d ! appsink name=sink sync=false",
                                 caps, c->c.jpeg_quality);
    GError *gerr = NULL;
    c->jpeg_pipe = gst_parse_launch(desc, &gerr);
    g_free(desc);
    g_free(caps);
    if (!c->jpeg_pipe || gerr) {
        snprintf(err, errlen, "%s/%s: JPEG pipeline: %s", c->robot, c->name,
                 gerr ? gerr->message : "not made");
        g_clear_error(&gerr);
        return -1;
    }
    GstElement *src = gst_bin_get_by_name(GST_BIN(c->jpeg_pipe), "src");
    GstElement *sink = gst_bin_get_by_name(GST_BIN(c->jpeg_pipe), "sink");
    GstElement *enc = gst_bin_get_by_name(GST_BIN(c->jpeg_pipe), "enc");
    /* what is sent is counted where a client's socket takes it */
    kn_stream_probe_attach(c, enc, 0, 0);
    gst_object_unref(enc);
    c->jpeg_src = GST_APP_SRC(src);
    /* a few frames of slack, then new frames are refused (counted) rather
     * than the caller's thread waiting for the encoder */
    gst_app_src_set_max_bytes(c->jpeg_src, 3 * (guint64)c->c.width * (guint64)c->c.height * c->bpp);
    GstAppSinkCallbacks cb = { .new_sample = on_sample };
    gst_app_sink_set_callbacks(GST_APP_SINK(sink), &cb, c, NULL);
    gst_object_unref(sink);
    if (gst_element_set_state(c->jpeg_pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        snprintf(err, errlen, "%s/%s: the JPEG pipeline does not start", c->robot, c->name);
        return -1;
    }
    return 0;
}

void kn_stream_jpeg_stop(struct kn_stream_cam *c)
{
    if (!c->jpeg_pipe)
        return;
    gst_element_set_state(c->jpeg_pipe, GST_STATE_NULL);
    gst_object_unref(c->jpeg_src);
    gst_object_unref(c->jpeg_pipe);
    c->jpeg_pipe = NULL;
    c->jpeg_src = NULL;
}

void kn_stream_jpeg_encode(struct kn_stream_cam *c, const guint8 *packed)
{
    size_t size = (size_t)c->c.width * (size_t)c->c.height * c->bpp;
    if (gst_app_src_get_current_level_bytes(c->jpeg_src) + size >
        gst_app_src_get_max_bytes(c->jpeg_src)) {
        c->frames_dropped++;
        return;
    }
    GstBuffer *buf = gst_buffer_new_memdup(packed, size);
    /* not live, and its sink does not sync: any rising time will do */
    GST_BUFFER_PTS(buf) = (GstClockTime)g_get_monotonic_time() * 1000;
    gst_app_src_push_buffer(c->jpeg_src, buf);
}
