/* conf.c: loads console.json over the built-in defaults (see conf.h). */
#include "conf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <libevdev/libevdev.h>

static bool parse_source(const char *s, struct kn_binding *b);
static bool parse_action(const struct kn_conf *c, const char *s, struct kn_action *a);

/* The default mapping, for a gamepad with the Linux gamepad layout
 * (Xbox-style: A/B/X/Y = SOUTH/EAST/WEST/NORTH, shoulder buttons TL/TR,
 * analogue triggers ABS_Z/ABS_RZ or buttons TL2/TR2, d-pad ABS_HAT0*). */
static const struct {
    const char *source, *action;
} default_map[] = {
    { "BTN_SOUTH", "stop" },          { "BTN_EAST", "estop" },        { "BTN_WEST", "preset:flat" },
    { "BTN_NORTH", "preset:stairs" }, { "BTN_START", "preset:turn" }, { "BTN_TL", "front_up" },
    { "BTN_TL2", "front_down" },      { "ABS_Z+", "front_down" },     { "BTN_TR", "rear_up" },
    { "BTN_TR2", "rear_down" },       { "ABS_RZ+", "rear_down" },     { "ABS_HAT0Y-", "faster" },
    { "ABS_HAT0Y+", "slower" },       { "BTN_SELECT", "assist" },
};

/* Builds the default bindings against the presets in *c; a binding whose
 * preset the config does not have is left out. */
static void default_bindings(struct kn_conf *c)
{
    c->nbindings = 0;
    for (size_t i = 0; i < sizeof default_map / sizeof default_map[0]; i++) {
        struct kn_binding b;
        memset(&b, 0, sizeof b);
        if (parse_source(default_map[i].source, &b) &&
            parse_action(c, default_map[i].action, &b.action))
            c->bindings[c->nbindings++] = b;
    }
}

void kn_conf_defaults(struct kn_conf *c)
{
    memset(c, 0, sizeof *c);
    c->drive = (struct kn_drive_conf){
        .speed_mm_s = 300,
        .speed_step_mm_s = 50,
        .max_speed_mm_s = 800,
        .turn_ratio = 0.5,
        .accel_mm_s2 = 800,
        .decel_mm_s2 = 1600,
        .hold_ms = 250,
        .first_hold_ms = 600,
    };
    c->flipper_min_deg = -119.5;
    c->flipper_max_deg = 119.5;
    c->flipper_step_deg = 5;
    c->flipper_rate_deg_s = 45;
    static const struct kn_preset presets[] = {
        { "flat", { 0, 0, 0, 0 } },
        { "stairs", { 40, 40, -20, -20 } },
        { "turn", { 60, 60, 60, 60 } },
    };
    c->npresets = (int)(sizeof presets / sizeof presets[0]);
    memcpy(c->presets, presets, sizeof presets);
    snprintf(c->joy_device, sizeof c->joy_device, "auto");
    c->throttle = (struct kn_stick){ ABS_Y, true };
    c->turn = (struct kn_stick){ ABS_X, true };
    c->deadzone = 0.15;
    c->joy_turn_ratio = 0.6;
    default_bindings(c);
}

/* ---- problem reporting ---- */

struct ctx {
    struct kn_conf *c;
    const char *name;
    char *err;
    size_t errlen, used;
    int problems;
};

__attribute__((format(printf, 3, 4))) static void problem(struct ctx *x, const char *path,
                                                          const char *fmt, ...)
{
    x->problems++;
    if (!x->err || x->errlen == 0 || x->used + 1 >= x->errlen)
        return;
    int n = snprintf(x->err + x->used, x->errlen - x->used, "%s: %s%s", x->name, path,
                     path[0] ? ": " : "");
    if (n > 0)
        x->used = x->used + (size_t)n < x->errlen ? x->used + (size_t)n : x->errlen - 1;
    va_list ap;
    va_start(ap, fmt);
    n = vsnprintf(x->err + x->used, x->errlen - x->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        x->used = x->used + (size_t)n < x->errlen ? x->used + (size_t)n : x->errlen - 1;
    if (x->used + 1 < x->errlen) {
        x->err[x->used++] = '\n';
        x->err[x->used] = '\0';
    }
}

/* What a JSON value is, for "got ..." (short: the value itself when small). */
static const char *got(const cJSON *v, char *buf, size_t len)
{
    if (!v)
        return "nothing";
    if (cJSON_IsString(v)) {
        /* a string cJSON parsed always has its valuestring */
        /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker) */
        snprintf(buf, len, "\"%.40s%s\"", v->valuestring, strlen(v->valuestring) > 40 ? "..." : "");
        return buf;
    }
    if (cJSON_IsNumber(v)) {
        snprintf(buf, len, "%g", v->valuedouble);
        return buf;
    }
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? "true" : "false";
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "an invalid value";
}

/* path.key (cut short if very long: it only labels a message) */
static void sub(char *out, size_t len, const char *path, const char *key)
{
    if (snprintf(out, len, "%s.%s", path, key) >= (int)len)
        out[len - 1] = '\0';
}

/* An object whose keys are all in allowed (NULL-terminated) and none
 * repeated; false (reported) otherwise or when v is not an object. */
static bool check_object(struct ctx *x, const cJSON *v, const char *path,
                         const char *const allowed[])
{
    char g[64];
    if (!cJSON_IsObject(v)) {
        problem(x, path, "expected an object, got %s", got(v, g, sizeof g));
        return false;
    }
    bool ok = true;
    for (const cJSON *it = v->child; it; it = it->next) {
        char p[256];
        sub(p, sizeof p, path, it->string);
        for (const cJSON *prev = v->child; prev != it; prev = prev->next)
            if (strcmp(prev->string, it->string) == 0) {
                problem(x, p, "duplicate key");
                ok = false;
                break;
            }
        if (!allowed)
            continue;
        bool known = false;
        for (int k = 0; allowed[k]; k++)
            known |= strcmp(allowed[k], it->string) == 0;
        if (!known) {
            char list[256] = "";
            size_t n = 0;
            for (int k = 0; allowed[k]; k++) {
                int w = snprintf(list + n, sizeof list - n, "%s\"%s\"", k ? ", " : "", allowed[k]);
                if (w > 0 && (size_t)w < sizeof list - n)
                    n += (size_t)w;
            }
            problem(x, p, "unknown key (expected one of %s)", list);
            ok = false;
        }
    }
    return ok;
}

static void get_number(struct ctx *x, const cJSON *obj, const char *path, const char *key,
                       double lo, double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return;
    char p[256], g[64];
    sub(p, sizeof p, path, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi)
        problem(x, p, "expected number %g..%g, got %s", lo, hi, got(v, g, sizeof g));
    else
        *out = v->valuedouble;
}

static void get_int(struct ctx *x, const cJSON *obj, const char *path, const char *key, int lo,
                    int hi, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return;
    char p[256], g[64];
    sub(p, sizeof p, path, key);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi)
        problem(x, p, "expected integer %d..%d, got %s", lo, hi, got(v, g, sizeof g));
    else
        *out = (int)v->valuedouble;
}

static void get_bool(struct ctx *x, const cJSON *obj, const char *path, const char *key, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return;
    char p[256], g[64];
    sub(p, sizeof p, path, key);
    if (!cJSON_IsBool(v))
        problem(x, p, "expected true or false, got %s", got(v, g, sizeof g));
    else
        *out = cJSON_IsTrue(v);
}

/* ---- sections ---- */

static void load_drive(struct ctx *x, const cJSON *v)
{
    static const char *const keys[] = { "speed_mm_s", "speed_step_mm_s", "max_speed_mm_s",
                                        "turn_ratio", "accel_mm_s2",     "decel_mm_s2",
                                        NULL };
    const char *path = "$.drive";
    if (!check_object(x, v, path, keys))
        return;
    struct kn_drive_conf *d = &x->c->drive;
    get_number(x, v, path, "speed_mm_s", 1, 5000, &d->speed_mm_s);
    get_number(x, v, path, "speed_step_mm_s", 1, 1000, &d->speed_step_mm_s);
    get_number(x, v, path, "max_speed_mm_s", 1, 5000, &d->max_speed_mm_s);
    get_number(x, v, path, "turn_ratio", 0.05, 2, &d->turn_ratio);
    get_number(x, v, path, "accel_mm_s2", 10, 100000, &d->accel_mm_s2);
    get_number(x, v, path, "decel_mm_s2", 10, 100000, &d->decel_mm_s2);
}

static void load_keyboard(struct ctx *x, const cJSON *v)
{
    static const char *const keys[] = { "hold_ms", "first_hold_ms", NULL };
    const char *path = "$.keyboard";
    if (!check_object(x, v, path, keys))
        return;
    get_int(x, v, path, "hold_ms", 50, 2000, &x->c->drive.hold_ms);
    get_int(x, v, path, "first_hold_ms", 50, 5000, &x->c->drive.first_hold_ms);
}

static void load_flippers(struct ctx *x, const cJSON *v)
{
    static const char *const keys[] = { "min_deg", "max_deg", "step_deg", "rate_deg_s", NULL };
    const char *path = "$.flippers";
    if (!check_object(x, v, path, keys))
        return;
    get_number(x, v, path, "min_deg", -180, 180, &x->c->flipper_min_deg);
    get_number(x, v, path, "max_deg", -180, 180, &x->c->flipper_max_deg);
    get_number(x, v, path, "step_deg", 0.1, 90, &x->c->flipper_step_deg);
    get_number(x, v, path, "rate_deg_s", 1, 720, &x->c->flipper_rate_deg_s);
}

static bool good_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= KN_CONF_PRESET_NAME)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-'))
            return false;
    }
    return true;
}

static void load_presets(struct ctx *x, const cJSON *v)
{
    const char *path = "$.presets";
    if (!check_object(x, v, path, NULL))
        return;
    int n = cJSON_GetArraySize(v);
    char g[64];
    if (n < 1 || n > KN_CONF_MAX_PRESETS) {
        problem(x, path, "expected 1..%d presets, got %d", KN_CONF_MAX_PRESETS, n);
        return;
    }
    x->c->npresets = 0;
    for (const cJSON *it = v->child; it; it = it->next) {
        char p[256];
        sub(p, sizeof p, path, it->string);
        struct kn_preset *pr = &x->c->presets[x->c->npresets++];
        memset(pr, 0, sizeof *pr);
        if (!good_name(it->string))
            problem(x, p, "expected a preset name of 1..%d letters, digits, '_' or '-'",
                    KN_CONF_PRESET_NAME - 1);
        else
            snprintf(pr->name, sizeof pr->name, "%s", it->string);
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 4) {
            problem(x, p, "expected an array of 4 angles [FL, FR, RL, RR] in degrees, got %s",
                    cJSON_IsArray(it) ? "another length" : got(it, g, sizeof g));
            continue;
        }
        for (int k = 0; k < 4; k++) {
            const cJSON *a = cJSON_GetArrayItem(it, k);
            char pk[280];
            snprintf(pk, sizeof pk, "%s[%d]", p, k);
            if (!cJSON_IsNumber(a) || !isfinite(a->valuedouble) || a->valuedouble < -180 ||
                a->valuedouble > 180)
                problem(x, pk, "expected number -180..180, got %s", got(a, g, sizeof g));
            else
                pr->deg[k] = a->valuedouble;
        }
    }
}

static void load_stick(struct ctx *x, const cJSON *obj, const char *path, const char *key,
                       struct kn_stick *out)
{
    static const char *const keys[] = { "axis", "invert", NULL };
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        return;
    char p[256], g[64];
    sub(p, sizeof p, path, key);
    if (!check_object(x, v, p, keys))
        return;
    const cJSON *axis = cJSON_GetObjectItemCaseSensitive(v, "axis");
    if (axis) {
        int code =
            cJSON_IsString(axis) ? libevdev_event_code_from_name(EV_ABS, axis->valuestring) : -1;
        char pa[280];
        sub(pa, sizeof pa, p, "axis");
        if (code < 0)
            problem(x, pa, "expected an absolute axis name such as \"ABS_X\", got %s",
                    got(axis, g, sizeof g));
        else
            out->axis = (uint16_t)code;
    }
    get_bool(x, v, p, "invert", &out->invert);
}

/* "stop", "estop", "faster", "slower", "assist", "preset:NAME", "<group>_up|down"
 * with group FL FR RL RR front rear all. */
static bool parse_action(const struct kn_conf *c, const char *s, struct kn_action *a)
{
    memset(a, 0, sizeof *a);
    static const struct {
        const char *name;
        enum kn_act act;
    } simple[] = { { "stop", KN_ACT_STOP },
                   { "estop", KN_ACT_ESTOP },
                   { "faster", KN_ACT_FASTER },
                   { "slower", KN_ACT_SLOWER },
                   { "assist", KN_ACT_ASSIST } };
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (strcmp(s, simple[i].name) == 0) {
            a->act = simple[i].act;
            return true;
        }
    if (strncmp(s, "preset:", 7) == 0) {
        for (int k = 0; k < c->npresets; k++)
            if (strcmp(c->presets[k].name, s + 7) == 0) {
                a->act = KN_ACT_PRESET;
                a->preset = k;
                return true;
            }
        return false;
    }
    static const struct {
        const char *name;
        uint8_t mask;
    } groups[] = { { "FL", KN_FLIP_FL },  { "FR", KN_FLIP_FR },       { "RL", KN_FLIP_RL },
                   { "RR", KN_FLIP_RR },  { "front", KN_FLIP_FRONT }, { "rear", KN_FLIP_REAR },
                   { "all", KN_FLIP_ALL } };
    const char *us = strrchr(s, '_');
    if (!us)
        return false;
    enum kn_act act;
    if (strcmp(us, "_up") == 0)
        act = KN_ACT_FLIP_UP;
    else if (strcmp(us, "_down") == 0)
        act = KN_ACT_FLIP_DOWN;
    else
        return false;
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
        if (strlen(groups[i].name) == (size_t)(us - s) &&
            strncmp(s, groups[i].name, (size_t)(us - s)) == 0) {
            a->act = act;
            a->mask = groups[i].mask;
            return true;
        }
    return false;
}

void kn_conf_action_name(const struct kn_conf *c, const struct kn_action *a, char *buf, size_t len)
{
    const char *grp = "?";
    switch (a->mask) {
    case KN_FLIP_FL: grp = "FL"; break;
    case KN_FLIP_FR: grp = "FR"; break;
    case KN_FLIP_RL: grp = "RL"; break;
    case KN_FLIP_RR: grp = "RR"; break;
    case KN_FLIP_FRONT: grp = "front"; break;
    case KN_FLIP_REAR: grp = "rear"; break;
    case KN_FLIP_ALL: grp = "all"; break;
    default: break;
    }
    switch (a->act) {
    case KN_ACT_STOP: snprintf(buf, len, "stop"); break;
    case KN_ACT_ESTOP: snprintf(buf, len, "estop"); break;
    case KN_ACT_FASTER: snprintf(buf, len, "faster"); break;
    case KN_ACT_SLOWER: snprintf(buf, len, "slower"); break;
    case KN_ACT_ASSIST: snprintf(buf, len, "assist"); break;
    case KN_ACT_PRESET:
        snprintf(buf, len, "preset:%s",
                 a->preset >= 0 && a->preset < c->npresets ? c->presets[a->preset].name : "?");
        break;
    case KN_ACT_FLIP_UP: snprintf(buf, len, "%s_up", grp); break;
    case KN_ACT_FLIP_DOWN: snprintf(buf, len, "%s_down", grp); break;
    default: snprintf(buf, len, "none"); break;
    }
}

/* "BTN_SOUTH", "KEY_A" (EV_KEY), or "ABS_HAT0Y-" / "ABS_Z+". */
static bool parse_source(const char *s, struct kn_binding *b)
{
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof b->source)
        return false;
    snprintf(b->source, sizeof b->source, "%s", s);
    if (strncmp(s, "ABS_", 4) == 0) {
        if (n < 6 || (s[n - 1] != '+' && s[n - 1] != '-'))
            return false;
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(n - 1), s);
        int code = libevdev_event_code_from_name(EV_ABS, name);
        if (code < 0)
            return false;
        b->type = EV_ABS;
        b->code = (uint16_t)code;
        b->dir = s[n - 1] == '+' ? 1 : -1;
        return true;
    }
    int code = libevdev_event_code_from_name(EV_KEY, s);
    if (code < 0)
        return false;
    b->type = EV_KEY;
    b->code = (uint16_t)code;
    b->dir = 0;
    return true;
}

static void load_buttons(struct ctx *x, const cJSON *v, const char *path)
{
    if (!check_object(x, v, path, NULL))
        return;
    int n = cJSON_GetArraySize(v);
    if (n > KN_CONF_MAX_BINDINGS) {
        problem(x, path, "expected at most %d bindings, got %d", KN_CONF_MAX_BINDINGS, n);
        return;
    }
    x->c->nbindings = 0;
    char g[64];
    for (const cJSON *it = v->child; it; it = it->next) {
        char p[256];
        sub(p, sizeof p, path, it->string);
        struct kn_binding b;
        memset(&b, 0, sizeof b);
        bool ok = true;
        if (!parse_source(it->string, &b)) {
            problem(x, p,
                    "expected a button name such as \"BTN_SOUTH\" or an axis direction "
                    "such as \"ABS_HAT0Y-\"");
            ok = false;
        }
        if (!cJSON_IsString(it) || !parse_action(x->c, it->valuestring, &b.action)) {
            char names[160] = "";
            size_t used = 0;
            for (int k = 0; k < x->c->npresets; k++) {
                int w = snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "",
                                 x->c->presets[k].name);
                if (w > 0 && (size_t)w < sizeof names - used)
                    used += (size_t)w;
            }
            problem(x, p,
                    "expected an action: stop, estop, faster, slower, assist, preset:NAME (%s), or "
                    "FL|FR|RL|RR|front|rear|all followed by _up or _down; got %s",
                    names, got(it, g, sizeof g));
            ok = false;
        }
        if (ok)
            x->c->bindings[x->c->nbindings++] = b;
    }
}

static void load_joystick(struct ctx *x, const cJSON *v)
{
    static const char *const keys[] = { "device",     "throttle", "turn", "deadzone",
                                        "turn_ratio", "buttons",  NULL };
    const char *path = "$.joystick";
    if (!check_object(x, v, path, keys))
        return;
    char g[64];
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(v, "device");
    if (dev) {
        const char *s = cJSON_IsString(dev) ? dev->valuestring : NULL;
        bool ok = s && strlen(s) > 0 && strlen(s) < KN_CONF_DEVICE_LEN &&
                  (strcmp(s, "auto") == 0 || strcmp(s, "none") == 0 || s[0] == '/' ||
                   (strncmp(s, "name:", 5) == 0 && s[5] != '\0'));
        if (!ok)
            problem(x, "$.joystick.device",
                    "expected \"auto\", \"none\", a device path such as \"/dev/input/event5\" or "
                    "\"name:DEVICE NAME\", got %s",
                    got(dev, g, sizeof g));
        else
            snprintf(x->c->joy_device, sizeof x->c->joy_device, "%s", s);
    }
    load_stick(x, v, path, "throttle", &x->c->throttle);
    load_stick(x, v, path, "turn", &x->c->turn);
    get_number(x, v, path, "deadzone", 0, 0.9, &x->c->deadzone);
    get_number(x, v, path, "turn_ratio", 0.05, 2, &x->c->joy_turn_ratio);
    /* buttons name presets, so they are read after $.presets */
}

int kn_conf_parse(struct kn_conf *c, const char *text, size_t len, const char *name, char *err,
                  size_t errlen)
{
    struct ctx x = { .c = c, .name = name, .err = err, .errlen = errlen };
    if (err && errlen)
        err[0] = '\0';
    kn_conf_defaults(c);
    if (memchr(text, '\0', len)) {
        problem(&x, "", "expected JSON text, got a NUL byte");
        return x.problems;
    }
    /* a terminated copy, so text after the value is refused too */
    char *copy = malloc(len + 1);
    if (!copy) {
        problem(&x, "", "out of memory");
        return x.problems;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(copy, len + 1, &end, true);
    if (end)
        end = text + (end - copy);
    free(copy);
    if (!root) {
        int line = 1, col = 1;
        const char *at = end ? end : text;
        for (const char *p = text; p < at && p < text + len; p++) {
            if (*p == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        size_t left = (size_t)(text + len - at);
        char where[64];
        snprintf(where, sizeof where, "%d:%d", line, col);
        problem(&x, where, "expected valid JSON, got a syntax error at: %.*s",
                (int)(left > 24 ? 24 : left), at);
        return x.problems;
    }
    static const char *const keys[] = {
        "drive", "keyboard", "flippers", "presets", "joystick", NULL
    };
    if (check_object(&x, root, "$", keys) || cJSON_IsObject(root)) {
        const cJSON *v;
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "drive")))
            load_drive(&x, v);
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "keyboard")))
            load_keyboard(&x, v);
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "flippers")))
            load_flippers(&x, v);
        if ((v = cJSON_GetObjectItemCaseSensitive(root, "presets")))
            load_presets(&x, v);
        const cJSON *joy = cJSON_GetObjectItemCaseSensitive(root, "joystick");
        if (joy) {
            load_joystick(&x, joy);
            const cJSON *b =
                cJSON_IsObject(joy) ? cJSON_GetObjectItemCaseSensitive(joy, "buttons") : NULL;
            if (b)
                load_buttons(&x, b, "$.joystick.buttons");
            else
                default_bindings(c);
        } else {
            default_bindings(c);
        }
    }
    cJSON_Delete(root);
    if (x.problems)
        return x.problems;

    /* rules across keys */
    if (c->drive.speed_mm_s > c->drive.max_speed_mm_s)
        problem(&x, "$.drive.speed_mm_s", "expected at most max_speed_mm_s (%g), got %g",
                c->drive.max_speed_mm_s, c->drive.speed_mm_s);
    if (c->drive.first_hold_ms < c->drive.hold_ms)
        problem(&x, "$.keyboard.first_hold_ms", "expected at least hold_ms (%d), got %d",
                c->drive.hold_ms, c->drive.first_hold_ms);
    if (c->flipper_min_deg >= c->flipper_max_deg)
        problem(&x, "$.flippers.min_deg", "expected less than max_deg (%g), got %g",
                c->flipper_max_deg, c->flipper_min_deg);
    for (int k = 0; k < c->npresets; k++)
        for (int f = 0; f < 4; f++)
            if (c->presets[k].deg[f] < c->flipper_min_deg ||
                c->presets[k].deg[f] > c->flipper_max_deg) {
                char p[64];
                snprintf(p, sizeof p, "$.presets.%s[%d]", c->presets[k].name, f);
                problem(&x, p, "expected an angle within the flipper limits %g..%g, got %g",
                        c->flipper_min_deg, c->flipper_max_deg, c->presets[k].deg[f]);
            }
    if (c->throttle.axis == c->turn.axis)
        problem(&x, "$.joystick.turn.axis",
                "expected an axis other than the throttle's, got the same");
    return x.problems;
}

int kn_conf_load(struct kn_conf *c, const char *path, char *err, size_t errlen)
{
    struct ctx x = { .c = c, .name = path, .err = err, .errlen = errlen };
    if (err && errlen)
        err[0] = '\0';
    kn_conf_defaults(c);
    FILE *f = fopen(path, "rb");
    if (!f) {
        problem(&x, "", "cannot read: %s", strerror(errno));
        return x.problems;
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        problem(&x, "", "expected a regular file");
        fclose(f);
        return x.problems;
    }
    if (sb.st_size > KN_CONF_MAX_BYTES) {
        problem(&x, "", "expected at most %d bytes, got %lld", KN_CONF_MAX_BYTES,
                (long long)sb.st_size);
        fclose(f);
        return x.problems;
    }
    char *buf = malloc((size_t)sb.st_size + 1);
    if (!buf) {
        problem(&x, "", "out of memory");
        fclose(f);
        return x.problems;
    }
    size_t n = fread(buf, 1, (size_t)sb.st_size, f);
    bool rerr = ferror(f);
    fclose(f);
    if (rerr) {
        problem(&x, "", "read error");
        free(buf);
        return x.problems;
    }
    buf[n] = '\0';
    size_t start = strspn(buf, " \t\r\n");
    if (start == n) {
        problem(&x, "", "expected a JSON object, got an empty file");
        free(buf);
        return x.problems;
    }
    int r = kn_conf_parse(c, buf, n, path, err, errlen);
    free(buf);
    return r;
}
