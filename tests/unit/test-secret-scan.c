/* SPDX-License-Identifier: MIT */
/* secret-scan: what a run must not publish, found in a buffer, along a stream given in pieces of every
 * size, and redacted from text on its way to a log a line at a time. */
#include <check.h>
#include <errno.h>

#include "check-run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secret-scan.h"

#define TOKEN "tok-0123456789abcdef-run"
#define GH    "ghp_0123456789abcdefghijABCDEFGHIJ012345"

static SecretSet set;

static void setup(void)
{
        secret_set_init(&set);
        ck_assert_int_eq(secret_set_add(&set, TOKEN, strlen(TOKEN), "the run token"), 0);
}

static void teardown(void)
{
        secret_set_done(&set);
}

START_TEST(test_find_exact)
{
        const char text[] = "a line with " TOKEN " in it";
        size_t off = 0, size = 0;
        const char *what = NULL;

        ck_assert(secret_find(&set, text, strlen(text), &off, &size, &what));
        ck_assert_uint_eq(off, 12);
        ck_assert_uint_eq(size, strlen(TOKEN));
        ck_assert_str_eq(what, "the run token");
        /* One byte short of it: nothing. */
        ck_assert(!secret_find(&set, TOKEN, strlen(TOKEN) - 1, NULL, NULL, NULL));
        ck_assert(!secret_find(&set, "", 0, NULL, NULL, NULL));
}
END_TEST

START_TEST(test_find_patterns)
{
        static const struct {
                const char *text;
                const char *what; /* NULL: not a secret */
        } cases[] = {
                { "x " GH " y", "a GitHub token" },
                { "ghs_0123456789abcdefghijABCDEFGHIJ01234", NULL }, /* 35 after the prefix */
                { "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123", "a GitHub token" },
                { "key AKIAIOSFODNN7EXAMPLE.", "an AWS access key id" },
                { "AKIAiosfodnn7example", NULL }, /* lower case is not the format */
                { "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345_-ABCD", "an Anthropic API key" },
                { "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "an OpenAI API key" },
                { "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL", "an OpenAI API key" },
                { "risk-free and task-list", NULL },
                { "AIzaSyA-abcdefghijklmnopqrstuvwxyz012345", "a Google API key" },
                { "xoxb-1234567890-abcdef", "a Slack token" },
                { "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", "a private key" },
                { "-----BEGIN PUBLIC KEY-----", NULL },
                { "ghp_ and gho_ and AKIA are only prefixes", NULL },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *what = NULL;
                bool found = secret_find(&set, cases[i].text, strlen(cases[i].text), NULL, NULL, &what);

                ck_assert_msg(found == (cases[i].what != NULL), "case %zu: %s", i, cases[i].text);
                if (found)
                        ck_assert_str_eq(what, cases[i].what);
        }
}
END_TEST

START_TEST(test_environment)
{
        char *envp[] = { (char *)"ANTHROPIC_API_KEY=sk-live-value-1",
                         (char *)"GH_TOKEN=short",
                         (char *)"MY_SECRET=s3cr3t-value",
                         (char *)"DEPLOY_PASSWORD=hunter2hunter2",
                         (char *)"KEYBOARD=not-a-secret-name",
                         (char *)"TOKENS=not-a-secret-name-either",
                         (char *)"token=lower-case-name-value",
                         (char *)"PATH=/usr/bin:/bin",
                         (char *)"NOEQUALS",
                         NULL };
        const char *what = NULL;

        ck_assert_int_eq(secret_set_add_environment(&set, envp), 0);
        ck_assert_uint_eq(set.n, 5); /* the token, and four of these: GH_TOKEN's value is too short */
        ck_assert(secret_find(&set, "x sk-live-value-1 y", 19, NULL, NULL, &what));
        ck_assert_str_eq(what, "the value of $ANTHROPIC_API_KEY");
        ck_assert(secret_find(&set, "hunter2hunter2", 14, NULL, NULL, &what));
        ck_assert_str_eq(what, "the value of $DEPLOY_PASSWORD");
        ck_assert(!secret_find(&set, "short not-a-secret-name /usr/bin:/bin", 37, NULL, NULL, NULL));
        /* The same value twice is one secret. */
        ck_assert_int_eq(secret_set_add_environment(&set, envp), 0);
        ck_assert_uint_eq(set.n, 5);
        ck_assert_int_eq(secret_set_add(&set, "seven77", 7, "too short"), -EINVAL);
}
END_TEST

START_TEST(test_redact)
{
        char buf[512];
        size_t len, n;

        (void)snprintf(buf, sizeof(buf), "GET /exfil/%s?k=%s HTTP/1.1 " GH " end", TOKEN, TOKEN);
        n = secret_redact_string(&set, buf);
        ck_assert_uint_eq(n, 3);
        ck_assert_str_eq(buf, "GET /exfil/" SECRET_REDACTED "?k=" SECRET_REDACTED
                              " HTTP/1.1 " SECRET_REDACTED " end");
        /* Back to back, and the token inside a pattern's run: one redaction covers the longest. */
        (void)snprintf(buf, sizeof(buf), "%s%s", TOKEN, TOKEN);
        ck_assert_uint_eq(secret_redact_string(&set, buf), 2);
        ck_assert_str_eq(buf, SECRET_REDACTED SECRET_REDACTED);
        ck_assert_int_eq(secret_set_add(&set, "0123456789abcdefghij", 20, "inner"), 0);
        (void)snprintf(buf, sizeof(buf), "<" GH ">");
        ck_assert_uint_eq(secret_redact_string(&set, buf), 1);
        ck_assert_str_eq(buf, "<" SECRET_REDACTED ">");
        /* Bytes, not a string: a NUL does not end the search. */
        memcpy(buf, "a\0" TOKEN "\0b", 4 + strlen(TOKEN));
        len = 4 + strlen(TOKEN);
        ck_assert_uint_eq(secret_redact(&set, buf, &len), 1);
        ck_assert_uint_eq(len, 4 + strlen(SECRET_REDACTED));
        ck_assert_int_eq(memcmp(buf, "a\0" SECRET_REDACTED "\0b", len), 0);
        /* Nothing to redact: unchanged. */
        (void)snprintf(buf, sizeof(buf), "plain text");
        ck_assert_uint_eq(secret_redact_string(&set, buf), 0);
        ck_assert_str_eq(buf, "plain text");
}
END_TEST

/* Ten thousand secrets in 1 MiB: every one redacted, in one pass per kind (a search per find would take
 * minutes here). */
START_TEST(test_redact_many)
{
        size_t size = 10000 * (strlen(TOKEN) + 80), len = 0, n;
        char *buf = malloc(size);

        ck_assert_ptr_nonnull(buf);
        for (int i = 0; i < 10000; i++)
                len += (size_t)snprintf(buf + len, size - len,
                                        "%s line %05d of text that is not secret at all\n", TOKEN, i);
        n = secret_redact(&set, buf, &len);
        ck_assert_uint_eq(n, 10000);
        ck_assert(!secret_find(&set, buf, len, NULL, NULL, NULL));
        ck_assert_int_eq(memcmp(buf, SECRET_REDACTED " line 00000 ", 20), 0);
        free(buf);
}
END_TEST

/* Every way to cut a text with one secret into two pieces, and into pieces of every size: found. */
START_TEST(test_stream_pieces)
{
        char text[256];
        size_t n;

        n = (size_t)snprintf(text, sizeof(text), "%0100d%s%050d", 0, TOKEN, 0);
        for (size_t cut = 0; cut <= n; cut++) {
                SecretStream st;

                ck_assert_int_eq(secret_stream_init(&st, &set), 0);
                secret_stream_feed(&st, text, cut);
                secret_stream_feed(&st, text + cut, n - cut);
                ck_assert_msg(st.found != NULL, "cut at %zu", cut);
                ck_assert_str_eq(st.found, "the run token");
                secret_stream_done(&st);
        }
        for (size_t piece = 1; piece <= 64; piece++) {
                SecretStream st;

                ck_assert_int_eq(secret_stream_init(&st, &set), 0);
                for (size_t i = 0; i < n; i += piece)
                        secret_stream_feed(&st, text + i, i + piece > n ? n - i : piece);
                ck_assert_msg(st.found != NULL, "pieces of %zu", piece);
                secret_stream_done(&st);
        }
        /* A pattern, a byte at a time. */
        n = (size_t)snprintf(text, sizeof(text), "xx %s yy", GH);
        {
                SecretStream st;

                ck_assert_int_eq(secret_stream_init(&st, &set), 0);
                for (size_t i = 0; i < n; i++)
                        secret_stream_feed(&st, text + i, 1);
                ck_assert_str_eq(st.found, "a GitHub token");
                secret_stream_done(&st);
        }
        /* Without a secret, never found, however cut. */
        n = (size_t)snprintf(text, sizeof(text), "%0100d tok-0123456789abcdef-ru %050d", 0, 0);
        for (size_t cut = 0; cut <= n; cut++) {
                SecretStream st;

                ck_assert_int_eq(secret_stream_init(&st, &set), 0);
                secret_stream_feed(&st, text, cut);
                secret_stream_feed(&st, text + cut, n - cut);
                ck_assert_ptr_null(st.found);
                secret_stream_done(&st);
        }
}
END_TEST

typedef struct Sink {
        char data[128 * 1024];
        size_t len;
        unsigned writes;
} Sink;

static int sink_write(const char *data, size_t n, void *userdata)
{
        Sink *s = userdata;

        ck_assert_uint_le(s->len + n, sizeof(s->data));
        memcpy(s->data + s->len, data, n);
        s->len += n;
        s->writes++;
        return 0;
}

/* Lines given a byte at a time, with every line end the runner knows: each redacted. */
START_TEST(test_lines)
{
        static Sink sink;
        SecretLines *l = calloc(1, sizeof(*l));
        const char text[] = "one " TOKEN "\ntwo\r" TOKEN "\r\nthree " GH "\vfour\fno end " TOKEN;
        const char want[] = "one " SECRET_REDACTED "\ntwo\r" SECRET_REDACTED "\r\nthree " SECRET_REDACTED
                            "\vfour\fno end " SECRET_REDACTED;

        ck_assert_ptr_nonnull(l);
        l->set = &set;
        sink.len = 0;
        for (size_t i = 0; i < strlen(text); i++)
                ck_assert_int_eq(secret_lines_feed(l, text + i, 1, sink_write, &sink), 0);
        /* Nothing of the unended last line has gone yet: it could be a secret's start. */
        ck_assert_int_eq(memcmp(sink.data, want, sink.len), 0);
        ck_assert_uint_lt(sink.len, strlen(want));
        ck_assert_int_eq(secret_lines_flush(l, sink_write, &sink), 0);
        ck_assert_uint_eq(sink.len, strlen(want));
        ck_assert_int_eq(memcmp(sink.data, want, sink.len), 0);
        free(l);
}
END_TEST

/* A line of 100 KiB with the token across every part's end: never passed on whole, never a secret out. */
START_TEST(test_lines_long)
{
        static Sink sink;
        static char text[100 * 1024];
        SecretLines *l = calloc(1, sizeof(*l));
        size_t n = 0;

        ck_assert_ptr_nonnull(l);
        l->set = &set;
        while (n + strlen(TOKEN) + 7 < sizeof(text)) {
                memcpy(text + n, TOKEN, strlen(TOKEN));
                n += strlen(TOKEN);
                memcpy(text + n, "-xxxxx-", 7);
                n += 7;
        }
        sink.len = 0;
        sink.writes = 0;
        for (size_t i = 0; i < n; i += 1000)
                ck_assert_int_eq(
                        secret_lines_feed(l, text + i, i + 1000 > n ? n - i : 1000, sink_write, &sink), 0);
        ck_assert_uint_gt(sink.writes, 2); /* passed on in parts, before the line ended */
        ck_assert_int_eq(secret_lines_flush(l, sink_write, &sink), 0);
        ck_assert(!secret_find(&set, sink.data, sink.len, NULL, NULL, NULL));
        ck_assert_ptr_null(memmem(sink.data, sink.len, "tok-0123", 8));
        free(l);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("secret-scan");
        TCase *tc = tcase_create("secret_scan");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_find_exact);
        tcase_add_test(tc, test_find_patterns);
        tcase_add_test(tc, test_environment);
        tcase_add_test(tc, test_redact);
        tcase_add_test(tc, test_redact_many);
        tcase_add_test(tc, test_stream_pieces);
        tcase_add_test(tc, test_lines);
        tcase_add_test(tc, test_lines_long);
        suite_add_tcase(s, tc);

        return check_run(s);
}
