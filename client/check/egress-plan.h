/* SPDX-License-Identifier: MIT */
/* The probes whose form the egress policy decides (seed 003). egress-git, egress-cargo and egress-npm
 * make the requests of `git ls-remote`, `cargo fetch` and `npm install`: where the policy admits every
 * one, the tool must succeed through the proxy; where it refuses one, the probe becomes NAME-refused and
 * the first refused request, made with curl, must meet the proxy's own refusal. egress-push is a push's
 * request, which the policy must refuse (a note where it admits it). Asked of the installed policy alone:
 * the threat list is not consulted, so a listed host fails the probe that expected success. */
#pragma once

#include <stdbool.h>

#include "egress-policy.h"
#include "error.h"

#define EGRESS_PLANNED      4
#define EGRESS_PLAN_URL_MAX 1024

typedef struct EgressPlanned {
        char name[32];  /* egress-git, egress-git-refused, ..., egress-push */
        bool refused;   /* the policy refuses method url: the proxy must answer 403 with X-Egress-Denied */
        char method[8]; /* where refused */
        char url[EGRESS_PLAN_URL_MAX];
} EgressPlanned;

/* The four probes for fetch_repo (an http(s) URL), in ret. -EINVAL with *reterr where fetch_repo is too
 * long or no URL the policy reads. */
int egress_plan(const EgressPolicy *policy, const char *fetch_repo, EgressPlanned ret[EGRESS_PLANNED],
                AjError *reterr);

/* One planned probe as the sandbox side takes it, in one argument: "NAME" where the policy admits, else
 * "NAME METHOD URL". */
int egress_planned_format(const EgressPlanned *p, char *buf, size_t size);

/* The reverse, checking NAME against the known names, METHOD and URL. -EINVAL. */
int egress_planned_parse(const char *arg, EgressPlanned *ret);
