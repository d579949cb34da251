/* SPDX-License-Identifier: MIT */
/* Agent profiles: the shipped files parse to the exact command lines the man page gives, every string's
 * variables are checked when the file is read, the values a profile may expand are plain, and [json]
 * becomes the JSON the CLI reads. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "profile.h"
#include "read-file.h"
#include "strv.h"

static const ProfileVars vars = {
        .home = "/h/r/home",
        .tmpdir = "/h/r/tmp",
        .workspace = "/h/r/workspace",
        .task = "/h/r/task",
        .token_file = "/h/r/token/token",
        .profile_dir = "/h/r/profile",
};

static bool has(char *const *v, const char *s)
{
        for (; v && *v; v++)
                if (strcmp(*v, s) == 0)
                        return true;
        return false;
}

static Profile *shipped(const char *name)
{
        _cleanup_free_ char *path = NULL, *data = NULL;
        Profile *p = NULL;
        AjError e = {};
        size_t size = 0;

        ck_assert_int_ge(asprintf(&path, SOURCE_ROOT "/client/run/profiles/%s.toml", name), 0);
        ck_assert_int_eq(read_regular_nofollow(AT_FDCWD, path, PROFILE_MAX_SIZE, &data, &size), 0);
        ck_assert_msg(profile_parse(name, data, size, &p, &e) == 0, "%s: %s", name, e.message);
        return p;
}

/* The words, expanded, joined by spaces. */
static char *joined(char *const *words)
{
        char *out = strdup("");

        for (char *const *w = words; w && *w; w++) {
                _cleanup_free_ char *x = NULL, *prev = out;

                ck_assert_int_eq(profile_expand(*w, &vars, &x), 0);
                ck_assert_int_ge(asprintf(&out, "%s%s%s", prev, prev[0] ? " " : "", x), 0);
        }
        return out;
}

START_TEST(test_command)
{
        _cleanup_(profile_freep) Profile *p = shipped("command");

        ck_assert_ptr_null(p->command[0]);
        ck_assert_int_eq(p->token, PROFILE_TOKEN_OPTIONAL);
        ck_assert_int_eq(p->stdin_from, PROFILE_STDIN_NULL);
        ck_assert_ptr_null(p->login);
        ck_assert_uint_eq(profile_json_count(p), 0);
}
END_TEST

START_TEST(test_claude)
{
        _cleanup_(profile_freep) Profile *p = shipped("claude");
        _cleanup_free_ char *cmd = joined(p->command), *name = NULL, *text = NULL;
        json_t *j;

        ck_assert_str_eq(cmd, "claude --bare -p --settings /h/r/profile/settings.json "
                              "--dangerously-skip-permissions --output-format stream-json --verbose");
        ck_assert_int_eq(p->token, PROFILE_TOKEN_REQUIRED);
        ck_assert_int_eq(p->stdin_from, PROFILE_STDIN_TASK);
        ck_assert(has(p->env, "DISABLE_AUTOUPDATER=1"));
        ck_assert(has(p->env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"));
        ck_assert_uint_eq(profile_json_count(p), 1);
        ck_assert_int_eq(profile_json_render(p, 0, &vars, &name, &text), 0);
        ck_assert_str_eq(name, "settings.json");
        j = json_loads(text, 0, NULL);
        ck_assert_ptr_nonnull(j);
        ck_assert_str_eq(json_string_value(json_object_get(j, "apiKeyHelper")), "/bin/cat /h/r/token/token");
        ck_assert(json_is_false(json_object_get(json_object_get(j, "sandbox"), "enabled")));
        json_decref(j);
        /* Its API, for the key broker; the agent pointed at wherever ${API_URL} is. */
        ck_assert_str_eq(p->api_base, "https://api.anthropic.com");
        ck_assert_str_eq(p->api_header, "x-api-key");
        ck_assert_str_eq(p->api_paths[0], "/v1/");
        ck_assert_ptr_null(p->api_paths[1]);
        ck_assert(has(p->env, "ANTHROPIC_BASE_URL=${API_URL}"));
}
END_TEST

START_TEST(test_codex)
{
        _cleanup_(profile_freep) Profile *p = shipped("codex");
        _cleanup_free_ char *cmd = joined(p->command), *login = joined(p->login), *files = NULL;

        ck_assert_str_eq(cmd, "codex exec --json --ephemeral --skip-git-repo-check --color never "
                              "--dangerously-bypass-approvals-and-sandbox --cd /h/r/workspace");
        ck_assert_str_eq(login, "codex login --with-api-key");
        files = joined(p->token_files);
        ck_assert_str_eq(files, "/h/r/home/.codex/auth.json");
        ck_assert(has(p->env, "CODEX_HOME=${HOME}/.codex"));
        ck_assert_int_eq(p->token, PROFILE_TOKEN_REQUIRED);
        ck_assert_str_eq(p->api_base, "https://api.openai.com");
        ck_assert_str_eq(p->api_header, "authorization");
        ck_assert(has(p->env, "OPENAI_BASE_URL=${API_URL}/v1"));
}
END_TEST

static const struct {
        const char *text, *message;
} refusals[] = {
        { "command = []\n", "missing description" },
        { "description = \"d\"\nshell = true\n", "unknown key \"shell\"" },
        { "description = \"d\"\ncommand = [\"a\", \"${HOEM}\"]\n", "names a variable other than" },
        { "description = \"d\"\ncommand = [\"a\", \"${HOME\"]\n", "names a variable other than" },
        { "description = \"d\"\ncommand = \"a\"\n", "command: expected an array of strings" },
        { "description = \"d\"\nstdin = \"tty\"\n", "stdin: expected one of" },
        { "description = \"d\"\ntoken = true\n", "token: expected one of" },
        { "description = \"d\"\nlogin = [\"x\"]\n", "login and token-files need token" },
        { "description = \"d\"\ntoken = \"required\"\nlogin = []\n", "login: an empty command" },
        { "description = \"d\"\ndirs = [\"rel\"]\n", "is not an absolute path" },
        { "description = \"d\"\n[env]\n\"A-B\" = \"x\"\n", "not a name a profile may set" },
        { "description = \"d\"\n[env]\nGITHUB_ENV = \"x\"\n", "not a name a profile may set" },
        { "description = \"d\"\n[env]\nA = 1\n", "env: expected a string" },
        { "description = \"d\"\n[json]\n\"../x\" = { a = 1 }\n", "not a plain file name" },
        { "description = \"d\"\n[json]\n\"x\" = 1\n", "each file is a table" },
        { "description = \"d\"\n[json.\"s.json\"]\nk = \"${TOKEN}\"\n", "names a variable other than" },
        { "description = \"d\"\n[env]\nU = \"${API_URL}\"\n", "${API_URL} needs an [api] table" },
        { "description = \"d\"\napi = 1\n", "api: expected a table" },
        { "description = \"d\"\ntoken = \"required\"\n[api]\nbase = \"https://a.example\"\n",
          "needs base, header and paths" },
#define API_WITH(base, header, paths)                                                                       \
        "description = \"d\"\ntoken = \"required\"\n[api]\nbase = \"" base "\"\nheader = \"" header         \
        "\"\npaths = [" paths "]\n"
        { API_WITH("http://a.example", "x-api-key", "\"/v1/\""), "is not an https origin" },
        { API_WITH("https://a.example/v1", "x-api-key", "\"/v1/\""), "is not an https origin" },
        { API_WITH("https://u@a.example", "x-api-key", "\"/v1/\""), "is not an https origin" },
        { API_WITH("https://", "x-api-key", "\"/v1/\""), "is not an https origin" },
        { API_WITH("https://a.example", "cookie", "\"/v1/\""),
          "the broker knows x-api-key and authorization" },
        { API_WITH("https://a.example", "x-api-key", "\"v1/\""), "is not an absolute path" },
        { API_WITH("https://a.example", "x-api-key", "\"/v1/../\""), "is not a plain path prefix" },
        { API_WITH("https://a.example", "x-api-key", "\"/v1/%2e\""), "is not a plain path prefix" },
        { API_WITH("https://a.example", "x-api-key", ""), "needs base, header and paths" },
        { "description = \"d\"\n[api]\nbase = \"https://a.example\"\nheader = \"x-api-key\"\npaths = "
          "[\"/v1/\"]\n",
          "api needs token" },
        { "description = \"d\"\ntoken = \"required\"\n[api]\nbase = \"https://a.example\"\nport = 1\n",
          "api: unknown key \"port\"" },
};

START_TEST(test_refusals)
{
        Profile *p = NULL;
        AjError e = {};
        int r = profile_parse("t", refusals[_i].text, strlen(refusals[_i].text), &p, &e);

        ck_assert_msg(r == -EINVAL, "case %d accepted", _i);
        ck_assert_msg(strstr(e.message, refusals[_i].message), "case %d: \"%s\" lacks \"%s\"", _i, e.message,
                      refusals[_i].message);
        ck_assert_ptr_null(p);
}
END_TEST

START_TEST(test_expand)
{
        ProfileVars odd = vars;
        char *x = NULL;

        ck_assert_int_eq(profile_expand("a$b${HOME}/c$", &vars, &x), 0);
        ck_assert_str_eq(x, "a$b/h/r/home/c$");
        free(x);
        x = NULL;
        /* A value a shell or JSON would read otherwise is refused, not quoted. */
        odd.home = "/h/r x/home";
        ck_assert_int_eq(profile_expand("${HOME}", &odd, &x), -EDOM);
        odd.home = "/h/$(id)";
        ck_assert_int_eq(profile_expand("${HOME}", &odd, &x), -EDOM);
        ck_assert_int_eq(profile_expand("${NOPE}", &vars, &x), -EINVAL);
        ck_assert_ptr_null(x);
        ck_assert(profile_name_valid("codex"));
        ck_assert(!profile_name_valid("../codex"));
        ck_assert(!profile_name_valid("Codex"));
        ck_assert(!profile_name_valid(""));
}
END_TEST

START_TEST(test_load_untrusted)
{
        Profile *p = NULL;
        AjError e = {};

        /* /tmp is writable by everyone: a profile there is not root's alone. */
        ck_assert_int_lt(profile_load("/tmp", "nonexistent-profile-x", &p, &e), 0);
        ck_assert_ptr_null(p);
        ck_assert_int_eq(profile_load("/tmp", "../etc", &p, &e), -EINVAL);
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("profile");
        TCase *t = tcase_create("profile");

        tcase_add_test(t, test_command);
        tcase_add_test(t, test_claude);
        tcase_add_test(t, test_codex);
        tcase_add_loop_test(t, test_refusals, 0, (int)ELEMENTSOF(refusals));
        tcase_add_test(t, test_expand);
        tcase_add_test(t, test_load_untrusted);
        suite_add_tcase(s, t);
        return s;
}

int main(void)
{
        return check_run(suite());
}
