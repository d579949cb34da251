/* SPDX-License-Identifier: MIT */
/* agent-start.h: the agent's program found as execvp would find it, and the runner's reading of the
 * start line: taken out whole however the pipe splits it, never taken from output that is not it. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-start.h"

static char dir[] = "/tmp/test-agent-start.XXXXXX";

static void make_file(const char *name, mode_t mode)
{
        char path[256];
        int fd;

        (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(chmod(path, mode), 0);
}

static void setup(void)
{
        char path[256];

        ck_assert_ptr_nonnull(mkdtemp(dir));
        make_file("agent", 0755);
        make_file("plain", 0644);
        (void)snprintf(path, sizeof(path), "%s/sub", dir);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        (void)snprintf(path, sizeof(path), "%s/sub/agent", dir); /* a directory of the name: not it */
        ck_assert_int_eq(mkdir(path, 0755), 0);
}

static void teardown(void)
{
        char cmd[300];

        (void)snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
        memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
}

START_TEST(test_find_in_path)
{
        char path[512], want[256], *found = NULL;

        (void)snprintf(path, sizeof(path), "/nonexistent:%s/sub:%s", dir, dir);
        (void)snprintf(want, sizeof(want), "%s/agent", dir);
        ck_assert_int_eq(agent_program_find("agent", path, &found), 0);
        ck_assert_str_eq(found, want);
        free(found);
        ck_assert_int_eq(agent_program_find("plain", path, &found), -ENOENT);
        ck_assert_int_eq(agent_program_find("missing", path, &found), -ENOENT);
        ck_assert_int_eq(agent_program_find("", path, &found), -ENOENT);
        ck_assert_int_eq(agent_program_find("sh", NULL, &found), 0); /* execvp's default path */
        ck_assert(strcmp(found, "/bin/sh") == 0 || strcmp(found, "/usr/bin/sh") == 0);
        free(found);
        ck_assert_int_eq(agent_program_find("sh", "", &found), -ENOENT); /* the working directory alone */
}
END_TEST

START_TEST(test_find_with_slash)
{
        char name[256], *found = NULL;

        (void)snprintf(name, sizeof(name), "%s/agent", dir);
        ck_assert_int_eq(agent_program_find(name, "/nonexistent", &found), 0);
        ck_assert_str_eq(found, name);
        free(found);
        (void)snprintf(name, sizeof(name), "%s/plain", dir);
        ck_assert_int_eq(agent_program_find(name, NULL, &found), -ENOENT);
        (void)snprintf(name, sizeof(name), "%s/sub/agent", dir);
        ck_assert_int_eq(agent_program_find(name, NULL, &found), -ENOENT);
}
END_TEST

/* Feeds text in pieces of `step` bytes, then its end; returns what passes as output. */
static char *feed_all(AgentStartReader *s, const char *text, size_t step)
{
        static char out[512];
        size_t n = 0, len = strlen(text), held;

        for (size_t i = 0; i < len; i += step) {
                size_t piece = len - i < step ? len - i : step, replay, skip;

                skip = agent_start_feed(s, text + i, piece, &replay);
                ck_assert_uint_le(skip, piece);
                memcpy(out + n, AGENT_STARTED_LINE, replay);
                n += replay;
                memcpy(out + n, text + i + skip, piece - skip);
                n += piece - skip;
        }
        held = agent_start_end(s);
        memcpy(out + n, AGENT_STARTED_LINE, held);
        n += held;
        out[n] = '\0';
        return out;
}

START_TEST(test_line_taken_out)
{
        for (size_t step = 1; step <= 64; step++) {
                AgentStartReader s = {};

                ck_assert_str_eq(feed_all(&s, AGENT_STARTED_LINE "hello\n" AGENT_STARTED_LINE, step),
                                 "hello\n" AGENT_STARTED_LINE);
                ck_assert(s.started && !s.other);
        }
}
END_TEST

START_TEST(test_other_output_kept)
{
        static const char *texts[] = { "hello\n", "agentic-job: the agent",
                                       "agentic-job: the agent startsX\n", ("a" AGENT_STARTED_LINE) };

        for (size_t t = 0; t < sizeof(texts) / sizeof(*texts); t++)
                for (size_t step = 1; step <= 64; step++) {
                        AgentStartReader s = {};

                        ck_assert_str_eq(feed_all(&s, texts[t], step), texts[t]);
                        ck_assert(!s.started);
                }
}
END_TEST

START_TEST(test_nothing_yet)
{
        AgentStartReader s = {};
        size_t replay;

        ck_assert_uint_eq(agent_start_feed(&s, "agentic", 7, &replay), 7);
        ck_assert_uint_eq(replay, 0);
        ck_assert(!s.started && !s.other);
        ck_assert_uint_eq(agent_start_feed(&s, NULL, 0, &replay), 0);
        ck_assert(!s.started && !s.other);
}
END_TEST

static Suite *agent_start_suite(void)
{
        Suite *s = suite_create("agent-start");
        TCase *tc = tcase_create("agent-start");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_find_in_path);
        tcase_add_test(tc, test_find_with_slash);
        tcase_add_test(tc, test_line_taken_out);
        tcase_add_test(tc, test_other_output_kept);
        tcase_add_test(tc, test_nothing_yet);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(agent_start_suite());
}
