/* SPDX-License-Identifier: MIT */
/* The sudo rule, the polkit rule and the cron and at deny lists: the full text of each, the shipped
 * template held equal to the sudo rule, every refusal, and (as root) each sudo rule checked by visudo.
 * Then what setup reads: whether /etc/sudoers includes /etc/sudoers.d (as root, each case put to sudo
 * too), which paths `dpkg-query -S` is asked and what its output says, and the runner added to the
 * configuration. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"
#include "read-file.h"
#include "run-tool.h"
#include "setup-text.h"

#define HELPER  "/usr/local/libexec/agentic-job"
#define SANDBOX "runner-sandbox"
#define RUNNER  "runner"

static const char *const visudo_paths[] = { "/usr/sbin/visudo", "/sbin/visudo", "/usr/bin/visudo", NULL };

#define SUDOERS_HEAD                                                                                        \
        "# agentic-job: the runner user may run the helper's four operations as root, and nothing\n"        \
        "# else through this file; the sandbox user may run nothing at all. Written by\n"                   \
        "# `agentic-job sandbox setup` as /etc/sudoers.d/zz-agentic-job (mode 0440; no dot in the\n"        \
        "# name, so sudo reads it; \"zz\" so it is read last and its rules win: sudo applies the\n"         \
        "# last rule that matches).\n"                                                                      \
        "#\n"                                                                                               \
        "# The helper checks every argument itself; the patterns here only keep the runner to the\n"        \
        "# four forms.\n"                                                                                   \
        "Cmnd_Alias AGENTIC_JOB_HELPER = \\\n"                                                              \
        "        /usr/local/libexec/agentic-job helper ping, \\\n"                                          \
        "        /usr/local/libexec/agentic-job helper kill-user, \\\n"                                     \
        "        /usr/local/libexec/agentic-job helper proxy-log --from *, \\\n"                            \
        "        /usr/local/libexec/agentic-job helper enter --chdir *\n"                                   \
        "Defaults!AGENTIC_JOB_HELPER env_reset, !use_pty, !setenv, !log_allowed\n"                          \
        "runner-sandbox ALL=(ALL:ALL) !ALL\n"

#define POLKIT_HEAD                                                                                         \
        "// agentic-job: polkit refuses every action to the users named here (the sandbox user,\n"          \
        "// and the runner once locked), whatever other rules say: polkit takes the first rule\n"           \
        "// that answers, and this file's name sorts first. Written by `agentic-job sandbox setup`.\n"

static void assert_visudo_accepts(const char *text)
{
        if (tool_check_runs("visudo -c", tool_find(visudo_paths)))
                ck_assert_int_eq(tool_run_on_text(tool_find(visudo_paths),
                                                  (const char *const[]){ "-c", "-f", NULL }, text),
                                 0);
}

START_TEST(test_sudoers_locked)
{
        _cleanup_free_ char *text = NULL;
        AjError e = {};

        ck_assert_int_eq(sudoers_text(HELPER, SANDBOX, RUNNER, true, &text, &e), 0);
        ck_assert_str_eq(text, SUDOERS_HEAD
                         "# The lock: the runner's other grants (its own, its groups') end here.\n"
                         "runner ALL=(ALL:ALL) !ALL\n"
                         "runner ALL=(root) NOPASSWD: AGENTIC_JOB_HELPER\n");
        assert_visudo_accepts(text);
}
END_TEST

START_TEST(test_sudoers_unlocked)
{
        _cleanup_free_ char *text = NULL;
        AjError e = {};

        ck_assert_int_eq(sudoers_text(HELPER, SANDBOX, RUNNER, false, &text, &e), 0);
        ck_assert_str_eq(text, SUDOERS_HEAD "runner ALL=(root) NOPASSWD: AGENTIC_JOB_HELPER\n");
        assert_visudo_accepts(text);
}
END_TEST

START_TEST(test_visudo_control)
{
        /* The control: visudo does refuse a broken rule, so its passes above mean something. */
        if (tool_check_runs("visudo -c control", tool_find(visudo_paths)))
                ck_assert_int_ne(
                        tool_run_on_text(tool_find(visudo_paths), (const char *const[]){ "-c", "-f", NULL },
                                         SUDOERS_HEAD "runner ALL=(root NOPASSWD: AGENTIC_JOB_HELPER\n"),
                        0);
}
END_TEST

/* s with every "@NAME@" replaced by value. */
static char *replace_all(const char *s, const char *name, const char *value)
{
        size_t n = 0, ln = strlen(name), lv = strlen(value);
        char *out, *o;

        for (const char *p = strstr(s, name); p; p = strstr(p + ln, name))
                n++;
        out = malloc(strlen(s) + n * lv + 1);
        ck_assert_ptr_nonnull(out);
        o = out;
        for (const char *p; (p = strstr(s, name)); s = p + ln) {
                memcpy(o, s, (size_t)(p - s));
                o += p - s;
                memcpy(o, value, lv);
                o += lv;
        }
        strcpy(o, s);
        return out;
}

START_TEST(test_template_is_the_output)
{
        /* sudoers.d/agentic-job: a comment about the template, a blank line, then exactly the unlocked
         * output with the three placeholders. */
        _cleanup_free_ char *data = NULL, *a = NULL, *b = NULL, *c = NULL, *text = NULL;
        const char *body;
        size_t size = 0;

        ck_assert_int_eq(
                read_regular_nofollow(AT_FDCWD, SOURCE_ROOT "/sudoers.d/agentic-job", 65536, &data, &size),
                0);
        body = strstr(data, "\n\n");
        ck_assert_ptr_nonnull(body);
        a = replace_all(body + 2, "@HELPER@", "/opt/x/helper");
        b = replace_all(a, "@RUNNER@", "ci-runner");
        c = replace_all(b, "@SANDBOX@", "ci-sandbox");
        ck_assert_int_eq(sudoers_text("/opt/x/helper", "ci-sandbox", "ci-runner", false, &text, NULL), 0);
        ck_assert_str_eq(c, text);
}
END_TEST

START_TEST(test_polkit_locked)
{
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(polkit_rules_text(SANDBOX, RUNNER, true, &text, NULL), 0);
        ck_assert_str_eq(text, POLKIT_HEAD
                         "polkit.addRule(function (action, subject) {\n"
                         "        if (subject.user == \"runner-sandbox\" || subject.user == \"runner\") {\n"
                         "                return polkit.Result.NO;\n"
                         "        }\n"
                         "});\n");
}
END_TEST

START_TEST(test_polkit_unlocked)
{
        _cleanup_free_ char *text = NULL, *text2 = NULL;

        /* Unlocked, the runner is not named, and may be absent. */
        ck_assert_int_eq(polkit_rules_text(SANDBOX, NULL, false, &text, NULL), 0);
        ck_assert_str_eq(text, POLKIT_HEAD "polkit.addRule(function (action, subject) {\n"
                                           "        if (subject.user == \"runner-sandbox\") {\n"
                                           "                return polkit.Result.NO;\n"
                                           "        }\n"
                                           "});\n");
        ck_assert_int_eq(polkit_rules_text(SANDBOX, RUNNER, false, &text2, NULL), 0);
        ck_assert_str_eq(text, text2);
}
END_TEST

static const struct {
        const char *helper, *sandbox, *runner;
        const char *message;
} name_refusals[] = {
        { HELPER, "Sandbox", RUNNER, "sandbox user name is not valid" },
        { HELPER, "sb\"", RUNNER, "sandbox user name is not valid" },
        { HELPER, "", RUNNER, "sandbox user name is not valid" },
        { HELPER, NULL, RUNNER, "sandbox user name is not valid" },
        { HELPER, "root", RUNNER, "sandbox user is root" },
        { HELPER, SANDBOX, "run ner", "runner user name is not valid" },
        { HELPER, SANDBOX, "ALL", "runner user name is not valid" },
        { HELPER, SANDBOX, "%sudo", "runner user name is not valid" },
        { HELPER, SANDBOX, NULL, "runner user name is not valid" },
        { HELPER, SANDBOX, "root", "runner user is root" },
        { HELPER, SANDBOX, SANDBOX, "the runner user is the sandbox user" },
        { "relative/helper", SANDBOX, RUNNER, NULL },
        { "/", SANDBOX, RUNNER, NULL },
        { "/usr/../bin/sh", SANDBOX, RUNNER, NULL },
        { "/usr/local/libexec/agentic-job/", SANDBOX, RUNNER, NULL },
        { "/opt/my helper", SANDBOX, RUNNER, NULL },
        { "/opt/helper,ALL", SANDBOX, RUNNER, NULL },
        { "/opt/helper:x", SANDBOX, RUNNER, NULL },
        { "/opt/helper=x", SANDBOX, RUNNER, NULL },
        { "/opt/helper\\", SANDBOX, RUNNER, NULL },
        { "/opt/*", SANDBOX, RUNNER, NULL },
        { "/opt/helper\n", SANDBOX, RUNNER, NULL },
        { NULL, SANDBOX, RUNNER, NULL },
};

START_TEST(test_sudoers_refusals)
{
        char *text = (char *)"untouched";
        AjError e = {};

        ck_assert_int_eq(sudoers_text(name_refusals[_i].helper, name_refusals[_i].sandbox,
                                      name_refusals[_i].runner, true, &text, &e),
                         -EINVAL);
        ck_assert_str_eq(e.message,
                         name_refusals[_i].message
                                 ? name_refusals[_i].message
                                 : "helper path is not a plain absolute path of letters, digits, '/', "
                                   "'.', '_' and '-'");
        ck_assert_str_eq(text, "untouched");
}
END_TEST

START_TEST(test_polkit_refusals)
{
        char *text = (char *)"untouched";
        AjError e = {};

        if (!name_refusals[_i].message) /* a helper path: polkit does not take one */
                return;
        ck_assert_int_eq(
                polkit_rules_text(name_refusals[_i].sandbox, name_refusals[_i].runner, true, &text, &e),
                -EINVAL);
        ck_assert_str_eq(e.message, name_refusals[_i].message);
        ck_assert_str_eq(text, "untouched");

        /* Unlocked, only the sandbox user is checked. */
        if (strncmp(name_refusals[_i].message, "sandbox", 7) == 0) {
                ck_assert_int_eq(polkit_rules_text(name_refusals[_i].sandbox, NULL, false, &text, &e),
                                 -EINVAL);
                ck_assert_str_eq(e.message, name_refusals[_i].message);
        }
}
END_TEST

/* ---- cron and at ---- */

#define ABSENT NULL
#define WRITE  true
#define KEEP   false

typedef struct DenyCase {
        DenyListKind kind;
        const char *allow, *deny;
        bool write;
        const char *text; /* when write */
        const char *reason;
} DenyCase;

static const DenyCase deny_cases[] = {
        /* Neither list: cron admits everyone, so a deny list is made; at admits root alone already. */
        { DENY_LIST_CRON, ABSENT, ABSENT, WRITE, "runner-sandbox\n",
          "the deny list is created with the user" },
        { DENY_LIST_AT, ABSENT, ABSENT, KEEP, NULL, "with neither list, at admits root alone" },
        /* A deny list without the user: appended, after a newline when the last line had none. */
        { DENY_LIST_CRON, ABSENT, "", WRITE, "runner-sandbox\n", "the user is appended to the deny list" },
        { DENY_LIST_AT, ABSENT, "daemon\nbin\n", WRITE, "daemon\nbin\nrunner-sandbox\n",
          "the user is appended to the deny list" },
        { DENY_LIST_AT, ABSENT, "daemon\nbin", WRITE, "daemon\nbin\nrunner-sandbox\n",
          "the user is appended to the deny list" },
        { DENY_LIST_CRON, ABSENT, "# comment\r\nnobody\r\n", WRITE,
          "# comment\r\nnobody\r\nrunner-sandbox\n", "the user is appended to the deny list" },
        /* Lines that are not exactly the user, newline-terminated, do not count as listing it. */
        { DENY_LIST_CRON, ABSENT, "runner-sandbox", WRITE, "runner-sandbox\nrunner-sandbox\n",
          "the user is appended to the deny list" },
        { DENY_LIST_CRON, ABSENT, " runner-sandbox\n", WRITE, " runner-sandbox\nrunner-sandbox\n",
          "the user is appended to the deny list" },
        { DENY_LIST_CRON, ABSENT, "runner-sandbox \n", WRITE, "runner-sandbox \nrunner-sandbox\n",
          "the user is appended to the deny list" },
        { DENY_LIST_CRON, ABSENT, "runner-sandbox2\nrunner\n", WRITE,
          "runner-sandbox2\nrunner\nrunner-sandbox\n", "the user is appended to the deny list" },
        /* Listed already. */
        { DENY_LIST_CRON, ABSENT, "runner-sandbox\n", KEEP, NULL, "the deny list lists the user already" },
        { DENY_LIST_AT, ABSENT, "daemon\nrunner-sandbox\nbin", KEEP, NULL,
          "the deny list lists the user already" },
        /* An allow list decides alone: the deny list is not read. */
        { DENY_LIST_CRON, "", ABSENT, KEEP, NULL, "the allow list exists and does not list the user" },
        { DENY_LIST_CRON, "runner\n", "x\n", KEEP, NULL,
          "the allow list exists and does not list the user" },
        { DENY_LIST_AT, "runner-sandboxes\n", ABSENT, KEEP, NULL,
          "the allow list exists and does not list the user" },
};

START_TEST(test_deny_lists)
{
        const DenyCase *c = &deny_cases[_i];
        _cleanup_(deny_list_decision_done) DenyListDecision d = {};
        AjError e = {};
        int r;

        r = deny_list_decide(c->kind, SANDBOX, c->allow, c->allow ? strlen(c->allow) : 0, c->deny,
                             c->deny ? strlen(c->deny) : 0, &d, &e);
        ck_assert_msg(r == 0, "refused: %s", e.message);
        ck_assert_int_eq(d.write, c->write);
        if (c->write) {
                ck_assert_str_eq(d.deny_text, c->text);
                ck_assert_uint_eq(d.deny_size, strlen(c->text));
        } else
                ck_assert_ptr_null(d.deny_text);
        ck_assert_str_eq(d.reason, c->reason);
}
END_TEST

START_TEST(test_deny_list_refusals)
{
        static const char *const allows[] = {
                "runner-sandbox\n",
                "root\nrunner-sandbox",
                "  runner-sandbox \r\n",
                "\trunner-sandbox\t\n",
        };
        DenyListDecision d = {};
        AjError e = {};

        /* An allow list naming the user: setup does not edit it, and says so. */
        for (size_t i = 0; i < ELEMENTSOF(allows); i++) {
                ck_assert_int_eq(deny_list_decide(DENY_LIST_CRON, SANDBOX, allows[i], strlen(allows[i]),
                                                  NULL, 0, &d, &e),
                                 -EPERM);
                ck_assert_str_eq(e.message, "/etc/cron.allow lists runner-sandbox");
                ck_assert_int_eq(
                        deny_list_decide(DENY_LIST_AT, SANDBOX, allows[i], strlen(allows[i]), "", 0, &d, &e),
                        -EPERM);
                ck_assert_str_eq(e.message, "/etc/at.allow lists runner-sandbox");
                ck_assert(!d.write);
                ck_assert_ptr_null(d.deny_text);
        }
        ck_assert_int_eq(deny_list_decide(DENY_LIST_CRON, "root", NULL, 0, NULL, 0, &d, &e), -EINVAL);
        ck_assert_str_eq(e.message, "the user is root");
        ck_assert_int_eq(deny_list_decide(DENY_LIST_CRON, "a\nb", NULL, 0, NULL, 0, &d, &e), -EINVAL);
        ck_assert_str_eq(e.message, "the user name is not valid");
}
END_TEST

START_TEST(test_deny_list_paths)
{
        ck_assert_str_eq(deny_list_allow_path(DENY_LIST_CRON), "/etc/cron.allow");
        ck_assert_str_eq(deny_list_deny_path(DENY_LIST_CRON), "/etc/cron.deny");
        ck_assert_str_eq(deny_list_allow_path(DENY_LIST_AT), "/etc/at.allow");
        ck_assert_str_eq(deny_list_deny_path(DENY_LIST_AT), "/etc/at.deny");
}
END_TEST

/* ---- what setup reads: /etc/sudoers, `dpkg-query -S`, the configuration ---- */

/* Debian 12's /etc/sudoers as the sudo package (1.9.13p3-1+deb12u4) installs it: the include at the end,
 * and "@include" also in a comment just above it. */
#define DEBIAN_SUDOERS                                                                                      \
        "#\n"                                                                                               \
        "# This file MUST be edited with the 'visudo' command as root.\n"                                   \
        "#\n"                                                                                               \
        "# Please consider adding local content in /etc/sudoers.d/ instead of\n"                            \
        "# directly modifying this file.\n"                                                                 \
        "#\n"                                                                                               \
        "# See the man page for details on how to write a sudoers file.\n"                                  \
        "#\n"                                                                                               \
        "Defaults\tenv_reset\n"                                                                             \
        "Defaults\tmail_badpass\n"                                                                          \
        "Defaults\tsecure_path=\"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"\n"          \
        "\n"                                                                                                \
        "# This fixes CVE-2005-4890 and possibly breaks some versions of kdesu\n"                           \
        "# (#1011624, https://bugs.kde.org/show_bug.cgi?id=452532)\n"                                       \
        "Defaults\tuse_pty\n"                                                                               \
        "\n"                                                                                                \
        "# This preserves proxy settings from user environments of root\n"                                  \
        "# equivalent users (group sudo)\n"                                                                 \
        "#Defaults:%sudo env_keep += \"http_proxy https_proxy ftp_proxy all_proxy no_proxy\"\n"             \
        "\n"                                                                                                \
        "# This allows running arbitrary commands, but so does ALL, and it means\n"                         \
        "# different sudoers have their choice of editor respected.\n"                                      \
        "#Defaults:%sudo env_keep += \"EDITOR\"\n"                                                          \
        "\n"                                                                                                \
        "# Completely harmless preservation of a user preference.\n"                                        \
        "#Defaults:%sudo env_keep += \"GREP_COLOR\"\n"                                                      \
        "\n"                                                                                                \
        "# While you shouldn't normally run git as root, you need to with etckeeper\n"                      \
        "#Defaults:%sudo env_keep += \"GIT_AUTHOR_* GIT_COMMITTER_*\"\n"                                    \
        "\n"                                                                                                \
        "# Per-user preferences; root won't have sensible values for them.\n"                               \
        "#Defaults:%sudo env_keep += \"EMAIL DEBEMAIL DEBFULLNAME\"\n"                                      \
        "\n"                                                                                                \
        "# \"sudo scp\" or \"sudo rsync\" should be able to use your SSH agent.\n"                          \
        "#Defaults:%sudo env_keep += \"SSH_AGENT_PID SSH_AUTH_SOCK\"\n"                                     \
        "\n"                                                                                                \
        "# Ditto for GPG agent\n"                                                                           \
        "#Defaults:%sudo env_keep += \"GPG_AGENT_INFO\"\n"                                                  \
        "\n"                                                                                                \
        "# Host alias specification\n"                                                                      \
        "\n"                                                                                                \
        "# User alias specification\n"                                                                      \
        "\n"                                                                                                \
        "# Cmnd alias specification\n"                                                                      \
        "\n"                                                                                                \
        "# User privilege specification\n"                                                                  \
        "root\tALL=(ALL:ALL) ALL\n"                                                                         \
        "\n"                                                                                                \
        "# Allow members of group sudo to execute any command\n"                                            \
        "%sudo\tALL=(ALL:ALL) ALL\n"                                                                        \
        "\n"                                                                                                \
        "# See sudoers(5) for more information on \"@include\" directives:\n"                               \
        "\n"                                                                                                \
        "@includedir /etc/sudoers.d\n"

#define READ     true
#define NOT_READ false

typedef struct IncludeCase {
        const char *text;
        bool read; /* whether sudo reads the files in /etc/sudoers.d */
} IncludeCase;

static const IncludeCase include_cases[] = {
        { DEBIAN_SUDOERS, READ },
        /* The older form, as Debian wrote it before sudo 1.9.1. */
        { "root\tALL=(ALL:ALL) ALL\n\n#includedir /etc/sudoers.d\n", READ },
        { "@includedir /etc/sudoers.d\n", READ },
        /* Blanks: before "@includedir", between the words, after the directory; trailing '/'s. */
        { "  @includedir /etc/sudoers.d\n", READ },
        { "\t@includedir /etc/sudoers.d\n", READ },
        { "@includedir\t/etc/sudoers.d\n", READ },
        { "#includedir\t/etc/sudoers.d\n", READ },
        { "@includedir \t /etc/sudoers.d\n", READ },
        { "@includedir /etc/sudoers.d/\n", READ },
        { "@includedir /etc/sudoers.d//\n", READ },
        { "@includedir /etc/sudoers.d \t\n", READ },
        { "@includedir /etc/sudoers.d/ \n", READ },
        { "#includedir /etc/sudoers.d/\t\n", READ },
        /* Not the last line; the last line without a newline. */
        { "@includedir /etc/sudoers.d\nroot ALL=(ALL:ALL) ALL\n", READ },
        { "@includedir /etc/sudoers.d2\n@includedir /etc/sudoers.d\n", READ },
        { "root ALL=(ALL:ALL) ALL\n@includedir /etc/sudoers.d", READ },
        { "#includedir /etc/sudoers.d", READ },

        /* Comments. */
        { "# @includedir /etc/sudoers.d\n", NOT_READ },
        { "#@includedir /etc/sudoers.d\n", NOT_READ },
        { "## @includedir /etc/sudoers.d\n", NOT_READ },
        { "# includedir /etc/sudoers.d\n", NOT_READ },
        { "#includedir/etc/sudoers.d\n", NOT_READ },
        { "#includedir\n", NOT_READ },
        /* sudo takes "#includedir" only at the very start of a line (toke.l: ^#includedir[[:blank:]]+):
         * after blanks it is a comment, and the directory is not read. */
        { "  #includedir /etc/sudoers.d\n", NOT_READ },
        { "\t#includedir /etc/sudoers.d\n", NOT_READ },
        /* Another directory, one with the same start, one that starts it. */
        { "@includedir /etc/sudoers.d2\n", NOT_READ },
        { "@includedir /etc/sudoers.d.old\n", NOT_READ },
        { "@includedir /etc/sudoers\n", NOT_READ },
        { "@includedir /etc/sudoers.d/sub\n", NOT_READ },
        { "@includedir /usr/local/etc/sudoers.d\n", NOT_READ },
        { "#includedir /etc/sudoers.d2", NOT_READ },
        /* A file, not a directory. */
        { "@include /etc/sudoers.d\n", NOT_READ },
        /* Without it. */
        { "", NOT_READ },
        { "\n", NOT_READ },
        { "root ALL=(ALL:ALL) ALL\n", NOT_READ },
        { "root ALL=(ALL:ALL) ALL\n# See sudoers(5) for more information on \"@include\" directives:\n",
          NOT_READ },
};

/* As root, each case is also put to sudo itself: /etc/sudoers.d becomes a directory holding one broken
 * rule, and visudo -c fails if and only if it reads it. The control, with an empty directory instead,
 * must pass: a text sudo refuses whole (no matter its includes) is not compared. */
static char include_dir[] = "/tmp/agentic-job-test-incdir-XXXXXX";
static char empty_dir[] = "/tmp/agentic-job-test-noinc-XXXXXX";

static void include_dirs_setup(void)
{
        char path[sizeof(include_dir) + 8];
        FILE *f;

        ck_assert_ptr_nonnull(mkdtemp(include_dir));
        ck_assert_ptr_nonnull(mkdtemp(empty_dir));
        (void)snprintf(path, sizeof(path), "%s/broken", include_dir);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs("runner ALL=(root NOPASSWD: BROKEN\n", f), 0);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(chmod(path, 0440), 0);
}

static void include_dirs_teardown(void)
{
        char path[sizeof(include_dir) + 8];

        (void)snprintf(path, sizeof(path), "%s/broken", include_dir);
        (void)unlink(path);
        (void)rmdir(include_dir);
        (void)rmdir(empty_dir);
}

START_TEST(test_sudoers_includes_dir)
{
        const IncludeCase *c = &include_cases[_i];
        const char *const args[] = { "-c", "-f", NULL };

        if (tool_check_runs("visudo -c (does sudo read the directory?)", tool_find(visudo_paths))) {
                _cleanup_free_ char *control = replace_all(c->text, "/etc/sudoers.d", empty_dir);
                _cleanup_free_ char *probe = replace_all(c->text, "/etc/sudoers.d", include_dir);

                if (tool_run_on_text(tool_find(visudo_paths), args, control) == 0)
                        ck_assert_msg((tool_run_on_text(tool_find(visudo_paths), args, probe) != 0) ==
                                              c->read,
                                      "case %d: the table says sudo %s the directory, visudo does not agree",
                                      _i, c->read ? "reads" : "does not read");
        }
        ck_assert_msg(sudoers_includes_dir(c->text, "/etc/sudoers.d") == c->read,
                      "case %d: sudoers_includes_dir() says %s for \"%s\"", _i, c->read ? "no" : "yes",
                      c->text);
}
END_TEST

START_TEST(test_sudoers_includes_dir_asked)
{
        /* The directory asked about is a prefix of the one included, or the other way round. */
        ck_assert(!sudoers_includes_dir(DEBIAN_SUDOERS, "/etc/sudoers"));
        ck_assert(!sudoers_includes_dir(DEBIAN_SUDOERS, "/etc/sudoers."));
        ck_assert(!sudoers_includes_dir(DEBIAN_SUDOERS, "/etc"));
        ck_assert(sudoers_includes_dir("@includedir /etc/sudoers.d2\n", "/etc/sudoers.d2"));
        ck_assert(!sudoers_includes_dir("@includedir /etc/sudoers.d2\n", "/etc/sudoers.d"));
        ck_assert(
                sudoers_includes_dir("@includedir /usr/local/etc/sudoers.d\n", "/usr/local/etc/sudoers.d"));
}
END_TEST

static const struct {
        const char *text;
        unsigned line;
} after_cases[] = {
        { DEBIAN_SUDOERS, 0 },
        { "@includedir /etc/sudoers.d\n", 0 },
        { "root ALL=(ALL) ALL\n@includedir /etc/sudoers.d\n", 0 },
        { "@includedir /etc/sudoers.d\n\n# a comment\n\t\n", 0 },
        { "@includedir /etc/sudoers.d\nDefaults env_reset\nDefaults:runner !lecture\n", 0 },
        { "@includedir /etc/sudoers.d\nDefaults secure_path=\"/bin:\\\n  /usr/bin\"\n", 0 },
        { "@includedir /etc/sudoers.d\nrunner ALL=(ALL) NOPASSWD: ALL\n", 2 },
        { "@includedir /etc/sudoers.d\n\n%sudo ALL=(ALL:ALL) ALL", 3 },
        { "#includedir /etc/sudoers.d\n  runner ALL=(ALL) ALL\n", 2 },
        { "@includedir /etc/sudoers.d\n@include /etc/sudoers.late\n", 2 },
        { "@includedir /etc/sudoers.d\n#include /etc/sudoers.late\n", 2 },
        { "@includedir /etc/sudoers.d\nCmnd_Alias X = /bin/true\n", 2 },
        /* No include: nothing is after it (sudoers_d_check() refuses that on its own). */
        { "runner ALL=(ALL) ALL\n", 0 },
        { "", 0 },
};

START_TEST(test_sudoers_rule_after_dir)
{
        const __typeof__(after_cases[0]) *c = &after_cases[_i];

        ck_assert_msg(sudoers_rule_after_dir(c->text, "/etc/sudoers.d") == c->line,
                      "case %d: got line %u, not %u", _i, sudoers_rule_after_dir(c->text, "/etc/sudoers.d"),
                      c->line);
}
END_TEST

START_TEST(test_package_query_literal)
{
        static const char *const literal[] = {
                "/usr/bin/sudo",
                "/bin/su",
                "/usr/lib/dbus-1.0/dbus-daemon-launch-helper",
                "/usr/lib/x86_64-linux-gnu/utempter/utempter",
                "/opt/my tool/bin/x",
                "/opt/a:b/c,d",
                "/",
        };
        static const char *const not_literal[] = {
                "",
                "usr/bin/sudo",
                "sudo",
                "./sudo",
                " /usr/bin/sudo",
                "*/sudo",
                "/usr/bin/*",
                "/usr/bin/su?o",
                "/usr/bin/[s]udo",
                "/usr/bin/s[udo",
                "/usr/bin/s]udo",
                "/usr/bin/s\\udo",
                "/usr/bin/sudo\\",
                "/usr/bin/sudo\n",
                "/usr/bin/a\nsudo: /usr/bin/sudo",
        };

        for (size_t i = 0; i < ELEMENTSOF(literal); i++)
                ck_assert_msg(package_query_literal(literal[i]), "refused: \"%s\"", literal[i]);
        for (size_t i = 0; i < ELEMENTSOF(not_literal); i++)
                ck_assert_msg(!package_query_literal(not_literal[i]), "accepted: \"%s\"", not_literal[i]);
}
END_TEST

/* `dpkg-query -S /usr/bin/sudo /bin/su` on Debian 12, and `dpkg-query -S /bin/sh`, word for word. */
#define DPKG_SUDO_SU   "sudo: /usr/bin/sudo\nutil-linux: /bin/su\n"
#define DPKG_SH        "diversion by dash from: /bin/sh\ndiversion by dash to: /bin/sh.distrib\ndash: /bin/sh\n"
#define DIVERSION_ONLY "diversion by dash from: /bin/sh\ndiversion by dash to: /bin/sh.distrib\n"
/* dpkg-divert --local: dpkg-query prints "local diversion from/to" (dpkg's src/query/main.c). */
#define LOCAL_DIVERSION "local diversion from: /usr/bin/x\nlocal diversion to: /usr/bin/x.real\n"

#define LISTED     true
#define NOT_LISTED false

static const struct {
        const char *out, *path;
        bool listed;
} dpkg_cases[] = {
        { DPKG_SUDO_SU, "/usr/bin/sudo", LISTED },
        { DPKG_SUDO_SU, "/bin/su", LISTED },
        /* A prefix of a listed path, and a path a listed one is a prefix of. */
        { DPKG_SUDO_SU, "/usr/bin/su", NOT_LISTED },
        { DPKG_SUDO_SU, "/usr/bin/sud", NOT_LISTED },
        { DPKG_SUDO_SU, "/bin/s", NOT_LISTED },
        { DPKG_SUDO_SU, "/", NOT_LISTED },
        { DPKG_SUDO_SU, "/usr/bin/sudoedit", NOT_LISTED },
        { DPKG_SUDO_SU, "/bin/sudo", NOT_LISTED },
        { DPKG_SUDO_SU, "/bin/su/x", NOT_LISTED },
        { DPKG_SUDO_SU, "bin/su", NOT_LISTED },
        { DPKG_SUDO_SU, "/bin/su\n", NOT_LISTED },
        /* The last line without a newline; the order does not matter. */
        { "sudo: /usr/bin/sudo", "/usr/bin/sudo", LISTED },
        { "util-linux: /bin/su\nsudo: /usr/bin/sudo", "/usr/bin/sudo", LISTED },
        { "util-linux: /bin/su\nsudo: /usr/bin/sudo", "/bin/su", LISTED },
        /* Several packages, and multiarch names (which hold a ':' of their own). */
        { "a, b: /usr/bin/x\n", "/usr/bin/x", LISTED },
        { "sudo: /usr/bin/sudo\nlibc-bin, locales-all: /usr/bin/x\n", "/usr/bin/x", LISTED },
        { "libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6\n", "/lib/x86_64-linux-gnu/libc.so.6", LISTED },
        { "libc6:amd64, libc6:i386: /usr/share/doc/libc6\n", "/usr/share/doc/libc6", LISTED },
        /* Diversions: only the owner's line counts. */
        { DPKG_SH, "/bin/sh", LISTED },
        { DPKG_SH, "/bin/sh.distrib", NOT_LISTED },
        { DIVERSION_ONLY, "/bin/sh", NOT_LISTED },
        { DIVERSION_ONLY, "/bin/sh.distrib", NOT_LISTED },
        { LOCAL_DIVERSION, "/usr/bin/x", NOT_LISTED },
        { LOCAL_DIVERSION, "/usr/bin/x.real", NOT_LISTED },
        { LOCAL_DIVERSION "coreutils: /usr/bin/x\n", "/usr/bin/x", LISTED },
        /* Nothing, or no package on the line. */
        { "", "/usr/bin/sudo", NOT_LISTED },
        { "\n", "/usr/bin/sudo", NOT_LISTED },
        { ": /usr/bin/x\n", "/usr/bin/x", NOT_LISTED },
        { "sudo: /usr/bin/sudo\n: /usr/bin/x\n", "/usr/bin/x", NOT_LISTED },
        { ": /usr/bin/x", "/usr/bin/x", NOT_LISTED },
        /* Not the "PACKAGE: PATH" form. */
        { "sudo /usr/bin/sudo\n", "/usr/bin/sudo", NOT_LISTED },
        { "sudo:/usr/bin/sudo\n", "/usr/bin/sudo", NOT_LISTED },
        { "sudo: /usr/bin/sudo \n", "/usr/bin/sudo", NOT_LISTED },
        { "dpkg-query: no path found matching pattern /usr/bin/x\n", "/usr/bin/x", NOT_LISTED },
        /* A line without the separator, before one with it. */
        { "garbage\nsudo: /usr/bin/sudo\n", "/usr/bin/sudo", LISTED },
        /* A path that holds ": /": the first one ends the package names. */
        { "pkg: /opt/a: /usr/bin/sudo\n", "/opt/a: /usr/bin/sudo", LISTED },
        { "pkg: /opt/a: /usr/bin/sudo\n", "/usr/bin/sudo", NOT_LISTED },
};

START_TEST(test_dpkg_query_lists)
{
        ck_assert_msg(dpkg_query_lists(dpkg_cases[_i].out, dpkg_cases[_i].path) == dpkg_cases[_i].listed,
                      "case %d: %s taken as %s in \"%s\"", _i, dpkg_cases[_i].path,
                      dpkg_cases[_i].listed ? "not listed" : "listed", dpkg_cases[_i].out);
}
END_TEST

/* ---- config_add_runner() ---- */

#define RUNNER_LINE "runner-user = \"ci-runner\" # from SUDO_USER, added by setup\n"

typedef struct RunnerCase {
        const char *in, *out;
} RunnerCase;

static const RunnerCase runner_cases[] = {
        /* Right after the header. */
        { "[sandbox]\nuser = \"ci-sandbox\"\n", "[sandbox]\n" RUNNER_LINE "user = \"ci-sandbox\"\n" },
        { "[sandbox]\n", "[sandbox]\n" RUNNER_LINE },
        { "# agentic-job\n[sandbox]\nuser = \"ci-sandbox\"\ngroups = [\"kvm\", "
          "\"video\"]\n\n[egress]\nproxy = false\n",
          "# agentic-job\n[sandbox]\n" RUNNER_LINE
          "user = \"ci-sandbox\"\ngroups = [\"kvm\", \"video\"]\n\n[egress]\nproxy = false\n" },
        { "[egress]\nproxy = false\n\n[sandbox]\nuser = \"ci-sandbox\"\nlock-runner = false\n",
          "[egress]\nproxy = false\n\n[sandbox]\n" RUNNER_LINE
          "user = \"ci-sandbox\"\nlock-runner = false\n" },
        /* A comment after the header; blanks around it. */
        { "[sandbox] # who runs what\nuser = \"ci-sandbox\"\n",
          "[sandbox] # who runs what\n" RUNNER_LINE "user = \"ci-sandbox\"\n" },
        { "[sandbox]#\nuser = \"ci-sandbox\"\n", "[sandbox]#\n" RUNNER_LINE "user = \"ci-sandbox\"\n" },
        { "  [sandbox]\t# x\nuser = \"ci-sandbox\"\n",
          "  [sandbox]\t# x\n" RUNNER_LINE "user = \"ci-sandbox\"\n" },
        { "\t[sandbox]  \t\nuser = \"ci-sandbox\"\n",
          "\t[sandbox]  \t\n" RUNNER_LINE "user = \"ci-sandbox\"\n" },
        /* CRLF lines. */
        { "[sandbox]\r\nuser = \"ci-sandbox\"\r\n",
          "[sandbox]\r\n" RUNNER_LINE "user = \"ci-sandbox\"\r\n" },
        { "[sandbox] # c\r\nuser = \"ci-sandbox\"\r\n",
          "[sandbox] # c\r\n" RUNNER_LINE "user = \"ci-sandbox\"\r\n" },
        /* The header as the last line, without a newline. */
        { "[sandbox]", "[sandbox]\n" RUNNER_LINE },
        { "[egress]\nproxy = false\n[sandbox]", "[egress]\nproxy = false\n[sandbox]\n" RUNNER_LINE },
        { "[egress]\nproxy = false\n[sandbox] # last",
          "[egress]\nproxy = false\n[sandbox] # last\n" RUNNER_LINE },
        /* No [sandbox] table: a new one at the end, after a newline if the text lacks its last. */
        { "", "\n[sandbox]\n" RUNNER_LINE },
        { "# nothing here\n", "# nothing here\n\n[sandbox]\n" RUNNER_LINE },
        { "[egress]\nproxy = false\n", "[egress]\nproxy = false\n\n[sandbox]\n" RUNNER_LINE },
        { "[egress]\nproxy = false", "[egress]\nproxy = false\n\n[sandbox]\n" RUNNER_LINE },
        { "# [sandbox]\n[egress]\nproxy = false\n",
          "# [sandbox]\n[egress]\nproxy = false\n\n[sandbox]\n" RUNNER_LINE },
        /* [sandbox.env] is not the header; a later [sandbox] may still define the table. */
        { "[sandbox.env]\nFOO = \"bar\"\n", "[sandbox.env]\nFOO = \"bar\"\n\n[sandbox]\n" RUNNER_LINE },
        { "[sandbox.env]\nFOO = \"bar\"\n[sandbox]\nuser = \"ci-sandbox\"\n",
          "[sandbox.env]\nFOO = \"bar\"\n[sandbox]\n" RUNNER_LINE "user = \"ci-sandbox\"\n" },
};

static bool strv_same(char *const *a, char *const *b)
{
        size_t n = strv_length(a);

        if (n != strv_length(b))
                return false;
        for (size_t i = 0; i < n; i++)
                if (strcmp(a[i], b[i]) != 0)
                        return false;
        return true;
}

/* Every key but runner-user. */
static void assert_config_same(const Config *a, const Config *b)
{
        ck_assert_str_eq(a->sandbox_user, b->sandbox_user);
        ck_assert(strv_same(a->sandbox_groups, b->sandbox_groups));
        ck_assert_int_eq(a->allow_existing_user, b->allow_existing_user);
        ck_assert_int_eq(a->lock_runner, b->lock_runner);
        ck_assert(strv_same(a->private_dirs, b->private_dirs));
        ck_assert(strv_same(a->stop_services, b->stop_services));
        ck_assert(strv_same(a->env, b->env));
        ck_assert_int_eq(a->enter, b->enter);
        ck_assert_int_eq(a->egress_proxy, b->egress_proxy);
}

START_TEST(test_config_add_runner)
{
        const RunnerCase *c = &runner_cases[_i];
        _cleanup_(config_freep) Config *before = NULL, *after = NULL;
        _cleanup_free_ char *out = NULL;
        size_t size = 0;
        AjError e = {};

        ck_assert_int_eq(config_add_runner(c->in, strlen(c->in), "ci-runner", &out, &size), 0);
        ck_assert_str_eq(out, c->out);
        ck_assert_uint_eq(size, strlen(c->out));

        /* The result is a configuration, with the runner and everything else as it was. */
        ck_assert_msg(config_parse(c->in, strlen(c->in), &before, &e) == 0, "the input: %s", e.message);
        ck_assert_ptr_null(before->runner_user);
        ck_assert_msg(config_parse(out, size, &after, &e) == 0, "the output, %u:%u: %s", e.line, e.column,
                      e.message);
        ck_assert_str_eq(after->runner_user, "ci-runner");
        assert_config_same(before, after);
        if (strstr(c->in, "ci-sandbox"))
                ck_assert_str_eq(after->sandbox_user, "ci-sandbox");
}
END_TEST

START_TEST(test_config_add_runner_not_the_header)
{
        /* Headers that are not [sandbox]'s (not the configuration's tables either, so not parsed): the
         * line goes into a new table at the end. */
        static const RunnerCase cases[] = {
                { "[sandbox.check]\nx = 1\n", "[sandbox.check]\nx = 1\n\n[sandbox]\n" RUNNER_LINE },
                { "[sandboxes]\nx = 1\n", "[sandboxes]\nx = 1\n\n[sandbox]\n" RUNNER_LINE },
                { "[sandboxes]", "[sandboxes]\n\n[sandbox]\n" RUNNER_LINE },
                { "[[sandbox]]\n", "[[sandbox]]\n\n[sandbox]\n" RUNNER_LINE },
                { "#[sandbox]\n", "#[sandbox]\n\n[sandbox]\n" RUNNER_LINE },
                { "[sandbox] x = 1\n", "[sandbox] x = 1\n\n[sandbox]\n" RUNNER_LINE },
                { "x = \"[sandbox]\"\n", "x = \"[sandbox]\"\n\n[sandbox]\n" RUNNER_LINE },
                /* Only the real one is taken, after the others. */
                { "[sandboxes]\n[sandbox.check]\n[sandbox]\nx = 1\n",
                  "[sandboxes]\n[sandbox.check]\n[sandbox]\n" RUNNER_LINE "x = 1\n" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = NULL;
                size_t size = 0;

                ck_assert_int_eq(
                        config_add_runner(cases[i].in, strlen(cases[i].in), "ci-runner", &out, &size), 0);
                ck_assert_str_eq(out, cases[i].out);
                ck_assert_uint_eq(size, strlen(cases[i].out));
        }
}
END_TEST

START_TEST(test_config_add_runner_size)
{
        /* Only size bytes are the text: a header after them is not there. */
        static const char text[] = "[egress]\nproxy = false\n[sandbox]\nuser = \"ci-sandbox\"\n";
        _cleanup_free_ char *out = NULL;
        size_t size = 0;

        ck_assert_int_eq(
                config_add_runner(text, strlen("[egress]\nproxy = false\n"), "ci-runner", &out, &size), 0);
        ck_assert_str_eq(out, "[egress]\nproxy = false\n\n[sandbox]\n" RUNNER_LINE);
        ck_assert_uint_eq(size, strlen(out));
}
END_TEST

START_TEST(test_config_add_runner_size_cut)
{
        /* Nor is a header that the end of the text cuts short: the text is "[sand", the bytes after it
         * are not the text's (here they happen to complete the header). */
        static const char text[] = "[sandbox]\nuser = \"ci-sandbox\"\n";
        _cleanup_free_ char *out2 = NULL;
        size_t size2 = 0;

        ck_assert_int_eq(config_add_runner(text, 5, "ci-runner", &out2, &size2), 0);
        ck_assert_str_eq(out2, "[sand\n\n[sandbox]\n" RUNNER_LINE);
        ck_assert_uint_eq(size2, strlen(out2));
}
END_TEST

START_TEST(test_config_add_runner_refusals)
{
        static const char *const names[] = {
                "",           "Runner",      "ci runner",
                "ci\"runner", "ci-runner\n", "ci-runner\" # x",
                "-runner",    "1runner",     "abcdefghijklmnopqrstuvwxyzabcdefg", /* 33 */
                NULL,
        };
        char *out = (char *)"untouched";
        size_t size = 7;

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                ck_assert_int_eq(config_add_runner("[sandbox]\n", 10, names[i], &out, &size), -EINVAL);
                ck_assert_int_eq(config_add_runner("", 0, names[i], &out, &size), -EINVAL);
                ck_assert_str_eq(out, "untouched");
                ck_assert_uint_eq(size, 7);
        }
        /* The longest name that is valid: 32. */
        {
                _cleanup_free_ char *ok = NULL;

                ck_assert_int_eq(
                        config_add_runner("[sandbox]\n", 10, "abcdefghijklmnopqrstuvwxyzabcdef", &ok, &size),
                        0);
                ck_assert_str_eq(ok, "[sandbox]\nrunner-user = \"abcdefghijklmnopqrstuvwxyzabcdef\" # from "
                                     "SUDO_USER, added by setup\n");
        }
}
END_TEST

static Suite *setup_text_suite(void)
{
        Suite *s = suite_create("setup-text");
        TCase *sudo = tcase_create("sudo"), *polkit = tcase_create("polkit"),
              *lists = tcase_create("cron-at"), *system = tcase_create("system"),
              *config = tcase_create("config");

        tcase_set_timeout(sudo, 60); /* visudo, under valgrind */
        tcase_add_test(sudo, test_sudoers_locked);
        tcase_add_test(sudo, test_sudoers_unlocked);
        tcase_add_test(sudo, test_visudo_control);
        tcase_add_test(sudo, test_template_is_the_output);
        tcase_add_loop_test(sudo, test_sudoers_refusals, 0, (int)ELEMENTSOF(name_refusals));
        suite_add_tcase(s, sudo);
        tcase_add_test(polkit, test_polkit_locked);
        tcase_add_test(polkit, test_polkit_unlocked);
        tcase_add_loop_test(polkit, test_polkit_refusals, 0, (int)ELEMENTSOF(name_refusals));
        suite_add_tcase(s, polkit);
        tcase_add_loop_test(lists, test_deny_lists, 0, (int)ELEMENTSOF(deny_cases));
        tcase_add_test(lists, test_deny_list_refusals);
        tcase_add_test(lists, test_deny_list_paths);
        suite_add_tcase(s, lists);
        tcase_set_timeout(system, 120); /* visudo twice per case, under valgrind */
        tcase_add_unchecked_fixture(system, include_dirs_setup, include_dirs_teardown);
        tcase_add_loop_test(system, test_sudoers_includes_dir, 0, (int)ELEMENTSOF(include_cases));
        tcase_add_test(system, test_sudoers_includes_dir_asked);
        tcase_add_loop_test(system, test_sudoers_rule_after_dir, 0, (int)ELEMENTSOF(after_cases));
        tcase_add_test(system, test_package_query_literal);
        tcase_add_loop_test(system, test_dpkg_query_lists, 0, (int)ELEMENTSOF(dpkg_cases));
        suite_add_tcase(s, system);
        tcase_add_loop_test(config, test_config_add_runner, 0, (int)ELEMENTSOF(runner_cases));
        tcase_add_test(config, test_config_add_runner_not_the_header);
        tcase_add_test(config, test_config_add_runner_size);
        tcase_add_test(config, test_config_add_runner_size_cut);
        tcase_add_test(config, test_config_add_runner_refusals);
        suite_add_tcase(s, config);
        return s;
}

int main(void)
{
        return check_run(setup_text_suite());
}
