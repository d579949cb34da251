/* SPDX-License-Identifier: MIT */
/* Reading `sudo -n -l`: what the runner's rules leave it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether `sudo -n -l` (out) leaves the runner the helper's rule alone: sudo applies the last rule that
 * matches, so after the last "(ALL : ALL) !ALL" only lines whose every command is "HELPER helper ..." may
 * follow. false with the reason (quoting the line at fault) in why. */
bool runner_sudo_list_locked(const char *out, const char *helper, char *why, size_t size);
