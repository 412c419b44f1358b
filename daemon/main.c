/* kenaf-simd: command line. Runs the daemon, checks a config
 * (--check-config), prints the stats of a running daemon (--stats) or
 * sends it a command (--command: capture, faults). */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "backend.h"
#include "capture.h"
#include "config.h"
#include "daemon.h"
#include "log.h"
#include "stats.h"

#ifndef KN_VERSION
#define KN_VERSION "unknown"
#endif
#ifndef KN_DEFAULT_CONFIG
#define KN_DEFAULT_CONFIG "/etc/kenaf-sim/kenaf-simd.json"
#endif
#define KN_LOCAL_CONFIG "config/kenaf-simd.json"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kenaf-simd [--config FILE] [--log-level LEVEL] [--capture FILE.pcapng\n"
            "                  [--capture-max-mb N]]\n"
            "       kenaf-simd [--config FILE] --check-config\n"
            "       kenaf-simd --stats [--config FILE | --socket PATH]\n"
            "       kenaf-simd --command LINE [--config FILE | --socket PATH]\n"
            "       kenaf-simd --version | --help\n"
            "\n"
            "Serves KRP/1 (the Kenaf robot's UDP protocol) for simulated robots and\n"
            "relays them to their simulators.\n"
            "\n"
            "  -c, --config FILE     config file (default %s if it exists,\n"
            "                        else ./%s)\n"
            "      --check-config    validate, print the effective config, exit 0;\n"
            "                        or print the problems and exit 1\n"
            "      --stats           print the stats of the running daemon (JSON)\n"
            "      --socket PATH     stats socket to ask (default: stats_socket of the config)\n"
            "      --command LINE    send a command to the running daemon, print its answer:\n"
            "                        'capture start PATH [max_mb=N]', 'capture stop',\n"
            "                        'capture status', 'faults ROBOT krp|sim [off] [drop=P]\n"
            "                        [duplicate=P] [reorder=P] [delay_ms=MS] [jitter_ms=MS]\n"
            "                        [seed=N]'; exit 1 when it is refused\n"
            "      --capture FILE    record KRP/1 datagrams and simulator traffic as pcapng\n"
            "      --capture-max-mb N  stop recording when the file reaches N MiB\n"
            "                        (default 1024; 0: no cap)\n"
            "  -l, --log-level L     error, warn, info or debug (overrides the config)\n"
            "  -V, --version         print the version\n"
            "  -h, --help            this text\n"
            "\n"
            "Signals: SIGTERM/SIGINT stop (belts to 0 first), SIGHUP reloads the config.\n"
            "Built-in simulator backends: %s\n",
            KN_DEFAULT_CONFIG, KN_LOCAL_CONFIG, kn_backend_built_list());
}

/* One command line to the stats socket; prints the answer. A daemon that
 * saw no command in time answers with the stats instead: then ask again. */
static int send_command(const char *path, const char *line)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof a.sun_path) {
        fprintf(stderr, "kenaf-simd: stats socket path too long: %s\n", path);
        return 1;
    }
    memcpy(a.sun_path, path, strlen(path));
    static char reply[1 << 20];
    for (int attempt = 0; attempt < 3; attempt++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
            fprintf(stderr, "kenaf-simd: cannot connect to the stats socket %s: %s "
                    "(is kenaf-simd running with this stats_socket?)\n", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            return 1;
        }
        char msg[1100];
        int n = snprintf(msg, sizeof msg, "%s\n", line);
        if (n < 0 || (size_t)n >= sizeof msg || send(fd, msg, (size_t)n, MSG_NOSIGNAL) != n) {
            fprintf(stderr, "kenaf-simd: cannot send the command (too long?)\n");
            close(fd);
            return 1;
        }
        shutdown(fd, SHUT_WR);
        size_t len = 0;
        for (;;) {
            struct pollfd p = { .fd = fd, .events = POLLIN };
            int pr = poll(&p, 1, 5000);
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr <= 0) {
                fprintf(stderr, "kenaf-simd: no answer from the stats socket %s\n", path);
                close(fd);
                return 1;
            }
            ssize_t k = read(fd, reply + len, sizeof reply - 1 - len);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            len += (size_t)k;
        }
        close(fd);
        reply[len] = '\0';
        if (strncmp(reply, "{\"ok\":", 6) != 0)
            continue; /* the stats: our line came too late */
        printf("%s\n", reply);
        return strncmp(reply, "{\"ok\":true", 10) == 0 ? 0 : 1;
    }
    fprintf(stderr, "kenaf-simd: the daemon did not take the command\n");
    return 1;
}

static const char *default_config(void)
{
    if (access(KN_DEFAULT_CONFIG, R_OK) == 0)
        return KN_DEFAULT_CONFIG;
    return KN_LOCAL_CONFIG;
}

int main(int argc, char **argv)
{
    enum { OPT_CHECK = 1000, OPT_STATS, OPT_SOCKET, OPT_COMMAND, OPT_CAPTURE, OPT_CAPTURE_MAX };
    static const struct option opts[] = {
        { "config", required_argument, NULL, 'c' },
        { "check-config", no_argument, NULL, OPT_CHECK },
        { "stats", no_argument, NULL, OPT_STATS },
        { "socket", required_argument, NULL, OPT_SOCKET },
        { "command", required_argument, NULL, OPT_COMMAND },
        { "capture", required_argument, NULL, OPT_CAPTURE },
        { "capture-max-mb", required_argument, NULL, OPT_CAPTURE_MAX },
        { "log-level", required_argument, NULL, 'l' },
        { "version", no_argument, NULL, 'V' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *config = NULL, *sock = NULL, *command = NULL, *capture = NULL;
    uint64_t capture_max = KN_CAPTURE_DEFAULT_MAX_BYTES;
    bool capture_max_set = false;
    bool check = false, stats = false;
    int log_override = -1;
    int c;
    kn_log_init();
    while ((c = getopt_long(argc, argv, "c:l:Vh", opts, NULL)) != -1) {
        switch (c) {
        case 'c': config = optarg; break;
        case OPT_CHECK: check = true; break;
        case OPT_STATS: stats = true; break;
        case OPT_SOCKET: sock = optarg; break;
        case OPT_COMMAND: command = optarg; break;
        case OPT_CAPTURE: capture = optarg; break;
        case OPT_CAPTURE_MAX: {
            char *end = NULL;
            errno = 0;
            unsigned long long mb = strtoull(optarg, &end, 10);
            if (!*optarg || *end || errno || mb > 1024ull * 1024 || optarg[0] == '-') {
                fprintf(stderr, "kenaf-simd: --capture-max-mb: expected 0..1048576, got \"%s\"\n",
                        optarg);
                return 2;
            }
            capture_max = mb * 1024 * 1024;
            capture_max_set = true;
            break;
        }
        case 'l':
            log_override = kn_log_parse_level(optarg);
            if (log_override < 0) {
                fprintf(stderr, "kenaf-simd: --log-level: expected error, warn, info or debug, "
                        "got \"%s\"\n", optarg);
                return 2;
            }
            kn_log_set_level((enum kn_log_level)log_override);
            break;
        case 'V': printf("kenaf-simd %s\n", KN_VERSION); return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "kenaf-simd: unexpected argument \"%s\"\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (sock && !stats && !command) {
        fprintf(stderr, "kenaf-simd: --socket only goes with --stats or --command\n");
        return 2;
    }
    if ((check + stats + (command != NULL)) > 1) {
        fprintf(stderr, "kenaf-simd: --check-config, --stats and --command exclude each other\n");
        return 2;
    }
    if (capture_max_set && !capture) {
        fprintf(stderr, "kenaf-simd: --capture-max-mb only goes with --capture\n");
        return 2;
    }
    if (capture && (check || stats || command)) {
        fprintf(stderr, "kenaf-simd: --capture only goes with running the daemon\n");
        return 2;
    }
    if (!config)
        config = default_config();

    static char err[16384];
    if (stats && sock)
        return kn_stats_fetch(sock, stdout, 5000) == 0 ? 0 : 1;
    if (command && sock)
        return send_command(sock, command);

    struct kn_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) {
        fprintf(stderr, "kenaf-simd: out of memory\n");
        return 1;
    }
    if (kn_daemon_load_config(config, cfg, err, sizeof err) < 0) {
        size_t l = strlen(err);
        fprintf(stderr, "%s%s", err, l && err[l - 1] == '\n' ? "" : "\n");
        if (check)
            fprintf(stderr, "kenaf-simd: %s: config is not valid\n", config);
        free(cfg);
        return 1;
    }
    if (check) {
        char *json = kn_config_to_json(cfg);
        if (!json) {
            fprintf(stderr, "kenaf-simd: out of memory\n");
            free(cfg);
            return 1;
        }
        printf("%s\n", json);
        free(json);
        free(cfg);
        return 0;
    }
    if (stats || command) {
        int rc;
        if (!cfg->stats_socket[0]) {
            fprintf(stderr, "kenaf-simd: %s has no stats_socket; give --socket PATH\n", config);
            rc = 1;
        } else if (command) {
            rc = send_command(cfg->stats_socket, command);
        } else {
            rc = kn_stats_fetch(cfg->stats_socket, stdout, 5000) == 0 ? 0 : 1;
        }
        free(cfg);
        return rc;
    }
    if (capture)
        kn_capture_configure(capture, capture_max);
    return kn_daemon_run(cfg, config, log_override);
}
