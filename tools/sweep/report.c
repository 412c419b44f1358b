/* The report of a sweep's output directory (report.h): the statistics
 * of what was read (stats.h on the cases' statuses) and report.json and
 * report.html written next to sweep.json. */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_data.h"

void kn_report_value_text(const struct kn_report_param *p, size_t v, char *buf, size_t len)
{
    if (v >= p->nvalues) {
        snprintf(buf, len, "-");
    } else if (p->strings) {
        snprintf(buf, len, "%s", p->values[v].str);
    } else {
        struct kn_report_locale l;
        kn_report_locale_begin(&l);
        snprintf(buf, len, "%.10g", p->values[v].num);
        kn_report_locale_end(&l);
    }
}

bool kn_report_locale_begin(struct kn_report_locale *l)
{
    l->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    l->old = l->c ? uselocale(l->c) : (locale_t)0;
    return l->c != (locale_t)0;
}

void kn_report_locale_end(struct kn_report_locale *l)
{
    if (l->old)
        uselocale(l->old);
    if (l->c)
        freelocale(l->c);
    l->c = l->old = (locale_t)0;
}

int kn_report_analyse(const struct kn_report_sweep *s, struct kn_report_stats *st)
{
    memset(st, 0, sizeof *st);
    struct kn_sweepstats_case *cs = calloc(s->ncases ? s->ncases : 1, sizeof *cs);
    size_t *vidx = calloc(s->ncases ? s->ncases : 1, sizeof *vidx);
    st->cells = calloc(s->nparams ? s->nparams : 1, sizeof(struct kn_sweepstats_cell *));
    st->bounds = calloc(s->nparams ? s->nparams : 1, sizeof *st->bounds);
    int rc = cs && vidx && st->cells && st->bounds ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < s->ncases; i++) {
        const struct kn_report_case *c = &s->cases[i];
        cs[i] = (struct kn_sweepstats_case){ c->status, c->mode };
        switch (c->status) {
        case KN_SWEEPSTATS_PASS: st->passed++; break;
        case KN_SWEEPSTATS_FAIL: st->failed++; break;
        case KN_SWEEPSTATS_ERROR: st->errors++; break;
        case KN_SWEEPSTATS_NOT_RUN: st->not_run++; break;
        }
        st->sim_s += c->sim_s;
    }
    if (rc == 0)
        kn_sweepstats_modes(cs, s->ncases, st->modes);
    for (size_t k = 0; rc == 0 && k < s->nparams; k++) {
        const struct kn_report_param *p = &s->params[k];
        st->cells[k] = calloc(p->nvalues ? p->nvalues : 1, sizeof *st->cells[k]);
        if (!st->cells[k]) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < s->ncases; i++)
            vidx[i] = s->cases[i].vidx[k];
        kn_sweepstats_table(cs, vidx, s->ncases, st->cells[k], p->nvalues);
        kn_sweepstats_boundary(st->cells[k], p->nvalues, p->harder < 0, s->target, &st->bounds[k]);
    }
    free(cs);
    free(vidx);
    if (rc != 0)
        kn_report_stats_free(s, st);
    return rc;
}

void kn_report_stats_free(const struct kn_report_sweep *s, struct kn_report_stats *st)
{
    for (size_t k = 0; st->cells && k < s->nparams; k++)
        free(st->cells[k]);
    free(st->cells);
    free(st->bounds);
    memset(st, 0, sizeof *st);
}

int kn_report_write_file(const char *path, const char *text, size_t len)
{
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    int e = off < len ? errno : 0;
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) != 0)
        e = errno;
    if (e) {
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

int kn_report_write(const char *outdir, char *err, size_t errlen)
{
    struct kn_report_sweep s;
    struct kn_report_stats st;
    if (kn_report_load_sweep(outdir, &s, err, errlen) != 0) {
        kn_report_sweep_free(&s);
        return -1;
    }
    kn_report_load_results(outdir, &s);
    if (kn_report_analyse(&s, &st) != 0) {
        kn_report_sweep_free(&s);
        return kn_report_fail(err, errlen, "%s: out of memory", outdir);
    }
    int rc = 0;
    char path[4096];
    cJSON *j = kn_report_json(&s, &st);
    char *text = j ? cJSON_Print(j) : NULL;
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/report.json", outdir);
    if (!text) {
        rc = kn_report_fail(err, errlen, "%s: out of memory", path);
    } else {
        size_t n = strlen(text);
        text[n] = '\n'; /* cJSON_Print ends without one; its NUL makes room */
        if (kn_report_write_file(path, text, n + 1) != 0)
            rc = kn_report_fail(err, errlen, "%s: %s", path, strerror(errno));
    }
    free(text);
    char *html = NULL;
    size_t hlen = 0;
    FILE *f = rc == 0 ? open_memstream(&html, &hlen) : NULL;
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/report.html", outdir);
        int w = f ? kn_report_html(f, &s, &st) : -1;
        if (f && fclose(f) != 0)
            w = -1;
        if (w != 0)
            rc = kn_report_fail(err, errlen, "%s: out of memory", path);
        else if (kn_report_write_file(path, html, hlen) != 0)
            rc = kn_report_fail(err, errlen, "%s: %s", path, strerror(errno));
    }
    free(html);
    kn_report_stats_free(&s, &st);
    kn_report_sweep_free(&s);
    return rc;
}
