/* SPDX-License-Identifier: MIT */
/* `agentic-job sandbox setup`: what the preflight learns about the machine and the stages act on. The
 * preflight (setup-preflight.c) refuses before the first change; each stage (setup-*.c) changes one
 * thing, printing every change, or in a dry run only what it would change. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "strv.h"
#include "subid.h"

#define SETUP_STATE_DIR "/etc/agentic-job"
/* Every program setup runs is found here, and each of these directories is made root's alone. */
#define SETUP_ROOT_PATH  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define SETUP_HELPER_MAX (64 * 1024 * 1024)

typedef struct SetupTools {
        char *useradd, *usermod, *gpasswd, *visudo, *nft, *sudo, *runuser, *passwd;
        char *systemctl, *loginctl; /* where systemd runs */
        char *dpkg_query, *rpm;     /* at least one */
        char *apparmor_parser;      /* where AppArmor restricts user namespaces */
} SetupTools;

typedef struct Setup {
        /* What the caller gave. */
        const char *config_path;
        char *config_text; /* the file's bytes, installed as they are */
        size_t config_size;
        Config *config;
        const char *helper_source; /* --helper, or NULL: the helper is already at HELPER_PATH */
        bool dry_run;

        /* What the preflight found. */
        bool systemd;
        SetupTools tools;
        char *runner_name, *runner_home;
        uid_t runner_uid;
        gid_t runner_gid;
        bool sandbox_exists; /* an allowed existing user */
        uid_t sandbox_uid;   /* once it exists */
        gid_t sandbox_gid;
        char *sandbox_home;     /* useradd's choice, predicted before it runs */
        char **nameservers;     /* with the proxy */
        char **private_dirs;    /* the configured ones that exist */
        char **services;        /* the configured units that exist */
        char *installed_config; /* what goes to CONFIG_PATH: the file's bytes, with runner-user added
                                 * when it came from SUDO_USER */
        size_t installed_config_size;
        char *helper_data; /* --helper's bytes */
        size_t helper_size;
        bool userns_restricted; /* kernel.apparmor_restrict_unprivileged_userns is 1 */
        char *bwrap_real;       /* then: bubblewrap's path, links resolved, as AppArmor attaches; NULL when
                                   it is not installed */
        char *apparmor_other;   /* then: a file of /etc/apparmor.d that gives bwrap a profile already */
        char *apparmor_profile; /* else: the profile setup writes (apparmor-profile.h) */

        /* What the stages made. */
        UidRange ranges[SUBID_MAX_RANGES];
        size_t n_ranges;
        uid_t proxy_uid;
        Strv setuid_programs; /* the walk's finds: root-owned regular files with setuid, with setgid */
        Strv setgid_programs;
} Setup;

typedef int (*SetupStage)(Setup *s, AjError *reterr);

/* One line for a change: "  TEXT", or in a dry run "would: TEXT". */
void setup_change(const Setup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line that is not a change (a note, a skipped item), in both modes: "  TEXT". */
void setup_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs argv (argv[0] absolute, empty environment); 0 when it exits 0, else -EIO with the first line of
 * its output (standard output and error) in *reterr, prefixed with what. */
int setup_run(char *const *argv, const char *what, AjError *reterr);

/* Whether systemd knows unit (systemctl show's LoadState is not "not-found"): 1 or 0, or -EIO when
 * systemctl failed. Where systemd runs only. */
int setup_unit_exists(const Setup *s, const char *unit);

/* Writes a root-owned file through root_file_write(), or in a dry run says it would. setup_write_file_in()
 * also trusts dir_owner with the file's directory (root_file_write_in()). */
int setup_write_file_in(const Setup *s, const char *path, uid_t dir_owner, const void *data, size_t size,
                        mode_t mode, uid_t uid, gid_t gid, char *const *validator, const char *why,
                        AjError *reterr);
int setup_write_file(const Setup *s, const char *path, const void *data, size_t size, mode_t mode, uid_t uid,
                     gid_t gid, char *const *validator, const char *why, AjError *reterr);

/* What the sandbox user owns, or its group may write, in the trees root runs (HARDEN_WALK_ROOT_TREES)
 * outside its home: a count, and the first path with control characters as '?'. */
typedef struct OwnedTally {
        const char *home; /* the sandbox home, not counted; NULL: none known */
        uint64_t found;
        char first[512];
} OwnedTally;
void owned_tally_add(OwnedTally *t, const char *path);

int setup_preflight(Setup *s, AjError *reterr);
/* An existing sandbox user (allow-existing-user) that owns a file or directory in the trees root runs or
 * trusts (HARDEN_WALK_ROOT_TREES), or whose group may write one, outside its home, is refused: it could
 * rewrite what root runs. 0, or -EPERM with the first such path and the count in reterr. */
int preflight_sandbox_owns_nothing(const Setup *s, AjError *reterr);
void setup_done(Setup *s);

/* The stages, in the order they run (setup.c holds the table). */
int stage_state_dir(Setup *s, AjError *reterr);
int stage_sandbox_user(Setup *s, AjError *reterr);
int stage_environment(Setup *s, AjError *reterr);
int stage_close_homes(Setup *s, AjError *reterr);
int stage_stop_services(Setup *s, AjError *reterr);
int stage_helper(Setup *s, AjError *reterr);
int stage_deny(Setup *s, AjError *reterr);
int stage_budget(Setup *s, AjError *reterr);
int stage_apparmor(Setup *s, AjError *reterr);
int stage_egress_proxy(Setup *s, AjError *reterr);
int stage_network_rules(Setup *s, AjError *reterr);
int stage_walk(Setup *s, AjError *reterr);
int stage_setuid_owners(Setup *s, AjError *reterr);
int stage_ptrace(Setup *s, AjError *reterr);
int stage_config(Setup *s, AjError *reterr);
int stage_lock(Setup *s, AjError *reterr);

/* The sudo rule and the polkit rule: the sandbox user denied, and with lock the runner too. */
int setup_write_rules(Setup *s, bool lock, AjError *reterr);

/* Shared between the preflight and the stages. */
uid_t polkit_rules_dir_owner(void); /* polkitd's uid where it owns the rules directory, else (uid_t)-1 */
int roots_alone_check(AjError *reterr);
int sudoers_d_check(AjError *reterr);
int deny_lists_check(const char *user, AjError *reterr);
/* The preflight's part of the AppArmor stage: what stage_apparmor() writes, or why it cannot. */
int check_apparmor(Setup *s, AjError *reterr);
