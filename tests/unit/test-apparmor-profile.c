/* SPDX-License-Identifier: MIT */
/* Setup's AppArmor pieces (apparmor-profile.h): the restriction read from a simulated sysctl file (1, 0,
 * absent, anything else refused); the profile for bubblewrap names the program given, unconfined but for
 * `userns,`, and refuses a path AppArmor would read otherwise; a profile of another package that attaches
 * to the same program is found in each form a profile file writes it, and a mention elsewhere is not;
 * policy/apparmor/agentic-job-bwrap is the profile for /usr/bin/bwrap, byte for byte; the check's attempt
 * at a capability in a user namespace, which succeeds here, and each step's refusal told apart. */
#include <check.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apparmor-profile.h"
#include "apparmor-userns.h"
#include "read-file.h"

static char dir[] = "/tmp/test-apparmor.XXXXXX";

static const char *sysctl_file(const char *content)
{
        static char path[64];
        FILE *f;

        (void)snprintf(path, sizeof(path), "%s/restrict", dir);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(content, f);
        ck_assert_int_eq(fclose(f), 0);
        return path;
}

START_TEST(test_restricted)
{
        char missing[80];

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(apparmor_userns_restricted(sysctl_file("1\n")), 1);
        ck_assert_int_eq(apparmor_userns_restricted(sysctl_file("0\n")), 0);
        ck_assert_int_eq(apparmor_userns_restricted(sysctl_file("")), -EINVAL);
        ck_assert_int_eq(apparmor_userns_restricted(sysctl_file("1")), -EINVAL);
        ck_assert_int_eq(apparmor_userns_restricted(sysctl_file("2\n")), -EINVAL);
        ck_assert_int_eq(apparmor_userns_restricted(sysctl_file("10\n")), -EINVAL);
        ck_assert_int_eq(apparmor_userns_restricted(sysctl_file("1\n\n")), -EINVAL);
        (void)snprintf(missing, sizeof(missing), "%s/none", dir);
        /* A kernel without the restriction has no such file. */
        ck_assert_int_eq(apparmor_userns_restricted(missing), 0);
        ck_assert_int_eq(apparmor_userns_restricted(dir), -EISDIR);
        (void)unlink(sysctl_file(""));
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* userns_capability_try() in a child whose seccomp filter makes syscall fail with err: the step it
 * reports, and its errno, as "STEP ERRNO". */
static void try_with_refusal(int syscall_nr, int err, int *ret_step, int *ret_errno)
{
        int p[2], status, got[2] = { -1, -1 };
        pid_t pid;

        ck_assert_int_eq(pipe(p), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                /* Exported and loaded with prctl(), which valgrind knows (it does not know seccomp()). */
                scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
                struct sock_filter insns[64];
                struct sock_fprog prog = { 0 };
                int bpf = memfd_create("filter", MFD_CLOEXEC);
                ssize_t n;

                if (!ctx || bpf < 0 || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err), syscall_nr, 0) < 0 ||
                    seccomp_export_bpf(ctx, bpf) < 0 || (n = pread(bpf, insns, sizeof(insns), 0)) <= 0)
                        _exit(1);
                seccomp_release(ctx);
                prog.len = (unsigned short)((size_t)n / sizeof(insns[0]));
                prog.filter = insns;
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                        _exit(1);
                got[0] = userns_capability_try(&got[1]);
                _exit(write(p[1], got, sizeof(got)) == sizeof(got) ? 0 : 1);
        }
        (void)close(p[1]);
        ck_assert_int_eq(read(p[0], got, sizeof(got)), (ssize_t)sizeof(got));
        (void)close(p[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        *ret_step = got[0];
        *ret_errno = got[1];
}

/* The number in a sysctl file, or absent where there is no such file. */
static long sysctl_number(const char *path, long absent)
{
        char buf[32] = "";
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return absent;
        n = read(fd, buf, sizeof(buf) - 1);
        (void)close(fd);
        ck_assert_int_gt(n, 0);
        return strtol(buf, NULL, 10);
}

/* The userns-restricted probe's attempt: where nothing restricts user namespaces (this machine: no
 * AppArmor), every step succeeds, which the probe reports as a failure (the attack); each step refused
 * is told apart, with its errno (the refusals AppArmor makes, stood in for by a seccomp filter). */
START_TEST(test_capability_try)
{
        int step, e = 0;

        if (apparmor_userns_restricted(APPARMOR_USERNS_SYSCTL) == 0 &&
            sysctl_number("/proc/sys/user/max_user_namespaces", 0) > 0 &&
            (geteuid() == 0 || sysctl_number("/proc/sys/kernel/unprivileged_userns_clone", 1) == 1)) {
                step = userns_capability_try(&e);
                ck_assert_msg(step == 0, "step %d refused: %s", step, strerror(e));
        } else {
                ck_assert_int_gt(userns_capability_try(&e), 0);
        }
        try_with_refusal(SCMP_SYS(unshare), EPERM, &step, &e);
        ck_assert_int_eq(step, USERNS_STEP_UNSHARE);
        ck_assert_int_eq(e, EPERM);
        try_with_refusal(SCMP_SYS(mount), EACCES, &step, &e);
        ck_assert_int_eq(step, USERNS_STEP_MOUNT);
        ck_assert_int_eq(e, EACCES);
}
END_TEST

START_TEST(test_profile)
{
        static const char *const refused[] = { "usr/bin/bwrap",
                                               "/usr/bin/bw rap",
                                               "/usr/bin/bwrap\n",
                                               "/usr/bin/bw\"rap",
                                               "/usr/bin/bw*",
                                               "/usr/bin/{a,b}",
                                               "/usr//bin/bwrap",
                                               "/usr/./bin/bwrap",
                                               "/usr/../bwrap",
                                               "/usr/bin/bwrap,",
                                               "" };
        char *text = NULL;

        ck_assert_int_eq(apparmor_bwrap_profile("/usr/bin/bwrap", &text), 0);
        ck_assert_ptr_nonnull(strstr(text, "\nabi <abi/4.0>,\n"));
        ck_assert_ptr_nonnull(strstr(text, "\nprofile " APPARMOR_PROFILE_NAME
                                           " /usr/bin/bwrap flags=(unconfined) {\n  userns,\n}\n"));
        /* The one rule: nothing else is granted or taken. */
        ck_assert_ptr_null(strstr(strstr(text, "userns,") + strlen("userns,"), ","));
        ck_assert_int_eq(apparmor_text_attaches(text, strlen(text), "/usr/bin/bwrap"), 1);
        ck_assert_int_eq(apparmor_text_attaches(text, strlen(text), "/usr/local/bin/bwrap"), 0);
        free(text);
        ck_assert_int_eq(apparmor_bwrap_profile("/opt/bubble_wrap-0.9+x/bin/bwrap", &text), 0);
        ck_assert_ptr_nonnull(strstr(text, " /opt/bubble_wrap-0.9+x/bin/bwrap flags="));
        free(text);
        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
                text = NULL;
                ck_assert_msg(apparmor_bwrap_profile(refused[i], &text) == -EINVAL, "%s", refused[i]);
                ck_assert_ptr_null(text);
        }
}
END_TEST

/* policy/apparmor/agentic-job-bwrap, the profile as setup writes it for /usr/bin/bwrap: what
 * tests/e2e/setup.sh gives the test hosts' apparmor_parser. */
START_TEST(test_file_is_the_output)
{
        char *data = NULL, *text = NULL;
        size_t size = 0;

        ck_assert_int_eq(read_regular_nofollow(AT_FDCWD, SOURCE_ROOT "/policy/apparmor/agentic-job-bwrap",
                                               65536, &data, &size),
                         0);
        ck_assert_int_eq(apparmor_bwrap_profile("/usr/bin/bwrap", &text), 0);
        ck_assert_str_eq(data, text);
        free(data);
        free(text);
}
END_TEST

START_TEST(test_attaches)
{
        /* Ubuntu 25.04's bwrap-userns-restrict, in short */
        static const char ubuntu[] =
                "abi <abi/4.0>,\ninclude <tunables/global>\n\nprofile bwrap /usr/bin/bwrap "
                "flags=(attach_disconnected,mediate_deleted) {\n  allow capability,\n}\n";
        static const char *const found[] = {
                ubuntu,
                "profile /usr/bin/bwrap {\n}\n",
                "profile /usr/bin/bwrap{\n}\n",
                "/usr/bin/bwrap flags=(complain) {\n}\n",
                "\t/usr/bin/bwrap {\n}\n",
                "profile bwrap /usr/bin/bwrap{\n}",
        };
        static const char *const not_found[] = {
                "# /usr/bin/bwrap is not confined here\n",
                "profile other /usr/bin/bwrap2 {\n}\n",
                "profile other /usr/bin/other {\n  /usr/bin/bwrap ix,\n}\n",
                "profile other /usr/bin/other {\n  /usr/bin/bwrap Px -> bwrap { },\n}\n",
                "profile bwrap /usr/local/bin/bwrap {\n}\n",
                "",
        };

        for (size_t i = 0; i < sizeof(found) / sizeof(found[0]); i++)
                ck_assert_msg(apparmor_text_attaches(found[i], strlen(found[i]), "/usr/bin/bwrap") == 1,
                              "%s", found[i]);
        for (size_t i = 0; i < sizeof(not_found) / sizeof(not_found[0]); i++)
                ck_assert_msg(apparmor_text_attaches(not_found[i], strlen(not_found[i]), "/usr/bin/bwrap") ==
                                      0,
                              "%s", not_found[i]);
}
END_TEST

int main(void)
{
        Suite *s;

        s = suite_create("apparmor-profile");
        TCase *t = tcase_create("apparmor-profile");

        tcase_add_test(t, test_restricted);
        tcase_add_test(t, test_capability_try);
        tcase_add_test(t, test_profile);
        tcase_add_test(t, test_file_is_the_output);
        tcase_add_test(t, test_attaches);
        suite_add_tcase(s, t);
        return check_run(s);
}
