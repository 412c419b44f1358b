/* The loop's coalescing window (config key coalesce_us, off by default):
 * after a loop turn that read KRP/1 datagrams, the loop waits until that
 * long after the turn's first read before it polls again, so datagrams
 * that arrive meanwhile are read, answered and relayed by one turn instead
 * of one wake-up each. It trades latency (at most the window per
 * datagram) for CPU. Also counts the turns that read datagrams, window or
 * not, for the stats. One loop per process: the state is the module's. */
#ifndef KN_DAEMON_COALESCE_H
#define KN_DAEMON_COALESCE_H

#include <stdint.h>

#include <cJSON.h>
#include <uv.h>

/* Starts the counting (and the window when us > 0) on the loop. */
int kn_coalesce_start(uv_loop_t *loop, uint32_t us);
/* A new window (a reload); 0 turns it off. */
void kn_coalesce_set(uint32_t us);
/* A datagram was read from a robot's socket at now_ns (uv_hrtime). */
void kn_coalesce_note(uint64_t now_ns);
/* "io": the window, turns that read, datagrams read, waits and their sum. */
void kn_coalesce_stats(cJSON *o);
/* Closes the handle; the loop can then end. */
void kn_coalesce_stop(void);

#endif
