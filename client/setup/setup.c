/* SPDX-License-Identifier: MIT */
/* `agentic-job sandbox setup --config FILE [--helper FILE] [--dry-run]`: the command, its stage table and
 * what every stage shares (printing a change, running a program, writing a root-owned file). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "client.h"
#include "macro.h"
#include "root-file.h"
#include "setup.h"
#include "spawn.h"

#define SETUP_EXIT_REFUSED 2 /* usage, or refused before any change */
#define SETUP_EXIT_FAILED  4 /* failed after a change */
#define RUN_OUTPUT_MAX     4096

typedef enum SetupOption { SETUP_CONFIG, SETUP_HELPER, SETUP_DRY_RUN } SetupOption;

const CliOption sandbox_setup_options[] = {
        { "--config", SETUP_CONFIG, CLI_FILE, false },
        { "--helper", SETUP_HELPER, CLI_FILE, false },
        { "--dry-run", SETUP_DRY_RUN, CLI_FLAG, false },
        {},
};

static const struct {
        const char *name;
        SetupStage run;
} stages[] = {
        { "state-dir", stage_state_dir },
        { "sandbox-user", stage_sandbox_user },
        { "environment", stage_environment },
        { "close-homes", stage_close_homes },
        { "stop-services", stage_stop_services },
        { "helper", stage_helper },
        { "deny", stage_deny },
        { "budget", stage_budget },
        { "apparmor", stage_apparmor },
        { "egress-proxy", stage_egress_proxy },
        { "network-rules", stage_network_rules },
        { "walk", stage_walk },
        { "setuid-owners", stage_setuid_owners },
        { "ptrace", stage_ptrace },
        { "config", stage_config },
        { "lock", stage_lock },
};

void setup_change(const Setup *s, const char *fmt, ...)
{
        va_list ap;

        fputs(s->dry_run ? "would: " : "  ", stdout);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
}

void setup_note(const char *fmt, ...)
{
        va_list ap;

        fputs("  ", stdout);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
}

int setup_run(char *const *argv, const char *what, AjError *reterr)
{
        _cleanup_free_ char *out = NULL;
        size_t n = 0;
        char line[256];
        int status = spawn_wait(argv, NULL, SPAWN_MERGE_STDERR, RUN_OUTPUT_MAX, &out, &n);

        if (status < 0)
                return aj_error(reterr, -status, 0, 0, "%s: cannot run %s: %s", what, argv[0],
                                strerror(-status));
        if (status == 0)
                return 0;
        spawn_first_line(out, n, line, sizeof(line));
        return aj_error(reterr, EIO, 0, 0, "%s: %s failed (status %d)%s%s", what, argv[0], status,
                        line[0] ? ": " : "", line);
}

int setup_unit_exists(const Setup *s, const char *unit)
{
        char *argv[] = { s->tools.systemctl,
                         (char *)"show",
                         (char *)"--property=LoadState",
                         (char *)"--value",
                         (char *)"--",
                         (char *)unit,
                         NULL };
        _cleanup_free_ char *out = NULL;
        int status = spawn_wait(argv, NULL, SPAWN_STDOUT, 256, &out, NULL);

        if (status != 0)
                return -EIO;
        return strncmp(out, "not-found", 9) != 0;
}

int setup_write_file_in(const Setup *s, const char *path, uid_t dir_owner, const void *data, size_t size,
                        mode_t mode, uid_t uid, gid_t gid, char *const *validator, const char *why,
                        AjError *reterr)
{
        int r;

        setup_change(s, "write %s (%04o, uid %u, gid %u, %zu bytes): %s", path, (unsigned)mode,
                     (unsigned)uid, (unsigned)gid, size, why);
        if (s->dry_run)
                return 0;
        r = root_file_write_in(path, dir_owner, data, size, mode, uid, gid, validator, reterr);
        return r < 0 ? r : 0;
}

int setup_write_file(const Setup *s, const char *path, const void *data, size_t size, mode_t mode, uid_t uid,
                     gid_t gid, char *const *validator, const char *why, AjError *reterr)
{
        return setup_write_file_in(s, path, (uid_t)-1, data, size, mode, uid, gid, validator, why, reterr);
}

static double seconds_since(const struct timespec *t0)
{
        struct timespec t;

        (void)clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int usage_error(const char *what)
{
        fprintf(stderr,
                "agentic-job sandbox setup: %s\n"
                "usage: agentic-job sandbox setup --config FILE [--helper FILE] [--dry-run]\n",
                what);
        return SETUP_EXIT_REFUSED;
}

static int parse_args(int argc, char **argv, Setup *s)
{
        /* argv[0] is "setup". */
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                const CliOption *o = cli_option_find(sandbox_setup_options, a);
                const char **slot = NULL;

                if (!o) {
                        fprintf(stderr, "agentic-job sandbox setup: %s: %s\n",
                                a[0] == '-' ? "unknown option" : "unexpected argument", a);
                        return usage_error("see agentic-job(1)");
                }
                switch ((SetupOption)o->id) {
                case SETUP_DRY_RUN:
                        s->dry_run = true;
                        continue;
                case SETUP_CONFIG:
                        slot = &s->config_path;
                        break;
                case SETUP_HELPER:
                        slot = &s->helper_source;
                        break;
                }
                if (!slot)
                        continue;
                if (i + 1 >= argc)
                        return usage_error(slot == &s->config_path ? "--config needs a file"
                                                                   : "--helper needs a file");
                if (*slot)
                        return usage_error(slot == &s->config_path ? "--config given twice"
                                                                   : "--helper given twice");
                *slot = argv[++i];
        }
        if (!s->config_path)
                return usage_error("missing --config FILE");
        return 0;
}

int sandbox_setup_main(int argc, char **argv)
{
        _cleanup_(setup_done) Setup s = { .proxy_uid = (uid_t)-1, .sandbox_uid = (uid_t)-1 };
        struct timespec t0;
        AjError e = { 0 };
        int r;

        r = parse_args(argc, argv, &s);
        if (r != 0)
                return r;
        /* Some images build with umask 000; nothing setup makes may depend on the caller's. */
        umask(022);
        (void)clock_gettime(CLOCK_MONOTONIC, &t0);

        r = setup_preflight(&s, &e);
        if (r < 0) {
                fprintf(stderr, "agentic-job sandbox setup: %s (nothing was changed)\n", e.message);
                return SETUP_EXIT_REFUSED;
        }
        (void)fflush(stdout);

        for (size_t i = 0; i < ELEMENTSOF(stages); i++) {
                struct timespec ts;

                (void)clock_gettime(CLOCK_MONOTONIC, &ts);
                e = (AjError){ 0 };
                r = stages[i].run(&s, &e);
                if (s.dry_run && r >= 0)
                        printf("stage %s: dry run\n", stages[i].name);
                else
                        printf("stage %s: %.3fs %s\n", stages[i].name, seconds_since(&ts),
                               r < 0 ? "failed" : "ok");
                (void)fflush(stdout);
                if (r < 0) {
                        fprintf(stderr, "agentic-job sandbox setup: stage %s failed: %s%s\n", stages[i].name,
                                e.message,
                                s.dry_run ? " (dry run: nothing was changed)"
                                          : " (the machine is half set up; do not use it)");
                        return s.dry_run ? SETUP_EXIT_REFUSED : SETUP_EXIT_FAILED;
                }
        }
        if (s.dry_run)
                puts("dry run: nothing was changed");
        else
                printf("setup done in %.3fs\n", seconds_since(&t0));
        return 0;
}
