/* SPDX-License-Identifier: MIT */
#include "run-plan.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "macro.h"
#include "parse.h"
#include "profile.h"

bool run_commit_valid(const char *s)
{
        size_t n = 0;

        if (!s)
                return false;
        for (; s[n]; n++)
                if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
                        return false;
        return n == RUN_COMMIT_HEXLEN;
}

static bool has_control(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < ' ' || *s == 0x7f)
                        return true;
        return false;
}

static bool has_control_or_space(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s <= ' ' || *s == 0x7f)
                        return true;
        return false;
}

bool run_repo_valid(const char *s)
{
        const char *host, *end;

        if (!s || has_control_or_space(s) || strlen(s) > 4095)
                return false;
        if (s[0] == '/')
                return path_is_plain_absolute(s) && strcmp(s, "/") != 0;
        if (strncmp(s, "https://", 8) != 0)
                return false;
        host = s + 8;
        end = host + strcspn(host, "/?#");
        /* No user info: a credential in a URL would be in argv, the summary and the log. */
        if (end == host || memchr(host, '@', (size_t)(end - host)) || *end != '/')
                return false;
        return end[1] != '\0' && !strpbrk(end, "?#\\");
}

/* A strict subset of git-check-ref-format(1): what a CI branch or pull-request ref is spelled with. */
static bool ref_components_valid(const char *s)
{
        for (const char *c = s;;) {
                size_t n = strcspn(c, "/");

                if (n == 0 || c[0] == '.' || (n >= 5 && strncmp(c + n - 5, ".lock", 5) == 0))
                        return false;
                for (size_t i = 0; i < n; i++) {
                        char ch = c[i];
                        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                              (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-' || ch == '+'))
                                return false;
                        if (ch == '.' && i + 1 < n && c[i + 1] == '.')
                                return false;
                }
                if (c[n] == '\0')
                        return true;
                c += n + 1;
        }
}

bool run_branch_valid(const char *s)
{
        return s && s[0] != '\0' && s[0] != '-' && strlen(s) <= 255 && strncmp(s, "refs/", 5) != 0 &&
               ref_components_valid(s);
}

bool run_ref_valid(const char *s)
{
        return s && s[0] != '\0' && s[0] != '-' && strlen(s) <= 255 && ref_components_valid(s);
}

bool run_output_valid(const char *s)
{
        return path_is_plain_relative(s, false) && strcmp(s, ".git") != 0 && strncmp(s, ".git/", 5) != 0;
}

/* What a message may quote of an argument: at most QUOTE_MAX bytes, a control character as '?', so the
 * message stays one line whatever the caller gave. */
#define QUOTE_MAX 64
static const char *quote(const char *s, char buf[static QUOTE_MAX + 4])
{
        size_t n = 0;

        for (; n < QUOTE_MAX && s[n]; n++) {
                buf[n] = s[n];
                if ((unsigned char)s[n] < ' ' || s[n] == 0x7f)
                        buf[n] = '?';
        }
        strcpy(buf + n, s[n] ? "..." : "");
        return buf;
}

void run_plan_done(RunPlan *p)
{
        strv_free(p->outputs);
        *p = (RunPlan){};
}

typedef enum RunOption {
        RUN_REPO,
        RUN_COMMIT,
        RUN_REF,
        RUN_BASE,
        RUN_TASK,
        RUN_OUT,
        RUN_OUTPUT,
        RUN_PATCH,
        RUN_SETUP,
        RUN_TIMEOUT,
        RUN_MAX_FILE_BYTES,
        RUN_MAX_TOTAL_BYTES,
        RUN_MAX_FILES,
        RUN_PROFILE,
        RUN_TOKEN_STDIN,
        RUN_END,
} RunOption;

const CliOption run_options[] = {
        { "--repo", RUN_REPO, CLI_DIR, false }, /* or an https:// URL */
        { "--commit", RUN_COMMIT, CLI_WORD, false },
        { "--ref", RUN_REF, CLI_WORD, false },
        { "--base", RUN_BASE, CLI_WORD, false },
        { "--task", RUN_TASK, CLI_FILE, false },
        { "--out", RUN_OUT, CLI_DIR, false },
        { "--output", RUN_OUTPUT, CLI_WORD, true },
        { "--patch", RUN_PATCH, CLI_FLAG, false },
        { "--setup", RUN_SETUP, CLI_WORD, false },
        { "--timeout", RUN_TIMEOUT, CLI_WORD, false },
        { "--max-file-bytes", RUN_MAX_FILE_BYTES, CLI_WORD, false },
        { "--max-total-bytes", RUN_MAX_TOTAL_BYTES, CLI_WORD, false },
        { "--max-files", RUN_MAX_FILES, CLI_WORD, false },
        { "--profile", RUN_PROFILE, CLI_PROFILE, false },
        { "--token-stdin", RUN_TOKEN_STDIN, CLI_FLAG, false },
        { "--", RUN_END, CLI_COMMAND, false },
        {},
};

static int set_once(const char **slot, const char *opt, const char *val, AjError *e)
{
        if (*slot)
                return aj_error(e, EINVAL, 0, 0, "given twice: %s", opt);
        *slot = val;
        return 0;
}

static int set_flag(bool *flag, const char *opt, AjError *e)
{
        if (*flag)
                return aj_error(e, EINVAL, 0, 0, "given twice: %s", opt);
        *flag = true;
        return 0;
}

static int parse_limit(const char *opt, const char *v, uint64_t min, uint64_t max, uint64_t *ret, AjError *e)
{
        int r = parse_decimal(v, strlen(v), max, ret);

        if (r < 0 || *ret < min) {
                char q[QUOTE_MAX + 4];
                return aj_error(e, EINVAL, 0, 0, "%s: \"%s\" is not a number from %llu to %llu", opt,
                                quote(v, q), (unsigned long long)min, (unsigned long long)max);
        }
        return 0;
}

int run_plan_parse(int argc, char **argv, const Config *c, RunPlan *ret, AjError *e)
{
        _cleanup_free_ char **outputs = NULL;
        RunPlan p = {
                .timeout = (unsigned)c->run_timeout,
                .max_file_bytes = c->run_max_file_bytes,
                .max_total_bytes = c->run_max_total_bytes,
                .max_files = (unsigned)c->run_max_files,
        };
        size_t n_outputs = 0;
        char q[QUOTE_MAX + 4];
        uint64_t v;
        int i;

        assert(argc >= 1);
        assert(ret);

        outputs = calloc(RUN_OUTPUTS_MAX + 1, sizeof(char *));
        if (!outputs)
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        for (i = 1; i < argc; i++) {
                const char *a = argv[i], *val = NULL;
                const CliOption *o = cli_option_find(run_options, a);
                int r = 0;

                if (!o)
                        return aj_error(e, EINVAL, 0, 0, "unknown argument \"%s\"", quote(a, q));
                if (o->value == CLI_COMMAND)
                        break;
                if (o->value != CLI_FLAG) {
                        if (i + 1 >= argc)
                                return aj_error(e, EINVAL, 0, 0, "%s needs a value", a);
                        val = argv[++i];
                }
                switch ((RunOption)o->id) {
                case RUN_REPO:
                        r = set_once(&p.repo, a, val, e);
                        break;
                case RUN_COMMIT:
                        r = set_once(&p.commit, a, val, e);
                        break;
                case RUN_REF:
                        r = set_once(&p.ref, a, val, e);
                        break;
                case RUN_BASE:
                        r = set_once(&p.base, a, val, e);
                        break;
                case RUN_TASK:
                        r = set_once(&p.task, a, val, e);
                        break;
                case RUN_OUT:
                        r = set_once(&p.out_dir, a, val, e);
                        break;
                case RUN_SETUP:
                        r = set_once(&p.setup, a, val, e);
                        break;
                case RUN_PROFILE:
                        r = set_once(&p.profile, a, val, e);
                        break;
                case RUN_PATCH:
                        r = set_flag(&p.patch, a, e);
                        break;
                case RUN_TOKEN_STDIN:
                        r = set_flag(&p.token_stdin, a, e);
                        break;
                case RUN_OUTPUT:
                        if (!run_output_valid(val))
                                return aj_error(e, EINVAL, 0, 0,
                                                "--output \"%s\": not a plain relative path in the clone "
                                                "(no leading \"/\", no empty, \".\" or \"..\" component, "
                                                "not inside .git)",
                                                quote(val, q));
                        for (size_t k = 0; k < n_outputs; k++)
                                if (strcmp(outputs[k], val) == 0)
                                        return aj_error(e, EINVAL, 0, 0, "--output \"%s\" is given twice",
                                                        quote(val, q));
                        if (n_outputs >= RUN_OUTPUTS_MAX)
                                return aj_error(e, EINVAL, 0, 0, "more than %d outputs", RUN_OUTPUTS_MAX);
                        outputs[n_outputs++] = (char *)val;
                        break;
                case RUN_TIMEOUT:
                        r = parse_limit(a, val, 1, RUN_TIMEOUT_MAX, &v, e);
                        if (r >= 0)
                                p.timeout = (unsigned)v;
                        break;
                case RUN_MAX_FILE_BYTES:
                        r = parse_limit(a, val, 1, RUN_BYTES_MAX, &v, e);
                        if (r >= 0)
                                p.max_file_bytes = v;
                        break;
                case RUN_MAX_TOTAL_BYTES:
                        r = parse_limit(a, val, 1, RUN_BYTES_MAX, &v, e);
                        if (r >= 0)
                                p.max_total_bytes = v;
                        break;
                case RUN_MAX_FILES:
                        r = parse_limit(a, val, 1, RUN_FILES_MAX, &v, e);
                        if (r >= 0)
                                p.max_files = (unsigned)v;
                        break;
                case RUN_END:
                        break;
                }
                if (r < 0)
                        return r;
        }

        if (!p.repo)
                return aj_error(e, EINVAL, 0, 0, "missing --repo");
        if (!run_repo_valid(p.repo))
                return aj_error(e, EINVAL, 0, 0,
                                "--repo \"%s\": neither an https:// URL without user info nor a plain "
                                "absolute path",
                                quote(p.repo, q));
        if (!p.commit == !p.ref)
                return aj_error(e, EINVAL, 0, 0, "give exactly one of --commit and --ref");
        if (p.commit && !run_commit_valid(p.commit))
                return aj_error(e, EINVAL, 0, 0, "--commit \"%s\": not 40 lowercase hexadecimal digits",
                                quote(p.commit, q));
        if (p.ref && !run_ref_valid(p.ref))
                return aj_error(e, EINVAL, 0, 0, "--ref \"%s\": not a valid ref name", quote(p.ref, q));
        if (!p.base)
                return aj_error(e, EINVAL, 0, 0, "missing --base");
        if (!run_branch_valid(p.base))
                return aj_error(e, EINVAL, 0, 0, "--base \"%s\": not a valid branch name", quote(p.base, q));
        if (!p.task)
                return aj_error(e, EINVAL, 0, 0, "missing --task");
        if (!path_is_plain_absolute(p.task) || has_control(p.task))
                return aj_error(e, EINVAL, 0, 0,
                                "--task \"%s\": not a plain absolute path without control characters",
                                quote(p.task, q));
        if (!p.out_dir)
                return aj_error(e, EINVAL, 0, 0, "missing --out");
        if (!path_is_plain_absolute(p.out_dir) || strcmp(p.out_dir, "/") == 0 || has_control(p.out_dir))
                return aj_error(e, EINVAL, 0, 0,
                                "--out \"%s\": not a plain absolute path without control characters",
                                quote(p.out_dir, q));
        if (p.setup && (p.setup[0] == '\0' || strchr(p.setup, '\n') || strlen(p.setup) > 4096))
                return aj_error(e, EINVAL, 0, 0,
                                "--setup: the command must be one non-empty line of at most 4096 bytes");
        if (n_outputs == 0 && !p.patch)
                return aj_error(e, EINVAL, 0, 0, "nothing to export: give --output NAME or --patch");
        if (p.max_total_bytes < p.max_file_bytes)
                p.max_file_bytes = p.max_total_bytes;
        if (p.profile && !profile_name_valid(p.profile))
                return aj_error(e, EINVAL, 0, 0, "--profile \"%s\": not a profile name ([a-z][a-z0-9-]*)",
                                quote(p.profile, q));
        /* Without "--", the profile's command alone (run checks that it has one). */
        if (i < argc && (i + 1 >= argc || argv[i + 1][0] == '\0'))
                return aj_error(e, EINVAL, 0, 0, "missing the agent's command after '--'");
        if (argc - i - 1 > RUN_AGENT_ARGS)
                return aj_error(e, EINVAL, 0, 0, "the agent's command has more than %d words",
                                RUN_AGENT_ARGS);

        p.outputs = calloc(n_outputs + 1, sizeof(char *));
        if (!p.outputs)
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        for (size_t k = 0; k < n_outputs; k++) {
                p.outputs[k] = strdup(outputs[k]);
                if (!p.outputs[k]) {
                        strv_free(p.outputs);
                        return aj_error(e, ENOMEM, 0, 0, "out of memory");
                }
        }
        p.agent = i < argc ? argv + i + 1 : argv + argc;
        *ret = p;
        return 0;
}
