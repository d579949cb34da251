/* SPDX-License-Identifier: MIT */
/* The sandbox side's container probes: container-pull, container-build, container-built-run,
 * container-control, container-metadata, egress-container-post, egress-container-direct and
 * egress-container-own-network, each a note where rootless podman is absent, cannot start for the sandbox
 * user, or [sandbox.check] containers = false. */
#pragma once

#include "check-inside.h"

void probe_containers(const InsideArgs *a);
