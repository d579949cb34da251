/* SPDX-License-Identifier: MIT */
#include "local-ranges.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "macro.h"

typedef struct Range {
        const char *address;
        unsigned prefix;
} Range;

/* From the Rust program's list, plus the unspecified ranges (a connection to them reaches this machine)
 * and the deprecated site-local fec0::/10. */
static const Range ipv4[] = {
        { "0.0.0.0", 8 },       /* "this network": a connection to it reaches this machine */
        { "10.0.0.0", 8 },      /* private */
        { "100.64.0.0", 10 },   /* shared address space: carrier NAT, tailnets */
        { "127.0.0.0", 8 },     /* loopback */
        { "169.254.0.0", 16 },  /* link-local, the metadata service among it */
        { "172.16.0.0", 12 },   /* private */
        { "192.0.0.0", 24 },    /* IETF protocol assignments */
        { "192.168.0.0", 16 },  /* private */
        { "198.18.0.0", 15 },   /* benchmarking */
        { "224.0.0.0", 3 },     /* multicast, reserved, broadcast */
        { "168.63.129.16", 32 } /* Azure's host endpoint (metadata, DNS, health) */
};

static const Range ipv6[] = {
        { "::", 96 },          /* unspecified, loopback, IPv4-compatible: all reach this machine */
        { "64:ff9b:1::", 48 }, /* local-use IPv4/IPv6 translation (RFC 8215): any IPv4, local ones too */
        { "fc00::", 7 },       /* unique local, the metadata service's fd00:ec2::254 among it */
        { "fe80::", 10 },      /* link-local */
        { "fec0::", 10 },      /* site-local (deprecated) */
        { "ff00::", 8 },       /* multicast */
};

static void put(FILE *f, bool *first, const char *sep, const char *address, unsigned prefix, unsigned full)
{
        (void)fprintf(f, "%s%s", *first ? "" : sep, address);
        if (prefix != full)
                (void)fprintf(f, "/%u", prefix);
        *first = false;
}

int local_ranges_write(FILE *f, int family, const char *sep, bool mapped)
{
        bool first = true;

        if (family == AF_INET)
                for (size_t i = 0; i < ELEMENTSOF(ipv4); i++)
                        put(f, &first, sep, ipv4[i].address, ipv4[i].prefix, 32);
        else {
                for (size_t i = 0; i < ELEMENTSOF(ipv6); i++)
                        put(f, &first, sep, ipv6[i].address, ipv6[i].prefix, 128);
                if (mapped)
                        put(f, &first, sep, "::ffff:0:0", 96, 128);
                /* A NAT64 gateway (RFC 6052) makes 64:ff9b::a.b.c.d the IPv4 address a.b.c.d. */
                for (size_t i = 0; i < ELEMENTSOF(ipv4); i++) {
                        struct in6_addr a6 = { .s6_addr = { 0x00, 0x64, 0xff, 0x9b } };
                        char text[INET6_ADDRSTRLEN];

                        if (inet_pton(AF_INET, ipv4[i].address, &a6.s6_addr[12]) != 1 ||
                            !inet_ntop(AF_INET6, &a6, text, sizeof(text)))
                                return -EINVAL;
                        put(f, &first, sep, text, 96 + ipv4[i].prefix, 128);
                }
        }
        return ferror(f) ? -ENOMEM : 0;
}

static bool prefix_equal(const unsigned char *a, const unsigned char *b, unsigned bits)
{
        for (unsigned i = 0; i < bits; i++)
                if (((a[i / 8] ^ b[i / 8]) >> (7 - i % 8)) & 1)
                        return false;
        return true;
}

bool local_ranges_contain(int family, const void *address)
{
        const unsigned char *a = address;
        unsigned char r[16];

        if (family == AF_INET) {
                for (size_t i = 0; i < ELEMENTSOF(ipv4); i++)
                        if (inet_pton(AF_INET, ipv4[i].address, r) == 1 &&
                            prefix_equal(a, r, ipv4[i].prefix))
                                return true;
                return false;
        }
        for (size_t i = 0; i < ELEMENTSOF(ipv6); i++)
                if (inet_pton(AF_INET6, ipv6[i].address, r) == 1 && prefix_equal(a, r, ipv6[i].prefix))
                        return true;
        return false;
}
