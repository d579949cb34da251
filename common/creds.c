/* SPDX-License-Identifier: MIT */
#include "creds.h"

#include <errno.h>
#include <grp.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

static int fail(const char **ret_step, const char *step)
{
        int r = -errno;

        *ret_step = step;
        return r < 0 ? r : -EPERM;
}

int creds_drop_to_user(const struct passwd *pw, const char **ret_step)
{
        cap_t none;
        int r;

        if (initgroups(pw->pw_name, pw->pw_gid) < 0)
                return fail(ret_step, "set its groups");
        for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
                        return fail(ret_step, "empty its capability bounding set");
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                return fail(ret_step, "empty its ambient capabilities");
        if (setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0)
                return fail(ret_step, "set its gid");
        if (setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
                return fail(ret_step, "set its uid");
        none = cap_init();
        r = none ? cap_set_proc(none) : -1;
        cap_free(none);
        if (r < 0)
                return fail(ret_step, "empty its capability sets");
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return fail(ret_step, "set no_new_privs");
        return 0;
}

bool creds_dropped_to(const struct passwd *pw)
{
        uid_t ru, eu, su;
        gid_t rg, eg, sg;
        cap_t now, none;
        bool ok;

        if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
                return false;
        if (ru != pw->pw_uid || eu != pw->pw_uid || su != pw->pw_uid || rg != pw->pw_gid ||
            eg != pw->pw_gid || sg != pw->pw_gid)
                return false;
        now = cap_get_proc();
        none = cap_init();
        ok = now && none && cap_compare(now, none) == 0;
        cap_free(now);
        cap_free(none);
        if (!ok || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 ||
            prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_CHOWN, 0, 0) > 0)
                return false;
        for (int cap = 0;; cap++) {
                int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
                if (in < 0)
                        break;
                if (in != 0)
                        return false;
        }
        return setresuid(0, 0, 0) < 0;
}
