/* kenaf-cameras, the program: its options (main.c reads them from the
 * command line and a JSON config) and the run (cameras.c: the streams'
 * servers, the KRP/1 observer, the render thread). docs/cameras.md and
 * kenaf-cameras(1) are the manual. */
#ifndef KN_CAMS_H
#define KN_CAMS_H

#include <signal.h>
#include <stdbool.h>

#include "observe.h"
#include "stream.h"

#define KN_CAMS_DEFAULT_LISTEN "127.0.0.1"
#define KN_CAMS_NCAMS 2 /* front (PTZ), birdseye */

struct kn_cams_opts {
    struct kn_cobs_robot_opt robots[KN_COBS_MAX_ROBOTS];
    size_t nrobots;
    char listen[256];
    int rtsp_port, http_port;
    struct kn_stream_camera cam[KN_CAMS_NCAMS]; /* robot and name filled per robot */
    bool stats;
    /* called once, when the servers listen and the URLs are printed:
     * main.c tells systemd READY=1 there (Type=notify) */
    void (*ready)(void);
    bool overlay[KN_CAMS_NCAMS]; /* the robot time drawn into each frame (stamp.h) */
};

extern const char *const kn_cams_names[KN_CAMS_NCAMS];

/* Runs until SIGINT or SIGTERM (blocked by the caller in every thread):
 * the exit status (0, or 1 with the reason on stderr). */
int kn_cams_run(const struct kn_cams_opts *o, const sigset_t *stop_signals);

#endif
