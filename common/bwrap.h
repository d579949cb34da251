/* SPDX-License-Identifier: MIT */
/* Where bubblewrap is: the program run's confinement starts, the one setup's AppArmor profile names where
 * Ubuntu restricts user namespaces, and the check's userns-restricted-control runs. */
#pragma once

#define BWRAP_PATH "/usr/bin/bwrap"
#define BWRAP_DIR  "/usr/bin" /* BWRAP_PATH's directory, for trusted_program_find() */
