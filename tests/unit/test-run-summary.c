/* SPDX-License-Identifier: MIT */
/* The summary's Markdown (summary.md and the job's step summary) with fields the sandbox chose: denied
 * requests' hosts and paths, export refusals that quote file names, phase details. Each must stay text:
 * read as GitHub's Markdown reads a table (cmark-gfm: a row split at every '|' that is not
 * backslash-escaped,
 * "\|" then unescaped, code spans by backquote runs of one length), every row keeps its cells, and outside
 * code spans no '<', '&', '![', '](', '*', '_', '~', '@', "www." or "://" is left of what the sandbox
 * wrote; inside a code span nothing is markup. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "read-file.h"
#include "run-summary.h"

static const char *const hostile[] = {
        "<img src=x onerror=alert(1)>",
        "![pwned](https://evil.test/x.png)",
        "[click](https://evil.test/)",
        "<h1>APPROVED</h1>",
        "www.evil.test/path",
        "https://evil.test/",
        "**bold** _it_ ~~strike~~ @someone &lt;b&gt; &#60;",
        "a|b|<b>c</b>",
        "a\\|<b>split</b>",
        "a\\\\|<b>split</b>",
        "`<b>`",
        "``<b>``` ` ``",
        "`",
        "x\n## Heading\r\n<b>y</b>",
        "\\` <b>z</b>",
        "| --- |",
};

/* ---- GitHub's reading of a table row ---- */

static bool ascii_punct(char c)
{
        return c && strchr("!\"#$%&'()*+,./:;<=>?@[\\]^_`{}~-|", c) != NULL;
}

/* The row's cells (cmark-gfm's row_from_string: cells end at a '|' that is no escaped pair's), each with
 * "\|" unescaped; how many. */
static size_t row_cells(const char *row, char cells[][1024], size_t max)
{
        size_t n = 0, k = 0;
        const char *p = row;

        ck_assert(*p == '|');
        p++;
        for (; *p; p++) {
                if (*p == '\\' && ascii_punct(p[1])) {
                        if (p[1] != '|')
                                cells[n][k++] = '\\';
                        cells[n][k++] = p[1];
                        p++;
                        continue;
                }
                if (*p == '|') {
                        cells[n][k] = '\0';
                        ck_assert_uint_lt(++n, max);
                        k = 0;
                        continue;
                }
                ck_assert_uint_lt(k, 1000);
                cells[n][k++] = *p;
        }
        return n; /* the text after the last '|' is no cell */
}

static size_t run_at(const char *s)
{
        size_t n = 0;

        while (s[n] == '`')
                n++;
        return n;
}

/* A cell's text outside code spans (CommonMark: a run of n backquotes opens one, the next run of exactly n
 * closes it; an unclosed run is text). */
static void outside_code(const char *cell, char *out)
{
        size_t o = 0;

        for (const char *p = cell; *p;) {
                size_t n = run_at(p);
                const char *q;

                if (n == 0) {
                        out[o++] = *p++;
                        continue;
                }
                for (q = p + n; *q; q += run_at(q) ? run_at(q) : 1)
                        if (run_at(q) == n)
                                break;
                if (*q) {
                        out[o++] = ' ';
                        p = q + n;
                } else {
                        memcpy(out + o, p, n);
                        o += n;
                        p += n;
                }
        }
        out[o] = '\0';
}

static void assert_text_only(const char *md)
{
        static const char *const markup[] = { "<", "&", "![", "](", "*", "_", "~", "@", "www.", "://" };
        _cleanup_free_ char *copy = strdup(md);
        char *next = NULL;
        long cols = -1;

        ck_assert_ptr_nonnull(copy);
        for (char *line = copy; line; line = next) {
                static char cells[16][1024];
                char text[1024];
                size_t n;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (line[0] != '|') {
                        cols = -1;
                        continue;
                }
                n = row_cells(line, cells, 16);
                if (strncmp(line, "|---", 4) == 0) {
                        cols = (long)n;
                        continue;
                }
                if (cols >= 0)
                        ck_assert_msg((long)n == cols, "a row of %zu cells in a table of %ld: %s", n, cols,
                                      line);
                for (size_t i = 0; i < n; i++) {
                        outside_code(cells[i], text);
                        for (size_t m = 0; m < ELEMENTSOF(markup); m++)
                                ck_assert_msg(!strstr(text, markup[m]), "\"%s\" outside a code span in %s",
                                              markup[m], line);
                }
        }
}

/* ---- the summary ---- */

static char *markdown_of(Summary *s)
{
        char dir[] = "/tmp/test-run-summary.XXXXXX";
        _cleanup_free_ char *md = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&md, &size);
        int fd;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_ptr_nonnull(f);
        int md_error = 1;

        ck_assert_int_eq(summary_write(s, fd, f, &md_error), 0);
        ck_assert_int_eq(md_error, 0);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(unlinkat(fd, "summary.json", 0), 0);
        ck_assert_int_eq(unlinkat(fd, "summary.md", 0), 0);
        close(fd);
        ck_assert_int_eq(rmdir(dir), 0);
        return TAKE_PTR(md);
}

/* summary.json as summary_write() writes it. */
static char *json_of(Summary *s)
{
        char dir[] = "/tmp/test-run-summary.XXXXXX";
        char *json = NULL;
        size_t size = 0;
        int fd, md_error = 1;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(summary_write(s, fd, NULL, &md_error), 0);
        ck_assert_int_eq(read_regular_nofollow(fd, "summary.json", 1 << 20, &json, &size), 0);
        ck_assert_int_eq(unlinkat(fd, "summary.json", 0), 0);
        ck_assert_int_eq(unlinkat(fd, "summary.md", 0), 0);
        close(fd);
        ck_assert_int_eq(rmdir(dir), 0);
        return json;
}

static char *outputs[] = { (char *)"out/review.md", NULL };
static const RunPlan plan = { .repo = "/srv/repo", .base = "main", .task = "/t", .outputs = outputs };

START_TEST(test_hostile_fields)
{
        Summary s = { .plan = &plan, .result = "succeeded", .confine = "bubblewrap", .profile = "command" };
        _cleanup_free_ char *md = NULL;
        char json[1024];

        (void)summary_phase(&s, "clone", 1.0, false, "%s", hostile[_i]);
        ck_assert_int_eq(summary_add_export(&s, hostile[_i], "refused", 0, hostile[_i]), 0);
        (void)snprintf(json, sizeof(json),
                       "{\"method\":\"POST\",\"host\":\"h\",\"path\":\"p\",\"decision\":\"deny\"}\n");
        summary_read_egress(&s, json, strlen(json));
        free(s.denied[0].host);
        free(s.denied[0].path);
        s.denied[0].host = strdup(hostile[_i]);
        s.denied[0].path = strdup(hostile[_i]);
        md = markdown_of(&s);
        assert_text_only(md);
        summary_done(&s);
}
END_TEST

/* The exact text: each field of the sandbox's in a code span whose fence is longer than any backquote run
 * in it, padded with a space each side (which the reader strips), a '|' escaped for the table. */
START_TEST(test_exact)
{
        Summary s = { .plan = &plan, .result = "succeeded", .confine = "bubblewrap", .profile = "command" };
        _cleanup_free_ char *md = NULL;
        const char *log =
                "{\"method\":\"GET\",\"host\":\"<b>x\",\"path\":\"/a`b``c|d\",\"decision\":\"deny\","
                "\"reason\":\"no rule\"}\n";

        (void)summary_phase(&s, "agent", 2.5, true, "exit status 0; then <i>done</i>");
        ck_assert_int_eq(summary_add_export(&s, "out/<x>.md", "refused", 0, "a link: `out/<x>.md`"), 0);
        ck_assert_int_eq(summary_add_export(&s, "out/ok.md", "exported", 3, ""), 0);
        summary_read_egress(&s, log, strlen(log));
        md = markdown_of(&s);
        ck_assert_msg(strstr(md, "| agent | ok | 2.500 | ` exit status 0; then <i>done</i> ` |\n"), "%s",
                      md);
        ck_assert_msg(strstr(md, "| ` out/<x>.md ` | refused | 0 | `` a link: `out/<x>.md` `` |\n"), "%s",
                      md);
        ck_assert_msg(strstr(md, "| ` out/ok.md ` | exported | 3 |  |\n"), "%s", md);
        ck_assert_msg(strstr(md, "| ` GET ` | ` <b>x ` | ``` /a`b``c\\|d ``` | ` no rule ` |\n"), "%s", md);
        ck_assert_msg(strstr(md, "| repository | ` /srv/repo ` |\n"), "%s", md);
        assert_text_only(md);
        summary_done(&s);
}
END_TEST

/* The key's way and, with the broker, its requests: in both summaries; none where the broker said
 * nothing. */
START_TEST(test_key_way)
{
        Summary s = { .plan = &plan,
                      .result = "succeeded",
                      .confine = "bubblewrap",
                      .profile = "claude",
                      .token = "broker",
                      .broker_reported = true,
                      .api_forwarded = 7,
                      .api_refused = 2,
                      .api_over = 1,
                      .api_max = 7,
                      .api_input_tokens = 1500,
                      .api_output_tokens = 320,
                      .api_priced = true,
                      .api_spent = 9300000000ULL, /* 1500 at 3 and 320 at 15 per million */
                      .api_budget = 5000000ULL * 1000000,
                      .api_over_budget = 1,
                      .api_unpriced = 2 };
        _cleanup_free_ char *md = markdown_of(&s), *json = json_of(&s), *md_file = NULL, *json_file = NULL;
        Summary f = {
                .plan = &plan, .result = "succeeded", .confine = "none", .profile = "claude", .token = "file"
        };

        ck_assert_msg(strstr(md, "| run token | from standard input, held by the key broker; the agent had "
                                 "a placeholder |"),
                      "%s", md);
        ck_assert_msg(strstr(md,
                             "| model API requests | 7 forwarded with the key, 2 refused (1 over "
                             "max-requests, 7) (1 over the budget); the answers said 1500 input and 320 "
                             "output tokens, costing 0.009300 of a budget of 5.000000 and 2 requests at a "
                             "cost not known |"),
                      "%s", md);
        ck_assert_msg(strstr(json, "\"token\": \"broker\""), "%s", json);
        ck_assert_msg(
                strstr(json,
                       "\"api-requests\": {\n    \"budget\": \"5.000000\",\n    \"cost\": \"0.009300\",\n   "
                       " "
                       "\"forwarded\": 7,\n    \"input-tokens\": 1500,\n    "
                       "\"max-requests\": 7,\n    \"output-tokens\": 320,\n    \"over-budget\": 1,\n    "
                       "\"over-max-requests\": 1,\n    \"refused\": 2,\n    \"unpriced\": 2\n  }"),
                "%s", json);
        md_file = markdown_of(&f);
        json_file = json_of(&f);
        ck_assert_msg(strstr(md_file, "| run token | from standard input, to the agent in a 0600 file |"),
                      "%s", md_file);
        ck_assert_msg(!strstr(md_file, "model API requests"), "%s", md_file);
        ck_assert_msg(strstr(json_file, "\"api-requests\": null"), "%s", json_file);
        summary_done(&s);
        summary_done(&f);
}
END_TEST

/* A summary that cannot be written whole is not there at all (summary.md cannot be made: summary.json,
 * made first, goes too), and the step summary's failure (a full disk: /dev/full) is its own. */
START_TEST(test_write_failure)
{
        Summary s = { .plan = &plan, .result = "succeeded", .confine = "bubblewrap", .profile = "command" };
        char dir[] = "/tmp/test-run-summary.XXXXXX";
        FILE *full = fopen("/dev/full", "w");
        int fd, md_error = 0;

        ck_assert_ptr_nonnull(full);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(mkdirat(fd, "summary.md", 0700), 0);
        ck_assert_int_eq(summary_write(&s, fd, full, &md_error), -EEXIST);
        ck_assert_int_eq(md_error, -ENOSPC);
        ck_assert_int_eq(faccessat(fd, "summary.json", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        ck_assert_int_eq(errno, ENOENT);
        ck_assert_int_eq(unlinkat(fd, "summary.md", AT_REMOVEDIR), 0);
        (void)fclose(full);
        close(fd);
        ck_assert_int_eq(rmdir(dir), 0);
        summary_done(&s);
}
END_TEST

/* Every text the sandbox or the runner put in: with the run token and a token-shaped string redacted,
 * in the Markdown as in the JSON (summary_write writes both; the Markdown is what is read back here). */
START_TEST(test_secrets_redacted)
{
        static const RunPlan leaky = { .repo = "/srv/repo",
                                       .base = "main",
                                       .task = "/t",
                                       .setup = "make KEY=run-token-0123456789abcdef",
                                       .outputs = outputs };
        Summary s = { .plan = &leaky, .result = "succeeded", .confine = "bubblewrap", .profile = "command" };
        _cleanup_free_ char *md = NULL, *json = NULL;
        const char *log = "{\"method\":\"GET\",\"host\":\"h\",\"path\":\"/x/run-token-0123456789abcdef\","
                          "\"decision\":\"deny\",\"reason\":\"no rule\"}\n";
        SecretSet set;

        secret_set_init(&set);
        ck_assert_int_eq(secret_set_add(&set, "run-token-0123456789abcdef", 26, "the run token"), 0);
        s.secrets = &set;
        (void)summary_phase(&s, "agent", 1.0, false,
                            "said run-token-0123456789abcdef and AKIAIOSFODNN7EXAMPLE");
        ck_assert_int_eq(summary_add_export(&s, "out/run-token-0123456789abcdef", "refused", 0,
                                            "a link to /run-token-0123456789abcdef"),
                         0);
        summary_read_egress(&s, log, strlen(log));
        md = markdown_of(&s);
        ck_assert_msg(!strstr(md, "run-token-0123456789abcdef"), "%s", md);
        ck_assert_msg(!strstr(md, "AKIAIOSFODNN7EXAMPLE"), "%s", md);
        ck_assert_msg(strstr(md, "said [secret] and [secret]"), "%s", md);
        ck_assert_msg(strstr(md, "/x/[secret]"), "%s", md);
        json = json_of(&s);
        ck_assert_msg(!strstr(json, "run-token-0123456789abcdef"), "%s", json);
        ck_assert_msg(strstr(json, "\"setup\": \"make KEY=[secret]\""), "%s", json);
        ck_assert_msg(strstr(json, "\"path\": \"/x/[secret]\""), "%s", json);
        /* The caller's plan is left as it was: the setup command still runs as given. */
        ck_assert_str_eq(leaky.setup, "make KEY=run-token-0123456789abcdef");
        summary_done(&s);
        secret_set_done(&set);
}
END_TEST

static Suite *summary_suite(void)
{
        Suite *s = suite_create("run-summary");
        TCase *t = tcase_create("markdown");

        tcase_add_loop_test(t, test_hostile_fields, 0, (int)ELEMENTSOF(hostile));
        tcase_add_test(t, test_exact);
        tcase_add_test(t, test_key_way);
        tcase_add_test(t, test_write_failure);
        tcase_add_test(t, test_secrets_redacted);
        suite_add_tcase(s, t);
        return s;
}

int main(void)
{
        return check_run(summary_suite());
}
