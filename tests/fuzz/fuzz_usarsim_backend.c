/* libFuzzer target for the usarsim backend's input side: any bytes, fed
 * in pieces of a size the input picks, with reconnects and commands in
 * between, must leave a finite neutral state that converts to a STATUS,
 * make the client write only whole CR LF lines that tokenize, and keep
 * the malformed count within the line count. The codec target
 * (fuzz_usarsim.c) covers the tokenizer and parsers; this one covers what
 * the backend does with their results (pose sources, derived rates,
 * encoder wrap, re-INIT at a pose taken from the input).
 *
 * Speed: the client is sans-I/O (no socket, no timer: the clock is an
 * argument), so a run costs what its lines and commands cost. A command
 * goes out where the input says so (a piece starting with BYTE_COMMAND)
 * and once at the end, not every few pieces: each one's lines are
 * tokenized again here, and one every 4 pieces took most of the time.
 * An over-long line comes from BYTE_LONG_LINE (a run of KN_USAR_MAX_LINE
 * filler bytes) instead of 16 KiB of input, so inputs stay short. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend_usarsim.h"
#include "config.h"
#include "convert.h"
#include "krp.h"
#include "log.h"
#include "usarsim_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A piece starting with one of these bytes also does this (the byte is
 * fed as well: the server may send anything). */
#define BYTE_RECONNECT 0xFF /* after the piece: disconnect, connect (re-INIT) */
#define BYTE_LONG_LINE 0xFE /* before the piece: KN_USAR_MAX_LINE more bytes of a word */
#define BYTE_COMMAND 0xFD   /* after the piece: a command made from the next byte */

/* At most this many reconnects and commands per input; past them the
 * bytes are only data. 0xFF and 0xFD are bytes mutations like to make, and
 * an input of them re-INITs (format, tokenize, re-apply) dozens of times
 * for nothing the first few did not reach: that was a fifth of the run. */
#define MAX_RECONNECTS 4
#define MAX_COMMANDS 8

static struct kn_usar_line check_line;

/* Lines already checked. The client writes the same INIT, GETCONF and
 * DRIVE lines again and again; tokenizing each copy (under coverage
 * instrumentation) was a third of a run, and a copy of a line that
 * tokenized tokenizes. */
#define SEEN_LINES 32
#define SEEN_MAX 256
static char seen[SEEN_LINES][SEEN_MAX];
static size_t seen_len[SEEN_LINES];
static unsigned seen_next;

static bool seen_before(const char *d, size_t n)
{
    for (unsigned k = 0; k < SEEN_LINES; k++)
        if (seen_len[k] == n && memcmp(seen[k], d, n) == 0)
            return true;
    if (n <= SEEN_MAX) {
        unsigned k = seen_next++ % SEEN_LINES;
        memcpy(seen[k], d, n);
        seen_len[k] = n;
    }
    return false;
}

/* Everything the client writes must be whole CR LF lines of the protocol. */
static void on_write(void *ctx, const char *d, size_t n)
{
    (void)ctx;
    if (n < 2 || d[n - 2] != '\r' || d[n - 1] != '\n')
        abort();
    size_t start = 0;
    while (start < n) {
        const char *cr = memchr(d + start, '\r', n - start);
        size_t end = (size_t)(cr - d); /* there is one: the write ends in CR LF */
        if (end + 1 >= n || d[end + 1] != '\n' || memchr(d + start, '\n', end - start))
            abort();
        if (!seen_before(d + start, end - start) &&
            kn_usar_tokenize(d + start, end - start, &check_line) != KN_USAR_OK)
            abort();
        start = end + 2;
    }
}

static void on_ready(void *ctx)
{
    (void)ctx;
}

static void on_state(void *ctx, const struct kn_state *s)
{
    (void)ctx;
    const double *v = (const double *)s;
    for (size_t i = 0; i < offsetof(struct kn_state, have) / sizeof(double); i++)
        if (!isfinite(v[i]))
            abort();
    struct kn_krp_status st;
    kn_conv_state_to_krp(s, 4000, &st);
}

static void on_fail(void *ctx, const char *why)
{
    (void)ctx;
    if (!why || !why[0])
        abort();
}

static const struct kn_cfg_robot *robot(void)
{
    static struct kn_config cfg;
    static bool loaded;
    if (!loaded) {
        static const char json[] =
            "{\"robots\":[{\"name\":\"kenaf\",\"backend\":{\"type\":\"usarsim\","
            "\"counts_per_tick\":3.2,\"usarsim\":{\"location_m\":[1,2,0.5]}}}]}";
        char err[1024];
        if (kn_config_parse(json, sizeof json - 1, "fuzz", NULL, &cfg, err, sizeof err) != 0)
            abort();
        kn_log_set_level(KN_LOG_ERROR);
        loaded = true;
    }
    return &cfg.robots[0];
}

/* Inputs of at most MAX_LEN bytes unless -max_len says otherwise: ten to
 * twenty lines (an over-long one is a single 0xFE byte), enough for every
 * sequence the client keeps state across (a wrap needs three encoder
 * lines, a flipper's source two), and a run costs about a microsecond a
 * byte under the sanitizers: with 1 KiB inputs it ran at 0.6-0.8 of this rate. */
#define MAX_LEN "-max_len=512"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static char *args[256];
    int n = *argc;
    for (int i = 1; i < n; i++)
        if (strncmp((*argv)[i], "-max_len=", 9) == 0)
            return 0;
    if (n + 2 > (int)(sizeof args / sizeof args[0]))
        return 0;
    /* libFuzzer reads its flags after this call: add ours first */
    args[0] = (*argv)[0];
    args[1] = (char *)MAX_LEN;
    for (int i = 1; i < n; i++)
        args[i + 1] = (*argv)[i];
    args[n + 1] = NULL;
    *argc = n + 1;
    *argv = args;
    return 0;
}

/* KN_USAR_MAX_LINE bytes of a word, no EOL. */
static const char *long_run(void)
{
    static char run[KN_USAR_MAX_LINE];
    if (run[0] == '\0')
        memset(run, 'x', sizeof run);
    return run;
}

/* A trial line the client took (usarsim_trial.h): every field within
 * what KRP/1's TRIAL may carry, the name a string. */
static void on_trial(void *ctx, const struct kn_krp_trial *t)
{
    (void)ctx;
    if (memchr(t->name, '\0', sizeof t->name) == NULL || t->course > KN_KRP_TRIAL_FIGURE8 ||
        (t->flags & ~(KN_KRP_TRIAL_F_UNDER_WAY | KN_KRP_TRIAL_F_ENDED)) ||
        t->end > KN_KRP_TRIAL_END_PROGRAM)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kn_usarsim_io io = {
        .ctx = NULL,
        .write = on_write,
        .ready = on_ready,
        .state = on_state,
        .fail = on_fail,
        .trial = on_trial,
    };
    char err[128];
    struct kn_usarsim *u = kn_usarsim_new(robot(), &io, err, sizeof err);
    if (!u)
        abort();
    uint64_t now = 1000000000ull;
    kn_usarsim_connected(u, now);
    /* the first byte: piece size and whether commands are re-applied */
    size_t piece = size ? (size_t)(data[0] % 64) + 1 : 1;
    bool reapply = size && (data[0] & 0x40);
    size_t off = size ? 1 : 0;
    int reconnects = 0, commands = 0;
    while (off < size) {
        size_t len = size - off < piece ? size - off : piece;
        if (data[off] == BYTE_LONG_LINE) /* the line goes on past the limit */
            kn_usarsim_feed(u, long_run(), KN_USAR_MAX_LINE, now);
        kn_usarsim_feed(u, (const char *)data + off, len, now);
        now += 1000000ull * (data[off] % 50);
        if (data[off] == BYTE_COMMAND && commands++ < MAX_COMMANDS) {
            int8_t b = off + len < size ? (int8_t)data[off + len] : 0;
            struct kn_command c;
            memset(&c, 0, sizeof c);
            c.belt_speed_m_s[0] = b / 100.0;
            c.belt_speed_m_s[1] = -b / 70.0;
            c.flipper_mask = (uint8_t)(b & 0x0F);
            for (int k = 0; k < KN_NFLIPPERS; k++)
                c.flipper_rad[k] = (b + k) / 40.0;
            kn_usarsim_command(u, &c, reapply, now);
        }
        if (data[off] == BYTE_RECONNECT &&
            reconnects++ < MAX_RECONNECTS) { /* a reconnect: re-INIT at whatever pose was read */
            kn_usarsim_disconnected(u);
            kn_usarsim_connected(u, now);
        }
        off += len;
    }
    on_state(NULL, kn_usarsim_state(u));
    cJSON *o = cJSON_CreateObject();
    kn_usarsim_stats(u, o);
    const cJSON *lines = cJSON_GetObjectItemCaseSensitive(o, "lines");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "malformed");
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(m, "total");
    const cJSON *too_long = cJSON_GetObjectItemCaseSensitive(m, "too_long");
    /* every malformed line was a line (over-long ones never reach the parser) */
    if (!cJSON_IsNumber(lines) || !cJSON_IsNumber(total) || !cJSON_IsNumber(too_long) ||
        total->valuedouble > lines->valuedouble + too_long->valuedouble)
        abort();
    cJSON_Delete(o);
    kn_usarsim_free(u);
    return 0;
}
