/* SPDX-License-Identifier: MIT */
/* Ubuntu restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, from
 * 23.10 on; GitHub's ubuntu-24.04 runners): a program no AppArmor profile names may make one, but gets no
 * capability in it. Setup gives bubblewrap a profile there (client/setup/apparmor-profile.h); the check
 * proves that nothing else of the sandbox user's gets one. */
#pragma once

#define APPARMOR_USERNS_SYSCTL "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"

/* Whether the sysctl file at path restricts user namespaces: 1 ("1"), 0 ("0", or no such file: a kernel
 * without the restriction), -EINVAL (anything else), or another -errno (unreadable). */
int apparmor_userns_restricted(const char *path);

/* What AppArmor's restriction refuses a program its profiles do not name, tried in a child (safe in a
 * threaded process): a new user namespace, its own uid map, a mount namespace, a tmpfs mounted in it. 0
 * when every step succeeded (nothing restricts this program), else the first step refused
 * (USERNS_STEP_*) with errno's value in *ret_errno; -errno when no child could be made. */
enum { USERNS_STEP_UNSHARE = 1, USERNS_STEP_UID_MAP, USERNS_STEP_MOUNT_NS, USERNS_STEP_MOUNT };
int userns_capability_try(int *ret_errno);
