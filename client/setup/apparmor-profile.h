/* SPDX-License-Identifier: MIT */
/* Where Ubuntu restricts unprivileged user namespaces (apparmor-userns.h), bubblewrap cannot set up run's
 * confinement: it gets no capability in the namespace it makes. Ubuntu's answer for a program that needs
 * one is a profile of its own, unconfined but for the rule `userns,`. Setup writes that profile for the
 * installed bwrap alone: never the sysctl, which would give every program of the sandbox user a user
 * namespace with capabilities in it. Text only; writing and loading are setup's. */
#pragma once

#include <stddef.h>

#define APPARMOR_PROFILES_DIR "/etc/apparmor.d"
#define APPARMOR_PROFILE_NAME "agentic-job-bwrap"
#define APPARMOR_PROFILE_PATH APPARMOR_PROFILES_DIR "/" APPARMOR_PROFILE_NAME

/* The profile for the bubblewrap at program, a plain absolute path (letters, digits, '/', '.', '_', '+'
 * and '-' only, so that AppArmor reads it as written, with no quoting and no pattern): *ret, malloc'd.
 * 0, -EINVAL (another path), or -ENOMEM. */
int apparmor_bwrap_profile(const char *program, char **ret);

/* Whether the profile text in data (size bytes) attaches to program: a line whose words after "profile
 * NAME" (or first, without a name) are exactly program. 1 or 0. Setup asks it of every file in
 * /etc/apparmor.d, since a second profile for the same program makes AppArmor refuse both. */
int apparmor_text_attaches(const char *data, size_t size, const char *program);
