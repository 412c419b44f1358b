/* kenaf-simd: command line. Runs the daemon, checks a config
 * (--check-config), or asks a running daemon (client.h): its stats
 * (--stats), a command (--command: capture, faults), or whether its robots
 * are up (--wait-ready). */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "capture.h"
#include "client.h"
#include "config.h"
#include "daemon.h"
#include "log.h"

#ifndef KN_VERSION
#define KN_VERSION "unknown"
#endif
#ifndef KN_DEFAULT_CONFIG
#define KN_DEFAULT_CONFIG "/etc/kenaf-sim/kenaf-simd.json"
#endif
#define KN_LOCAL_CONFIG "config/kenaf-simd.json"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: kenaf-simd [--config FILE] [--log-level LEVEL] [--capture FILE.pcapng\n"
        "                  [--capture-max-mb N]]\n"
        "       kenaf-simd [--config FILE] --check-config\n"
        "       kenaf-simd --stats [--config FILE | --socket PATH]\n"
        "       kenaf-simd --command LINE [--config FILE | --socket PATH]\n"
        "       kenaf-simd --wait-ready [--timeout S] [--config FILE | --socket PATH]\n"
        "       kenaf-simd --version | --help\n"
        "\n"
        "Serves KRP/1 (the Kenaf robot's UDP protocol) for simulated robots and\n"
        "relays them to their simulators.\n"
        "\n"
        "  -c, --config FILE     config file (default %s if it exists,\n"
        "                        else ./%s)\n"
        "      --check-config    check the config as start-up would (the file, then the\n"
        "                        engine and its terrain and robot files, host names,\n"
        "                        listen addresses, the stats socket's directory); print\n"
        "                        the effective config and exit 0, or print every problem,\n"
        "                        one line each, \"FILE: $.json.path: expected ..., got ...\",\n"
        "                        and exit 1. Start-up prints the same lines.\n"
        "      --stats           print the stats of the running daemon (JSON)\n"
        "      --command LINE    send a command to the running daemon, print its answer:\n"
        "                        'stats', 'help', 'capture start PATH [max_mb=N]' (PATH inside the\n"
        "                        config's capture_dir), 'capture stop',\n"
        "                        'capture status', 'faults ROBOT krp|sim [off] [drop=P]\n"
        "                        [duplicate=P] [reorder=P] [delay_ms=MS] [jitter_ms=MS]\n"
        "                        [seed=N]'; exit 1 when it is refused\n"
        "      --wait-ready      wait until every robot's simulator link is up (exit 0),\n"
        "                        or say what is not up when the time is over (exit 1)\n"
        "      --timeout S       how long --wait-ready waits (default %g s)\n"
        "      --socket PATH     stats socket to ask (default: the config's stats_socket)\n"
        "      --capture FILE    record KRP/1 datagrams and simulator traffic as pcapng\n"
        "      --capture-max-mb N  stop recording when the file reaches N MiB\n"
        "                        (default: the config's capture_max_mb, 1024; 0: no cap)\n"
        "  -l, --log-level L     error, warn, info or debug (overrides the config)\n"
        "  -V, --version         print the version\n"
        "  -h, --help            this text\n"
        "\n"
        "Stats socket: \"stats_socket\" in the config; \"\" turns it off. Left out, it is\n"
        "$RUNTIME_DIRECTORY/stats.sock (systemd RuntimeDirectory=), else\n"
        "$XDG_RUNTIME_DIR/kenaf-simd/stats.sock, else /run/kenaf-simd/stats.sock as\n"
        "root, else /tmp/kenaf-simd-<uid>/stats.sock; a missing directory is created\n"
        "with mode 0700, and /tmp/kenaf-simd-<uid> must be ours and writable by nobody\n"
        "else. --stats, --command and --wait-ready look in the same places (and in\n"
        "/run/kenaf-simd whatever the uid) and take the first socket that exists.\n"
        "The socket gets exactly \"stats_socket_mode\" (default 0660) and the group\n"
        "\"stats_socket_group\" (default: the daemon's own; a directory made for it\n"
        "then gets 0750 and that group).\n"
        "\n"
        "Captures started with --command go into \"capture_dir\": left out, it is\n"
        "$STATE_DIRECTORY/captures (systemd StateDirectory=), else\n"
        "$XDG_STATE_HOME/kenaf-simd/captures, else /var/lib/kenaf-simd/captures as\n"
        "root, else $HOME/.local/state/kenaf-simd/captures.\n"
        "\n"
        "systemd: READY=1 once every robot's simulator link is up, or after\n"
        "\"ready_timeout_s\" (default 30; 0: at once) with the links down named.\n"
        "\n"
        "Spawned engine: kenaf-engine next to kenaf-simd, then in its build tree, then\n"
        "in PATH (or backend.engine.path). backend.engine.terrain and .robot take a\n"
        "name (NAME.json in the engine's terrains/ or robots/ folder) or a file. An\n"
        "engine that fails at start-up is retried with a back-off growing to 60 s;\n"
        "its error line is logged and counted in the stats.\n"
        "\n"
        "Signals: SIGTERM/SIGINT stop (belts to 0 first), SIGHUP reloads the config.\n"
        "Built-in simulator backends: %s\n",
        KN_DEFAULT_CONFIG, KN_LOCAL_CONFIG, KN_CLIENT_WAIT_DEFAULT_S, kn_backend_built_list());
}

static const char *default_config(void)
{
    if (access(KN_DEFAULT_CONFIG, R_OK) == 0)
        return KN_DEFAULT_CONFIG;
    return KN_LOCAL_CONFIG;
}

static void print_problems(const char *err)
{
    size_t l = strlen(err);
    if (l)
        fprintf(stderr, "%s%s", err, err[l - 1] == '\n' ? "" : "\n");
}

/* --check-config, and start-up: every problem, one line each. */
static struct kn_config *load_checked(const char *path, bool check)
{
    static char err[32768];
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) {
        fprintf(stderr, "kenaf-simd: out of memory\n");
        return NULL;
    }
    size_t n = kn_daemon_load_config(path, cfg, err, sizeof err);
    if (n == 0)
        return cfg;
    print_problems(err);
    fprintf(stderr, "kenaf-simd: %s: %zu problem%s; %s\n", path, n, n == 1 ? "" : "s",
            check ? "the config is not valid" : "not starting");
    free(cfg);
    return NULL;
}

/* The client modes need the config only for its stats_socket; without
 * --config, a missing default config means "the default places". */
static int client(const char *config, bool config_given, const char *sock, const char *command,
                  bool wait, double timeout_s)
{
    static char err[16384];
    struct kn_config *cfg = NULL;
    if (!sock) {
        cfg = calloc(1, sizeof *cfg);
        if (!cfg) {
            fprintf(stderr, "kenaf-simd: out of memory\n");
            return 1;
        }
        if (kn_config_load(config, NULL, cfg, err, sizeof err) < 0) {
            if (config_given || access(config, F_OK) == 0) {
                print_problems(err);
                fprintf(stderr, "kenaf-simd: %s: give a valid config or --socket PATH\n", config);
                free(cfg);
                return 1;
            }
            free(cfg);
            cfg = NULL;
        }
    }
    int rc;
    char path[108];
    if (wait) {
        rc = kn_client_wait_ready(sock, cfg, timeout_s);
    } else if (kn_client_socket(sock, cfg, path, sizeof path, err, sizeof err) < 0) {
        fprintf(stderr, "kenaf-simd: %s\n", err);
        rc = 1;
    } else {
        rc = command ? kn_client_command(path, command) : kn_client_stats(path);
    }
    free(cfg);
    return rc;
}

static bool parse_seconds(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v > 0) || v > 86400)
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    /* A fixed mmap threshold (glibc's default): freeing a big block (the
     * 1 MiB config read buffer) would otherwise raise it, and the config
     * and the robot table (400 KiB each, mostly unused slots) would come
     * from the heap, zeroed page by page, instead of from mmap, where the
     * pages nobody writes take no memory. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    enum {
        OPT_CHECK = 1000,
        OPT_STATS,
        OPT_SOCKET,
        OPT_COMMAND,
        OPT_WAIT,
        OPT_TIMEOUT,
        OPT_CAPTURE,
        OPT_CAPTURE_MAX
    };
    static const struct option opts[] = {
        { "config", required_argument, NULL, 'c' },
        { "check-config", no_argument, NULL, OPT_CHECK },
        { "stats", no_argument, NULL, OPT_STATS },
        { "socket", required_argument, NULL, OPT_SOCKET },
        { "command", required_argument, NULL, OPT_COMMAND },
        { "wait-ready", no_argument, NULL, OPT_WAIT },
        { "timeout", required_argument, NULL, OPT_TIMEOUT },
        { "capture", required_argument, NULL, OPT_CAPTURE },
        { "capture-max-mb", required_argument, NULL, OPT_CAPTURE_MAX },
        { "log-level", required_argument, NULL, 'l' },
        { "version", no_argument, NULL, 'V' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *config = NULL, *sock = NULL, *command = NULL, *capture = NULL;
    uint64_t capture_max = 0;
    bool capture_max_set = false, timeout_set = false;
    bool check = false, stats = false, wait = false;
    double timeout_s = KN_CLIENT_WAIT_DEFAULT_S;
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
        case OPT_WAIT: wait = true; break;
        case OPT_TIMEOUT:
            if (!parse_seconds(optarg, &timeout_s)) {
                fprintf(stderr,
                        "kenaf-simd: --timeout: expected seconds > 0 (at most 86400), "
                        "got \"%s\"\n",
                        optarg);
                return 2;
            }
            timeout_set = true;
            break;
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
                fprintf(stderr,
                        "kenaf-simd: --log-level: expected error, warn, info or debug, "
                        "got \"%s\"\n",
                        optarg);
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
    bool is_client = stats || command || wait;
    if (sock && !is_client) {
        fprintf(stderr, "kenaf-simd: --socket only goes with --stats, --command or --wait-ready\n");
        return 2;
    }
    if ((check + stats + (command != NULL) + wait) > 1) {
        fprintf(stderr, "kenaf-simd: --check-config, --stats, --command and --wait-ready exclude "
                        "each other\n");
        return 2;
    }
    if (timeout_set && !wait) {
        fprintf(stderr, "kenaf-simd: --timeout only goes with --wait-ready\n");
        return 2;
    }
    if (capture_max_set && !capture) {
        fprintf(stderr, "kenaf-simd: --capture-max-mb only goes with --capture\n");
        return 2;
    }
    if (capture && (check || is_client)) {
        fprintf(stderr, "kenaf-simd: --capture only goes with running the daemon\n");
        return 2;
    }
    bool config_given = config != NULL;
    if (!config)
        config = default_config();
    if (is_client)
        return client(config, config_given, sock, command, wait, timeout_s);

    struct kn_config *cfg = load_checked(config, check);
    if (!cfg)
        return 1;
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
    if (capture)
        kn_capture_configure(capture, capture_max_set ? capture_max : cfg->capture_max_bytes);
    return kn_daemon_run(cfg, config, log_override);
}
