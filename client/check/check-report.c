/* SPDX-License-Identifier: MIT */
#include "check-report.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-text.h"
#include "probes.h"
#include "write-all.h"

#define REPORT_MAX 1024

typedef struct Result {
        char *name;
        CheckStatus status;
        long long ms;
        char *detail; /* escaped */
} Result;

struct Report {
        bool json;
        Result results[REPORT_MAX];
        size_t n;
        unsigned counts[3];
};

Report *report_new(bool json)
{
        Report *r = calloc(1, sizeof(Report));

        if (r)
                r->json = json;
        return r;
}

void report_free(Report *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n; i++) {
                free(r->results[i].name);
                free(r->results[i].detail);
        }
        free(r);
}

void report_add(Report *r, const char *name, CheckStatus status, long long ms, const char *detail,
                bool from_sandbox)
{
        char n_esc[CHECK_NAME_MAX * 4 + 16], d_esc[CHECK_DETAIL_MAX * 4 + 16];

        (void)from_sandbox; /* everything is escaped alike */
        check_escape(name, n_esc, sizeof(n_esc));
        check_escape(detail, d_esc, sizeof(d_esc));
        r->counts[status]++;
        if (!r->json) {
                printf("%s [%s] %s\n", check_status_to_string(status), n_esc, d_esc);
                fflush(stdout);
        }
        if (r->n < REPORT_MAX) {
                Result *x = &r->results[r->n++];
                x->name = strdup(n_esc);
                x->detail = strdup(d_esc);
                x->status = status;
                x->ms = ms;
        }
}

void report_addf(Report *r, const char *name, CheckStatus status, long long ms, bool from_sandbox,
                 const char *fmt, ...)
{
        char detail[CHECK_DETAIL_MAX];
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        report_add(r, name, status, ms, detail, from_sandbox);
}

unsigned report_failed(const Report *r)
{
        return r->counts[CHECK_FAIL];
}

static int name_compare(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void json_document(const Report *r)
{
        json_t *root = json_object(), *list = json_array();
        char *s;

        for (size_t i = 0; i < r->n; i++) {
                const Result *x = &r->results[i];
                const ProbeDef *d = probe_lookup(x->name);

                json_array_append_new(
                        list, json_pack("{s:s?, s:s, s:s?, s:s?, s:I, s:s?}", "name", x->name, "result",
                                        x->status == CHECK_OK     ? "ok"
                                        : x->status == CHECK_FAIL ? "fail"
                                                                  : "note",
                                        "group", d ? d->group : NULL, "control", d ? d->control : NULL, "ms",
                                        (json_int_t)x->ms, "detail", x->detail));
        }
        json_object_set_new(root, "results", list);
        json_object_set_new(root, "ok", json_integer(r->counts[CHECK_OK]));
        json_object_set_new(root, "failed", json_integer(r->counts[CHECK_FAIL]));
        json_object_set_new(root, "notes", json_integer(r->counts[CHECK_NOTE]));
        s = json_dumps(root, JSON_INDENT(2));
        if (s)
                printf("%s\n", s);
        free(s);
        json_decref(root);
}

/* The Markdown table, appended to the runner's own file (not through a link). */
static void step_summary(const Report *r)
{
        const char *path = getenv("GITHUB_STEP_SUMMARY");
        char *text = NULL;
        size_t size = 0;
        FILE *f;
        int fd;

        if (!path || !path[0])
                return;
        f = open_memstream(&text, &size);
        if (!f)
                return;
        fprintf(f,
                "### agentic-job sandbox check\n\n%u ok, %u failed, %u notes\n\n| result | probe | detail "
                "|\n| --- | --- | --- |\n",
                r->counts[CHECK_OK], r->counts[CHECK_FAIL], r->counts[CHECK_NOTE]);
        for (size_t i = 0; i < r->n; i++)
                fprintf(f, "| %s | `%s` | %s |\n", check_status_to_string(r->results[i].status),
                        r->results[i].name, r->results[i].detail);
        fputc('\n', f);
        if (fclose(f) != 0) {
                free(text);
                return;
        }
        fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || write_all(fd, text, size) < 0)
                fprintf(stderr, "agentic-job sandbox check: cannot append to $GITHUB_STEP_SUMMARY: %s\n",
                        strerror(errno));
        if (fd >= 0)
                close(fd);
        free(text);
}

int report_finish(Report *r)
{
        const char *failed[REPORT_MAX];
        size_t n = 0;

        if (r->json)
                json_document(r);
        else
                printf("%u ok, %u failed, %u notes\n", r->counts[CHECK_OK], r->counts[CHECK_FAIL],
                       r->counts[CHECK_NOTE]);
        fflush(stdout);
        step_summary(r);
        for (size_t i = 0; i < r->n; i++)
                if (r->results[i].status == CHECK_FAIL)
                        failed[n++] = r->results[i].name;
        if (n == 0)
                return 0;
        qsort(failed, n, sizeof(char *), name_compare);
        fprintf(stderr, "agentic-job sandbox check: %zu failed:", n);
        for (size_t i = 0; i < n; i++)
                if (i == 0 || strcmp(failed[i], failed[i - 1]) != 0)
                        fprintf(stderr, " %s", failed[i]);
        fputc('\n', stderr);
        return 1;
}
