/* SPDX-License-Identifier: MIT */
/* The helper's command line: exactly one form per operation, nothing optional, nothing reordered. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "helper.h"
#include "parse.h"

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
                a.from_end = strcmp(argv[4], "end") == 0;
                /* A byte offset: an off_t. */
                if (!a.from_end && parse_decimal(argv[4], strlen(argv[4]), INT64_MAX, &a.from) < 0)
                        return aj_error(
                                reterr, EINVAL, 0, 0,
                                "proxy-log: --from: '%.64s' is not a byte offset (0 to %lld) or \"end\"",
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
        char plain[PATH_MAX], base[PATH_MAX];
        size_t hl = strlen(home), dl = strlen(dir);

        /* Control characters first, so no message below ever quotes one. */
        for (const char *p = dir; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        return aj_error(reterr, EINVAL, 0, 0, "--chdir: path holds a control character");
        if (dir[0] != '/')
                return aj_error(reterr, EINVAL, 0, 0, "--chdir %.256s: not an absolute path", dir);
        if (dl >= PATH_MAX)
                return aj_error(reterr, EINVAL, 0, 0, "--chdir: path too long");
        /* One trailing "/" is tolerated (shell completion leaves it), on either path. */
        memcpy(plain, dir, dl + 1);
        if (dl > 2 && plain[dl - 1] == '/' && plain[dl - 2] != '/')
                plain[--dl] = '\0';
        if (!path_is_plain_absolute(plain))
                return aj_error(reterr, EINVAL, 0, 0, "--chdir %.256s: not plainly spelled", dir);
        if (hl >= PATH_MAX)
                return aj_error(reterr, EINVAL, 0, 0, "the sandbox home is too long");
        memcpy(base, home, hl + 1);
        if (hl > 2 && base[hl - 1] == '/' && base[hl - 2] != '/')
                base[--hl] = '\0';
        if (!path_is_plain_absolute(base) || hl <= 1 || strncmp(plain, base, hl) != 0 ||
            (plain[hl] != '\0' && plain[hl] != '/'))
                return aj_error(reterr, EINVAL, 0, 0, "--chdir %.256s: not under the sandbox home %.256s",
                                dir, home);
        return 0;
}
