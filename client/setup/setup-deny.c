/* SPDX-License-Identifier: MIT */
/* Denying the sandbox user root's ways in: sudo, polkit, cron, at, lingering (a lingering user's
 * service manager outlives every session the reaper knows of) and its user manager. The lock stage writes
 * the same sudo and polkit files again with the runner denied too. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build-config.h"
#include "macro.h"
#include "read-file.h"
#include "setup-text.h"
#include "setup.h"

#define SUDOERS_MAIN  "/etc/sudoers"
#define SUDOERS_DIR   "/etc/sudoers.d"
#define SUDOERS_MAX   (1024 * 1024)
#define DENY_LIST_MAX (1024 * 1024)
#define LINGER_DIR    "/var/lib/systemd/linger"

int sudoers_d_check(AjError *reterr)
{
        const char *ours = strrchr(SUDOERS_PATH, '/') + 1;
        _cleanup_free_ char *text = NULL;
        unsigned line;
        DIR *d;
        int r;

        r = read_regular_nofollow(AT_FDCWD, SUDOERS_MAIN, SUDOERS_MAX, &text, NULL);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "%s: %s", SUDOERS_MAIN, strerror(-r));
        if (!sudoers_includes_dir(text, SUDOERS_DIR))
                return aj_error(reterr, ENOENT, 0, 0, "%s does not include %s, where the sudo rule goes",
                                SUDOERS_MAIN, SUDOERS_DIR);
        line = sudoers_rule_after_dir(text, SUDOERS_DIR);
        if (line > 0)
                return aj_error(reterr, EPERM, 0, 0,
                                "%s line %u comes after its include of %s, so sudo would apply it after the "
                                "sandbox's rules",
                                SUDOERS_MAIN, line, SUDOERS_DIR);
        d = opendir(SUDOERS_DIR);
        if (!d)
                return aj_error(reterr, errno, 0, 0, "%s: %s", SUDOERS_DIR, strerror(errno));
        r = 0;
        for (struct dirent *de; r >= 0 && (de = readdir(d));) {
                size_t n = strlen(de->d_name);

                /* What sudo skips: names with a dot, names ending in '~'. */
                if (strchr(de->d_name, '.') || de->d_name[n - 1] == '~')
                        continue;
                if (strcmp(de->d_name, ours) == 0)
                        r = aj_error(reterr, EEXIST, 0, 0, "%s exists", SUDOERS_PATH);
                else if (strcmp(de->d_name, ours) > 0)
                        r = aj_error(reterr, EPERM, 0, 0,
                                     "%s/%s is read after %s, so its rules would win over the sandbox's",
                                     SUDOERS_DIR, de->d_name, ours);
        }
        (void)closedir(d);
        return r;
}

/* The list's text, or NULL when it does not exist. */
static int read_list(const char *path, char **ret, size_t *ret_size, struct stat *ret_st, AjError *reterr)
{
        int r = read_regular_nofollow(AT_FDCWD, path, DENY_LIST_MAX, ret, ret_size);

        *ret_st = (struct stat){ .st_mode = 0644 };
        if (r == -ENOENT) {
                *ret = NULL;
                *ret_size = 0;
                return 0;
        }
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "%s: %s", path, strerror(-r));
        if (lstat(path, ret_st) < 0)
                return aj_error(reterr, errno, 0, 0, "%s: %s", path, strerror(errno));
        return 0;
}

static int decide(DenyListKind kind, const char *user, DenyListDecision *ret, struct stat *ret_st,
                  AjError *reterr)
{
        _cleanup_free_ char *allow = NULL, *deny = NULL;
        size_t allow_size = 0, deny_size = 0;
        struct stat ignored;
        int r;

        if ((r = read_list(deny_list_allow_path(kind), &allow, &allow_size, &ignored, reterr)) < 0 ||
            (r = read_list(deny_list_deny_path(kind), &deny, &deny_size, ret_st, reterr)) < 0)
                return r;
        return deny_list_decide(kind, user, allow, allow_size, deny, deny_size, ret, reterr);
}

int deny_lists_check(const char *user, AjError *reterr)
{
        for (DenyListKind k = DENY_LIST_CRON; k <= DENY_LIST_AT; k++) {
                DenyListDecision d = { 0 };
                struct stat st;
                int r = decide(k, user, &d, &st, reterr);

                deny_list_decision_done(&d);
                if (r < 0)
                        return r;
        }
        return 0;
}

uid_t polkit_rules_dir_owner(void)
{
        const struct passwd *pw;
        struct stat st;

        if (lstat(POLKIT_RULES_DIR, &st) < 0 || st.st_uid == 0)
                return (uid_t)-1;
        pw = getpwuid(st.st_uid);
        return pw && strcmp(pw->pw_name, "polkitd") == 0 ? st.st_uid : (uid_t)-1;
}

int setup_write_rules(Setup *s, bool lock, AjError *reterr)
{
        const char *runner = s->runner_name;
        _cleanup_free_ char *sudoers = NULL, *polkit = NULL;
        struct stat st;
        int r;

        r = sudoers_text(HELPER_PATH, s->config->sandbox_user, runner, lock, &sudoers, reterr);
        if (r >= 0) {
                char *visudo[] = { s->tools.visudo, (char *)"-c", (char *)"-f", NULL };

                r = setup_write_file(s, SUDOERS_PATH, sudoers, strlen(sudoers), 0440, 0, 0, visudo,
                                     lock ? "the runner may run the helper and nothing else as root"
                                          : "the sandbox user may run nothing; the runner the helper",
                                     reterr);
        }
        if (r < 0)
                return r;
        if (lstat(POLKIT_RULES_DIR, &st) < 0 || !S_ISDIR(st.st_mode)) {
                setup_note("no %s: polkit is not installed, nothing to deny there", POLKIT_RULES_DIR);
                return 0;
        }
        r = polkit_rules_text(s->config->sandbox_user, runner, lock, &polkit, reterr);
        if (r >= 0)
                r = setup_write_file_in(
                        s, POLKIT_RULES_PATH, polkit_rules_dir_owner(), polkit, strlen(polkit), 0644, 0, 0,
                        NULL,
                        lock ? "every polkit action refused to the sandbox user and the runner"
                             : "every polkit action refused to the sandbox user",
                        reterr);
        return r;
}

static int deny_list(Setup *s, DenyListKind kind, AjError *reterr)
{
        DenyListDecision d = { 0 };
        struct stat st;
        int r = decide(kind, s->config->sandbox_user, &d, &st, reterr);

        if (r >= 0 && d.write)
                r = setup_write_file(s, deny_list_deny_path(kind), d.deny_text, d.deny_size,
                                     st.st_mode & 07777, st.st_uid, st.st_gid, NULL, d.reason, reterr);
        else if (r >= 0)
                setup_note("%s: %s", deny_list_deny_path(kind), d.reason);
        deny_list_decision_done(&d);
        return r;
}

static int deny_linger(Setup *s, AjError *reterr)
{
        _cleanup_free_ char *file = NULL;

        if (s->systemd) {
                char *argv[] = { s->tools.loginctl, (char *)"disable-linger", (char *)"--",
                                 s->config->sandbox_user, NULL };

                setup_change(s, "loginctl disable-linger -- %s", s->config->sandbox_user);
                return s->dry_run ? 0 : setup_run(argv, "disabling the sandbox user's lingering", reterr);
        }
        if (asprintf(&file, "%s/%s", LINGER_DIR, s->config->sandbox_user) < 0)
                return -ENOMEM;
        if (access(file, F_OK) < 0) {
                setup_note("systemd is not running; no %s", file);
                return 0;
        }
        setup_change(s, "rm %s", file);
        if (!s->dry_run && unlink(file) < 0)
                return aj_error(reterr, errno, 0, 0, "rm %s: %s", file, strerror(errno));
        return 0;
}

/* A user manager (user@UID.service) runs the sandbox user's units outside the command that started them:
 * they outlive it, leave its cgroup, and have neither no_new_privs nor an empty bounding set, so set-id
 * programs work again there. Masked, logind cannot start it; a session (run0, or the transient service
 * with PAMName=login of older systemd) still opens. */
static int deny_user_manager(Setup *s, AjError *reterr)
{
        char unit[64];

        if (s->config->user_manager) {
                setup_note("the sandbox user keeps its user manager: [sandbox] user-manager = true");
                return 0;
        }
        if (!s->systemd) {
                setup_note("systemd is not running: no user manager to mask");
                return 0;
        }
        if (s->dry_run && !s->sandbox_exists) {
                setup_change(s, "systemctl mask -- user@UID.service (UID: the sandbox user's, once made)");
                return 0;
        }
        (void)snprintf(unit, sizeof(unit), "user@%u.service", (unsigned)s->sandbox_uid);
        setup_change(s, "systemctl mask -- %s", unit);
        if (s->dry_run)
                return 0;
        char *argv[] = { s->tools.systemctl, (char *)"mask", (char *)"--", unit, NULL };
        return setup_run(argv, "masking the sandbox user's user manager", reterr);
}

int stage_deny(Setup *s, AjError *reterr)
{
        int r = setup_write_rules(s, false, reterr);

        if (r >= 0)
                r = deny_list(s, DENY_LIST_CRON, reterr);
        if (r >= 0)
                r = deny_list(s, DENY_LIST_AT, reterr);
        if (r >= 0)
                r = deny_linger(s, reterr);
        if (r >= 0)
                r = deny_user_manager(s, reterr);
        return r;
}
