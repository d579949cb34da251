/* SPDX-License-Identifier: MIT */
/* Agent profiles: how run starts a given agent (its command line, environment, files, how it gets the run
 * token), as data installed with the package, one TOML file each (agentic-job-profiles(5)). Both sides of
 * run read the same root-owned file: the runner side to check the call, the sandbox side to start it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config.h" /* profile_name_valid() */
#include "error.h"
#include "toml.h"

#define PROFILE_MAX_SIZE  (64 * 1024)
#define PROFILE_WORDS_MAX 256 /* words of command or login */
#define PROFILE_LIST_MAX  16  /* dirs, token-files, files */

typedef enum ProfileStdin {
        PROFILE_STDIN_NULL, /* /dev/null */
        PROFILE_STDIN_TASK, /* the task file (the CLI reads its prompt there) */
} ProfileStdin;

typedef enum ProfileToken {
        PROFILE_TOKEN_NONE,     /* the run token is refused */
        PROFILE_TOKEN_OPTIONAL, /* taken with --token-stdin */
        PROFILE_TOKEN_REQUIRED, /* --token-stdin is needed */
} ProfileToken;

/* Everything below is as written, before expansion: strings may hold ${VAR} (profile_expand()). */
typedef struct Profile {
        char *name;
        char *description;
        char **command;     /* the agent's first words; empty: the caller's command line is the agent */
        char **login;       /* run once with the token on standard input before the probes; NULL if none */
        char **dirs;        /* made mode 0700 before anything else */
        char **token_files; /* files the CLI writes holding the token (besides ${TOKEN_FILE}) */
        char **env;         /* "NAME=VALUE" */
        ProfileStdin stdin_from;
        ProfileToken token;
        /* [api]: the model API the agent talks to, for run's key broker; NULL base: none declared */
        char *api_base;   /* "https://api.anthropic.com": an https origin, no path */
        char *api_header; /* "x-api-key" or "authorization" (then "Bearer KEY") */
        char **api_paths; /* the API's path prefixes, each "/..." */
        TomlValue *root;  /* owns the [json] tables */
        const TomlValue
                *json; /* [json]: each key a file name in ${PROFILE_DIR}, each value a table; or NULL */
} Profile;

/* The places a profile's strings may name: ${HOME}, ${TMPDIR}, ${WORKSPACE}, ${TASK}, ${TOKEN_FILE},
 * ${PROFILE_DIR}, and ${API_URL}, where the agent reaches the profile's API (the broker's address when
 * the broker holds the key, else [api] base; only in a profile with [api]). */
typedef struct ProfileVars {
        const char *home, *tmpdir, *workspace, *task, *token_file, *profile_dir, *api_url;
} ProfileVars;

/* Parses a profile; every string's variables are checked. -EINVAL (or -ENOMEM) with "LINE:COLUMN: KEY:
 * message" in *reterr. */
int profile_parse(const char *name, const char *data, size_t size, Profile **ret, AjError *reterr);

/* dir/NAME.toml, which must be root's alone on its whole path (trusted_path_check()), read without
 * following a link; NULL dir: the installed PROFILE_DIR. */
int profile_load(const char *dir, const char *name, Profile **ret, AjError *reterr);

void profile_free(Profile *p);
static inline void profile_freep(Profile **p)
{
        profile_free(*p);
}

/* Replaces each ${VAR} in s; a "$" not followed by "{" stays. -EINVAL: an unknown or unterminated
 * variable; -EDOM: a value holding a byte other than [A-Za-z0-9._/:-] (a profile puts them into JSON and
 * shell command lines: nothing there needs quoting). */
int profile_expand(const char *s, const ProfileVars *v, char **ret);

/* The [json] entry i: its file name (expanded, one plain component) and its text (JSON, every string
 * expanded). */
size_t profile_json_count(const Profile *p);
int profile_json_render(const Profile *p, size_t i, const ProfileVars *v, char **ret_name, char **ret_text);

/* "none", "optional", "required" */
const char *profile_token_name(ProfileToken t);
