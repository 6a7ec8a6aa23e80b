/*
 * The policy's protected_paths: names at the top of the workspace that run
 * code on the host when its owner next uses them (.git: hooks, config's
 * core.fsmonitor, core.hooksPath and aliases; .hg: hgrc hooks). Every
 * sandbox mounts the ones that exist read-only (sandbox/, workspace_protect)
 * and write_file refuses paths under any of them, existing or not. An empty
 * list turns the protection off. Kept apart from policy.c: its own key, its
 * own parser.
 */
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "policy_internal.h"

void
policy_protect_clear(struct policy *p)
{
	size_t i;

	for (i = 0; i < p->nprotect; i++)
		free(p->protect[i]);
	p->nprotect = 0;
	p->protect[0] = NULL;
}

/* One path component, printable, not "." or "..", POLICY_MAX_NAME at most. */
static bool
protect_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > POLICY_MAX_NAME || strcmp(s, ".") == 0 ||
	    strcmp(s, "..") == 0)
		return false;
	for (i = 0; i < n; i++)
		if (s[i] == '/' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

int
policy_protect_set(struct policy *p, struct json_object *v, char *msg,
    size_t msglen)
{
	size_t i, j, n;

	if (!json_object_is_type(v, json_type_array)) {
		(void)snprintf(msg, msglen, "must be an array of names");
		return -1;
	}
	n = json_object_array_length(v);
	if (n > POLICY_MAX_PROTECT) {
		(void)snprintf(msg, msglen, "at most %d names",
		    POLICY_MAX_PROTECT);
		return -1;
	}
	policy_protect_clear(p);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		const char *s;

		if (!json_object_is_type(e, json_type_string) ||
		    strlen(s = json_object_get_string(e)) !=
		    (size_t)json_object_get_string_len(e) ||
		    !protect_name_ok(s)) {
			(void)snprintf(msg, msglen, "entry %zu: must be one "
			    "file or directory name of the workspace's top "
			    "(no '/', not \".\" or \"..\")", i);
			goto fail;
		}
		for (j = 0; j < p->nprotect; j++)
			if (strcmp(p->protect[j], s) == 0)
				break;
		if (j < p->nprotect)
			continue;	/* listed twice: once is enough */
		if ((p->protect[p->nprotect] = strdup(s)) == NULL) {
			(void)snprintf(msg, msglen, "out of memory");
			goto fail;
		}
		p->protect[++p->nprotect] = NULL;
	}
	return 0;
 fail:
	policy_protect_clear(p);
	return -1;
}

struct json_object *
policy_protect_json(const struct policy *p)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; a != NULL && i < p->nprotect; i++)
		json_object_array_add(a, json_object_new_string(p->protect[i]));
	return a;
}

/*
 * true if rel (a workspace-relative path as write_file walks it: "" and
 * "." components skipped, ".." and symlinks refused by the walk itself)
 * starts with a protected name.
 */
bool
policy_path_protected(const struct policy *p, const char *rel)
{
	size_t i, n;

	while (rel[0] == '/' || (rel[0] == '.' && (rel[1] == '/' ||
	    rel[1] == '\0'))) {
		rel += rel[0] == '/' ? 1 : 1 + (rel[1] == '/');
	}
	n = strcspn(rel, "/");
	for (i = 0; i < p->nprotect; i++)
		if (strlen(p->protect[i]) == n &&
		    strncmp(p->protect[i], rel, n) == 0)
			return true;
	return false;
}
