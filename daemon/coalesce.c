/* The loop's coalescing window: see coalesce.h. */
#include "coalesce.h"

#include <errno.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <time.h>

/* A uv_prepare handle runs once per loop iteration, just before the loop
 * blocks in epoll: after the turn's reads, and after the check handles
 * that sent the turn's answers (robot.c) and wrote its simulator commands
 * (link.c). Sleeping there, rather than stopping every robot's socket and
 * starting it again from a timer, costs no epoll_ctl per socket: the
 * datagrams gather in the sockets' buffers and the next epoll_wait returns
 * them all at once. The loop does nothing else meanwhile, which is the
 * point; the window is bounded by the config (50 ms). */
static struct {
    uv_prepare_t prep;
    bool started;
    uint64_t window_ns;
    uint64_t first_ns;    /* first datagram read since the last prepare */
    uint64_t turn_dgrams; /* datagrams read since the last prepare */
    uint64_t turns_read, datagrams_read, waits, waited_ns;
} C;

static void sleep_until(uint64_t until_ns)
{
    for (;;) {
        uint64_t now = uv_hrtime();
        if (now >= until_ns)
            return;
        uint64_t d = until_ns - now;
        struct timespec ts = { .tv_sec = (time_t)(d / 1000000000u),
                               .tv_nsec = (long)(d % 1000000000u) };
        if (nanosleep(&ts, NULL) == 0)
            return;
        if (errno != EINTR)
            return;
    }
}

static void on_prepare(uv_prepare_t *h)
{
    (void)h;
    if (C.turn_dgrams == 0)
        return;
    C.turns_read++;
    C.datagrams_read += C.turn_dgrams;
    C.turn_dgrams = 0;
    if (C.window_ns == 0)
        return;
    /* counted from the turn's first read: no datagram waits longer than
     * the window for the turn that reads it */
    uint64_t until = C.first_ns + C.window_ns, before = uv_hrtime();
    if (before >= until)
        return;
    sleep_until(until);
    C.waits++;
    C.waited_ns += uv_hrtime() - before;
}

/* The kernel may end a sleep up to the thread's timer slack late (50 µs
 * by default), which would add that to every window: with a window the
 * slack is 1 µs; without, the default again. */
static void set_window(uint32_t us)
{
    C.window_ns = (uint64_t)us * 1000u;
    (void)prctl(PR_SET_TIMERSLACK, us ? 1000UL : 0UL, 0UL, 0UL, 0UL);
}

int kn_coalesce_start(uv_loop_t *loop, uint32_t us)
{
    set_window(us);
    int rc = uv_prepare_init(loop, &C.prep);
    if (rc < 0)
        return rc;
    C.started = true;
    uv_prepare_start(&C.prep, on_prepare);
    uv_unref((uv_handle_t *)&C.prep); /* the loop ends when the robots are gone */
    return 0;
}

void kn_coalesce_set(uint32_t us)
{
    set_window(us);
}

void kn_coalesce_note(uint64_t now_ns)
{
    if (C.turn_dgrams++ == 0)
        C.first_ns = now_ns;
}

void kn_coalesce_stats(cJSON *o)
{
    cJSON_AddNumberToObject(o, "coalesce_us", (double)C.window_ns / 1e3); /* set in whole µs */
    cJSON_AddNumberToObject(o, "turns_read", (double)C.turns_read);
    cJSON_AddNumberToObject(o, "datagrams_read", (double)C.datagrams_read);
    cJSON_AddNumberToObject(o, "coalesce_waits", (double)C.waits);
    cJSON_AddNumberToObject(o, "coalesce_waited_ms", (double)C.waited_ns / 1e6);
}

void kn_coalesce_stop(void)
{
    if (!C.started)
        return;
    C.started = false;
    uv_close((uv_handle_t *)&C.prep, NULL);
}
