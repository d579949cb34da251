/* SPDX-License-Identifier: MIT */
/* runner-group:NAME: what a root-equivalent group that the runner's job still holds gives it. Setup's lock
 * takes the runner out of those groups and stops their daemons, but a process keeps the groups it
 * started with; the check runs with the job's, so it tries, for each such group, what the group is for:
 * its daemon's socket, the block devices (disk), the shadow files (shadow), the journal (adm,
 * systemd-journal). */
#pragma once

#include "check-report.h"

/* runner-groups-control (the runner's groups read and named), then runner-group:NAME for each
 * root-equivalent group among them (gid 0, sudo, wheel and admin are the runner-sudo probes' to try). */
void probe_runner_groups(Report *rep);
