/* SPDX-License-Identifier: MIT */
/* mountinfo_parse() on arbitrary bytes, then mountinfo_prune_decide(). On success every entry's
 * invariants are checked (an absolute mount point with no escape left undecoded, an fstype, a pruning
 * that agrees with the flags and the type); on failure, only the documented errors. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mountinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                                            \
        do {                                                                                                \
                if (!(x))                                                                                   \
                        __builtin_trap();                                                                   \
        } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        MountInfo m = { 0 };
        int r;

        r = mountinfo_parse((const char *)data, size, &m);
        if (r < 0) {
                CHECK(r == -EINVAL || r == -ENOMEM || r == -EFBIG);
                CHECK(m.n == 0 && m.entries == NULL);
                return 0;
        }
        CHECK(mountinfo_prune_decide(&m) == 0);
        for (size_t i = 0; i < m.n; i++) {
                const MountInfoEntry *e = &m.entries[i];

                CHECK(e->mount_point[0] == '/');
                CHECK(e->root[0] != '\0' && e->fstype[0] != '\0');
                /* The option lists are kept as reported: a space or a newline there would have split them.
                 */
                CHECK(!strchr(e->mount_options, ' ') && !strchr(e->super_options, ' '));
                CHECK(!strchr(e->mount_options, '\n') && !strchr(e->super_options, '\n'));
                switch (e->prune) {
                case MOUNT_PRUNE_PSEUDO:
                        CHECK(mountinfo_fstype_pseudo(e->fstype));
                        break;
                case MOUNT_PRUNE_RO_NOSUID:
                        CHECK(e->read_only && e->nosuid && !mountinfo_fstype_pseudo(e->fstype));
                        /* No writable, walked mount at or below it. */
                        for (size_t j = 0; j < m.n; j++) {
                                const MountInfoEntry *f = &m.entries[j];
                                size_t len = strlen(e->mount_point);

                                if (f->read_only || f->prune == MOUNT_PRUNE_PSEUDO)
                                        continue;
                                CHECK(!(strncmp(f->mount_point, e->mount_point, len) == 0 &&
                                        (f->mount_point[len] == '\0' || f->mount_point[len] == '/' ||
                                         strcmp(e->mount_point, "/") == 0)));
                        }
                        break;
                case MOUNT_PRUNE_NONE:
                        CHECK(!mountinfo_fstype_pseudo(e->fstype));
                        break;
                }
        }
        mountinfo_done(&m);
        return 0;
}
