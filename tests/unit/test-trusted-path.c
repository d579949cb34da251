/* SPDX-License-Identifier: MIT */
/* trusted_path_check(), trusted_search_path_check() and trusted_program_find(): what root may trust.
 *
 * The "system" cases look at the host's own files and run as anyone. The "owned" cases build trees of
 * files with chosen owners and modes in a root-owned 0755 directory under /run, so they need root: run as
 * another user they are not run at all (and say so), never counted as passed. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "macro.h"
#include "trusted-path.h"

#define NOBODY 65534
#define USERS  100

static AjError err;

static int check(const char *path)
{
        memset(&err, 0, sizeof(err));
        return trusted_path_check(path, &err);
}

#define assert_message_has(s)                                                                               \
        ck_assert_msg(strstr(err.message, (s)), "message \"%s\" lacks \"%s\"", err.message, (s))

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void rm_rf(const char *path)
{
        if (path[0])
                (void)nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- Cases on the host's own files ---- */

/* A file in /tmp, made by the parent before the tests and removed after them. */
static char tmp_file[] = "/tmp/agentic-job-test-trusted-XXXXXX";

static void system_setup(void)
{
        int fd = mkstemp(tmp_file);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fchmod(fd, 0755), 0);
        (void)close(fd);
}

static void system_teardown(void)
{
        (void)unlink(tmp_file);
}

START_TEST(test_etc)
{
        ck_assert_msg(check("/etc") == 0, "/etc: %s", err.message);
        ck_assert_msg(check("/etc/") == 0, "/etc/: %s", err.message);
        ck_assert_msg(check("/") == 0, "/: %s", err.message);
}
END_TEST

START_TEST(test_usr_bin_env)
{
        ck_assert_msg(check("/usr/bin/env") == 0, "/usr/bin/env: %s", err.message);
        /* Doubled slashes, "." and ".." are resolved, not refused. */
        ck_assert_msg(check("//usr///bin/./env") == 0, "%s", err.message);
        ck_assert_msg(check("/usr/bin/../bin/env") == 0, "%s", err.message);
}
END_TEST

START_TEST(test_bin_sh)
{
        /* /bin is a root-owned link to usr/bin on a merged-/usr system, sh a link to dash or bash. */
        ck_assert_msg(check("/bin/sh") == 0, "/bin/sh: %s", err.message);
}
END_TEST

START_TEST(test_relative)
{
        ck_assert_int_eq(check("etc/passwd"), -EINVAL);
        assert_message_has("not an absolute path");
        ck_assert_int_eq(check("./etc"), -EINVAL);
        ck_assert_int_eq(check(""), -EINVAL);
}
END_TEST

START_TEST(test_missing)
{
        ck_assert_int_eq(check("/etc/agentic-job-test-does-not-exist"), -ENOENT);
        assert_message_has("/etc/agentic-job-test-does-not-exist");
        ck_assert_int_eq(check("/agentic-job-test-does-not-exist/x/y"), -ENOENT);
}
END_TEST

START_TEST(test_tmp_refused)
{
        ck_assert_int_eq(check(tmp_file), -EPERM);
        /* The message names /tmp (sticky and world-writable), the first component at fault. */
        ck_assert_msg(strncmp(err.message, "/tmp ", 5) == 0, "message \"%s\" does not name /tmp",
                      err.message);
        assert_message_has("writable by others");
        ck_assert_int_eq(check("/tmp"), -EPERM);
        ck_assert_int_eq(check("/tmp/.."), -EPERM);
}
END_TEST

START_TEST(test_too_long)
{
        char path[2 * PATH_MAX + 16], comp[NAME_MAX + 8];

        memset(path, 'a', sizeof(path) - 1);
        path[0] = '/';
        path[sizeof(path) - 1] = '\0';
        ck_assert_int_eq(check(path), -ENAMETOOLONG);

        comp[0] = '/';
        memset(comp + 1, 'b', NAME_MAX + 1);
        comp[NAME_MAX + 2] = '\0';
        ck_assert_int_eq(check(comp), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_search_path_system)
{
        ck_assert_msg(trusted_search_path_check("/usr/bin:/bin", &err) == 0, "%s", err.message);
        /* A missing directory is skipped; so are empty entries. */
        ck_assert_msg(trusted_search_path_check("/agentic-job-test-missing:/usr/bin::", &err) == 0, "%s",
                      err.message);
        ck_assert_int_eq(trusted_search_path_check("/usr/bin:/tmp", &err), -EPERM);
        ck_assert_msg(strncmp(err.message, "/tmp ", 5) == 0, "message \"%s\" does not name /tmp",
                      err.message);
        ck_assert_int_eq(trusted_search_path_check("", &err), 0);
}
END_TEST

START_TEST(test_program_find_system)
{
        _cleanup_free_ char *env = NULL, *sh = NULL;
        char *none = NULL;

        ck_assert_msg(trusted_program_find("/usr/bin:/bin", "env", &env, &err) == 0, "%s", err.message);
        ck_assert_str_eq(env, "/usr/bin/env");
        /* A missing directory first does not matter. */
        ck_assert_msg(trusted_program_find("/agentic-job-test-missing:/bin", "sh", &sh, &err) == 0, "%s",
                      err.message);
        ck_assert_str_eq(sh, "/bin/sh");

        ck_assert_int_eq(
                trusted_program_find("/usr/bin:/bin", "agentic-job-test-no-such-program", &none, &err),
                -ENOENT);
        assert_message_has("not found");
        ck_assert_int_eq(trusted_program_find("/usr/bin", "bin/env", &none, &err), -EINVAL);
        ck_assert_int_eq(trusted_program_find("/usr/bin", "/usr/bin/env", &none, &err), -EINVAL);
        ck_assert_int_eq(trusted_program_find("/usr/bin", "", &none, &err), -EINVAL);
        /* A directory is not a program. */
        ck_assert_int_eq(trusted_program_find("/usr", "bin", &none, &err), -ENOENT);
        ck_assert_ptr_null(none);
}
END_TEST

START_TEST(test_program_find_tmp)
{
        /* The first match wins and must then be trusted: an executable in /tmp is refused, not skipped. */
        char dir[sizeof(tmp_file)];
        const char *name = strrchr(tmp_file, '/') + 1;
        char *found = NULL;

        memcpy(dir, tmp_file, sizeof(dir));
        *strrchr(dir, '/') = '\0';
        ck_assert_int_eq(trusted_program_find(dir, name, &found, &err), -EPERM);
        ck_assert_ptr_null(found);
}
END_TEST

/* ---- Cases with owners and modes of their own, under /run: root only ---- */

/* base: made by the parent (unchecked fixture) and removed by it after every test of the tcase, so
 * nothing is left behind even when a test fails in its child; dir: one per test (checked fixture). */
static char base[] = "/run/agentic-job-test-XXXXXX";
static char dir[sizeof(base) + 16];

static void owned_setup_once(void)
{
        umask(022);
        ck_assert_ptr_nonnull(mkdtemp(base));
        ck_assert_int_eq(chmod(base, 0755), 0);
}

static void owned_teardown_once(void)
{
        rm_rf(base);
}

static void owned_setup(void)
{
        (void)snprintf(dir, sizeof(dir), "%s/t-XXXXXX", base);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(chmod(dir, 0755), 0);
        /* Everything below relies on the way here being trusted. */
        ck_assert_msg(check(dir) == 0, "%s: %s", dir, err.message);
}

static void owned_teardown(void)
{
        rm_rf(dir);
}

/* dir joined with a relative name; a few at a time. */
static const char *at(const char *fmt, ...) _printf_(1, 2);
static const char *at(const char *fmt, ...)
{
        static char bufs[8][PATH_MAX];
        static unsigned next;
        char *b = bufs[next++ % ELEMENTSOF(bufs)];
        size_t n = (size_t)snprintf(b, PATH_MAX, "%s/", dir);
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(b + n, PATH_MAX - n, fmt, ap);
        va_end(ap);
        return b;
}

static void make_file(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

        ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
        ck_assert_int_eq(write(fd, "x\n", 2), 2);
        ck_assert_int_eq(fchown(fd, uid, gid), 0);
        ck_assert_int_eq(fchmod(fd, mode), 0);
        ck_assert_int_eq(close(fd), 0);
}

static void make_dir(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
        ck_assert_msg(mkdir(path, 0700) == 0, "%s: %s", path, strerror(errno));
        ck_assert_int_eq(chown(path, uid, gid), 0);
        ck_assert_int_eq(chmod(path, mode), 0);
}

static void make_link(const char *target, const char *path, uid_t uid)
{
        ck_assert_msg(symlink(target, path) == 0, "%s: %s", path, strerror(errno));
        ck_assert_int_eq(lchown(path, uid, uid), 0);
}

START_TEST(test_owned_root_file)
{
        make_file(at("f"), 0644, 0, 0);
        ck_assert_msg(check(at("f")) == 0, "%s", err.message);
        make_file(at("x"), 0755, 0, 0);
        ck_assert_msg(check(at("x")) == 0, "%s", err.message);
        make_file(at("ro"), 0400, 0, 0);
        ck_assert_msg(check(at("ro")) == 0, "%s", err.message);
}
END_TEST

START_TEST(test_owned_by_nobody)
{
        make_file(at("f"), 0644, NOBODY, NOBODY);
        ck_assert_int_eq(check(at("f")), -EPERM);
        assert_message_has(at("f"));
        assert_message_has("owned by uid 65534");
        /* Even unwritable, even to its owner: the owner may chmod it. */
        make_file(at("g"), 0444, NOBODY, 0);
        ck_assert_int_eq(check(at("g")), -EPERM);
}
END_TEST

START_TEST(test_mode_0666)
{
        make_file(at("f"), 0666, 0, 0);
        ck_assert_int_eq(check(at("f")), -EPERM);
        assert_message_has(at("f"));
        assert_message_has("writable by others (mode 0666)");
        make_file(at("g"), 0602, 0, 0);
        ck_assert_int_eq(check(at("g")), -EPERM);
}
END_TEST

START_TEST(test_mode_0664_group_root)
{
        make_file(at("f"), 0664, 0, 0);
        ck_assert_msg(check(at("f")) == 0, "%s", err.message);
}
END_TEST

START_TEST(test_mode_0664_group_users)
{
        make_file(at("f"), 0664, 0, USERS);
        ck_assert_int_eq(check(at("f")), -EPERM);
        assert_message_has(at("f"));
        assert_message_has("writable by group 100 (mode 0664)");
        /* Readable by that group only: fine. */
        make_file(at("g"), 0640, 0, USERS);
        ck_assert_msg(check(at("g")) == 0, "%s", err.message);
}
END_TEST

START_TEST(test_dir_0777)
{
        make_dir(at("d"), 0777, 0, 0);
        make_file(at("d/f"), 0644, 0, 0);
        ck_assert_int_eq(check(at("d/f")), -EPERM);
        ck_assert_msg(strncmp(err.message, at("d "), strlen(at("d "))) == 0,
                      "message \"%s\" does not name %s", err.message, at("d"));
        assert_message_has("writable by others (mode 0777)");
        ck_assert_int_eq(check(at("d")), -EPERM);
        /* Sticky does not help, as for /tmp. */
        make_dir(at("s"), 01777, 0, 0);
        make_file(at("s/f"), 0644, 0, 0);
        ck_assert_int_eq(check(at("s/f")), -EPERM);
        assert_message_has("mode 1777");
}
END_TEST

START_TEST(test_dir_group_writable)
{
        make_dir(at("ok"), 0775, 0, 0);
        make_file(at("ok/f"), 0644, 0, 0);
        ck_assert_msg(check(at("ok/f")) == 0, "%s", err.message);
        make_dir(at("bad"), 0775, 0, USERS);
        make_file(at("bad/f"), 0644, 0, 0);
        ck_assert_int_eq(check(at("bad/f")), -EPERM);
        assert_message_has("writable by group 100");
}
END_TEST

START_TEST(test_dir_owned_by_nobody)
{
        make_dir(at("d"), 0755, NOBODY, NOBODY);
        make_file(at("d/f"), 0644, 0, 0);
        ck_assert_int_eq(check(at("d/f")), -EPERM);
        assert_message_has(at("d"));
        assert_message_has("owned by uid 65534");
}
END_TEST

START_TEST(test_link_root_to_trusted)
{
        make_file(at("f"), 0644, 0, 0);
        make_link("f", at("rel"), 0);
        ck_assert_msg(check(at("rel")) == 0, "%s", err.message);
        make_link(at("f"), at("abs"), 0);
        ck_assert_msg(check(at("abs")) == 0, "%s", err.message);
        make_link("/usr/bin/env", at("env"), 0);
        ck_assert_msg(check(at("env")) == 0, "%s", err.message);
        /* A link to a directory, in the middle of a path. */
        make_dir(at("d"), 0755, 0, 0);
        make_file(at("d/g"), 0644, 0, 0);
        make_link("d", at("dl"), 0);
        ck_assert_msg(check(at("dl/g")) == 0, "%s", err.message);
}
END_TEST

START_TEST(test_link_owned_by_nobody)
{
        /* The target is fine; the link is not root's, so its owner could point it anywhere. */
        make_file(at("f"), 0644, 0, 0);
        make_link("f", at("l"), NOBODY);
        ck_assert_int_eq(check(at("l")), -EPERM);
        assert_message_has(at("l"));
        assert_message_has("link owned by uid 65534");
        make_link("/usr/bin/env", at("env"), NOBODY);
        ck_assert_int_eq(check(at("env")), -EPERM);
        /* The same for a link to a directory in the middle of a path. */
        make_dir(at("d"), 0755, 0, 0);
        make_file(at("d/g"), 0644, 0, 0);
        make_link("d", at("dl"), NOBODY);
        ck_assert_int_eq(check(at("dl/g")), -EPERM);
        assert_message_has("link owned by uid 65534");
}
END_TEST

START_TEST(test_link_chain)
{
        /* dir/a/b/l1 -> ../../c/l2 -> ../f: two relative links, each climbing with "..". */
        char resolved[PATH_MAX];

        make_file(at("f"), 0644, 0, 0);
        make_dir(at("a"), 0755, 0, 0);
        make_dir(at("a/b"), 0755, 0, 0);
        make_dir(at("c"), 0755, 0, 0);
        make_link("../f", at("c/l2"), 0);
        make_link("../../c/l2", at("a/b/l1"), 0);
        ck_assert_ptr_nonnull(realpath(at("a/b/l1"), resolved));
        ck_assert_str_eq(resolved, at("f"));
        ck_assert_msg(check(at("a/b/l1")) == 0, "%s", err.message);

        /* ".." after a link to a directory is the parent of the target, as for the kernel:
         * dir/bl -> a/b, so dir/bl/../../f is dir/f. */
        make_link("a/b", at("bl"), 0);
        ck_assert_ptr_nonnull(realpath(at("bl/../../f"), resolved));
        ck_assert_str_eq(resolved, at("f"));
        ck_assert_msg(check(at("bl/../../f")) == 0, "%s", err.message);

        /* An absolute link into the chain, and a link whose target holds "." and "..". */
        make_link(at("a/b/l1"), at("abs"), 0);
        ck_assert_msg(check(at("abs")) == 0, "%s", err.message);
        make_link("./a/./b/../../c/./l2", at("dots"), 0);
        ck_assert_msg(check(at("dots")) == 0, "%s", err.message);
}
END_TEST

START_TEST(test_link_into_untrusted_dir)
{
        make_dir(at("u"), 0777, 0, 0);
        make_file(at("u/f"), 0644, 0, 0);
        make_link("u/f", at("l"), 0);
        ck_assert_int_eq(check(at("l")), -EPERM);
        ck_assert_msg(strncmp(err.message, at("u "), strlen(at("u "))) == 0,
                      "message \"%s\" does not name %s", err.message, at("u"));
        /* Into /tmp. */
        make_link("/tmp/../tmp/agentic-job-test-anything", at("t"), 0);
        ck_assert_int_eq(check(at("t")), -EPERM);
        ck_assert_msg(strncmp(err.message, "/tmp ", 5) == 0, "message \"%s\" does not name /tmp",
                      err.message);
        /* Through a directory owned by nobody, by a relative link with "..". */
        make_dir(at("n"), 0755, NOBODY, NOBODY);
        make_dir(at("n/sub"), 0755, 0, 0);
        make_file(at("n/sub/f"), 0644, 0, 0);
        make_dir(at("x"), 0755, 0, 0);
        make_link("../n/sub/f", at("x/l"), 0);
        ck_assert_int_eq(check(at("x/l")), -EPERM);
        assert_message_has("owned by uid 65534");
}
END_TEST

START_TEST(test_link_loop)
{
        make_link("loop2", at("loop1"), 0);
        make_link("loop1", at("loop2"), 0);
        ck_assert_int_eq(check(at("loop1")), -ELOOP);
        make_link("self", at("self"), 0);
        ck_assert_int_eq(check(at("self")), -ELOOP);
        make_link("self/x", at("deeper"), 0);
        ck_assert_int_eq(check(at("deeper")), -ELOOP);
}
END_TEST

START_TEST(test_link_chain_limit)
{
        /* 40 links in a row are followed (the kernel's limit too); 41 are too many. */
        make_file(at("f"), 0644, 0, 0);
        make_link("f", at("l1"), 0);
        for (int i = 2; i <= 41; i++) {
                char target[16];

                (void)snprintf(target, sizeof(target), "l%d", i - 1);
                make_link(target, at("l%d", i), 0);
        }
        ck_assert_int_eq(access(at("l40"), R_OK), 0);
        ck_assert_msg(check(at("l40")) == 0, "%s", err.message);
        ck_assert_int_eq(check(at("l41")), -ELOOP);
}
END_TEST

START_TEST(test_not_a_directory)
{
        make_file(at("f"), 0644, 0, 0);
        ck_assert_int_eq(check(at("f/x")), -ENOTDIR);
        assert_message_has(at("f"));
        ck_assert_int_eq(check(at("f/.")), -ENOTDIR);
        ck_assert_int_eq(check(at("f/..")), -ENOTDIR);
        /* Through a link to the file. */
        make_link("f", at("l"), 0);
        ck_assert_int_eq(check(at("l/x")), -ENOTDIR);
}
END_TEST

START_TEST(test_not_a_directory_trailing_slash)
{
        /* "file/" names no file (open() says ENOTDIR): it cannot be trusted. */
        int r;

        make_file(at("f"), 0644, 0, 0);
        ck_assert_int_eq(open(at("f/"), O_RDONLY | O_CLOEXEC), -1);
        ck_assert_int_eq(errno, ENOTDIR);
        r = check(at("f/"));
        ck_assert_msg(r == -ENOTDIR, "\"%s\" (a file with a trailing slash) returned %d, not -ENOTDIR",
                      at("f/"), r);
}
END_TEST

START_TEST(test_owned_missing)
{
        ck_assert_int_eq(check(at("missing")), -ENOENT);
        ck_assert_int_eq(check(at("missing/x")), -ENOENT);
        make_link("missing", at("dangling"), 0);
        ck_assert_int_eq(check(at("dangling")), -ENOENT);
}
END_TEST

START_TEST(test_owned_program_find)
{
        char path[3 * PATH_MAX];
        _cleanup_free_ char *found = NULL;
        char *none = NULL;

        make_dir(at("bin"), 0755, 0, 0);
        make_file(at("bin/prog"), 0755, 0, 0);
        make_file(at("bin/data"), 0644, 0, 0);
        make_dir(at("bin/subdir"), 0755, 0, 0);
        make_dir(at("empty"), 0755, 0, 0);
        make_dir(at("open"), 0777, 0, 0);
        make_file(at("open/prog"), 0755, 0, 0);
        make_dir(at("other"), 0755, 0, 0);
        make_link("/usr/bin/env", at("other/prog"), NOBODY);

        (void)snprintf(path, sizeof(path), "%s:%s", at("empty"), at("bin"));
        ck_assert_msg(trusted_program_find(path, "prog", &found, &err) == 0, "%s", err.message);
        ck_assert_str_eq(found, at("bin/prog"));

        /* Not executable, or a directory: not a program, so not found. */
        ck_assert_int_eq(trusted_program_find(path, "data", &none, &err), -ENOENT);
        ck_assert_int_eq(trusted_program_find(path, "subdir", &none, &err), -ENOENT);

        /* The first match is the one run: in an untrusted directory it is refused, not skipped. */
        (void)snprintf(path, sizeof(path), "%s:%s", at("open"), at("bin"));
        ck_assert_int_eq(trusted_program_find(path, "prog", &none, &err), -EPERM);
        assert_message_has(at("open"));
        /* The same for a match that is a link owned by nobody. */
        (void)snprintf(path, sizeof(path), "%s:%s", at("other"), at("bin"));
        ck_assert_int_eq(trusted_program_find(path, "prog", &none, &err), -EPERM);
        assert_message_has("link owned by uid 65534");
        ck_assert_ptr_null(none);
}
END_TEST

START_TEST(test_owned_search_path)
{
        char path[3 * PATH_MAX];

        make_dir(at("bin"), 0755, 0, 0);
        make_dir(at("open"), 0777, 0, 0);
        make_dir(at("theirs"), 0755, NOBODY, NOBODY);

        (void)snprintf(path, sizeof(path), "%s:/usr/bin:%s", at("bin"), at("missing"));
        ck_assert_msg(trusted_search_path_check(path, &err) == 0, "%s", err.message);
        (void)snprintf(path, sizeof(path), "%s:%s", at("bin"), at("open"));
        ck_assert_int_eq(trusted_search_path_check(path, &err), -EPERM);
        assert_message_has(at("open"));
        (void)snprintf(path, sizeof(path), "%s:%s", at("theirs"), at("bin"));
        ck_assert_int_eq(trusted_search_path_check(path, &err), -EPERM);
        assert_message_has("owned by uid 65534");
}
END_TEST

/* A POSIX access ACL (the system.posix_acl_access format of the kernel) that lets uid write too: the
 * group bits of the mode then show the ACL mask, rw-, while the group stays root. */
static int set_acl_user_write(const char *path, uid_t uid)
{
        struct __attribute__((packed)) {
                uint32_t version;
                struct __attribute__((packed)) {
                        uint16_t tag, perm;
                        uint32_t id;
                } e[5];
        } acl = {
                2,
                {
                        { 0x01, 7, UINT32_MAX }, /* ACL_USER_OBJ rwx */
                        { 0x02, 7, uid },        /* ACL_USER uid rwx */
                        { 0x04, 5, UINT32_MAX }, /* ACL_GROUP_OBJ r-x */
                        { 0x10, 7, UINT32_MAX }, /* ACL_MASK rwx */
                        { 0x20, 5, UINT32_MAX }, /* ACL_OTHER r-x */
                },
        };

        return RET_NERRNO(setxattr(path, "system.posix_acl_access", &acl, sizeof(acl), 0));
}

START_TEST(test_acl_write)
{
        /* Root's, group root, no write bit for others: but an ACL lets uid 65534 write. Not root's alone. */
        struct stat st;

        make_file(at("f"), 0644, 0, 0);
        ck_assert_int_eq(set_acl_user_write(at("f"), NOBODY), 0);
        ck_assert_int_eq(stat(at("f"), &st), 0);
        ck_assert_uint_eq(st.st_gid, 0);
        ck_assert_int_eq(check(at("f")), -EPERM);

        make_dir(at("d"), 0755, 0, 0);
        make_file(at("d/g"), 0644, 0, 0);
        ck_assert_int_eq(set_acl_user_write(at("d"), NOBODY), 0);
        ck_assert_int_eq(check(at("d/g")), -EPERM);
}
END_TEST

/* Whether the file system under /run takes POSIX ACLs. */
static bool run_has_acls(void)
{
        char probe[] = "/run/agentic-job-test-acl-XXXXXX";
        int fd = mkstemp(probe);
        bool ok;

        if (fd < 0)
                return false;
        (void)close(fd);
        ok = set_acl_user_write(probe, NOBODY) == 0;
        (void)unlink(probe);
        return ok;
}

/* The root-only cases, or NULL (with a note) when not root: they are then not run, and not counted. */
static TCase *tcase_owned(void)
{
        TCase *tc;

        if (geteuid() != 0) {
                printf("skipped: needs root: the \"owned\" cases (chown under /run) were not run\n");
                return NULL;
        }
        tc = tcase_create("owned");
        tcase_add_unchecked_fixture(tc, owned_setup_once, owned_teardown_once);
        tcase_add_checked_fixture(tc, owned_setup, owned_teardown);
        tcase_add_test(tc, test_owned_root_file);
        tcase_add_test(tc, test_owned_by_nobody);
        tcase_add_test(tc, test_mode_0666);
        tcase_add_test(tc, test_mode_0664_group_root);
        tcase_add_test(tc, test_mode_0664_group_users);
        tcase_add_test(tc, test_dir_0777);
        tcase_add_test(tc, test_dir_group_writable);
        tcase_add_test(tc, test_dir_owned_by_nobody);
        tcase_add_test(tc, test_link_root_to_trusted);
        tcase_add_test(tc, test_link_owned_by_nobody);
        tcase_add_test(tc, test_link_chain);
        tcase_add_test(tc, test_link_into_untrusted_dir);
        tcase_add_test(tc, test_link_loop);
        tcase_add_test(tc, test_link_chain_limit);
        tcase_add_test(tc, test_not_a_directory);
        tcase_add_test(tc, test_not_a_directory_trailing_slash);
        tcase_add_test(tc, test_owned_missing);
        tcase_add_test(tc, test_owned_program_find);
        tcase_add_test(tc, test_owned_search_path);
        if (run_has_acls())
                tcase_add_test(tc, test_acl_write);
        else
                printf("skipped: test_acl_write: no POSIX ACLs under /run\n");
        return tc;
}

int main(void)
{
        Suite *s = suite_create("trusted-path");
        TCase *tc = tcase_create("system");

        tcase_add_unchecked_fixture(tc, system_setup, system_teardown);
        tcase_add_test(tc, test_etc);
        tcase_add_test(tc, test_usr_bin_env);
        tcase_add_test(tc, test_bin_sh);
        tcase_add_test(tc, test_relative);
        tcase_add_test(tc, test_missing);
        tcase_add_test(tc, test_tmp_refused);
        tcase_add_test(tc, test_too_long);
        tcase_add_test(tc, test_search_path_system);
        tcase_add_test(tc, test_program_find_system);
        tcase_add_test(tc, test_program_find_tmp);
        suite_add_tcase(s, tc);

        tc = tcase_owned();
        if (tc)
                suite_add_tcase(s, tc);

        return check_run(s);
}
