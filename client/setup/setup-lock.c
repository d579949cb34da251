/* SPDX-License-Identifier: MIT */
/* Setup's last stages: the configuration (late on purpose: a failed setup leaves nothing that looks
 * finished, and the lock's proof runs the helper, which reads it), then the lock: the runner user loses
 * root but for the helper, and that is proven by trying both as the runner. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build-config.h"
#include "macro.h"
#include "read-file.h"
#include "setup.h"
#include "spawn.h"

#define MAX_GROUPS 1024

/* sudo 1.9.16 (Debian 13) dies of SIGSEGV with no environment at all; a fixed PATH, nobody's choice,
 * keeps it alive. The proof requires sudo's own refusal, status 1, so a crash never passes for one. */
static const char *const sudo_env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };

/* What membership of each group gives, beyond the files the group owns: a service that acts as root for
 * its members. Stopping it takes that from processes that hold the group already (the runner's own job),
 * which leaving the group does not. */
static const struct {
        const char *group;
        const char *units[7];
} group_units[] = {
        { "docker", { "docker.socket", "docker.service", NULL } },
        { "podman", { "podman.socket", "podman.service", NULL } },
        { "lxd",
          { "lxd.socket", "lxd.service", "snap.lxd.daemon.unix.socket", "snap.lxd.daemon.service", NULL } },
        { "incus", { "incus.socket", "incus.service", NULL } },
        { "incus-admin", { "incus.socket", "incus.service", NULL } },
        { "libvirt",
          { "libvirtd.socket", "libvirtd-ro.socket", "libvirtd-admin.socket", "libvirtd.service",
            "virtqemud.socket", "virtqemud.service", NULL } },
};

int stage_config(Setup *s, AjError *reterr)
{
        return setup_write_file(s, CONFIG_PATH, s->installed_config, s->installed_config_size, 0644, 0, 0,
                                NULL, "the configuration the helper reads", reterr);
}

static int stop_units(const Setup *s, const char *const *units, AjError *reterr)
{
        for (const char *const *u = units; *u; u++) {
                char *stop[] = { s->tools.systemctl, (char *)"stop", (char *)"--", (char *)*u, NULL };

                if (setup_unit_exists(s, *u) <= 0)
                        continue;
                setup_change(s, "systemctl stop %s", *u);
                if (!s->dry_run && setup_run(stop, "stopping a root-equivalent group's service", reterr) < 0)
                        return -EIO;
        }
        return 0;
}

/* chmod go-rw on the block devices in /dev: the disk group's members read and write them. */
static int close_block_devices(const Setup *s, AjError *reterr)
{
        DIR *d = opendir("/dev");
        int r = 0, fd;

        if (!d)
                return aj_error(reterr, errno, 0, 0, "/dev: %s", strerror(errno));
        fd = dirfd(d);
        if (fd < 0) {
                r = aj_error(reterr, errno, 0, 0, "/dev: %s", strerror(errno));
                (void)closedir(d);
                return r;
        }
        for (struct dirent *de; r >= 0 && (de = readdir(d));) {
                struct stat st;

                if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISBLK(st.st_mode) ||
                    !(st.st_mode & 066))
                        continue;
                setup_change(s, "chmod go-rw /dev/%s", de->d_name);
                /* Not a link (checked above, in a directory only root writes). */
                if (!s->dry_run && fchmodat(fd, de->d_name, st.st_mode & 07777 & ~(mode_t)066, 0) < 0)
                        r = aj_error(reterr, errno, 0, 0, "chmod /dev/%s: %s", de->d_name, strerror(errno));
        }
        (void)closedir(d);
        return r;
}

static int close_shadow(const Setup *s, AjError *reterr)
{
        static const char *const files[] = { "/etc/shadow", "/etc/gshadow" };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_close_ int fd = open(files[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                struct stat st;

                if (fd < 0 || fstat(fd, &st) < 0 || !(st.st_mode & 077))
                        continue;
                setup_change(s, "chmod go-rwx %s (was %04o)", files[i], (unsigned)(st.st_mode & 07777));
                if (!s->dry_run && fchmod(fd, st.st_mode & 07700) < 0)
                        return aj_error(reterr, errno, 0, 0, "chmod %s: %s", files[i], strerror(errno));
        }
        return 0;
}

static int leave_root_groups(Setup *s, AjError *reterr)
{
        gid_t gids[MAX_GROUPS];
        int n = MAX_GROUPS, r = 0;

        if (getgrouplist(s->runner_name, s->runner_gid, gids, &n) < 0)
                return aj_error(reterr, E2BIG, 0, 0, "the runner is in more than %d groups", MAX_GROUPS);
        for (int i = 0; r >= 0 && i < n; i++) {
                const struct group *gr = getgrgid(gids[i]);
                _cleanup_free_ char *name = gr ? strdup(gr->gr_name) : NULL;

                if (!name || gids[i] == s->runner_gid || !(gids[i] == 0 || group_is_root_equivalent(name)))
                        continue;
                {
                        char *argv[] = { s->tools.gpasswd, (char *)"--delete", s->runner_name, name, NULL };

                        setup_change(s, "gpasswd --delete %s %s (root by another name; for later logins)",
                                     s->runner_name, name);
                        if (!s->dry_run &&
                            (r = setup_run(argv, "taking the runner out of a group", reterr)) < 0)
                                break;
                }
                for (size_t k = 0; r >= 0 && s->systemd && k < ELEMENTSOF(group_units); k++)
                        if (strcmp(group_units[k].group, name) == 0)
                                r = stop_units(s, group_units[k].units, reterr);
                if (r >= 0 && strcmp(name, "disk") == 0)
                        r = close_block_devices(s, reterr);
                if (r >= 0 && strcmp(name, "shadow") == 0)
                        r = close_shadow(s, reterr);
                if (r >= 0 && (strcmp(name, "adm") == 0 || strcmp(name, "systemd-journal") == 0))
                        setup_note("the runner's running processes keep reading logs through %s", name);
        }
        return r;
}

/* A root without a password (passwd -S says NP) lets su in without one: locked. */
static int lock_root_password(const Setup *s, AjError *reterr)
{
        char *status_argv[] = { s->tools.passwd, (char *)"--status", (char *)"root", NULL };
        _cleanup_free_ char *out = NULL;
        int status = spawn_wait(status_argv, NULL, SPAWN_STDOUT, 1024, &out, NULL);

        if (status != 0)
                return aj_error(reterr, EIO, 0, 0, "passwd --status root failed (status %d)", status);
        if (strncmp(out, "root NP ", 8) == 0) {
                char *lock_argv[] = { s->tools.passwd, (char *)"--lock", (char *)"root", NULL };

                setup_change(s, "passwd --lock root (root had no password: su would let anyone in)");
                return s->dry_run ? 0 : setup_run(lock_argv, "locking root's empty password", reterr);
        }
        if (strncmp(out, "root P ", 7) == 0)
                setup_note("root has a password: whoever knows it can still su");
        return 0;
}

/* Runs argv as the runner (runuser, an empty environment): its status, and its first line in line. */
static int as_runner(const Setup *s, const char *const *cmd, char *line, size_t size)
{
        char *argv[16] = { s->tools.runuser, (char *)"-u", s->runner_name, (char *)"--" };
        _cleanup_free_ char *out = NULL;
        size_t n = 4, len = 0;
        int status;

        for (const char *const *c = cmd; *c && n < ELEMENTSOF(argv) - 1; c++)
                argv[n++] = (char *)*c;
        argv[n] = NULL;
        status = spawn_wait(argv, (char **)sudo_env, SPAWN_MERGE_STDERR, 4096, &out, &len);
        line[0] = '\0';
        if (out)
                spawn_first_line(out, len, line, size);
        return status;
}

/* As the runner, sudo -n true must fail. sudo asks for a password before it says no, so that refusal may
 * read "a password is required": root's reading of the policy (sudo -l -U) then says whether any password
 * would have helped. */
static int prove_locked(const Setup *s, AjError *reterr)
{
        const char *general[] = { s->tools.sudo, "-n", "true", NULL };
        char *listed[] = { s->tools.sudo,  (char *)"-n",   (char *)"-l", (char *)"-U",
                           s->runner_name, (char *)"true", NULL };
        char line[256];
        int status = as_runner(s, general, line, sizeof(line));

        if (status == 0)
                return aj_error(reterr, EPERM, 0, 0, "the lock did not hold: as %s, sudo -n true succeeded",
                                s->runner_name);
        if (status < 0)
                return aj_error(reterr, -status, 0, 0, "runuser: %s", strerror(-status));
        if (status != 1)
                return aj_error(
                        reterr, EIO, 0, 0,
                        "the lock is not proven: as %s, sudo -n true ended with status %d, not sudo's "
                        "refusal (1)%s%s",
                        s->runner_name, status, line[0] ? ": " : "", line);
        setup_note("proof: sudo -n true refused (status %d: %s)", status, line);
        status = spawn_wait(listed, (char **)sudo_env, SPAWN_STDOUT, 0, NULL, NULL);
        if (status != 1)
                return aj_error(reterr, EPERM, 0, 0,
                                "the lock did not hold: sudo -l -U %s true says it is allowed (status %d)",
                                s->runner_name, status);
        setup_note("proof: sudo's policy refuses %s any command (sudo -l -U %s true: status 1)",
                   s->runner_name, s->runner_name);
        return 0;
}

static int prove(const Setup *s, bool locked, AjError *reterr)
{
        const char *ping[] = { s->tools.sudo, "-n", HELPER_PATH, "helper", "ping", NULL };
        char line[256];
        int status;

        if (s->dry_run) {
                if (locked)
                        setup_change(s, "prove as %s: sudo -n true must fail, and sudo -l -U %s true say so",
                                     s->runner_name, s->runner_name);
                setup_change(s, "prove as %s: sudo -n %s helper ping must succeed", s->runner_name,
                             HELPER_PATH);
                return 0;
        }
        if (locked && (status = prove_locked(s, reterr)) < 0)
                return status;
        status = as_runner(s, ping, line, sizeof(line));
        if (status != 0)
                return aj_error(reterr, EIO, 0, 0, "as %s, sudo -n %s helper ping failed (status %d)%s%s",
                                s->runner_name, HELPER_PATH, status, line[0] ? ": " : "", line);
        setup_note("proof: helper ping succeeded");
        return 0;
}

/* sudo may read rules from elsewhere (sss, ldap) where nsswitch.conf says so: setup cannot see them, so
 * it says so, and the proof is what stands for them. */
static void note_other_sudoers_sources(void)
{
        _cleanup_free_ char *text = NULL;

        if (read_regular_nofollow(AT_FDCWD, "/etc/nsswitch.conf", 1024 * 1024, &text, NULL) < 0)
                return;
        for (const char *line = text; *line;) {
                const char *end = strchrnul(line, '\n'), *p = line + strspn(line, " \t");

                if (strncmp(p, "sudoers:", 8) == 0) {
                        int n = (int)(end - p - 8);
                        bool others = false;

                        for (const char *w = p + 8; w < end;) {
                                size_t len;

                                w += strspn(w, " \t");
                                len = strcspn(w, " \t\n");
                                if (len > 0 && !(len == 5 && strncmp(w, "files", 5) == 0) && w[0] != '#')
                                        others = true;
                                if (w[0] == '#')
                                        break;
                                w += len;
                        }
                        if (others)
                                setup_note(
                                        "/etc/nsswitch.conf: sudoers:%.*s: rules from those sources are not "
                                        "seen by setup; the proof below stands for them",
                                        n > 120 ? 120 : n, p + 8);
                        return;
                }
                line = *end ? end + 1 : end;
        }
}

int stage_lock(Setup *s, AjError *reterr)
{
        int r;

        if (!s->config->lock_runner) {
                setup_note("runner keeps its sudo rights (lock-runner = false)");
                return prove(s, false, reterr);
        }
        note_other_sudoers_sources();
        if ((r = setup_write_rules(s, true, reterr)) < 0 || (r = leave_root_groups(s, reterr)) < 0 ||
            (r = lock_root_password(s, reterr)) < 0)
                return r;
        return prove(s, true, reterr);
}
