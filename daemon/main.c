/* kenaf-simd: command line. Runs the daemon, checks a config
 * (--check-config) or prints the stats of a running daemon (--stats). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
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
            "usage: kenaf-simd [--config FILE] [--log-level LEVEL]\n"
            "       kenaf-simd [--config FILE] --check-config\n"
            "       kenaf-simd --stats [--config FILE | --socket PATH]\n"
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
            "  -l, --log-level L     error, warn, info or debug (overrides the config)\n"
            "  -V, --version         print the version\n"
            "  -h, --help            this text\n"
            "\n"
            "Signals: SIGTERM/SIGINT stop (belts to 0 first), SIGHUP reloads the config.\n"
            "Built-in simulator backends: %s\n",
            KN_DEFAULT_CONFIG, KN_LOCAL_CONFIG, kn_backend_built_list());
}

static const char *default_config(void)
{
    if (access(KN_DEFAULT_CONFIG, R_OK) == 0)
        return KN_DEFAULT_CONFIG;
    return KN_LOCAL_CONFIG;
}

int main(int argc, char **argv)
{
    enum { OPT_CHECK = 1000, OPT_STATS, OPT_SOCKET };
    static const struct option opts[] = {
        { "config", required_argument, NULL, 'c' },
        { "check-config", no_argument, NULL, OPT_CHECK },
        { "stats", no_argument, NULL, OPT_STATS },
        { "socket", required_argument, NULL, OPT_SOCKET },
        { "log-level", required_argument, NULL, 'l' },
        { "version", no_argument, NULL, 'V' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *config = NULL, *sock = NULL;
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
    if (sock && !stats) {
        fprintf(stderr, "kenaf-simd: --socket only goes with --stats\n");
        return 2;
    }
    if (check && stats) {
        fprintf(stderr, "kenaf-simd: --check-config and --stats exclude each other\n");
        return 2;
    }
    if (!config)
        config = default_config();

    static char err[16384];
    if (stats && sock)
        return kn_stats_fetch(sock, stdout, 5000) == 0 ? 0 : 1;

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
    if (stats) {
        int rc;
        if (!cfg->stats_socket[0]) {
            fprintf(stderr, "kenaf-simd: %s has no stats_socket; give --socket PATH\n", config);
            rc = 1;
        } else {
            rc = kn_stats_fetch(cfg->stats_socket, stdout, 5000) == 0 ? 0 : 1;
        }
        free(cfg);
        return rc;
    }
    return kn_daemon_run(cfg, config, log_override);
}
