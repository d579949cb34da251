/* SPDX-License-Identifier: MIT */
/* The configuration: TOML (toml.c) read into a Config, every key checked against its rule. Each table has
 * a list of its keys and their parsers; a key or table not in the lists is an error, and so is a value of
 * the wrong type. Messages begin with the table and key they are about: "[sandbox] user: ...". */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "macro.h"
#include "read-file.h"
#include "toml.h"
#include "trusted-path.h"

#define NAME_RULE            "^[a-z_][a-z0-9_-]{0,31}$"
#define ENV_NAME_RULE        "^[A-Za-z_][A-Za-z0-9_]*$"
#define ENV_FORBIDDEN_PREFIX "ACTIONS_"

/* s escaped for a message (see toml_escape()), in a buffer that lives until the end of the enclosing
 * block. */
#define QUOTE_MAX 96
#define QUOTE(s)  toml_escape((s), (char[QUOTE_MAX]){ 0 }, QUOTE_MAX)

/* Membership in any of these is root by another name. */
static const char *const root_equivalent_groups[] = {
        "root",   "wheel",  "sudo", "admin", "adm",         "disk",    "shadow",
        "docker", "podman", "lxd",  "incus", "incus-admin", "libvirt", "systemd-journal",
};

static const char *const enter_backend_names[] = {
        [ENTER_AUTO] = "auto",
        [ENTER_RUN0] = "run0",
        [ENTER_SYSTEMD_RUN] = "systemd-run",
        [ENTER_DIRECT] = "direct",
};

/* ---- The rules ---- */

static bool is_lower(char c)
{
        return c >= 'a' && c <= 'z';
}

static bool is_upper(char c)
{
        return c >= 'A' && c <= 'Z';
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

bool user_name_valid(const char *s)
{
        size_t n;

        if (!s || !(is_lower(s[0]) || s[0] == '_'))
                return false;
        for (n = 1; s[n]; n++)
                if (!(is_lower(s[n]) || is_digit(s[n]) || s[n] == '_' || s[n] == '-'))
                        return false;
        return n <= 32;
}

bool group_name_valid(const char *s)
{
        return user_name_valid(s);
}

bool group_is_root_equivalent(const char *s)
{
        assert(s);

        for (size_t i = 0; i < ELEMENTSOF(root_equivalent_groups); i++)
                if (strcmp(s, root_equivalent_groups[i]) == 0)
                        return true;
        return false;
}

static bool env_name_syntax_valid(const char *s)
{
        if (!s || !(is_upper(s[0]) || is_lower(s[0]) || s[0] == '_'))
                return false;
        for (size_t i = 1; s[i]; i++)
                if (!(is_upper(s[i]) || is_lower(s[i]) || is_digit(s[i]) || s[i] == '_'))
                        return false;
        return true;
}

static bool env_name_forbidden(const char *s)
{
        /* In any case: a name that differs only in case is refused as well, to fail closed. */
        return strncasecmp(s, ENV_FORBIDDEN_PREFIX, strlen(ENV_FORBIDDEN_PREFIX)) == 0;
}

bool env_name_valid(const char *s)
{
        return env_name_syntax_valid(s) && !env_name_forbidden(s);
}

bool env_value_valid(const char *s)
{
        return s && !strpbrk(s, "\n\r");
}

static bool has_control_character(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < ' ' || *s == 0x7f)
                        return true;
        return false;
}

bool path_is_plain_absolute(const char *s)
{
        if (!s || s[0] != '/')
                return false;
        if (s[1] == '\0')
                return true;
        for (const char *c = s + 1;;) {
                size_t n = strcspn(c, "/");

                if (n == 0) /* "//" or a trailing "/" */
                        return false;
                if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                if (c[n] == '\0')
                        return true;
                c += n + 1;
        }
}

bool path_is_plain_relative(const char *s, bool allow_trailing_slash)
{
        size_t len;

        if (!s || s[0] == '\0' || s[0] == '/' || has_control_character(s))
                return false;
        len = strlen(s);
        if (len > 4095)
                return false;
        if (allow_trailing_slash && s[len - 1] == '/')
                len--;
        for (size_t i = 0; i < len;) {
                size_t n = strcspn(s + i, "/");

                if (n > len - i)
                        n = len - i;
                if (n == 0 || (n == 1 && s[i] == '.') || (n == 2 && s[i] == '.' && s[i + 1] == '.'))
                        return false;
                i += n;
                if (i == len)
                        return true;
                i++; /* the '/' */
                if (i == len)
                        return false; /* a trailing "/" that was not allowed */
        }
        return false;
}

bool env_name_is_job_command_file(const char *s)
{
        static const char *const names[] = { "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STATE",
                                             "GITHUB_STEP_SUMMARY" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strcasecmp(s, names[i]) == 0)
                        return true;
        return false;
}

bool unit_name_valid(const char *s)
{
        if (!s || s[0] == '-' || !strchr(s, '.'))
                return false;
        for (const char *c = s; *c; c++)
                if ((unsigned char)*c <= ' ' || *c == 0x7f)
                        return false;
        return true;
}

const char *enter_backend_to_string(EnterBackend b)
{
        assert((size_t)b < ELEMENTSOF(enter_backend_names));
        return enter_backend_names[b];
}

/* ---- Messages ---- */

/* Where a key or value is, in the file. */
typedef struct Place {
        unsigned line, column;
} Place;

static Place value_place(const TomlValue *v)
{
        return (Place){ toml_line(v), toml_column(v) };
}

static Place key_place(const TomlValue *table, size_t i)
{
        return (Place){ toml_table_key_line(table, i), toml_table_key_column(table, i) };
}

/* A key being parsed: which table it is in, its name, its value. */
typedef struct Field {
        const char *table;
        const char *key;
        const TomlValue *value;
} Field;

/* "[table] key: DETAIL", at the given place. */
static int field_error(AjError *e, const Field *f, Place at, const char *fmt, ...) _printf_(4, 5);
static int field_error(AjError *e, const Field *f, Place at, const char *fmt, ...)
{
        char detail[sizeof(e->message)];
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        return aj_error(e, EINVAL, at.line, at.column, "[%s] %s: %s", f->table, f->key, detail);
}

/* Levenshtein distance, for "did you mean"; short strings only. */
static size_t edit_distance(const char *a, const char *b)
{
        size_t na = strlen(a), nb = strlen(b), row[65];

        if (na > 64 || nb > 64)
                return SIZE_MAX;
        for (size_t j = 0; j <= nb; j++)
                row[j] = j;
        for (size_t i = 1; i <= na; i++) {
                size_t diagonal = row[0];

                row[0] = i;
                for (size_t j = 1; j <= nb; j++) {
                        size_t above = row[j];
                        size_t best = diagonal + (a[i - 1] != b[j - 1]);

                        if (row[j] + 1 < best)
                                best = row[j] + 1;
                        if (row[j - 1] + 1 < best)
                                best = row[j - 1] + 1;
                        row[j] = best;
                        diagonal = above;
                }
        }
        return row[nb];
}

/* ---- Values of each type ---- */

static int expect_type(AjError *e, const Field *f, TomlType type)
{
        if (toml_type(f->value) == type)
                return 0;
        return field_error(e, f, value_place(f->value), "expected %s, found %s", toml_type_description(type),
                           toml_type_description(toml_type(f->value)));
}

/* Replaces *target by a copy of the string value, whose type the caller checked. */
static int set_string(AjError *e, const Field *f, char **target)
{
        char *s = strdup(toml_string(f->value));

        if (!s)
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        free(*target);
        *target = s;
        return 0;
}

static int parse_boolean(AjError *e, const Field *f, bool *target)
{
        int r;

        r = expect_type(e, f, TOML_BOOLEAN);
        if (r < 0)
                return r;
        *target = toml_boolean(f->value);
        return 0;
}

/* Checks one element of a list; returns 0 or an error. */
typedef int (*ElementCheck)(AjError *e, const Field *f, const TomlValue *item, char *const *earlier);

static int list_too_long(AjError *e, const Field *f, size_t n)
{
        return field_error(e, f, value_place(f->value), "%zu entries, more than the %d a list may hold", n,
                           CONFIG_LIST_MAX);
}

static int parse_string_list(AjError *e, const Field *f, ElementCheck check, char ***target)
{
        _cleanup_strv_free_ char **v = NULL;
        size_t n;

        if (toml_type(f->value) != TOML_ARRAY)
                return field_error(e, f, value_place(f->value), "expected an array of strings, found %s",
                                   toml_type_description(toml_type(f->value)));

        n = toml_array_length(f->value);
        if (n > CONFIG_LIST_MAX)
                return list_too_long(e, f, n);
        v = calloc(n + 1, sizeof(char *));
        if (!v)
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        for (size_t i = 0; i < n; i++) {
                const TomlValue *item = toml_array_get(f->value, i);
                int r;

                if (toml_type(item) != TOML_STRING)
                        return field_error(e, f, value_place(item),
                                           "expected an array of strings, found %s in the array",
                                           toml_type_description(toml_type(item)));
                r = check(e, f, item, v);
                if (r < 0)
                        return r;
                v[i] = strdup(toml_string(item));
                if (!v[i])
                        return aj_error(e, ENOMEM, 0, 0, "out of memory");
        }
        strv_free(*target);
        *target = TAKE_PTR(v);
        return 0;
}

/* ---- [sandbox] ---- */

/* What parsing [sandbox] needs besides the Config: where runner-user was, for the check against user. */
typedef struct State {
        Config *config;
        const TomlValue *runner_user;
        const TomlValue *budget; /* [run] budget, for the rule that needs [run.prices] */
} State;

static int check_user_name(AjError *e, const Field *f, const char *what)
{
        const char *s = toml_string(f->value);

        if (!user_name_valid(s))
                return field_error(e, f, value_place(f->value),
                                   "\"%s\" is not a valid user name (it must match %s)", QUOTE(s),
                                   NAME_RULE);
        if (strcmp(s, "root") == 0)
                return field_error(e, f, value_place(f->value), "\"root\" is refused: %s must not be root",
                                   what);
        return 0;
}

static int parse_user(AjError *e, const Field *f, State *s)
{
        int r;

        r = expect_type(e, f, TOML_STRING);
        if (r < 0)
                return r;
        r = check_user_name(e, f, "the sandbox user");
        if (r < 0)
                return r;
        return set_string(e, f, &s->config->sandbox_user);
}

static int parse_runner_user(AjError *e, const Field *f, State *s)
{
        int r;

        r = expect_type(e, f, TOML_STRING);
        if (r < 0)
                return r;
        r = check_user_name(e, f, "the runner user");
        if (r < 0)
                return r;
        s->runner_user = f->value;
        return set_string(e, f, &s->config->runner_user);
}

static bool strv_contains(char *const *v, const char *s)
{
        for (; v && *v; v++)
                if (strcmp(*v, s) == 0)
                        return true;
        return false;
}

static int check_group(AjError *e, const Field *f, const TomlValue *item, char *const *earlier)
{
        const char *s = toml_string(item);

        if (!group_name_valid(s))
                return field_error(e, f, value_place(item),
                                   "\"%s\" is not a valid group name (it must match %s)", QUOTE(s),
                                   NAME_RULE);
        if (group_is_root_equivalent(s))
                return field_error(e, f, value_place(item),
                                   "group \"%s\" is refused: membership in it is root by another name", s);
        if (strv_contains(earlier, s))
                return field_error(e, f, value_place(item), "group \"%s\" is listed twice", s);
        return 0;
}

static int parse_groups(AjError *e, const Field *f, State *s)
{
        return parse_string_list(e, f, check_group, &s->config->sandbox_groups);
}

static int parse_allow_existing_user(AjError *e, const Field *f, State *s)
{
        return parse_boolean(e, f, &s->config->allow_existing_user);
}

static int parse_lock_runner(AjError *e, const Field *f, State *s)
{
        return parse_boolean(e, f, &s->config->lock_runner);
}

static int check_private_dir(AjError *e, const Field *f, const TomlValue *item, char *const *earlier)
{
        const char *s = toml_string(item);

        (void)earlier;
        if (has_control_character(s))
                return field_error(e, f, value_place(item), "\"%s\" contains a control character", QUOTE(s));
        if (!path_is_plain_absolute(s))
                return field_error(e, f, value_place(item),
                                   "\"%s\" is not a plain absolute path (it must start with \"/\", with no "
                                   "empty, \".\" or \"..\" component and no trailing \"/\")",
                                   QUOTE(s));
        if (strcmp(s, "/") == 0)
                return field_error(e, f, value_place(item),
                                   "\"/\" is refused: closing it would close everything");
        return 0;
}

static int parse_private_dirs(AjError *e, const Field *f, State *s)
{
        return parse_string_list(e, f, check_private_dir, &s->config->private_dirs);
}

static int check_unit(AjError *e, const Field *f, const TomlValue *item, char *const *earlier)
{
        const char *s = toml_string(item);

        (void)earlier;
        if (!unit_name_valid(s))
                return field_error(
                        e, f, value_place(item),
                        "\"%s\" is not a unit name (it must contain \".\", not start with \"-\", and "
                        "hold no whitespace or control character)",
                        QUOTE(s));
        return 0;
}

static int parse_stop_services(AjError *e, const Field *f, State *s)
{
        return parse_string_list(e, f, check_unit, &s->config->stop_services);
}

/* One variable of [sandbox] env, entry i of the table. */
static int check_env_entry(AjError *e, const Field *f, size_t i)
{
        const char *name = toml_table_key(f->value, i);
        const TomlValue *v = toml_table_value(f->value, i);

        if (env_name_forbidden(name))
                return field_error(e, f, key_place(f->value, i),
                                   "%s: names starting " ENV_FORBIDDEN_PREFIX
                                   " are refused: they carry the job's credentials",
                                   QUOTE(name));
        if (!env_name_syntax_valid(name))
                return field_error(e, f, key_place(f->value, i),
                                   "\"%s\" is not a valid variable name (it must match " ENV_NAME_RULE ")",
                                   QUOTE(name));
        if (toml_type(v) != TOML_STRING)
                return field_error(e, f, value_place(v), "%s: expected a string, found %s", name,
                                   toml_type_description(toml_type(v)));
        if (!env_value_valid(toml_string(v)))
                return field_error(e, f, value_place(v),
                                   "%s: the value must not contain a newline or a carriage return", name);
        return 0;
}

/* Orders "NAME=VALUE" entries by NAME. */
static int env_compare(const void *a, const void *b)
{
        const char *x = *(char *const *)a, *y = *(char *const *)b;
        size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
        int r = memcmp(x, y, nx < ny ? nx : ny);

        if (r != 0)
                return r;
        return (nx > ny) - (nx < ny);
}

static int parse_env(AjError *e, const Field *f, State *s)
{
        _cleanup_strv_free_ char **v = NULL;
        size_t n;
        int r;

        r = expect_type(e, f, TOML_TABLE);
        if (r < 0)
                return r;

        n = toml_table_length(f->value);
        v = calloc(n + 1, sizeof(char *));
        if (!v)
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        for (size_t i = 0; i < n; i++) {
                r = check_env_entry(e, f, i);
                if (r < 0)
                        return r;
                if (asprintf(&v[i], "%s=%s", toml_table_key(f->value, i),
                             toml_string(toml_table_value(f->value, i))) < 0) {
                        v[i] = NULL;
                        return aj_error(e, ENOMEM, 0, 0, "out of memory");
                }
        }
        qsort(v, n, sizeof(char *), env_compare);
        strv_free(s->config->env);
        s->config->env = TAKE_PTR(v);
        return 0;
}

/* A string that must be one of names[n]: its index in *ret. The error lists them all. */
static int parse_choice(AjError *e, const Field *f, const char *const *names, size_t n, size_t *ret)
{
        char list[256] = "";
        const char *name;
        int r;

        r = expect_type(e, f, TOML_STRING);
        if (r < 0)
                return r;
        name = toml_string(f->value);
        for (size_t i = 0; i < n; i++)
                if (strcmp(name, names[i]) == 0) {
                        *ret = i;
                        return 0;
                }
        for (size_t i = 0; i < n; i++) {
                size_t k = strlen(list);
                (void)snprintf(list + k, sizeof(list) - k, "%s\"%s\"", i ? ", " : "", names[i]);
        }
        return field_error(e, f, value_place(f->value), "\"%s\" is not one of %s", QUOTE(name), list);
}

static int parse_enter(AjError *e, const Field *f, State *s)
{
        size_t i = 0;
        int r = parse_choice(e, f, enter_backend_names, ELEMENTSOF(enter_backend_names), &i);

        if (r >= 0)
                s->config->enter = (EnterBackend)i;
        return r;
}

static int parse_user_manager(AjError *e, const Field *f, State *s)
{
        return parse_boolean(e, f, &s->config->user_manager);
}

/* ---- [sandbox.check] ---- */

static int parse_url(AjError *e, const Field *f, char **target)
{
        const char *u;
        int r;

        r = expect_type(e, f, TOML_STRING);
        if (r < 0)
                return r;
        u = toml_string(f->value);
        if ((strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0) || has_control_character(u) ||
            strchr(u, ' '))
                return field_error(e, f, value_place(f->value),
                                   "\"%s\" is not an http:// or https:// URL without spaces or control "
                                   "characters",
                                   QUOTE(u));
        if (strlen(u) > 2048)
                return field_error(e, f, value_place(f->value), "longer than 2048 bytes");
        return set_string(e, f, target);
}

static int parse_control_url(AjError *e, const Field *f, State *s)
{
        return parse_url(e, f, &s->config->check_control_url);
}

static int parse_fetch_repo(AjError *e, const Field *f, State *s)
{
        return parse_url(e, f, &s->config->check_fetch_repo);
}

bool config_image_name_ok(const char *name)
{
        size_t len = strlen(name);

        /* What a registry's reference holds: a name, a tag after ':', a digest after '@'. */
        return len > 0 && len <= 255 && name[0] != '-' &&
               strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/:@") == len;
}

static int parse_container_image(AjError *e, const Field *f, State *s)
{
        const char *v;
        int r;

        r = expect_type(e, f, TOML_STRING);
        if (r < 0)
                return r;
        v = toml_string(f->value);
        if (!config_image_name_ok(v))
                return field_error(
                        e, f, value_place(f->value),
                        "\"%s\" is not an image name (1 to 255 of letters, digits and \"._-/:@\", "
                        "not starting \"-\")",
                        QUOTE(v));
        return set_string(e, f, &s->config->check_container_image);
}

static int parse_containers(AjError *e, const Field *f, State *s)
{
        return parse_boolean(e, f, &s->config->check_containers);
}

static int parse_before_agent(AjError *e, const Field *f, State *s)
{
        return parse_boolean(e, f, &s->config->check_before_agent);
}

static int check_allow_socket(AjError *e, const Field *f, const TomlValue *item, char *const *earlier)
{
        const char *v = toml_string(item);

        (void)earlier;
        if ((v[0] != '/' && v[0] != '@') || v[1] == '\0' || has_control_character(v))
                return field_error(e, f, value_place(item),
                                   "\"%s\" must be a socket's path (starting \"/\") or an abstract name "
                                   "(starting \"@\"), with no control character",
                                   QUOTE(v));
        return 0;
}

static int parse_allow_sockets(AjError *e, const Field *f, State *s)
{
        return parse_string_list(e, f, check_allow_socket, &s->config->check_allow_sockets);
}

static int parse_allow_tcp_ports(AjError *e, const Field *f, State *s)
{
        _cleanup_free_ unsigned *v = NULL;
        size_t n;

        if (toml_type(f->value) != TOML_ARRAY)
                return field_error(e, f, value_place(f->value), "expected an array of ports, found %s",
                                   toml_type_description(toml_type(f->value)));
        n = toml_array_length(f->value);
        if (n > CONFIG_LIST_MAX)
                return list_too_long(e, f, n);
        v = calloc(n + 1, sizeof(unsigned));
        if (!v)
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        for (size_t i = 0; i < n; i++) {
                const TomlValue *item = toml_array_get(f->value, i);
                int64_t p;

                if (toml_type(item) != TOML_INTEGER)
                        return field_error(e, f, value_place(item), "expected a port (1 to 65535), found %s",
                                           toml_type_description(toml_type(item)));
                p = toml_integer(item);
                if (p < 1 || p > 65535)
                        return field_error(e, f, value_place(item), "%" PRId64 " is not a port (1 to 65535)",
                                           p);
                v[i] = (unsigned)p;
        }
        free(s->config->check_allow_tcp_ports);
        s->config->check_allow_tcp_ports = TAKE_PTR(v);
        s->config->n_check_allow_tcp_ports = n;
        return 0;
}

/* ---- [egress] ---- */

static int parse_proxy(AjError *e, const Field *f, State *s)
{
        return parse_boolean(e, f, &s->config->egress_proxy);
}

static int parse_log_max_bytes(AjError *e, const Field *f, State *s);

static int parse_reads(AjError *e, const Field *f, State *s)
{
        static const char *const names[] = { "any", "listed" };
        size_t i = 0;
        int r = parse_choice(e, f, names, ELEMENTSOF(names), &i);

        if (r >= 0)
                s->config->egress_reads_listed = i == 1;
        return r;
}

/* ---- [run] ---- */

static int check_trusted_path(AjError *e, const Field *f, const TomlValue *item, char *const *earlier)
{
        const char *s = toml_string(item);
        size_t n = strlen(s);

        if (!path_is_plain_relative(s, true))
                return field_error(e, f, value_place(item),
                                   "\"%s\" is not a plain relative path (no leading \"/\", no empty, \".\" "
                                   "or \"..\" component, no control character)",
                                   QUOTE(s));
        if (s[n - 1] == '/')
                n--;
        for (char *const *p = earlier; *p; p++)
                if (strlen(*p) == n && strncmp(*p, s, n) == 0)
                        return field_error(e, f, value_place(item), "\"%s\" is listed twice", QUOTE(s));
        return 0;
}

static int parse_trusted_paths(AjError *e, const Field *f, State *s)
{
        int r;

        if (toml_type(f->value) == TOML_ARRAY && toml_array_length(f->value) > RUN_TRUSTED_PATHS_MAX)
                return field_error(e, f, value_place(f->value), "more than %d paths", RUN_TRUSTED_PATHS_MAX);
        r = parse_string_list(e, f, check_trusted_path, &s->config->run_trusted_paths);
        if (r < 0)
                return r;
        /* One spelling: "dir/" and "dir" name the same path. */
        for (char **p = s->config->run_trusted_paths; *p; p++) {
                size_t n = strlen(*p);
                if ((*p)[n - 1] == '/')
                        (*p)[n - 1] = '\0';
        }
        return 0;
}

static int check_run_env_name(AjError *e, const Field *f, const TomlValue *item, char *const *earlier)
{
        const char *s = toml_string(item);

        if (env_name_forbidden(s))
                return field_error(e, f, value_place(item),
                                   "%s: names starting " ENV_FORBIDDEN_PREFIX
                                   " are refused: they carry the job's credentials",
                                   QUOTE(s));
        if (!env_name_syntax_valid(s))
                return field_error(e, f, value_place(item),
                                   "\"%s\" is not a valid variable name (it must match " ENV_NAME_RULE ")",
                                   QUOTE(s));
        if (env_name_is_job_command_file(s))
                return field_error(e, f, value_place(item),
                                   "%s is refused: it names one of the job's command files", QUOTE(s));
        if (strv_contains(earlier, s))
                return field_error(e, f, value_place(item), "%s is listed twice", QUOTE(s));
        return 0;
}

static int parse_run_env(AjError *e, const Field *f, State *s)
{
        return parse_string_list(e, f, check_run_env_name, &s->config->run_env);
}

/* [sandbox] step-env: what a script step (sandbox exec --script) passes on, under [run] env's rules. */
static int parse_step_env(AjError *e, const Field *f, State *s)
{
        return parse_string_list(e, f, check_run_env_name, &s->config->step_env);
}

static int parse_bounded(AjError *e, const Field *f, int64_t min, int64_t max, unsigned long long *target)
{
        int r = expect_type(e, f, TOML_INTEGER);

        if (r < 0)
                return r;
        if (toml_integer(f->value) < min || toml_integer(f->value) > max)
                return field_error(e, f, value_place(f->value),
                                   "%" PRId64 " is out of range (%" PRId64 " to %" PRId64 ")",
                                   toml_integer(f->value), min, max);
        *target = (unsigned long long)toml_integer(f->value);
        return 0;
}

static int parse_tasks_max(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, SANDBOX_TASKS_MAX_MIN, SANDBOX_TASKS_MAX_MAX,
                             &s->config->sandbox_tasks_max);
}

static int parse_memory_max_percent(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, 1, 100, &s->config->sandbox_memory_max_percent);
}

static int parse_run_timeout(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, 1, RUN_TIMEOUT_MAX, &s->config->run_timeout);
}

static int parse_max_file_bytes(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, 1, RUN_BYTES_MAX, &s->config->run_max_file_bytes);
}

static int parse_max_total_bytes(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, 1, RUN_BYTES_MAX, &s->config->run_max_total_bytes);
}

static int parse_max_files(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, 1, RUN_FILES_MAX, &s->config->run_max_files);
}

/* The broker's bound: a run's requests of a model API (agentic-job-profiles(5), THE KEY BROKER). */
static int parse_max_requests(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, 1, RUN_REQUESTS_MAX, &s->config->run_max_requests);
}

/* An amount of money: a TOML integer or a string of a decimal with at most six places (TOML floats are
 * not read: an amount is never rounded). */
static int parse_amount(AjError *e, const Field *f, const TomlValue *v, uint64_t min_micro,
                        uint64_t max_micro, uint64_t *ret_micro)
{
        char text[32];
        int r;

        if (toml_type(v) == TOML_INTEGER) {
                if (toml_integer(v) < 0)
                        return field_error(e, f, value_place(v), "%" PRId64 " is negative", toml_integer(v));
                (void)snprintf(text, sizeof(text), "%" PRId64, toml_integer(v));
        } else if (toml_type(v) == TOML_STRING && strlen(toml_string(v)) < sizeof(text))
                (void)snprintf(text, sizeof(text), "%s", toml_string(v));
        else if (toml_type(v) == TOML_STRING)
                return field_error(e, f, value_place(v), "\"%s\" is not an amount (such as \"2.50\")",
                                   QUOTE(toml_string(v)));
        else
                return field_error(e, f, value_place(v),
                                   "expected an amount (an integer, or a string such as \"2.50\"), found %s",
                                   toml_type_description(toml_type(v)));
        r = amount_parse(text, max_micro, ret_micro);
        if (r == -EINVAL)
                return field_error(e, f, value_place(v),
                                   "\"%s\" is not an amount (digits, perhaps a '.' and at most six more)",
                                   QUOTE(text));
        if (r < 0 || *ret_micro < min_micro)
                return field_error(e, f, value_place(v), "%s is out of range (%s to %" PRIu64 ")", text,
                                   min_micro ? "0.000001" : "0", max_micro / PRICE_MICRO_PER_UNIT);
        return 0;
}

static int parse_budget(AjError *e, const Field *f, State *s)
{
        s->budget = f->value;
        return parse_amount(e, f, f->value, 1, BUDGET_MAX_MICRO, &s->config->run_budget);
}

/* A model's name, or a prefix of names ending in '*': what the API's requests say in "model". */
static bool price_model_valid(const char *m)
{
        size_t n = strlen(m);

        if (n == 0 || n > PRICE_MODEL_MAX || (n == 1 && m[0] == '*'))
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)m[i] < 0x21 || (unsigned char)m[i] > 0x7e || m[i] == '"' ||
                    m[i] == '\\' || (m[i] == '*' && i != n - 1))
                        return false;
        return true;
}

/* [run.prices]: "model" = { input = AMOUNT, output = AMOUNT }, per million tokens. */
static int parse_prices(AjError *e, const Field *f, State *s)
{
        size_t n;
        int r = expect_type(e, f, TOML_TABLE);

        if (r < 0)
                return r;
        n = toml_table_length(f->value);
        if (n > PRICES_MAX) {
                Place at = key_place(f->value, PRICES_MAX);
                return aj_error(e, EINVAL, at.line, at.column, "[run.prices] more than %d models",
                                PRICES_MAX);
        }
        s->config->run_prices = calloc(n ? n : 1, sizeof(Price));
        if (!s->config->run_prices)
                return aj_error(e, ENOMEM, 0, 0, "out of memory");
        for (size_t i = 0; i < n; i++) {
                const char *model = toml_table_key(f->value, i);
                const TomlValue *v = toml_table_value(f->value, i), *in, *out;
                Field field = { "run.prices", model, v };
                Price *p = &s->config->run_prices[s->config->n_run_prices];
                Place at = key_place(f->value, i);

                if (!price_model_valid(model))
                        return aj_error(e, EINVAL, at.line, at.column,
                                        "[run.prices] \"%s\" is not a model's name (printable, no space or "
                                        "quote, at most %d bytes, '*' only at its end)",
                                        QUOTE(model), PRICE_MODEL_MAX);
                if (toml_type(v) != TOML_TABLE)
                        return field_error(e, &field, value_place(v),
                                           "expected { input = AMOUNT, output = AMOUNT }, found %s",
                                           toml_type_description(toml_type(v)));
                for (size_t k = 0; k < toml_table_length(v); k++)
                        if (strcmp(toml_table_key(v, k), "input") != 0 &&
                            strcmp(toml_table_key(v, k), "output") != 0) {
                                Place kat = key_place(v, k);
                                return aj_error(e, EINVAL, kat.line, kat.column,
                                                "[run.prices] %s: unknown key \"%s\" (a price has input and "
                                                "output)",
                                                QUOTE(model), QUOTE(toml_table_key(v, k)));
                        }
                in = toml_table_get(v, "input");
                out = toml_table_get(v, "output");
                if (!in || !out)
                        return field_error(e, &field, value_place(v), "needs both input and output");
                r = parse_amount(e, &field, in, 0, PRICE_MAX_MICRO, &p->input);
                if (r >= 0)
                        r = parse_amount(e, &field, out, 0, PRICE_MAX_MICRO, &p->output);
                if (r < 0)
                        return r;
                p->model = strdup(model);
                if (!p->model)
                        return aj_error(e, ENOMEM, 0, 0, "out of memory");
                s->config->n_run_prices++;
        }
        return 0;
}

static int parse_clone_max_bytes(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, 1, RUN_BYTES_MAX, &s->config->run_clone_max_bytes);
}

static int parse_clone_max_object_bytes(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, 1, RUN_BYTES_MAX, &s->config->run_clone_max_object_bytes);
}

static int parse_clone_max_files(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, 1, RUN_CLONE_MAX_FILES_MAX, &s->config->run_clone_max_files);
}

static int parse_clone_max_checkout_bytes(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, 1, RUN_BYTES_MAX, &s->config->run_clone_max_checkout_bytes);
}

static int parse_log_max_bytes(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, EGRESS_LOG_MAX_BYTES_MIN, EGRESS_LOG_MAX_BYTES_MAX,
                             &s->config->egress_log_max_bytes);
}

static int parse_clone_max_memory(AjError *e, const Field *f, State *s)
{
        return parse_bounded(e, f, RUN_CLONE_MAX_MEMORY_MIN, RUN_BYTES_MAX,
                             &s->config->run_clone_max_memory);
}

static const char *const run_confine_names[] = {
        [RUN_CONFINE_BUBBLEWRAP] = "bubblewrap",
        [RUN_CONFINE_NONE] = "none",
};

const char *run_confine_name(RunConfine c)
{
        return (size_t)c < ELEMENTSOF(run_confine_names) ? run_confine_names[c] : "?";
}

static int parse_run_confine(AjError *e, const Field *f, State *s)
{
        size_t i = 0;
        int r = parse_choice(e, f, run_confine_names, ELEMENTSOF(run_confine_names), &i);

        if (r >= 0)
                s->config->run_confine = (RunConfine)i;
        return r;
}

bool profile_name_valid(const char *s)
{
        size_t n = 0;

        if (!s || !is_lower(s[0]))
                return false;
        for (; s[n]; n++)
                if (!(is_lower(s[n]) || is_digit(s[n]) || s[n] == '-'))
                        return false;
        return n <= 32;
}

static int parse_run_profile(AjError *e, const Field *f, State *s)
{
        int r = expect_type(e, f, TOML_STRING);

        if (r < 0)
                return r;
        if (!profile_name_valid(toml_string(f->value)))
                return field_error(e, f, value_place(f->value),
                                   "\"%s\" is not a profile name (it must match ^[a-z][a-z0-9-]{0,31}$)",
                                   QUOTE(toml_string(f->value)));
        return set_string(e, f, &s->config->run_profile);
}

/* ---- Tables ---- */

typedef struct KeyDef {
        const char *name;
        int (*parse)(AjError *e, const Field *f, State *s);
} KeyDef;

static int parse_check(AjError *e, const Field *f, State *s);

static const KeyDef sandbox_keys[] = {
        { "user", parse_user },
        { "groups", parse_groups },
        { "allow-existing-user", parse_allow_existing_user },
        { "runner-user", parse_runner_user },
        { "lock-runner", parse_lock_runner },
        { "private-dirs", parse_private_dirs },
        { "stop-services", parse_stop_services },
        { "env", parse_env },
        { "step-env", parse_step_env },
        { "enter", parse_enter },
        { "user-manager", parse_user_manager },
        { "tasks-max", parse_tasks_max },
        { "memory-max-percent", parse_memory_max_percent },
        { "check", parse_check },
};

static const KeyDef check_keys[] = {
        { "control-url", parse_control_url },         { "fetch-repo", parse_fetch_repo },
        { "container-image", parse_container_image }, { "containers", parse_containers },
        { "before-agent", parse_before_agent },       { "allow-sockets", parse_allow_sockets },
        { "allow-tcp-ports", parse_allow_tcp_ports },
};

static const KeyDef egress_keys[] = {
        { "proxy", parse_proxy },
        { "log-max-bytes", parse_log_max_bytes },
        { "reads", parse_reads },
};

typedef struct TableDef {
        const char *name;
        const KeyDef *keys;
        size_t n_keys;
} TableDef;

static const KeyDef run_keys[] = {
        { "trusted-paths", parse_trusted_paths },
        { "env", parse_run_env },
        { "timeout", parse_run_timeout },
        { "max-file-bytes", parse_max_file_bytes },
        { "max-total-bytes", parse_max_total_bytes },
        { "max-files", parse_max_files },
        { "max-requests", parse_max_requests },
        { "budget", parse_budget },
        { "prices", parse_prices },
        { "confine", parse_run_confine },
        { "profile", parse_run_profile },
        { "clone-max-bytes", parse_clone_max_bytes },
        { "clone-max-object-bytes", parse_clone_max_object_bytes },
        { "clone-max-files", parse_clone_max_files },
        { "clone-max-checkout-bytes", parse_clone_max_checkout_bytes },
        { "clone-max-memory", parse_clone_max_memory },
};

static const TableDef check_table = { "sandbox.check", check_keys, ELEMENTSOF(check_keys) };

static const TableDef tables[] = {
        { "sandbox", sandbox_keys, ELEMENTSOF(sandbox_keys) },
        { "egress", egress_keys, ELEMENTSOF(egress_keys) },
        { "run", run_keys, ELEMENTSOF(run_keys) },
};

/* name as it would be written in a header: bare if it can be, else quoted. */
static const char *header_part(const char *name, char buf[static QUOTE_MAX + 2])
{
        bool bare = name[0] != '\0';

        for (const char *c = name; *c; c++)
                bare = bare && (is_lower(*c) || is_upper(*c) || is_digit(*c) || *c == '_' || *c == '-');
        if (bare)
                (void)snprintf(buf, QUOTE_MAX + 2, "%s", QUOTE(name));
        else
                (void)snprintf(buf, QUOTE_MAX + 2, "\"%s\"", QUOTE(name));
        return buf;
}

static int unknown_table(AjError *e, const char *parent, const char *name, const TomlValue *v,
                         const char *suggestion)
{
        char part[QUOTE_MAX + 2];
        Place at = value_place(v);

        if (suggestion)
                return aj_error(e, EINVAL, at.line, at.column, "unknown table [%s%s%s] (did you mean [%s]?)",
                                parent ? parent : "", parent ? "." : "", header_part(name, part),
                                suggestion);
        return aj_error(e, EINVAL, at.line, at.column, "unknown table [%s%s%s]", parent ? parent : "",
                        parent ? "." : "", header_part(name, part));
}

static int unknown_key(AjError *e, const TomlValue *table, size_t i, const char *table_name,
                       const KeyDef *keys, size_t n_keys)
{
        const char *key = toml_table_key(table, i);
        const TomlValue *v = toml_table_value(table, i);
        Place at = key_place(table, i);

        if (toml_type(v) == TOML_TABLE)
                return unknown_table(e, table_name, key, v, NULL);
        for (size_t k = 0; k < n_keys; k++)
                if (edit_distance(key, keys[k].name) <= 2)
                        return aj_error(e, EINVAL, at.line, at.column,
                                        "[%s] unknown key \"%s\" (did you mean \"%s\"?)", table_name,
                                        QUOTE(key), keys[k].name);
        return aj_error(e, EINVAL, at.line, at.column, "[%s] unknown key \"%s\"", table_name, QUOTE(key));
}

static int parse_table(AjError *e, const TableDef *def, const TomlValue *table, State *s)
{
        for (size_t i = 0; i < toml_table_length(table); i++) {
                const char *key = toml_table_key(table, i);
                const KeyDef *k = NULL;
                int r;

                for (size_t j = 0; j < def->n_keys; j++)
                        if (strcmp(key, def->keys[j].name) == 0)
                                k = &def->keys[j];
                if (!k)
                        return unknown_key(e, table, i, def->name, def->keys, def->n_keys);

                r = k->parse(e, &(Field){ def->name, key, toml_table_value(table, i) }, s);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_check(AjError *e, const Field *f, State *s)
{
        int r;

        r = expect_type(e, f, TOML_TABLE);
        if (r < 0)
                return r;
        return parse_table(e, &check_table, f->value, s);
}

static int parse_root(AjError *e, const TomlValue *root, State *s)
{
        for (size_t i = 0; i < toml_table_length(root); i++) {
                const char *name = toml_table_key(root, i);
                const TomlValue *v = toml_table_value(root, i);
                const TableDef *def = NULL;
                const char *suggestion = NULL;
                int r;

                for (size_t j = 0; j < ELEMENTSOF(tables); j++) {
                        if (strcmp(name, tables[j].name) == 0)
                                def = &tables[j];
                        else if (edit_distance(name, tables[j].name) <= 2)
                                suggestion = tables[j].name;
                }
                if (def && toml_type(v) != TOML_TABLE)
                        return aj_error(e, EINVAL, toml_line(v), toml_column(v),
                                        "%s: expected a table, found %s", name,
                                        toml_type_description(toml_type(v)));
                if (!def && toml_type(v) == TOML_TABLE)
                        return unknown_table(e, NULL, name, v, suggestion);
                if (!def) {
                        Place at = key_place(root, i);
                        return aj_error(
                                e, EINVAL, at.line, at.column,
                                "unknown key \"%s\" outside any table (keys belong in a table such as "
                                "[sandbox])",
                                QUOTE(name));
                }

                r = parse_table(e, def, v, s);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Rules between keys, once all are read. */
static int check_config(AjError *e, const State *s)
{
        const Config *c = s->config;

        if (c->run_budget && c->n_run_prices == 0) {
                Place at = value_place(s->budget);
                return aj_error(
                        e, EINVAL, at.line, at.column,
                        "[run] budget: no [run.prices]: a budget is kept by the price of each model's "
                        "tokens");
        }
        if (c->runner_user && strcmp(c->runner_user, c->sandbox_user) == 0) {
                Place at = value_place(s->runner_user);
                return aj_error(
                        e, EINVAL, at.line, at.column,
                        "[sandbox] runner-user: \"%s\" is the sandbox user: runner-user must differ from "
                        "user",
                        c->runner_user);
        }
        return 0;
}

/* ---- Config ---- */

void config_free(Config *c)
{
        if (!c)
                return;
        free(c->sandbox_user);
        strv_free(c->sandbox_groups);
        free(c->runner_user);
        strv_free(c->private_dirs);
        strv_free(c->stop_services);
        strv_free(c->env);
        strv_free(c->step_env);
        free(c->check_control_url);
        free(c->check_fetch_repo);
        free(c->check_container_image);
        strv_free(c->check_allow_sockets);
        free(c->check_allow_tcp_ports);
        strv_free(c->run_trusted_paths);
        strv_free(c->run_env);
        free(c->run_profile);
        for (size_t i = 0; i < c->n_run_prices; i++)
                free(c->run_prices[i].model);
        free(c->run_prices);
        free(c);
}

static Config *config_new(void)
{
        Config *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        c->sandbox_user = strdup("runner-sandbox");
        c->sandbox_groups = calloc(2, sizeof(char *));
        if (c->sandbox_groups)
                c->sandbox_groups[0] = strdup("kvm");
        c->private_dirs = calloc(1, sizeof(char *));
        c->stop_services = calloc(1, sizeof(char *));
        c->env = calloc(1, sizeof(char *));
        c->step_env = calloc(1, sizeof(char *));
        c->check_control_url = strdup("https://github.com/");
        c->check_fetch_repo = strdup("https://github.com/bootc-dev/bootc");
        c->check_container_image = strdup("registry.access.redhat.com/ubi10/ubi-minimal");
        c->check_allow_sockets = calloc(1, sizeof(char *));
        c->run_trusted_paths = calloc(4, sizeof(char *));
        if (c->run_trusted_paths) {
                c->run_trusted_paths[0] = strdup(".agentic-job");
                c->run_trusted_paths[1] = strdup(".claude");
                c->run_trusted_paths[2] = strdup(".codex");
        }
        c->run_env = calloc(1, sizeof(char *));
        c->run_profile = strdup("command");
        if (!c->run_profile || !c->run_trusted_paths || !c->run_trusted_paths[0] ||
            !c->run_trusted_paths[1] || !c->run_trusted_paths[2] || !c->run_env || !c->step_env) {
                config_free(c);
                return NULL;
        }
        if (!c->sandbox_user || !c->sandbox_groups || !c->sandbox_groups[0] || !c->private_dirs ||
            !c->stop_services || !c->env || !c->check_control_url || !c->check_fetch_repo ||
            !c->check_container_image || !c->check_allow_sockets) {
                config_free(c);
                return NULL;
        }
        c->lock_runner = true;
        c->enter = ENTER_AUTO;
        c->egress_proxy = true;
        c->egress_log_max_bytes = EGRESS_LOG_MAX_BYTES_DEFAULT;
        c->check_containers = true;
        c->sandbox_tasks_max = SANDBOX_TASKS_MAX_DEFAULT;
        c->sandbox_memory_max_percent = SANDBOX_MEMORY_MAX_PERCENT_DEFAULT;
        c->run_timeout = RUN_TIMEOUT_DEFAULT;
        c->run_max_file_bytes = RUN_MAX_FILE_BYTES_DEFAULT;
        c->run_max_total_bytes = RUN_MAX_TOTAL_BYTES_DEFAULT;
        c->run_max_files = RUN_MAX_FILES_DEFAULT;
        c->run_clone_max_bytes = RUN_CLONE_MAX_BYTES_DEFAULT;
        c->run_clone_max_object_bytes = RUN_CLONE_MAX_OBJECT_BYTES_DEFAULT;
        c->run_clone_max_files = RUN_CLONE_MAX_FILES_DEFAULT;
        c->run_clone_max_checkout_bytes = RUN_CLONE_MAX_CHECKOUT_BYTES_DEFAULT;
        c->run_clone_max_memory = RUN_CLONE_MAX_MEMORY_DEFAULT;
        return c;
}

int config_parse(const char *data, size_t size, Config **ret_config, AjError *reterr)
{
        _cleanup_(toml_freep) TomlValue *root = NULL;
        _cleanup_(config_freep) Config *c = NULL;
        State s = {};
        int r;

        assert(data || size == 0);
        assert(ret_config);

        if (size > CONFIG_MAX_SIZE)
                return aj_error(reterr, EFBIG, 0, 0, "larger than %d bytes", CONFIG_MAX_SIZE);
        r = toml_parse(data, size, &root, reterr);
        if (r < 0)
                return r;
        c = config_new();
        if (!c)
                return aj_error(reterr, ENOMEM, 0, 0, "out of memory");
        s.config = c;
        r = parse_root(reterr, root, &s);
        if (r < 0)
                return r;
        r = check_config(reterr, &s);
        if (r < 0)
                return r;
        *ret_config = TAKE_PTR(c);
        return 0;
}

int config_load_data(const char *path, Config **ret_config, char **ret_data, size_t *ret_size,
                     AjError *reterr)
{
        _cleanup_free_ char *data = NULL;
        AjError inner = {};
        size_t size = 0;
        int r;

        assert(path);
        assert(ret_config);

        r = read_file_for_parse(path, CONFIG_MAX_SIZE, &data, &size, reterr);
        if (r < 0)
                return r;
        r = config_parse(data, size, ret_config, &inner);
        if (r < 0)
                return aj_error_in_file(reterr, r, path, &inner);
        if (ret_data)
                *ret_data = TAKE_PTR(data);
        if (ret_size)
                *ret_size = size;
        return 0;
}

int config_load_trusted(const char *path, Config **ret_config, char **ret_data, size_t *ret_size,
                        AjError *reterr)
{
        AjError inner = {};
        int r = trusted_path_check(path, &inner);

        if (r == -ENOENT && strcmp(path, CONFIG_PATH) == 0)
                return aj_error(reterr, ENOENT, 0, 0, "%s: %s: " CONFIG_NOT_SET_UP, path, inner.message);
        if (r < 0)
                return aj_error(reterr, -r, 0, 0, "%s: %s", path, inner.message);
        return config_load_data(path, ret_config, ret_data, ret_size, reterr);
}

int config_load(const char *path, Config **ret_config, AjError *reterr)
{
        /* Every command but setup reads the installed one: its absence is a machine not set up yet. (Not
         * in config_load_data(), which setup calls on the file it is given, whatever its path.) */
        int r = config_load_data(path, ret_config, NULL, NULL, reterr);

        if (r == -ENOENT && strcmp(path, CONFIG_PATH) == 0)
                return aj_error(reterr, ENOENT, 0, 0, "%s: %s: " CONFIG_NOT_SET_UP, path, strerror(ENOENT));
        return r;
}
