/* SPDX-License-Identifier: MIT */
/* The memory budget the check reads (cgroup_path_parse(), cgroup_memory_budget()): the right line of
 * /proc/self/cgroup, the smallest limit from a cgroup up, "none" and "no controller" told apart, and no
 * link or garbage taken for a limit. The hierarchies are directory trees made here: the real ones are
 * the test hosts' (tests/e2e/check.sh). */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup-budget.h"
#include "macro.h"

static char root[] = "/tmp/agentic-job-test-cgroup-budget-XXXXXX";
static int root_fd = -1;

static void setup(void)
{
        ck_assert_ptr_nonnull(mkdtemp(root));
        root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(root_fd, 0);
}

static void teardown(void)
{
        char cmd[PATH_MAX + 16];

        close(root_fd);
        (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        ck_assert_int_eq(system(cmd), 0);
        memcpy(root + strlen(root) - 6, "XXXXXX", 6);
}

static void put(const char *path, const char *text)
{
        char cmd[PATH_MAX * 2];
        FILE *f;

        (void)snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s/%s')\"", root, path);
        ck_assert_int_eq(system(cmd), 0);
        (void)snprintf(cmd, sizeof(cmd), "%s/%s", root, path);
        f = fopen(cmd, "w");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_path_parse)
{
        static const char hybrid[] = "12:pids:/user.slice/user-1001.slice/session-3.scope\n"
                                     "9:memory,hugetlb:/user.slice/user-1001.slice/session-3.scope\n"
                                     "1:name=systemd:/user.slice/user-1001.slice/session-3.scope\n"
                                     "0::/user.slice/user-1001.slice/session-3.scope\n";
        _cleanup_free_ char *v1 = NULL, *v2 = NULL, *none = NULL;

        ck_assert_int_eq(cgroup_path_parse(hybrid, true, &v1), 0);
        ck_assert_str_eq(v1, "/user.slice/user-1001.slice/session-3.scope");
        ck_assert_int_eq(cgroup_path_parse("0::/a/b\n", false, &v2), 0);
        ck_assert_str_eq(v2, "/a/b");
        /* "memoryx" is not "memory"; a v2 line is not a v1 one. */
        ck_assert_int_eq(cgroup_path_parse("3:memoryx:/a\n0::/b\n", true, &none), -ENOENT);
        ck_assert_int_eq(cgroup_path_parse("3:memory:/a\n", false, &none), -ENOENT);
        ck_assert_int_eq(cgroup_path_parse("garbage\n", false, &none), -EBADMSG);
        ck_assert_int_eq(cgroup_path_parse("0::relative\n", false, &none), -EBADMSG);
        ck_assert_ptr_null(none);
}
END_TEST

START_TEST(test_own_prefix)
{
        ck_assert_uint_eq(cgroup_own_prefix("/user.slice/user-1001.slice/session-3.scope", 1001), 27);
        ck_assert_uint_eq(cgroup_own_prefix("/user.slice/user-1001.slice", 1001), 27);
        ck_assert_uint_eq(cgroup_own_prefix("/user.slice/user-1001.slice/session-3.scope", 1002), 0);
        ck_assert_uint_eq(cgroup_own_prefix("/user.slice/user-1001.slicex/a", 1001), 0);
        ck_assert_uint_eq(cgroup_own_prefix("/agentic-job/enter-7-123000", 1001), 12);
        ck_assert_uint_eq(cgroup_own_prefix("/system.slice/x.service", 0), 0);
        ck_assert_uint_eq(cgroup_own_prefix("/", 0), 0);
        ck_assert_uint_eq(cgroup_own_prefix("//user-0.slice", 0), 14);
}
END_TEST

START_TEST(test_smallest_from_the_leaf_up)
{
        _cleanup_free_ char *where = NULL;
        uint64_t limit = 0;

        static const char session[] = "/user.slice/user-1001.slice/session-3.scope";
        size_t top = cgroup_own_prefix(session, 1001);

        ck_assert_uint_eq(top, strlen("/user.slice/user-1001.slice"));
        put("user.slice/memory.max", "max\n");
        put("user.slice/user-1001.slice/memory.max", "1073741824\n");
        put("user.slice/user-1001.slice/session-3.scope/memory.max", "max\n");
        ck_assert_int_eq(cgroup_memory_budget(root_fd, session, top, false, &limit, &where), 0);
        ck_assert_uint_eq(limit, 1073741824);
        ck_assert_str_eq(where, "/user.slice/user-1001.slice");
        free(where);
        where = NULL;
        /* A smaller one further down wins; of equal ones, the higher is named; one above the sandbox's own
         * (shared with the runner) does not count. */
        put("user.slice/user-1001.slice/session-3.scope/memory.max", "4096\n");
        put("user.slice/user-1001.slice/memory.max", "4096\n");
        put("user.slice/memory.max", "1024\n");
        ck_assert_int_eq(cgroup_memory_budget(root_fd, "/user.slice/user-1001.slice/session-3.scope/", top,
                                              false, &limit, &where),
                         0);
        ck_assert_uint_eq(limit, 4096);
        ck_assert_str_eq(where, "/user.slice/user-1001.slice");
}
END_TEST

START_TEST(test_none_and_no_controller)
{
        _cleanup_free_ char *where = NULL;
        uint64_t limit = 0;

        /* No file anywhere: no memory controller. */
        put("a/b/other", "x");
        ck_assert_int_eq(cgroup_memory_budget(root_fd, "/a/b", 2, false, &limit, &where), -ENOENT);
        /* "max" everywhere: a controller, no limit. */
        put("a/memory.max", "max\n");
        put("a/b/memory.max", "max\n");
        ck_assert_int_eq(cgroup_memory_budget(root_fd, "/a/b", 2, false, &limit, &where), 0);
        ck_assert_uint_eq(limit, CGROUP_UNLIMITED);
        ck_assert_ptr_null(where);
        /* v1's "unlimited" is the page counter's maximum. */
        put("a/memory.limit_in_bytes", "9223372036854771712\n");
        ck_assert_int_eq(cgroup_memory_budget(root_fd, "/a/b", 2, true, &limit, &where), 0);
        ck_assert_uint_eq(limit, CGROUP_UNLIMITED);
        put("a/b/memory.limit_in_bytes", "536870912\n");
        ck_assert_int_eq(cgroup_memory_budget(root_fd, "/a/b", 2, true, &limit, &where), 0);
        ck_assert_uint_eq(limit, 536870912);
        ck_assert_str_eq(where, "/a/b");
}
END_TEST

START_TEST(test_refuses_what_is_not_a_limit)
{
        _cleanup_free_ char *where = NULL;
        char target[PATH_MAX], link[PATH_MAX];
        uint64_t limit = 0;

        put("a/memory.max", "lots\n");
        ck_assert_int_eq(cgroup_memory_budget(root_fd, "/a", 2, false, &limit, &where), -EBADMSG);
        /* A link where the limit is read is never followed. */
        put("t", "4096\n");
        (void)snprintf(target, sizeof(target), "%s/t", root);
        (void)snprintf(link, sizeof(link), "%s/b/memory.max", root);
        put("b/x", "");
        ck_assert_int_eq(symlink(target, link), 0);
        ck_assert_int_eq(cgroup_memory_budget(root_fd, "/b", 2, false, &limit, &where), -ELOOP);
        ck_assert_int_eq(cgroup_memory_budget(root_fd, "/a/../b", 2, false, &limit, &where), -EINVAL);
        ck_assert_int_eq(cgroup_memory_budget(root_fd, "a", 2, false, &limit, &where), -EINVAL);
        ck_assert_int_eq(cgroup_memory_budget(root_fd, "/ab", 2, false, &limit, &where), -EINVAL);
        ck_assert_int_eq(cgroup_memory_budget(root_fd, "/a", 3, false, &limit, &where), -EINVAL);
}
END_TEST

static Suite *cgroup_budget_suite(void)
{
        Suite *s = suite_create("cgroup-budget");
        TCase *tc = tcase_create("cgroup-budget");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_path_parse);
        tcase_add_test(tc, test_own_prefix);
        tcase_add_test(tc, test_smallest_from_the_leaf_up);
        tcase_add_test(tc, test_none_and_no_controller);
        tcase_add_test(tc, test_refuses_what_is_not_a_limit);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(cgroup_budget_suite());
}
