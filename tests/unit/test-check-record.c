/* SPDX-License-Identifier: MIT */
/* The pass record: its text and strict reader, the match of every field, and the file rules of
 * record_take() (a link, a foreign owner, a directory others can write, not a regular file), which always
 * removes what is there; record_write() only into the runner's own directory, exclusively. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-record.h"
#include "macro.h"

static const Record sample = {
        .run_id = "123456",
        .attempt = "2",
        .job = "agent",
        .version = "0.1.0",
        .binary = "aa",
        .config = "bb",
        .policy = "none",
};

static char dir[] = "/tmp/test-check-record.XXXXXX";
static char path[sizeof(dir) + sizeof(RECORD_NAME) + 1];

static void setup_dir(void)
{
        ck_assert_ptr_nonnull(mkdtemp(dir));
        (void)snprintf(path, sizeof(path), "%s/%s", dir, RECORD_NAME);
}

static void teardown_dir(void)
{
        (void)unlink(path);
        (void)rmdir(dir);
        memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
}

static void put(const char *text, mode_t mode)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

START_TEST(test_round_trip)
{
        char text[RECORD_MAX_SIZE];
        Record r;
        int n = record_format(&sample, text, sizeof(text));

        ck_assert_int_gt(n, 0);
        ck_assert_str_eq(text, "agentic-job-sandbox-checked 1\nrun-id=123456\nrun-attempt=2\njob=agent\n"
                               "version=0.1.0\nbinary-sha256=aa\nconfig-sha256=bb\npolicy-sha256=none\n");
        ck_assert_int_eq(record_parse(text, (size_t)n, &r), 0);
        ck_assert_mem_eq(&r, &sample, sizeof(r));
}
END_TEST

static const char *const malformed[] = {
        "",
        "agentic-job-sandbox-checked 2\nrun-id=1\nrun-attempt=2\njob=a\nversion=1\nbinary-sha256=a\n"
        "config-sha256=b\npolicy-sha256=c\n",
        /* a field missing, two swapped, one twice, an unknown one, one empty, one with a space, no last
         * newline, something after the end */
        "agentic-job-sandbox-checked 1\nrun-id=1\njob=a\nversion=1\nbinary-sha256=a\nconfig-sha256=b\n"
        "policy-sha256=c\n",
        "agentic-job-sandbox-checked 1\nrun-attempt=2\nrun-id=1\njob=a\nversion=1\nbinary-sha256=a\n"
        "config-sha256=b\npolicy-sha256=c\n",
        "agentic-job-sandbox-checked "
        "1\nrun-id=1\nrun-id=1\nrun-attempt=2\njob=a\nversion=1\nbinary-sha256=a\n"
        "config-sha256=b\npolicy-sha256=c\n",
        "agentic-job-sandbox-checked 1\nrun-id=1\nrun-attempt=2\njob=a\nversion=1\nbinary-sha256=a\n"
        "config-sha256=b\npolicy-sha256=c\nextra=1\n",
        "agentic-job-sandbox-checked 1\nrun-id=\nrun-attempt=2\njob=a\nversion=1\nbinary-sha256=a\n"
        "config-sha256=b\npolicy-sha256=c\n",
        "agentic-job-sandbox-checked 1\nrun-id=1\nrun-attempt=2\njob=a b\nversion=1\nbinary-sha256=a\n"
        "config-sha256=b\npolicy-sha256=c\n",
        "agentic-job-sandbox-checked 1\nrun-id=1\nrun-attempt=2\njob=a\nversion=1\nbinary-sha256=a\n"
        "config-sha256=b\npolicy-sha256=c",
        "agentic-job-sandbox-checked 1\nrun-id=1\nrun-attempt=2\njob=a\nversion=1\nbinary-sha256=a\n"
        "config-sha256=b\npolicy-sha256=c\n\n",
};

START_TEST(test_malformed)
{
        Record r;

        ck_assert_msg(record_parse(malformed[_i], strlen(malformed[_i]), &r) == -EINVAL, "accepted case %d",
                      _i);
}
END_TEST

START_TEST(test_matches)
{
        static const size_t offsets[] = {
                offsetof(Record, run_id),  offsetof(Record, attempt), offsetof(Record, job),
                offsetof(Record, version), offsetof(Record, binary),  offsetof(Record, config),
                offsetof(Record, policy),
        };
        static const char *const keys[] = { "run-id",        "run-attempt",   "job",          "version",
                                            "binary-sha256", "config-sha256", "policy-sha256" };
        char why[256];
        Record other;

        ck_assert(record_matches(&sample, &sample, why, sizeof(why)));
        for (size_t i = 0; i < ELEMENTSOF(offsets); i++) {
                char expect[128];

                other = sample;
                memcpy((char *)&other + offsets[i], "zz", 3);
                ck_assert(!record_matches(&other, &sample, why, sizeof(why)));
                (void)snprintf(expect, sizeof(expect), "not taken: its %s is not this one's", keys[i]);
                ck_assert_str_eq(why, expect);
        }
        /* Outside a job nothing matches, not even itself. */
        other = sample;
        memcpy(other.run_id, "-", 2);
        ck_assert(!record_matches(&other, &other, why, sizeof(why)));
}
END_TEST

START_TEST(test_take_valid_and_removed)
{
        char text[RECORD_MAX_SIZE];
        RecordTaken t;

        ck_assert_int_gt(record_format(&sample, text, sizeof(text)), 0);
        put(text, 0600);
        ck_assert_int_eq(record_take(dir, &t), 0);
        ck_assert(t.found);
        ck_assert_str_eq(t.note, "");
        ck_assert_mem_eq(&t.record, &sample, sizeof(sample));
        ck_assert_int_eq(access(path, F_OK), -1);
        /* Nothing there: nothing found, nothing said. */
        ck_assert_int_eq(record_take(dir, &t), 0);
        ck_assert(!t.found);
        ck_assert_str_eq(t.note, "");
        ck_assert_int_eq(record_take(NULL, &t), 0);
        ck_assert_int_eq(record_take("", &t), 0);
}
END_TEST

START_TEST(test_take_link)
{
        char text[RECORD_MAX_SIZE], target[sizeof(dir) + 16];
        RecordTaken t;

        (void)snprintf(target, sizeof(target), "%s/target", dir);
        ck_assert_int_gt(record_format(&sample, text, sizeof(text)), 0);
        {
                int fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
                close(fd);
        }
        ck_assert_int_eq(symlink(target, path), 0);
        ck_assert_int_eq(record_take(dir, &t), 0);
        ck_assert(!t.found);
        ck_assert_str_eq(t.note, "the record was not taken: it is a link");
        ck_assert_int_eq(access(path, F_OK), -1);
        ck_assert_int_eq(access(target, F_OK), 0); /* the link went, not what it named */
        ck_assert_int_eq(unlink(target), 0);
}
END_TEST

START_TEST(test_take_foreign_owner)
{
        char text[RECORD_MAX_SIZE];
        RecordTaken t;

        if (geteuid() != 0)
                return; /* only root can give a file away; CI runs the unit tests as root */
        ck_assert_int_gt(record_format(&sample, text, sizeof(text)), 0);
        put(text, 0600);
        ck_assert_int_eq(chown(path, 65534, 65534), 0);
        ck_assert_int_eq(record_take(dir, &t), 0);
        ck_assert(!t.found);
        ck_assert_str_eq(t.note, "the record was not taken: not the runner's file");
        ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

START_TEST(test_take_open_directory)
{
        static const mode_t modes[] = { 0770, 0707, 0777, 01777 };
        char text[RECORD_MAX_SIZE], expect[256];
        RecordTaken t;

        ck_assert_int_gt(record_format(&sample, text, sizeof(text)), 0);
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                put(text, 0600);
                ck_assert_int_eq(chmod(dir, modes[i]), 0);
                ck_assert_int_eq(record_take(dir, &t), 0);
                ck_assert(!t.found);
                (void)snprintf(
                        expect, sizeof(expect),
                        "the record was not taken: %s is not a directory of the runner's that no one else "
                        "can write",
                        dir);
                ck_assert_str_eq(t.note, expect);
                ck_assert_int_eq(access(path, F_OK), -1);
        }
        ck_assert_int_eq(chmod(dir, 0700), 0);
}
END_TEST

START_TEST(test_take_not_regular_or_malformed)
{
        RecordTaken t;

        ck_assert_int_eq(mkfifo(path, 0600), 0);
        ck_assert_int_eq(record_take(dir, &t), 0);
        ck_assert(!t.found);
        ck_assert_str_eq(t.note, "the record was not taken: not a regular file");
        ck_assert_int_eq(access(path, F_OK), -1);

        put("agentic-job-sandbox-checked 1\n", 0600);
        ck_assert_int_eq(record_take(dir, &t), 0);
        ck_assert(!t.found);
        ck_assert_str_eq(t.note, "the record was not taken: malformed");
        ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

START_TEST(test_write)
{
        char why[256];
        RecordTaken t;
        Record outside = sample;
        struct stat st;

        ck_assert_int_eq(record_write(dir, &sample, why, sizeof(why)), 0);
        ck_assert_int_eq(lstat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        /* Exclusive: a second write does not replace the first. */
        ck_assert_int_eq(record_write(dir, &sample, why, sizeof(why)), -EEXIST);
        ck_assert_int_eq(record_take(dir, &t), 0);
        ck_assert_msg(t.found, "not found: %s", t.note);
        ck_assert_mem_eq(&t.record, &sample, sizeof(sample));

        memcpy(outside.job, "-", 2);
        ck_assert_int_eq(record_write(dir, &outside, why, sizeof(why)), -EINVAL);
        ck_assert_int_eq(access(path, F_OK), -1);
        ck_assert_int_eq(record_write(NULL, &sample, why, sizeof(why)), -EINVAL);
        ck_assert_int_eq(chmod(dir, 0770), 0);
        ck_assert_int_eq(record_write(dir, &sample, why, sizeof(why)), -EINVAL);
        ck_assert_int_eq(access(path, F_OK), -1);
        ck_assert_int_eq(chmod(dir, 0700), 0);
}
END_TEST

START_TEST(test_remove)
{
        put("anything", 0644);
        ck_assert_int_eq(record_remove(dir), 0);
        ck_assert_int_eq(access(path, F_OK), -1);
        ck_assert_int_eq(record_remove(dir), 0);
        ck_assert_int_eq(record_remove(NULL), 0);
}
END_TEST

START_TEST(test_self)
{
        Record a, b;

        setenv("GITHUB_RUN_ID", "77", 1);
        setenv("GITHUB_RUN_ATTEMPT", "1", 1);
        unsetenv("GITHUB_JOB");
        ck_assert_int_eq(record_self("x", 1, NULL, 0, &a), 0);
        ck_assert_str_eq(a.run_id, "77");
        ck_assert_str_eq(a.job, "-");
        ck_assert_str_eq(a.policy, "none");
        /* SHA-256 of "x". */
        ck_assert_str_eq(a.config, "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881");
        ck_assert_uint_eq(strlen(a.binary), 64);
        ck_assert_int_eq(record_self("y", 1, "", 0, &b), 0);
        ck_assert_str_eq(b.policy, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        ck_assert_str_eq(a.binary, b.binary);
        ck_assert_str_ne(a.config, b.config);
}
END_TEST

static Suite *record_suite(void)
{
        Suite *s = suite_create("check-record");
        TCase *text = tcase_create("text"), *files = tcase_create("files");

        tcase_add_test(text, test_round_trip);
        tcase_add_loop_test(text, test_malformed, 0, (int)ELEMENTSOF(malformed));
        tcase_add_test(text, test_matches);
        tcase_add_test(text, test_self);
        suite_add_tcase(s, text);

        tcase_add_checked_fixture(files, setup_dir, teardown_dir);
        tcase_add_test(files, test_take_valid_and_removed);
        tcase_add_test(files, test_take_link);
        tcase_add_test(files, test_take_foreign_owner);
        tcase_add_test(files, test_take_open_directory);
        tcase_add_test(files, test_take_not_regular_or_malformed);
        tcase_add_test(files, test_write);
        tcase_add_test(files, test_remove);
        suite_add_tcase(s, files);
        return s;
}

int main(void)
{
        return check_run(record_suite());
}
