/* SPDX-License-Identifier: MIT */
/* The sandbox side's userns-net-control and userns-net, userns-restricted-control and userns-restricted. */
#pragma once

#include "check-inside.h"

void probe_userns_net(const InsideArgs *a);
void probe_userns_restricted(void);
