/* SPDX-License-Identifier: MIT */
/* Setup's refusals: everything that would stop it later is looked for here, before the first change, so
 * that a refused setup leaves the machine exactly as it was. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build-config.h"
#include "egress-paths.h"
#include "egress-policy.h"
#include "egress-proxy.h"
#include "environment-filter.h"
#include "libsystemd.h"
#include "macro.h"
#include "proc.h"
#include "read-file.h"
#include "resolv-conf.h"
#include "root-file.h"
#include "setup-text.h"
#include "setup.h"
#include "spawn.h"
#include "strv.h"
#include "subid.h"
#include "trusted-path.h"

#define MAX_GROUPS 1024

static int find_tool(const char *name, char **ret, AjError *reterr)
{
        AjError inner = { 0 };
        int r = trusted_program_find(SETUP_ROOT_PATH, name, ret, &inner);

        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "%s is needed and not usable on %s: %s", name,
                                SETUP_ROOT_PATH, inner.message);
        return 0;
}

static int find_tools(Setup *s, AjError *reterr)
{
        SetupTools *t = &s->tools;
        AjError ignored = { 0 };
        int r;

        if ((r = find_tool("useradd", &t->useradd, reterr)) < 0 ||
            (r = find_tool("usermod", &t->usermod, reterr)) < 0 ||
            (r = find_tool("gpasswd", &t->gpasswd, reterr)) < 0 ||
            (r = find_tool("visudo", &t->visudo, reterr)) < 0 ||
            (r = find_tool("nft", &t->nft, reterr)) < 0 || (r = find_tool("sudo", &t->sudo, reterr)) < 0 ||
            (r = find_tool("runuser", &t->runuser, reterr)) < 0 ||
            (r = find_tool("passwd", &t->passwd, reterr)) < 0)
                return r;
        if (s->systemd && ((r = find_tool("systemctl", &t->systemctl, reterr)) < 0 ||
                           (r = find_tool("loginctl", &t->loginctl, reterr)) < 0))
                return r;
        (void)trusted_program_find(SETUP_ROOT_PATH, "dpkg-query", &t->dpkg_query, &ignored);
        if (!t->dpkg_query)
                (void)trusted_program_find(SETUP_ROOT_PATH, "rpm", &t->rpm, &ignored);
        if (!t->dpkg_query && !t->rpm)
                return aj_error(reterr, ENOENT, 0, 0,
                                "neither dpkg-query nor rpm is on %s: no package database can tell which "
                                "setuid programs a package owns",
                                SETUP_ROOT_PATH);
        return 0;
}

/* Whether uid or one of its subordinate uids runs a process. */
typedef struct UidSearch {
        uid_t uid;
        pid_t found;
} UidSearch;

static int match_uid(pid_t pid, const ProcStatus *st, void *userdata)
{
        UidSearch *u = userdata;

        if (proc_status_dead(st))
                return 0;
        for (size_t i = 0; i < 4; i++)
                if (st->uid[i] == u->uid) {
                        u->found = pid;
                        return -EEXIST;
                }
        return 0;
}

static int check_groups_of(const struct passwd *pw, AjError *reterr)
{
        gid_t gids[MAX_GROUPS];
        int n = MAX_GROUPS;

        if (getgrouplist(pw->pw_name, pw->pw_gid, gids, &n) < 0)
                return aj_error(reterr, E2BIG, 0, 0, "the user %s is in more than %d groups", pw->pw_name,
                                MAX_GROUPS);
        for (int i = 0; i < n; i++) {
                const struct group *gr = getgrgid(gids[i]);

                if (gids[i] == 0 || (gr && group_is_root_equivalent(gr->gr_name)))
                        return aj_error(reterr, EPERM, 0, 0,
                                        "the existing sandbox user %s is in the group %s, which is root by "
                                        "another name",
                                        pw->pw_name, gr ? gr->gr_name : "0");
        }
        return 0;
}

/* useradd's home base (useradd -D, HOME=), where the new user's home will be. */
static int predict_home(Setup *s, AjError *reterr)
{
        char *argv[] = { s->tools.useradd, (char *)"-D", NULL };
        _cleanup_free_ char *out = NULL;
        const char *p;
        size_t n;
        int status = spawn_wait(argv, NULL, SPAWN_STDOUT, 64 * 1024, &out, NULL);

        if (status != 0)
                return aj_error(reterr, EIO, 0, 0, "useradd -D failed (status %d)", status);
        p = strstr(out, "HOME=");
        if (!p || (p != out && p[-1] != '\n'))
                return aj_error(reterr, EINVAL, 0, 0, "useradd -D names no HOME");
        p += 5;
        n = strcspn(p, "\n");
        if (n == 0 || p[0] != '/' ||
            asprintf(&s->sandbox_home, "%.*s/%s", (int)n - (p[n - 1] == '/'), p, s->config->sandbox_user) <
                    0)
                return aj_error(reterr, EINVAL, 0, 0, "useradd -D names no usable HOME");
        return 0;
}

static int check_sandbox_user(Setup *s, AjError *reterr)
{
        const char *name = s->config->sandbox_user;
        const struct passwd *pw = getpwnam(name);
        struct stat st;
        int r;

        if (pw) {
                UidSearch u = { .uid = pw->pw_uid };

                if (!s->config->allow_existing_user)
                        return aj_error(
                                reterr, EEXIST, 0, 0,
                                "the sandbox user %s exists (a fresh machine has none; set [sandbox] "
                                "allow-existing-user = true to take an image's own)",
                                name);
                if (pw->pw_uid == 0 || pw->pw_gid == 0)
                        return aj_error(reterr, EPERM, 0, 0, "the existing sandbox user %s has uid or gid 0",
                                        name);
                r = check_groups_of(pw, reterr);
                if (r < 0)
                        return r;
                r = proc_for_each(match_uid, &u);
                if (r == -EEXIST)
                        return aj_error(reterr, EBUSY, 0, 0,
                                        "the existing sandbox user %s has running processes (pid %d)", name,
                                        (int)u.found);
                if (r < 0)
                        return aj_error(reterr, -r, 0, 0, "scanning /proc: %s", strerror(-r));
                s->sandbox_exists = true;
                s->sandbox_uid = pw->pw_uid;
                s->sandbox_gid = pw->pw_gid;
                s->sandbox_home = strdup(pw->pw_dir);
                if (!s->sandbox_home)
                        return -ENOMEM;
                if (!path_is_plain_absolute(s->sandbox_home) || lstat(s->sandbox_home, &st) < 0 ||
                    !S_ISDIR(st.st_mode) || st.st_uid != pw->pw_uid)
                        return aj_error(reterr, EINVAL, 0, 0,
                                        "the existing sandbox user's home %s is not a directory of its own",
                                        s->sandbox_home);
                return preflight_sandbox_owns_nothing(s, reterr);
        }
        if (getgrnam(name))
                return aj_error(
                        reterr, EEXIST, 0, 0,
                        "a group named %s exists, so useradd cannot make the sandbox user's own group",
                        name);
        r = predict_home(s, reterr);
        if (r < 0)
                return r;
        if (lstat(s->sandbox_home, &st) == 0)
                return aj_error(reterr, EEXIST, 0, 0,
                                "%s exists: a leftover home of an earlier sandbox user would be taken over",
                                s->sandbox_home);
        return 0;
}

static int check_configured_groups(const Setup *s, AjError *reterr)
{
        for (char **g = s->config->sandbox_groups; g && *g; g++) {
                const struct group *gr = getgrnam(*g);

                if (!gr)
                        return aj_error(reterr, ENOENT, 0, 0,
                                        "[sandbox] groups: the group %s does not exist", *g);
                if (gr->gr_gid == 0 || group_is_root_equivalent(gr->gr_name))
                        return aj_error(
                                reterr, EPERM, 0, 0,
                                "[sandbox] groups: the group %s has gid 0: it is root by another name", *g);
        }
        return 0;
}

static int check_runner(Setup *s, AjError *reterr)
{
        const char *name = s->config->runner_user;
        const struct passwd *pw;
        struct stat st;

        if (!name)
                name = getenv("SUDO_USER"); /* the operator's sudo, not the sandbox's: setup runs as root */
        if (!name || !*name)
                return aj_error(reterr, EINVAL, 0, 0,
                                "no runner user: set [sandbox] runner-user, or run setup through sudo");
        if (!user_name_valid(name))
                return aj_error(reterr, EINVAL, 0, 0, "the runner user name %.64s is not valid", name);
        pw = getpwnam(name);
        if (!pw)
                return aj_error(reterr, ENOENT, 0, 0, "the runner user %s does not exist", name);
        if (pw->pw_uid == 0)
                return aj_error(reterr, EPERM, 0, 0, "the runner user %s is root", name);
        if (strcmp(name, s->config->sandbox_user) == 0 ||
            (s->sandbox_uid != (uid_t)-1 && pw->pw_uid == s->sandbox_uid))
                return aj_error(reterr, EINVAL, 0, 0, "the runner user %s is the sandbox user", name);
        if (s->config->lock_runner &&
            (pw->pw_gid == 0 ||
             (getgrgid(pw->pw_gid) && group_is_root_equivalent(getgrgid(pw->pw_gid)->gr_name))))
                return aj_error(reterr, EPERM, 0, 0,
                                "the runner user %s has a root-equivalent group as its own: the lock cannot "
                                "take it away",
                                name);
        s->runner_name = strdup(name);
        s->runner_home = strdup(pw->pw_dir);
        if (!s->runner_name || !s->runner_home)
                return -ENOMEM;
        s->runner_uid = pw->pw_uid;
        s->runner_gid = pw->pw_gid;
        if (!path_is_plain_absolute(s->runner_home) || lstat(s->runner_home, &st) < 0 ||
            !S_ISDIR(st.st_mode))
                return aj_error(
                        reterr, ENOTDIR, 0, 0,
                        "the runner's home %s is not a directory (or is a link): it cannot be closed",
                        s->runner_home);
        return 0;
}

/* The configuration to install. The helper needs runner-user; where it came from SUDO_USER, it is
 * written after the [sandbox] header (or in a [sandbox] table of its own), and the result parsed again
 * to be sure it says the same with the runner added. */
static int compose_installed_config(Setup *s, AjError *reterr)
{
        _cleanup_(config_freep) Config *check = NULL;
        AjError inner = { 0 };
        int r;

        if (s->config->runner_user) {
                s->installed_config = malloc(s->config_size + 1);
                if (!s->installed_config)
                        return -ENOMEM;
                memcpy(s->installed_config, s->config_text, s->config_size + 1);
                s->installed_config_size = s->config_size;
                return 0;
        }
        r = config_add_runner(s->config_text, s->config_size, s->runner_name, &s->installed_config,
                              &s->installed_config_size);
        if (r < 0)
                return r;
        r = config_parse(s->installed_config, s->installed_config_size, &check, &inner);
        if (r < 0 || !check->runner_user || strcmp(check->runner_user, s->runner_name) != 0)
                return aj_error(reterr, EINVAL, 0, 0,
                                "cannot add runner-user = \"%s\" (from SUDO_USER) to %s%s%s: set [sandbox] "
                                "runner-user there",
                                s->runner_name, s->config_path, r < 0 ? ": " : "",
                                r < 0 ? inner.message : "");
        return 0;
}

static int check_private_dirs(Setup *s, AjError *reterr)
{
        Strv present = { 0 };
        int r;

        for (char **d = s->config->private_dirs; d && *d; d++) {
                struct stat st;

                int missing = lstat(*d, &st) < 0;

                if (missing && errno == ENOENT)
                        continue;
                if (missing || !S_ISDIR(st.st_mode)) {
                        strv_clear(&present);
                        return aj_error(reterr, ENOTDIR, 0, 0,
                                        "[sandbox] private-dirs: %s is not a directory (or is a link)", *d);
                }
                r = strv_push(&present, strdup(*d));
                if (r < 0)
                        return r;
        }
        s->private_dirs = present.v;
        return 0;
}

/* A unit systemd cannot find is not there to stop. */
static int check_services(Setup *s, AjError *reterr)
{
        Strv present = { 0 };

        if (s->config->stop_services && s->config->stop_services[0] && !s->systemd)
                return aj_error(reterr, ENOTSUP, 0, 0,
                                "[sandbox] stop-services names units, and systemd is not running here");
        for (char **u = s->config->stop_services; u && *u; u++) {
                int r = setup_unit_exists(s, *u);

                if (r < 0) {
                        strv_clear(&present);
                        return aj_error(reterr, EIO, 0, 0, "systemctl show %s failed", *u);
                }
                if (r == 0)
                        continue;
                if (strv_push(&present, strdup(*u)) < 0)
                        return -ENOMEM;
        }
        s->services = present.v;
        return 0;
}

static int check_proxy(Setup *s, AjError *reterr)
{
        _cleanup_free_ char *data = NULL;
        AjError inner = { 0 };
        size_t size = 0;
        int r;

        if (!s->config->egress_proxy)
                return 0;
        /* resolv.conf is often a link (systemd-resolved, resolvconf); the resolvers follow it too. */
        r = read_file_for_parse(RESOLV_CONF_PATH, RESOLV_CONF_MAX_SIZE, &data, &size, reterr);
        if (r == -ELOOP) {
                _cleanup_close_ int fd = open(RESOLV_CONF_PATH, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

                if (fd < 0)
                        return aj_error(reterr, errno, 0, 0, "%s: %s", RESOLV_CONF_PATH, strerror(errno));
                r = read_regular_fd(fd, RESOLV_CONF_MAX_SIZE, &data, &size);
                if (r < 0)
                        return aj_error(reterr, -r, 0, 0, "%s: %s", RESOLV_CONF_PATH, strerror(-r));
        } else if (r < 0)
                return r;
        r = resolv_conf_parse(data, size, &s->nameservers, &inner);
        if (r < 0)
                return aj_error_in_file(reterr, r, RESOLV_CONF_PATH, &inner);
        if (!s->nameservers[0])
                return aj_error(reterr, EINVAL, 0, 0,
                                "%s has no nameserver line: with [egress] proxy the proxy's DNS is kept to "
                                "the literal resolvers named there",
                                RESOLV_CONF_PATH);
        return egress_proxy_check(access(EGRESS_POLICY_PATH, F_OK) == 0 ? EGRESS_POLICY_PATH
                                                                        : SHIPPED_POLICY_PATH,
                                  true, reterr);
}

static int check_helper(Setup *s, AjError *reterr)
{
        struct stat st;

        if (s->helper_source) {
                int r = read_regular_nofollow(AT_FDCWD, s->helper_source, SETUP_HELPER_MAX, &s->helper_data,
                                              &s->helper_size);
                if (r < 0)
                        return aj_error(reterr, -r, 0, 0, "--helper %s: %s", s->helper_source,
                                        r == -ELOOP    ? "is a link"
                                        : r == -EBADFD ? "is not a regular file"
                                        : r == -EFBIG  ? "is too large"
                                                       : strerror(-r));
                if (s->helper_size < 4 || memcmp(s->helper_data, "\177ELF", 4) != 0)
                        return aj_error(reterr, ENOEXEC, 0, 0, "--helper %s is not an executable (ELF) file",
                                        s->helper_source);
                return 0;
        }
        if (lstat(HELPER_PATH, &st) < 0)
                return aj_error(reterr, errno, 0, 0,
                                "the helper is not installed at %s (%s): install it (meson install) or give "
                                "--helper FILE",
                                HELPER_PATH, strerror(errno));
        if (!S_ISREG(st.st_mode) || st.st_uid != 0)
                return aj_error(reterr, EPERM, 0, 0, "%s is not a regular file of root's", HELPER_PATH);
        return 0;
}

/* Every file setup writes in a directory that exists now: that directory must pass root_file_write()'s
 * checks, or the write would fail midway. (The helper's directory is made root's alone first, after
 * roots_alone_check() found it root's.) */
static int check_write_targets(const Setup *s, AjError *reterr)
{
        const char *const paths[] = { SUDOERS_PATH,     ENVIRONMENT_PATH, SUBUID_PATH,       SUBGID_PATH,
                                      "/etc/cron.deny", "/etc/at.deny",   EGRESS_POLICY_PATH };
        struct stat st;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                _cleanup_free_ char *dir = strdup(paths[i]);

                if (!dir)
                        return -ENOMEM;
                *strrchr(dir, '/') = '\0';
                if (lstat(dir, &st) < 0 && errno == ENOENT)
                        continue; /* made by setup, root's */
                if (strcmp(paths[i], EGRESS_POLICY_PATH) == 0 && !s->config->egress_proxy)
                        continue;
                r = root_file_check_parent(paths[i], (uid_t)-1, reterr);
                if (r < 0)
                        return r;
        }
        if (lstat(POLKIT_RULES_DIR, &st) == 0 && S_ISDIR(st.st_mode))
                return root_file_check_parent(POLKIT_RULES_PATH, polkit_rules_dir_owner(), reterr);
        return 0;
}

static int check_nft(const Setup *s, AjError *reterr)
{
        char *argv[] = { s->tools.nft, (char *)"list", (char *)"tables", NULL };

        return setup_run(argv, "nftables cannot be used here", reterr);
}

int setup_preflight(Setup *s, AjError *reterr)
{
        struct stat st;
        int r;

        if (geteuid() != 0)
                return aj_error(reterr, EPERM, 0, 0, "must run as root");
        r = config_load_data(s->config_path, &s->config, &s->config_text, &s->config_size, reterr);
        if (r < 0)
                return r;
        if (lstat(SETUP_STATE_DIR, &st) == 0 || errno != ENOENT)
                return aj_error(reterr, EEXIST, 0, 0, "%s exists: setup ran on this machine before",
                                SETUP_STATE_DIR);
        s->systemd = systemd_running();
        if ((r = find_tools(s, reterr)) < 0 || (r = check_sandbox_user(s, reterr)) < 0 ||
            (r = check_configured_groups(s, reterr)) < 0 || (r = check_runner(s, reterr)) < 0 ||
            (r = compose_installed_config(s, reterr)) < 0 || (r = check_private_dirs(s, reterr)) < 0 ||
            (r = check_services(s, reterr)) < 0 || (r = check_helper(s, reterr)) < 0 ||
            (r = roots_alone_check(reterr)) < 0 || (r = sudoers_d_check(reterr)) < 0 ||
            (r = deny_lists_check(s->config->sandbox_user, reterr)) < 0 ||
            (r = check_write_targets(s, reterr)) < 0 || (r = check_nft(s, reterr)) < 0 ||
            (r = check_proxy(s, reterr)) < 0 || (r = check_apparmor(s, reterr)) < 0)
                return r;
        return 0;
}

void setup_done(Setup *s)
{
        SetupTools *t = &s->tools;

        free(t->useradd);
        free(t->usermod);
        free(t->gpasswd);
        free(t->visudo);
        free(t->nft);
        free(t->sudo);
        free(t->runuser);
        free(t->passwd);
        free(t->systemctl);
        free(t->loginctl);
        free(t->dpkg_query);
        free(t->rpm);
        free(t->apparmor_parser);
        free(s->bwrap_real);
        free(s->apparmor_other);
        free(s->apparmor_profile);
        free(s->config_text);
        config_free(s->config);
        free(s->runner_name);
        free(s->runner_home);
        free(s->sandbox_home);
        strv_free(s->nameservers);
        strv_free(s->private_dirs);
        strv_free(s->services);
        free(s->installed_config);
        free(s->helper_data);
        strv_clear(&s->setuid_programs);
        strv_clear(&s->setgid_programs);
}
