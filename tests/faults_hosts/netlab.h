/* A three-host lab in network namespaces for the faults-hosts test:
 * controller <-> daemon <-> simulator, each pair on a veth link of its own
 * /24, no route beyond it (the daemon's namespace does not forward, so the
 * controller cannot reach the simulator and nothing leaves the lab).
 * Built with ip(8) as root; the links are shaped by tc(8) netem where the
 * kernel has it, else by nfq_shaper (a user-space netem on the NFQUEUE
 * target of iptables-legacy). The namespaces carry this process's
 * pid in their names and are deleted at exit, on SIGTERM/SIGINT, and by
 * the next run if a run was killed outright. */
#ifndef KN_NETLAB_H
#define KN_NETLAB_H

#include <stdbool.h>
#include <stddef.h>

enum nl_host { NL_CTL = 0, NL_DAEMON, NL_SIM, NL_HOSTS };

/* The addresses (no prefix length). */
#define NL_CTL_ADDR "10.201.1.1"
#define NL_DAEMON_CTL_ADDR "10.201.1.2" /* the daemon on the controller's link */
#define NL_DAEMON_SIM_ADDR "10.201.2.1" /* the daemon on the simulator's link */
#define NL_SIM_ADDR "10.201.2.2"

/* The links' ends: the controller's link is NL_CTL_IF (controller) --
 * NL_DC_IF (daemon), the simulator's NL_DS_IF (daemon) -- NL_SIM_IF. */
#define NL_CTL_IF "veth-ctl"
#define NL_DC_IF "veth-d-ctl"
#define NL_DS_IF "veth-d-sim"
#define NL_SIM_IF "veth-sim"

/* Why the lab cannot be built here (not root, no ip), or NULL when it can. */
const char *nl_unavailable(void);
/* What shapes the links: netem, else the user-space shaper, else nothing. */
enum nl_shaper { NL_SHAPE_NONE = 0, NL_SHAPE_NETEM, NL_SHAPE_NFQUEUE };
/* Probes (in throw-away namespaces) what can shape the links here; why
 * says why netem (and, for NL_SHAPE_NONE, the shaper too) cannot. */
enum nl_shaper nl_shaper_probe(char *why, size_t whylen);
/* Builds the lab; false (with the failing command on stderr) on failure.
 * Registers the clean-up. */
bool nl_up(void);
/* Deletes the namespaces (idempotent). */
void nl_down(void);
/* The name of a host's namespace. */
const char *nl_ns(enum nl_host h);
/* Moves the calling thread into a host's namespace (its sockets and the
 * processes it starts from now on live there); NL_HOSTS: back to the
 * namespace the test started in. */
void nl_enter(enum nl_host h);
/* Runs a command (NULL-terminated argv, no shell) and returns its exit
 * status (-1 when it could not run); its stdout into out when out != NULL. */
int nl_cmd(char *const argv[], char *out, size_t outlen);
/* ip -n NS link set IF up|down. */
bool nl_link(enum nl_host h, const char *ifname, bool up);
/* Shapes the egress of all four link ends with netem SPEC (words separated
 * by spaces, tc-netem(8)'s delay/loss/reorder), by what was probed: tc
 * qdisc netem on each end, or one nfq_shaper per namespace (started with
 * seed; per end, iptables-legacy NFQUEUE rules feed it the UDP datagrams
 * on one queue and all other packets on another).
 * Stopped by nl_down. */
bool nl_shape(enum nl_shaper how, const char *spec, unsigned long seed);
/* Stops the shapers nl_shape started (this process's children); false,
 * with their stderr on ours, when one did not exit 0 or wrote to stderr
 * (an error, a sanitizer's report). nl_down does it too. */
bool nl_unshape(void);
/* What the shaping on one end dropped: netem's "dropped N" (packets of
 * any kind); for the shaper, UDP datagrams only: its losses, its over-limit drops, the held packets the kernel flushed when
 * the device went down, and the kernel's queue-full and socket-overflow
 * drops of its queue. -1 when it cannot be read. */
long nl_shape_dropped(enum nl_host h, const char *ifname);
/* UDP datagrams that came in on one end (counted by an iptables rule on
 * INPUT that nl_shape adds with the shaper), or -1 (not counted). */
long nl_udp_arrived(enum nl_host h, const char *ifname);
/* The shaper's counters on one end (nl_shape with NL_SHAPE_NFQUEUE): of its
 * UDP queue (udp) or of the other. */
struct nl_shaper_counts {
    long seen, lost, delayed, reordered, overlimit, gone, refused, max_held, kernel_dropped,
        user_dropped;
};
bool nl_shaper_counts(enum nl_host h, const char *ifname, bool udp, struct nl_shaper_counts *c);
/* A counter of the Udp: lines of the host's /proc/net/snmp (InDatagrams,
 * OutDatagrams, NoPorts, InErrors, RcvbufErrors, SndbufErrors), or -1. */
long nl_udp_counter(enum nl_host h, const char *name);

#endif
