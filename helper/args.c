/* SPDX-License-Identifier: MIT */
/* The helper's command line: exactly one form per operation, nothing optional, nothing reordered. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "helper.h"

static const char *const op_names[] = {
        [OP_PING] = "ping",
        [OP_ENTER] = "enter",
        [OP_KILL_USER] = "kill-user",
        [OP_PROXY_LOG] = "proxy-log",
};

const char *helper_op_name(HelperOp op)
{
        return op_names[op];
}

/* A byte offset: decimal digits only, no sign, no leading zero, at most INT64_MAX (an off_t). */
static int parse_offset(const char *s, uint64_t *ret)
{
        uint64_t v = 0;

        if (!s[0] || (s[0] == '0' && s[1]))
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                if (v > (INT64_MAX - (uint64_t)(*p - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(*p - '0');
        }
        *ret = v;
        return 0;
}

int helper_args_parse(int argc, char **argv, HelperArgs *ret, AjError *reterr)
{
        HelperArgs a = { 0 };
        size_t i;

        if (argc < 2 || !argv[1] || strcmp(argv[1], "helper") != 0)
                return aj_error(reterr, EINVAL, 0, 0, "usage: agentic-job helper OP ...");
        if (argc < 3)
                return aj_error(reterr, EINVAL, 0, 0,
                                "missing operation (ping, enter, kill-user, proxy-log)");
        for (i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
                if (strcmp(argv[2], op_names[i]) == 0)
                        break;
        if (i == sizeof(op_names) / sizeof(op_names[0]))
                return aj_error(reterr, EINVAL, 0, 0, "unknown operation '%.64s'", argv[2]);
        a.op = (HelperOp)i;

        switch (a.op) {
        case OP_PING:
        case OP_KILL_USER:
                if (argc != 3)
                        return aj_error(reterr, EINVAL, 0, 0, "%s takes no arguments", op_names[a.op]);
                break;
        case OP_PROXY_LOG:
                if (argc != 5 || strcmp(argv[3], "--from") != 0)
                        return aj_error(reterr, EINVAL, 0, 0, "usage: proxy-log --from N");
                if (parse_offset(argv[4], &a.from) < 0)
                        return aj_error(reterr, EINVAL, 0, 0,
                                        "proxy-log: --from: '%.64s' is not a byte offset (0 to %lld)",
                                        argv[4], (long long)INT64_MAX);
                break;
        case OP_ENTER:
                if (argc < 7 || strcmp(argv[3], "--chdir") != 0 || strcmp(argv[5], "--") != 0)
                        return aj_error(reterr, EINVAL, 0, 0, "usage: enter --chdir DIR -- ARGV...");
                a.chdir = argv[4];
                a.argv = argv + 6;
                if (!a.argv[0][0])
                        return aj_error(reterr, EINVAL, 0, 0, "enter: the command is empty");
                break;
        }
        *ret = a;
        return 0;
}

int enter_dir_check(const char *home, const char *dir, AjError *reterr)
{
        size_t hl = strlen(home), dl = strlen(dir);

        if (dir[0] != '/')
                return aj_error(reterr, EINVAL, 0, 0, "--chdir %.256s: not an absolute path", dir);
        if (dl >= PATH_MAX)
                return aj_error(reterr, EINVAL, 0, 0, "--chdir: path too long");
        for (const char *p = dir; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        return aj_error(reterr, EINVAL, 0, 0, "--chdir: path holds a control character");
        /* Components: no empty one (a doubled or, but for one, trailing slash), no "." or "..". */
        for (const char *c = dir + 1; *c;) {
                const char *end = strchrnul(c, '/');
                size_t len = (size_t)(end - c);

                if ((len == 0 && *end) || (len == 1 && c[0] == '.') ||
                    (len == 2 && c[0] == '.' && c[1] == '.'))
                        return aj_error(reterr, EINVAL, 0, 0, "--chdir %.256s: not plainly spelled", dir);
                c = *end ? end + 1 : end;
        }
        if (dl > 1 && dir[dl - 1] == '/')
                dl--;
        while (hl > 1 && home[hl - 1] == '/')
                hl--;
        if (hl <= 1 || dl < hl || memcmp(dir, home, hl) != 0 || (dl > hl && dir[hl] != '/'))
                return aj_error(reterr, EINVAL, 0, 0, "--chdir %.256s: not under the sandbox home %.256s",
                                dir, home);
        return 0;
}
