/* libFuzzer target for the config loader: any bytes load or are refused
 * with a message; what loads prints to JSON that loads back equal. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Static: struct kn_config holds 1024 robots and is too big for the stack
 * of a fuzzing thread. */
static struct kn_config cfg, again;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[4096];
    if (kn_config_parse((const char *)data, size, "fuzz.json", NULL, &cfg, err, sizeof err) != 0) {
        if (err[0] == '\0')
            abort(); /* a refusal must say why */
        return 0;
    }
    char *json = kn_config_to_json(&cfg);
    if (!json)
        abort();
    if (kn_config_parse(json, strlen(json), "fuzz-again.json", NULL, &again, err, sizeof err) != 0)
        abort();
    free(json);
    if (again.n_robots != cfg.n_robots || again.log_level != cfg.log_level ||
        strcmp(again.stats_socket, cfg.stats_socket) != 0)
        abort();
    for (size_t i = 0; i < cfg.n_robots; i++)
        if (!kn_config_robot_equal(&cfg.robots[i], &again.robots[i]))
            abort();
    return 0;
}
