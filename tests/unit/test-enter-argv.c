/* SPDX-License-Identifier: MIT */
/* enter_line_build() and sandbox_env_build(): the exact run0 and systemd-run command lines, and the exact
 * environment of a sandbox command. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "egress-env.h"
#include "helper.h"
#include "macro.h"
#include "sandbox-env.h"

#define RUN0        "/usr/bin/run0"
#define SYSTEMD_RUN "/usr/bin/systemd-run"
#define SH          "/usr/bin/sh"
#define ENV         "/usr/bin/env"
#define WRAPPER     "exec 3>&2 2>/dev/null; (exec \"$@\" 2>&3 3>&-); exit $?"
#define WRAPPER_DD  "exec 3>&2 2>/dev/null; (exec \"$$@\" 2>&3 3>&-); exit $$?"
#define USER        "runner-sandbox"
#define DIR         "/home/runner-sandbox/work"
#define PROXY       "http://127.0.0.1:3128"
/* What egress_env(true) adds after the proxy variables: loopback exemptions and the CA variables. */
#define EGRESS_REST                                                                                         \
        "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",                             \
                "SSL_CERT_FILE=/etc/egress-proxy/ca-bundle.pem",                                            \
                "CURL_CA_BUNDLE=/etc/egress-proxy/ca-bundle.pem",                                           \
                "GIT_SSL_CAINFO=/etc/egress-proxy/ca-bundle.pem",                                           \
                "REQUESTS_CA_BUNDLE=/etc/egress-proxy/ca-bundle.pem",                                       \
                "PIP_CERT=/etc/egress-proxy/ca-bundle.pem",                                                 \
                "CARGO_HTTP_CAINFO=/etc/egress-proxy/ca-bundle.pem",                                        \
                "NODE_EXTRA_CA_CERTS=/etc/egress-proxy/ca.pem", "NODE_USE_ENV_PROXY=1"

static void assert_strv_eq(char *const *got, const char *const *expected)
{
        size_t i;

        ck_assert_ptr_nonnull(got);
        for (i = 0; expected[i]; i++) {
                ck_assert_msg(got[i], "element %zu missing: expected \"%s\"", i, expected[i]);
                ck_assert_msg(strcmp(got[i], expected[i]) == 0, "element %zu: \"%s\", expected \"%s\"", i,
                              got[i], expected[i]);
        }
        ck_assert_msg(!got[i], "element %zu: \"%s\" beyond the expected end", i, got[i]);
}

/* ---- enter_line_build() ---- */

static char *const env_two[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", NULL };
static char *const cmd_make[] = { "make", "-j4", "all", NULL };

START_TEST(test_run0_line)
{
        _cleanup_strv_free_ char **argv = NULL;
        static const char *const expected[] = {
                "/usr/bin/run0",
                "--pipe",
                "--no-ask-password",
                "--shell-prompt-prefix=",
                "--user=runner-sandbox",
                "--property=CollectMode=inactive-or-failed",
                "--property=NoNewPrivileges=yes",
                "--property=CapabilityBoundingSet=",
                "--property=IgnoreSIGPIPE=no",
                "--property=ProtectProc=invisible",
                "--property=TimeoutStartSec=infinity",
                "--property=RuntimeMaxSec=infinity",
                "--property=OOMScoreAdjust=1000",
                "--property=LimitNPROC=8192",
                "--chdir=/home/runner-sandbox/work",
                "--setenv=PATH=/usr/local/bin:/usr/bin:/bin",
                "--setenv=LANG=C.UTF-8",
                "--",
                "/usr/bin/sh",
                "-c",
                WRAPPER,
                "sh",
                "/usr/bin/env",
                "-u",
                "SUDO_USER",
                "-u",
                "SUDO_UID",
                "-u",
                "SUDO_GID",
                "--",
                "make",
                "-j4",
                "all",
                NULL,
        };

        ck_assert_int_eq(
                enter_line_build(LINE_RUN0, RUN0, SH, ENV, USER, DIR, 8192, env_two, cmd_make, &argv), 0);
        assert_strv_eq(argv, expected);
}
END_TEST

START_TEST(test_systemd_run_line)
{
        _cleanup_strv_free_ char **argv = NULL;
        static const char *const expected[] = {
                "/usr/bin/systemd-run",
                "--quiet",
                "--pipe",
                "--wait",
                "--collect",
                "--service-type=simple",
                "--uid=runner-sandbox",
                "--property=PAMName=login",
                "--property=NoNewPrivileges=yes",
                "--property=CapabilityBoundingSet=",
                "--property=IgnoreSIGPIPE=no",
                "--property=ProtectProc=invisible",
                "--property=TimeoutStartSec=infinity",
                "--property=RuntimeMaxSec=infinity",
                "--property=OOMScoreAdjust=1000",
                "--property=LimitNPROC=8192",
                "--working-directory=/home/runner-sandbox/work",
                "--setenv=PATH=/usr/local/bin:/usr/bin:/bin",
                "--setenv=LANG=C.UTF-8",
                "--",
                "/usr/bin/sh",
                "-c",
                WRAPPER_DD,
                "sh",
                "/usr/bin/env",
                "--",
                "make",
                "-j4",
                "all",
                NULL,
        };

        ck_assert_int_eq(enter_line_build(LINE_SYSTEMD_RUN, SYSTEMD_RUN, SH, ENV, USER, DIR, 8192, env_two,
                                          cmd_make, &argv),
                         0);
        assert_strv_eq(argv, expected);
}
END_TEST

START_TEST(test_run0_line_no_env_odd_words)
{
        /* No environment; command words that look like options, assignments after argv[0], "--". */
        _cleanup_strv_free_ char **argv = NULL;
        char *const cmd[] = { "sh", "-c", "A=B; echo $A", "--", "--user=root", "", NULL };
        static const char *const expected[] = {
                "/usr/bin/run0",
                "--pipe",
                "--no-ask-password",
                "--shell-prompt-prefix=",
                "--user=runner-sandbox",
                "--property=CollectMode=inactive-or-failed",
                "--property=NoNewPrivileges=yes",
                "--property=CapabilityBoundingSet=",
                "--property=IgnoreSIGPIPE=no",
                "--property=ProtectProc=invisible",
                "--property=TimeoutStartSec=infinity",
                "--property=RuntimeMaxSec=infinity",
                "--property=OOMScoreAdjust=1000",
                "--property=LimitNPROC=8192",
                "--chdir=/home/runner-sandbox/work",
                "--",
                "/usr/bin/sh",
                "-c",
                WRAPPER,
                "sh",
                "/usr/bin/env",
                "-u",
                "SUDO_USER",
                "-u",
                "SUDO_UID",
                "-u",
                "SUDO_GID",
                "--",
                "sh",
                "-c",
                "A=B; echo $A",
                "--",
                "--user=root",
                "",
                NULL,
        };

        ck_assert_int_eq(enter_line_build(LINE_RUN0, RUN0, SH, ENV, USER, DIR, 8192, NULL, cmd, &argv), 0);
        assert_strv_eq(argv, expected);
}
END_TEST

START_TEST(test_systemd_run_line_one_word)
{
        _cleanup_strv_free_ char **argv = NULL;
        char *const no_env[] = { NULL };
        char *const cmd[] = { "true", NULL };
        static const char *const expected[] = {
                "/usr/bin/systemd-run",
                "--quiet",
                "--pipe",
                "--wait",
                "--collect",
                "--service-type=simple",
                "--uid=runner-sandbox",
                "--property=PAMName=login",
                "--property=NoNewPrivileges=yes",
                "--property=CapabilityBoundingSet=",
                "--property=IgnoreSIGPIPE=no",
                "--property=ProtectProc=invisible",
                "--property=TimeoutStartSec=infinity",
                "--property=RuntimeMaxSec=infinity",
                "--property=OOMScoreAdjust=1000",
                "--property=LimitNPROC=8192",
                "--working-directory=/home/runner-sandbox/work",
                "--",
                "/usr/bin/sh",
                "-c",
                WRAPPER_DD,
                "sh",
                "/usr/bin/env",
                "--",
                "true",
                NULL,
        };

        ck_assert_int_eq(enter_line_build(LINE_SYSTEMD_RUN, SYSTEMD_RUN, SH, ENV, USER, DIR, 8192, no_env,
                                          cmd, &argv),
                         0);
        assert_strv_eq(argv, expected);
}
END_TEST

START_TEST(test_argv0_with_equals)
{
        /* env(1) would take "A=B" for an assignment and run the next word: refused for both lines, which
         * both go through env. */
        char *const cmd[] = { "A=B", "true", NULL };
        char *const cmd_later[] = { "env", "A=B", "true", NULL };
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_strv_free_ char **sd = NULL, **later = NULL;

        ck_assert_int_eq(enter_line_build(LINE_RUN0, RUN0, SH, ENV, USER, DIR, 8192, env_two, cmd, &argv),
                         -EINVAL);
        ck_assert_ptr_null(argv);
        ck_assert_int_eq(
                enter_line_build(LINE_SYSTEMD_RUN, SYSTEMD_RUN, SH, ENV, USER, DIR, 8192, env_two, cmd, &sd),
                -EINVAL);
        ck_assert_ptr_null(sd);
        /* '=' after argv[0] is only an argument. */
        ck_assert_int_eq(
                enter_line_build(LINE_RUN0, RUN0, SH, ENV, USER, DIR, 8192, env_two, cmd_later, &later), 0);
        ck_assert_str_eq(later[strv_length(later) - 2], "A=B");
        ck_assert_str_eq(later[strv_length(later) - 3], "env");
        ck_assert_str_eq(later[strv_length(later) - 4], "--");
}
END_TEST

START_TEST(test_argv0_dash)
{
        /* GNU env(1) reads a "-" right after "--" as -i: "env ... -- - sh" empties the environment and runs
         * sh, not "-". Like an argv[0] holding '=', it must be refused for both lines (which go through
         * env), so the command run is always argv[0]. */
        char *const cmd[] = { "-", "sh", "-c", "echo $PATH", NULL };
        char *const cmd_opt[] = { "--unset=PATH", "sh", NULL };
        char **argv = NULL, **sd = NULL, **opt = NULL;
        int r, r_sd, r_opt;

        /* Freed before asserting: a failed assertion does not run cleanups when tests do not fork. */
        r = enter_line_build(LINE_RUN0, RUN0, SH, ENV, USER, DIR, 8192, env_two, cmd, &argv);
        r_sd = enter_line_build(LINE_SYSTEMD_RUN, SYSTEMD_RUN, SH, ENV, USER, DIR, 8192, env_two, cmd, &sd);
        r_opt = enter_line_build(LINE_SYSTEMD_RUN, SYSTEMD_RUN, SH, ENV, USER, DIR, 8192, env_two, cmd_opt,
                                 &opt);
        strv_free(argv);
        strv_free(sd);
        strv_free(opt);
        ck_assert_msg(r == -EINVAL,
                      "argv[0] \"-\" accepted for run0: env would drop the environment and run \"sh\"");
        ck_assert_msg(
                r_sd == -EINVAL,
                "argv[0] \"-\" accepted for systemd-run: env would drop the environment and run \"sh\"");
        ck_assert_msg(r_opt == -EINVAL, "argv[0] \"--unset=PATH\" accepted for systemd-run");
}
END_TEST

START_TEST(test_systemd_run_dollars_doubled)
{
        /* The service manager expands $NAME and ${NAME} in what systemd-run hands it and reads "$$" as
         * "$": every '$' after "--" is doubled, nothing else is touched. run0 does not expand: its words
         * stay as they are. */
        char *const cmd[] = { "sh", "-c", "echo $HOME ${A} $$ $", "%n", "\\$", NULL };
        _cleanup_strv_free_ char **sd = NULL, **r0 = NULL;
        char *const env_dollar[] = { "X=a$b", NULL };
        size_t n;

        ck_assert_int_eq(enter_line_build(LINE_SYSTEMD_RUN, SYSTEMD_RUN, SH, ENV, USER, DIR, 8192,
                                          env_dollar, cmd, &sd),
                         0);
        n = strv_length(sd);
        ck_assert_str_eq(sd[n - 5], "sh");
        ck_assert_str_eq(sd[n - 4], "-c");
        ck_assert_str_eq(sd[n - 3], "echo $$HOME $${A} $$$$ $$");
        ck_assert_str_eq(sd[n - 2], "%n");
        ck_assert_str_eq(sd[n - 1], "\\$$");
        ck_assert_str_eq(sd[n - 9], WRAPPER_DD);
        /* --setenv= values are not expanded: left alone. */
        ck_assert_str_eq(sd[n - 13], "--setenv=X=a$b");

        ck_assert_int_eq(enter_line_build(LINE_RUN0, RUN0, SH, ENV, USER, DIR, 8192, env_dollar, cmd, &r0),
                         0);
        n = strv_length(r0);
        ck_assert_str_eq(r0[n - 3], "echo $HOME ${A} $$ $");
        ck_assert_str_eq(r0[n - 1], "\\$");
        ck_assert_str_eq(r0[n - 15], WRAPPER);
}
END_TEST

START_TEST(test_empty_argv)
{
        char *const empty[] = { NULL };
        _cleanup_strv_free_ char **argv = NULL;

        ck_assert_int_eq(enter_line_build(LINE_RUN0, RUN0, SH, ENV, USER, DIR, 8192, env_two, empty, &argv),
                         -EINVAL);
        ck_assert_ptr_null(argv);
        ck_assert_int_eq(enter_line_build(LINE_SYSTEMD_RUN, SYSTEMD_RUN, SH, ENV, USER, DIR, 8192, env_two,
                                          empty, &argv),
                         -EINVAL);
        ck_assert_ptr_null(argv);
        ck_assert_int_eq(enter_line_build(LINE_RUN0, RUN0, SH, ENV, USER, DIR, 8192, env_two, NULL, &argv),
                         -EINVAL);
        ck_assert_int_eq(enter_line_build(LINE_SYSTEMD_RUN, SYSTEMD_RUN, SH, ENV, USER, DIR, 8192, env_two,
                                          NULL, &argv),
                         -EINVAL);
        ck_assert_ptr_null(argv);
}
END_TEST

START_TEST(test_many_words)
{
        /* More words than the first allocation holds. */
        _cleanup_strv_free_ char **argv = NULL;
        char *cmd[201];
        char words[200][8];

        for (int i = 0; i < 200; i++) {
                (void)snprintf(words[i], sizeof(words[i]), "w%d", i);
                cmd[i] = words[i];
        }
        cmd[200] = NULL;
        ck_assert_int_eq(enter_line_build(LINE_RUN0, RUN0, SH, ENV, USER, DIR, 8192, env_two, cmd, &argv),
                         0);
        ck_assert_uint_eq(strv_length(argv), 30 + 200);
        ck_assert_str_eq(argv[30], "w0");
        ck_assert_str_eq(argv[30 + 199], "w199");
}
END_TEST

/* ---- sandbox_env_build() ---- */

static struct passwd pw_sandbox = {
        .pw_name = (char *)"runner-sandbox",
        .pw_passwd = (char *)"x",
        .pw_uid = 1001,
        .pw_gid = 1001,
        .pw_gecos = (char *)"",
        .pw_dir = (char *)"/home/runner-sandbox",
        .pw_shell = (char *)"/bin/bash",
};

static Config *parse_config(const char *toml)
{
        Config *c = NULL;
        AjError e = { 0 };
        int r = config_parse(toml, strlen(toml), &c, &e);

        ck_assert_msg(r == 0, "config_parse: %d: %u:%u: %s", r, e.line, e.column, e.message);
        ck_assert_ptr_nonnull(c);
        return c;
}

START_TEST(test_env_defaults)
{
        /* The default configuration: the proxy is on, no [sandbox] env. */
        _cleanup_(config_freep) Config *c = parse_config("");
        _cleanup_strv_free_ char **env = NULL;
        static const char *const expected[] = {
                "PATH=/usr/local/bin:/usr/bin:/bin",
                "LANG=C.UTF-8",
                "HOME=/home/runner-sandbox",
                "USER=runner-sandbox",
                "LOGNAME=runner-sandbox",
                "SHELL=/bin/bash",
                "HTTPS_PROXY=" PROXY,
                "HTTP_PROXY=" PROXY,
                "http_proxy=" PROXY,
                "https_proxy=" PROXY,
                EGRESS_REST,
                NULL,
        };

        ck_assert(c->egress_proxy);
        ck_assert_int_eq(sandbox_env_build(c, &pw_sandbox, &env), 0);
        assert_strv_eq(env, expected);
}
END_TEST

START_TEST(test_env_proxy_off)
{
        _cleanup_(config_freep) Config *c = parse_config("[egress]\nproxy = false\n");
        _cleanup_strv_free_ char **env = NULL;
        static const char *const expected[] = {
                "PATH=/usr/local/bin:/usr/bin:/bin",
                "LANG=C.UTF-8",
                "HOME=/home/runner-sandbox",
                "USER=runner-sandbox",
                "LOGNAME=runner-sandbox",
                "SHELL=/bin/bash",
                NULL,
        };

        ck_assert(!c->egress_proxy);
        ck_assert_int_eq(sandbox_env_build(c, &pw_sandbox, &env), 0);
        assert_strv_eq(env, expected);
        for (char **e = env; *e; e++)
                ck_assert_msg(!strcasestr(*e, "proxy"), "%s present with the proxy off", *e);
}
END_TEST

START_TEST(test_env_sandbox_entries)
{
        /* [sandbox] env adds its entries (sorted by name) and overrides earlier ones in place. */
        _cleanup_(config_freep) Config *c =
                parse_config("[sandbox]\n"
                             "env = { PATH = \"/opt/tools/bin:/usr/bin:/bin\", "
                             "ZED = \"last\", CARGO_HOME = \"/home/runner-sandbox/.cargo\", "
                             "http_proxy = \"http://proxy.example:8080\" }\n"
                             "[egress]\n"
                             "proxy = true\n");
        _cleanup_strv_free_ char **env = NULL;
        static const char *const expected[] = {
                "PATH=/opt/tools/bin:/usr/bin:/bin",
                "LANG=C.UTF-8",
                "HOME=/home/runner-sandbox",
                "USER=runner-sandbox",
                "LOGNAME=runner-sandbox",
                "SHELL=/bin/bash",
                "HTTPS_PROXY=" PROXY,
                "HTTP_PROXY=" PROXY,
                "http_proxy=http://proxy.example:8080",
                "https_proxy=" PROXY,
                EGRESS_REST,
                "CARGO_HOME=/home/runner-sandbox/.cargo",
                "ZED=last",
                NULL,
        };

        ck_assert_int_eq(sandbox_env_build(c, &pw_sandbox, &env), 0);
        assert_strv_eq(env, expected);
}
END_TEST

START_TEST(test_env_override_needs_exact_name)
{
        /* PATHX is not PATH, and names differ by case: both are added, nothing is replaced. */
        _cleanup_(config_freep) Config *c = parse_config(
                "[sandbox]\nenv = { PATHX = \"1\", path = \"2\", PAT = \"3\" }\n[egress]\nproxy = false\n");
        _cleanup_strv_free_ char **env = NULL;
        static const char *const expected[] = {
                "PATH=/usr/local/bin:/usr/bin:/bin",
                "LANG=C.UTF-8",
                "HOME=/home/runner-sandbox",
                "USER=runner-sandbox",
                "LOGNAME=runner-sandbox",
                "SHELL=/bin/bash",
                "PAT=3",
                "PATHX=1",
                "path=2",
                NULL,
        };

        ck_assert_int_eq(sandbox_env_build(c, &pw_sandbox, &env), 0);
        assert_strv_eq(env, expected);
}
END_TEST

START_TEST(test_env_by_hand)
{
        /* A Config built by hand, with an empty value and a value holding '='. */
        char *entries[] = { "HOME=/srv/other", "EMPTY=", "OPTS=a=b=c", NULL };
        Config c = { .env = entries, .egress_proxy = false };
        struct passwd pw = pw_sandbox;
        _cleanup_strv_free_ char **env = NULL;
        static const char *const expected[] = {
                "PATH=/usr/local/bin:/usr/bin:/bin",
                "LANG=C.UTF-8",
                "HOME=/srv/other",
                "USER=runner-sandbox",
                "LOGNAME=runner-sandbox",
                "SHELL=/bin/sh",
                "EMPTY=",
                "OPTS=a=b=c",
                NULL,
        };

        /* No shell in the password entry: /bin/sh. */
        pw.pw_shell = (char *)"";
        ck_assert_int_eq(sandbox_env_build(&c, &pw, &env), 0);
        assert_strv_eq(env, expected);
}
END_TEST

START_TEST(test_env_null_shell_and_env)
{
        Config c = { .env = NULL, .egress_proxy = false };
        struct passwd pw = pw_sandbox;
        _cleanup_strv_free_ char **env = NULL;
        static const char *const expected[] = {
                "PATH=/usr/local/bin:/usr/bin:/bin",
                "LANG=C.UTF-8",
                "HOME=/home/runner-sandbox",
                "USER=runner-sandbox",
                "LOGNAME=runner-sandbox",
                "SHELL=/bin/sh",
                NULL,
        };

        pw.pw_shell = NULL;
        ck_assert_int_eq(sandbox_env_build(&c, &pw, &env), 0);
        assert_strv_eq(env, expected);
}
END_TEST

START_TEST(test_env_actions_refused)
{
        /* The configuration refuses ACTIONS_ names; a Config that holds one anyway is refused again. */
        char *entries[] = { "ACTIONS_X=1", NULL };
        char *entries_late[] = { "A=1", "ACTIONS_RUNTIME_TOKEN=secret", "Z=2", NULL };
        Config c = { .env = entries, .egress_proxy = true };
        _cleanup_strv_free_ char **env = NULL;

        ck_assert_int_eq(sandbox_env_build(&c, &pw_sandbox, &env), -EPERM);
        ck_assert_ptr_null(env);
        c.env = entries_late;
        c.egress_proxy = false;
        ck_assert_int_eq(sandbox_env_build(&c, &pw_sandbox, &env), -EPERM);
        ck_assert_ptr_null(env);
}
END_TEST

START_TEST(test_env_actions_refused_by_config)
{
        Config *c = NULL;
        AjError e = { 0 };
        const char *toml = "[sandbox]\nenv = { ACTIONS_X = \"1\" }\n";

        ck_assert_int_eq(config_parse(toml, strlen(toml), &c, &e), -EINVAL);
        ck_assert_ptr_null(c);
        ck_assert_ptr_nonnull(strstr(e.message, "ACTIONS_"));
}
END_TEST

START_TEST(test_env_matches_egress_env)
{
        /* The proxy variables are exactly egress_env(true), in its order, after the fixed six. */
        Config c = { .env = NULL, .egress_proxy = true };
        _cleanup_strv_free_ char **env = NULL;
        const char *const *proxy = egress_env(true);
        size_t i;

        ck_assert_ptr_null(egress_env(false)[0]);
        ck_assert_int_eq(sandbox_env_build(&c, &pw_sandbox, &env), 0);
        for (i = 0; proxy[i]; i++)
                ck_assert_str_eq(env[6 + i], proxy[i]);
        ck_assert_uint_eq(i, 14);
        ck_assert_ptr_null(env[6 + i]);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("enter-argv");
        TCase *tc = tcase_create("enter_line_build");

        tcase_add_test(tc, test_run0_line);
        tcase_add_test(tc, test_systemd_run_line);
        tcase_add_test(tc, test_run0_line_no_env_odd_words);
        tcase_add_test(tc, test_systemd_run_line_one_word);
        tcase_add_test(tc, test_argv0_with_equals);
        tcase_add_test(tc, test_argv0_dash);
        tcase_add_test(tc, test_systemd_run_dollars_doubled);
        tcase_add_test(tc, test_empty_argv);
        tcase_add_test(tc, test_many_words);
        suite_add_tcase(s, tc);

        tc = tcase_create("sandbox_env_build");
        tcase_add_test(tc, test_env_defaults);
        tcase_add_test(tc, test_env_proxy_off);
        tcase_add_test(tc, test_env_sandbox_entries);
        tcase_add_test(tc, test_env_override_needs_exact_name);
        tcase_add_test(tc, test_env_by_hand);
        tcase_add_test(tc, test_env_null_shell_and_env);
        tcase_add_test(tc, test_env_actions_refused);
        tcase_add_test(tc, test_env_actions_refused_by_config);
        tcase_add_test(tc, test_env_matches_egress_env);
        suite_add_tcase(s, tc);

        return check_run(s);
}
