/* SPDX-License-Identifier: MIT */
/* agentic-job sandbox exec [--chdir DIR] [--stdin FILE] [--keep] [--raw] -- CMD...
 * One command as the sandbox user, through the helper: what a workflow step uses as its shell. Its output
 * goes to the job's log, where the runner takes a line that starts with "::" as a workflow command (an
 * output of the step for later steps to interpolate, a mask, stop-commands): it passes through run's
 * filter, which leaves none; --raw passes its bytes as they are, for output that is not the log's. When
 * it has exited, every process of the sandbox user is ended (helper kill-user), so that nothing a step
 * started (a memory storm, a busy loop, a connection held to the proxy) runs on beside the later steps,
 * the runner's own among them; --keep leaves them, for a step that starts a service for the next ones. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build-config.h"
#include "check-record.h"
#include "cli.h"
#include "client.h"
#include "config.h"
#include "helper-call.h"
#include "macro.h"
#include "read-file.h"
#include "step-frame.h"

extern char **environ;

#define SUDO_PATH "/usr/bin/sudo"

typedef enum ExecOption { EXEC_CHDIR, EXEC_STDIN, EXEC_SCRIPT, EXEC_KEEP, EXEC_RAW, EXEC_END } ExecOption;

const CliOption sandbox_exec_options[] = {
        { "--chdir", EXEC_CHDIR, CLI_DIR, false },
        { "--stdin", EXEC_STDIN, CLI_FILE, false },
        { "--script", EXEC_SCRIPT, CLI_FILE, false },
        { "--keep", EXEC_KEEP, CLI_FLAG, false },
        { "--raw", EXEC_RAW, CLI_FLAG, false },
        { "--", EXEC_END, CLI_COMMAND, false },
        {},
};

/* Whether path is dir or below it, as getcwd() spells it (no link, no "..": the helper refuses those). */
static bool path_under(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool same_dir(const char *a, const char *b)
{
        struct stat x, y;

        return b && stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static int usage_error(const char *what, const char *arg)
{
        fprintf(stderr, "agentic-job sandbox exec: %s%s\n", what, arg);
        fputs("usage: agentic-job sandbox exec [--chdir DIR] [--stdin FILE | --script FILE] [--keep] "
              "[--raw] "
              "-- CMD...\n",
              stderr);
        return CLIENT_EXIT_USAGE;
}

int sandbox_exec_main(int argc, char **argv)
{
        _cleanup_(config_freep) Config *config = NULL;
        _cleanup_free_ char *home = NULL;
        _cleanup_free_ char **line = NULL;
        _cleanup_close_ int in_fd = -EBADF;
        const char *dir = NULL, *stdin_file = NULL, *script_file = NULL;
        _cleanup_free_ char *script = NULL, *cwd = NULL;
        size_t script_size = 0;
        char exe[PATH_MAX];
        char *env[] = { (char *)"PATH=/usr/bin:/bin", NULL };
        AjError e = { 0 };
        bool keep = false, raw = false;
        int i, r, status, sig;

        for (i = 1; i < argc; i++) {
                const CliOption *o = cli_option_find(sandbox_exec_options, argv[i]);
                const char **slot = NULL;

                if (!o)
                        return usage_error("unknown option ", argv[i]);
                switch ((ExecOption)o->id) {
                case EXEC_CHDIR:
                        slot = &dir;
                        break;
                case EXEC_STDIN:
                        slot = &stdin_file;
                        break;
                case EXEC_SCRIPT:
                        slot = &script_file;
                        break;
                case EXEC_KEEP:
                        if (keep)
                                return usage_error("given twice: ", argv[i]);
                        keep = true;
                        continue;
                case EXEC_RAW:
                        if (raw)
                                return usage_error("given twice: ", argv[i]);
                        raw = true;
                        continue;
                case EXEC_END:
                        break;
                }
                if (!slot) /* "--" */
                        break;
                if (*slot)
                        return usage_error("given twice: ", argv[i]);
                if (i + 1 >= argc)
                        return usage_error("needs a value: ", argv[i]);
                *slot = argv[++i];
        }
        if (i >= argc)
                return usage_error("missing '--' before the command", "");
        if (i + 1 >= argc)
                return usage_error("missing the command after '--'", "");
        if (stdin_file && script_file)
                return usage_error("--stdin and --script exclude each other", "");

        /* A pass record means nothing has entered the sandbox user since the check: it goes first. */
        r = record_remove(getenv("RUNNER_TEMP"));
        if (r < 0) {
                fprintf(stderr, "agentic-job sandbox exec: cannot remove $RUNNER_TEMP/" RECORD_NAME ": %s\n",
                        strerror(-r));
                return CLIENT_EXIT_USAGE;
        }

        r = config_load(CONFIG_PATH, &config, &e);
        if (r < 0) {
                fprintf(stderr, "agentic-job sandbox exec: %s\n", e.message);
                return CLIENT_EXIT_USAGE;
        }
        if (!dir) {
                struct passwd *pw = getpwnam(config->sandbox_user);
                if (!pw) {
                        fprintf(stderr, "agentic-job sandbox exec: sandbox user %s does not exist\n",
                                config->sandbox_user);
                        return CLIENT_EXIT_USAGE;
                }
                home = strdup(pw->pw_dir);
                if (!home)
                        return CLIENT_EXIT_USAGE;
                dir = home;
                /* A script step runs where the step is, when that is the sandbox user's (under its
                 * home: where the runner may enter it); the runner's workspace, where every step starts
                 * unless told, is not: the home then. Any other place is refused, never dropped. */
                cwd = script_file ? getcwd(NULL, 0) : NULL;
                if (cwd && path_under(cwd, home))
                        dir = cwd;
                else if (cwd && !same_dir(cwd, getenv("GITHUB_WORKSPACE"))) {
                        fprintf(stderr,
                                "agentic-job sandbox exec: the step's directory %s is not under the sandbox "
                                "user's home %s: cd in the script instead, or give --chdir\n",
                                cwd, home);
                        return CLIENT_EXIT_USAGE;
                }
        }
        if (script_file) {
                ssize_t exe_len;

                r = read_file_for_parse(script_file, STEP_SCRIPT_MAX, &script, &script_size, &e);
                if (r < 0) {
                        fprintf(stderr, "agentic-job sandbox exec: --script %s\n", e.message);
                        return CLIENT_EXIT_USAGE;
                }
                r = step_frame_build(config->step_env, environ, script, script_size, &in_fd);
                if (r < 0) {
                        fprintf(stderr,
                                "agentic-job sandbox exec: --script: the variables [sandbox] step-env "
                                "names: %s\n",
                                r == -EFBIG    ? "over 256 KiB"
                                : r == -EINVAL ? "a value that is not UTF-8"
                                               : strerror(-r));
                        return CLIENT_EXIT_USAGE;
                }
                exe_len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
                if (exe_len <= 0) {
                        fprintf(stderr, "agentic-job sandbox exec: --script: /proc/self/exe: %s\n",
                                strerror(errno));
                        return CLIENT_EXIT_USAGE;
                }
                exe[exe_len] = '\0';
        }
        if (stdin_file) {
                in_fd = open(stdin_file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (in_fd < 0) {
                        fprintf(stderr, "agentic-job sandbox exec: --stdin %s: %s\n", stdin_file,
                                strerror(errno));
                        return CLIENT_EXIT_USAGE;
                }
        }

        /* sudo -n -- HELPER helper enter --chdir DIR -- [SELF sandbox step-inside --] CMD... */
        line = calloc((size_t)(argc - i) + 13, sizeof(char *));
        if (!line)
                return CLIENT_EXIT_USAGE;
        size_t n = 0;
        line[n++] = (char *)SUDO_PATH;
        line[n++] = (char *)"-n";
        line[n++] = (char *)"--";
        line[n++] = (char *)HELPER_PATH;
        line[n++] = (char *)"helper";
        line[n++] = (char *)"enter";
        line[n++] = (char *)"--chdir";
        line[n++] = (char *)dir;
        if (script_file) {
                line[n++] = (char *)"--";
                line[n++] = exe;
                line[n++] = (char *)"sandbox";
                line[n++] = (char *)"step-inside";
        }
        for (int j = i; j < argc; j++)
                line[n++] = argv[j];

        r = spawn_pumped(line, env, in_fd >= 0 ? in_fd : STDIN_FILENO, !raw, &status);
        if (r < 0) {
                fprintf(stderr, "agentic-job sandbox exec: cannot run %s: %s\n", SUDO_PATH, strerror(-r));
                return CLIENT_EXIT_USAGE;
        }
        /* A cancelled step (the runner's SIGINT, then SIGTERM) leaves nothing behind: run0 and systemd-run
         * end at the signal while the unit may go on. A step that ended by itself leaves nothing either,
         * unless --keep: what it left would run on through every later step. */
        sig = pump_cancel_signal();
        if (sig || !keep) {
                char what[256] = "";
                int k = helper_kill_user(what, sizeof(what));

                if (k != 0) {
                        fprintf(stderr,
                                "agentic-job sandbox exec: helper kill-user failed after the command (%s): "
                                "processes of the sandbox user may remain\n",
                                k < 0 ? strerror(-k) : what);
                        /* The command's own failure stands; a success does not, with survivors. */
                        return status == 0 ? CLIENT_EXIT_USAGE : status;
                }
                if (sig)
                        fprintf(stderr, "agentic-job sandbox exec: cancelled by signal %d: %s\n", sig, what);
                else if (strncmp(what, "ended 0 ", 8) != 0 || strstr(what, "; "))
                        fprintf(stderr, "agentic-job sandbox exec: the command left processes behind: %s\n",
                                what);
        }
        return status;
}
