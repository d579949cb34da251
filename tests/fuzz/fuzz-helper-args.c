/* SPDX-License-Identifier: MIT */
/* helper_args_parse() and enter_dir_check() on arbitrary command lines.
 *
 * The input is the helper's arguments separated by NUL bytes (a final NUL ends the last argument rather
 * than starting an empty one), at most MAX_ARGS of them; "agentic-job" is put in front as argv[0]. Beyond
 * not crashing, what is accepted must be what the helper promises (helper.h): the checks below abort on
 * any accepted command line that breaks a rule. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helper.h"

#define MAX_ARGS     64
#define SANDBOX_HOME "/home/runner-sandbox"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(bool ok, const char *what)
{
        if (!ok) {
                fprintf(stderr, "fuzz-helper-args: %s\n", what);
                abort();
        }
}

/* An independent statement of enter_dir_check()'s rule: absolute, shorter than PATH_MAX, no control
 * character, no empty, "." or ".." component (one trailing "/" allowed), and home or below it. */
static bool dir_ok(const char *home, const char *dir)
{
        size_t hl = strlen(home), dl = strlen(dir);

        if (dir[0] != '/' || dl >= PATH_MAX)
                return false;
        for (size_t i = 0; i < dl; i++)
                if ((unsigned char)dir[i] < 0x20 || dir[i] == 0x7f)
                        return false;
        if (dl > 1 && dir[dl - 1] == '/')
                dl--;
        for (size_t i = 1; i <= dl;) {
                size_t j = i;

                while (j < dl && dir[j] != '/')
                        j++;
                if (j == i || (j - i == 1 && dir[i] == '.') ||
                    (j - i == 2 && dir[i] == '.' && dir[i + 1] == '.'))
                        return false;
                i = j + 1;
        }
        if (dl == 1) /* "/" alone */
                return false;
        return dl >= hl && memcmp(dir, home, hl) == 0 && (dl == hl || dir[hl] == '/');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *buf, *argv[MAX_ARGS + 2];
        int argc = 0;
        HelperArgs a;
        AjError e;
        size_t end = size;
        int r;

        buf = malloc(size + 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        if (end > 0 && buf[end - 1] == '\0')
                end--;

        argv[argc++] = (char *)"agentic-job";
        if (size > 0)
                for (size_t i = 0; argc < MAX_ARGS + 1;) {
                        argv[argc++] = buf + i;
                        i += strlen(buf + i) + 1;
                        if (i > end)
                                break;
                }
        argv[argc] = NULL;

        memset(&e, 0, sizeof(e));
        r = helper_args_parse(argc, argv, &a, &e);
        require(r == 0 || r == -EINVAL, "helper_args_parse returned something other than 0 or -EINVAL");
        require(memchr(e.message, '\0', sizeof(e.message)) != NULL, "the message is not terminated");
        if (r < 0) {
                require(e.message[0] != '\0', "refused without a message");
                goto out;
        }

        require(argc >= 3 && strcmp(argv[1], "helper") == 0, "accepted without \"helper\"");
        require(strcmp(helper_op_name(a.op), argv[2]) == 0, "the operation is not argv[2]");
        switch (a.op) {
        case OP_PING:
        case OP_KILL_USER:
                require(argc == 3, "an operation without arguments took some");
                break;
        case OP_PROXY_LOG: {
                char back[32];

                require(argc == 5 && strcmp(argv[3], "--from") == 0, "proxy-log accepted in another form");
                /* "end" (the log's size, nothing read), or plain decimal, no sign, no leading zero:
                 * printing it back gives the argument. */
                if (a.from_end) {
                        require(strcmp(argv[4], "end") == 0, "--from end taken from another word");
                        break;
                }
                require(a.from <= (uint64_t)INT64_MAX, "--from past INT64_MAX");
                (void)snprintf(back, sizeof(back), "%" PRIu64, a.from);
                require(strcmp(back, argv[4]) == 0, "--from is not in its one spelling");
                break;
        }
        case OP_ENTER: {
                bool ok;

                require(argc >= 7 && strcmp(argv[3], "--chdir") == 0 && strcmp(argv[5], "--") == 0,
                        "enter accepted in another form");
                require(a.chdir == argv[4], "--chdir is not argv[4]");
                require(a.argv == argv + 6 && a.argv[0] && a.argv[0][0], "the command is missing or empty");

                memset(&e, 0, sizeof(e));
                r = enter_dir_check(SANDBOX_HOME, a.chdir, &e);
                require(r == 0 || r == -EINVAL,
                        "enter_dir_check returned something other than 0 or -EINVAL");
                require(r == 0 || e.message[0] != '\0', "enter_dir_check refused without a message");
                ok = dir_ok(SANDBOX_HOME, a.chdir);
                require(ok == (r == 0), ok ? "enter_dir_check refused a plain directory under the home"
                                           : "enter_dir_check accepted a directory it must refuse");
                break;
        }
        default:
                require(false, "an unknown operation was accepted");
        }
out:
        free(buf);
        return 0;
}
