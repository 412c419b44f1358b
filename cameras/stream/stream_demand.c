/* Who wants a camera's frames: kn_stream_watched, which a caller asks
 * before rendering a frame nobody would see, and the snapshots, each
 * answered with the JPEG of the next frame pushed after it came (the
 * camera counts as watched while one waits), or 503 when none comes
 * within snapshot_wait_ms. */
#include "stream_int.h"

struct snap {
    struct kn_stream_cam *c;
    SoupServerMessage *msg;
    GSource *deadline;
};

static void snap_watch(struct kn_stream_cam *c, int delta)
{
    g_mutex_lock(&c->s->mu);
    c->http_watchers += delta;
    g_mutex_unlock(&c->s->mu);
}

/* Stops being called back, once out of the list: the snapshot is
 * answered, or its client went away. */
static void snap_free(struct snap *sn)
{
    snap_watch(sn->c, -1);
    g_signal_handlers_disconnect_by_data(sn->msg, sn);
    g_source_destroy(sn->deadline);
    g_source_unref(sn->deadline);
    g_free(sn);
}

static void snap_end(struct snap *sn)
{
    sn->c->snaps = g_list_remove(sn->c->snaps, sn);
    snap_free(sn);
}

static void on_snap_finished(SoupServerMessage *msg, gpointer data)
{
    (void)msg;
    snap_end(data);
}

static gboolean on_snap_deadline(gpointer data)
{
    struct snap *sn = data;
    SoupServerMessage *msg = sn->msg;
    char *text = g_strdup_printf("no frame within %d ms\n", sn->c->s->cfg.snapshot_wait_ms);
    snap_end(sn);
    soup_server_message_set_status(msg, SOUP_STATUS_SERVICE_UNAVAILABLE, NULL);
    soup_server_message_set_response(msg, "text/plain", SOUP_MEMORY_TAKE, text, strlen(text));
    soup_server_message_unpause(msg);
    return G_SOURCE_REMOVE;
}

void kn_stream_snap_start(struct kn_stream_cam *c, SoupServerMessage *msg)
{
    struct snap *sn = g_new0(struct snap, 1);
    sn->c = c;
    sn->msg = msg;
    soup_server_message_pause(msg);
    g_signal_connect(msg, "finished", G_CALLBACK(on_snap_finished), sn);
    sn->deadline = g_timeout_source_new((guint)c->s->cfg.snapshot_wait_ms);
    g_source_set_callback(sn->deadline, on_snap_deadline, sn, NULL);
    g_source_attach(sn->deadline, c->s->ctx);
    c->snaps = g_list_prepend(c->snaps, sn);
    /* watched from now: the next frame pushed is encoded for it */
    snap_watch(c, 1);
}

void kn_stream_snap_deliver(struct kn_stream_cam *c, const void *jpeg, size_t n)
{
    /* every waiting one at once: the list is taken whole, each freed
     * before its answer goes (unpausing may finish the message) */
    GList *waiting = c->snaps;
    c->snaps = NULL;
    for (GList *l = waiting; l; l = l->next) {
        struct snap *sn = l->data;
        SoupServerMessage *msg = sn->msg;
        snap_free(sn);
        soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
        soup_server_message_set_response(msg, "image/jpeg", SOUP_MEMORY_COPY, jpeg, n);
        soup_server_message_unpause(msg);
    }
    g_list_free(waiting);
}

int kn_stream_watched(struct kn_stream *s, int cam)
{
    if (cam < 0 || (size_t)cam >= s->ncams)
        return 0;
    struct kn_stream_cam *c = &s->cams[cam];
    g_mutex_lock(&s->mu);
    /* a media exists from the client's DESCRIBE on, and wants frames
     * before it can answer it */
    int w = c->http_watchers > 0;
    for (int v = 0; v < KN_STREAM_NVARIANTS; v++)
        w |= c->src[v] != NULL;
    g_mutex_unlock(&s->mu);
    return w;
}
