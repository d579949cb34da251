/* SPDX-License-Identifier: MIT */
/* libsystemd, loaded only where systemd runs: on a host without it the helper does not pay for loading
 * (and, with full RELRO, binding) the library and its dependencies on every call. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

typedef struct Libsystemd {
        int (*bus_open_system)(sd_bus **ret);
        sd_bus *(*bus_flush_close_unref)(sd_bus *bus);
        int (*bus_get_property_string)(sd_bus *bus, const char *destination, const char *path,
                                       const char *interface, const char *member, sd_bus_error *ret_error,
                                       char **ret);
        int (*bus_message_new_method_call)(sd_bus *bus, sd_bus_message **m, const char *destination,
                                           const char *path, const char *interface, const char *member);
        int (*bus_message_appendv)(sd_bus_message *m, const char *types, va_list ap);
        int (*bus_message_read)(sd_bus_message *m, const char *types, ...);
        int (*bus_call)(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error,
                        sd_bus_message **reply);
        sd_bus_message *(*bus_message_unref)(sd_bus_message *m);
        void (*bus_error_free)(sd_bus_error *e);
        int (*journal_send)(const char *format, ...);
} Libsystemd;

/* Whether systemd is PID 1 here (what sd_booted() checks). */
bool systemd_running(void);

/* The library, or NULL where systemd does not run or the library cannot be loaded. */
const Libsystemd *libsystemd(void);
