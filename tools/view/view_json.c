/* kenaf-view's page messages: see view_json.h. The state message is
 * printed directly (it is built once per STATUS per robot); the others go
 * through cJSON, which escapes names a robot chose. */
#include "view_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "convert.h"

static const char *tf(bool b)
{
    return b ? "true" : "false";
}

size_t kn_vjson_state(char *out, size_t cap, unsigned robot, const struct kn_krp_status *s,
                      uint64_t seq, uint64_t srv_us)
{
    const int32_t *fl = s->flipper_cdeg, *tq = s->flipper_torque_mnm;
    uint16_t f = s->flags;
    int n =
        snprintf(out, cap,
                 "{\"type\":\"state\",\"robot\":%u,\"t\":%.6f,\"pos\":[%.3f,%.3f,%.3f],"
                 "\"rpy\":[%.5f,%.5f,%.5f],\"belt\":[%.3f,%.3f],\"flippers\":[%.5f,%.5f,%.5f,%.5f],"
                 "\"torque\":[%.3f,%.3f,%.3f,%.3f],\"battery\":%.3f,"
                 "\"flags\":{\"ESTOP\":%s,\"BACKEND_UP\":%s,\"SIMULATED\":%s,\"WATCHDOG\":%s,"
                 "\"CLAMPED\":%s,\"STALE\":%s},\"seq\":%llu,\"srv_us\":%llu}",
                 robot, kn_conv_us_to_s(s->time_us), kn_conv_mm_to_m(s->pos_mm[0]),
                 kn_conv_mm_to_m(s->pos_mm[1]), kn_conv_mm_to_m(s->pos_mm[2]),
                 kn_conv_cdeg_to_rad(s->rpy_cdeg[0]), kn_conv_cdeg_to_rad(s->rpy_cdeg[1]),
                 kn_conv_cdeg_to_rad(s->rpy_cdeg[2]), kn_conv_mm_to_m(s->crawler_speed_mm_s[0]),
                 kn_conv_mm_to_m(s->crawler_speed_mm_s[1]), kn_conv_cdeg_to_rad(fl[0]),
                 kn_conv_cdeg_to_rad(fl[1]), kn_conv_cdeg_to_rad(fl[2]), kn_conv_cdeg_to_rad(fl[3]),
                 kn_conv_mnm_to_nm(tq[0]), kn_conv_mnm_to_nm(tq[1]), kn_conv_mnm_to_nm(tq[2]),
                 kn_conv_mnm_to_nm(tq[3]), kn_conv_mv_to_v(s->battery_mv), tf(f & KN_KRP_ST_ESTOP),
                 tf(f & KN_KRP_ST_BACKEND_UP), tf(f & KN_KRP_ST_SIMULATED),
                 tf(f & KN_KRP_ST_WATCHDOG), tf(f & KN_KRP_ST_CLAMPED), tf(f & KN_KRP_ST_STALE),
                 (unsigned long long)seq, (unsigned long long)srv_us);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

size_t kn_vjson_link(char *out, size_t cap, unsigned robot, bool up, const char *reason)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return 0;
    cJSON_AddStringToObject(o, "type", "link");
    cJSON_AddNumberToObject(o, "robot", robot);
    cJSON_AddBoolToObject(o, "up", up);
    if (reason)
        cJSON_AddStringToObject(o, "reason", reason);
    bool ok =
        cap > 0 && cJSON_PrintPreallocated(o, out, (int)(cap > 1 << 20 ? 1 << 20 : cap), false);
    cJSON_Delete(o);
    return ok ? strlen(out) : 0;
}

size_t kn_vjson_trial(char *out, size_t cap, unsigned robot, const struct kn_krp_trial *t)
{
    static const char *const ends[] = { "", "done", "tip-over", "time limit", "program ended" };
    static const char *const kinds[KN_KRP_TRIAL_FAULT_KINDS] = { "tip_over", "wall", "lane",
                                                                 "estop", "assist" };
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return 0;
    cJSON_AddStringToObject(o, "type", "trial");
    cJSON_AddNumberToObject(o, "robot", robot);
    if (!t) {
        cJSON_AddNullToObject(o, "trial");
    } else {
        cJSON *x = cJSON_AddObjectToObject(o, "trial");
        if (x) {
            /* a robot's name may hold anything: printable ASCII goes through */
            char name[KN_KRP_TRIAL_NAME_LEN + 1];
            size_t i = 0;
            for (; i < KN_KRP_TRIAL_NAME_LEN && t->name[i]; i++) {
                unsigned char c = (unsigned char)t->name[i];
                name[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
            }
            name[i] = '\0';
            cJSON_AddStringToObject(x, "name", name);
            cJSON_AddStringToObject(x, "course",
                                    t->course == KN_KRP_TRIAL_FIGURE8 ? "figure8" : "traverse");
            cJSON_AddNumberToObject(x, "repetitions", t->reps);
            cJSON_AddNumberToObject(x, "rep", t->rep);
            cJSON_AddBoolToObject(x, "under_way", t->flags & KN_KRP_TRIAL_F_UNDER_WAY);
            cJSON_AddBoolToObject(x, "ended", t->flags & KN_KRP_TRIAL_F_ENDED);
            cJSON_AddStringToObject(x, "end",
                                    t->end < sizeof ends / sizeof ends[0] ? ends[t->end] : "?");
            cJSON_AddNumberToObject(x, "rep_elapsed_s", t->rep_elapsed_ms / 1000.0);
            cJSON_AddNumberToObject(x, "rep_faults", t->rep_faults);
            cJSON_AddNumberToObject(x, "completed", t->completed);
            cJSON_AddNumberToObject(x, "successes", t->successes);
            cJSON_AddNumberToObject(x, "faults", t->faults);
            cJSON *k = cJSON_AddObjectToObject(x, "by_kind");
            for (int j = 0; k && j < KN_KRP_TRIAL_FAULT_KINDS; j++)
                cJSON_AddNumberToObject(k, kinds[j], t->by_kind[j]);
            if (t->limit_ms) {
                cJSON_AddNumberToObject(x, "limit_s", t->limit_ms / 1000.0);
                cJSON_AddNumberToObject(x, "left_s", t->left_ms / 1000.0);
            } else {
                cJSON_AddNullToObject(x, "limit_s");
                cJSON_AddNullToObject(x, "left_s");
            }
        }
    }
    bool ok =
        cap > 0 && cJSON_PrintPreallocated(o, out, (int)(cap > 1 << 20 ? 1 << 20 : cap), false);
    cJSON_Delete(o);
    return ok ? strlen(out) : 0;
}

char *kn_vjson_hello(const char *version, const struct kn_vjson_robot *robots, unsigned n,
                     const char *cameras)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    char server[64];
    snprintf(server, sizeof server, "kenaf-view %s", version);
    cJSON_AddStringToObject(o, "type", "hello");
    cJSON_AddStringToObject(o, "server", server);
    cJSON *arr = cJSON_AddArrayToObject(o, "robots");
    for (unsigned i = 0; arr && i < n; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, r);
        cJSON_AddNumberToObject(r, "id", i);
        cJSON_AddStringToObject(r, "name", robots[i].name);
        cJSON_AddStringToObject(r, "address", robots[i].address);
    }
    if (cameras)
        cJSON_AddStringToObject(o, "cameras", cameras);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

bool kn_vjson_world_ok(const char *doc, size_t len)
{
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(doc, len, &end, false);
    bool ok = cJSON_IsObject(o);
    if (ok) {
        /* nothing but white space after the object */
        for (; end < doc + len; end++)
            if (*end != ' ' && *end != '\n' && *end != '\r' && *end != '\t')
                ok = false;
    }
    cJSON_Delete(o);
    return ok;
}

char *kn_vjson_world(unsigned robot, const char *doc, size_t doclen, size_t *len)
{
    if (!doc) {
        doc = "null";
        doclen = 4;
    }
    char head[64];
    int h = snprintf(head, sizeof head, "{\"type\":\"world\",\"robot\":%u,\"world\":", robot);
    char *out = malloc((size_t)h + doclen + 2);
    if (!out)
        return NULL;
    memcpy(out, head, (size_t)h);
    memcpy(out + h, doc, doclen);
    out[(size_t)h + doclen] = '}';
    out[(size_t)h + doclen + 1] = '\0';
    *len = (size_t)h + doclen + 1;
    return out;
}

enum kn_vjson_in kn_vjson_classify(const char *msg, size_t len)
{
    cJSON *o = cJSON_ParseWithLength(msg, len);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return KN_VJSON_BAD_JSON;
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
    bool report = cJSON_IsString(t) && strcmp(t->valuestring, "report") == 0;
    cJSON_Delete(o);
    return report ? KN_VJSON_REPORT : KN_VJSON_BAD_TYPE;
}
