/* What the tests of kenaf-cameras as a whole share (camsys.c): the
 * daemon, a KRP/1 client of it and kenaf-cameras, started per test. */
#ifndef KN_TEST_CAMSYS_H
#define KN_TEST_CAMSYS_H

#include "harness.h"

extern struct h_daemon d; /* kenaf-simd on the engine, robot "kenaf" */
extern struct h_udp u;    /* a client of it, after HELLO */
extern struct h_proc cams;
extern int rtsp_port, http_port; /* kenaf-cameras's, from its URLs */

/* $name, or dflt when it is unset or empty. */
const char *env_or(const char *name, const char *dflt);
/* kenaf-simd on the engine, waited for, and u after its HELLO. */
void start_daemon(void);
/* kenaf-cameras with the extra arguments (up to 4, NULL-terminated, may
 * be NULL), its ports read from the URLs it prints. */
void cameras_start(const char *const extra[]);
/* Closes u; h_teardown. */
void teardown(void);
/* "SCHEME://127.0.0.1:PORT/PATH" (one of 4 static buffers). */
const char *url(const char *scheme, const char *path);
/* curl's response code for a URL, the body in file `to`. */
int fetch(const char *u0, const char *to);

#endif
