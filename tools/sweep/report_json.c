/* report.json (report_data.h): the sweep's figures as cJSON builds them,
 * rates and bounds rounded to 1e-6 so the file reads well and stays
 * byte-identical for identical case results. */
#include <math.h>

#include "report_data.h"

static double round6(double x)
{
    return round(x * 1e6) / 1e6;
}

static cJSON *value_json(const struct kn_report_param *p, long v)
{
    if (v < 0 || (size_t)v >= p->nvalues)
        return cJSON_CreateNull();
    return p->strings ? cJSON_CreateString(p->values[v].str) : cJSON_CreateNumber(p->values[v].num);
}

/* The modes that counted, in the order of enum kn_sweepstats_mode. */
static cJSON *modes_json(const unsigned modes[KN_SWEEPSTATS_NMODES])
{
    cJSON *o = cJSON_CreateObject();
    for (int m = 0; o && m < KN_SWEEPSTATS_NMODES; m++)
        if (modes[m])
            cJSON_AddNumberToObject(o, kn_sweepstats_mode_name((enum kn_sweepstats_mode)m),
                                    modes[m]);
    return o;
}

static cJSON *param_json(const struct kn_report_param *p, const struct kn_sweepstats_cell *cells)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", p->name);
    cJSON_AddStringToObject(o, "unit", p->unit);
    if (p->harder)
        cJSON_AddStringToObject(o, "harder", p->harder > 0 ? "higher" : "lower");
    else
        cJSON_AddNullToObject(o, "harder");
    cJSON *vals = cJSON_AddArrayToObject(o, "values");
    for (size_t v = 0; vals && v < p->nvalues; v++) {
        const struct kn_sweepstats_cell *c = &cells[v];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "value", value_json(p, (long)v));
        cJSON_AddNumberToObject(e, "n", c->n);
        cJSON_AddNumberToObject(e, "pass", c->pass);
        if (c->n)
            cJSON_AddNumberToObject(e, "rate", round6(c->rate));
        else
            cJSON_AddNullToObject(e, "rate");
        cJSON_AddNumberToObject(e, "lo", round6(c->lo));
        cJSON_AddNumberToObject(e, "hi", round6(c->hi));
        cJSON_AddNumberToObject(e, "errors", c->errors);
        cJSON_AddItemToObject(e, "modes", modes_json(c->modes));
        cJSON_AddItemToArray(vals, e);
    }
    return o;
}

static cJSON *boundary_json(const struct kn_report_sweep *s, const struct kn_report_param *p,
                            const struct kn_sweepstats_boundary *b)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "parameter", p->name);
    cJSON_AddStringToObject(o, "harder", p->harder > 0 ? "higher" : "lower");
    cJSON_AddNumberToObject(o, "target", s->target);
    cJSON_AddItemToObject(o, "point", value_json(p, b->point));
    cJSON_AddItemToObject(o, "confident", value_json(p, b->confident));
    if (b->lo >= 0) {
        cJSON *iv = cJSON_AddArrayToObject(o, "interval");
        cJSON_AddItemToArray(iv, value_json(p, b->lo));
        cJSON_AddItemToArray(iv, value_json(p, b->hi));
    } else {
        cJSON_AddNullToObject(o, "interval");
    }
    return o;
}

cJSON *kn_report_json(const struct kn_report_sweep *s, const struct kn_report_stats *st)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "format", 1);
    cJSON_AddStringToObject(o, "name", s->name);
    cJSON_AddStringToObject(o, "hash", s->hash);
    cJSON_AddStringToObject(o, "scenario", s->scenario);
    cJSON_AddNumberToObject(o, "target_rate", s->target);
    cJSON_AddNumberToObject(o, "cases", (double)s->ncases);
    cJSON_AddNumberToObject(o, "passed", (double)st->passed);
    cJSON_AddNumberToObject(o, "failed", (double)st->failed);
    cJSON_AddNumberToObject(o, "errors", (double)st->errors);
    cJSON_AddNumberToObject(o, "not_run", (double)st->not_run);
    cJSON_AddNumberToObject(o, "sim_s_total", round6(st->sim_s));
    cJSON_AddItemToObject(o, "modes", modes_json(st->modes));
    cJSON *params = cJSON_AddArrayToObject(o, "parameters");
    cJSON *bounds = cJSON_AddArrayToObject(o, "boundaries");
    for (size_t k = 0; k < s->nparams; k++) {
        cJSON_AddItemToArray(params, param_json(&s->params[k], st->cells[k]));
        if (s->params[k].harder)
            cJSON_AddItemToArray(bounds, boundary_json(s, &s->params[k], &st->bounds[k]));
    }
    cJSON *fails = cJSON_AddArrayToObject(o, "failures");
    for (size_t i = 0; i < s->ncases; i++) {
        const struct kn_report_case *c = &s->cases[i];
        if (c->status != KN_SWEEPSTATS_FAIL && c->status != KN_SWEEPSTATS_ERROR)
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "id", c->id);
        cJSON_AddItemToObject(e, "params", cJSON_Duplicate(c->params, 1));
        cJSON_AddStringToObject(e, "status", c->status == KN_SWEEPSTATS_FAIL ? "fail" : "error");
        cJSON_AddStringToObject(e, "mode", kn_sweepstats_mode_name(c->mode));
        cJSON_AddStringToObject(e, "why", c->why ? c->why : "");
        cJSON_AddItemToArray(fails, e);
    }
    /* any allocation that failed on the way left a part out: all or
     * nothing */
    if (!params || !bounds || !fails || cJSON_GetArraySize(params) != (int)s->nparams) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
