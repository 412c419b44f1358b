/* KENAF {Cmd World}: the world this engine runs, for kenaf-simd's world
 * description of an engine it reaches at an address (it cannot read the
 * files of an engine it did not start, and a scenario's variant changes
 * the terrain beyond its file). The answer is one JSON text,
 * {"terrain": the terrain object the world was built from, "robot": the
 * robot file}, in the parts of protocols/usarsim_world.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "server_int.h"
#include "usarsim_world.h"

int kn_srv_world_robot(struct kn_srv *s, const char *path, char *err, size_t errlen)
{
    cJSON *o = kn_json_load(path, err, errlen);
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text) {
        if (o)
            snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    free(s->world_robot);
    s->world_robot = text;
    return 0;
}

/* Every connection that asked for the World gets it again: a terrain
 * changed by another client would otherwise stay unknown to a daemon
 * until it reconnects (its view would draw the old ground). */
void kn_srv_world_changed(struct kn_srv *s)
{
    for (struct kn_srv_conn *c = s->conns; c; c = c->next)
        if (c->world_asked && !c->closing)
            kn_srv_world_send(c);
}

void kn_srv_world_send(struct kn_srv_conn *c)
{
    struct kn_srv *s = c->srv;
    if (!s->world_terrain || !s->world_robot) {
        kn_srv_fail(c, "World", "no world loaded");
        return;
    }
    size_t cap = strlen(s->world_terrain) + strlen(s->world_robot) + 32;
    char *text = malloc(cap);
    if (!text) {
        kn_srv_fail(c, "World", "out of memory");
        return;
    }
    int len =
        snprintf(text, cap, "{\"terrain\":%s,\"robot\":%s}", s->world_terrain, s->world_robot);
    int parts = len > 0 ? kn_usarworld_parts((size_t)len) : 0;
    if (parts == 0) {
        free(text);
        kn_srv_fail(c, "World", "the world's text is longer than the answer may be");
        return;
    }
    char *line = malloc(KN_USARWORLD_LINE_MAX);
    for (int i = 0; line && i < parts; i++) {
        int n = kn_usarworld_format(text, (size_t)len, i, line, KN_USARWORLD_LINE_MAX);
        if (n <= 0) {
            kn_srv_log(s, "internal: cannot format the World answer (%s)", kn_usar_strerror(-n));
            break;
        }
        kn_srv_send(c, line, n);
    }
    if (!line)
        kn_srv_fail(c, "World", "out of memory");
    else
        s->st.world_answers++;
    free(line);
    free(text);
}
