/* SPDX-License-Identifier: MIT */
#include "probe-runner-groups.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "check-line.h"
#include "config.h"
#include "macro.h"
#include "probe-emit.h"

#define MAX_GROUPS 1024

/* The sockets of the daemons that act as root for a group's members. */
static const struct {
        const char *group;
        const char *sockets[3];
} group_sockets[] = {
        { "docker", { "/run/docker.sock", "/var/run/docker.sock", NULL } },
        { "podman", { "/run/podman/podman.sock", NULL } },
        { "lxd", { "/var/snap/lxd/common/lxd/unix.socket", "/var/lib/lxd/unix.socket", NULL } },
        { "incus", { "/var/lib/incus/unix.socket", NULL } },
        { "incus-admin", { "/var/lib/incus/unix.socket", NULL } },
        { "libvirt", { "/run/libvirt/libvirt-sock", NULL } },
};

/* what after a space, where it fits whole (a name cut short would name another file). */
static void append(char *buf, size_t size, const char *what)
{
        size_t l = strlen(buf), w = strlen(what);

        if (l + (l > 0) + w + 1 > size)
                return;
        if (l > 0)
                buf[l++] = ' ';
        memcpy(buf + l, what, w + 1);
}

static bool connects(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;

        if (strlen(path) >= sizeof(sa.sun_path))
                return false;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        return fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
}

/* Opens path as the group would use it, never following a link, reading nothing. */
static bool opens(const char *path, int flags)
{
        _cleanup_close_ int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

        return fd >= 0;
}

/* Each entry of dir for which ok(path) holds, in found. */
static void each_in(const char *dir, bool (*ok)(const char *path), char *found, size_t size)
{
        _cleanup_closedir_ DIR *d = opendir(dir);

        for (struct dirent *de; d && (de = readdir(d));) {
                char path[PATH_MAX];

                if (de->d_name[0] == '.')
                        continue;
                (void)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                if (ok(path))
                        append(found, size, path);
        }
}

static bool block_writable(const char *path)
{
        struct stat st;

        return lstat(path, &st) == 0 && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)) &&
               opens(path, O_WRONLY);
}

static bool journal_readable(const char *path)
{
        struct stat st;

        if (lstat(path, &st) < 0)
                return false;
        if (S_ISDIR(st.st_mode)) {
                char found[256] = "";

                each_in(path, journal_readable, found, sizeof(found));
                return found[0] != '\0';
        }
        return S_ISREG(st.st_mode) && opens(path, O_RDONLY);
}

/* What the group gives, found in found (empty: nothing). */
static void try_group(const char *group, char *found, size_t size)
{
        for (size_t i = 0; i < ELEMENTSOF(group_sockets); i++)
                if (strcmp(group_sockets[i].group, group) == 0)
                        for (const char *const *s = group_sockets[i].sockets; *s; s++)
                                if (connects(*s))
                                        append(found, size, *s);
        if (strcmp(group, "shadow") == 0) {
                if (opens("/etc/shadow", O_RDONLY))
                        append(found, size, "/etc/shadow");
                if (opens("/etc/gshadow", O_RDONLY))
                        append(found, size, "/etc/gshadow");
        }
        if (strcmp(group, "disk") == 0) {
                char dev[CHECK_DETAIL_MAX] = "";

                /* The block devices /sys/block names, the generic SCSI and block SCSI devices, and
                 * loop-control. */
                {
                        _cleanup_closedir_ DIR *d = opendir("/sys/block");

                        for (struct dirent *de; d && (de = readdir(d));) {
                                char path[PATH_MAX];

                                if (de->d_name[0] == '.')
                                        continue;
                                (void)snprintf(path, sizeof(path), "/dev/%s", de->d_name);
                                if (block_writable(path))
                                        append(dev, sizeof(dev), path);
                        }
                }
                each_in("/dev/bsg", block_writable, dev, sizeof(dev));
                {
                        _cleanup_closedir_ DIR *d = opendir("/dev");

                        for (struct dirent *de; d && (de = readdir(d));) {
                                char path[PATH_MAX];

                                if (strncmp(de->d_name, "sg", 2) != 0 ||
                                    strspn(de->d_name + 2, "0123456789") != strlen(de->d_name + 2))
                                        continue;
                                (void)snprintf(path, sizeof(path), "/dev/%s", de->d_name);
                                if (block_writable(path))
                                        append(dev, sizeof(dev), path);
                        }
                }
                if (block_writable("/dev/loop-control"))
                        append(dev, sizeof(dev), "/dev/loop-control");
                if (dev[0])
                        append(found, size, dev);
        }
        if ((strcmp(group, "adm") == 0 || strcmp(group, "systemd-journal") == 0) &&
            journal_readable("/var/log/journal"))
                append(found, size, "/var/log/journal");
}

void probe_runner_groups(Report *rep)
{
        gid_t gids[MAX_GROUPS];
        char named[CHECK_DETAIL_MAX] = "";
        long long t = probe_now_ms();
        int n = getgroups(MAX_GROUPS, gids);

        if (n < 0) {
                report_addf(rep, "runner-groups-control", CHECK_FAIL, probe_now_ms() - t, false,
                            "getgroups: %s", strerror(errno));
                return;
        }
        {
                bool have = false;

                for (int i = 0; i < n; i++)
                        have = have || gids[i] == getgid();
                if (!have)
                        gids[n++] = getgid();
        }
        for (int i = 0; i < n; i++) {
                struct group gr, *res = NULL;
                char buf[4096], name[CHECK_NAME_MAX], found[CHECK_DETAIL_MAX] = "";
                long long t1 = probe_now_ms();

                if (getgrgid_r(gids[i], &gr, buf, sizeof(buf), &res) != 0 || !res) {
                        (void)snprintf(name, sizeof(name), "%u", (unsigned)gids[i]);
                        append(named, sizeof(named), name);
                        continue;
                }
                append(named, sizeof(named), res->gr_name);
                if (gids[i] == 0 || !group_is_root_equivalent(res->gr_name) ||
                    strcmp(res->gr_name, "sudo") == 0 || strcmp(res->gr_name, "wheel") == 0 ||
                    strcmp(res->gr_name, "admin") == 0 || strcmp(res->gr_name, "root") == 0)
                        continue;
                (void)snprintf(name, sizeof(name), "runner-group:%s", res->gr_name);
                try_group(res->gr_name, found, sizeof(found));
                if (found[0])
                        report_addf(rep, name, CHECK_FAIL, probe_now_ms() - t1, false,
                                    "the runner's job holds the group %s and reaches %s", res->gr_name,
                                    found);
                else
                        report_addf(rep, name, CHECK_OK, probe_now_ms() - t1, false,
                                    "the runner's job holds the group %s, which reaches nothing here",
                                    res->gr_name);
        }
        report_addf(rep, "runner-groups-control", CHECK_OK, probe_now_ms() - t, false,
                    "the runner's groups: %s", named);
}
