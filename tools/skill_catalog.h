/*
 * The Skills extension (SEP-2640, io.modelcontextprotocol/skills) over the
 * policy's skills directory: each skill's files as skill://NAME/PATH
 * resources, read beneath the skill folder pinned at start, and its entry
 * (the SKILL.md frontmatter verbatim, every file with its SHA-256 and
 * size) for skills/list and skills/get. run_skill_script stays the way to
 * run a skill's script, in the sandbox.
 */
#ifndef SKILL_CATALOG_H
#define SKILL_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

struct tool_env;

#define SKILLS_EXTENSION	"io.modelcontextprotocol/skills"
#define SKILL_URI_SCHEME	"skill://"
/*
 * The extension's limits per skill, which every host takes: files
 * (SKILL.md included) and their bytes in all. A skill past either is not
 * served (the server log says why).
 */
#define SKILL_MAX_FILES		512
#define SKILL_MAX_BYTES		(16u << 20)

/*
 * A SKILL.md's YAML frontmatter as a JSON object (skill_yaml.c), or NULL
 * with err saying why (the line, what this reader does not take).
 */
struct json_object *skill_frontmatter(const char *text, size_t len,
    char *err, size_t errlen);

/* Whether the policy has skills to serve (the extension is declared). */
bool skill_catalog_on(const struct tool_env *env);
/* Every servable skill's entry, appended to arr: 0, or -ENOMEM. */
int skill_catalog_list(const struct tool_env *env, struct json_object *arr);
/* The entry of the skill whose SKILL.md is uri: 0, -ENOENT, -ENOMEM. */
int skill_catalog_get(const struct tool_env *env, const char *uri,
    struct json_object **ret);
/* resources/list: each servable skill's SKILL.md, appended to arr. */
int skill_catalog_resources(const struct tool_env *env,
    struct json_object *arr);
/*
 * resources/directory/read of a skill:// directory (the skill's root,
 * skill://NAME, or a folder under it): its regular files and folders, a
 * resource each (folders as inode/directory), appended to arr: 0,
 * -ENOTDIR (no such directory of a served skill), -ENOMEM.
 */
int skill_catalog_directory(const struct tool_env *env, const char *uri,
    struct json_object *arr);
/*
 * resources/read of a skill:// uri into a new contents entry (*ret): 0;
 * -EINVAL when uri is not a skill:// uri; -ENOENT (no such skill or
 * file), or what wsr_read() returns for the file.
 */
int skill_catalog_read(const struct tool_env *env, const char *uri,
    struct json_object **ret);

#endif
