/* SPDX-License-Identifier: MIT */
/* The sandbox side's probes of the host's unix sockets: local-abstract (with its control, the runner's
 * abstract socket) and local-sockets (with its control, the runner's socket on a path). */
#pragma once

#include "check-inside.h"

void probe_unix_abstract(const InsideArgs *a);
void probe_unix_paths(const InsideArgs *a);
