/* SPDX-License-Identifier: MIT */
/* subid_parse(), subid_load() and uid_in_ranges(): the subuid(5) ranges of the sandbox user; and
 * subid_next_free(): where setup may put a new range. */
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
#include "subid.h"

#define USER "sandbox"
#define UID  1001

static UidRange ranges[SUBID_MAX_RANGES];
static size_t n_ranges;

static int parse(const char *text)
{
        memset(ranges, 0xaa, sizeof(ranges));
        n_ranges = (size_t)-1;
        return subid_parse(text, USER, UID, ranges, &n_ranges);
}

static void assert_range(size_t i, uid_t start, uid_t count)
{
        ck_assert_uint_lt(i, n_ranges);
        ck_assert_uint_eq(ranges[i].start, start);
        ck_assert_uint_eq(ranges[i].count, count);
}

START_TEST(test_by_name)
{
        ck_assert_int_eq(parse("sandbox:100000:65536\n"), 0);
        ck_assert_uint_eq(n_ranges, 1);
        assert_range(0, 100000, 65536);
}
END_TEST

START_TEST(test_by_uid)
{
        ck_assert_int_eq(parse("1001:200000:1000\n"), 0);
        ck_assert_uint_eq(n_ranges, 1);
        assert_range(0, 200000, 1000);
}
END_TEST

START_TEST(test_no_trailing_newline)
{
        ck_assert_int_eq(parse("sandbox:100000:65536"), 0);
        ck_assert_uint_eq(n_ranges, 1);
        assert_range(0, 100000, 65536);
}
END_TEST

START_TEST(test_empty_text)
{
        ck_assert_int_eq(parse(""), 0);
        ck_assert_uint_eq(n_ranges, 0);
        ck_assert_int_eq(parse("\n\n\n"), 0);
        ck_assert_uint_eq(n_ranges, 0);
}
END_TEST

START_TEST(test_no_entry_for_user)
{
        ck_assert_int_eq(parse("runner:100000:65536\nubuntu:165536:65536\n"), 0);
        ck_assert_uint_eq(n_ranges, 0);
}
END_TEST

START_TEST(test_several_ranges)
{
        ck_assert_int_eq(parse("runner:100000:65536\n"
                               "sandbox:165536:65536\n"
                               "other:231072:65536\n"
                               "1001:296608:10\n"
                               "sandbox:400000:1\n"),
                         0);
        ck_assert_uint_eq(n_ranges, 3);
        assert_range(0, 165536, 65536);
        assert_range(1, 296608, 10);
        assert_range(2, 400000, 1);
}
END_TEST

START_TEST(test_others_malformed_ignored)
{
        ck_assert_int_eq(parse("other\n"
                               "other:\n"
                               "other:abc:def\n"
                               "other:1\n"
                               "other:1:0\n"
                               "other:-1:+5\n"
                               "other:4294967295:4294967295\n"
                               "other:1:2:3\n"
                               "::\n"
                               ":\n"
                               "1002:x:y\n"
                               "100:1:2 \n"
                               "sandbox:100000:65536\n"
                               "garbage without colons\n"),
                         0);
        ck_assert_uint_eq(n_ranges, 1);
        assert_range(0, 100000, 65536);
}
END_TEST

START_TEST(test_comments_and_blank_lines)
{
        ck_assert_int_eq(parse("# subordinate uids\n"
                               "\n"
                               "   \n"
                               "#sandbox:1:2\n"
                               "# sandbox:3:4\n"
                               "sandbox:100000:65536\n"
                               "\n"
                               "# end\n"),
                         0);
        ck_assert_uint_eq(n_ranges, 1);
        assert_range(0, 100000, 65536);
}
END_TEST

/* This user's malformed lines: every one refuses the whole file. */
static const char *const malformed[] = {
        "sandbox:\n",
        "sandbox:100000\n",
        "sandbox:100000:\n",
        "sandbox::65536\n",
        "sandbox:100000:65536:1\n",
        "sandbox:+100000:65536\n",
        "sandbox:100000:+65536\n",
        "sandbox:-1:65536\n",
        "sandbox:100000:-1\n",
        "sandbox: 100000:65536\n",
        "sandbox:100000 :65536\n",
        "sandbox:100000: 65536\n",
        "sandbox:100000:65536 \n",
        "sandbox:100000:65536\t\n",
        "sandbox:100000:65536\r\n",
        "sandbox:1e5:65536\n",
        "sandbox:0x10:65536\n",
        "sandbox:100000:6553a\n",
        "sandbox:100000:0\n",
        "1001:100000:0\n",
        "1001:abc:1\n",
        "sandbox:4294967295:1\n",              /* start is (uid_t)-1 */
        "sandbox:4294967296:1\n",              /* start does not fit */
        "sandbox:1:4294967295\n",              /* count does not fit below (uid_t)-1 */
        "sandbox:4294967000:1000\n",           /* wraps past 2^32 */
        "sandbox:4294967294:2\n",              /* ends at 2^32 */
        "sandbox:99999999999:1\n",             /* 11 digits */
        "sandbox:00000000001:1\n",             /* 11 digits */
        "other:1:2\nsandbox:1:x\nother:3:4\n", /* among good lines */
};

START_TEST(test_own_malformed)
{
        ck_assert_msg(parse(malformed[_i]) == -EINVAL, "accepted: \"%s\"", malformed[_i]);
}
END_TEST

/* A line that is only this user's name (no ':' at all) is this user's malformed line too, as
 * "sandbox:100000" is: subid.h promises -EINVAL for it, not that it is skipped. */
START_TEST(test_own_name_only_line)
{
        ck_assert_msg(parse("sandbox\n") == -EINVAL,
                      "a line \"sandbox\" (no fields) is ignored, not refused");
        ck_assert_msg(parse("1001\n") == -EINVAL, "a line \"1001\" (no fields) is ignored, not refused");
}
END_TEST

START_TEST(test_top_of_range)
{
        /* The last valid uid is 2^32-2: a range may end just below (uid_t)-1. */
        ck_assert_int_eq(parse("sandbox:4294967294:1\n"), 0);
        assert_range(0, 4294967294u, 1);
        ck_assert_int_eq(parse("sandbox:4294967000:294\n"), 0);
        assert_range(0, 4294967000u, 294);
        ck_assert_int_eq(parse("sandbox:0:4294967294\n"), 0);
        assert_range(0, 0, 4294967294u);
}
END_TEST

START_TEST(test_max_ranges)
{
        char text[SUBID_MAX_RANGES * 32 + 64];
        size_t off = 0;

        for (unsigned i = 0; i < SUBID_MAX_RANGES; i++)
                off += (size_t)snprintf(text + off, sizeof(text) - off, "sandbox:%u:10\n", 100000 + i * 10);
        ck_assert_int_eq(parse(text), 0);
        ck_assert_uint_eq(n_ranges, SUBID_MAX_RANGES);
        assert_range(SUBID_MAX_RANGES - 1, 100000 + (SUBID_MAX_RANGES - 1) * 10, 10);

        (void)snprintf(text + off, sizeof(text) - off, "1001:900000:10\n");
        ck_assert_int_eq(parse(text), -EINVAL);
}
END_TEST

START_TEST(test_prefix_names)
{
        /* "sand" is a prefix of "sandbox" and the other way round: neither is the other. */
        ck_assert_int_eq(subid_parse("sandbox:100000:65536\n", "sand", 5000, ranges, &n_ranges), 0);
        ck_assert_uint_eq(n_ranges, 0);
        ck_assert_int_eq(subid_parse("sand:100000:65536\n", "sandbox", 5000, ranges, &n_ranges), 0);
        ck_assert_uint_eq(n_ranges, 0);
        ck_assert_int_eq(
                subid_parse("sandbox2:100000:65536\nxsandbox:1:1\n", "sandbox", 5000, ranges, &n_ranges), 0);
        ck_assert_uint_eq(n_ranges, 0);
        /* Nor is the malformed line of a prefix user this user's. */
        ck_assert_int_eq(subid_parse("sandbox:x:y\n", "sand", 5000, ranges, &n_ranges), 0);
        ck_assert_uint_eq(n_ranges, 0);
        /* The same for numeric uids. */
        ck_assert_int_eq(subid_parse("100:1:2\n10000:3:4\n", "u", 1000, ranges, &n_ranges), 0);
        ck_assert_uint_eq(n_ranges, 0);
        ck_assert_int_eq(subid_parse("1000:1:2\n", "u", 100, ranges, &n_ranges), 0);
        ck_assert_uint_eq(n_ranges, 0);
}
END_TEST

START_TEST(test_uid_in_ranges)
{
        const UidRange r[] = {
                { .start = 100000, .count = 65536 },
                { .start = 300000, .count = 1 },
                { .start = 4294967294u, .count = 1 },
        };

        ck_assert_int_eq(uid_in_ranges(99999, r, 1), 0);
        ck_assert_int_eq(uid_in_ranges(100000, r, 1), 1);
        ck_assert_int_eq(uid_in_ranges(100000 + 65536 - 1, r, 1), 1);
        ck_assert_int_eq(uid_in_ranges(100000 + 65536, r, 1), 0);

        ck_assert_int_eq(uid_in_ranges(299999, r, 3), 0);
        ck_assert_int_eq(uid_in_ranges(300000, r, 3), 1);
        ck_assert_int_eq(uid_in_ranges(300001, r, 3), 0);
        ck_assert_int_eq(uid_in_ranges(4294967293u, r, 3), 0);
        ck_assert_int_eq(uid_in_ranges(4294967294u, r, 3), 1);
        ck_assert_int_eq(uid_in_ranges(4294967295u, r, 3), 0);
        ck_assert_int_eq(uid_in_ranges(0, r, 3), 0);
        /* Only the first n ranges count. */
        ck_assert_int_eq(uid_in_ranges(300000, r, 1), 0);
        ck_assert_int_eq(uid_in_ranges(100000, r, 0), 0);
}
END_TEST

START_TEST(test_parse_then_in_ranges)
{
        ck_assert_int_eq(parse("sandbox:100000:65536\n1001:200000:10\n"), 0);
        ck_assert_int_eq(uid_in_ranges(165535, ranges, n_ranges), 1);
        ck_assert_int_eq(uid_in_ranges(165536, ranges, n_ranges), 0);
        ck_assert_int_eq(uid_in_ranges(200009, ranges, n_ranges), 1);
        ck_assert_int_eq(uid_in_ranges(200010, ranges, n_ranges), 0);
}
END_TEST

/* ---- subid_load() ---- */

static char tmpdir[] = "/tmp/agentic-job-test-subid-XXXXXX";

static void load_setup(void)
{
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void load_teardown(void)
{
        char path[sizeof(tmpdir) + 16];

        (void)snprintf(path, sizeof(path), "%s/subuid", tmpdir);
        (void)unlink(path);
        (void)snprintf(path, sizeof(path), "%s/link", tmpdir);
        (void)unlink(path);
        (void)rmdir(tmpdir);
}

static void write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fputs(text, f) >= 0, 1);
        ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_load)
{
        char path[sizeof(tmpdir) + 16], link[sizeof(tmpdir) + 16];

        (void)snprintf(path, sizeof(path), "%s/subuid", tmpdir);
        (void)snprintf(link, sizeof(link), "%s/link", tmpdir);

        /* A missing file grants nothing. */
        n_ranges = 99;
        ck_assert_int_eq(subid_load(path, USER, UID, ranges, &n_ranges), 0);
        ck_assert_uint_eq(n_ranges, 0);

        write_file(path, "other:1:2\nsandbox:100000:65536\n");
        ck_assert_int_eq(subid_load(path, USER, UID, ranges, &n_ranges), 0);
        ck_assert_uint_eq(n_ranges, 1);
        assert_range(0, 100000, 65536);

        /* A link is not followed. */
        ck_assert_int_eq(symlink(path, link), 0);
        ck_assert_int_eq(subid_load(link, USER, UID, ranges, &n_ranges), -ELOOP);

        write_file(path, "sandbox:100000:0\n");
        ck_assert_int_eq(subid_load(path, USER, UID, ranges, &n_ranges), -EINVAL);
}
END_TEST

/* ---- subid_next_free() ---- */

START_TEST(test_next_free_empty)
{
        /* No range yet: SUBID_ALLOC_FLOOR (100000), rounded up to a whole block of 65536. */
        ck_assert_uint_eq(subid_next_free(""), 131072);
        ck_assert_uint_eq(subid_next_free("\n"), 131072);
        ck_assert_uint_eq(subid_next_free("\n\n\n"), 131072);
        ck_assert_uint_eq(subid_next_free(""), (SUBID_ALLOC_FLOOR + SUBID_ALLOC_COUNT - 1) /
                                                       SUBID_ALLOC_COUNT * SUBID_ALLOC_COUNT);
}
END_TEST

START_TEST(test_next_free_one_range)
{
        /* useradd's first range, 100000-165535: the next block starts at 196608 (3 * 65536). */
        ck_assert_uint_eq(subid_next_free("a:100000:65536\n"), 196608);
        ck_assert_uint_eq(subid_next_free("a:100000:65536"), 196608);
        ck_assert_uint_eq(subid_next_free("\na:100000:65536\n\n"), 196608);
        ck_assert_uint_eq(subid_next_free("a:100000:1\n"), 131072);
        /* One id past a block boundary takes the next block. */
        ck_assert_uint_eq(subid_next_free("a:100000:31073\n"), 196608); /* ends at 131073 */
}
END_TEST

START_TEST(test_next_free_several)
{
        /* Several users: the highest end wins, wherever its line is. */
        ck_assert_uint_eq(subid_next_free("a:100000:65536\nb:165536:65536\nc:231072:65536\n"), 327680);
        ck_assert_uint_eq(subid_next_free("c:231072:65536\na:100000:65536\nb:165536:65536\n"), 327680);
        ck_assert_uint_eq(subid_next_free("b:165536:65536\nc:231072:65536\na:100000:65536"), 327680);
        /* The highest end, not the highest start: a long range that starts low. */
        ck_assert_uint_eq(subid_next_free("a:100000:1000000\nb:500000:10\n"), 1114112); /* 1100000 */
        ck_assert_uint_eq(subid_next_free("b:500000:10\na:100000:1000000\n"), 1114112);
        /* The same user twice, both counted. */
        ck_assert_uint_eq(subid_next_free("a:100000:65536\na:300000:65536\n"), 393216); /* 365536 */
}
END_TEST

START_TEST(test_next_free_below_floor)
{
        /* Ranges below the floor do not lower it. */
        ck_assert_uint_eq(subid_next_free("a:1000:2000\n"), 131072);
        ck_assert_uint_eq(subid_next_free("a:0:100000\n"), 131072);
        ck_assert_uint_eq(subid_next_free("a:0:100001\n"), 131072);
        ck_assert_uint_eq(subid_next_free("a:0:131073\n"), 196608);
}
END_TEST

START_TEST(test_next_free_block_boundary)
{
        /* A range that ends exactly on a multiple of 65536: the next block starts right there. */
        ck_assert_uint_eq(subid_next_free("a:131072:65536\n"), 196608);
        ck_assert_uint_eq(subid_next_free("a:65536:65536\n"), 131072);
        ck_assert_uint_eq(subid_next_free("a:100000:96608\n"), 196608);
        ck_assert_uint_eq(subid_next_free("a:131072:131072\nb:100000:10\n"), 262144);
        /* One more id, one more block. */
        ck_assert_uint_eq(subid_next_free("a:131072:65537\n"), 262144);
}
END_TEST

START_TEST(test_next_free_uid_names)
{
        /* Lines by uid count as lines by name do. */
        ck_assert_uint_eq(subid_next_free("1000:231072:65536\n"), 327680); /* ends at 296608 */
        ck_assert_uint_eq(subid_next_free("runner:100000:65536\n1001:165536:65536\n"), 262144);
        ck_assert_uint_eq(subid_next_free("1001:165536:65536\nrunner:100000:65536\n"), 262144);
}
END_TEST

START_TEST(test_next_free_malformed)
{
        /* Malformed lines are skipped, before, between and after good ones. */
        ck_assert_uint_eq(subid_next_free("a:abc:65536\n"
                                          "b:900000\n"
                                          "c\n"
                                          "garbage without colons\n"
                                          ":\n"
                                          "::\n"
                                          "d:900000:\n"
                                          "e::900000\n"
                                          "f:-1:5\n"
                                          "g:+900000:1\n"
                                          "h:900000:+1\n"
                                          "i: 900000:1\n"
                                          "j:900000:1 \n"
                                          "k:900000:1\r\n"
                                          "l:900000:x\n"
                                          "m:1e6:1\n"
                                          "n:0x100000:1\n"
                                          "o:4294967296:1\n"
                                          "p:1:4294967296\n"
                                          "q:900000:1:1\n"
                                          "z:100000:65536\n"
                                          "r:99999999999:1\n"
                                          "s:900000:abc"),
                          196608);
        /* Only malformed lines: as if there were none. */
        ck_assert_uint_eq(subid_next_free("a:abc:def\nb:900000\n"), 131072);
}
END_TEST

START_TEST(test_next_free_top)
{
        /* The caller checks that the block fits below 2^32 - 1; the result is only the arithmetic. */
        ck_assert_uint_eq(subid_next_free("a:4294901760:65536\n"), UINT64_C(4294967296));
        ck_assert_uint_eq(subid_next_free("a:4294967295:4294967295\n"), UINT64_C(8589934592));
        ck_assert_uint_eq(subid_next_free("a:4294836224:65536\n"), UINT64_C(4294901760));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("subid");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_by_name);
        tcase_add_test(tc, test_by_uid);
        tcase_add_test(tc, test_no_trailing_newline);
        tcase_add_test(tc, test_empty_text);
        tcase_add_test(tc, test_no_entry_for_user);
        tcase_add_test(tc, test_several_ranges);
        tcase_add_test(tc, test_others_malformed_ignored);
        tcase_add_test(tc, test_comments_and_blank_lines);
        tcase_add_loop_test(tc, test_own_malformed, 0, (int)ELEMENTSOF(malformed));
        tcase_add_test(tc, test_own_name_only_line);
        tcase_add_test(tc, test_top_of_range);
        tcase_add_test(tc, test_max_ranges);
        tcase_add_test(tc, test_prefix_names);
        suite_add_tcase(s, tc);

        tc = tcase_create("ranges");
        tcase_add_test(tc, test_uid_in_ranges);
        tcase_add_test(tc, test_parse_then_in_ranges);
        suite_add_tcase(s, tc);

        tc = tcase_create("next-free");
        tcase_add_test(tc, test_next_free_empty);
        tcase_add_test(tc, test_next_free_one_range);
        tcase_add_test(tc, test_next_free_several);
        tcase_add_test(tc, test_next_free_below_floor);
        tcase_add_test(tc, test_next_free_block_boundary);
        tcase_add_test(tc, test_next_free_uid_names);
        tcase_add_test(tc, test_next_free_malformed);
        tcase_add_test(tc, test_next_free_top);
        suite_add_tcase(s, tc);

        tc = tcase_create("load");
        tcase_add_unchecked_fixture(tc, load_setup, load_teardown);
        tcase_add_test(tc, test_load);
        suite_add_tcase(s, tc);

        return check_run(s);
}
