/* Traffic capture into pcapng: see capture.h. Two buffers: the loop
 * appends records to one while the thread pool writes the other (pwrite
 * at the known end of the file). A capture that is stopped finishes its
 * writes on its own and frees itself; a new one may start meanwhile. */
#include "capture.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capdir.h"
#include "config.h"
#include "log.h"

#define BUF_CAP (1u << 20)    /* per buffer: what may wait for the disk */
#define FLUSH_AT (128u << 10) /* write as soon as this much is buffered */
#define FLUSH_MS 200          /* and at least this often */
#define TCP_SEGMENT 32768     /* larger chunks become several segments */
#define ACK_EVERY 16384       /* a pure ACK after this many unacknowledged bytes */
#define SNAPLEN 262144

struct counters {
    uint64_t records, bytes_written;
    uint64_t dropped_buffer_full, dropped_size_cap, dropped_write_error, write_errors;
};

struct cap {
    uv_loop_t *loop;
    char path[KN_CFG_PATH_LEN];
    uv_file fd;
    uint64_t max_bytes;
    uint64_t file_off;  /* bytes on disk and kept */
    uint64_t committed; /* file_off + buffered: what the size cap counts */
    uint8_t *fill, *flight;
    size_t fill_len, flight_len;
    uint64_t fill_records, flight_records;
    bool writing, stopping, finishing, need_truncate, cap_warned;
    uv_fs_t wreq, creq;
    uv_timer_t timer;
    unsigned open_parts; /* timer + file, freed when both are closed */
    uint64_t started_ns; /* wall clock */
    struct counters n;
    char last_error[160];
};

static struct cap *current;
static struct {
    bool have;
    char path[KN_CFG_PATH_LEN];
    struct counters n;
    char last_error[160];
} last;                      /* the capture stopped last, for the stats */
static struct cap *last_cap; /* that capture while it still finishes */

/* Captures started over the stats socket (capdir.h): where, with which
 * group, and the largest size cap a command may ask for (0: none). */
static struct {
    char dir[KN_CFG_PATH_LEN];
    gid_t group;
    uint64_t max_bytes;
    uint64_t refused[KN_CAPDIR_NREFUSALS];
    char last_refusal[2 * KN_CFG_PATH_LEN + 256];
} run = { "", (gid_t)-1, KN_CAPTURE_DEFAULT_MAX_BYTES, { 0 }, "" };

static char startup_path[KN_CFG_PATH_LEN];
static uint64_t startup_max = KN_CAPTURE_DEFAULT_MAX_BYTES;
static uint16_t ip_id;
static uint32_t isn_counter;
static uint8_t pkt_scratch[KN_PCAP_IP6_HDR + KN_PCAP_TCP_HDR + TCP_SEGMENT + 1024];

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- file handling ----------------------------------------------------- */

static void flush(struct cap *c);

/* A stopped capture's counters still move while it writes what it had. */
static void note_last(struct cap *c)
{
    if (c != last_cap)
        return;
    last.n = c->n;
    snprintf(last.last_error, sizeof last.last_error, "%s", c->last_error);
}

static void part_closed(struct cap *c)
{
    if (--c->open_parts)
        return;
    if (c == last_cap)
        last_cap = NULL;
    free(c->fill);
    free(c->flight);
    free(c);
}

static void on_timer_closed(uv_handle_t *h)
{
    part_closed(h->data);
}

static void on_closed(uv_fs_t *req)
{
    struct cap *c = req->data;
    uv_fs_req_cleanup(req);
    part_closed(c);
}

static void on_truncated(uv_fs_t *req)
{
    struct cap *c = req->data;
    if (req->result < 0)
        kn_warn("capture %s: cannot cut a failed write off the end: %s", c->path,
                uv_strerror((int)req->result));
    uv_fs_req_cleanup(req);
    c->creq.data = c;
    if (uv_fs_close(c->loop, &c->creq, c->fd, on_closed) < 0)
        part_closed(c);
}

/* Everything written: cut off a partly written block, close the file. */
static void finish(struct cap *c)
{
    if (c->finishing)
        return;
    c->finishing = true;
    note_last(c);
    kn_info("capture %s closed: %llu records, %llu bytes, %llu dropped", c->path,
            (unsigned long long)c->n.records, (unsigned long long)c->file_off,
            (unsigned long long)(c->n.dropped_buffer_full + c->n.dropped_size_cap +
                                 c->n.dropped_write_error));
    c->creq.data = c;
    if (c->need_truncate &&
        uv_fs_ftruncate(c->loop, &c->creq, c->fd, (int64_t)c->file_off, on_truncated) == 0)
        return;
    if (uv_fs_close(c->loop, &c->creq, c->fd, on_closed) < 0)
        part_closed(c);
}

static void on_written(uv_fs_t *req)
{
    struct cap *c = req->data;
    ssize_t res = req->result;
    uv_fs_req_cleanup(req);
    if (res >= 0 && (size_t)res == c->flight_len) {
        c->file_off += (uint64_t)res;
        c->n.bytes_written += (uint64_t)res;
    } else {
        /* disk full or failing: these records are lost; the next write
         * goes to the same offset and the tail is cut at close */
        c->n.write_errors++;
        c->n.dropped_write_error += c->flight_records;
        c->committed -= c->flight_len;
        c->need_truncate = true;
        snprintf(c->last_error, sizeof c->last_error, "%s",
                 res < 0 ? uv_strerror((int)res) : "short write (disk full?)");
        if (c->n.write_errors == 1 || c->n.write_errors % 1000 == 0)
            kn_warn("capture %s: write failed (%s); %llu records lost so far", c->path,
                    c->last_error, (unsigned long long)c->n.dropped_write_error);
    }
    c->flight_len = 0;
    c->flight_records = 0;
    c->writing = false;
    note_last(c);
    if (c->fill_len >= FLUSH_AT || (c->stopping && c->fill_len))
        flush(c);
    if (c->stopping && !c->writing)
        finish(c);
}

static void flush(struct cap *c)
{
    if (c->writing || c->fill_len == 0)
        return;
    uint8_t *t = c->flight;
    c->flight = c->fill;
    c->flight_len = c->fill_len;
    c->flight_records = c->fill_records;
    c->fill = t;
    c->fill_len = 0;
    c->fill_records = 0;
    uv_buf_t b = uv_buf_init((char *)c->flight, (unsigned)c->flight_len);
    c->wreq.data = c;
    int rc = uv_fs_write(c->loop, &c->wreq, c->fd, &b, 1, (int64_t)c->file_off, on_written);
    if (rc < 0) {
        c->n.write_errors++;
        c->n.dropped_write_error += c->flight_records;
        c->committed -= c->flight_len;
        snprintf(c->last_error, sizeof c->last_error, "%s", uv_strerror(rc));
        c->flight_len = 0;
        c->flight_records = 0;
        return;
    }
    c->writing = true;
}

static void on_flush_timer(uv_timer_t *t)
{
    flush(t->data);
}

/* Room for one block of n bytes in the fill buffer, or NULL (counted). */
static uint8_t *reserve(struct cap *c, size_t n)
{
    if (c->max_bytes && c->committed + n > c->max_bytes) {
        c->n.dropped_size_cap++;
        if (!c->cap_warned) {
            c->cap_warned = true;
            kn_warn("capture %s reached its size cap of %llu bytes; further records are dropped",
                    c->path, (unsigned long long)c->max_bytes);
        }
        return NULL;
    }
    if (c->fill_len + n > BUF_CAP) {
        flush(c);
        if (c->fill_len + n > BUF_CAP) {
            c->n.dropped_buffer_full++;
            return NULL;
        }
    }
    uint8_t *p = c->fill + c->fill_len;
    c->fill_len += n;
    c->committed += n;
    c->fill_records++;
    return p;
}

static void put_epb(struct cap *c, uint32_t ifid, const uint8_t *pkt, size_t len, int dir,
                    const char *comment)
{
    size_t need = kn_pcapng_epb_size(len, dir, comment);
    uint8_t *p = reserve(c, need);
    if (!p)
        return;
    size_t w = kn_pcapng_write_epb(p, need, ifid, wall_ns(), pkt, len, len, dir, comment);
    if (w != need) { /* cannot happen: the size was computed for these arguments */
        c->fill_len -= need;
        c->committed -= need;
        c->fill_records--;
        return;
    }
    c->n.records++;
    if (c->fill_len >= FLUSH_AT)
        flush(c);
}

static int refuse_running(char *err, size_t errlen)
{
    if (!current)
        return 0;
    snprintf(err, errlen, "a capture is running already (%s)", current->path);
    return -1;
}

/* Starts recording into fd (open for writing, empty), which it takes over
 * whatever the result; path is what the stats show. */
static int start_fd(uv_loop_t *loop, int fd, const char *path, uint64_t max_bytes, char *err,
                    size_t errlen)
{
    struct cap *c = calloc(1, sizeof *c);
    if (c) {
        c->fill = malloc(BUF_CAP);
        c->flight = malloc(BUF_CAP);
    }
    if (!c || !c->fill || !c->flight) {
        if (c) {
            free(c->fill);
            free(c->flight);
        }
        free(c);
        close(fd);
        snprintf(err, errlen, "capture: out of memory");
        return -1;
    }
    c->loop = loop;
    c->fd = fd;
    c->max_bytes = max_bytes;
    c->started_ns = wall_ns();
    snprintf(c->path, sizeof c->path, "%s", path);
    uv_timer_init(loop, &c->timer);
    c->timer.data = c;
    uv_timer_start(&c->timer, on_flush_timer, FLUSH_MS, FLUSH_MS);
    uv_unref((uv_handle_t *)&c->timer); /* never the reason the daemon keeps running */
    c->open_parts = 2;

    /* the header blocks are small and always fit the fresh buffer */
    char appl[64];
    snprintf(appl, sizeof appl, "kenaf-simd %s",
#ifdef KN_VERSION
             KN_VERSION
#else
             "unknown"
#endif
    );
    size_t n = kn_pcapng_write_shb(c->fill, BUF_CAP, appl);
    n += kn_pcapng_write_idb(c->fill + n, BUF_CAP - n, KN_PCAP_LINK_RAW, SNAPLEN, "krp",
                             "KRP/1 datagrams (UDP) of every robot");
    n += kn_pcapng_write_idb(c->fill + n, BUF_CAP - n, KN_PCAP_LINK_RAW, SNAPLEN, "sim",
                             "simulator connections (TCP) of every robot");
    c->fill_len = n;
    c->committed = n;
    current = c;
    kn_info("capture %s started%s", path, max_bytes ? "" : " (no size cap)");
    flush(c);
    return 0;
}

/* Any path: the command line's --capture, given by whoever starts the
 * daemon. */
int kn_capture_start(uv_loop_t *loop, const char *path, uint64_t max_bytes, char *err,
                     size_t errlen)
{
    if (refuse_running(err, errlen) < 0)
        return -1;
    if (!path || !*path || strlen(path) >= KN_CFG_PATH_LEN) {
        snprintf(err, errlen, "capture: expected a file path of 1..%d bytes", KN_CFG_PATH_LEN - 1);
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "capture %s: %s", path, strerror(errno));
        return -1;
    }
    return start_fd(loop, fd, path, max_bytes, err, errlen);
}

/* A path from the stats socket: inside the capture directory only. */
static int start_in_dir(uv_loop_t *loop, const char *request, uint64_t max_bytes, char *err,
                        size_t errlen)
{
    if (refuse_running(err, errlen) < 0)
        return -1;
    char full[KN_CFG_PATH_LEN];
    enum kn_capdir_refusal why;
    int fd = kn_capdir_open(run.dir, request, run.group, full, sizeof full, &why, err, errlen);
    if (fd < 0) {
        run.refused[why]++;
        snprintf(run.last_refusal, sizeof run.last_refusal, "%s", err);
        kn_warn("stats socket: %s", err);
        return -1;
    }
    return start_fd(loop, fd, full, max_bytes, err, errlen);
}

void kn_capture_set_dir(const char *dir, gid_t group, uint64_t max_bytes)
{
    snprintf(run.dir, sizeof run.dir, "%s", dir ? dir : "");
    run.group = group;
    run.max_bytes = max_bytes;
}

void kn_capture_stop(void)
{
    struct cap *c = current;
    if (!c)
        return;
    current = NULL;
    last.have = true;
    last_cap = c;
    snprintf(last.path, sizeof last.path, "%s", c->path);
    note_last(c);
    c->stopping = true;
    uv_close((uv_handle_t *)&c->timer, on_timer_closed);
    flush(c);
    if (!c->writing)
        finish(c);
}

bool kn_capture_on(void)
{
    return current != NULL;
}

void kn_capture_configure(const char *path, uint64_t max_bytes)
{
    snprintf(startup_path, sizeof startup_path, "%s", path ? path : "");
    startup_max = max_bytes;
}

int kn_capture_startup(uv_loop_t *loop, char *err, size_t errlen)
{
    if (!startup_path[0])
        return 0;
    return kn_capture_start(loop, startup_path, startup_max, err, errlen);
}

/* ---- records ------------------------------------------------------------ */

int kn_capture_endpoint(const struct sockaddr *sa, struct kn_pcap_endpoint *ep)
{
    memset(ep, 0, sizeof *ep);
    if (!sa)
        return -1;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)sa;
        ep->family = 4;
        memcpy(ep->addr, &a->sin_addr, 4);
        ep->port = ntohs(a->sin_port);
        return 0;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;
        ep->family = 6;
        memcpy(ep->addr, &a->sin6_addr, 16);
        ep->port = ntohs(a->sin6_port);
        return 0;
    }
    return -1;
}

/* Both ends in one family: an IPv4 end meets an IPv6 one only through a
 * dual-stack socket, where the IPv4 address is written v4-mapped. */
static void same_family(struct kn_pcap_endpoint *a, struct kn_pcap_endpoint *b)
{
    struct kn_pcap_endpoint *v4 = a->family == 4 ? a : b;
    if (a->family == b->family)
        return;
    uint8_t ip[4];
    memcpy(ip, v4->addr, 4);
    memset(v4->addr, 0, 16);
    v4->addr[10] = v4->addr[11] = 0xFF;
    memcpy(v4->addr + 12, ip, 4);
    v4->family = 6;
}

void kn_capture_udp(const struct sockaddr *src, const struct sockaddr *dst, const void *data,
                    size_t len, int dir, const char *comment)
{
    struct cap *c = current;
    if (!c)
        return;
    struct kn_pcap_endpoint s, d;
    if (kn_capture_endpoint(src, &s) < 0 || kn_capture_endpoint(dst, &d) < 0)
        return;
    same_family(&s, &d);
    if (len > KN_PCAP_MAX_PAYLOAD)
        len = KN_PCAP_MAX_PAYLOAD; /* a 64 KiB datagram cannot carry its own headers */
    static uint8_t big[65536 + 64];
    size_t n = kn_pcap_build_udp(big, sizeof big, &s, &d, ip_id++, data, len);
    if (n)
        put_epb(c, KN_CAPTURE_IF_KRP, big, n, dir, comment);
}

static void tcp_record(struct cap *c, struct kn_capture_flow *fl, bool out, uint32_t seq,
                       uint32_t ack, uint8_t flags, const uint8_t *data, size_t len)
{
    if (flags & KN_TCP_ACK) {
        if (out)
            fl->acked_in = ack;
        else
            fl->acked_out = ack;
    }
    const struct kn_pcap_endpoint *src = out ? &fl->local : &fl->remote;
    const struct kn_pcap_endpoint *dst = out ? &fl->remote : &fl->local;
    size_t n = kn_pcap_build_tcp(pkt_scratch, sizeof pkt_scratch, src, dst, ip_id++, seq, ack,
                                 flags, data, len);
    if (n)
        put_epb(c, KN_CAPTURE_IF_SIM, pkt_scratch, n, out ? KN_PCAPNG_DIR_OUT : KN_PCAPNG_DIR_IN,
                NULL);
}

static uint32_t isn(uint16_t a, uint16_t b)
{
    uint32_t x = ((uint32_t)a << 16 | b) ^ (++isn_counter * 0x9E3779B9u);
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    return x;
}

void kn_capture_tcp_open(struct kn_capture_flow *fl, const struct sockaddr *local,
                         const struct sockaddr *remote)
{
    memset(fl, 0, sizeof *fl);
    if (kn_capture_endpoint(local, &fl->local) < 0 || kn_capture_endpoint(remote, &fl->remote) < 0)
        return;
    same_family(&fl->local, &fl->remote);
    fl->known = true;
    uint32_t io = isn(fl->local.port, fl->remote.port), ii = isn(fl->remote.port, fl->local.port);
    fl->seq_out = fl->acked_out = io + 1;
    fl->seq_in = fl->acked_in = ii + 1;
    struct cap *c = current;
    if (!c)
        return;
    tcp_record(c, fl, true, io, 0, KN_TCP_SYN, NULL, 0);
    tcp_record(c, fl, false, ii, io + 1, KN_TCP_SYN | KN_TCP_ACK, NULL, 0);
    tcp_record(c, fl, true, io + 1, ii + 1, KN_TCP_ACK, NULL, 0);
}

void kn_capture_tcp_data(struct kn_capture_flow *fl, bool out, const void *data, size_t len)
{
    struct cap *c = current;
    if (!c || !fl->known)
        return;
    const uint8_t *p = data;
    while (len > 0) {
        size_t n = len > TCP_SEGMENT ? TCP_SEGMENT : len;
        uint32_t *seq = out ? &fl->seq_out : &fl->seq_in;
        uint32_t ack = out ? fl->seq_in : fl->seq_out;
        tcp_record(c, fl, out, *seq, ack, KN_TCP_PSH | KN_TCP_ACK, p, n);
        *seq += (uint32_t)n;
        p += n;
        len -= n;
    }
    /* the other side acknowledges now and then, as a kernel would, so the
     * bytes in flight stay well inside the window */
    uint32_t unacked = out ? fl->seq_out - fl->acked_out : fl->seq_in - fl->acked_in;
    if (unacked >= ACK_EVERY)
        tcp_record(c, fl, !out, out ? fl->seq_in : fl->seq_out, out ? fl->seq_out : fl->seq_in,
                   KN_TCP_ACK, NULL, 0);
}

void kn_capture_tcp_close(struct kn_capture_flow *fl)
{
    struct cap *c = current;
    if (c && fl->known) {
        tcp_record(c, fl, true, fl->seq_out, fl->seq_in, KN_TCP_FIN | KN_TCP_ACK, NULL, 0);
        tcp_record(c, fl, false, fl->seq_in, fl->seq_out + 1, KN_TCP_FIN | KN_TCP_ACK, NULL, 0);
        tcp_record(c, fl, true, fl->seq_out + 1, fl->seq_in + 1, KN_TCP_ACK, NULL, 0);
    }
    fl->known = false;
}

/* ---- stats and command --------------------------------------------------- */

static void counters_json(cJSON *o, const struct counters *n, const char *last_error)
{
    cJSON_AddNumberToObject(o, "records", (double)n->records);
    cJSON_AddNumberToObject(o, "bytes_written", (double)n->bytes_written);
    cJSON *d = cJSON_AddObjectToObject(o, "dropped");
    cJSON_AddNumberToObject(d, "buffer_full", (double)n->dropped_buffer_full);
    cJSON_AddNumberToObject(d, "size_cap", (double)n->dropped_size_cap);
    cJSON_AddNumberToObject(d, "write_error", (double)n->dropped_write_error);
    cJSON_AddNumberToObject(o, "write_errors", (double)n->write_errors);
    cJSON_AddStringToObject(o, "last_error", last_error);
}

void kn_capture_stats(cJSON *o)
{
    struct cap *c = current;
    cJSON_AddBoolToObject(o, "active", c != NULL);
    cJSON_AddStringToObject(o, "dir", run.dir);
    cJSON_AddNumberToObject(o, "max_bytes_allowed", (double)run.max_bytes);
    cJSON *r = cJSON_AddObjectToObject(o, "refused");
    for (int i = 0; i < KN_CAPDIR_NREFUSALS; i++)
        cJSON_AddNumberToObject(r, kn_capdir_refusal_name((enum kn_capdir_refusal)i),
                                (double)run.refused[i]);
    cJSON_AddStringToObject(o, "last_refusal", run.last_refusal);
    if (c) {
        cJSON_AddStringToObject(o, "path", c->path);
        cJSON_AddNumberToObject(o, "max_bytes", (double)c->max_bytes);
        cJSON_AddNumberToObject(o, "buffered_bytes", (double)(c->fill_len + c->flight_len));
        counters_json(o, &c->n, c->last_error);
    } else if (last.have) {
        cJSON_AddStringToObject(o, "path", last.path);
        cJSON_AddBoolToObject(o, "closed", last_cap == NULL);
        counters_json(o, &last.n, last.last_error);
    }
}

static char *reply(cJSON *o)
{
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static char *reply_error(const char *msg)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", false);
    cJSON_AddStringToObject(o, "error", msg);
    return reply(o);
}

char *kn_capture_command(uv_loop_t *loop, const char *args)
{
    char buf[KN_CFG_PATH_LEN + 64];
    snprintf(buf, sizeof buf, "%s", args ? args : "");
    char *save = NULL;
    const char *verb = strtok_r(buf, " \t", &save);
    if (!verb || !strcmp(verb, "status")) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddBoolToObject(o, "ok", true);
        kn_capture_stats(cJSON_AddObjectToObject(o, "capture"));
        return reply(o);
    }
    if (!strcmp(verb, "stop")) {
        if (!current)
            return reply_error("no capture is running");
        kn_capture_stop();
        cJSON *o = cJSON_CreateObject();
        cJSON_AddBoolToObject(o, "ok", true);
        kn_capture_stats(cJSON_AddObjectToObject(o, "capture"));
        return reply(o);
    }
    if (strcmp(verb, "start") != 0)
        return reply_error("usage: capture start PATH [max_mb=N] | capture stop | capture status");
    const char *path = strtok_r(NULL, " \t", &save);
    uint64_t max = run.max_bytes;
    for (const char *kv = strtok_r(NULL, " \t", &save); kv; kv = strtok_r(NULL, " \t", &save)) {
        char *end = NULL;
        if (strncmp(kv, "max_mb=", 7) != 0)
            return reply_error("capture start: expected max_mb=N after the path");
        errno = 0;
        unsigned long long mb = strtoull(kv + 7, &end, 10);
        if (!kv[7] || *end || errno || mb > 1024ull * 1024)
            return reply_error("capture start: max_mb must be 0..1048576 (0: no cap)");
        /* the config's cap is the operator's ceiling */
        if (run.max_bytes && (mb == 0 || mb * 1024 * 1024 > run.max_bytes)) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "capture start: max_mb=%llu is above the config's "
                     "capture_max_mb %llu (it may only lower it)",
                     mb, (unsigned long long)(run.max_bytes >> 20));
            return reply_error(msg);
        }
        max = mb * 1024 * 1024;
    }
    if (!path)
        return reply_error("capture start: expected a file path");
    char err[2 * KN_CFG_PATH_LEN + 256];
    if (start_in_dir(loop, path, max, err, sizeof err) < 0)
        return reply_error(err);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", true);
    kn_capture_stats(cJSON_AddObjectToObject(o, "capture"));
    return reply(o);
}
