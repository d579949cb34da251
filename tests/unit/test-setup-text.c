/* SPDX-License-Identifier: MIT */
/* The sudo rule, the polkit rule and the cron and at deny lists: the full text of each, the shipped
 * template held equal to the sudo rule, every refusal, and (as root) each sudo rule checked by visudo. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

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
        "Defaults!AGENTIC_JOB_HELPER env_reset, !use_pty, !setenv\n"                                        \
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

static Suite *setup_text_suite(void)
{
        Suite *s = suite_create("setup-text");
        TCase *sudo = tcase_create("sudo"), *polkit = tcase_create("polkit"),
              *lists = tcase_create("cron-at");

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
        return s;
}

int main(void)
{
        return check_run(setup_text_suite());
}
