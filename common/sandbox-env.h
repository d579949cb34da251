/* SPDX-License-Identifier: MIT */
/* The environment every sandbox command starts with, whoever starts it: nothing of the caller's. */
#pragma once

#include <pwd.h>

#include "config.h"

/* What the sandbox user's commands search for programs, and their locale. */
#define SANDBOX_PATH "/usr/local/bin:/usr/bin:/bin"
#define SANDBOX_LANG "C.UTF-8"

/* Fixed PATH and LANG; HOME, USER, LOGNAME and SHELL of pw; the proxy variables when [egress] proxy is
 * on (egress_env()); then [sandbox] env, which may override any of them. A name starting ACTIONS_ (in
 * any case) is refused here again (-EPERM), though the configuration refused it already. */
int sandbox_env_build(const Config *c, const struct passwd *pw, char ***ret_env);
