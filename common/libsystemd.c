/* SPDX-License-Identifier: MIT */
#include "libsystemd.h"

#include <dlfcn.h>
#include <unistd.h>

bool systemd_running(void)
{
        return access("/run/systemd/system/", F_OK) == 0;
}

const Libsystemd *libsystemd(void)
{
        static Libsystemd lib;
        static int state; /* 0 not tried, 1 loaded, -1 not available */
        void *h;

        if (state)
                return state > 0 ? &lib : NULL;
        state = -1;
        if (!systemd_running())
                return NULL;
        /* By soname, through root's ld.so.cache. The loader read LD_LIBRARY_PATH and friends when the
         * process started: sudo's env_reset removed them, and a setuid start would ignore them. */
        h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
        if (!h)
                return NULL;
#define LOAD(field, symbol)                                                                                 \
        do {                                                                                                \
                *(void **)&lib.field = dlsym(h, symbol);                                                    \
                if (!lib.field)                                                                             \
                        return NULL;                                                                        \
        } while (0)
        LOAD(bus_open_system, "sd_bus_open_system");
        LOAD(bus_flush_close_unref, "sd_bus_flush_close_unref");
        LOAD(bus_get_property_string, "sd_bus_get_property_string");
        LOAD(bus_message_new_method_call, "sd_bus_message_new_method_call");
        LOAD(bus_message_appendv, "sd_bus_message_appendv");
        LOAD(bus_message_read, "sd_bus_message_read");
        LOAD(bus_call, "sd_bus_call");
        LOAD(bus_message_unref, "sd_bus_message_unref");
        LOAD(bus_error_free, "sd_bus_error_free");
        LOAD(journal_send, "sd_journal_send");
#undef LOAD
        state = 1;
        return &lib;
}
