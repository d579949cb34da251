/* SPDX-License-Identifier: MIT */
#include "confine-seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "macro.h"

/* Refused with EPERM, whatever the arguments. Those that need a capability are refused anyway (bubblewrap
 * leaves none), here so that a kernel bug in their checks is not reachable either. */
static const char *const refused[] = {
        /* The kernel's keyrings are not namespaced: a key one run stores, the next run of the same user
         * could read. */
        "keyctl",
        "add_key",
        "request_key",
        /* Large attack surfaces no build needs: eBPF, performance counters (and their side channels),
         * userfaultfd (a race-widening tool of exploits), io_uring (which bypasses the rest of the
         * filter's view of calls). */
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "io_uring_setup",
        "io_uring_enter",
        "io_uring_register",
        /* Entering other namespaces, or mounting: the confinement's shape is bubblewrap's alone. */
        "setns",
        "mount",
        "umount2",
        "pivot_root",
        "move_mount",
        "open_tree",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
        "mount_setattr",
        /* File handles reach files by inode number, past every mount that hides them. */
        "open_by_handle_at",
        "name_to_handle_at",
        /* The machine's own: modules, kexec, reboot, swap, accounting, quotas, the kernel log. */
        "init_module",
        "finit_module",
        "delete_module",
        "kexec_load",
        "kexec_file_load",
        "reboot",
        "swapon",
        "swapoff",
        "acct",
        "quotactl",
        "syslog",
};

/* The socket families a process of the confinement may make: unix sockets, IP (which the network namespace
 * confines to the bridge), and netlink (which tools use to read their own addresses and routes). Every
 * other is refused with EAFNOSUPPORT, what the kernel answers for a family it lacks: AF_VSOCK above all,
 * which no network namespace covers and which reaches the services of the VM's host; AF_PACKET, AF_ALG,
 * AF_BLUETOOTH and the rest are kernel surface no build needs. Families are below FAMILY_BOUND (AF_MAX is
 * 46 in Linux 6.x); a larger value, or one with bits above the 32 the kernel reads, is refused too. */
#define FAMILY_BOUND 64
static bool family_allowed(int f)
{
        return f == AF_UNIX || f == AF_INET || f == AF_INET6 || f == AF_NETLINK;
}

/* socket() and socketpair() take the family first. For 32-bit code on x86-64, libseccomp puts the rules on
 * the direct i386 socket and socketpair calls, and refuses socketcall's SYS_SOCKET and SYS_SOCKETPAIR
 * outright (their arguments are in memory, which a filter cannot read). */
static int add_socket_rules(scmp_filter_ctx ctx, int nr)
{
        int r;

        for (int f = 0; f < FAMILY_BOUND; f++) {
                if (family_allowed(f))
                        continue;
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), nr, 1,
                                     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)f));
                if (r < 0)
                        return r;
        }
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), nr, 1,
                                SCMP_A0(SCMP_CMP_GE, (scmp_datum_t)FAMILY_BOUND));
}

static int add_rules(scmp_filter_ctx ctx)
{
        int r;

        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                int nr = seccomp_syscall_resolve_name(refused[i]);

                if (nr == __NR_SCMP_ERROR)
                        continue; /* not a call of this architecture */
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
                if (r < 0)
                        return r;
        }
        /* No new user namespace: the one way an unprivileged process gains capabilities again (bubblewrap's
         * --disable-userns needs a writable /proc/sys, which containers such as nspawn do not give). clone3
         * passes its flags in memory a filter cannot read: ENOSYS makes libc fall back to clone. */
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
        if (r < 0)
                return r;
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
        if (r < 0)
                return r;
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
        if (r < 0)
                return r;
        r = add_socket_rules(ctx, SCMP_SYS(socket));
        if (r < 0)
                return r;
        r = add_socket_rules(ctx, SCMP_SYS(socketpair));
        if (r < 0)
                return r;
        /* Typing into a terminal (TIOCSTI) and the console's selection (TIOCLINUX): bubblewrap's
         * --new-session already cuts the agent off its caller's terminal; this holds if a terminal reaches
         * it another way. The request is 32 bits: the upper half is ignored by the kernel, so masked. */
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                             SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffU, TIOCSTI));
        if (r < 0)
                return r;
        return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                                SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffU, TIOCLINUX));
}

static void seccomp_releasep(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}

int confine_seccomp_fd(int *ret_fd)
{
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -ENOMEM;
        /* A call of another architecture (32-bit code on x86-64) is refused, not killed; and the native
         * one's companions get the same rules. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
        if (r < 0)
                return r;
        if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
                r = seccomp_arch_add(ctx, SCMP_ARCH_X86);
                if (r < 0 && r != -EEXIST)
                        return r;
                r = seccomp_arch_add(ctx, SCMP_ARCH_X32);
                if (r < 0 && r != -EEXIST)
                        return r;
        }
        r = add_rules(ctx);
        if (r < 0)
                return r;
        fd = memfd_create("agentic-job-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return r;
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return -errno;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        /* cppcheck-suppress unreadVariable ; TAKE_FD() leaves -EBADF for the cleanup, which reads it */
        *ret_fd = TAKE_FD(fd);
        return 0;
}
