/* kenaf-engine's server mode: the built-in simulator serving the USARSim
 * TCP protocol (docs/usarsim.md) plus a few extension commands
 * (docs/engine.md, "USARSim protocol extensions"), so kenaf-simd reaches it exactly as it reaches
 * USARSim. One robot per connection, all robots in one world. */
#ifndef KN_ENGINE_SERVER_H
#define KN_ENGINE_SERVER_H

#include <stdbool.h>
#include <stdio.h>

#include "pacing.h"
#include "usarsim_codec.h"

struct kn_srv_opts {
    char host[256];      /* listen address */
    int port;            /* 0: ephemeral */
    const char *terrain; /* name or file */
    const char *robot;   /* robot file; NULL: <config>/robots/kenaf.json */
    enum kn_pace_mode pace;
    double rate; /* real time multiplier */
    bool seed_set;
    unsigned long seed;
    double interval_s[6]; /* per output stream (enum kn_srv_stream), 0 = off */
    enum kn_usar_dialect dialect;
    int tick_ms;                /* realtime timer period */
    int ticks_per_m;            /* Encoder ticks per metre of belt */
    bool stdin_watch;           /* exit when stdin reaches end of file */
    int heartbeat_ms;           /* "ALIVE <time>" on stdout this often; 0 = never */
    const char *auth_token_env; /* environment variable holding the token; NULL: no token */
    bool quiet;
    /* --judge: a scenario with an external controller (judge.h) */
    const char *judge;
    int judge_variant;
    const char *judge_verdict, *judge_csv, *judge_svg;
    double judge_idle_s;
    const char *judge_robots;  /* a fleet's names, comma-separated, or NULL */
    const char *judge_control; /* a FIFO of "exited NAME" lines, or NULL */
    bool judge_trial_end;      /* the run ends when its trial does */
};

/* Defaults: 127.0.0.1:3000, flat, realtime x1, USARSim's scan intervals. */
void kn_srv_opts_defaults(struct kn_srv_opts *o);

/* Parses server-mode options. Returns 0, 1 after --help was printed, or 2
 * with a message on stderr. */
int kn_srv_opts_parse(struct kn_srv_opts *o, int argc, char **argv);
void kn_srv_usage(FILE *f);

/* Runs the server until SIGINT/SIGTERM (or stdin EOF with stdin_watch).
 * Prints "PORT <n>" on stdout once listening. Exit code: 0 clean stop,
 * 2 setup error. */
int kn_srv_run(const struct kn_srv_opts *o);

/* main() of server mode: options, then kn_srv_run. */
int kn_srv_main(int argc, char **argv);

#endif
