/* SPDX-License-Identifier: MIT */
#include "cgroup.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "read-file.h"

#include <limits.h>
#include <stdbool.h>

/* mountinfo escapes space, tab, newline and backslash as three octal digits. */
static char *unescape(const char *s, size_t len)
{
        char *out = malloc(len + 1), *o = out;

        if (!out)
                return NULL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '\\' && i + 3 < len + 1 && s[i + 1] >= '0' && s[i + 1] <= '3' &&
                    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
                        *o++ = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
                        i += 3;
                } else
                        *o++ = s[i];
        }
        *o = '\0';
        return out;
}

int cgroup2_mount_parse(const char *mountinfo, char **ret_path)
{
        assert(mountinfo);
        assert(ret_path);

        for (const char *line = mountinfo; *line;) {
                const char *end = strchrnul(line, '\n'), *p = line, *mnt = NULL, *sep;
                size_t mntlen = 0;

                /* Fields: id parent major:minor root mount-point options [optional...] - fstype ... */
                for (int field = 0; field < 5 && p < end; field++) {
                        const char *sp = memchr(p, ' ', (size_t)(end - p));
                        if (!sp)
                                break;
                        if (field == 4) {
                                mnt = p;
                                mntlen = (size_t)(sp - p);
                        }
                        p = sp + 1;
                }
                sep = mnt ? strstr(p, " - ") : NULL;
                if (sep && sep < end && strncmp(sep + 3, "cgroup2 ", 8) == 0) {
                        char *path = unescape(mnt, mntlen);
                        if (!path)
                                return -ENOMEM;
                        *ret_path = path;
                        return 0;
                }
                line = *end ? end + 1 : end;
        }
        return -ENOENT;
}

int cgroup2_mount_find(char **ret_path)
{
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_regular_nofollow(AT_FDCWD, "/proc/self/mountinfo", 4 * 1024 * 1024, &text, NULL);
        if (r < 0)
                return r;
        return cgroup2_mount_parse(text, ret_path);
}

int cgroup_enter_create(char **ret_path, int *ret_fd)
{
        _cleanup_free_ char *mount = NULL, *parent = NULL;
        int r;

        r = cgroup2_mount_find(&mount);
        if (r < 0)
                return r;
        if (asprintf(&parent, "%s/%s", mount, CGROUP_ENTER_PARENT) < 0)
                return -ENOMEM;
        if (mkdir(parent, 0755) < 0 && errno != EEXIST)
                return -errno;
        /* The pid alone could name a cgroup an earlier helper of the same pid left busy. */
        for (unsigned attempt = 0;; attempt++) {
                _cleanup_free_ char *path = NULL;
                struct timespec ts;
                int fd;

                clock_gettime(CLOCK_MONOTONIC, &ts);
                if (asprintf(&path, "%s/enter-%ld-%lld%03u", parent, (long)getpid(),
                             (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, attempt) < 0)
                        return -ENOMEM;
                if (mkdir(path, 0755) < 0) {
                        if (errno == EEXIST && attempt < 8)
                                continue;
                        return -errno;
                }
                fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0) {
                        r = -errno;
                        (void)rmdir(path);
                        return r;
                }
                *ret_fd = fd;
                *ret_path = TAKE_PTR(path);
                return 0;
        }
}

/* Whether the cgroup dir_fd/name holds a process: "populated 1" in its cgroup.events. */
static int cgroup_populated(int dir_fd, const char *name)
{
        _cleanup_free_ char *text = NULL;
        char file[NAME_MAX + 16];
        int r;

        (void)snprintf(file, sizeof(file), "%s/cgroup.events", name);
        r = read_regular_nofollow(dir_fd, file, 4096, &text, NULL);
        if (r == -ENOENT)
                return 0; /* removed while we looked */
        if (r < 0)
                return r;
        if (strncmp(text, "populated ", 10) != 0 && !strstr(text, "\npopulated "))
                return -EBADMSG;
        return strstr(text, "populated 1") != NULL;
}

/* Every enter cgroup: kill (a write to cgroup.kill, then counts the populated ones), or remove. */
static int for_each_enter_cgroup(bool kill, unsigned *ret_populated)
{
        _cleanup_free_ char *mount = NULL, *parent = NULL;
        struct dirent *de;
        unsigned populated = 0;
        DIR *d;
        int r = 0;

        r = cgroup2_mount_find(&mount);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (asprintf(&parent, "%s/%s", mount, CGROUP_ENTER_PARENT) < 0)
                return -ENOMEM;
        d = opendir(parent);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((errno = 0, de = readdir(d))) {
                char file[NAME_MAX + 16];
                int fd;

                if (strncmp(de->d_name, "enter-", 6) != 0)
                        continue;
                if (!kill) {
                        (void)unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
                        continue;
                }
                (void)snprintf(file, sizeof(file), "%s/cgroup.kill", de->d_name);
                fd = openat(dirfd(d), file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd >= 0) {
                        (void)!write(fd, "1", 1);
                        close(fd);
                }
                r = cgroup_populated(dirfd(d), de->d_name);
                if (r < 0)
                        break;
                populated += (unsigned)r;
                r = 0;
        }
        if (r >= 0 && errno != 0)
                r = -errno;
        closedir(d);
        if (r >= 0 && ret_populated)
                *ret_populated = populated;
        return r < 0 ? r : 0;
}

int cgroup_enter_kill_all(unsigned *ret_populated)
{
        *ret_populated = 0;
        return for_each_enter_cgroup(true, ret_populated);
}

void cgroup_enter_remove_all(void)
{
        (void)for_each_enter_cgroup(false, NULL);
}
