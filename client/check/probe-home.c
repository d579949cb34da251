/* SPDX-License-Identifier: MIT */
#include "probe-home.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const subdirs[] = { "home", "config", "cache", "data", "state", "runtime" };

/* Whether XDG_RUNTIME_DIR is /run/user/UID, a directory of this user's alone, on a filesystem of its own
 * (the tmpfs logind mounts there for the user's sessions). */
static bool runtime_dir_is_sessions(void)
{
        const char *v = getenv("XDG_RUNTIME_DIR");
        char want[64];
        struct stat st, run;

        (void)snprintf(want, sizeof(want), "/run/user/%u", (unsigned)getuid());
        return v && strcmp(v, want) == 0 && lstat(v, &st) == 0 && S_ISDIR(st.st_mode) &&
               st.st_uid == getuid() && (st.st_mode & 07777) == 0700 && lstat("/run/user", &run) == 0 &&
               run.st_dev != st.st_dev;
}

int probe_home_enter(const char *tmp, char *ret_dir, size_t size)
{
        char path[4096];
        int r;

        if (!tmp || tmp[0] != '/')
                tmp = "/tmp";
        if ((size_t)snprintf(ret_dir, size, "%s/agentic-job-check-home-XXXXXX", tmp) >= size)
                return -ENAMETOOLONG;
        if (!mkdtemp(ret_dir))
                return -errno;
        for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
                (void)snprintf(path, sizeof(path), "%s/%s", ret_dir, subdirs[i]);
                if (mkdir(path, 0700) < 0) {
                        r = -errno;
                        (void)probe_home_remove(ret_dir);
                        return r;
                }
        }
        struct {
                const char *name, *sub;
        } vars[] = {
                { "HOME", "home" },
                { "CURL_HOME", "home" },
                { "XDG_CONFIG_HOME", "config" },
                { "XDG_CACHE_HOME", "cache" },
                { "XDG_DATA_HOME", "data" },
                { "XDG_STATE_HOME", "state" },
                { "npm_config_userconfig", "home/.npmrc" },
        };
        for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
                (void)snprintf(path, sizeof(path), "%s/%s", ret_dir, vars[i].sub);
                if (setenv(vars[i].name, path, 1) < 0)
                        goto fail;
        }
        /* logind's runtime directory of this session stays: made for the user's first session and
         * removed after its last (kill-user ended every process, so every session, before the check),
         * it holds nothing an earlier step left, and podman in a PAM session expects it (with another,
         * podman 4.3 on Debian 12 did not end after its container). Elsewhere (the direct backend) one
         * of the check's own. */
        if (!runtime_dir_is_sessions()) {
                (void)snprintf(path, sizeof(path), "%s/runtime", ret_dir);
                if (setenv("XDG_RUNTIME_DIR", path, 1) < 0)
                        goto fail;
        }
        if (setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1) < 0 || setenv("GIT_CONFIG_NOSYSTEM", "1", 1) < 0 ||
            setenv("GIT_ALLOW_PROTOCOL", "http:https", 1) < 0 || chdir("/") < 0)
                goto fail;
        return 0;
fail:
        r = -errno;
        (void)probe_home_remove(ret_dir);
        return r;
}

static int first_error;

static int make_writable(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)ftw;
        if ((flag == FTW_D || flag == FTW_DNR) && (st->st_mode & 0700) != 0700 &&
            chmod(path, (st->st_mode & 07777) | 0700) < 0 && first_error == 0)
                first_error = -errno;
        return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && first_error == 0)
                first_error = -errno;
        return 0;
}

int probe_home_remove(const char *dir)
{
        /* Before any thread starts or after they are done: nftw's callbacks share one static. */
        first_error = 0;
        /* Top down, so that a directory is writable before its entries are listed; then bottom up. A
         * directory nftw cannot read (FTW_DNR) is reported by the removal's rmdir. */
        if (nftw(dir, make_writable, 16, FTW_PHYS | FTW_MOUNT) < 0)
                return -errno;
        if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
                return -errno;
        return first_error;
}
