/* gazebo_standin: a Gazebo Classic master plus a world with a tracked
 * Kenaf, for kenaf-simd's gazebo backend tests (standin.h says what each
 * part does).
 *
 *   gazebo_standin [--port N] [--log FILE] [--world NAME] [--model NAME]
 *                  [--joints FL,FR,RL,RR] [--links FL,FR,RL,RR] [--tracks-separation M]
 *                  [--steering-efficiency E] [--max-linear V] [--max-angular W]
 *                  [--version TEXT] [--no-world] [--no-joint-cmd] [--no-drive]
 *
 * The master listens on 127.0.0.1:N (0, the default, lets the kernel
 * choose; a restarted stand-in gets the same N back at once), and the
 * program prints "PORT <n>" on stdout. --no-world runs the master alone;
 * --no-joint-cmd leaves joint_cmd without a subscriber, as stock Gazebo 9
 * to 11 does (its JointController listens on ignition-transport only);
 * --no-drive is the model without its tracked-vehicle plugin (nobody on
 * cmd_vel_twist and cmd_vel, no tracks_speed) until SIGUSR1 loads it.
 * The defaults describe the Kenaf of docs/gazebo.md: world "default",
 * model "kenaf", joints front_left_flipper_joint ... with links named
 * like them without "_joint" (--links names them instead), tracks_separation
 * 0.23, steering_efficiency 0.5, max_linear_speed 1, max_angular_speed 8.
 * SIGTERM or SIGINT: exit 0. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin.h"

static void on_signal(uv_signal_t *s, int sig)
{
    (void)sig;
    sl_log("exit");
    uv_stop(s->loop);
}

static void on_usr1(uv_signal_t *s, int sig)
{
    (void)s;
    (void)sig;
    world_load_drive();
}

static void usage(void)
{
    fprintf(stderr,
            "usage: gazebo_standin [--port N] [--log FILE] [--world NAME] [--model NAME]\n"
            "       [--joints FL,FR,RL,RR] [--links FL,FR,RL,RR] [--tracks-separation M]\n"
            "       [--steering-efficiency E] [--max-linear V] [--max-angular W] [--version TEXT]\n"
            "       [--no-world] [--no-joint-cmd] [--no-drive]\n");
    exit(2);
}

static double number(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0))
        usage();
    return v;
}

/* "A,B,C,D" into four names pointing into buf. */
static void four_names(const char *arg, char *buf, size_t len, const char *out[4])
{
    snprintf(buf, len, "%s", arg);
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    for (int k = 0; k < 4; k++, tok = strtok_r(NULL, ",", &save)) {
        if (!tok)
            usage();
        out[k] = tok;
    }
}

int main(int argc, char **argv)
{
    static char joints_buf[512], links_buf[512];
    struct world_opts w = {
        .world = "default",
        .model = "kenaf",
        .joints = { "front_left_flipper_joint", "front_right_flipper_joint",
                    "rear_left_flipper_joint", "rear_right_flipper_joint" },
        .tracks_separation = 0.23,
        .steering_efficiency = 0.5,
        .max_linear = 1.0,
        .max_angular = 8.0,
        .step_s = 0.001,
        .flipper_rate = 2.0,
    };
    struct master_opts m = { .version = "gazebo 11.14" };
    int port = 0;
    bool no_world = false;
    static const struct option opts[] = {
        { "port", required_argument, NULL, 'p' },
        { "log", required_argument, NULL, 'l' },
        { "world", required_argument, NULL, 'w' },
        { "model", required_argument, NULL, 'm' },
        { "joints", required_argument, NULL, 'j' },
        { "links", required_argument, NULL, 'k' },
        { "tracks-separation", required_argument, NULL, 's' },
        { "steering-efficiency", required_argument, NULL, 'e' },
        { "max-linear", required_argument, NULL, 'L' },
        { "max-angular", required_argument, NULL, 'A' },
        { "version", required_argument, NULL, 'v' },
        { "no-world", no_argument, NULL, 'n' },
        { "no-joint-cmd", no_argument, NULL, 'J' },
        { "no-drive", no_argument, NULL, 'D' },
        { NULL, 0, NULL, 0 },
    };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p': port = atoi(optarg); break;
        case 'l': sl_open(optarg); break;
        case 'w': w.world = optarg; break;
        case 'm': w.model = optarg; break;
        case 'j': four_names(optarg, joints_buf, sizeof joints_buf, w.joints); break;
        case 'k': four_names(optarg, links_buf, sizeof links_buf, w.links); break;
        case 's': w.tracks_separation = number(optarg); break;
        case 'e': w.steering_efficiency = number(optarg); break;
        case 'L': w.max_linear = number(optarg); break;
        case 'A': w.max_angular = number(optarg); break;
        case 'v': m.version = optarg; break;
        case 'n': no_world = true; break;
        case 'J': w.no_joint_cmd = true; break;
        case 'D': w.no_drive = true; break;
        default: usage();
        }
    }
    if (optind != argc || port < 0 || port > 65535)
        usage();
    signal(SIGPIPE, SIG_IGN);
    uv_loop_t *loop = uv_default_loop();
    int got = master_start(loop, port, &m);
    if (got < 0) {
        fprintf(stderr, "gazebo_standin: cannot listen on 127.0.0.1:%d\n", port);
        return 1;
    }
    sl_log("master_listening %d", got);
    printf("PORT %d\n", got);
    fflush(stdout);
    if (!no_world)
        world_start(loop, got, &w);
    uv_signal_t sterm, sint, susr1;
    uv_signal_init(loop, &sterm);
    uv_signal_init(loop, &sint);
    uv_signal_init(loop, &susr1);
    uv_signal_start(&sterm, on_signal, SIGTERM);
    uv_signal_start(&sint, on_signal, SIGINT);
    uv_signal_start(&susr1, on_usr1, SIGUSR1);
    uv_run(loop, UV_RUN_DEFAULT);
    return 0;
}
