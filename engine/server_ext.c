/* The KENAF extension commands (docs/engine.md, "USARSim protocol extensions"): reset, terrain,
 * pause/resume, pace, lockstep Step, Stats, World (server_world.c), the emergency Brake of the
 * connection's robot, its dead-man (Deadman, Alive), and Auth (the token of an engine kenaf-simd
 * spawned, without which a connection may only watch). Real USARSim
 * ignores the head, so a client may send them to either. Every request
 * gets exactly one reply line "KENAF {Cmd X} {Status OK|Failed} ...". */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "server_int.h"

struct reply {
    char buf[KN_SRV_LINE_MAX];
    struct kn_usar_writer w;
};

static void r_begin(struct reply *r, const char *cmd, bool ok)
{
    kn_usar_w_init(&r->w, r->buf, sizeof r->buf, "KENAF");
    kn_usar_w_kv(&r->w, "Cmd", cmd);
    kn_usar_w_kv(&r->w, "Status", ok ? "OK" : "Failed");
}

static void r_time(struct reply *r, const struct kn_srv *s)
{
    kn_usar_w_knum(&r->w, "Time", kn_world_time(s->w), 4);
}

static void r_int(struct reply *r, const char *key, uint64_t v)
{
    kn_usar_w_key(&r->w, key);
    kn_usar_w_int(&r->w, (int64_t)(v > INT64_MAX ? INT64_MAX : v));
}

static void r_send(struct reply *r, struct kn_srv_conn *c)
{
    int n = kn_usar_w_end(&r->w);
    if (n > 0)
        kn_srv_send(c, r->buf, n);
    else
        kn_srv_log(c->srv, "internal: cannot format a KENAF reply (%s)", kn_usar_strerror(-n));
}

/* A reason as a group value: no braces or control bytes, no outer blanks. */
static void fail(struct kn_srv_conn *c, const char *cmd, const char *why)
{
    char text[512];
    size_t n = 0;
    for (size_t i = 0; why[i] && n + 1 < sizeof text; i++) {
        unsigned char ch = (unsigned char)why[i];
        text[n++] = (char)(ch < ' ' || ch == 0x7F || ch == '{' || ch == '}' ? '?' : ch);
    }
    while (n && text[n - 1] == ' ')
        n--;
    text[n] = '\0';
    size_t start = strspn(text, " ");
    struct reply r;
    r_begin(&r, cmd, false);
    kn_usar_w_kv(&r.w, "Reason", text[start] ? text + start : "failed");
    r_send(&r, c);
}

void kn_srv_fail(struct kn_srv_conn *c, const char *cmd, const char *why)
{
    fail(c, cmd, why);
}

static void ok_time(struct kn_srv_conn *c, const char *cmd);

bool kn_srv_refuse_untrusted(struct kn_srv_conn *c, const char *cmd, const char *line, size_t len)
{
    if (c->trusted)
        return false;
    kn_srv_log_bad(c, &c->srv->st.unauthorized, "refused: not authenticated", line, len);
    fail(c, cmd,
         "not authenticated: this engine takes INIT and KENAF commands only from the "
         "kenaf-simd that spawned it");
    return true;
}

/* Equal without telling, by its timing, how much of the token matched. */
static bool token_equal(const char *want, struct kn_usar_str got)
{
    size_t n = strlen(want);
    unsigned char diff = (unsigned char)(got.n != n);
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(want[i] ^ (i < got.n ? got.p[i] : 0));
    return diff == 0;
}

static void do_auth(struct kn_srv_conn *c, const struct kn_usar_line *l)
{
    struct kn_srv *s = c->srv;
    struct kn_usar_str tok;
    if (kn_usar_get_str(l, "Token", &tok) != KN_USAR_OK) {
        s->st.malformed++;
        fail(c, "Auth", "needs {Token t}");
        return;
    }
    if (s->token[0] && !token_equal(s->token, tok)) {
        s->st.auth_failed++;
        kn_srv_log(s, "client %u (%s): wrong token; closing the connection", c->id, c->peer);
        fail(c, "Auth", "wrong token");
        kn_srv_close_after_flush(c);
        return;
    }
    if (!c->trusted)
        kn_srv_log(s, "client %u (%s) authenticated", c->id, c->peer);
    c->trusted = true;
    ok_time(c, "Auth");
}

static void ok_time(struct kn_srv_conn *c, const char *cmd)
{
    struct reply r;
    r_begin(&r, cmd, true);
    r_time(&r, c->srv);
    r_send(&r, c);
}

void kn_srv_steps_reached(struct kn_srv *s)
{
    /* in queue order; a fleet's requests (not sorted by end) as well */
    int j = 0, done = 0;
    for (int i = 0; i < s->nstepq; i++) {
        if (s->stepq[i].target > s->steps) {
            s->stepq[j++] = s->stepq[i];
            continue;
        }
        struct reply r;
        r_begin(&r, "Step", true);
        r_time(&r, s);
        r_int(&r, "Steps", s->steps);
        r_send(&r, s->stepq[i].c);
        s->stepq[i].c->step_target = 0;
        done++;
    }
    s->nstepq = j;
    if (done && kn_srv_fleet_steps(s))
        kn_srv_fleet_update(s);
}

void kn_srv_steps_fail_all(struct kn_srv *s, const char *why)
{
    for (int i = 0; i < s->nstepq; i++) {
        fail(s->stepq[i].c, "Step", why);
        s->stepq[i].c->step_target = 0;
    }
    s->nstepq = 0;
    s->step_goal = s->steps;
}

void kn_srv_steps_drop_conn(struct kn_srv *s, struct kn_srv_conn *c)
{
    /* the steps it asked for still run (requests queued behind them count
     * on that); only its replies go */
    int j = 0;
    for (int i = 0; i < s->nstepq; i++)
        if (s->stepq[i].c != c)
            s->stepq[j++] = s->stepq[i];
    s->nstepq = j;
}

static void do_step(struct kn_srv_conn *c, const struct kn_usar_line *l)
{
    struct kn_srv *s = c->srv;
    double ms;
    if (kn_usar_get_double(l, "Ms", &ms) != KN_USAR_OK || !(ms > 0) || ms > KN_SRV_STEP_MAX_MS) {
        s->st.malformed++;
        fail(c, "Step", "needs {Ms n} with 0 < n <= 600000");
        return;
    }
    if (s->pace.mode != KN_PACE_STEP && !s->paused) {
        s->st.bad_value++;
        fail(c, "Step", "the world runs by itself: pause it first (Cmd Pause) or use pace step");
        return;
    }
    if (s->nstepq >= KN_SRV_STEPQ) {
        s->st.bad_value++;
        fail(c, "Step", "too many Step requests waiting");
        return;
    }
    uint64_t n = (uint64_t)llround(ms * 1e-3 / s->pp.step_s);
    if (n == 0)
        n = 1;
    if (kn_srv_fleet_steps(s)) {
        if (c->step_target) { /* its clock is one: one request at a time */
            s->st.bad_value++;
            fail(c, "Step", "one Step at a time per robot of a fleet");
            return;
        }
        kn_srv_fleet_step(c, n);
        return;
    }
    uint64_t base = s->step_goal > s->steps ? s->step_goal : s->steps;
    s->step_goal = base + n;
    s->stepq[s->nstepq].c = c;
    s->stepq[s->nstepq].target = s->step_goal;
    s->nstepq++;
    kn_srv_schedule(s);
}

static void do_pace(struct kn_srv_conn *c, const struct kn_usar_line *l)
{
    struct kn_srv *s = c->srv;
    struct kn_usar_str mv;
    char mode_s[16];
    enum kn_pace_mode mode = s->pace.mode;
    if (kn_usar_get_str(l, "Mode", &mv) == KN_USAR_OK) {
        size_t n = mv.n < sizeof mode_s - 1 ? mv.n : sizeof mode_s - 1;
        memcpy(mode_s, mv.p, n);
        mode_s[n] = '\0';
        if (kn_pace_mode_parse(mode_s, &mode)) {
            s->st.bad_value++;
            fail(c, "Pace", "Mode must be realtime, fast or step");
            return;
        }
    }
    double rate = s->pace.rate;
    enum kn_usar_result rr = kn_usar_get_double(l, "Rate", &rate);
    if ((rr != KN_USAR_OK && rr != KN_USAR_EMISSING) || !(rate >= 0.01 && rate <= 100)) {
        s->st.malformed++;
        fail(c, "Pace", "Rate must be a number 0.01..100");
        return;
    }
    kn_pacing_set(&s->pace, mode, rate, uv_hrtime());
    kn_srv_schedule(s);
    struct reply r;
    r_begin(&r, "Pace", true);
    kn_usar_w_kv(&r.w, "Mode", kn_pace_mode_name(s->pace.mode));
    kn_usar_w_knum(&r.w, "Rate", s->pace.rate, 4);
    kn_usar_w_kv(&r.w, "Paused", s->paused ? "true" : "false");
    r_time(&r, s);
    r_send(&r, c);
}

static void do_stats(struct kn_srv_conn *c)
{
    struct kn_srv *s = c->srv;
    const struct kn_srv_stats *t = &s->st;
    uint64_t robots = 0;
    for (struct kn_srv_conn *o = s->conns; o; o = o->next)
        robots += o->robot >= 0;
    struct reply r;
    r_begin(&r, "Stats", true);
    r_time(&r, s);
    kn_usar_w_kv(&r.w, "Pace", kn_pace_mode_name(s->pace.mode));
    kn_usar_w_knum(&r.w, "Rate", s->pace.rate, 4);
    kn_usar_w_kv(&r.w, "Paused", s->paused ? "true" : "false");
    kn_usar_w_kv(&r.w, "Level", s->level);
    r_int(&r, "Connections", s->nconns);
    r_int(&r, "Robots", robots);
    r_int(&r, "Accepted", t->accepted);
    r_int(&r, "Refused", t->refused);
    r_int(&r, "Lines", t->lines);
    r_int(&r, "Empty", t->empty);
    r_int(&r, "Malformed", t->malformed);
    r_int(&r, "Overlong", t->overlong);
    r_int(&r, "Unknown", t->unknown);
    r_int(&r, "BeforeInit", t->before_init);
    r_int(&r, "BadValue", t->bad_value);
    r_int(&r, "Ignored", t->ignored);
    r_int(&r, "InitFailed", t->init_failed);
    r_int(&r, "Spawned", t->spawned);
    r_int(&r, "Removed", t->removed);
    r_int(&r, "Commands", t->commands);
    r_int(&r, "Ext", t->ext);
    r_int(&r, "OutDropped", t->out_dropped);
    r_int(&r, "Steps", t->steps);
    r_int(&r, "Unauthorized", t->unauthorized);
    r_int(&r, "AuthFailed", t->auth_failed);
    r_int(&r, "Brakes", t->brakes);
    r_int(&r, "DeadmanStops", t->deadman_stops);
    r_int(&r, "Alives", t->alives);
    r_int(&r, "TrialLines", t->trial_lines);
    r_int(&r, "TrialResets", t->trial_resets);
    r_int(&r, "TrialEstops", t->trial_estops);
    r_int(&r, "WorldAnswers", t->world_answers);
    r_int(&r, "Overruns", s->pace.overruns);
    r_int(&r, "Slips", s->pace.slips);
    kn_usar_w_knum(&r.w, "MaxLagMs", s->pace.max_lag_s * 1e3, 3);
    r_int(&r, "LogDropped", s->log.lines_dropped);
    r_int(&r, "LogDroppedBytes", s->log.bytes_dropped);
    r_int(&r, "BeatsDropped", s->beat.lines_dropped);
    r_send(&r, c);
}

/* The command's name as the reply names it: one of ours, else "Unknown". */
static const char *cmd_name(struct kn_usar_str cmd)
{
    static const char *const names[] = { "Auth",  "Stats",   "Step",       "Pause",      "Resume",
                                         "Reset", "Terrain", "Pace",       "Brake",      "Deadman",
                                         "Alive", "Trial",   "TrialReset", "TrialEstop", "World" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (kn_usar_str_is(cmd, names[i]))
            return names[i];
    return "Unknown";
}

static void do_brake(struct kn_srv_conn *c)
{
    struct kn_srv *s = c->srv;
    if (c->robot < 0 || kn_world_brake(s->w, c->robot) != 0) {
        s->st.bad_value++;
        fail(c, "Brake", "no robot on this connection (INIT first)");
        return;
    }
    s->st.brakes++;
    kn_srv_log(s, "client %u: robot %s brakes (emergency stop)", c->id, c->name);
    ok_time(c, "Brake");
}

#define DEADMAN_MAX_S 60.0

/* KENAF {Cmd Deadman} {Seconds s}: from now on, this connection's robot
 * is braked when the connection sends no line for s seconds (0: never).
 * The motor drivers of a robot whose computer stops talking to them stop
 * the tracks; a client that arms this sends something (KENAF {Cmd Alive}
 * at least) more often than every s. */
static void do_deadman(struct kn_srv_conn *c, const struct kn_usar_line *l)
{
    struct kn_srv *s = c->srv;
    double sec;
    if (kn_usar_get_double(l, "Seconds", &sec) != KN_USAR_OK || !(sec >= 0.0) ||
        sec > DEADMAN_MAX_S) {
        s->st.malformed++;
        fail(c, "Deadman", "needs {Seconds s} with 0 <= s <= 60 (0 disarms)");
        return;
    }
    c->deadman_s = sec;
    c->heard_ns = uv_hrtime();
    c->deadman_tripped = false;
    struct reply r;
    r_begin(&r, "Deadman", true);
    kn_usar_w_knum(&r.w, "Seconds", sec, 3);
    r_time(&r, s);
    r_send(&r, c);
}

void kn_srv_deadman_check(struct kn_srv *s, uint64_t now)
{
    for (struct kn_srv_conn *c = s->conns; c; c = c->next) {
        if (c->deadman_s <= 0.0 || c->deadman_tripped || c->robot < 0 || c->closing ||
            now - c->heard_ns < (uint64_t)(c->deadman_s * 1e9))
            continue;
        c->deadman_tripped = true; /* once per silence: the next line re-arms it */
        if (kn_world_brake(s->w, c->robot) != 0)
            continue;
        s->st.deadman_stops++;
        c->deadman_stops++;
        kn_srv_log(s, "client %u: nothing heard for %.3f s: robot %s brakes (dead-man)", c->id,
                   (double)(now - c->heard_ns) / 1e9, c->name);
    }
}

void kn_srv_ext(struct kn_srv_conn *c, const struct kn_usar_line *l, const char *line, size_t len)
{
    struct kn_srv *s = c->srv;
    struct kn_usar_str cmd;
    if (kn_usar_get_str(l, "Cmd", &cmd) != KN_USAR_OK) {
        s->st.malformed++;
        fail(c, "None", "a KENAF line needs {Cmd name}");
        return;
    }
    /* watching (Stats) and authenticating need no token; the rest does */
    if (kn_usar_str_is(cmd, "Auth")) {
        do_auth(c, l);
        return;
    }
    if (!kn_usar_str_is(cmd, "Stats") && kn_srv_refuse_untrusted(c, cmd_name(cmd), line, len))
        return;
    if (kn_usar_str_is(cmd, "Step")) {
        do_step(c, l);
    } else if (kn_usar_str_is(cmd, "Pause")) {
        s->paused = true;
        kn_pacing_stop(&s->pace);
        kn_srv_schedule(s);
        ok_time(c, "Pause");
    } else if (kn_usar_str_is(cmd, "Resume")) {
        if (s->paused) {
            s->paused = false;
            kn_pacing_start(&s->pace, uv_hrtime());
        }
        kn_srv_schedule(s);
        ok_time(c, "Resume");
    } else if (s->judge && (kn_usar_str_is(cmd, "Reset") || kn_usar_str_is(cmd, "Terrain"))) {
        /* the judged world is the scenario's, from its start */
        s->st.bad_value++;
        fail(c, cmd_name(cmd), "not while judging a scenario (--judge)");
    } else if (kn_usar_str_is(cmd, "Reset")) {
        kn_srv_reset(s);
        ok_time(c, "Reset");
    } else if (kn_usar_str_is(cmd, "Terrain")) {
        struct kn_usar_str name;
        char nbuf[80], err[512];
        if (kn_usar_get_str(l, "Name", &name) != KN_USAR_OK || name.n >= sizeof nbuf) {
            s->st.malformed++;
            fail(c, "Terrain", "needs {Name terrain}");
            return;
        }
        memcpy(nbuf, name.p, name.n);
        nbuf[name.n] = '\0';
        if (kn_srv_set_terrain(s, nbuf, false, err, sizeof err)) {
            s->st.bad_value++;
            fail(c, "Terrain", err);
            return;
        }
        struct reply r;
        r_begin(&r, "Terrain", true);
        kn_usar_w_kv(&r.w, "Name", s->level);
        r_time(&r, s);
        r_send(&r, c);
        kn_srv_world_changed(s);
    } else if (kn_usar_str_is(cmd, "Pace")) {
        do_pace(c, l);
    } else if (kn_usar_str_is(cmd, "Stats")) {
        do_stats(c);
    } else if (kn_usar_str_is(cmd, "Brake")) {
        do_brake(c);
    } else if (kn_usar_str_is(cmd, "Deadman")) {
        do_deadman(c, l);
    } else if (kn_usar_str_is(cmd, "Alive")) {
        s->st.alives++; /* the line itself fed the dead-man */
        /* how often the dead-man braked this connection's robot: a
         * client that sends only what changed (kenaf-simd's DRIVE) learns
         * that the belts' target is 0 now, though it never sent a 0 */
        struct reply r;
        r_begin(&r, "Alive", true);
        r_time(&r, s);
        r_int(&r, "DeadmanStops", c->deadman_stops);
        r_send(&r, c);
    } else if (kn_usar_str_is(cmd, "Trial") || kn_usar_str_is(cmd, "TrialReset") ||
               kn_usar_str_is(cmd, "TrialEstop")) {
        kn_srv_trial_cmd(c, cmd_name(cmd));
    } else if (kn_usar_str_is(cmd, "World")) {
        c->world_asked = true;
        kn_srv_world_send(c);
    } else {
        s->st.bad_value++;
        fail(c, "Unknown",
             "no such command (Reset, Terrain, Pause, Resume, Step, Pace, Stats, "
             "Brake, Deadman, Alive, Auth, Trial, TrialReset, TrialEstop, World)");
    }
}
