/* A three-host lab in network namespaces for the faults-hosts test:
 * controller <-> daemon <-> simulator, each pair on a veth link of its own
 * /24, no route beyond it (the daemon's namespace does not forward, so the
 * controller cannot reach the simulator and nothing leaves the lab).
 * Built with ip(8) and tc(8) as root; the namespaces carry this process's
 * pid in their names and are deleted at exit, on SIGTERM/SIGINT, and by
 * the next run if a run was killed outright. */
#ifndef KN_NETLAB_H
#define KN_NETLAB_H

#include <stdbool.h>
#include <stddef.h>

enum nl_host { NL_CTL = 0, NL_DAEMON, NL_SIM, NL_HOSTS };

/* The addresses (no prefix length). */
#define NL_CTL_ADDR "10.201.1.1"
#define NL_DAEMON_CTL_ADDR "10.201.1.2"   /* the daemon on the controller's link */
#define NL_DAEMON_SIM_ADDR "10.201.2.1"   /* the daemon on the simulator's link */
#define NL_SIM_ADDR "10.201.2.2"

/* The links' ends: the controller's link is NL_CTL_IF (controller) --
 * NL_DC_IF (daemon), the simulator's NL_DS_IF (daemon) -- NL_SIM_IF. */
#define NL_CTL_IF "veth-ctl"
#define NL_DC_IF "veth-d-ctl"
#define NL_DS_IF "veth-d-sim"
#define NL_SIM_IF "veth-sim"

/* Why the lab cannot be built here (not root, no ip), or NULL when it can. */
const char *nl_unavailable(void);
/* Why its links cannot be shaped (no tc, a kernel without netem), or NULL. */
const char *nl_netem_unavailable(void);
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
/* tc qdisc replace ... netem SPEC (words separated by spaces) on one end;
 * spec NULL removes it. */
bool nl_netem(enum nl_host h, const char *ifname, const char *spec);
/* Packets netem dropped on that end ("dropped N" of tc -s), or -1. */
long nl_netem_dropped(enum nl_host h, const char *ifname);
/* A counter of the Udp: lines of the host's /proc/net/snmp (InDatagrams,
 * OutDatagrams, NoPorts, InErrors, RcvbufErrors, SndbufErrors), or -1. */
long nl_udp_counter(enum nl_host h, const char *name);

#endif
