/* The "engine" backend and the kenaf-engine processes kenaf-simd spawns
 * for it (engine_proc.h). The protocol side is the USARSim client's
 * (kn_usarsim_engine_ops); this file adds the process: spawn, read the
 * PORT line, pass its stderr on (keeping the last line: an engine that
 * fails at start-up says why there), point the robots' links at it,
 * restart with back-off when it dies (the links reconnect and the client
 * re-spawns each robot at its last pose), kill and restart it when it
 * stays silent (hung, stopped), stop it with its last robot. Silence is
 * the process's own: the engine says "ALIVE <time>" on its stdout every
 * HEARTBEAT_MS (--heartbeat-ms), so a simulator link that a network cuts
 * off, while the engine runs on, never restarts it (the robot stays where
 * the engine has it, braked by its dead-man); and what waits unread in
 * that pipe counts as heard, so kenaf-simd's own stall (stopped, blocked)
 * is never taken for the engine's. Each spawn
 * gets a fresh random token in its environment; every robot connection
 * presents it (KENAF {Cmd Auth}) before INIT, so no other local program
 * can spawn robots in that world or reset, pause or re-pace it. Emergency
 * stops (kn_command.emergency) go out as KENAF {Cmd Brake}. Each robot
 * connection arms the engine's dead-man (KENAF {Cmd Deadman}) at the
 * robot's watchdog time and keeps it fed with KENAF {Cmd Alive}, so a
 * robot whose daemon the network cuts off stops as a controller's does. */
#include "engine_proc.h"

#include <errno.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "backend_usarsim.h"
#include "engine_files.h"
#include "krp.h"
#include "log.h"
#include "selfdir.h"
#include "usarsim_codec.h"

enum pstate { P_STARTING, P_RUNNING, P_BACKOFF, P_STOPPING };
static const char *const pstate_names[] = { "starting", "running", "backoff", "stopping" };

struct eng_be;

struct engine_proc {
    struct engine_proc *next;
    uv_loop_t *loop;
    char cfg_path[KN_CFG_PATH_LEN]; /* the key: engine.path, terrain, robot as configured */
    char terrain[KN_CFG_PATH_LEN];
    char robot[KN_CFG_PATH_LEN];
    bool lockstep; /* --pace step: its robots' time passes on STEP only */
    char exe[PATH_MAX];
    char terrain_file[PATH_MAX], robot_file[PATH_MAX]; /* what the engine gets */
    struct eng_be *users;
    unsigned nusers;

    enum pstate st;
    uv_process_t proc;
    uv_pipe_t out, in, err;
    uv_timer_t timer;
    bool proc_open, out_open, in_open, err_open, timer_open;
    bool alive;       /* spawned and its exit not yet seen */
    unsigned handles; /* handles not yet closed: free at 0 once stopping */
    char line[128];
    size_t linelen;
    char eline[512]; /* stderr line being read */
    size_t elinelen;
    char last_stderr[512]; /* its last complete line */
    int port, pid;
    double backoff_s;
    uint64_t started_ns;
    bool timed_out; /* killed for not saying PORT in time */

    char token[2 * KN_ENGINE_TOKEN_BYTES + 1]; /* this spawn's, hex */
    uint64_t running_ns;                       /* when it said PORT */
    uint64_t beat_ns, beats;                   /* its last ALIVE line, and how many came */
    bool silent_kill;                          /* killed for silence: its exit says so */
    uint64_t silent_kills;
    uint64_t unread_saves; /* silent by the clock, but its lines were waiting unread */
    /* how late the silence timer fired: our own loop's stalls */
    uint64_t tick_ns, lag_ns, lag_max_ns, stalls;

    uint64_t spawns, restarts, exits, start_failures, failures_in_a_row;
    int last_status, last_signal;
    char last_error[PATH_MAX + 768];
};

struct eng_be {
    struct kn_link *link;
    void *inner;              /* the USARSim client backend */
    struct engine_proc *proc; /* NULL: an engine at backend.address */
    struct eng_be *next;      /* next user of proc */
    double silent_restart_s;  /* backend.engine.silent_restart_s */
    double deadman_s;         /* the robot's watchdog time */
    uv_timer_t *alive;        /* KENAF {Cmd Alive} every deadman_s / ALIVES_PER_DEADMAN */
    uint64_t auths_sent, brakes_sent, alives_sent;
};

/* Alive lines per dead-man time: one late or lost write never trips it. */
#define ALIVES_PER_DEADMAN 4

static struct engine_proc *procs;

#define SILENCE_POLL_MS 100   /* a running engine's silence is checked this often */
#define HEARTBEAT_MS "100"    /* --heartbeat-ms: ALIVE lines this often */
#define STALL_NS 500000000ull /* the silence timer this late: our loop stood still */

static void spawn(struct engine_proc *p);
static void on_timer(uv_timer_t *t);
static double silent_limit_s(const struct engine_proc *p);
static void silence_check(struct engine_proc *p);

/* ---- executable ----------------------------------------------------------- */

static bool executable(const char *path)
{
    struct stat st;
    return access(path, X_OK) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Appends a place looked at to why ("a, b, c"). */
static void looked(char *why, size_t whylen, const char *place)
{
    size_t n = strlen(why);
    if (n < whylen)
        snprintf(why + n, whylen - n, "%s%s", n ? ", " : "", place);
}

static bool try_path(const char *cand, char *out, size_t outlen, char *why, size_t whylen)
{
    char real[PATH_MAX];
    if (executable(cand) && realpath(cand, real) && strlen(real) < outlen) {
        snprintf(out, outlen, "%s", real);
        return true;
    }
    looked(why, whylen, cand);
    return false;
}

static bool search_path(const char *name, char *out, size_t outlen, char *why, size_t whylen)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char cand[PATH_MAX];
        int w = snprintf(cand, sizeof cand, "%.*s/%s", (int)n, n ? path : ".", name);
        if (w > 0 && (size_t)w < sizeof cand && executable(cand) && (size_t)w < outlen) {
            snprintf(out, outlen, "%s", cand);
            return true;
        }
        path += n + (path[n] == ':');
    }
    looked(why, whylen, "PATH");
    return false;
}

int kn_engine_resolve(const char *configured, char *out, size_t outlen, char *why, size_t whylen)
{
    if (whylen)
        why[0] = '\0';
    if (configured && configured[0]) {
        if (!strchr(configured, '/'))
            return search_path(configured, out, outlen, why, whylen) ? 0 : -1;
        return try_path(configured, out, outlen, why, whylen) ? 0 : -1;
    }
    char self[PATH_MAX], cand[PATH_MAX + 32];
    if (kn_selfdir_get(self, sizeof self) == 0) {
        /* installed: side by side in bindir */
        snprintf(cand, sizeof cand, "%s/%s", self, KN_ENGINE_EXE);
        if (try_path(cand, out, outlen, why, whylen))
            return 0;
        /* a build tree: BUILD/daemon/kenaf-simd, BUILD/engine/kenaf-engine */
        snprintf(cand, sizeof cand, "%s/../engine/%s", self, KN_ENGINE_EXE);
        if (try_path(cand, out, outlen, why, whylen))
            return 0;
    }
#ifdef KN_ENGINE_BUILD_PATH
    if (try_path(KN_ENGINE_BUILD_PATH, out, outlen, why, whylen))
        return 0;
#endif
    return search_path(KN_ENGINE_EXE, out, outlen, why, whylen) ? 0 : -1;
}

/* The files the engine gets for the configured terrain and robot. */
static int resolve_files(struct engine_proc *p, char *why, size_t whylen)
{
    char dir[PATH_MAX];
    kn_engfiles_dir(p->exe, dir, sizeof dir);
    if (kn_engfiles_path(KN_ENGFILES_TERRAIN, dir, p->terrain, p->terrain_file,
                         sizeof p->terrain_file, why, whylen) < 0)
        return -1;
    return kn_engfiles_path(KN_ENGFILES_ROBOT, dir, p->robot, p->robot_file, sizeof p->robot_file,
                            why, whylen);
}

/* ---- process life ---------------------------------------------------------- */

static void maybe_free(struct engine_proc *p)
{
    if (p->st != P_STOPPING || p->alive || p->handles)
        return;
    free(p);
}

static void on_handle_closed(uv_handle_t *h)
{
    struct engine_proc *p = h->data;
    p->handles--;
    maybe_free(p);
}

static void close_handle(struct engine_proc *p, uv_handle_t *h, bool *open)
{
    if (!*open)
        return;
    *open = false;
    h->data = p;
    uv_close(h, on_handle_closed);
}

static void close_pipes(struct engine_proc *p)
{
    close_handle(p, (uv_handle_t *)&p->out, &p->out_open);
    close_handle(p, (uv_handle_t *)&p->in, &p->in_open);
    close_handle(p, (uv_handle_t *)&p->err, &p->err_open);
}

static void notify_users(struct engine_proc *p)
{
    for (struct eng_be *b = p->users; b; b = b->next)
        kn_link_set_address(b->link, "127.0.0.1", (uint16_t)p->port);
}

/* An engine that fails before it listens (a bad file, a missing library)
 * will most likely fail again: its retries slow down to one a minute. */
static void schedule_restart(struct engine_proc *p, bool start_failure)
{
    double cap = start_failure ? KN_ENGINE_FAIL_BACKOFF_MAX_S : KN_ENGINE_BACKOFF_MAX_S;
    if (p->backoff_s > cap)
        p->backoff_s = cap;
    p->st = P_BACKOFF;
    uv_timer_start(&p->timer, on_timer, (uint64_t)(p->backoff_s * 1000.0 + 0.5), 0);
    p->backoff_s *= 2;
    if (p->backoff_s > cap)
        p->backoff_s = cap;
}

/* ---- the engine's stderr ----------------------------------------------------- */

/* Each line goes on to our stderr as it is (the engine names itself);
 * the last one is kept for the message when the engine fails. */
static void err_line_done(struct engine_proc *p)
{
    if (p->elinelen == 0)
        return;
    p->eline[p->elinelen] = '\0';
    char out[sizeof p->eline + 1];
    memcpy(out, p->eline, p->elinelen);
    out[p->elinelen] = '\n';
    ssize_t w = write(STDERR_FILENO, out, p->elinelen + 1);
    (void)w;
    snprintf(p->last_stderr, sizeof p->last_stderr, "%s", p->eline);
    p->elinelen = 0;
}

static void err_bytes(struct engine_proc *p, const char *data, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (data[i] == '\n') {
            err_line_done(p);
            continue;
        }
        if (p->elinelen >= sizeof p->eline - 1)
            err_line_done(p); /* an overlong line goes on in pieces */
        p->eline[p->elinelen++] = data[i];
    }
}

static void on_err_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h;
    (void)suggested;
    static char chunk[4096]; /* consumed within the read callback */
    buf->base = chunk;
    buf->len = sizeof chunk;
}

static void on_err(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    struct engine_proc *p = s->data;
    if (nread < 0) {
        err_line_done(p);
        close_handle(p, (uv_handle_t *)&p->err, &p->err_open);
        return;
    }
    err_bytes(p, buf->base, (size_t)nread);
}

/* At exit what the engine wrote last may not have been read yet: take it
 * now, so the failure message can quote it. */
static void drain_err(struct engine_proc *p)
{
    uv_os_fd_t fd;
    if (!p->err_open || uv_fileno((uv_handle_t *)&p->err, &fd) != 0)
        return;
    char chunk[4096];
    for (int i = 0; i < 64; i++) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        err_bytes(p, chunk, (size_t)n);
    }
    err_line_done(p);
}

/* ---- process life ------------------------------------------------------------- */

static void on_exit_cb(uv_process_t *proc, int64_t status, int term_signal)
{
    struct engine_proc *p = proc->data;
    p->alive = false;
    p->exits++;
    p->last_status = (int)status;
    p->last_signal = term_signal;
    p->port = 0;
    drain_err(p);
    close_handle(p, (uv_handle_t *)&p->proc, &p->proc_open);
    close_pipes(p);
    if (p->st == P_STOPPING) {
        kn_info("engine (pid %d, terrain %s) stopped", p->pid, p->terrain);
        close_handle(p, (uv_handle_t *)&p->timer, &p->timer_open);
        maybe_free(p);
        return;
    }
    uv_timer_stop(&p->timer);
    p->token[0] = '\0';
    bool start_failure = p->st == P_STARTING;
    double up = (double)(uv_hrtime() - p->started_ns) / 1e9;
    if (up >= KN_ENGINE_STABLE_S)
        p->backoff_s = KN_ENGINE_BACKOFF_FIRST_S;
    char how[128];
    if (p->timed_out)
        snprintf(how, sizeof how, "said no PORT line within %.0f s", KN_ENGINE_START_TIMEOUT_S);
    else if (p->silent_kill)
        snprintf(how, sizeof how, "killed after %.1f s of silence", silent_limit_s(p));
    else if (term_signal)
        snprintf(how, sizeof how, "killed by signal %d after %.1f s", term_signal, up);
    else
        snprintf(how, sizeof how, "exited with status %lld after %.1f s", (long long)status, up);
    p->timed_out = false;
    p->silent_kill = false;
    if (start_failure) {
        p->start_failures++;
        p->failures_in_a_row++;
        snprintf(p->last_error, sizeof p->last_error, "failed at start-up (%s)%s%s", how,
                 p->last_stderr[0] ? ": " : "", p->last_stderr);
        kn_err("engine %s (pid %d, terrain %s) %s; start-up failure %llu in a row, retrying in "
               "%.1f s",
               p->exe, p->pid, p->terrain, p->last_error, (unsigned long long)p->failures_in_a_row,
               p->backoff_s < KN_ENGINE_FAIL_BACKOFF_MAX_S ? p->backoff_s
                                                           : KN_ENGINE_FAIL_BACKOFF_MAX_S);
    } else {
        snprintf(p->last_error, sizeof p->last_error, "%s%s%s", how,
                 p->last_stderr[0] ? "; its last words: " : "", p->last_stderr);
        kn_warn("engine (pid %d, terrain %s) %s; restarting in %.1f s", p->pid, p->terrain,
                p->last_error,
                p->backoff_s < KN_ENGINE_BACKOFF_MAX_S ? p->backoff_s : KN_ENGINE_BACKOFF_MAX_S);
    }
    schedule_restart(p, start_failure);
}

static void on_out_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct engine_proc *p = h->data;
    /* read into the line buffer's free part; a line that does not fit is
     * not a PORT line */
    if (p->linelen >= sizeof p->line - 1)
        p->linelen = 0;
    buf->base = p->line + p->linelen;
    buf->len = sizeof p->line - 1 - p->linelen;
}

static void on_out(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    struct engine_proc *p = s->data;
    if (nread < 0) {
        close_handle(p, (uv_handle_t *)&p->out, &p->out_open);
        return;
    }
    p->linelen += (size_t)nread;
    char *nl;
    while ((nl = memchr(p->line, '\n', p->linelen)) != NULL) {
        *nl = '\0';
        int port;
        char extra;
        if (p->st == P_STARTING && sscanf(p->line, "PORT %d%c", &port, &extra) == 1 && port > 0 &&
            port < 65536) {
            p->port = port;
            p->st = P_RUNNING;
            p->failures_in_a_row = 0;
            p->running_ns = uv_hrtime();
            uv_timer_start(&p->timer, on_timer, SILENCE_POLL_MS, SILENCE_POLL_MS);
            kn_info("engine %s (pid %d, terrain %s) listening on 127.0.0.1:%d for %u robot%s",
                    p->exe, p->pid, p->terrain, port, p->nusers, p->nusers == 1 ? "" : "s");
            notify_users(p);
        } else if (p->st == P_RUNNING && strncmp(p->line, "ALIVE ", 6) == 0) {
            p->beat_ns = uv_hrtime();
            p->beats++;
        }
        size_t used = (size_t)(nl - p->line) + 1;
        memmove(p->line, nl + 1, p->linelen - used);
        p->linelen -= used;
    }
}

/* Failing before a process exists (no executable, a bad name): counted
 * and retried like an engine that exits at once. */
static void spawn_failed(struct engine_proc *p)
{
    p->start_failures++;
    p->failures_in_a_row++;
    kn_err("engine (terrain %s): %s; start-up failure %llu in a row, retrying in %.1f s",
           p->terrain, p->last_error, (unsigned long long)p->failures_in_a_row,
           p->backoff_s < KN_ENGINE_FAIL_BACKOFF_MAX_S ? p->backoff_s
                                                       : KN_ENGINE_FAIL_BACKOFF_MAX_S);
    schedule_restart(p, true);
}

/* A fresh token for each spawn, from the kernel's random source. */
static int make_token(struct engine_proc *p)
{
    unsigned char raw[KN_ENGINE_TOKEN_BYTES];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(p->last_error, sizeof p->last_error,
                     "cannot make the engine's token: "
                     "getrandom: %s",
                     strerror(errno));
            return -1;
        }
        got += (size_t)n;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof raw; i++) {
        p->token[2 * i] = hex[raw[i] >> 4];
        p->token[2 * i + 1] = hex[raw[i] & 15];
    }
    p->token[2 * sizeof raw] = '\0';
    return 0;
}

/* Our environment plus the token (an inherited variable of that name is
 * replaced); NULL when out of memory. The entry strings are the
 * environment's own but for the token's, stored in tok_entry. */
static char **engine_env(const struct engine_proc *p, char *tok_entry, size_t cap)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 2, sizeof *env);
    if (!env)
        return NULL;
    static const char key[] = KN_ENGINE_TOKEN_ENV "=";
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], key, sizeof key - 1) != 0)
            env[j++] = environ[i];
    snprintf(tok_entry, cap, "%s%s", key, p->token);
    env[j] = tok_entry;
    return env;
}

static void spawn(struct engine_proc *p)
{
    char why[PATH_MAX + 256];
    if (make_token(p) < 0) {
        spawn_failed(p);
        return;
    }
    if (kn_engine_resolve(p->cfg_path, p->exe, sizeof p->exe, why, sizeof why) < 0) {
        snprintf(p->last_error, sizeof p->last_error,
                 "no %s executable found (looked at: %s); set backend.engine.path", KN_ENGINE_EXE,
                 why);
        spawn_failed(p);
        return;
    }
    if (resolve_files(p, why, sizeof why) < 0) {
        snprintf(p->last_error, sizeof p->last_error, "%s", why);
        spawn_failed(p);
        return;
    }
    uv_pipe_init(p->loop, &p->out, 0);
    uv_pipe_init(p->loop, &p->in, 0);
    uv_pipe_init(p->loop, &p->err, 0);
    p->out.data = p->in.data = p->err.data = p;
    p->out_open = p->in_open = p->err_open = true;
    p->handles += 3;
    p->linelen = 0;
    p->beat_ns = 0;
    p->tick_ns = 0;
    p->elinelen = 0;
    p->last_stderr[0] = '\0';
    uv_stdio_container_t io[3];
    /* stdin: a pipe we keep open; --stdin-watch ends the engine when it
     * closes, so an engine never outlives a kenaf-simd killed with -9 */
    io[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
    io[0].data.stream = (uv_stream_t *)&p->in;
    io[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    io[1].data.stream = (uv_stream_t *)&p->out;
    io[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    io[2].data.stream = (uv_stream_t *)&p->err;
    /* USARSim's scan intervals (0.1-0.2 s) are too coarse for a
     * controller that closes its loop on the encoders and the heading
     * every status (20 ms in libkenaf): the spawned engine reports those
     * at 50 Hz, as the robot's own driver would. STA keeps USARSim's
     * 0.1 s (time, battery, flipper angles; ASTA brings the flippers at
     * 10 Hz too), so the backend sees the stream a real server sends. */
    char *args[] = { p->exe,
                     "--listen",
                     "127.0.0.1:0",
                     "--terrain",
                     p->terrain_file,
                     "--robot",
                     p->robot_file,
                     "--sen-rate",
                     "GroundTruth=50",
                     "--sen-rate",
                     "Encoder=50",
                     "--stdin-watch",
                     "--heartbeat-ms",
                     HEARTBEAT_MS,
                     "--auth-token-env",
                     KN_ENGINE_TOKEN_ENV,
                     NULL,
                     NULL,
                     NULL };
    if (p->lockstep) { /* the world moves only when a robot's driver steps it */
        size_t n = sizeof args / sizeof args[0] - 3;
        args[n] = "--pace";
        args[n + 1] = "step";
    }
    /* the token goes through the environment, which only our own user
     * (and root) can read; the command line is everybody's (ps) */
    char tok_entry[sizeof KN_ENGINE_TOKEN_ENV + sizeof p->token + 1];
    char **env = engine_env(p, tok_entry, sizeof tok_entry);
    uv_process_options_t o;
    memset(&o, 0, sizeof o);
    o.exit_cb = on_exit_cb;
    o.file = p->exe;
    o.args = args;
    o.env = env;
    o.stdio_count = 3;
    o.stdio = io;
    p->proc.data = p;
    p->proc_open = true;
    p->handles++;
    p->spawns++;
    p->started_ns = uv_hrtime();
    int rc = env ? uv_spawn(p->loop, &p->proc, &o) : UV_ENOMEM;
    free(env);
    memset(tok_entry, 0, sizeof tok_entry);
    if (rc < 0) {
        /* the handle is initialized even when the spawn failed */
        close_handle(p, (uv_handle_t *)&p->proc, &p->proc_open);
        close_pipes(p);
        snprintf(p->last_error, sizeof p->last_error,
                 "cannot start %s: %s (set backend.engine.path)", p->exe, uv_strerror(rc));
        spawn_failed(p);
        return;
    }
    p->alive = true;
    p->pid = p->proc.pid;
    p->st = P_STARTING;
    p->timed_out = false;
    uv_read_start((uv_stream_t *)&p->out, on_out_alloc, on_out);
    uv_read_start((uv_stream_t *)&p->err, on_err_alloc, on_err);
    uv_timer_start(&p->timer, on_timer, (uint64_t)(KN_ENGINE_START_TIMEOUT_S * 1000), 0);
    kn_info("engine: started %s (pid %d, terrain %s, robot %s)", p->exe, p->pid, p->terrain_file,
            p->robot_file);
}

/* The shortest silent_restart_s of the robots it serves. */
static double silent_limit_s(const struct engine_proc *p)
{
    double s = 0;
    for (const struct eng_be *b = p->users; b; b = b->next)
        if (s == 0 || b->silent_restart_s < s)
            s = b->silent_restart_s;
    return s > 0 ? s : KN_ENGINE_SILENT_RESTART_S;
}

/* Bytes the engine wrote to its stdout that we have not read yet. */
static int unread_out(struct engine_proc *p)
{
    uv_os_fd_t fd;
    int n = 0;
    if (!p->out_open || uv_fileno((uv_handle_t *)&p->out, &fd) != 0 || ioctl(fd, FIONREAD, &n) != 0)
        return 0;
    return n;
}

/* How late this tick of the silence timer came: a tick much later than
 * SILENCE_POLL_MS means our own loop stood still (stopped, a blocking
 * call) and read nothing in the meantime. */
static void measure_lag(struct engine_proc *p, uint64_t now)
{
    uint64_t due = p->tick_ns + SILENCE_POLL_MS * 1000000ull;
    p->lag_ns = p->tick_ns && now > due ? now - due : 0;
    if (p->lag_ns > p->lag_max_ns)
        p->lag_max_ns = p->lag_ns;
    if (p->lag_ns >= STALL_NS)
        p->stalls++;
    p->tick_ns = now;
}

/* A running engine that said nothing at all (no heartbeat, no sensor or
 * status line to any robot) for silent_limit_s, counted from when it
 * listened, is hung or stopped: SIGKILL (which a stopped process cannot
 * ignore either), and its exit restarts it as after a crash. A robot
 * link that is silent while the heartbeat comes is the network's doing,
 * not the engine's: the link reports it (stale_ms) and the engine stays.
 * The heartbeat pipe is looked at before judging: after a stall of our
 * own the timers run before the loop reads, and what the engine said
 * meanwhile is still waiting there. */
static void silence_check(struct engine_proc *p)
{
    uint64_t now = uv_hrtime();
    measure_lag(p, now);
    /* in lockstep it says nothing while nobody steps it */
    if (!p->alive || p->silent_kill || p->lockstep)
        return;
    uint64_t heard = p->running_ns > p->beat_ns ? p->running_ns : p->beat_ns;
    for (const struct eng_be *b = p->users; b; b = b->next) {
        uint64_t h = kn_link_heard_ns(b->link);
        if (h > heard)
            heard = h;
    }
    double quiet = (double)(now - heard) / 1e9, limit = silent_limit_s(p);
    if (quiet < limit)
        return;
    if (unread_out(p) > 0) {
        p->unread_saves++; /* it talked; the loop reads it right after the timers */
        return;
    }
    p->silent_kill = true;
    p->silent_kills++;
    kn_warn("engine (pid %d, terrain %s) silent for %.1f s (silent_restart_s %.1f): killing it "
            "to restart it",
            p->pid, p->terrain, quiet, limit);
    uv_process_kill(&p->proc, SIGKILL);
}

static void on_timer(uv_timer_t *t)
{
    struct engine_proc *p = t->data;
    switch (p->st) {
    case P_STARTING:
        /* counted as a start-up failure when its exit is seen */
        p->timed_out = true;
        kn_warn("engine (pid %d): no PORT line within %.0f s; killing it", p->pid,
                KN_ENGINE_START_TIMEOUT_S);
        if (p->alive)
            uv_process_kill(&p->proc, SIGKILL);
        break;
    case P_BACKOFF:
        p->restarts++;
        spawn(p);
        break;
    case P_STOPPING:
        if (p->alive) {
            kn_warn("engine (pid %d) still running %.0f s after SIGTERM: SIGKILL", p->pid,
                    KN_ENGINE_STOP_DEADLINE_S);
            uv_process_kill(&p->proc, SIGKILL);
        }
        break;
    case P_RUNNING: silence_check(p); break;
    }
}

static struct engine_proc *proc_get(uv_loop_t *loop, const struct kn_cfg_backend *cfg)
{
    const char *path = cfg->engine_path;
    const char *terrain = cfg->terrain[0] ? cfg->terrain : "flat";
    const char *robot = cfg->robot[0] ? cfg->robot : "kenaf";
    for (struct engine_proc *p = procs; p; p = p->next)
        if (p->loop == loop && strcmp(p->cfg_path, path) == 0 && strcmp(p->terrain, terrain) == 0 &&
            strcmp(p->robot, robot) == 0 && p->lockstep == cfg->lockstep)
            return p;
    struct engine_proc *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->loop = loop;
    snprintf(p->cfg_path, sizeof p->cfg_path, "%s", path);
    snprintf(p->terrain, sizeof p->terrain, "%s", terrain);
    snprintf(p->robot, sizeof p->robot, "%s", robot);
    p->lockstep = cfg->lockstep;
    p->backoff_s = KN_ENGINE_BACKOFF_FIRST_S;
    uv_timer_init(loop, &p->timer);
    p->timer.data = p;
    p->timer_open = true;
    p->handles++;
    p->next = procs;
    procs = p;
    spawn(p);
    return p;
}

static void proc_stop(struct engine_proc *p)
{
    for (struct engine_proc **pp = &procs; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    p->st = P_STOPPING;
    uv_timer_stop(&p->timer);
    if (p->alive) {
        uv_process_kill(&p->proc, SIGTERM);
        close_pipes(p);
        uv_timer_start(&p->timer, on_timer, (uint64_t)(KN_ENGINE_STOP_DEADLINE_S * 1000), 0);
        return;
    }
    close_pipes(p);
    close_handle(p, (uv_handle_t *)&p->timer, &p->timer_open);
    maybe_free(p);
}

/* ---- the backend ops ------------------------------------------------------- */

void kn_engine_world_files(struct kn_link *l, const char **terrain_file, const char **robot_file)
{
    struct eng_be *b = kn_link_backend(l, &kn_backend_engine);
    const struct engine_proc *p = b ? b->proc : NULL;
    *terrain_file = p && p->terrain_file[0] ? p->terrain_file : NULL;
    *robot_file = p && p->robot_file[0] ? p->robot_file : NULL;
}

static void free_handle(uv_handle_t *h)
{
    free(h);
}

static void *eng_create(struct kn_link *link, const struct kn_cfg_robot *cfg)
{
    struct eng_be *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->link = link;
    b->deadman_s = cfg->watchdog_ms / 1000.0;
    b->alive = malloc(sizeof *b->alive);
    b->inner = b->alive ? kn_usarsim_engine_ops.create(link, cfg) : NULL;
    if (!b->inner) {
        free(b->alive);
        free(b);
        return NULL;
    }
    uv_timer_init(kn_link_loop(link), b->alive);
    b->alive->data = b;
    if (cfg->backend.host[0])
        return b; /* an engine somebody else runs */
    struct engine_proc *p = proc_get(kn_link_loop(link), &cfg->backend);
    if (!p) {
        kn_usarsim_engine_ops.destroy(b->inner);
        uv_close((uv_handle_t *)b->alive, free_handle);
        free(b);
        return NULL;
    }
    b->proc = p;
    b->silent_restart_s = cfg->backend.silent_restart_s;
    b->next = p->users;
    p->users = b;
    p->nusers++;
    /* port 0 until the engine says where it listens: the link waits */
    kn_link_set_address(link, "127.0.0.1", (uint16_t)(p->st == P_RUNNING ? p->port : 0));
    return b;
}

static void eng_destroy(void *be)
{
    struct eng_be *b = be;
    kn_usarsim_engine_ops.destroy(b->inner);
    uv_close((uv_handle_t *)b->alive, free_handle);
    struct engine_proc *p = b->proc;
    if (p) {
        for (struct eng_be **pp = &p->users; *pp; pp = &(*pp)->next)
            if (*pp == b) {
                *pp = b->next;
                break;
            }
        if (--p->nusers == 0)
            proc_stop(p);
    }
    free(b);
}

/* One KENAF line (Auth, Brake, Deadman, Alive) through the codec's
 * writer: {Cmd cmd}, then {key value} when key is set, the value as text
 * or (text NULL) as a number with 3 decimals. */
static void write_kenaf(struct eng_be *b, const char *cmd, const char *key, const char *text,
                        double num)
{
    char buf[256];
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, sizeof buf, "KENAF");
    kn_usar_w_kv(&w, "Cmd", cmd);
    if (key && text)
        kn_usar_w_kv(&w, key, text);
    else if (key)
        kn_usar_w_knum(&w, key, num, 3);
    int n = kn_usar_w_end(&w);
    if (n > 0)
        kn_link_write(b->link, buf, (size_t)n);
    else
        kn_err("robot %s: cannot format KENAF {Cmd %s}: %s", kn_link_robot(b->link), cmd,
               kn_usar_strerror(-n));
}

static void on_alive(uv_timer_t *t)
{
    struct eng_be *b = t->data;
    write_kenaf(b, "Alive", NULL, NULL, 0);
    b->alives_sent++;
}

static void eng_start(void *be)
{
    struct eng_be *b = be;
    /* the token before INIT: the engine refuses INIT from a connection
     * that has not shown it (TCP keeps the order, no need to wait) */
    if (b->proc && b->proc->token[0]) {
        write_kenaf(b, "Auth", "Token", b->proc->token, 0);
        b->auths_sent++;
    }
    kn_usarsim_engine_ops.start(b->inner);
    /* the dead-man after INIT: it brakes the connection's robot */
    write_kenaf(b, "Deadman", "Seconds", NULL, b->deadman_s);
    uint64_t every = (uint64_t)(b->deadman_s * 1000.0 / ALIVES_PER_DEADMAN);
    uv_timer_start(b->alive, on_alive, every, every ? every : 1);
}

static void eng_stop(void *be)
{
    struct eng_be *b = be;
    uv_timer_stop(b->alive);
    kn_usarsim_engine_ops.stop(b->inner);
}

static void eng_input(void *be, const char *data, size_t len)
{
    struct eng_be *b = be;
    kn_usarsim_engine_ops.input(b->inner, data, len);
}

static void eng_send(void *be, const struct kn_command *cmd, bool reapply)
{
    struct eng_be *b = be;
    kn_usarsim_engine_ops.send_command(b->inner, cmd, reapply);
    /* after the DRIVE 0 it follows: the engine brakes the belts at the
     * robot's emergency deceleration instead of its ramp */
    if (cmd->emergency) {
        write_kenaf(b, "Brake", NULL, NULL, 0);
        b->brakes_sent++;
    }
}

static void eng_trial(void *be, bool reset)
{
    struct eng_be *b = be;
    if (b->inner)
        kn_usarsim_engine_ops.trial(b->inner, reset);
}

static void eng_step(void *be, uint32_t advance_us)
{
    struct eng_be *b = be;
    kn_usarsim_engine_ops.step(b->inner, advance_us);
}

static void eng_stats(void *be, cJSON *o)
{
    struct eng_be *b = be;
    if (kn_usarsim_engine_ops.stats)
        kn_usarsim_engine_ops.stats(b->inner, o);
    cJSON_AddNumberToObject(o, "brakes_sent", (double)b->brakes_sent);
    cJSON_AddNumberToObject(o, "auths_sent", (double)b->auths_sent);
    cJSON_AddNumberToObject(o, "deadman_s", b->deadman_s);
    cJSON_AddNumberToObject(o, "alives_sent", (double)b->alives_sent);
    cJSON *x = cJSON_AddObjectToObject(o, "process");
    struct engine_proc *p = b->proc;
    cJSON_AddBoolToObject(x, "spawned_by_us", p != NULL);
    if (!p)
        return;
    cJSON_AddStringToObject(x, "state", pstate_names[p->st]);
    cJSON_AddStringToObject(x, "executable", p->exe);
    cJSON_AddStringToObject(x, "terrain", p->terrain);
    cJSON_AddStringToObject(x, "terrain_file", p->terrain_file);
    cJSON_AddStringToObject(x, "robot", p->robot);
    cJSON_AddStringToObject(x, "robot_file", p->robot_file);
    cJSON_AddNumberToObject(x, "pid", p->alive ? p->pid : 0);
    cJSON_AddNumberToObject(x, "port", p->port);
    cJSON_AddNumberToObject(x, "robots", p->nusers);
    cJSON_AddNumberToObject(x, "spawns", (double)p->spawns);
    cJSON_AddNumberToObject(x, "restarts", (double)p->restarts);
    cJSON_AddNumberToObject(x, "exits", (double)p->exits);
    cJSON_AddNumberToObject(x, "start_failures", (double)p->start_failures);
    cJSON_AddNumberToObject(x, "silent_kills", (double)p->silent_kills);
    cJSON_AddNumberToObject(x, "silent_restart_s", silent_limit_s(p));
    cJSON_AddNumberToObject(x, "heartbeats", (double)p->beats);
    cJSON_AddNumberToObject(x, "heartbeat_age_s",
                            p->beat_ns ? (double)(uv_hrtime() - p->beat_ns) / 1e9 : -1.0);
    cJSON_AddNumberToObject(x, "unread_saves", (double)p->unread_saves);
    cJSON_AddNumberToObject(x, "loop_lag_ms", (double)p->lag_ns / 1e6);
    cJSON_AddNumberToObject(x, "loop_lag_max_ms", (double)p->lag_max_ns / 1e6);
    cJSON_AddNumberToObject(x, "loop_stalls", (double)p->stalls);
    cJSON_AddNumberToObject(x, "failures_in_a_row", (double)p->failures_in_a_row);
    cJSON_AddNumberToObject(
        x, "next_retry_s", p->st == P_BACKOFF ? (double)uv_timer_get_due_in(&p->timer) / 1e3 : 0.0);
    cJSON_AddNumberToObject(x, "uptime_s",
                            p->alive ? (double)(uv_hrtime() - p->started_ns) / 1e9 : 0.0);
    cJSON_AddStringToObject(x, "last_error", p->last_error);
    cJSON_AddStringToObject(x, "last_stderr", p->last_stderr);
}

/* The backend table's "engine" entry: the HELLO_ACK values of
 * kn_usarsim_engine_ops (ground truth, from the GroundTruth sensor),
 * plus the process when no address is set. */
const struct kn_backend_ops kn_backend_engine = {
    .name = "engine",
    .kind = KN_BACKEND_ENGINE,
    .krp_id = KN_KRP_BACKEND_ENGINE,
    .capabilities = KN_KRP_CAP_GROUND_TRUTH,
    .default_port = KN_USAR_DEFAULT_PORT, /* with an address but no port */
    .create = eng_create,
    .destroy = eng_destroy,
    .start = eng_start,
    .stop = eng_stop,
    .input = eng_input,
    .send_command = eng_send,
    .stats = eng_stats,
    .step = eng_step,
    .trial = eng_trial,
};
