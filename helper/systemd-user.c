/* SPDX-License-Identifier: MIT */
/* kill-user's part with systemd: before the kills, logind and the user's slice are told, so nothing
 * restarts what is killed; after them, the user's units are left so that the next enter's session can
 * start. Every call is bounded; a failure is audited and never stops kill-user, whose proof is the scan. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "helper.h"
#include "libsystemd.h"

#define CALL_USEC    (10 * 1000 * 1000)
#define NO_SUCH_UNIT "org.freedesktop.systemd1.NoSuchUnit"

static long long monotonic_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Calls method with timeout usec. 0, or -errno; *gone (may be NULL) says the error was the one named
 * gone_name or, where gone_errno is not 0, that errno: the call found nothing left to do. Other failures
 * are audited. The reply, on success, to *ret_reply (may be NULL), for the caller to unref. */
static int bus_call(const Libsystemd *sd, sd_bus *bus, uint64_t usec, int gone_errno, const char *gone_name,
                    bool *gone, const char *dest, const char *path, const char *iface, const char *method,
                    sd_bus_message **ret_reply, const char *types, ...)
{
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *m = NULL, *reply = NULL;
        bool g;
        int r;

        r = sd->bus_message_new_method_call(bus, &m, dest, path, iface, method);
        if (r >= 0) {
                va_list ap;

                va_start(ap, types);
                r = sd->bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd->bus_call(bus, m, usec, &error, &reply);
        g = r < 0 && ((gone_errno != 0 && r == -gone_errno) ||
                      (gone_name && error.name && strcmp(error.name, gone_name) == 0));
        if (r < 0 && !g)
                audit(LOG_NOTICE, "%s: %s", method, error.message ? error.message : strerror(-r));
        if (gone)
                *gone = g;
        if (r >= 0 && ret_reply)
                *ret_reply = reply;
        else
                sd->bus_message_unref(reply);
        sd->bus_error_free(&error);
        sd->bus_message_unref(m);
        return r < 0 ? r : 0;
}

#define LOGIND   "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager"
#define SYSTEMD1 "org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager"

static sd_bus *open_bus(const Libsystemd **ret_sd)
{
        sd_bus *bus = NULL;

        *ret_sd = systemd_running() ? libsystemd() : NULL;
        if (!*ret_sd)
                return NULL;
        if ((*ret_sd)->bus_open_system(&bus) < 0) {
                audit(LOG_NOTICE, "systemd runs but its bus cannot be opened");
                return NULL;
        }
        return bus;
}

void systemd_user_stop(uid_t uid)
{
        const Libsystemd *sd;
        sd_bus *bus = open_bus(&sd);
        char slice[64];
        bool gone;

        if (!bus)
                return;
        (void)snprintf(slice, sizeof(slice), "user-%u.slice", (unsigned)uid);
        (void)bus_call(sd, bus, CALL_USEC, 0, NULL, NULL, LOGIND, "SetUserLinger", NULL, "ubb",
                       (uint32_t)uid, 0, 0);
        /* KillUnit fails with ENODEV when the slice's last processes end, and its cgroup goes, while it is
         * signalling them. */
        if (bus_call(sd, bus, CALL_USEC, ENODEV, NULL, &gone, SYSTEMD1, "KillUnit", NULL, "ssi", slice,
                     "all", SIGKILL) < 0 &&
            gone)
                audit(LOG_INFO, "KillUnit found nothing left to do");
        (void)bus_call(sd, bus, CALL_USEC, 0, NULL, NULL, LOGIND, "TerminateUser", NULL, "u", (uint32_t)uid);
        sd->bus_flush_close_unref(bus);
}

/* 1 when systemd no longer has the unit, or has it inactive or failed; 0 while it is in any other state;
 * -errno when it cannot be asked. */
static int unit_stopped(const Libsystemd *sd, sd_bus *bus, const char *unit)
{
        sd_bus_message *reply = NULL;
        const char *path = NULL;
        char *state = NULL;
        bool gone;
        int r;

        r = bus_call(sd, bus, 1000 * 1000, 0, NO_SUCH_UNIT, &gone, SYSTEMD1, "GetUnit", &reply, "s", unit);
        if (r < 0)
                return gone ? 1 : r;
        r = sd->bus_message_read(reply, "o", &path);
        if (r >= 0)
                r = sd->bus_get_property_string(bus, "org.freedesktop.systemd1", path,
                                                "org.freedesktop.systemd1.Unit", "ActiveState", NULL,
                                                &state);
        sd->bus_message_unref(reply);
        if (r < 0)
                return r;
        r = strcmp(state, "inactive") == 0 || strcmp(state, "failed") == 0;
        free(state);
        return r;
}

int systemd_user_settle(uid_t uid, long long timeout_ns)
{
        const Libsystemd *sd;
        sd_bus *bus;
        long long deadline = monotonic_ns() + timeout_ns;
        char unit[64];
        int r;

        if (!systemd_running())
                return 0;
        bus = open_bus(&sd);
        if (!bus)
                return -ENOTCONN;
        (void)snprintf(unit, sizeof(unit), "user-%u.slice", (unsigned)uid);
        for (;;) {
                r = unit_stopped(sd, bus, unit);
                if (r != 0)
                        break;
                if (monotonic_ns() > deadline) {
                        r = -ETIME;
                        break;
                }
                struct timespec ts = { 0, 5 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        /* Reset also where the slice still runs: the start limit is the services' own. */
        for (int i = 0; i < 2; i++) {
                (void)snprintf(unit, sizeof(unit),
                               i == 0 ? "user-runtime-dir@%u.service" : "user@%u.service", (unsigned)uid);
                (void)bus_call(sd, bus, CALL_USEC, 0, NO_SUCH_UNIT, NULL, SYSTEMD1, "ResetFailedUnit", NULL,
                               "s", unit);
        }
        sd->bus_flush_close_unref(bus);
        return r < 0 ? r : 0;
}
