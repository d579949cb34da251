/* SPDX-License-Identifier: MIT */
/* Setup's AppArmor stage: where Ubuntu restricts user namespaces, a profile that lets the installed
 * bubblewrap, and no other program, make one (apparmor-profile.h). The preflight decides and refuses; the
 * stage writes the profile, checked by apparmor_parser before it is in place, and loads it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apparmor-profile.h"
#include "apparmor-userns.h"
#include "bwrap.h"
#include "macro.h"
#include "read-file.h"
#include "root-file.h"
#include "setup.h"
#include "trusted-path.h"

#define PROFILE_FILE_MAX (1024 * 1024)

/* The first file of /etc/apparmor.d (its top level, where profiles are loaded from) other than ours that
 * attaches a profile to program: *ret, or NULL. 0 or -errno. */
static int other_profile(const char *program, char **ret)
{
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *e;
        int fd = open(APPARMOR_PROFILES_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), r = 0;

        *ret = NULL;
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                (void)close(fd);
                return r;
        }
        while (r == 0 && !*ret && (errno = 0, e = readdir(d))) {
                _cleanup_free_ char *data = NULL;
                size_t size;

                if ((e->d_type != DT_REG && e->d_type != DT_UNKNOWN) ||
                    strcmp(e->d_name, APPARMOR_PROFILE_NAME) == 0)
                        continue;
                if (read_regular_nofollow(dirfd(d), e->d_name, PROFILE_FILE_MAX, &data, &size) < 0)
                        continue; /* not a regular file, too large to be a profile, or gone */
                if (apparmor_text_attaches(data, size, program) &&
                    asprintf(ret, "%s/%s", APPARMOR_PROFILES_DIR, e->d_name) < 0)
                        r = -ENOMEM;
        }
        if (r == 0 && errno != 0 && !*ret)
                r = -errno;
        return r;
}

int check_apparmor(Setup *s, AjError *reterr)
{
        _cleanup_free_ char *found = NULL;
        AjError inner = { 0 };
        int r = apparmor_userns_restricted(APPARMOR_USERNS_SYSCTL);

        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "cannot read %s: %s", APPARMOR_USERNS_SYSCTL,
                                strerror(-r));
        s->userns_restricted = r == 1;
        if (!s->userns_restricted)
                return 0;
        /* Run's confinement needs bubblewrap; without it there is nothing to give a profile (run says
         * so when it starts). */
        r = trusted_program_find(BWRAP_DIR, "bwrap", &found, &inner);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "bubblewrap cannot be given an AppArmor profile: %s",
                                inner.message);
        s->bwrap_real = realpath(found, NULL);
        if (!s->bwrap_real)
                return aj_error(reterr, errno, 0, 0, "%s: %s", found, strerror(errno));
        r = trusted_program_find(SETUP_ROOT_PATH, "apparmor_parser", &s->tools.apparmor_parser, &inner);
        if (r < 0)
                return aj_error(
                        reterr, -r, 0, 0,
                        "AppArmor restricts user namespaces here (%s is 1) and apparmor_parser, needed "
                        "to give bubblewrap a profile of its own, is not usable on %s: %s",
                        APPARMOR_USERNS_SYSCTL, SETUP_ROOT_PATH, inner.message);
        r = other_profile(s->bwrap_real, &s->apparmor_other);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "cannot read %s: %s", APPARMOR_PROFILES_DIR, strerror(-r));
        if (s->apparmor_other)
                return 0;
        r = apparmor_bwrap_profile(s->bwrap_real, &s->apparmor_profile);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0,
                                "%s (bubblewrap) is not a path an AppArmor profile names as it is: letters, "
                                "digits, '/', '.', '_', '+' and '-' only",
                                s->bwrap_real);
        return root_file_check_parent(APPARMOR_PROFILE_PATH, (uid_t)-1, reterr);
}

int stage_apparmor(Setup *s, AjError *reterr)
{
        int r;

        if (!s->userns_restricted) {
                setup_note("AppArmor does not restrict user namespaces here: bubblewrap needs no profile");
                return 0;
        }
        if (!s->bwrap_real) {
                setup_note("AppArmor restricts user namespaces here and bubblewrap is not installed: no "
                           "profile (run's confinement needs it)");
                return 0;
        }
        if (s->apparmor_other) {
                setup_note(
                        "AppArmor: %s gives %s a profile already: none added (two profiles for one program "
                        "make AppArmor refuse both)",
                        s->apparmor_other, s->bwrap_real);
                return 0;
        }
        char *validator[] = { s->tools.apparmor_parser, (char *)"--skip-kernel-load", (char *)"--skip-cache",
                              NULL };
        r = setup_write_file(s, APPARMOR_PROFILE_PATH, s->apparmor_profile, strlen(s->apparmor_profile),
                             0644, 0, 0, validator,
                             "AppArmor restricts user namespaces: bubblewrap alone may make one", reterr);
        if (r < 0)
                return r;
        setup_change(s, "%s --replace %s", s->tools.apparmor_parser, APPARMOR_PROFILE_PATH);
        if (s->dry_run)
                return 0;
        char *argv[] = { s->tools.apparmor_parser, (char *)"--replace", (char *)APPARMOR_PROFILE_PATH,
                         NULL };
        return setup_run(argv, "loading bubblewrap's AppArmor profile", reterr);
}
