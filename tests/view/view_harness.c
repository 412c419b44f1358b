/* Test support for kenaf-view: see view_harness.h. */
#include "view_harness.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <check.h>

#include "harness_net.h"

/* ---- plain TCP with a deadline ---------------------------------------- */

static int connect_rcvbuf(int port, int rcvbuf)
{
    if (rcvbuf <= 0)
        return h_tcp_connect(port);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf), 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(0x7f000001) };
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* Reads what is there (waiting up to end_us for something); false at EOF
 * or timeout. */
static bool fill(struct vw_ws *w, uint64_t end_us)
{
    if (w->eof || !h_wait_readable(w->fd, end_us))
        return false;
    if (w->cap - w->len < 65536) {
        w->cap = w->cap * 2 + 65536;
        w->buf = realloc(w->buf, w->cap);
        ck_assert_ptr_nonnull(w->buf);
    }
    ssize_t n = recv(w->fd, w->buf + w->len, w->cap - w->len, 0);
    if (n <= 0) {
        w->eof = true;
        return false;
    }
    w->len += (size_t)n;
    return true;
}

static void drop(struct vw_ws *w, size_t n)
{
    memmove(w->buf, w->buf + n, w->len - n);
    w->len -= n;
}

/* The response head (up to the blank line): its status, the head in
 * head; the bytes after it stay in w. */
static int read_head(struct vw_ws *w, char *head, size_t headlen, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    char *blank;
    for (;;) {
        if (w->len) {
            w->buf[w->len < w->cap ? w->len : w->cap - 1] = '\0';
            if ((blank = memmem(w->buf, w->len, "\r\n\r\n", 4)) != NULL)
                break;
        }
        if (!fill(w, end))
            return -1;
    }
    size_t n = (size_t)(blank - (char *)w->buf) + 4;
    snprintf(head, headlen, "%.*s", (int)n, (char *)w->buf);
    drop(w, n);
    int status = -1;
    sscanf(head, "HTTP/1.%*d %d", &status);
    return status;
}

static const char *header(const char *head, const char *name, char *out, size_t outlen)
{
    out[0] = '\0';
    const char *p = head;
    size_t n = strlen(name);
    while ((p = strchr(p, '\n')) != NULL) {
        p++;
        if (strncasecmp(p, name, n) == 0 && p[n] == ':') {
            p += n + 1;
            while (*p == ' ')
                p++;
            size_t k = strcspn(p, "\r\n");
            snprintf(out, outlen, "%.*s", (int)k, p);
            return out;
        }
    }
    return NULL;
}

int vw_http_get(int port, const char *path, char *body, size_t bodylen, char *ctype,
                size_t ctypelen)
{
    struct vw_ws w = { .fd = h_tcp_connect(port) };
    char req[512], head[4096], len[32];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n",
             path, port);
    h_write_all(w.fd, req, strlen(req));
    int status = read_head(&w, head, sizeof head, H_LONG_MS);
    if (ctype && ctypelen)
        header(head, "content-type", ctype, ctypelen);
    long want = header(head, "content-length", len, sizeof len) ? atol(len) : -1;
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    while (status > 0 && (want < 0 || (long)w.len < want) && fill(&w, end))
        ;
    if (body && bodylen) {
        size_t n = w.len < bodylen - 1 ? w.len : bodylen - 1;
        memcpy(body, w.buf, n);
        body[n] = '\0';
    }
    close(w.fd);
    free(w.buf);
    return status;
}

int vw_http_method(int port, const char *method, const char *path)
{
    struct vw_ws w = { .fd = h_tcp_connect(port) };
    char req[512], head[4096];
    snprintf(req, sizeof req,
             "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0\r\n"
             "Connection: close\r\n\r\n",
             method, path, port);
    h_write_all(w.fd, req, strlen(req));
    int status = read_head(&w, head, sizeof head, H_LONG_MS);
    close(w.fd);
    free(w.buf);
    return status;
}

/* ---- WebSocket ------------------------------------------------------- */

int vw_ws_connect(struct vw_ws *w, int port, const char *path, const char *extra, int rcvbuf)
{
    memset(w, 0, sizeof *w);
    w->fd = connect_rcvbuf(port, rcvbuf);
    char req[1024], head[4096], accept[64];
    snprintf(req, sizeof req,
             "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
             "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
             "Sec-WebSocket-Version: 13\r\n%s\r\n",
             path, port, extra ? extra : "");
    h_write_all(w->fd, req, strlen(req));
    int status = read_head(w, head, sizeof head, H_LONG_MS);
    if (status == 101) {
        /* RFC 6455's own example key and its answer */
        ck_assert_msg(header(head, "sec-websocket-accept", accept, sizeof accept) &&
                          strcmp(accept, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") == 0,
                      "bad handshake answer: %s", head);
    } else {
        close(w->fd);
        w->fd = -1;
        free(w->buf);
        w->buf = NULL;
    }
    return status;
}

void vw_ws_open(struct vw_ws *w, int port)
{
    int st = vw_ws_connect(w, port, "/ws", NULL, 0);
    ck_assert_msg(st == 101, "WebSocket handshake: HTTP %d", st);
}

void vw_ws_frame(struct vw_ws *w, uint8_t b0, bool mask, uint64_t declared, const void *payload,
                 size_t len)
{
    static const uint8_t key[4] = { 0x37, 0xfa, 0x21, 0x3d };
    uint8_t *f = malloc(14 + len);
    ck_assert_ptr_nonnull(f);
    size_t n = 0;
    f[n++] = b0;
    uint8_t m = mask ? 0x80 : 0;
    if (declared < 126) {
        f[n++] = m | (uint8_t)declared;
    } else if (declared <= 0xFFFF) {
        f[n++] = m | 126;
        f[n++] = (uint8_t)(declared >> 8);
        f[n++] = (uint8_t)declared;
    } else {
        f[n++] = m | 127;
        for (int i = 7; i >= 0; i--)
            f[n++] = (uint8_t)(declared >> (8 * i));
    }
    if (mask) {
        memcpy(f + n, key, 4);
        n += 4;
    }
    for (size_t i = 0; i < len; i++)
        f[n + i] = ((const uint8_t *)payload)[i] ^ (mask ? key[i % 4] : 0);
    /* a server that refuses the frame may close while it is being sent */
    size_t off = 0;
    while (off < n + len) {
        ssize_t k = send(w->fd, f + off, n + len - off, MSG_NOSIGNAL);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    free(f);
}

void vw_ws_text(struct vw_ws *w, const char *text)
{
    vw_ws_frame(w, 0x80 | VW_OP_TEXT, true, strlen(text), text, strlen(text));
}

/* One frame from the buffer: 1 with its parts, 0 when incomplete. */
static int take_frame(struct vw_ws *w, uint8_t *b0, uint8_t **payload, uint64_t *plen, size_t *used)
{
    if (w->len < 2)
        return 0;
    uint64_t n = w->buf[1] & 0x7f;
    size_t h = 2;
    if (n == 126) {
        if (w->len < 4)
            return 0;
        n = (uint64_t)w->buf[2] << 8 | w->buf[3];
        h = 4;
    } else if (n == 127) {
        if (w->len < 10)
            return 0;
        n = 0;
        for (int i = 0; i < 8; i++)
            n = n << 8 | w->buf[2 + i];
        h = 10;
    }
    ck_assert_msg(!(w->buf[1] & 0x80), "the server masked a frame");
    if (w->len < h + n)
        return 0;
    *b0 = w->buf[0];
    *payload = w->buf + h;
    *plen = n;
    *used = h + (size_t)n;
    return 1;
}

int vw_ws_recv(struct vw_ws *w, char **msg, size_t *len, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    char *acc = NULL;
    size_t alen = 0;
    int op = -1;
    for (;;) {
        uint8_t b0, *p;
        uint64_t plen;
        size_t used;
        while (!take_frame(w, &b0, &p, &plen, &used)) {
            if (!fill(w, end)) {
                free(acc);
                return w->eof ? 0 : -1;
            }
        }
        int fop = b0 & 0x0f;
        if (fop == VW_OP_CLOSE) {
            w->close_code = plen >= 2 ? (p[0] << 8 | p[1]) : 1005;
            drop(w, used);
            free(acc);
            return 0;
        }
        if (fop == VW_OP_PING) {
            vw_ws_frame(w, 0x80 | VW_OP_PONG, true, plen, p, (size_t)plen);
            drop(w, used);
            continue;
        }
        if (fop == VW_OP_PONG) {
            drop(w, used);
            continue;
        }
        if (fop != VW_OP_CONT)
            op = fop;
        char *bigger = realloc(acc, alen + (size_t)plen + 1);
        ck_assert_ptr_nonnull(bigger);
        acc = bigger;
        memcpy(acc + alen, p, (size_t)plen);
        alen += (size_t)plen;
        acc[alen] = '\0';
        drop(w, used);
        if (b0 & 0x80) {
            *msg = acc;
            *len = alen;
            return op;
        }
    }
}

cJSON *vw_ws_expect(struct vw_ws *w, const char *type, int timeout_ms)
{
    bool state = strcmp(type, "state") == 0;
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        cJSON *list = w->batch ? cJSON_GetObjectItemCaseSensitive(w->batch, "states") : NULL;
        if (state && cJSON_GetArraySize(list) > 0)
            return cJSON_DetachItemFromArray(list, 0);
        cJSON_Delete(w->batch);
        w->batch = NULL;
        uint64_t now = h_now_us();
        if (now >= end)
            return NULL;
        char *msg = NULL;
        size_t len = 0;
        int op = vw_ws_recv(w, &msg, &len, (int)((end - now) / 1000u) + 1);
        if (op <= 0)
            return NULL;
        ck_assert_int_eq(op, VW_OP_TEXT);
        cJSON *o = cJSON_ParseWithLength(msg, len);
        ck_assert_msg(cJSON_IsObject(o), "not a JSON object: %.200s", msg);
        free(msg);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
        ck_assert_msg(cJSON_IsString(t), "message without type");
        if (strcmp(t->valuestring, type) == 0)
            return o;
        if (state && strcmp(t->valuestring, "states") == 0) {
            ck_assert_msg(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "states")),
                          "a states message without its array");
            w->batch = o;
            continue;
        }
        cJSON_Delete(o);
    }
}

bool vw_ws_ended(struct vw_ws *w, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        uint64_t now = h_now_us();
        if (now >= end)
            return false;
        char *msg = NULL;
        size_t len = 0;
        int op = vw_ws_recv(w, &msg, &len, (int)((end - now) / 1000u) + 1);
        free(msg);
        if (op == 0)
            return true;
        if (op < 0)
            return false;
    }
}

void vw_ws_close(struct vw_ws *w, bool clean)
{
    if (w->fd < 0)
        return;
    if (clean) {
        const uint8_t code[2] = { 0x03, 0xE8 };
        vw_ws_frame(w, 0x80 | VW_OP_CLOSE, true, 2, code, 2);
        vw_ws_ended(w, H_LONG_MS);
    }
    close(w->fd);
    w->fd = -1;
    cJSON_Delete(w->batch);
    w->batch = NULL;
    free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}

/* ---- kenaf-view ------------------------------------------------------ */

void vw_view_start(struct vw_view *v, const char *const args[])
{
    const char *exe = getenv("KN_VIEW");
    ck_assert_msg(exe != NULL, "KN_VIEW not set (meson sets it)");
    char *argv[40];
    int n = 0;
    argv[n++] = (char *)exe;
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    for (int i = 0; args && args[i] && n < 38; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    h_spawn_wrapped(&v->proc, argv, NULL, "kenaf-view.stderr");
    char line[256] = "";
    bool got = h_read_line(&v->proc, line, sizeof line, 6 * H_LONG_MS);
    ck_assert_msg(got && sscanf(line, "kenaf-view: http://127.0.0.1:%d/", &v->port) == 1,
                  "kenaf-view said \"%s\"; stderr: %s", line, h_stderr(&v->proc));
}

cJSON *vw_stats(struct vw_view *v)
{
    static char body[1 << 20];
    int st = vw_http_get(v->port, "/api/stats", body, sizeof body, NULL, 0);
    ck_assert_msg(st == 200, "/api/stats: HTTP %d; stderr: %s", st, h_stderr(&v->proc));
    cJSON *o = cJSON_Parse(body);
    ck_assert_msg(o != NULL, "/api/stats is not JSON: %.200s", body);
    return o;
}

double vw_stat(struct vw_view *v, const char *path)
{
    cJSON *root = vw_stats(v);
    const cJSON *o = root;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
        o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(k)) : cJSON_GetObjectItem(o, k);
    double val = !o ? 0 : cJSON_IsBool(o) ? (cJSON_IsTrue(o) ? 1 : 0) : o->valuedouble;
    cJSON_Delete(root);
    return val;
}

bool vw_wait_stat(struct vw_view *v, const char *path, double min, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    do {
        if (vw_stat(v, path) >= min)
            return true;
        h_sleep_ms(20);
    } while (h_now_us() < end);
    return vw_stat(v, path) >= min;
}

long vw_rss_allow_kb(void)
{
    return getenv("KN_SANITIZED") ? 16384 : 256;
}
