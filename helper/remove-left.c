/* SPDX-License-Identifier: MIT */
/* kill-user's last stage: what the sandbox uid left where every user may write, removed once none of its
 * processes lives. Files on a tmpfs (/dev/shm above all, and /tmp where it is one) and IPC objects hold
 * memory with no process to end: a step's 1.5 GiB in /dev/shm outlived the step and the OOM killer then
 * took the runner. The removal runs in a child that is the sandbox uid and nothing more (no capability,
 * no group but its own), so it can remove nothing the sandbox could not remove itself; the directories
 * are fixed here, only their entries the uid owns are touched, and no link is followed (remove_tree_at()).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helper.h"
#include "macro.h"
#include "remove-tree.h"

/* The child gets this long (a tree of 100,000 files takes a few seconds), then root kills it. */
#define REMOVE_WAIT_MS (60 * 1000)
/* At most this many lines of each /proc/sysvipc table are read. */
#define IPC_LINES_MAX 65536

static const char *const shared_dirs[] = { "/dev/shm", "/dev/mqueue", "/tmp", "/var/tmp" };

/* What the child reports through its pipe. */
typedef struct RemoveReport {
        unsigned long removed, ipc_removed, failed;
        char first_failure[256];
} RemoveReport;

static void remove_in_dir(const char *path, uid_t uid, RemoveReport *rep)
{
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d;

        if (fd < 0)
                return; /* not there (no /dev/mqueue), or not a directory: nothing of the uid's */
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return;
        }
        for (struct dirent *de; (de = readdir(d));) {
                struct stat st;
                int r;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_uid != uid)
                        continue;
                r = remove_tree_at(fd, de->d_name);
                if (r == 0) {
                        rep->removed++;
                        continue;
                }
                if (rep->failed++ == 0)
                        (void)snprintf(rep->first_failure, sizeof(rep->first_failure), "%s/%.128s: %s", path,
                                       de->d_name, strerror(-r));
        }
        closedir(d);
}

/* The IPC objects of one /proc/sysvipc table that uid owns, removed (IPC_RMID, which their owner may do).
 * The columns are found by the table's header: "shmid", "msqid" or "semid", and "uid". */
static void remove_ipc(const char *table, const char *id_name, int (*rmid)(int), uid_t uid,
                       RemoveReport *rep)
{
        char path[64], *line = NULL;
        size_t cap = 0;
        int id_col = -1, uid_col = -1;
        FILE *f;

        (void)snprintf(path, sizeof(path), "/proc/sysvipc/%s", table);
        f = fopen(path, "re");
        if (!f)
                return;
        for (unsigned n = 0; n < IPC_LINES_MAX && getline(&line, &cap, f) > 0; n++) {
                long id = -1;
                unsigned long owner = (unsigned long)-1;
                char *save = NULL;
                int col = 0;

                for (char *w = strtok_r(line, " \t\n", &save); w;
                     w = strtok_r(NULL, " \t\n", &save), col++) {
                        if (n == 0) {
                                id_col = strcmp(w, id_name) == 0 ? col : id_col;
                                uid_col = strcmp(w, "uid") == 0 ? col : uid_col;
                        } else if (col == id_col)
                                id = strtol(w, NULL, 10);
                        else if (col == uid_col)
                                owner = strtoul(w, NULL, 10);
                }
                if (n == 0 && (id_col < 0 || uid_col < 0))
                        break;
                if (n == 0 || id < 0 || owner != (unsigned long)uid)
                        continue;
                if (rmid((int)id) == 0)
                        rep->ipc_removed++;
                else if (errno != EINVAL && errno != EIDRM && rep->failed++ == 0)
                        (void)snprintf(rep->first_failure, sizeof(rep->first_failure), "%s %ld: %s", table,
                                       id, strerror(errno));
        }
        free(line);
        fclose(f);
}

static int shm_rmid(int id)
{
        return shmctl(id, IPC_RMID, NULL);
}

static int msg_rmid(int id)
{
        return msgctl(id, IPC_RMID, NULL);
}

static int sem_rmid(int id)
{
        return semctl(id, 0, IPC_RMID);
}

static void child_remove(uid_t uid, gid_t gid, int out)
{
        RemoveReport rep = {};

        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || setgroups(0, NULL) < 0 ||
            setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
                _exit(1);
        for (size_t i = 0; i < ELEMENTSOF(shared_dirs); i++)
                remove_in_dir(shared_dirs[i], uid, &rep);
        remove_ipc("shm", "shmid", shm_rmid, uid, &rep);
        remove_ipc("msg", "msqid", msg_rmid, uid, &rep);
        remove_ipc("sem", "semid", sem_rmid, uid, &rep);
        _exit(write(out, &rep, sizeof(rep)) == (ssize_t)sizeof(rep) ? 0 : 1);
}

int remove_left(uid_t uid, gid_t gid, unsigned long *ret_removed, char *failure, size_t size)
{
        RemoveReport rep = {};
        int pidfd = -1, fds[2], status = 0, r = 0;
        struct clone_args args = { .flags = CLONE_PIDFD,
                                   .pidfd = (uint64_t)(uintptr_t)&pidfd,
                                   .exit_signal = SIGCHLD };
        struct pollfd p;
        ssize_t n;
        pid_t pid;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
        if (pid < 0) {
                r = -errno;
                close(fds[0]);
                close(fds[1]);
                return r;
        }
        if (pid == 0) {
                close(fds[0]);
                child_remove(uid, gid, fds[1]);
        }
        close(fds[1]);
        p = (struct pollfd){ .fd = pidfd, .events = POLLIN };
        if (poll(&p, 1, REMOVE_WAIT_MS) <= 0) {
                (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
                r = -ETIME;
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        r = r < 0 ? r : -errno;
                        break;
                }
        close(pidfd);
        n = r < 0 ? -1 : read(fds[0], &rep, sizeof(rep));
        close(fds[0]);
        if (r < 0)
                return r;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n != (ssize_t)sizeof(rep))
                return -EPROTO;
        rep.first_failure[sizeof(rep.first_failure) - 1] = '\0';
        *ret_removed = rep.removed + rep.ipc_removed;
        if (rep.failed > 0) {
                (void)snprintf(failure, size, "%lu not removed (%s)", rep.failed, rep.first_failure);
                return -ENOTEMPTY;
        }
        return 0;
}
