/* SPDX-License-Identifier: MIT */
/* The home the sandbox side's programs get: an empty directory made for this check, never the sandbox
 * user's own. Every earlier step of the job ran as the sandbox user and could write its home (a
 * ~/.curlrc that loads an engine, a ~/.git whose config runs a command, ~/.cargo/bin/cargo, ~/.npmrc,
 * ~/.config/containers): the programs a probe starts read per-user and per-directory configuration
 * from HOME, the XDG directories and the working directory, so none of those may be the sandbox
 * user's. Only the tools' configuration changes: the uid, and so what the probes measure, stays. */
#pragma once

#include <stddef.h>

/* The variables probe_home_enter() sets, each to a directory (or file) of the private home. */
#define PROBE_HOME_VARIABLES                                                                                \
        "HOME", "CURL_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",        \
                "npm_config_userconfig", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GIT_ALLOW_PROTOCOL"

/* Makes a fresh 0700 directory under tmp (an absolute path: the sandbox side's TMPDIR, or /tmp) with
 * home/, config/, cache/, data/, state/ and runtime/ in it, points the variables above into it or at
 * /dev/null (git: no global or system file, http and https only; podman finds its per-user files and its
 * store under the XDG directories, so root's in /usr/share and /etc are all the configuration it reads),
 * XDG_RUNTIME_DIR too where it is not logind's of this session (which is as fresh as the session), and
 * makes "/" the
 * working directory (no sandbox user can write there, so no tool that searches upward from it finds a .git,
 * a .cargo or an .npmrc of the sandbox user's). Its path in ret_dir (size bytes). 0, or -errno with nothing
 * left behind. Call before any thread starts: it changes the process's environment. */
int probe_home_enter(const char *tmp, char *ret_dir, size_t size);

/* Removes dir and everything in it, without following a link, making each directory writable first
 * (podman's store holds read-only ones). 0, or the first -errno met (the rest is still tried). */
int probe_home_remove(const char *dir);
