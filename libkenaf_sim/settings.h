/* The library's settings, read from the KENAF_* environment variables at
 * hrt_kenaf_init. Parsing is kept apart from getenv so it can be tested. */
#ifndef KN_SETTINGS_H
#define KN_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define KN_SETTINGS_HOST_LEN 256
#define KN_SETTINGS_PORT_LEN 8

#define KN_SETTINGS_DEFAULT_ROBOT "127.0.0.1:9750"
#define KN_SETTINGS_DEFAULT_TIMEOUT_MS 1000
#define KN_SETTINGS_DEFAULT_STATUS_MS 20

struct kn_settings {
    char host[KN_SETTINGS_HOST_LEN];
    char port[KN_SETTINGS_PORT_LEN];
    int timeout_ms;
    int status_ms;
    bool debug;
    bool lockstep;   /* KENAF_LOCKSTEP=1: refuse a robot that cannot step */
    uint8_t key[64]; /* KENAF_KEY_FILE: shared key; key_len 0 = none */
    size_t key_len;
};

/* "host:port", "host", "[v6addr]:port", "[v6addr]" or a bare IPv6 address
 * (more than one ':'), read by kn_hostport_parse (common/hostport.h); the
 * port defaults to 9750 and must be 1..65535. 0, or -1 with
 * `"<spec>": <reason>` in err. */
int kn_settings_parse_robot(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
                            char *err, size_t errlen);

/* A decimal integer within [min, max], nothing else around it. 0 or -1. */
int kn_settings_parse_int(const char *s, long min, long max, int *out);

/* Fills *out from the environment (defaults for unset variables). 0, or -1
 * with a reason naming the variable in err. */
int kn_settings_load(struct kn_settings *out, char *err, size_t errlen);

#endif
