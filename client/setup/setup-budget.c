/* SPDX-License-Identifier: MIT */
/* Setup's budget stage: memory and tasks for the sandbox user as a whole. */
#include <stdio.h>

#include "setup.h"

/* user-UID.slice holds every session the sandbox user opens (run0's, systemd-run's with PAMName=) and
 * whatever those leave behind, so a budget there bounds all of them together: past MemoryMax= the kernel
 * reclaims and then kills inside the slice, never the runner's processes. systemctl set-property persists
 * it (/etc/systemd/system.control) before the slice first exists and applies it at once where it does. */
int stage_budget(Setup *s, AjError *reterr)
{
        char unit[64], memory[32], tasks[32];

        if (!s->systemd) {
                setup_note("systemd is not running: no budget on the sandbox user's slice (every enter's "
                           "RLIMIT_NPROC still bounds its tasks)");
                return 0;
        }
        (void)snprintf(memory, sizeof(memory), "MemoryMax=%llu%%", s->config->sandbox_memory_max_percent);
        (void)snprintf(tasks, sizeof(tasks), "TasksMax=%llu", s->config->sandbox_tasks_max);
        if (s->dry_run && !s->sandbox_exists) {
                setup_change(s,
                             "systemctl set-property -- user-UID.slice %s %s (UID: the sandbox user's, once "
                             "made)",
                             memory, tasks);
                return 0;
        }
        (void)snprintf(unit, sizeof(unit), "user-%u.slice", (unsigned)s->sandbox_uid);
        setup_change(s, "systemctl set-property -- %s %s %s", unit, memory, tasks);
        if (s->dry_run)
                return 0;
        char *argv[] = {
                s->tools.systemctl, (char *)"set-property", (char *)"--", unit, memory, tasks, NULL
        };
        return setup_run(argv, "setting the sandbox user's memory and tasks budget", reterr);
}
