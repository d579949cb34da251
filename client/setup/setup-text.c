/* SPDX-License-Identifier: MIT */
/* The sudo rule, the polkit rule and the cron and at deny lists, as text. Names are checked before they
 * are written into a file that root's tools parse: a user name passes user_name_valid(), which admits no
 * byte that sudoers or JavaScript would read as syntax. */
#include "setup-text.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "macro.h"

static const char sudoers_head[] =
        "# agentic-job: the runner user may run the helper's four operations as root, and nothing\n"
        "# else through this file; the sandbox user may run nothing at all. Written by\n"
        "# `agentic-job sandbox setup` as " SUDOERS_PATH " (mode 0440; no dot in the\n"
        "# name, so sudo reads it; \"zz\" so it is read last and its rules win: sudo applies the\n"
        "# last rule that matches).\n"
        "#\n"
        "# The helper checks every argument itself; the patterns here only keep the runner to the\n"
        "# four forms.\n";
static const char sudoers_lock_comment[] =
        "# The lock: the runner's other grants (its own, its groups') end here.\n";

static const char polkit_head[] =
        "// agentic-job: polkit refuses every action to the users named here (the sandbox user,\n"
        "// and the runner once locked), whatever other rules say: polkit takes the first rule\n"
        "// that answers, and this file's name sorts first. Written by `agentic-job sandbox setup`.\n";

static int check_user(const char *what, const char *user, AjError *reterr)
{
        if (!user_name_valid(user))
                return aj_error(reterr, EINVAL, 0, 0, "%s user name is not valid", what);
        if (strcmp(user, "root") == 0)
                return aj_error(reterr, EINVAL, 0, 0, "%s user is root", what);
        return 0;
}

static int check_users(const char *sandbox_user, const char *runner_user, AjError *reterr)
{
        int r;

        r = check_user("sandbox", sandbox_user, reterr);
        if (r < 0)
                return r;
        r = check_user("runner", runner_user, reterr);
        if (r < 0)
                return r;
        if (strcmp(sandbox_user, runner_user) == 0)
                return aj_error(reterr, EINVAL, 0, 0, "the runner user is the sandbox user");
        return 0;
}

/* A command path sudoers reads as written: no space, ',', ':', '=', '\\', '*' or anything it would
 * interpret. */
static bool helper_path_valid(const char *p)
{
        if (!path_is_plain_absolute(p) || strcmp(p, "/") == 0)
                return false;
        for (; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      strchr("/._-", *p)))
                        return false;
        return true;
}

int sudoers_text(const char *helper_path, const char *sandbox_user, const char *runner_user,
                 bool lock_runner, char **ret_text, AjError *reterr)
{
        const char *h = helper_path;
        int r, k;

        assert(ret_text);

        r = check_users(sandbox_user, runner_user, reterr);
        if (r < 0)
                return r;
        if (!helper_path_valid(helper_path))
                return aj_error(reterr, EINVAL, 0, 0,
                                "helper path is not a plain absolute path of letters, digits, '/', '.', '_' "
                                "and '-'");

        k = asprintf(ret_text,
                     "%s"
                     "Cmnd_Alias AGENTIC_JOB_HELPER = \\\n"
                     "        %s helper ping, \\\n"
                     "        %s helper kill-user, \\\n"
                     "        %s helper proxy-log --from *, \\\n"
                     "        %s helper enter --chdir *\n"
                     "Defaults!AGENTIC_JOB_HELPER env_reset, !use_pty, !setenv, !log_allowed\n"
                     "%s ALL=(ALL:ALL) !ALL\n"
                     "%s%s%s"
                     "%s ALL=(root) NOPASSWD: AGENTIC_JOB_HELPER\n",
                     sudoers_head, h, h, h, h, sandbox_user, lock_runner ? sudoers_lock_comment : "",
                     lock_runner ? runner_user : "", lock_runner ? " ALL=(ALL:ALL) !ALL\n" : "",
                     runner_user);
        if (k < 0) {
                *ret_text = NULL;
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        }
        return 0;
}

int polkit_rules_text(const char *sandbox_user, const char *runner_user, bool lock_runner, char **ret_text,
                      AjError *reterr)
{
        int r, k;

        assert(ret_text);

        if (lock_runner)
                r = check_users(sandbox_user, runner_user, reterr);
        else
                r = check_user("sandbox", sandbox_user, reterr);
        if (r < 0)
                return r;

        k = asprintf(ret_text,
                     "%s"
                     "polkit.addRule(function (action, subject) {\n"
                     "        if (subject.user == \"%s\"%s%s%s) {\n"
                     "                return polkit.Result.NO;\n"
                     "        }\n"
                     "});\n",
                     polkit_head, sandbox_user, lock_runner ? " || subject.user == \"" : "",
                     lock_runner ? runner_user : "", lock_runner ? "\"" : "");
        if (k < 0) {
                *ret_text = NULL;
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        }
        return 0;
}

static const char *const allow_paths[] = {
        [DENY_LIST_CRON] = "/etc/cron.allow",
        [DENY_LIST_AT] = "/etc/at.allow",
};
static const char *const deny_paths[] = {
        [DENY_LIST_CRON] = "/etc/cron.deny",
        [DENY_LIST_AT] = "/etc/at.deny",
};

const char *deny_list_allow_path(DenyListKind kind)
{
        assert((size_t)kind < ELEMENTSOF(allow_paths));
        return allow_paths[kind];
}

const char *deny_list_deny_path(DenyListKind kind)
{
        assert((size_t)kind < ELEMENTSOF(deny_paths));
        return deny_paths[kind];
}

static bool is_blank(char c)
{
        return c == ' ' || c == '\t' || c == '\r';
}

/* Whether a line of data is user: exactly and newline-terminated (strict), or with blanks and carriage
 * returns around it and the last line unterminated too (loose). */
static bool list_has(const char *data, size_t size, const char *user, bool strict)
{
        size_t len = strlen(user);

        for (size_t at = 0; at < size;) {
                const char *line = data + at, *nl = memchr(line, '\n', size - at);
                size_t n = nl ? (size_t)(nl - line) : size - at;

                at += n + (nl ? 1 : 0);
                if (strict) {
                        if (!nl)
                                return false;
                } else {
                        while (n > 0 && is_blank(line[0]))
                                line++, n--;
                        while (n > 0 && is_blank(line[n - 1]))
                                n--;
                }
                if (n == len && memcmp(line, user, len) == 0)
                        return true;
        }
        return false;
}

int deny_list_decide(DenyListKind kind, const char *user, const char *allow, size_t allow_size,
                     const char *deny, size_t deny_size, DenyListDecision *ret, AjError *reterr)
{
        bool newline;
        char *text;
        size_t n;
        int r;

        assert(ret);
        assert(allow || allow_size == 0);
        assert(deny || deny_size == 0);

        r = check_user("the", user, reterr);
        if (r < 0)
                return r;

        *ret = (DenyListDecision){};
        if (allow) {
                if (list_has(allow, allow_size, user, false))
                        return aj_error(reterr, EPERM, 0, 0, "%s lists %s", deny_list_allow_path(kind),
                                        user);
                ret->reason = "the allow list exists and does not list the user";
                return 0;
        }
        if (deny && list_has(deny, deny_size, user, true)) {
                ret->reason = "the deny list lists the user already";
                return 0;
        }
        if (!deny && kind == DENY_LIST_AT) {
                ret->reason = "with neither list, at admits root alone";
                return 0;
        }

        newline = deny_size > 0 && deny[deny_size - 1] != '\n';
        n = deny_size + newline + strlen(user) + 1;
        text = malloc(n + 1);
        if (!text)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        if (deny_size > 0)
                memcpy(text, deny, deny_size);
        (void)snprintf(text + deny_size, n + 1 - deny_size, "%s%s\n", newline ? "\n" : "", user);
        *ret = (DenyListDecision){
                .write = true,
                .deny_text = text,
                .deny_size = n,
                .reason = deny ? "the user is appended to the deny list"
                               : "the deny list is created with the user",
        };
        return 0;
}

void deny_list_decision_done(DenyListDecision *d)
{
        if (!d)
                return;
        free(d->deny_text);
        *d = (DenyListDecision){};
}

bool sudoers_includes_dir(const char *text, const char *dir)
{
        size_t dirlen = strlen(dir);

        for (const char *line = text; *line;) {
                const char *end = strchrnul(line, '\n'), *p = line + strspn(line, " \t");

                /* "#includedir" is a directive only at the very start of a line; after a blank it is a
                 * comment. "@includedir" may follow blanks. */
                if ((strncmp(p, "@includedir", 11) == 0 ||
                     (p == line && strncmp(p, "#includedir", 11) == 0)) &&
                    strspn(p + 11, " \t") > 0) {
                        p += 11;
                        p += strspn(p, " \t");
                        if (strncmp(p, dir, dirlen) == 0) {
                                p += dirlen;
                                p += strspn(p, "/");
                                p += strspn(p, " \t");
                                if (p == end)
                                        return true;
                        }
                }
                line = *end ? end + 1 : end;
        }
        return false;
}

bool package_query_literal(const char *path)
{
        return path[0] == '/' && !strpbrk(path, "*?[]\\\n");
}

/* Whether [p, end) is a list of package names, "a" or "a, b:amd64": anything else (a diversion line, "local
 * diversion from", a message) is not an owner. */
static bool package_list(const char *p, const char *end)
{
        if (p == end)
                return false;
        for (; p < end; p++) {
                char c = *p;

                if (c == ',' && p + 1 < end && p[1] == ' ' && p + 2 < end) {
                        p++;
                        continue;
                }
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' ||
                      c == ':'))
                        return false;
        }
        return true;
}

bool dpkg_query_lists(const char *out, const char *path)
{
        size_t n = strlen(path);

        for (const char *line = out; *line;) {
                const char *end = strchrnul(line, '\n');
                const char *sep = strstr(line, ": /");

                if (sep && sep < end && package_list(line, sep) && (size_t)(end - sep - 2) == n &&
                    memcmp(sep + 2, path, n) == 0)
                        return true;
                line = *end ? end + 1 : end;
        }
        return false;
}

static const char *skip_blanks(const char *p, const char *end)
{
        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        return p;
}

/* Whether the line [line, end) is the header "[sandbox]", blanks and a comment around it allowed. */
static bool sandbox_header(const char *line, const char *end)
{
        static const char header[] = "[sandbox]";
        const char *p = skip_blanks(line, end);

        if (memmem(p, (size_t)(end - p), header, sizeof(header) - 1) != p)
                return false;
        p = skip_blanks(p + sizeof(header) - 1, end);
        return p == end || *p == '#' || (*p == '\r' && p + 1 == end);
}

int config_add_runner(const char *text, size_t size, const char *runner, char **ret, size_t *ret_size)
{
        _cleanup_free_ char *line = NULL;
        const char *at = NULL;
        size_t before, n;
        char *out;

        if (!user_name_valid(runner))
                return -EINVAL;
        for (const char *l = text, *stop = text + size; l < stop && !at;) {
                const char *nl = memchr(l, '\n', (size_t)(stop - l));
                const char *end = nl ? nl : stop;

                if (sandbox_header(l, end))
                        at = nl ? nl + 1 : stop;
                l = nl ? nl + 1 : stop;
        }
        before = at ? (size_t)(at - text) : size;
        if (asprintf(&line, "%srunner-user = \"%s\" # from SUDO_USER, added by setup\n",
                     at ? (before > 0 && text[before - 1] != '\n' ? "\n" : "")
                        : (size > 0 && text[size - 1] != '\n' ? "\n\n[sandbox]\n" : "\n[sandbox]\n"),
                     runner) < 0)
                return -ENOMEM;
        n = strlen(line);
        out = malloc(size + n + 1);
        if (!out)
                return -ENOMEM;
        memcpy(out, text, before);
        memcpy(out + before, line, n);
        memcpy(out + before + n, text + before, size - before);
        out[size + n] = '\0';
        *ret = out;
        *ret_size = size + n;
        return 0;
}

unsigned sudoers_rule_after_dir(const char *text, const char *dir)
{
        bool seen = false, continued = false;
        unsigned number = 0;

        for (const char *line = text; *line;) {
                const char *end = strchrnul(line, '\n'), *p = line + strspn(line, " \t"), *last = end;
                bool was_continued = continued;

                number++;
                while (last > p && (last[-1] == ' ' || last[-1] == '\t' || last[-1] == '\r'))
                        last--;
                continued = last > p && last[-1] == '\\';
                if (!seen) {
                        size_t n = (size_t)(end - line);
                        _cleanup_free_ char *one = strndup(line, n);

                        if (!one)
                                return number; /* out of memory: say there is one, fail closed */
                        seen = sudoers_includes_dir(one, dir);
                } else if (!was_continued && p != end && *p != '\r' &&
                           !(*p == '#' && strncmp(p, "#include", 8) != 0) && strncmp(p, "Defaults", 8) != 0)
                        return number;
                line = *end ? end + 1 : end;
        }
        return 0;
}
