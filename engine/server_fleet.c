/* A fleet's lockstep in a judged run (kenaf-engine --judge --judge-robots):
 * every robot keeps its own clock and asks for time with its own Step, but
 * they share one world. The world runs only to the nearest end of the
 * robots' Step requests, and only once every robot still driven has one
 * pending (and every one is spawned), so what happens at each physics step
 * depends on the programs alone, never on which of them the machine served
 * first. A robot whose program has ended (kenaf-sim-run writes "exited
 * NAME" on --judge-control) no longer holds the world back: it is braked,
 * takes no more commands, and stays in the world as an obstacle. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server_int.h"

bool kn_srv_fleet_steps(const struct kn_srv *s)
{
    return s->judge && kn_judge_is_fleet(s->judge);
}

void kn_srv_fleet_step(struct kn_srv_conn *c, uint64_t n)
{
    struct kn_srv *s = c->srv;
    /* its clock stands where the world stands: requests come only while
     * the world waits at the end of its last one */
    c->step_target = s->steps + n;
    s->stepq[s->nstepq].c = c;
    s->stepq[s->nstepq].target = c->step_target;
    s->nstepq++;
    kn_srv_fleet_update(s);
}

void kn_srv_fleet_update(struct kn_srv *s)
{
    if (!kn_srv_fleet_steps(s))
        return;
    uint64_t goal = UINT64_MAX;
    int driven = 0;
    if (!kn_judge_all_started(s->judge))
        goal = s->steps; /* the world starts with all of them in it */
    for (struct kn_srv_conn *c = s->conns; c && goal > s->steps; c = c->next) {
        if (c->judge_slot < 0 || c->left || c->closing)
            continue;
        driven++;
        if (!c->step_target || c->step_target <= s->steps)
            goal = s->steps;
        else if (c->step_target < goal)
            goal = c->step_target;
    }
    s->step_goal = driven && goal != UINT64_MAX ? goal : s->steps;
    kn_srv_schedule(s);
}

void kn_srv_fleet_waiting(const struct kn_srv *s, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < kn_judge_count(s->judge); i++) {
        const struct kn_srv_conn *c = s->conns;
        while (c && c->judge_slot != i)
            c = c->next;
        const char *why = NULL;
        if (!c)
            why = " (not in the world)";
        else if (!c->left && !c->step_target)
            why = "";
        if (!why || len + 1 >= n)
            continue;
        int w = snprintf(out + len, n - len, "%s%s%s", len ? ", " : "", kn_judge_name(s->judge, i),
                         why);
        if (w > 0)
            len += (size_t)w < n - len ? (size_t)w : n - len - 1;
    }
}

/* "exited NAME": that robot's program has ended. */
static void fleet_exited(struct kn_srv *s, const char *name)
{
    int slot = kn_judge_find(s->judge, name);
    if (slot < 0) {
        s->st.bad_value++;
        kn_srv_log(s, "--judge-control: no robot %s in this fleet", name);
        return;
    }
    kn_judge_exited(s->judge, slot);
    for (struct kn_srv_conn *c = s->conns; c; c = c->next) {
        if (c->judge_slot != slot || c->left)
            continue;
        /* as the robot's watchdog would: belts braked; the flippers
         * hold where they are, whatever the program sent on its way out */
        c->left = true;
        struct kn_state st;
        if (c->robot >= 0 && kn_world_state(s->w, c->robot, &st) == 0) {
            kn_world_brake(s->w, c->robot);
            kn_world_set_flippers(s->w, c->robot, st.flipper_rad, 0xFu);
        }
    }
    kn_srv_log(s, "judge: the program of robot %s ended at t=%.3f s", name, kn_world_time(s->w));
    if (kn_judge_over(s->judge)) {
        kn_srv_judge_end(s, "every robot's program has ended");
        return;
    }
    kn_srv_fleet_update(s);
}

static bool on_ctl_line(void *ctx, char *line, size_t len)
{
    struct kn_srv *s = ctx;
    if (len > 7 && strncmp(line, "exited ", 7) == 0) {
        fleet_exited(s, line + 7);
    } else if (len > 0) {
        s->st.malformed++;
        kn_srv_log(s, "--judge-control: not understood: \"%.60s\"", line);
    }
    return !s->shutting_down;
}

static void on_ctl_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    struct kn_srv *s = st->data;
    if (nread < 0) {
        kn_srv_fleet_close(s);
        return;
    }
    kn_linebuf_feed(&s->fleet_lb, buf->base, (size_t)nread, on_ctl_line, s);
}

int kn_srv_fleet_open(struct kn_srv *s, const char *path)
{
    /* read-write: a FIFO opened so neither blocks nor sees its end when
     * the writer is between lines */
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "kenaf-engine: --judge-control %s: %s\n", path, strerror(errno));
        return -1;
    }
    kn_linebuf_init(&s->fleet_lb, s->fleet_lbuf, sizeof s->fleet_lbuf - 1);
    uv_pipe_init(s->loop, &s->fleet_ctl, 0);
    s->fleet_ctl.data = s;
    int rc = uv_pipe_open(&s->fleet_ctl, fd);
    if (rc < 0)
        close(fd); /* not the handle's yet */
    if (rc == 0)
        rc = uv_read_start((uv_stream_t *)&s->fleet_ctl, kn_srv_alloc_rbuf, on_ctl_read);
    if (rc < 0) {
        fprintf(stderr, "kenaf-engine: --judge-control %s: %s\n", path, uv_strerror(rc));
        uv_close((uv_handle_t *)&s->fleet_ctl, NULL);
        return -1;
    }
    s->fleet_ctl_open = true;
    return 0;
}

void kn_srv_fleet_close(struct kn_srv *s)
{
    if (!s->fleet_ctl_open)
        return;
    s->fleet_ctl_open = false;
    uv_close((uv_handle_t *)&s->fleet_ctl, NULL);
}
