/* kenaf-engine: the built-in Kenaf simulator. This file only picks the
 * mode from the command line; the modes live in runner.c (scenarios and
 * the validation suite, --check-trial), terrain_sdf.c (--export-sdf: a
 * terrain as an SDF world) and server.c (the USARSim-protocol server, the mode without
 * --scenario, --validate, --sanity or --export-sdf). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "sanity.h"
#include "server.h"
#include "terrain_sdf.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: kenaf-engine --scenario FILE [--variant N] [--csv FILE] [--svg FILE] [--quiet]\n"
        "                    [--robot FILE]\n"
        "       kenaf-engine --validate [--json] [--dir DIR] [--robot FILE]\n"
        "       kenaf-engine --sanity NAME [--robot FILE]\n"
        "       kenaf-engine --export-sdf TERRAIN\n"
        "       kenaf-engine --check-trial FILE\n"
        "Runs scenarios of the built-in engine (config in %s).\n"
        "--export-sdf writes a terrain (a name or a file) as an SDF world for Gazebo\n"
        "Classic and gz-sim on stdout.\n"
        "--check-trial loads a trial file (a \"trial\" criterion) and says what it asks.\n"
        "--robot replaces the robot file the scenarios name (default robots/kenaf.json).\n"
        "Exit status: 0 outcomes as expected, 1 an outcome differed, 2 usage or file error.\n",
        kn_run_config_dir());
}

/* The runner's modes; any other command line is the server's. */
static int runner_mode(int argc, char **argv)
{
    static const char *const modes[] = { "--scenario", "--validate", "--sanity", "--export-sdf",
                                         "--check-trial" };
    for (int i = 1; i < argc; i++)
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            size_t n = strlen(modes[m]);
            if (strncmp(argv[i], modes[m], n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '='))
                return 1;
        }
    return 0;
}

struct runner_args {
    const char *scenario, *dir, *robot, *sanity, *export_sdf, *check_trial;
    int validate, json;
    struct kn_run_opts o;
};

/* 0 parsed, 1 --help printed, 2 usage error (said on stderr). */
static int parse_runner_args(int argc, char **argv, struct runner_args *a)
{
    enum {
        O_SCENARIO = 256,
        O_VARIANT,
        O_CSV,
        O_SVG,
        O_QUIET,
        O_ROBOT,
        O_VALIDATE,
        O_JSON,
        O_DIR,
        O_SANITY,
        O_EXPORT_SDF,
        O_CHECK_TRIAL
    };
    static const struct option lo[] = {
        { "scenario", required_argument, NULL, O_SCENARIO },
        { "variant", required_argument, NULL, O_VARIANT },
        { "csv", required_argument, NULL, O_CSV },
        { "svg", required_argument, NULL, O_SVG },
        { "quiet", no_argument, NULL, O_QUIET },
        { "robot", required_argument, NULL, O_ROBOT },
        { "validate", no_argument, NULL, O_VALIDATE },
        { "json", no_argument, NULL, O_JSON },
        { "dir", required_argument, NULL, O_DIR },
        { "sanity", required_argument, NULL, O_SANITY },
        { "export-sdf", required_argument, NULL, O_EXPORT_SDF },
        { "check-trial", required_argument, NULL, O_CHECK_TRIAL },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    *a = (struct runner_args){ .o = { .variant = -1 } };
    /* `--scenario --help` asks for help, not for a scenario file named
     * --help: look for it before getopt takes it as an option's argument */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 1;
        }
    int ch;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case O_SCENARIO: a->scenario = optarg; break;
        case O_CSV: a->o.csv = optarg; break;
        case O_SVG: a->o.svg = optarg; break;
        case O_QUIET: a->o.quiet = 1; break;
        case O_ROBOT: a->robot = optarg; break;
        case O_VALIDATE: a->validate = 1; break;
        case O_JSON: a->json = 1; break;
        case O_DIR: a->dir = optarg; break;
        case O_SANITY: a->sanity = optarg; break;
        case O_EXPORT_SDF: a->export_sdf = optarg; break;
        case O_CHECK_TRIAL: a->check_trial = optarg; break;
        case O_VARIANT: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 0 || v > 1000) {
                fprintf(stderr, "kenaf-engine: --variant needs a number 0..1000\n");
                return 2;
            }
            a->o.variant = (int)v;
            break;
        }
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "kenaf-engine: unexpected argument %s\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (!!a->scenario + a->validate + !!a->sanity + !!a->export_sdf + !!a->check_trial != 1) {
        usage(stderr);
        return 2;
    }
    return 0;
}

static int run_sanity(const char *name, const char *robot)
{
    struct kn_robot_params rp;
    char err[768];
    if (kn_robotfile_load(robot, &rp, err, sizeof err)) {
        fprintf(stderr, "kenaf-engine: %s\n", err);
        return 2;
    }
    struct kn_sanity_result r;
    if (kn_sanity_run(name, &rp, &r)) {
        fprintf(stderr, "kenaf-engine: no sanity check \"%s\" (or it failed to set up)\n", name);
        return 2;
    }
    printf("sanity-%s: %s; %s\n", name, r.passed ? "pass" : "FAIL", r.why);
    return r.passed ? 0 : 1;
}

/* A terrain name (a file in the config's terrains/) or a file, as the
 * server's --terrain takes it, to an SDF world on stdout. */
static int export_sdf(const char *name)
{
    char path[1024], err[768];
    size_t n = strlen(name);
    if (strchr(name, '/') || (n > 5 && strcmp(name + n - 5, ".json") == 0))
        snprintf(path, sizeof path, "%s", name);
    else
        snprintf(path, sizeof path, "%s/terrains/%s.json", kn_run_config_dir(), name);
    static struct kn_terrain t;
    if (kn_terrain_load(path, NULL, &t, err, sizeof err)) {
        fprintf(stderr, "kenaf-engine: %s\n", err);
        return 2;
    }
    int rc = kn_sdf_write(stdout, &t, path, err, sizeof err);
    kn_terrain_free(&t);
    if (rc) {
        fprintf(stderr, "kenaf-engine: %s: %s\n", path, err);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (!runner_mode(argc, argv))
        return kn_srv_main(argc, argv);
    struct runner_args a;
    int rc = parse_runner_args(argc, argv, &a);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    char rbuf[1024], dbuf[1024];
    a.o.robot = a.robot;
    const char *robot = a.robot, *dir = a.dir;
    if (!robot) {
        snprintf(rbuf, sizeof rbuf, "%s/robots/kenaf.json", kn_run_config_dir());
        robot = rbuf;
    }
    if (!dir) {
        snprintf(dbuf, sizeof dbuf, "%s/scenarios", kn_run_config_dir());
        dir = dbuf;
    }
    if (a.scenario)
        return kn_run_scenario_file(a.scenario, &a.o, stdout);
    if (a.export_sdf)
        return export_sdf(a.export_sdf);
    if (a.check_trial)
        return kn_run_check_trial(a.check_trial, stdout);
    if (a.validate)
        return kn_run_validation(dir, robot, a.robot != NULL, a.json, stdout);
    return run_sanity(a.sanity, robot);
}
