/* SPDX-License-Identifier: MIT */
/* The key broker's own readings (libmicrohttpd parses the rest): the request target and the key header's
 * value, on arbitrary bytes, and the usage an answer states. A target it takes is in the API's prefixes,
 * printable, with no escape, backslash or dot segment in its path; a key it takes is the placeholder
 * exactly. Input: the target, a NUL, the header's value. The whole input is also read as an answer, whole
 * and then in two pieces cut where its first byte says: the counts are the same either way. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker-usage.h"
#include "broker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

#define PLACEHOLDER "ajb-0123456789abcdef0123456789abcdef0123456789abcdef"

static bool dot_segment(const char *path, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                size_t end;

                if (path[i] != '/')
                        continue;
                end = i + 1;
                while (end < n && path[end] != '/')
                        end++;
                if ((end - i - 1 == 1 && path[i + 1] == '.') ||
                    (end - i - 1 == 2 && path[i + 1] == '.' && path[i + 2] == '.'))
                        return true;
        }
        return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char *const paths[] = { (char *)"/v1/", (char *)"/api/x", NULL };
        BrokerSettings s = { .upstream = "https://api.example",
                             .key_header = "x-api-key",
                             .key = "sk-real",
                             .placeholder = PLACEHOLDER,
                             .paths = paths };
        char *buf = malloc(size + 1), *value;
        size_t path_size;

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        value = buf + strlen(buf) + (strlen(buf) < size ? 1 : 0);

        if (broker_target_allowed(&s, buf)) {
                path_size = strcspn(buf, "?");
                CHECK(strncmp(buf, "/v1/", 4) == 0 || strncmp(buf, "/api/x", 6) == 0);
                CHECK(!memchr(buf, '%', path_size) && !memchr(buf, '\\', path_size) && !strchr(buf, '#'));
                CHECK(!dot_segment(buf, path_size));
                for (const char *c = buf; *c; c++)
                        CHECK(*c > 0x20 && *c < 0x7f);
        }
        CHECK(broker_key_matches(&s, value) == (strcmp(value, PLACEHOLDER) == 0));
        s.key_header = "authorization";
        CHECK(broker_key_matches(&s, value) ==
              (strncasecmp(value, "Bearer ", 7) == 0 && strcmp(value + 7, PLACEHOLDER) == 0));
        {
                BrokerUsage whole = { 0 }, cut = { 0 };
                size_t at = size ? data[0] % (size + 1) : 0;

                broker_usage_feed(&whole, (const char *)data, size);
                broker_usage_feed(&cut, (const char *)data, at);
                broker_usage_feed(&cut, (const char *)data + at, size - at);
                CHECK(whole.input == cut.input && whole.output == cut.output);
        }
        free(buf);
        return 0;
}
