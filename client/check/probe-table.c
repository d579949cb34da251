/* SPDX-License-Identifier: MIT */
/* The table of probes, in the order they are printed: agentic-job-probes(7) is this table in prose. */
#include "probes.h"

#include <string.h>

#include "macro.h"

const ProbeDef probe_table[] = {
        { "groups-control", "privilege", PROBE_SANDBOX, "the sandbox user's groups are read and named", NULL,
          NULL },
        { "groups", "privilege", PROBE_SANDBOX,
          "membership of a group that is root by another name (gid 0, "
          "sudo, adm, disk, docker, ...)",
          "groups-control", "setup adds the sandbox user to none" },
        { "sudo-control", "privilege", PROBE_SANDBOX,
          "sudo is a set-uid program of root's (a note without sudo)", NULL, NULL },
        { "sudo", "privilege", PROBE_SANDBOX, "sudo -n /bin/true, a command as root", "sudo-control",
          "enter's no_new_privs, under which sudo's set-uid bit does nothing; no rule of setup's names the "
          "sandbox user" },
        { "ptrace-scope-control", "privilege", PROBE_SANDBOX,
          "the sandbox user reads kernel.osrelease: /proc/sys is there to be read", NULL, NULL },
        { "ptrace-scope", "privilege", PROBE_SANDBOX,
          "kernel.yama.ptrace_scope 0: a process of the sandbox user may trace any other of its own, not "
          "only its descendants (a note where the kernel has no Yama)",
          "ptrace-scope-control", "setup raises 0 to 1" },
        { "environ-runner-control", "processes", PROBE_RUNNER,
          "the runner finds the canary in its decoy's environment (/proc/PID/environ)", NULL, NULL },
        { "environ-runner", "processes", PROBE_SANDBOX,
          "read the environment of a process of the runner's, a decoy carrying a random canary",
          "environ-runner-control",
          "the uid split (and enter's /proc, which hides other users' processes)" },
        { "proc-mem-control", "processes", PROBE_RUNNER,
          "the runner reads the canary in its decoy's memory (/proc/PID/mem at its environment)", NULL,
          NULL },
        { "proc-mem", "processes", PROBE_SANDBOX, "open the decoy's memory (/proc/PID/mem)",
          "proc-mem-control", "the uid split (and enter's /proc)" },
        { "ptrace-runner-control", "processes", PROBE_RUNNER,
          "the runner attaches to its decoy (PTRACE_SEIZE) and lets it go (a note where Yama admits no "
          "one)",
          NULL, NULL },
        { "ptrace-runner", "processes", PROBE_SANDBOX, "PTRACE_SEIZE the decoy", "ptrace-runner-control",
          "the uid split: tracing needs the same uid or CAP_SYS_PTRACE" },
        { "signal-runner-control", "processes", PROBE_RUNNER,
          "the runner signals its decoy (kill -0), alive after the sandbox side", NULL, NULL },
        { "signal-runner", "processes", PROBE_SANDBOX, "kill -0 the decoy", "signal-runner-control",
          "the uid split" },
        { "tiocsti-control", "processes", PROBE_RUNNER,
          "the runner opens its decoy's controlling terminal (a pseudo-terminal the check made)", NULL,
          NULL },
        { "tiocsti", "processes", PROBE_SANDBOX,
          "hold a terminal of the runner's, to push input into with TIOCSTI or to write to: one among its "
          "standard descriptors, a controlling terminal, the decoy's terminal opened",
          "tiocsti-control",
          "enter refuses a terminal and starts a new session; the terminal's mode (0620, group tty)" },
        { "environ-sandbox-control", "processes", PROBE_SANDBOX,
          "the sandbox side finds HOME=its home among the environments it reads (/proc/PID/environ)", NULL,
          NULL },
        { "environ-canary", "processes", PROBE_SANDBOX,
          "find the decoy's canary in any environment the sandbox user can read", "environ-sandbox-control",
          "the uid split; enter passes none of the caller's environment" },
        { "environ-job-variables", "processes", PROBE_SANDBOX,
          "find ACTIONS_* in any environment the sandbox user can read (names reported, values never)",
          "environ-sandbox-control",
          "enter's environment of named values, ACTIONS_* refused by name; a service manager's "
          "environment without them" },
        { "env-job-variables", "processes", PROBE_SANDBOX, "find ACTIONS_* in its own environment",
          "environ-sandbox-control", "the same" },
        { "oidc-control", "processes", PROBE_RUNNER,
          "the check has ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN; only their lengths and SHA-256 go to the "
          "sandbox side (a note where the job has neither)",
          NULL, NULL },
        { "oidc-value:", "processes", PROBE_SANDBOX,
          "find the runner's value of NAME in any environment the sandbox user can read, where a value "
          "starts or after a space, tab, quote, ':', '=', ',' or ';'",
          "oidc-control", "the uid split; enter passes none of the caller's environment" },
        { "private-dir-control", "files", PROBE_RUNNER, "the runner reads its own home", NULL, NULL },
        { "private-dir:", "files", PROBE_SANDBOX,
          "read or search the runner's home and each configured private directory", "private-dir-control",
          "setup's chmod 0700" },
        { "world-writable-control", "files", PROBE_SANDBOX,
          "--walk: the walk finds the file all may write in a directory the runner planted", NULL, NULL },
        { "world-writable", "files", PROBE_SANDBOX,
          "--walk: setup's walk of the root filesystem, report-only, as the sandbox user: a file or a "
          "directory (without the sticky bit) that all may write, outside /tmp and /var/tmp, not its own",
          "world-writable-control", "setup's walk, which takes o+w away" },
        { "sandbox-writable-control", "files", PROBE_SANDBOX,
          "--walk: the same walk finds a file the sandbox user owns (mode 0600) in a directory of the "
          "check's "
          "own",
          NULL, NULL },
        { "sandbox-writable", "files", PROBE_SANDBOX,
          "--walk: in the same walk, a file or directory of /etc, /usr, /opt, /var/lib, /var/spool, /srv, "
          "/root or /boot that the sandbox user may write other than by o+w: its uid's, its groups', an ACL "
          "entry naming it (asked with faccessat(2), as the kernel decides a write)",
          "sandbox-writable-control", "setup gives the sandbox user nothing there" },
        { "runner-world-write-control", "files", PROBE_RUNNER,
          "--walk: the same walk of the planted directory, as the runner", NULL, NULL },
        { "runner-world-write", "files", PROBE_RUNNER,
          "--walk: the same walk of the root filesystem, as the runner: what it could change for a later "
          "step of root's",
          "runner-world-write-control", "setup's walk" },
        { "setuid-control", "privilege", PROBE_SANDBOX,
          "--walk: the walk finds su or sudo, set-uid root, and its package owns it (a note without dpkg or "
          "rpm)",
          NULL, NULL },
        { "setuid-unowned", "privilege", PROBE_SANDBOX,
          "--walk: a set-uid or set-gid program of root's that no package owns (dpkg-query -S, rpm -qf)",
          "setuid-control", "setup's walk, which takes the bit away from those" },
        { "state-write-control", "files", PROBE_SANDBOX, "the sandbox user may write its own home", NULL,
          NULL },
        { "state-write", "files", PROBE_SANDBOX,
          "write (faccessat W_OK) /etc/agentic-job, its config.toml, the helper's directory, the helper, "
          "and "
          "with the "
          "proxy the policy and its directory",
          "state-write-control",
          "setup: root's alone (the helper and the check refuse the configuration otherwise)" },
        { "user-manager-control", "privilege", PROBE_SANDBOX, "systemd runs and systemd-run is there", NULL,
          NULL },
        { "user-manager", "privilege", PROBE_SANDBOX,
          "start a transient unit of its own user manager (systemd-run --user), which would outlive the "
          "command, leave its cgroup and have no no_new_privs",
          "user-manager-control",
          "setup masks user@UID.service ([sandbox] user-manager = true keeps it: a note)" },
        { "polkit-control", "privilege", PROBE_SANDBOX,
          "polkitd answers pkcheck about the sandbox side's own process (a note without polkit)", NULL,
          NULL },
        { "polkit", "privilege", PROBE_SANDBOX,
          "be authorized by polkit to manage the machine's units (pkcheck): neither yes nor an "
          "administrator's challenge may come back",
          "polkit-control", "setup's polkit rule, which answers no to every action of the sandbox user" },
        { "linger-control", "privilege", PROBE_SANDBOX, "logind answers loginctl (a note without logind)",
          NULL, NULL },
        { "linger", "privilege", PROBE_SANDBOX,
          "loginctl enable-linger for itself (undone at once by the sandbox user where it worked)",
          "linger-control", "setup's polkit rule" },
        { "run0-control", "privilege", PROBE_SANDBOX, "run0 runs (a note where systemd has no run0)", NULL,
          NULL },
        { "run0", "privilege", PROBE_SANDBOX, "run0 --no-ask-password /bin/true, a command as root",
          "run0-control", "setup's polkit rule (run0 is no set-id program: no_new_privs does not stop it)" },
        { "userns-restricted-control", "privilege", PROBE_SANDBOX,
          "where AppArmor restricts user namespaces (kernel.apparmor_restrict_unprivileged_userns=1), "
          "bubblewrap, which setup's profile names, makes one (a note where nothing restricts them)",
          NULL, NULL },
        { "userns-restricted", "privilege", PROBE_SANDBOX,
          "where AppArmor restricts user namespaces, a program no profile names makes one and uses a "
          "capability in it: its uid map, a tmpfs mounted in a mount namespace of its own (a note where "
          "nothing restricts them)",
          "userns-restricted-control",
          "the kernel's restriction, left on by setup, which names bubblewrap alone in a profile" },
        { "resources-control", "resources", PROBE_SANDBOX,
          "the sandbox side reads its cgroup (/proc/self/cgroup) and its oom_score_adj", NULL, NULL },
        { "oom-score", "resources", PROBE_SANDBOX,
          "the entered command's oom_score_adj is other than 1000, or the sandbox lowers it (to 999, to "
          "-1): "
          "the OOM killer could take the runner's processes first (a note where no floor can be set: "
          "whoever set it had no CAP_SYS_RESOURCE)",
          "resources-control",
          "every enter's oom_score_adj 1000 (OOMScoreAdjust=1000), set by root or systemd, a floor the "
          "sandbox cannot go below" },
        { "tasks-budget", "resources", PROBE_SANDBOX,
          "RLIMIT_NPROC unlimited, or raised by the sandbox: a fork bomb could take every pid",
          "resources-control", "every enter's RLIMIT_NPROC, [sandbox] tasks-max, soft and hard" },
        { "memory-budget", "resources", PROBE_SANDBOX,
          "no memory limit on the sandbox side's cgroup or any above it (memory.max, v1's "
          "memory.limit_in_bytes): the sandbox could take the runner's memory (a note where no memory "
          "controller enforces one, or where systemd is not running)",
          "resources-control",
          "setup's MemoryMax= on user-UID.slice, [sandbox] memory-max-percent of the machine's memory" },
        { "network-control", "network", PROBE_SANDBOX,
          "fetch control-url (through the proxy where there is one)", NULL, NULL },
        { "metadata-control", "network", PROBE_RUNNER,
          "the runner reaches the cloud metadata address 169.254.169.254 (a note where it cannot)", NULL,
          NULL },
        { "metadata", "network", PROBE_SANDBOX, "reach 169.254.169.254 without the proxy", "network-control",
          "the nftables rules on the sandbox uids" },
        { "egress-direct", "network", PROBE_SANDBOX, "fetch control-url without the proxy",
          "network-control", "the nftables rules on the sandbox uids (only loopback's proxy port)" },
        { "egress-tcp-control", "network", PROBE_RUNNER,
          "the runner connects to control-url's address and port without the proxy (TCP alone)", NULL,
          NULL },
        { "egress-tcp", "network", PROBE_SANDBOX,
          "a TCP connection to control-url's address and port without the proxy", "egress-tcp-control",
          "the nftables rules on the sandbox uids" },
        { "egress-udp-control", "network", PROBE_RUNNER,
          "the kernel sends the runner's datagram to control-url's address, port 443 (QUIC's)", NULL, NULL },
        { "egress-udp", "network", PROBE_SANDBOX, "a datagram to control-url's address, port 443",
          "egress-udp-control", "the nftables rules on the sandbox uids" },
        { "egress-dns-control", "network", PROBE_RUNNER,
          "the kernel sends the runner's DNS query to each nameserver of /etc/resolv.conf (a note without "
          "one)",
          NULL, NULL },
        { "egress-dns", "network", PROBE_SANDBOX,
          "a DNS query to each nameserver of /etc/resolv.conf: names can carry data out",
          "egress-dns-control", "the nftables rules on the sandbox uids (the proxy resolves for it)" },
        { "egress-post", "network", PROBE_SANDBOX,
          "POST a body to control-url through the proxy, which the egress policy refuses (asked with "
          "egress_decide()); the proxy must answer 403 with X-Egress-Denied",
          "network-control", "the egress proxy, deciding with the installed policy" },
        { "egress-read", "network", PROBE_SANDBOX,
          "GET and HEAD control-url through the proxy: reads need no rule, so the origin must answer both",
          NULL, NULL },
        { "egress-git", "network", PROBE_SANDBOX,
          "git ls-remote fetch-repo HEAD through the proxy, where the policy admits its requests (GET "
          ".../info/refs, POST .../git-upload-pack): it must work",
          NULL, NULL },
        { "egress-git-refused", "network", PROBE_SANDBOX,
          "where the policy refuses one of git ls-remote's requests: the first, made with curl through the "
          "proxy, must meet its 403 with X-Egress-Denied",
          "network-control", "the egress proxy, deciding with the installed policy" },
        { "egress-cargo", "network", PROBE_SANDBOX,
          "cargo fetch of a crate depending on itoa through the proxy, where the policy admits its "
          "requests (the sparse index, the download): it must work (a note without cargo)",
          NULL, NULL },
        { "egress-cargo-refused", "network", PROBE_SANDBOX,
          "where the policy refuses one of cargo's requests: the first, made with curl through the proxy, "
          "must meet its 403 with X-Egress-Denied",
          "network-control", "the egress proxy, deciding with the installed policy" },
        { "egress-npm", "network", PROBE_SANDBOX,
          "npm install is-number through the proxy, where the policy admits its requests (the package, "
          "its tarball, the audit's POST): it must work (a note without npm)",
          NULL, NULL },
        { "egress-npm-refused", "network", PROBE_SANDBOX,
          "where the policy refuses one of npm's requests: the first, made with curl through the proxy, "
          "must meet its 403 with X-Egress-Denied",
          "network-control", "the egress proxy, deciding with the installed policy" },
        { "egress-push", "network", PROBE_SANDBOX,
          "POST a pack to fetch-repo's git-receive-pack (a push) through the proxy: 403 with "
          "X-Egress-Denied (a note where the policy admits it)",
          "network-control", "the egress proxy: no rule of the shipped policy admits git-receive-pack" },
        { "egress-fronting-control", "network", PROBE_RUNNER,
          "the certificate of control-url's host names another host, a front it covers (a note where it "
          "names none, or control-url is http)",
          NULL, NULL },
        { "egress-fronting", "network", PROBE_SANDBOX,
          "a request on a connection to control-url's host that names the front, in its Host header, then "
          "in its TLS server name: 403 with X-Egress-Denied, for fronting",
          "egress-fronting-control",
          "the egress policy: the Host header and the server name must name the host connected to" },
        { "egress-proxy-metadata", "network", PROBE_SANDBOX,
          "ask the proxy for the metadata service, http://169.254.169.254/ and http://[fd00:ec2::254]/: 403 "
          "with X-Egress-Denied",
          "network-control",
          "the egress policy (loopback, link-local and metadata addresses, localhost) and squid's local_dst "
          "(by the address it would connect to, whatever name led there)" },
        { "egress-proxy-local", "network", PROBE_SANDBOX,
          "ask the proxy for loopback (127.0.0.1, ::1 and localhost, on a listener of the runner's) and "
          "each "
          "of this machine's own addresses: 403 with X-Egress-Denied",
          "network-control",
          "the egress policy (loopback, link-local and metadata addresses, localhost) and squid's local_dst "
          "(by the address it would connect to, whatever name led there)" },
        { "egress-ipv6-control", "network", PROBE_RUNNER,
          "the runner connects to control-url's host over IPv6 (a note where it has no IPv6 address or "
          "the runner does not reach it)",
          NULL, NULL },
        { "egress-ipv6", "network", PROBE_SANDBOX,
          "a TCP connection to control-url's IPv6 address and port without the proxy", "egress-ipv6-control",
          "the nftables rules on the sandbox uids (one inet table: IPv4 and IPv6 alike)" },
        { "egress-resolve-control", "network", PROBE_RUNNER,
          "the runner's resolver (getaddrinfo: whatever nsswitch names) answers for a fresh name under "
          "control-url's host, if only that there is no such name (a note where none answers)",
          NULL, NULL },
        { "egress-resolve", "network", PROBE_SANDBOX,
          "resolve a fresh name under control-url's host with getaddrinfo: any answer, no such name "
          "included, means the name reached a resolver, and names carry data out",
          "egress-resolve-control",
          "the nftables rules on the sandbox uids (port 53), and no resolver of the host's (nscd, "
          "systemd-resolved) that the sandbox user reaches over a socket" },
        { "userns-net-control", "network", PROBE_SANDBOX,
          "the sandbox user makes a user and network namespace (unshare(2)), and where pasta is installed, "
          "pasta's namespace reaches the proxy through its gateway (a note where user namespaces are "
          "refused)",
          NULL, NULL },
        { "userns-net", "network", PROBE_SANDBOX,
          "from a user and network namespace of its own (unshare(2), and pasta's where installed), connect "
          "to "
          "control-url's address without the proxy",
          "userns-net-control",
          "the nftables rules on the sandbox uids: pasta connects for the namespace as the sandbox user" },
        { "local-tcp-control", "local-ipc", PROBE_SANDBOX,
          "connect to the proxy's port (without the proxy: to a listener the runner opened)", NULL, NULL },
        { "local-tcp", "local-ipc", PROBE_SANDBOX,
          "connect to every listening TCP socket on loopback and local addresses, IPv4 and IPv6, but the "
          "proxy's and allow-tcp-ports (a listener of the runner's among them)",
          "local-tcp-control", "the nftables rules on the sandbox uids" },
        { "local-abstract-control", "local-ipc", PROBE_SANDBOX,
          "connect to an abstract unix socket the runner opened", NULL, NULL },
        { "local-abstract", "local-ipc", PROBE_SANDBOX,
          "connect to every listening abstract unix socket but those of allow-sockets",
          "local-abstract-control", "nothing but their absence: any user reaches them" },
        { "local-sockets-control", "local-ipc", PROBE_SANDBOX,
          "connect to a unix socket the runner bound on a path (in a directory of /tmp others may search)",
          NULL, NULL },
        { "local-sockets", "local-ipc", PROBE_SANDBOX,
          "connect to every unix socket bound on a path (listening stream and seqpacket ones, datagram "
          "ones) "
          "but its own, the host's few meant for every user, and those of allow-sockets",
          "local-sockets-control",
          "each socket's own mode and directories: stop the daemon or allow it by name" },
        { "local-udp-control", "local-ipc", PROBE_RUNNER,
          "the runner's UDP socket on 127.0.0.1 (and ::1) answers a datagram of the runner's with its echo",
          NULL, NULL },
        { "local-udp", "local-ipc", PROBE_SANDBOX,
          "send a datagram to the runner's echoing UDP socket on 127.0.0.1 and ::1: the echo must not come "
          "back, the kernel must refuse it",
          "local-udp-control", "the nftables rules on the sandbox uids (a note without the proxy)" },
        { "cron-control", "schedulers", PROBE_RUNNER,
          "the runner lists its crontab (crontab -l), not refused (a note without cron)", NULL, NULL },
        { "cron", "schedulers", PROBE_SANDBOX,
          "crontab -l: a job of cron would run after the run, outside its end", "cron-control",
          "setup's /etc/cron.deny (or cron.allow without it)" },
        { "at-control", "schedulers", PROBE_RUNNER,
          "the runner lists its at jobs (atq), not refused (a note without at, or with neither list)", NULL,
          NULL },
        { "at", "schedulers", PROBE_SANDBOX, "atq: a job of at would run after the run", "at-control",
          "setup's /etc/at.deny (or at.allow without it; with neither, at admits root alone)" },
        { "service-control", "services", PROBE_SANDBOX,
          "systemctl is-active systemd-journald.service answers active (a note where systemd is not "
          "running)",
          NULL, NULL },
        { "service:", "services", PROBE_SANDBOX,
          "systemctl is-active UNIT, for each unit of [sandbox] stop-services: a daemon setup stopped, "
          "running again, is one the sandbox user may reach",
          "service-control", "setup's systemctl stop (nothing may start it again)" },
        { "container-pull", "containers", PROBE_SANDBOX,
          "container-image is in the sandbox user's store of rootless podman, or podman pull gets it "
          "(through the proxy): it must work",
          NULL, NULL },
        { "container-build", "containers", PROBE_SANDBOX,
          "podman build of FROM container-image, RUN true, without a network and without a pull: it must "
          "work",
          NULL, NULL },
        { "container-built-run", "containers", PROBE_SANDBOX,
          "podman run of the image built, without a network: it must work (failed without a build)", NULL,
          NULL },
        { "container-control", "containers", PROBE_SANDBOX,
          "curl in a container on the host's network reaches control-url through the proxy (its authority "
          "mounted; directly without the proxy)",
          NULL, NULL },
        { "container-metadata", "containers", PROBE_SANDBOX,
          "curl in a container on the host's network reaches 169.254.169.254 around the proxy",
          "container-control", "the nftables rules on the sandbox uids" },
        { "egress-container-post", "containers", PROBE_SANDBOX,
          "a POST to control-url from a container, through the proxy, which the policy refuses",
          "container-control", "the egress policy (403 with X-Egress-Denied)" },
        { "egress-container-direct", "containers", PROBE_SANDBOX,
          "curl in a container on the host's network connects to control-url's address around the proxy",
          "container-control", "the nftables rules on the sandbox uids" },
        { "egress-container-own-network", "containers", PROBE_SANDBOX,
          "curl in a container with a network of its own (slirp4netns or pasta) connects to control-url's "
          "address (a note where no such container starts)",
          "container-control",
          "the nftables rules on the sandbox uids: the network helper connects as the sandbox user" },
        { "runner-sudo-control", "runner", PROBE_RUNNER,
          "sudo runs the helper for the runner (helper ping): sudo works and reads the rule", NULL, NULL },
        { "runner-sudo", "runner", PROBE_RUNNER, "sudo -n /bin/true, a command as root",
          "runner-sudo-control",
          "setup's lock: \"RUNNER ALL=(ALL:ALL) !ALL\" before the helper's rule, read last" },
        { "runner-sudo-list", "runner", PROBE_RUNNER,
          "sudo -n -l: after the last deny of everything, any rule but the helper's", "runner-sudo-control",
          "setup's lock (sudo applies the last rule that matches)" },
        { "runner-groups-control", "runner", PROBE_RUNNER, "the runner's groups are read and named", NULL,
          NULL },
        { "runner-group:", "runner", PROBE_RUNNER,
          "for each root-equivalent group the runner's job still holds: its daemon's socket (docker, "
          "podman, "
          "lxd, incus, libvirt), the block devices, /dev/sg*, /dev/bsg/* and /dev/loop-control opened for "
          "writing (disk), /etc/shadow and /etc/gshadow (shadow), the journal's files (adm, "
          "systemd-journal)",
          "runner-groups-control",
          "setup's lock: the runner out of the group, its daemons stopped, the block devices go-rw" },
        { "runner-run0", "runner", PROBE_RUNNER, "run0 --no-ask-password /bin/true (a note without run0)",
          NULL, "setup's polkit rule, which answers no to the runner too" },
        { "runner-pkexec", "runner", PROBE_RUNNER,
          "pkexec --disable-internal-agent /bin/true (a note without pkexec)", NULL, "setup's polkit rule" },
        { "runner-su", "runner", PROBE_RUNNER, "su -c /bin/true root, without a terminal", NULL,
          "root's password: locked, or one the runner does not have" },
        { "kill-user", "check", PROBE_RUNNER, "helper kill-user before the first probe (a note)", NULL,
          NULL },
        { "walk", "check", PROBE_RUNNER,
          "without --walk, a note naming the probes that need a walk of the root filesystem", NULL, NULL },
        { "probe-inside", "check", PROBE_RUNNER,
          "the sandbox side ran in one helper enter and wrote nothing but result lines", NULL, NULL },
        { "record", "check", PROBE_RUNNER, "the pass record (notes; a failure to write one asked for)", NULL,
          NULL },
};
const size_t probe_table_size = ELEMENTSOF(probe_table);

bool probe_group_known(const char *group)
{
        for (size_t i = 0; i < probe_table_size; i++)
                if (strcmp(probe_table[i].group, group) == 0)
                        return true;
        return false;
}

const ProbeDef *probe_lookup(const char *name)
{
        for (size_t i = 0; i < probe_table_size; i++) {
                const char *p = probe_table[i].name;
                size_t n = strlen(p);

                if (p[n - 1] == ':' ? strncmp(name, p, n) == 0 && name[n] != '\0' : strcmp(name, p) == 0)
                        return &probe_table[i];
        }
        return NULL;
}
