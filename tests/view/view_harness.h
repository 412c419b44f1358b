/* Test support for kenaf-view: a tiny WebSocket client written on a raw
 * TCP socket (the handshake, then frames built by hand, so a test can send
 * exactly the malformed or oversized frame it wants and see what the
 * server does), a plain HTTP GET, kenaf-view started as a process with its
 * port read from the line it prints, its /api/stats, and a process's RSS.
 * Every wait has a deadline; failures are Check assertions. */
#ifndef KN_TEST_VIEW_HARNESS_H
#define KN_TEST_VIEW_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "harness_proc.h"

/* ---- HTTP ---- */
/* GET path (HTTP/1.1, Connection: close); returns the status code, the
 * body (cut to bodylen - 1, NUL-terminated) in body, the Content-Type in
 * ctype (may be NULL). -1 when nothing answered. */
int vw_http_get(int port, const char *path, char *body, size_t bodylen, char *ctype,
                size_t ctypelen);
/* The same with another method and no body. */
int vw_http_method(int port, const char *method, const char *path);

/* ---- WebSocket ---- */
#define VW_OP_CONT 0x0
#define VW_OP_TEXT 0x1
#define VW_OP_BINARY 0x2
#define VW_OP_CLOSE 0x8
#define VW_OP_PING 0x9
#define VW_OP_PONG 0xA

struct vw_ws {
    int fd;
    uint8_t *buf; /* received, not yet taken */
    size_t len, cap;
    bool eof;
    int close_code; /* from the server's close frame, or 0 */
    cJSON *batch;   /* a "states" message whose states are not all taken */
};

/* Handshake at path with extra header lines ("Name: value\r\n"..., may be
 * NULL); rcvbuf > 0 sets SO_RCVBUF before connecting (a client that reads
 * slowly). Returns the HTTP status (101 when accepted); on 101 w is open. */
int vw_ws_connect(struct vw_ws *w, int port, const char *path, const char *extra, int rcvbuf);
/* vw_ws_connect at /ws that must succeed. */
void vw_ws_open(struct vw_ws *w, int port);

/* One frame exactly as given: first byte b0 (FIN, RSV, opcode), the
 * length field says declared, payload has len bytes (may differ), masked
 * with a fixed key unless mask is false. */
void vw_ws_frame(struct vw_ws *w, uint8_t b0, bool mask, uint64_t declared, const void *payload,
                 size_t len);
/* A well-formed masked text message in one frame. */
void vw_ws_text(struct vw_ws *w, const char *text);

/* The next complete message (continuations joined; pings answered, pongs
 * skipped): its opcode, the text NUL-terminated in *msg (malloc'ed, the
 * caller frees) with its length. 0 at end of stream or after the server's
 * close frame (close_code set), -1 on timeout. */
int vw_ws_recv(struct vw_ws *w, char **msg, size_t *len, int timeout_ms);
/* The next message of the given "type" (others skipped), parsed; NULL on
 * timeout or close. The caller deletes it. "state" takes the states of
 * the server's "states" messages one by one, in their order. */
cJSON *vw_ws_expect(struct vw_ws *w, const char *type, int timeout_ms);
/* True when the server ends the connection (close frame or EOF) within
 * timeout_ms, whatever else it sends before. */
bool vw_ws_ended(struct vw_ws *w, int timeout_ms);
/* A clean close (close frame 1000, then wait for the server's end) or
 * an abrupt one (the socket just closed). */
void vw_ws_close(struct vw_ws *w, bool clean);

/* ---- kenaf-view ---- */
struct vw_view {
    struct h_proc proc;
    int port;
};
/* Starts $KN_VIEW --listen 127.0.0.1:0 and args (NULL-terminated) under
 * KN_WRAP; returns once it printed its URL. */
void vw_view_start(struct vw_view *v, const char *const args[]);
/* GET /api/stats, parsed (the caller deletes it); fails the test if none. */
cJSON *vw_stats(struct vw_view *v);
/* A number from /api/stats by dotted path ("ws.accepted",
 * "robots.0.krp_sent.HELLO"); a missing one reads 0. */
double vw_stat(struct vw_view *v, const char *path);
/* Polls until vw_stat(path) >= min; true when reached. */
bool vw_wait_stat(struct vw_view *v, const char *path, double min, int timeout_ms);

/* How much VmRSS may grow where it must stay flat: 256 KiB, or 16 MiB in
 * a sanitized build (KN_SANITIZED: ASan keeps freed memory in quarantine). */
long vw_rss_allow_kb(void);

#endif
