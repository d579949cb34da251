/* SPDX-License-Identifier: MIT */
#include "run-summary.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build-config.h"
#include "macro.h"
#include "price.h"
#include "write-all.h"

SummaryPhase *summary_phase(Summary *s, const char *name, double seconds, bool ok, const char *fmt, ...)
{
        SummaryPhase *p;
        va_list ap;

        if (s->n_phases >= SUMMARY_PHASES_MAX)
                return NULL;
        p = &s->phases[s->n_phases++];
        *p = (SummaryPhase){ .name = name, .seconds = seconds, .ok = ok };
        va_start(ap, fmt);
        (void)vsnprintf(p->detail, sizeof(p->detail), fmt, ap);
        va_end(ap);
        if (s->secrets)
                (void)secret_redact_string(s->secrets, p->detail);
        return p;
}

int summary_add_export(Summary *s, const char *name, const char *outcome, uint64_t bytes, const char *reason)
{
        SummaryExport *n = realloc(s->exports, (s->n_exports + 1) * sizeof(*n));

        if (!n)
                return -ENOMEM;
        s->exports = n;
        n = &s->exports[s->n_exports];
        *n = (SummaryExport){ .name = strdup(name), .outcome = outcome, .bytes = bytes };
        if (!n->name)
                return -ENOMEM;
        (void)snprintf(n->reason, sizeof(n->reason), "%s", reason ? reason : "");
        if (s->secrets) {
                (void)secret_redact_string(s->secrets, n->name);
                (void)secret_redact_string(s->secrets, n->reason);
        }
        s->n_exports++;
        return 0;
}

static char *member(json_t *o, const char *key)
{
        const char *v = json_string_value(json_object_get(o, key));

        return strndup(v ? v : "", 256);
}

void summary_read_egress(Summary *s, const char *data, size_t size)
{
        s->egress_logged = true;
        for (size_t pos = 0; pos < size;) {
                const char *nl = memchr(data + pos, '\n', size - pos);
                size_t n = nl ? (size_t)(nl - (data + pos)) : size - pos;
                json_t *o = json_loadb(data + pos, n, JSON_REJECT_DUPLICATES, NULL);

                pos += n + 1;
                if (n == 0) {
                        json_decref(o);
                        continue;
                }
                s->egress_requests++;
                if (json_is_object(o) && json_is_string(json_object_get(o, "decision")) &&
                    strcmp(json_string_value(json_object_get(o, "decision")), "deny") == 0) {
                        s->egress_denied++;
                        if (s->n_denied < SUMMARY_DENIED_MAX) {
                                SummaryDenied *d = &s->denied[s->n_denied++];
                                d->method = member(o, "method");
                                d->host = member(o, "host");
                                d->path = member(o, "path");
                                d->reason = member(o, "reason");
                                if (s->secrets) {
                                        (void)secret_redact_string(s->secrets, d->method);
                                        (void)secret_redact_string(s->secrets, d->host);
                                        (void)secret_redact_string(s->secrets, d->path);
                                        (void)secret_redact_string(s->secrets, d->reason);
                                }
                        }
                }
                json_decref(o);
        }
}

void summary_done(Summary *s)
{
        for (size_t i = 0; i < s->n_exports; i++)
                free(s->exports[i].name);
        free(s->exports);
        for (size_t i = 0; i < s->n_denied; i++) {
                free(s->denied[i].method);
                free(s->denied[i].host);
                free(s->denied[i].path);
                free(s->denied[i].reason);
        }
        *s = (Summary){};
}

/* What the key broker did, or null where there was none. Amounts are decimal strings (six places), never
 * floats. */
static json_t *summary_api_json(const Summary *s)
{
        char cost[AMOUNT_TEXT_MAX], budget[AMOUNT_TEXT_MAX];
        json_t *o;

        if (!s->broker_reported)
                return json_null();
        o = json_pack("{s:i, s:i, s:i, s:o, s:I, s:I, s:i, s:o, s:o, s:i}", "forwarded",
                      (int)s->api_forwarded, "refused", (int)s->api_refused, "over-max-requests",
                      (int)s->api_over, "max-requests", s->api_max ? json_integer(s->api_max) : json_null(),
                      "input-tokens", (json_int_t)s->api_input_tokens, "output-tokens",
                      (json_int_t)s->api_output_tokens, "over-budget", (int)s->api_over_budget, "budget",
                      s->api_budget ? json_string(amount_format(s->api_budget, budget)) : json_null(),
                      "cost", s->api_priced ? json_string(amount_format(s->api_spent, cost)) : json_null(),
                      "unpriced", (int)s->api_unpriced);
        return o ? o : json_null();
}

static json_t *summary_json(const Summary *s)
{
        const RunPlan *p = s->plan;
        json_t *o = json_object(), *phases = json_array(), *exports = json_array(), *denied = json_array(),
               *outputs = json_array();

        for (char **n = p->outputs; *n; n++)
                json_array_append_new(outputs, json_string(*n));
        for (size_t i = 0; i < s->n_phases; i++)
                json_array_append_new(phases, json_pack("{s:s, s:f, s:s, s:s}", "name", s->phases[i].name,
                                                        "seconds", s->phases[i].seconds, "outcome",
                                                        s->phases[i].ok ? "ok" : "failed", "detail",
                                                        s->phases[i].detail));
        for (size_t i = 0; i < s->n_exports; i++)
                json_array_append_new(exports, json_pack("{s:s, s:s, s:I, s:s}", "name", s->exports[i].name,
                                                         "outcome", s->exports[i].outcome, "bytes",
                                                         (json_int_t)s->exports[i].bytes, "reason",
                                                         s->exports[i].reason));
        for (size_t i = 0; i < s->n_denied; i++)
                json_array_append_new(denied,
                                      json_pack("{s:s, s:s, s:s, s:s}", "method", s->denied[i].method,
                                                "host", s->denied[i].host, "path", s->denied[i].path,
                                                "reason", s->denied[i].reason));
        json_object_set_new(o, "version", json_string(PACKAGE_VERSION));
        json_object_set_new(o, "inputs",
                            json_pack("{s:s, s:s?, s:s?, s:s, s:s, s:o, s:b, s:s?, s:i, s:I, s:I, s:i}",
                                      "repo", p->repo, "commit", p->commit, "ref", p->ref, "base", p->base,
                                      "task", p->task, "outputs", outputs, "patch", p->patch, "setup",
                                      p->setup, "timeout", (int)p->timeout, "max-file-bytes",
                                      (json_int_t)p->max_file_bytes, "max-total-bytes",
                                      (json_int_t)p->max_total_bytes, "max-files", (int)p->max_files));
        json_object_set_new(o, "commit", s->commit[0] ? json_string(s->commit) : json_null());
        json_object_set_new(o, "base-commit", s->base_commit[0] ? json_string(s->base_commit) : json_null());
        json_object_set_new(o, "fetched-by-id", json_boolean(s->fetched_by_id));
        json_object_set_new(o, "confine", json_string(s->confine ? s->confine : "unknown"));
        json_object_set_new(o, "profile", json_string(s->profile ? s->profile : "unknown"));
        json_object_set_new(o, "token", json_string(s->token ? s->token : "none"));
        json_object_set_new(o, "api-requests", summary_api_json(s));
        json_object_set_new(o, "trusted-paths",
                            json_pack("{s:i, s:i}", "replaced", (int)s->trusted_replaced, "removed",
                                      (int)s->trusted_removed));
        json_object_set_new(o, "phases", phases);
        json_object_set_new(o, "exports", exports);
        json_object_set_new(o, "egress",
                            s->egress_logged
                                    ? json_pack("{s:i, s:i, s:o}", "requests", (int)s->egress_requests,
                                                "denied", (int)s->egress_denied, "denied-requests", denied)
                                    : (json_decref(denied), json_null()));
        json_object_set_new(o, "result", json_string(s->result ? s->result : "unknown"));
        json_object_set_new(o, "exit-status", json_integer(s->exit_status));
        return o;
}

/* Markdown table cells of run's own words: no '|', no line break, no backquote run to escape from. */
static void md_cell(FILE *f, const char *s)
{
        for (; *s; s++) {
                if (*s == '|')
                        fputs("\\|", f);
                else
                        fputc(*s == '\n' || *s == '\r' ? ' ' : *s == '`' ? '\'' : *s, f);
        }
}

/* A table cell of a field the sandbox may have chosen (a host, a path, a file name, a detail that quotes
 * them): one code span, in which nothing is markup, no HTML, no link, no image, no autolink. Its fence is a
 * backquote longer than the longest run of them in s, and a space pads each side (CommonMark strips one of
 * each). No line break: a control character becomes a space. A '|' would end the table's cell even there:
 * it is escaped ("\|", which GFM unescapes inside the cell); one right after a backslash, which would pair
 * with the escape's and end the cell after all, is shown as U+00A6 instead. Nothing for "". */
static void md_code(FILE *f, const char *s)
{
        size_t run = 0, longest = 0;

        if (!*s)
                return;
        for (const char *p = s; *p; p++) {
                run = *p == '`' ? run + 1 : 0;
                if (run > longest)
                        longest = run;
        }
        for (size_t i = 0; i <= longest; i++)
                fputc('`', f);
        fputc(' ', f);
        for (const char *p = s; *p; p++) {
                unsigned char c = (unsigned char)*p;

                if (c == '|')
                        fputs(p > s && p[-1] == '\\' ? "\xc2\xa6" : "\\|", f);
                else
                        fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
        }
        fputc(' ', f);
        for (size_t i = 0; i <= longest; i++)
                fputc('`', f);
}

static void summary_markdown(const Summary *s, FILE *f)
{
        fprintf(f, "## agentic-job run: %s (exit %d)\n\n", s->result ? s->result : "unknown",
                s->exit_status);
        fputs("| | |\n|---|---|\n| repository | ", f);
        md_code(f, s->plan->repo);
        fputs(" |\n| commit | ", f);
        if (s->commit[0])
                md_code(f, s->commit);
        else
                md_cell(f, "(not resolved)");
        fputs(" |\n| base | ", f);
        md_code(f, s->plan->base);
        fputs(" |\n| confinement | ", f);
        md_cell(f, !s->confine                       ? "unknown"
                   : strcmp(s->confine, "none") == 0 ? "none: [run] confine = \"none\" (opted out)"
                                                     : s->confine);
        fputs(" |\n| profile | ", f);
        md_cell(f, s->profile ? s->profile : "unknown");
        fputs(" |\n| run token | ", f);
        md_cell(f, s->token && strcmp(s->token, "file") == 0
                           ? "from standard input, to the agent in a 0600 file"
                   : s->token && strcmp(s->token, "broker") == 0
                           ? "from standard input, held by the key broker; the agent had a placeholder"
                           : "none");
        if (s->broker_reported)
                fprintf(f, " |\n| model API requests | %u forwarded with the key, %u refused",
                        s->api_forwarded, s->api_refused);
        if (s->broker_reported && s->api_over)
                fprintf(f, " (%u over max-requests, %u)", s->api_over, s->api_max);
        if (s->broker_reported && s->api_over_budget)
                fprintf(f, " (%u over the budget)", s->api_over_budget);
        if (s->broker_reported)
                fprintf(f, "; the answers said %llu input and %llu output tokens", s->api_input_tokens,
                        s->api_output_tokens);
        if (s->broker_reported && s->api_priced) {
                char cost[AMOUNT_TEXT_MAX];

                fprintf(f, ", costing %s", amount_format(s->api_spent, cost));
                if (s->api_budget) {
                        char budget[AMOUNT_TEXT_MAX];

                        fprintf(f, " of a budget of %s", amount_format(s->api_budget, budget));
                }
                if (s->api_unpriced)
                        fprintf(f, " and %u request%s at a cost not known", s->api_unpriced,
                                s->api_unpriced == 1 ? "" : "s");
        }
        fprintf(f, " |\n\n| phase | outcome | seconds | detail |\n|---|---|---|---|\n");
        for (size_t i = 0; i < s->n_phases; i++) {
                fprintf(f, "| %s | %s | %.3f | ", s->phases[i].name, s->phases[i].ok ? "ok" : "failed",
                        s->phases[i].seconds);
                md_code(f, s->phases[i].detail);
                fputs(" |\n", f);
        }
        if (s->n_exports) {
                fputs("\n| output | outcome | bytes | reason |\n|---|---|---|---|\n", f);
                for (size_t i = 0; i < s->n_exports; i++) {
                        fputs("| ", f);
                        md_code(f, s->exports[i].name);
                        fprintf(f, " | %s | %llu | ", s->exports[i].outcome,
                                (unsigned long long)s->exports[i].bytes);
                        md_code(f, s->exports[i].reason);
                        fputs(" |\n", f);
                }
        }
        if (s->egress_logged) {
                fprintf(f, "\nEgress: %u requests, %u denied.\n", s->egress_requests, s->egress_denied);
                if (s->n_denied) {
                        fputs("\n| method | host | path | reason |\n|---|---|---|---|\n", f);
                        for (size_t i = 0; i < s->n_denied; i++) {
                                const SummaryDenied *d = &s->denied[i];
                                fputs("| ", f);
                                md_code(f, d->method);
                                fputs(" | ", f);
                                md_code(f, d->host);
                                fputs(" | ", f);
                                md_code(f, d->path);
                                fputs(" | ", f);
                                md_code(f, d->reason);
                                fputs(" |\n", f);
                        }
                }
        }
}

/* A file written whole or not at all: what failed part way (a full disk) is removed, so no reader parses
 * a cut summary. */
static int write_new(int dir_fd, const char *name, const char *data, size_t size)
{
        _cleanup_close_ int fd =
                openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        int r;

        if (fd < 0)
                return -errno;
        r = write_all(fd, data, size);
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r < 0)
                (void)unlinkat(dir_fd, name, 0);
        return r;
}

/* A copy of s->plan's strings, redacted: the runner's own words too may hold a secret (a setup command with
 * a key in it). */
typedef struct PlanText {
        char *repo, *ref, *base, *task, *setup;
} PlanText;

static void plan_text_done(PlanText *t)
{
        free(t->repo);
        free(t->ref);
        free(t->base);
        free(t->task);
        free(t->setup);
}

static int redacted_dup(const SecretSet *set, const char *s, char **ret)
{
        *ret = NULL;
        if (!s)
                return 0;
        *ret = strdup(s);
        if (!*ret)
                return -ENOMEM;
        if (set)
                (void)secret_redact_string(set, *ret);
        return 0;
}

int summary_write(const Summary *s, int dir_fd, FILE *md, int *ret_md_error)
{
        _cleanup_(plan_text_done) PlanText t = {};
        RunPlan plan = *s->plan;
        Summary view = *s;
        json_t *o;
        _cleanup_free_ char *text = NULL, *mdtext = NULL;
        size_t mdsize = 0;
        FILE *f;
        int r;

        *ret_md_error = 0;
        if (redacted_dup(s->secrets, plan.repo, &t.repo) < 0 ||
            redacted_dup(s->secrets, plan.ref, &t.ref) < 0 ||
            redacted_dup(s->secrets, plan.base, &t.base) < 0 ||
            redacted_dup(s->secrets, plan.task, &t.task) < 0 ||
            redacted_dup(s->secrets, plan.setup, &t.setup) < 0)
                return -ENOMEM;
        plan.repo = t.repo;
        plan.ref = t.ref;
        plan.base = t.base;
        plan.task = t.task;
        plan.setup = t.setup;
        view.plan = &plan;
        s = &view;
        o = summary_json(s);
        if (!o)
                return -ENOMEM;
        text = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
        json_decref(o);
        if (!text)
                return -ENOMEM;
        f = open_memstream(&mdtext, &mdsize);
        if (!f)
                return -ENOMEM;
        summary_markdown(s, f);
        if (fclose(f) != 0)
                return -ENOMEM;
        /* Both or neither: summary.json alone would say a run was reported that was not. */
        r = write_new(dir_fd, "summary.json", text, strlen(text));
        if (r >= 0) {
                r = write_new(dir_fd, "summary.md", mdtext, mdsize);
                if (r < 0)
                        (void)unlinkat(dir_fd, "summary.json", 0);
        }
        if (md && (fwrite(mdtext, 1, mdsize, md) != mdsize || fflush(md) != 0))
                *ret_md_error = errno > 0 ? -errno : -EIO;
        return r;
}
