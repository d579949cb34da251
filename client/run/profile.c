/* SPDX-License-Identifier: MIT */
#include "profile.h"

#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build-config.h"
#include "config.h"
#include "macro.h"
#include "read-file.h"
#include "strv.h"
#include "trusted-path.h"

const char *profile_token_name(ProfileToken t)
{
        return t == PROFILE_TOKEN_REQUIRED ? "required" : t == PROFILE_TOKEN_OPTIONAL ? "optional" : "none";
}

void profile_free(Profile *p)
{
        if (!p)
                return;
        free(p->name);
        free(p->description);
        strv_free(p->command);
        strv_free(p->login);
        strv_free(p->dirs);
        strv_free(p->token_files);
        strv_free(p->env);
        free(p->api_base);
        free(p->api_header);
        strv_free(p->api_paths);
        toml_free(p->root);
        free(p);
}

static bool value_plain(const char *s)
{
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      *s == '.' || *s == '_' || *s == '/' || *s == '-' || *s == ':'))
                        return false;
        return true;
}

int profile_expand(const char *s, const ProfileVars *v, char **ret)
{
        const struct {
                const char *name, *value;
        } vars[] = {
                { "HOME", v->home },
                { "TMPDIR", v->tmpdir },
                { "WORKSPACE", v->workspace },
                { "TASK", v->task },
                { "TOKEN_FILE", v->token_file },
                { "PROFILE_DIR", v->profile_dir },
                { "API_URL", v->api_url },
        };
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return -ENOMEM;
        while (*s) {
                const char *end;
                size_t k;

                if (s[0] != '$' || s[1] != '{') {
                        fputc(*s++, f);
                        continue;
                }
                end = strchr(s + 2, '}');
                for (k = 0; end && k < ELEMENTSOF(vars); k++)
                        if (strlen(vars[k].name) == (size_t)(end - s - 2) &&
                            strncmp(s + 2, vars[k].name, (size_t)(end - s - 2)) == 0)
                                break;
                if (!end || k == ELEMENTSOF(vars) || !vars[k].value) {
                        fclose(f);
                        return -EINVAL;
                }
                if (!value_plain(vars[k].value)) {
                        fclose(f);
                        return -EDOM;
                }
                fputs(vars[k].value, f);
                s = end + 1;
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* ---- parsing ---- */

/* What a message may quote: escaped as in a basic string, at most 64 bytes. */
#define QUOTE(s) toml_escape((s), (char[64]){ 0 }, 64)

static const ProfileVars check_vars = {
        .home = "/h",
        .tmpdir = "/t",
        .workspace = "/w",
        .task = "/k",
        .token_file = "/f",
        .profile_dir = "/p",
        .api_url = "http://a",
};

static _printf_(4, 5) int at(AjError *e, const TomlValue *v, const char *key, const char *fmt, ...)
{
        char msg[256];
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        return aj_error(e, EINVAL, toml_line(v), toml_column(v), "%s: %s", key, msg);
}

static int check_string(AjError *e, const TomlValue *v, const char *key)
{
        _cleanup_free_ char *x = NULL;
        const char *s;
        int r;

        if (toml_type(v) != TOML_STRING)
                return at(e, v, key, "expected a string, found %s", toml_type_description(toml_type(v)));
        s = toml_string(v);
        if (strpbrk(s, "\n\r"))
                return at(e, v, key, "a string holds a line break");
        r = profile_expand(s, &check_vars, &x);
        if (r == -ENOMEM)
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        if (r < 0) {
                char q[80];
                return at(e, v, key,
                          "\"%s\" names a variable other than ${HOME}, ${TMPDIR}, ${WORKSPACE}, ${TASK}, "
                          "${TOKEN_FILE}, ${PROFILE_DIR}",
                          toml_escape(s, q, sizeof(q)));
        }
        return 0;
}

static int parse_words(AjError *e, const TomlValue *v, const char *key, bool absolute, char ***ret)
{
        _cleanup_strv_free_ char **words = NULL;
        size_t n;

        if (toml_type(v) != TOML_ARRAY)
                return at(e, v, key, "expected an array of strings, found %s",
                          toml_type_description(toml_type(v)));
        n = toml_array_length(v);
        if (n > PROFILE_WORDS_MAX)
                return at(e, v, key, "more than %d words", PROFILE_WORDS_MAX);
        words = calloc(n + 1, sizeof(char *));
        if (!words)
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        for (size_t i = 0; i < n; i++) {
                const TomlValue *item = toml_array_get(v, i);
                int r = check_string(e, item, key);

                if (r < 0)
                        return r;
                if (absolute && toml_string(item)[0] != '/' && strncmp(toml_string(item), "${", 2) != 0)
                        return at(e, item, key, "\"%s\" is not an absolute path (or one in ${...})",
                                  QUOTE(toml_string(item)));
                words[i] = strdup(toml_string(item));
                if (!words[i])
                        return aj_error(e, ENOMEM, 0, 0, "out of memory");
        }
        *ret = TAKE_PTR(words);
        return 0;
}

static int parse_env(AjError *e, const TomlValue *v, char ***ret)
{
        _cleanup_strv_free_ char **env = NULL;
        size_t n;

        if (toml_type(v) != TOML_TABLE)
                return at(e, v, "env", "expected a table, found %s", toml_type_description(toml_type(v)));
        n = toml_table_length(v);
        env = calloc(n + 1, sizeof(char *));
        if (!env)
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        for (size_t i = 0; i < n; i++) {
                const char *name = toml_table_key(v, i);
                const TomlValue *val = toml_table_value(v, i);
                int r;

                if (!env_name_valid(name) || env_name_is_job_command_file(name))
                        return aj_error(e, EINVAL, toml_table_key_line(v, i), toml_table_key_column(v, i),
                                        "env: \"%s\" is not a name a profile may set", QUOTE(name));
                r = check_string(e, val, "env");
                if (r < 0)
                        return r;
                if (asprintf(&env[i], "%s=%s", name, toml_string(val)) < 0) {
                        env[i] = NULL;
                        return aj_error(e, ENOMEM, 0, 0, "out of memory");
                }
        }
        *ret = TAKE_PTR(env);
        return 0;
}

/* Every string anywhere in a [json] value is checked like the others. */
static int check_json_value(AjError *e, const TomlValue *v, unsigned depth)
{
        size_t n;

        if (depth > TOML_MAX_DEPTH)
                return at(e, v, "json", "nested too deep");
        switch (toml_type(v)) {
        case TOML_STRING:
                return check_string(e, v, "json");
        case TOML_ARRAY:
                n = toml_array_length(v);
                for (size_t i = 0; i < n; i++) {
                        int r = check_json_value(e, toml_array_get(v, i), depth + 1);
                        if (r < 0)
                                return r;
                }
                return 0;
        case TOML_TABLE:
                n = toml_table_length(v);
                for (size_t i = 0; i < n; i++) {
                        int r = check_json_value(e, toml_table_value(v, i), depth + 1);
                        if (r < 0)
                                return r;
                }
                return 0;
        default:
                return 0;
        }
}

static int parse_json(AjError *e, const TomlValue *v)
{
        size_t n;

        if (toml_type(v) != TOML_TABLE)
                return at(e, v, "json", "expected a table, found %s", toml_type_description(toml_type(v)));
        n = toml_table_length(v);
        if (n > PROFILE_LIST_MAX)
                return at(e, v, "json", "more than %d files", PROFILE_LIST_MAX);
        for (size_t i = 0; i < n; i++) {
                const char *name = toml_table_key(v, i);
                const TomlValue *file = toml_table_value(v, i);
                int r;

                if (!path_is_plain_relative(name, false) || strchr(name, '/') || !value_plain(name))
                        return aj_error(e, EINVAL, toml_table_key_line(v, i), toml_table_key_column(v, i),
                                        "json: \"%s\" is not a plain file name", QUOTE(name));
                if (toml_type(file) != TOML_TABLE)
                        return at(e, file, "json", "each file is a table, found %s",
                                  toml_type_description(toml_type(file)));
                r = check_json_value(e, file, 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_choice(AjError *e, const TomlValue *v, const char *key, const char *const *names, size_t n,
                        int *ret)
{
        if (toml_type(v) == TOML_STRING)
                for (size_t i = 0; i < n; i++)
                        if (strcmp(toml_string(v), names[i]) == 0) {
                                *ret = (int)i;
                                return 0;
                        }
        return at(e, v, key, "expected one of %s",
                  strcmp(key, "stdin") == 0 ? "\"null\", \"task\"" : "\"none\", \"optional\", \"required\"");
}

/* [api]: base, header, paths, as run's key broker takes them (broker_settings_check()). */
static int parse_api(AjError *e, const TomlValue *v, Profile *p)
{
        const char *host;

        if (toml_type(v) != TOML_TABLE)
                return at(e, v, "api", "expected a table, found %s", toml_type_description(toml_type(v)));
        for (size_t i = 0; i < toml_table_length(v); i++) {
                const char *key = toml_table_key(v, i);
                const TomlValue *x = toml_table_value(v, i);
                int r;

                if (strcmp(key, "base") == 0 || strcmp(key, "header") == 0) {
                        r = check_string(e, x, key);
                        if (r < 0)
                                return r;
                        if (!(*(strcmp(key, "base") == 0 ? &p->api_base : &p->api_header) =
                                      strdup(toml_string(x))))
                                return aj_error(e, ENOMEM, 0, 0, "out of memory");
                } else if (strcmp(key, "paths") == 0) {
                        r = parse_words(e, x, "api.paths", true, &p->api_paths);
                        if (r < 0)
                                return r;
                } else
                        return aj_error(e, EINVAL, toml_table_key_line(v, i), toml_table_key_column(v, i),
                                        "api: unknown key \"%s\" (there are base, header, paths)",
                                        QUOTE(key));
        }
        if (!p->api_base || !p->api_header || !p->api_paths || !p->api_paths[0])
                return at(e, v, "api", "needs base, header and paths");
        host = p->api_base + (strncmp(p->api_base, "https://", 8) == 0 ? 8 : 0);
        if (host == p->api_base || !*host || strpbrk(host, "/?#@\\$ ") || strchr(p->api_base, '$'))
                return at(e, v, "api.base", "\"%s\" is not an https origin (https://HOST[:PORT], no path)",
                          QUOTE(p->api_base));
        if (strcmp(p->api_header, "x-api-key") != 0 && strcmp(p->api_header, "authorization") != 0)
                return at(e, v, "api.header", "\"%s\": the broker knows x-api-key and authorization",
                          QUOTE(p->api_header));
        for (char **a = p->api_paths; *a; a++)
                if (strstr(*a, "..") || strpbrk(*a, "%\\?#$ "))
                        return at(e, v, "api.paths", "\"%s\" is not a plain path prefix", QUOTE(*a));
        return 0;
}

int profile_parse(const char *name, const char *data, size_t size, Profile **ret, AjError *e)
{
        static const char *const stdin_names[] = { "null", "task" };
        static const char *const token_names[] = { "none", "optional", "required" };
        _cleanup_(profile_freep) Profile *p = NULL;
        const TomlValue *root;
        int r, choice = 0;

        assert(ret);
        if (!profile_name_valid(name))
                return aj_error(e, EINVAL, 0, 0, "\"%s\" is not a profile name ([a-z][a-z0-9-]*)",
                                QUOTE(name));
        p = calloc(1, sizeof(*p));
        if (!p || !(p->name = strdup(name)))
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        r = toml_parse(data, size, &p->root, e);
        if (r < 0)
                return r;
        root = p->root;
        for (size_t i = 0; i < toml_table_length(root); i++) {
                const char *key = toml_table_key(root, i);
                const TomlValue *v = toml_table_value(root, i);

                if (strcmp(key, "description") == 0) {
                        r = check_string(e, v, key);
                        if (r >= 0 && !(p->description = strdup(toml_string(v))))
                                r = aj_error(e, ENOMEM, 0, 0, "out of memory");
                } else if (strcmp(key, "command") == 0)
                        r = parse_words(e, v, key, false, &p->command);
                else if (strcmp(key, "login") == 0)
                        r = parse_words(e, v, key, false, &p->login);
                else if (strcmp(key, "dirs") == 0)
                        r = parse_words(e, v, key, true, &p->dirs);
                else if (strcmp(key, "token-files") == 0)
                        r = parse_words(e, v, key, true, &p->token_files);
                else if (strcmp(key, "env") == 0)
                        r = parse_env(e, v, &p->env);
                else if (strcmp(key, "json") == 0) {
                        r = parse_json(e, v);
                        p->json = v;
                } else if (strcmp(key, "api") == 0)
                        r = parse_api(e, v, p);
                else if (strcmp(key, "stdin") == 0) {
                        r = parse_choice(e, v, key, stdin_names, ELEMENTSOF(stdin_names), &choice);
                        if (r >= 0)
                                p->stdin_from = choice == 1 ? PROFILE_STDIN_TASK : PROFILE_STDIN_NULL;
                } else if (strcmp(key, "token") == 0) {
                        r = parse_choice(e, v, key, token_names, ELEMENTSOF(token_names), &choice);
                        if (r >= 0)
                                p->token = (ProfileToken)choice;
                } else
                        r = aj_error(e, EINVAL, toml_table_key_line(root, i), toml_table_key_column(root, i),
                                     "unknown key \"%s\" (there are description, command, stdin, token, "
                                     "login, dirs, token-files, env, json, api)",
                                     QUOTE(key));
                if (r < 0)
                        return r;
        }
        if (!p->description)
                return aj_error(e, EINVAL, 1, 1, "missing description");
        if (!p->command && !(p->command = calloc(1, sizeof(char *))))
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        if ((p->login || p->token_files) && p->token == PROFILE_TOKEN_NONE)
                return aj_error(e, EINVAL, 1, 1,
                                "login and token-files need token = \"optional\" or "
                                "\"required\"");
        if (p->login && !p->login[0])
                return aj_error(e, EINVAL, 1, 1, "login: an empty command");
        if (strv_length(p->dirs) > PROFILE_LIST_MAX || strv_length(p->token_files) > PROFILE_LIST_MAX ||
            strv_length(p->api_paths) > PROFILE_LIST_MAX)
                return aj_error(e, EINVAL, 1, 1, "more than 16 dirs, token-files or api paths");
        if (p->api_base && p->token == PROFILE_TOKEN_NONE)
                return aj_error(e, EINVAL, 1, 1, "api needs token = \"optional\" or \"required\"");
        /* ${API_URL} has a value only where the profile names its API. */
        for (char **v = p->env; !p->api_base && v && *v; v++)
                if (strstr(*v, "${API_URL}"))
                        return aj_error(e, EINVAL, 1, 1, "env: ${API_URL} needs an [api] table");
        *ret = TAKE_PTR(p);
        return 0;
}

int profile_load(const char *dir, const char *name, Profile **ret, AjError *e)
{
        _cleanup_free_ char *path = NULL, *data = NULL;
        AjError inner = {};
        size_t size = 0;
        int r;

        if (!profile_name_valid(name))
                return aj_error(e, EINVAL, 0, 0, "\"%s\" is not a profile name ([a-z][a-z0-9-]*)",
                                QUOTE(name));
        if (asprintf(&path, "%s/%s.toml", dir ? dir : PROFILE_DIR, name) < 0)
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        r = trusted_path_check(path, &inner);
        if (r == -ENOENT)
                return aj_error(e, ENOENT, 0, 0, "there is no profile \"%s\" (%s)", name, path);
        if (r < 0)
                return aj_error(e, -r, 0, 0, "%s: %s", path, inner.message);
        r = read_file_for_parse(path, PROFILE_MAX_SIZE, &data, &size, e);
        if (r < 0)
                return r;
        r = profile_parse(name, data, size, ret, &inner);
        return r < 0 ? aj_error_in_file(e, r, path, &inner) : 0;
}

/* ---- [json] ---- */

size_t profile_json_count(const Profile *p)
{
        return p->json ? toml_table_length(p->json) : 0;
}

static json_t *to_json(const TomlValue *v, const ProfileVars *vars, int *err)
{
        _cleanup_free_ char *s = NULL;
        json_t *j = NULL;
        size_t n;

        switch (toml_type(v)) {
        case TOML_STRING:
                *err = profile_expand(toml_string(v), vars, &s);
                return *err < 0 ? NULL : json_string(s);
        case TOML_INTEGER:
                return json_integer(toml_integer(v));
        case TOML_BOOLEAN:
                return json_boolean(toml_boolean(v));
        case TOML_ARRAY:
                j = json_array();
                n = toml_array_length(v);
                for (size_t i = 0; j && i < n; i++) {
                        json_t *item = to_json(toml_array_get(v, i), vars, err);
                        if (!item || json_array_append_new(j, item) < 0) {
                                json_decref(j);
                                return NULL;
                        }
                }
                return j;
        case TOML_TABLE:
                j = json_object();
                n = toml_table_length(v);
                for (size_t i = 0; j && i < n; i++) {
                        json_t *item = to_json(toml_table_value(v, i), vars, err);
                        if (!item || json_object_set_new(j, toml_table_key(v, i), item) < 0) {
                                json_decref(j);
                                return NULL;
                        }
                }
                return j;
        }
        return NULL;
}

int profile_json_render(const Profile *p, size_t i, const ProfileVars *vars, char **ret_name,
                        char **ret_text)
{
        _cleanup_free_ char *name = NULL;
        json_t *j;
        char *text;
        int err = -ENOMEM;

        assert(i < profile_json_count(p));
        name = strdup(toml_table_key(p->json, i));
        j = to_json(toml_table_value(p->json, i), vars, &err);
        if (!name || !j) {
                json_decref(j);
                return err;
        }
        text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(j);
        if (!text)
                return -ENOMEM;
        *ret_name = TAKE_PTR(name);
        *ret_text = text;
        return 0;
}
