/* SPDX-License-Identifier: MIT */
/* run's plan: every input read back, the configuration's limits overridden by the options, and each
 * refusal with the argument it names. */
#include <check.h>

#include "check-run.h"
#include <string.h>

#include "config.h"
#include "macro.h"
#include "run-plan.h"

#define C1 "0123456789abcdef0123456789abcdef01234567"

static Config *config(void)
{
        Config *c = NULL;
        AjError e = {};

        ck_assert_int_eq(config_parse("", 0, &c, &e), 0);
        return c;
}

/* argv from a NULL-terminated list, with "run" in front; the plan points into it, so it lives on. */
static char *argv[64];

static int parse(const char *const *words, RunPlan *ret, AjError *e)
{
        _cleanup_(config_freep) Config *c = config();
        int argc = 1;

        argv[0] = (char *)"run";

        for (; words[argc - 1]; argc++)
                argv[argc] = (char *)words[argc - 1];
        /* Terminated as a real argv is: without CK_FORK a longer word list of an earlier test is left. */
        argv[argc] = NULL;
        return run_plan_parse(argc, argv, c, ret, e);
}

#define BASE                                                                                                \
        "--repo", "https://example.test/o/r.git", "--commit", C1, "--base", "main", "--task", "/t/task",    \
                "--out", "/o/run1"

START_TEST(test_full)
{
        static const char *const w[] = { BASE,
                                         "--output",
                                         "review.md",
                                         "--output",
                                         "out/a.json",
                                         "--patch",
                                         "--setup",
                                         "make deps",
                                         "--timeout",
                                         "60",
                                         "--max-files",
                                         "3",
                                         "--max-file-bytes",
                                         "10",
                                         "--max-total-bytes",
                                         "20",
                                         "--",
                                         "agent",
                                         "--flag",
                                         NULL };
        RunPlan p = {};
        AjError e = {};

        ck_assert_msg(parse(w, &p, &e) == 0, "%s", e.message);
        ck_assert_str_eq(p.repo, "https://example.test/o/r.git");
        ck_assert_str_eq(p.commit, C1);
        ck_assert_ptr_null(p.ref);
        ck_assert_str_eq(p.base, "main");
        ck_assert_str_eq(p.task, "/t/task");
        ck_assert_str_eq(p.out_dir, "/o/run1");
        ck_assert_str_eq(p.setup, "make deps");
        ck_assert(p.patch);
        ck_assert_uint_eq(strv_length(p.outputs), 2);
        ck_assert_str_eq(p.outputs[0], "review.md");
        ck_assert_str_eq(p.outputs[1], "out/a.json");
        ck_assert_str_eq(p.agent[0], "agent");
        ck_assert_str_eq(p.agent[1], "--flag");
        ck_assert_ptr_null(p.agent[2]);
        ck_assert_uint_eq(p.timeout, 60);
        ck_assert_uint_eq(p.max_files, 3);
        ck_assert_uint_eq(p.max_file_bytes, 10);
        ck_assert_uint_eq(p.max_total_bytes, 20);
        run_plan_done(&p);
}
END_TEST

START_TEST(test_defaults_and_ref)
{
        static const char *const w[] = { "--repo",    "/srv/git/r",  "--ref",   "refs/pull/7/head",
                                         "--base",    "release/1.x", "--task",  "/t",
                                         "--out",     "/o",          "--patch", "--",
                                         "/bin/true", NULL };
        RunPlan p = {};
        AjError e = {};

        ck_assert_msg(parse(w, &p, &e) == 0, "%s", e.message);
        ck_assert_ptr_null(p.commit);
        ck_assert_str_eq(p.ref, "refs/pull/7/head");
        ck_assert_uint_eq(strv_length(p.outputs), 0);
        ck_assert_uint_eq(p.timeout, RUN_TIMEOUT_DEFAULT);
        ck_assert_uint_eq(p.max_file_bytes, RUN_MAX_FILE_BYTES_DEFAULT);
        ck_assert_uint_eq(p.max_total_bytes, RUN_MAX_TOTAL_BYTES_DEFAULT);
        ck_assert_uint_eq(p.max_files, RUN_MAX_FILES_DEFAULT);
        ck_assert_ptr_null(p.setup);
        run_plan_done(&p);
}
END_TEST

typedef struct Refusal {
        const char *words[24];
        const char *message; /* a substring of the message */
} Refusal;

static const Refusal refusals[] = {
        { { BASE, "--patch", "--profile", "Claude", NULL }, "--profile \"Claude\": not a profile name" },
        { { BASE, "--patch", "--profile", "a", "--profile", "b", NULL }, "given twice: --profile" },
        { { BASE, "--patch", "--token-stdin", "--token-stdin", NULL }, "given twice: --token-stdin" },
        { { BASE, "--patch", "--", NULL }, "missing the agent's command after '--'" },
        { { BASE, "--", "a", NULL }, "nothing to export: give --output NAME or --patch" },
        { { BASE, "--patch", "--patch", "--", "a", NULL }, "given twice: --patch" },
        { { BASE, "--base", "x", "--patch", "--", "a", NULL }, "given twice: --base" },
        { { BASE, "--bogus", "--", "a", NULL }, "unknown argument \"--bogus\"" },
        { { BASE, "--output", NULL }, "--output needs a value" },
        { { "--commit", C1, "--base", "m", "--task", "/t", "--out", "/o", "--patch", "--", "a", NULL },
          "missing --repo" },
        { { "--repo", "http://h/r", "--commit", C1, "--base", "m", "--task", "/t", "--out", "/o", "--patch",
            "--", "a", NULL },
          "--repo \"http://h/r\": neither an https:// URL" },
        { { "--repo", "https://user:pw@h/r", "--commit", C1, "--base", "m", "--task", "/t", "--out", "/o",
            "--patch", "--", "a", NULL },
          "neither an https:// URL without user info" },
        { { "--repo", "file:///r", "--commit", C1, "--base", "m", "--task", "/t", "--out", "/o", "--patch",
            "--", "a", NULL },
          "--repo \"file:///r\"" },
        { { "--repo", "/srv/../r", "--commit", C1, "--base", "m", "--task", "/t", "--out", "/o", "--patch",
            "--", "a", NULL },
          "--repo \"/srv/../r\"" },
        { { "--repo", "/r", "--base", "m", "--task", "/t", "--out", "/o", "--patch", "--", "a", NULL },
          "give exactly one of --commit and --ref" },
        { { "--repo", "/r", "--commit", C1, "--ref", "main", "--base", "m", "--task", "/t", "--out", "/o",
            "--patch", "--", "a", NULL },
          "give exactly one of --commit and --ref" },
        { { "--repo", "/r", "--commit", "0123456789ABCDEF0123456789abcdef01234567", "--base", "m", "--task",
            "/t", "--out", "/o", "--patch", "--", "a", NULL },
          "not 40 lowercase hexadecimal digits" },
        { { "--repo", "/r", "--commit", "abc", "--base", "m", "--task", "/t", "--out", "/o", "--patch", "--",
            "a", NULL },
          "--commit \"abc\"" },
        { { "--repo", "/r", "--ref", "-x", "--base", "m", "--task", "/t", "--out", "/o", "--patch", "--",
            "a", NULL },
          "--ref \"-x\": not a valid ref name" },
        { { "--repo", "/r", "--ref", "a..b", "--base", "m", "--task", "/t", "--out", "/o", "--patch", "--",
            "a", NULL },
          "--ref \"a..b\"" },
        { { "--repo", "/r", "--commit", C1, "--base", "m.lock", "--task", "/t", "--out", "/o", "--patch",
            "--", "a", NULL },
          "--base \"m.lock\": not a valid branch name" },
        { { "--repo", "/r", "--commit", C1, "--base", "refs/heads/m", "--task", "/t", "--out", "/o",
            "--patch", "--", "a", NULL },
          "--base \"refs/heads/m\"" },
        { { "--repo", "/r", "--commit", C1, "--task", "/t", "--out", "/o", "--patch", "--", "a", NULL },
          "missing --base" },
        { { "--repo", "/r", "--commit", C1, "--base", "m", "--out", "/o", "--patch", "--", "a", NULL },
          "missing --task" },
        { { "--repo", "/r", "--commit", C1, "--base", "m", "--task", "t", "--out", "/o", "--patch", "--",
            "a", NULL },
          "--task \"t\": not a plain absolute path" },
        { { "--repo", "/r", "--commit", C1, "--base", "m", "--task", "/t", "--patch", "--", "a", NULL },
          "missing --out" },
        { { "--repo", "/r", "--commit", C1, "--base", "m", "--task", "/t", "--out", "/", "--patch", "--",
            "a", NULL },
          "--out \"/\"" },
        { { BASE, "--output", "/etc/passwd", "--", "a", NULL },
          "--output \"/etc/passwd\": not a plain relative" },
        { { BASE, "--output", "../x", "--", "a", NULL }, "--output \"../x\"" },
        { { BASE, "--output", "a/", "--", "a", NULL }, "--output \"a/\"" },
        { { BASE, "--output", ".git/config", "--", "a", NULL }, "not inside .git" },
        { { BASE, "--output", "a", "--output", "a", "--", "a", NULL }, "--output \"a\" is given twice" },
        { { BASE, "--patch", "--timeout", "0", "--", "a", NULL },
          "--timeout: \"0\" is not a number from 1" },
        { { BASE, "--patch", "--timeout", "1x", "--", "a", NULL }, "--timeout: \"1x\"" },
        { { BASE, "--patch", "--max-files", "100001", "--", "a", NULL }, "--max-files: \"100001\"" },
        { { BASE, "--patch", "--max-file-bytes", "-1", "--", "a", NULL }, "--max-file-bytes: \"-1\"" },
        { { BASE, "--patch", "--setup", "", "--", "a", NULL },
          "--setup: the command must be one non-empty line" },
        { { BASE, "--patch", "--setup", "a\nb", "--", "a", NULL }, "--setup" },
        { { BASE, "--patch", "--", "", NULL }, "missing the agent's command" },
        { { BASE, "--x\ny", NULL }, "unknown argument \"--x?y\"" },
        { { "--repo", "/r", "--commit", C1, "--base", "m", "--task", "/t\n", "--out", "/o", "--patch", "--",
            "a", NULL },
          "--task \"/t?\"" },
        { { "--repo", "/r", "--commit", C1, "--base", "m", "--task", "/t", "--out", "/o\tx", "--patch", "--",
            "a", NULL },
          "--out \"/o?x\"" },
        { { BASE, "--output", "a\x1b[2J", "--", "a", NULL }, "--output \"a?[2J\"" },
        { { BASE, "--patch", "--timeout", "1\n", "--", "a", NULL }, "--timeout: \"1?\"" },
        { { BASE, "--output",
            "../aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "--", "a",
            NULL },
          "--output \"../aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\"" },
};

/* Without "--" the agent is the profile's command alone; no --profile leaves the choice to [run] profile. */
START_TEST(test_profile)
{
        static const char *const w1[] = { BASE, "--patch", NULL };
        static const char *const w2[] = { BASE, "--patch", "--profile", "codex", "--token-stdin",
                                          "--", "-m",      "x",         NULL };
        RunPlan p = {};
        AjError e = {};

        ck_assert_int_eq(parse(w1, &p, &e), 0);
        ck_assert_ptr_null(p.agent[0]);
        ck_assert_ptr_null(p.profile);
        ck_assert(!p.token_stdin);
        run_plan_done(&p);
        ck_assert_int_eq(parse(w2, &p, &e), 0);
        ck_assert_str_eq(p.profile, "codex");
        ck_assert(p.token_stdin);
        ck_assert_str_eq(p.agent[0], "-m");
        ck_assert_str_eq(p.agent[1], "x");
        ck_assert_ptr_null(p.agent[2]);
        run_plan_done(&p);
}
END_TEST

START_TEST(test_refusals)
{
        const Refusal *t = &refusals[_i];
        RunPlan p = {};
        AjError e = {};

        ck_assert_msg(parse(t->words, &p, &e) == -EINVAL, "case %d accepted", _i);
        ck_assert_msg(strstr(e.message, t->message), "case %d: \"%s\" lacks \"%s\"", _i, e.message,
                      t->message);
        ck_assert_msg(!strchr(e.message, '\n'), "case %d: more than one line", _i);
}
END_TEST

START_TEST(test_rules)
{
        ck_assert(run_commit_valid(C1));
        ck_assert(!run_commit_valid(C1 "0"));
        ck_assert(!run_commit_valid(NULL));
        ck_assert(run_repo_valid("https://h/r"));
        ck_assert(run_repo_valid("https://h:8443/a/b.git"));
        ck_assert(!run_repo_valid("https://h"));
        ck_assert(!run_repo_valid("https:///r"));
        ck_assert(!run_repo_valid("https://h/r?x=1"));
        ck_assert(!run_repo_valid("https://h/r r"));
        ck_assert(!run_repo_valid("ssh://h/r"));
        ck_assert(!run_repo_valid("/"));
        ck_assert(run_branch_valid("feature/x-1_2+3"));
        ck_assert(!run_branch_valid("a//b"));
        ck_assert(!run_branch_valid("a/"));
        ck_assert(!run_branch_valid(".a"));
        ck_assert(!run_branch_valid("a/.b"));
        ck_assert(!run_branch_valid("a@{1}"));
        ck_assert(!run_branch_valid("a b"));
        ck_assert(run_ref_valid("refs/pull/1/head"));
        ck_assert(run_output_valid("a/.gitignore"));
        ck_assert(!run_output_valid(".git"));
}
END_TEST

static Suite *plan_suite(void)
{
        Suite *s = suite_create("run-plan");
        TCase *t = tcase_create("plan");

        tcase_add_test(t, test_full);
        tcase_add_test(t, test_defaults_and_ref);
        tcase_add_test(t, test_rules);
        tcase_add_test(t, test_profile);
        tcase_add_loop_test(t, test_refusals, 0, (int)ELEMENTSOF(refusals));
        suite_add_tcase(s, t);
        return s;
}

int main(void)
{
        return check_run(plan_suite());
}
