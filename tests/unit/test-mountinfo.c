/* SPDX-License-Identifier: MIT */
/* mountinfo_parse() and mountinfo_prune_decide() on captured and crafted /proc/self/mountinfo texts
 * (tests/unit/mountinfo/), and mountinfo_read() on the live table. */
#include <check.h>

#include "check-run.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "macro.h"
#include "mountinfo.h"
#include "read-file.h"

#ifndef SOURCE_ROOT
#error "SOURCE_ROOT must name the source tree"
#endif

static MountInfo m;

static void teardown(void)
{
        mountinfo_done(&m);
}

static int parse(const char *text)
{
        mountinfo_done(&m);
        return mountinfo_parse(text, strlen(text), &m);
}

static int parse_file(const char *name)
{
        _cleanup_free_ char *text = NULL;
        char path[4096];
        size_t size;
        int r;

        (void)snprintf(path, sizeof(path), "%s/tests/unit/mountinfo/%s", SOURCE_ROOT, name);
        r = read_regular_nofollow(AT_FDCWD, path, MOUNTINFO_SIZE_MAX, &text, &size);
        ck_assert_int_eq(r, 0);
        mountinfo_done(&m);
        r = mountinfo_parse(text, size, &m);
        if (r >= 0)
                ck_assert_int_eq(mountinfo_prune_decide(&m), 0);
        return r;
}

/* The last entry at mount point path (the one on top when several are stacked). */
static const MountInfoEntry *at(const char *path)
{
        const MountInfoEntry *found = NULL;

        for (size_t i = 0; i < m.n; i++)
                if (strcmp(m.entries[i].mount_point, path) == 0)
                        found = &m.entries[i];
        ck_assert_msg(found, "no mount at %s", path);
        return found;
}

static MountPrune prune_of(const char *path)
{
        return at(path)->prune;
}

/* ---- Captured ---- */

START_TEST(test_dev_vm)
{
        const MountInfoEntry *e;

        ck_assert_int_eq(parse_file("dev-vm.txt"), 0);
        ck_assert_uint_eq(m.n, 21);

        e = at("/");
        ck_assert_uint_eq(e->id, 27);
        ck_assert_uint_eq(e->parent_id, 1);
        ck_assert(e->dev == makedev(254, 0));
        ck_assert_str_eq(e->root, "/");
        ck_assert_str_eq(e->fstype, "ext4");
        ck_assert_str_eq(e->source, "/dev/vda");
        ck_assert_str_eq(e->mount_options, "rw,relatime");
        ck_assert_str_eq(e->super_options, "rw,discard,resv_strict,resuid=65534,resgid=65534");
        ck_assert(!e->read_only && !e->nosuid);
        ck_assert_int_eq(e->prune, MOUNT_PRUNE_NONE);

        ck_assert_int_eq(prune_of("/proc"), MOUNT_PRUNE_PSEUDO);
        ck_assert_int_eq(prune_of("/sys"), MOUNT_PRUNE_PSEUDO);
        ck_assert_int_eq(prune_of("/dev"), MOUNT_PRUNE_PSEUDO);
        ck_assert_int_eq(prune_of("/dev/pts"), MOUNT_PRUNE_PSEUDO);
        ck_assert_int_eq(prune_of("/sys/fs/cgroup/cpu"), MOUNT_PRUNE_PSEUDO);
        ck_assert_int_eq(prune_of("/sys/fs/cgroup/unified"), MOUNT_PRUNE_PSEUDO);
        /* Real filesystems that happen to live under pruned ones: the walk never gets there anyway. */
        ck_assert_int_eq(prune_of("/sys/fs/cgroup"), MOUNT_PRUNE_NONE);
        ck_assert_int_eq(prune_of("/dev/shm"), MOUNT_PRUNE_NONE);

        e = at("/mnt/sandboxing/model_tools_env/v1/python");
        ck_assert(e->read_only && e->nosuid);
        ck_assert_int_eq(e->prune, MOUNT_PRUNE_RO_NOSUID);

        /* A bind mount of the root filesystem onto itself: same device, its own root. */
        e = at("/run/netns");
        ck_assert_str_eq(e->root, "/run/netns");
        ck_assert(e->dev == makedev(254, 0));
        ck_assert_int_eq(e->prune, MOUNT_PRUNE_NONE);
}
END_TEST

START_TEST(test_debian_host)
{
        const MountInfoEntry *e;

        ck_assert_int_eq(parse_file("debian-host.txt"), 0);
        ck_assert_uint_eq(m.n, 28);

        ck_assert_int_eq(prune_of("/"), MOUNT_PRUNE_NONE);
        ck_assert_int_eq(prune_of("/boot"), MOUNT_PRUNE_NONE);
        ck_assert_int_eq(prune_of("/tmp"), MOUNT_PRUNE_NONE);
        ck_assert_int_eq(prune_of("/run"), MOUNT_PRUNE_NONE);
        ck_assert_int_eq(prune_of("/sys/fs/cgroup"), MOUNT_PRUNE_PSEUDO);
        ck_assert_int_eq(prune_of("/sys/kernel/security"), MOUNT_PRUNE_PSEUDO);
        ck_assert_int_eq(prune_of("/sys/fs/bpf"), MOUNT_PRUNE_PSEUDO);
        ck_assert_int_eq(prune_of("/dev/mqueue"), MOUNT_PRUNE_PSEUDO);
        ck_assert_int_eq(prune_of("/dev/hugepages"), MOUNT_PRUNE_PSEUDO);
        ck_assert_int_eq(prune_of("/run/netns/ci"), MOUNT_PRUNE_PSEUDO);
        ck_assert_str_eq(at("/run/netns/ci")->root, "net:[4026532281]");
        /* The automount point and what it mounts, stacked at one path: both pseudo. */
        ck_assert_str_eq(m.entries[12].fstype, "autofs");
        ck_assert_int_eq(m.entries[12].prune, MOUNT_PRUNE_PSEUDO);
        ck_assert_int_eq(prune_of("/proc/sys/fs/binfmt_misc"), MOUNT_PRUNE_PSEUDO);

        /* Read-only but not nosuid: its setuid programs run, so it is walked. */
        e = at("/snap/core22/1380");
        ck_assert(e->read_only && !e->nosuid);
        ck_assert_int_eq(e->prune, MOUNT_PRUNE_NONE);

        /* Read-only nosuid, but a writable tmpfs is mounted below it: the walk must pass through. */
        e = at("/srv/view");
        ck_assert(e->read_only && e->nosuid);
        ck_assert_str_eq(e->root, "/srv/export");
        ck_assert_int_eq(e->prune, MOUNT_PRUNE_NONE);
        ck_assert_int_eq(prune_of("/srv/view/scratch"), MOUNT_PRUNE_NONE);

        /* A read-only nosuid bind mount with nothing below it, with an escaped space. */
        e = at("/opt/read only");
        ck_assert_str_eq(e->root, "/opt/tools");
        ck_assert_int_eq(e->prune, MOUNT_PRUNE_RO_NOSUID);
}
END_TEST

START_TEST(test_read_live)
{
        bool root = false;

        mountinfo_done(&m);
        ck_assert_int_eq(mountinfo_read(&m), 0);
        ck_assert_uint_gt(m.n, 0);
        ck_assert_int_eq(mountinfo_prune_decide(&m), 0);
        for (size_t i = 0; i < m.n; i++) {
                ck_assert(m.entries[i].mount_point[0] == '/');
                if (strcmp(m.entries[i].mount_point, "/") == 0)
                        root = true;
                if (strcmp(m.entries[i].fstype, "proc") == 0)
                        ck_assert_int_eq(m.entries[i].prune, MOUNT_PRUNE_PSEUDO);
        }
        ck_assert(root);
}
END_TEST

/* ---- Crafted ---- */

/* clang-format 14 and 19 lay out this macro differently: kept as written. */
/* clang-format off */
#define LINE(id, parent, dev, root, mnt, opts, fstype, super)                                               \
#id " " #parent " " dev " " root " " mnt " " opts " - " fstype " src " super "\n"
/* clang-format on */
#define ROOTFS LINE(1, 0, "8:1", "/", "/", "rw,relatime", "ext4", "rw")

START_TEST(test_escapes)
{
        const MountInfoEntry *e;

        ck_assert_int_eq(parse(ROOTFS "2 1 8:1 /a\\134b /mnt/with\\040space\\011tab\\012nl\\134 rw shared:1 "
                                      "master:2 - fuse.my\\040fs my\\040source rw,user_id=0\n"),
                         0);
        ck_assert_uint_eq(m.n, 2);
        e = &m.entries[1];
        ck_assert_str_eq(e->mount_point, "/mnt/with space\ttab\nnl\\");
        ck_assert_str_eq(e->root, "/a\\b");
        ck_assert_str_eq(e->fstype, "fuse.my fs");
        ck_assert_str_eq(e->source, "my source");
        ck_assert_str_eq(e->super_options, "rw,user_id=0");
}
END_TEST

START_TEST(test_bad_escapes)
{
        static const char *const bad[] = {
                "/mnt/a\\04", "/mnt/a\\", "/mnt/a\\08x", "/mnt/a\\000", "/mnt/a\\400", "/mnt/a\\x41",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char text[256];

                (void)snprintf(text, sizeof(text), "2 1 8:1 / %s rw - ext4 src rw\n", bad[i]);
                ck_assert_msg(parse(text) == -EINVAL, "accepted %s", bad[i]);
        }
}
END_TEST

START_TEST(test_malformed)
{
        static const char *const bad[] = {
                "2 1 8:1 / /mnt rw ext4 src rw\n",             /* no separator */
                "2 1 8:1 / /mnt rw - ext4 src\n",              /* too few after it */
                "2 1 8:1 / /mnt rw - ext4 src rw extra\n",     /* too many */
                "x 1 8:1 / /mnt rw - ext4 src rw\n",           /* id */
                "2 1 81 / /mnt rw - ext4 src rw\n",            /* no colon */
                "2 1 8:x / /mnt rw - ext4 src rw\n",           /* minor */
                "2 1 8:1 / mnt rw - ext4 src rw\n",            /* relative */
                "2 1 8:1 /  /mnt rw - ext4 src rw\n",          /* empty field */
                "2 1 8:1 / /mnt rw -  src rw\n",               /* empty fstype */
                "2 1 8:1 / /mnt - ext4 src rw\n",              /* no options */
                "\n",                                          /* empty line */
                "2 1 99999999999:1 / /mnt rw - ext4 src rw\n", /* major too large */
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(parse(bad[i]) == -EINVAL, "accepted %s", bad[i]);

        /* A NUL inside. */
        mountinfo_done(&m);
        ck_assert_int_eq(mountinfo_parse("1 0 8:1 / / rw - ext4 s\0 rw\n", 27, &m), -EINVAL);
}
END_TEST

START_TEST(test_lenient_where_the_kernel_is)
{
        /* No final newline, an empty source (a device name of ""), nothing at all. */
        ck_assert_int_eq(parse("1 0 8:1 / / rw - ext4 src rw"), 0);
        ck_assert_uint_eq(m.n, 1);
        ck_assert_int_eq(parse("1 0 0:40 / /x rw - tmpfs  rw\n"), 0);
        ck_assert_str_eq(m.entries[0].source, "");
        ck_assert_int_eq(parse(""), 0);
        ck_assert_uint_eq(m.n, 0);
        ck_assert_int_eq(mountinfo_prune_decide(&m), 0);
}
END_TEST

START_TEST(test_bounds)
{
        _cleanup_free_ char *big = malloc(MOUNTINFO_SIZE_MAX + 2);

        ck_assert_ptr_nonnull(big);
        memset(big, 'x', MOUNTINFO_SIZE_MAX + 1);
        big[MOUNTINFO_SIZE_MAX + 1] = '\0';
        mountinfo_done(&m);
        ck_assert_int_eq(mountinfo_parse(big, MOUNTINFO_SIZE_MAX + 1, &m), -EFBIG);
}
END_TEST

START_TEST(test_nested_writable)
{
        ck_assert_int_eq(
                parse(ROOTFS LINE(2, 1, "0:40", "/", "/srv", "ro,nosuid", "tmpfs", "ro")
                              LINE(3, 2, "0:41", "/", "/srv/data/deep", "rw,nosuid", "tmpfs", "rw")
                                      LINE(4, 1, "0:42", "/", "/opt", "ro,nosuid,nodev", "ext4", "rw")
                                              LINE(5, 4, "0:43", "/", "/opt/sub", "ro,nosuid", "xfs", "ro")),
                0);
        ck_assert_int_eq(mountinfo_prune_decide(&m), 0);
        ck_assert_int_eq(prune_of("/"), MOUNT_PRUNE_NONE);
        ck_assert_int_eq(prune_of("/srv"), MOUNT_PRUNE_NONE);
        ck_assert_int_eq(prune_of("/srv/data/deep"), MOUNT_PRUNE_NONE);
        ck_assert_int_eq(prune_of("/opt"), MOUNT_PRUNE_RO_NOSUID);
        ck_assert_int_eq(prune_of("/opt/sub"), MOUNT_PRUNE_RO_NOSUID);
}
END_TEST

START_TEST(test_pseudo_below_does_not_keep)
{
        /* A proc mounted below a read-only nosuid tree is pruned itself, so it does not need the walk to
         * pass through. */
        ck_assert_int_eq(parse(ROOTFS LINE(2, 1, "0:40", "/", "/chroot", "ro,nosuid", "ext4", "rw")
                                       LINE(3, 2, "0:21", "/", "/chroot/proc", "rw", "proc", "rw")),
                         0);
        ck_assert_int_eq(mountinfo_prune_decide(&m), 0);
        ck_assert_int_eq(prune_of("/chroot"), MOUNT_PRUNE_RO_NOSUID);
        ck_assert_int_eq(prune_of("/chroot/proc"), MOUNT_PRUNE_PSEUDO);
}
END_TEST

START_TEST(test_stacked_and_prefix)
{
        /* /x read-only nosuid, then a writable mount on top of it at the same path: kept. /data is not
         * above /data2 (a prefix of the string, not of the path): pruned. */
        ck_assert_int_eq(parse(ROOTFS LINE(2, 1, "0:40", "/", "/x", "ro,nosuid", "tmpfs",
                                           "ro") LINE(3, 2, "0:41", "/", "/x", "rw", "tmpfs", "rw")
                                       LINE(4, 1, "0:42", "/", "/data", "ro,nosuid", "ext4", "ro")
                                               LINE(5, 1, "0:43", "/", "/data2", "rw", "ext4", "rw")),
                         0);
        ck_assert_int_eq(mountinfo_prune_decide(&m), 0);
        ck_assert_int_eq(m.entries[1].prune, MOUNT_PRUNE_NONE);
        ck_assert_int_eq(m.entries[2].prune, MOUNT_PRUNE_NONE);
        ck_assert_int_eq(prune_of("/data"), MOUNT_PRUNE_RO_NOSUID);
        ck_assert_int_eq(prune_of("/data2"), MOUNT_PRUNE_NONE);
}
END_TEST

START_TEST(test_bind_mounts)
{
        /* Bind mounts of the root filesystem: read-only nosuid by per-mount options (the filesystem
         * itself is writable elsewhere, and is walked there); one read-only by its super options only. */
        ck_assert_int_eq(parse(ROOTFS LINE(2, 1, "8:1", "/var/lib/app", "/srv/app", "ro,nosuid,relatime",
                                           "ext4", "rw") LINE(3, 1, "8:2", "/", "/media", "rw,nosuid",
                                                              "vfat", "ro,fmask=0022")
                                       LINE(4, 1, "8:1", "/home", "/home", "rw,nosuid", "ext4", "rw")),
                         0);
        ck_assert_int_eq(mountinfo_prune_decide(&m), 0);
        ck_assert_str_eq(at("/srv/app")->root, "/var/lib/app");
        ck_assert_int_eq(prune_of("/srv/app"), MOUNT_PRUNE_RO_NOSUID);
        ck_assert(at("/media")->read_only);
        ck_assert_int_eq(prune_of("/media"), MOUNT_PRUNE_RO_NOSUID);
        ck_assert_int_eq(prune_of("/home"), MOUNT_PRUNE_NONE);
        ck_assert_int_eq(prune_of("/"), MOUNT_PRUNE_NONE);
}
END_TEST

START_TEST(test_options_are_whole_words)
{
        /* "rootcontext=..." is not "ro"; "nosuidx" is not "nosuid". */
        ck_assert_int_eq(parse("2 1 0:40 / /m rw,nosuidx - tmpfs src rootcontext=x,roo\n"), 0);
        ck_assert(!m.entries[0].read_only && !m.entries[0].nosuid);
        ck_assert_int_eq(parse("2 1 0:40 / /m nodev,nosuid - tmpfs src size=1k,ro\n"), 0);
        ck_assert(m.entries[0].read_only && m.entries[0].nosuid);
}
END_TEST

START_TEST(test_pseudo_names)
{
        ck_assert(mountinfo_fstype_pseudo("proc"));
        ck_assert(mountinfo_fstype_pseudo("sysfs"));
        ck_assert(mountinfo_fstype_pseudo("cgroup2"));
        ck_assert(mountinfo_fstype_pseudo("devtmpfs"));
        ck_assert(mountinfo_fstype_pseudo("autofs"));
        ck_assert(!mountinfo_fstype_pseudo("tmpfs"));
        ck_assert(!mountinfo_fstype_pseudo("ext4"));
        ck_assert(!mountinfo_fstype_pseudo("procfs"));
        ck_assert(!mountinfo_fstype_pseudo("fuse.sshfs"));
        ck_assert_str_eq(mount_prune_to_string(MOUNT_PRUNE_PSEUDO), "pseudo");
        ck_assert_str_eq(mount_prune_to_string(MOUNT_PRUNE_RO_NOSUID), "ro,nosuid");
        ck_assert_str_eq(mount_prune_to_string(MOUNT_PRUNE_NONE), "none");
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("mountinfo");
        TCase *tc = tcase_create("mountinfo");

        tcase_add_checked_fixture(tc, NULL, teardown);
        tcase_add_test(tc, test_dev_vm);
        tcase_add_test(tc, test_debian_host);
        tcase_add_test(tc, test_read_live);
        tcase_add_test(tc, test_escapes);
        tcase_add_test(tc, test_bad_escapes);
        tcase_add_test(tc, test_malformed);
        tcase_add_test(tc, test_lenient_where_the_kernel_is);
        tcase_add_test(tc, test_bounds);
        tcase_add_test(tc, test_nested_writable);
        tcase_add_test(tc, test_pseudo_below_does_not_keep);
        tcase_add_test(tc, test_stacked_and_prefix);
        tcase_add_test(tc, test_bind_mounts);
        tcase_add_test(tc, test_options_are_whole_words);
        tcase_add_test(tc, test_pseudo_names);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return check_run(suite());
}
