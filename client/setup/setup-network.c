/* SPDX-License-Identifier: MIT */
/* Setup's network stages: the egress proxy (its policy installed where none is, then started as its own
 * user) and the nftables rules that make it the sandbox's only way out. */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "egress-paths.h"
#include "egress-policy.h"
#include "egress-proxy.h"
#include "macro.h"
#include "nftables.h"
#include "parse.h"
#include "read-file.h"
#include "setup.h"

#define POLICY_MAX (4 * 1024 * 1024)

/* Each directory above the policy, made 0755 root:root where missing. */
static int make_policy_dirs(const Setup *s, AjError *reterr)
{
        _cleanup_free_ char *dir = strdup(EGRESS_POLICY_PATH);

        if (!dir)
                return -ENOMEM;
        *strrchr(dir, '/') = '\0';
        for (char *p = strchr(dir + 1, '/');; p = strchr(p + 1, '/')) {
                struct stat st;

                if (p)
                        *p = '\0';
                if (lstat(dir, &st) < 0) {
                        setup_change(s, "mkdir %s (0755, root:root)", dir);
                        if (!s->dry_run && (mkdir(dir, 0755) < 0 || chmod(dir, 0755) < 0))
                                return aj_error(reterr, errno, 0, 0, "mkdir %s: %s", dir, strerror(errno));
                } else if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
                        return aj_error(reterr, EPERM, 0, 0, "%s is not a directory of root's", dir);
                if (!p)
                        return 0;
                *p = '/';
        }
}

static int install_policy(const Setup *s, AjError *reterr)
{
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        int r;

        if (access(EGRESS_POLICY_PATH, F_OK) == 0) {
                setup_note("%s is there already (checked before the first change); kept",
                           EGRESS_POLICY_PATH);
                return 0;
        }
        r = read_file_for_parse(SHIPPED_POLICY_PATH, POLICY_MAX, &data, &size, reterr);
        if (r >= 0)
                r = make_policy_dirs(s, reterr);
        if (r >= 0)
                r = setup_write_file(s, EGRESS_POLICY_PATH, data, size, 0644, 0, 0, NULL,
                                     "the shipped egress policy (" SHIPPED_POLICY_PATH ")", reterr);
        return r;
}

int stage_egress_proxy(Setup *s, AjError *reterr)
{
        const struct passwd *pw;
        bool changed = false;
        int r;

        if (!s->config->egress_proxy) {
                setup_note("[egress] proxy = false: no proxy; the sandbox's traffic is not filtered, only "
                           "the metadata address is refused");
                return 0;
        }
        r = install_policy(s, reterr);
        if (r < 0)
                return r;
        setup_change(s, "start squid as %s on 127.0.0.1:%d (%s), asking %s", EGRESS_PROXY_USER,
                     EGRESS_LISTEN_PORT, s->systemd ? EGRESS_UNIT : "a supervisor", EGRESS_ACL_PATH);
        if (s->dry_run)
                return 0;
        r = egress_proxy_start(s->config->egress_log_max_bytes, s->config->egress_reads_listed, &changed,
                               reterr);
        if (r < 0)
                return r;
        pw = getpwnam(EGRESS_PROXY_USER);
        if (!pw || pw->pw_uid == 0)
                return aj_error(reterr, ENOENT, 0, 0, "the proxy user %s is not there", EGRESS_PROXY_USER);
        s->proxy_uid = pw->pw_uid;
        setup_note("egress proxy listening on 127.0.0.1:%d as %s (uid %u)", EGRESS_LISTEN_PORT,
                   EGRESS_PROXY_USER, (unsigned)s->proxy_uid);
        return 0;
}

#define LOCAL_PORT_RANGE "/proc/sys/net/ipv4/ip_local_port_range"

/* The ports the kernel gives a socket bound to port 0 here: squid's helpers are reached on them. */
static int local_port_range(unsigned ret[2], AjError *reterr)
{
        _cleanup_free_ char *text = NULL;
        uint64_t lo, hi;
        size_t n;
        char *p;
        int r = read_regular_nofollow(AT_FDCWD, LOCAL_PORT_RANGE, 256, &text, NULL);

        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "%s: %s", LOCAL_PORT_RANGE, strerror(-r));
        n = strcspn(text, " \t");
        p = text + n + strspn(text + n, " \t");
        if (parse_decimal(text, n, 65535, &lo) < 0 || parse_decimal(p, strcspn(p, "\n"), 65535, &hi) < 0)
                return aj_error(reterr, EINVAL, 0, 0, "%s: cannot read \"%.32s\"", LOCAL_PORT_RANGE, text);
        ret[0] = (unsigned)lo;
        ret[1] = (unsigned)hi;
        return 0;
}

int stage_network_rules(Setup *s, AjError *reterr)
{
        char *nft_load[] = { s->tools.nft, (char *)"-f", (char *)NFT_RULES_PATH, NULL };
        _cleanup_free_ char *text = NULL;
        NftInput in = {
                .sandbox_uid = s->sandbox_uid,
                .ranges = s->ranges,
                .n_ranges = s->n_ranges,
                .proxy = s->config->egress_proxy,
                .proxy_uid = s->proxy_uid,
                .proxy_port = EGRESS_LISTEN_PORT,
                .resolvers = s->nameservers,
        };
        int r;

        if (s->dry_run) {
                /* The uids are not known before the users are made. */
                setup_change(s,
                             "write %s (0644, root:root; nft -c) and load it (nft -f): table inet %s, "
                             "keyed on the sandbox uid and its subordinate uids%s",
                             NFT_RULES_PATH, NFT_TABLE,
                             s->config->egress_proxy ? ", proxy port only, the proxy kept to its resolvers"
                                                     : ", no proxy: the metadata address refused");
                return 0;
        }
        if (in.proxy && (r = local_port_range(in.helper_ports, reterr)) < 0)
                return r;
        r = nft_ruleset(&in, &text, reterr);
        if (r >= 0) {
                char *nft_check[] = { s->tools.nft, (char *)"-c", (char *)"-f", NULL };

                r = setup_write_file(s, NFT_RULES_PATH, text, strlen(text), 0644, 0, 0, nft_check,
                                     "the sandbox's network rules", reterr);
        }
        if (r < 0)
                return r;
        setup_change(s, "nft -f %s", NFT_RULES_PATH);
        return setup_run(nft_load, "loading the network rules", reterr);
}
