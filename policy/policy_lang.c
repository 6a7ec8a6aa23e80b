/*
 * The names of the policy's languages. A file of its own because every
 * part of the policy needs them (policy.c for flags and JSON,
 * policy_binds.c for its report), and none of those may use another
 * that uses it back.
 */
#include <string.h>

#include "policy.h"

static const char *const lang_names[POLICY_LANG_COUNT] = {
	[POLICY_LANG_PYTHON3] = "python3",
	[POLICY_LANG_NODE] = "node",
	[POLICY_LANG_SH] = "sh",
	[POLICY_LANG_C] = "c",
};

const char *
policy_lang_name(enum policy_lang lang)
{
	if ((unsigned)lang >= POLICY_LANG_COUNT)
		return "?";
	return lang_names[lang];
}

int
policy_lang_from_name(const char *name)
{
	int i;

	for (i = 0; i < POLICY_LANG_COUNT; i++)
		if (strcmp(lang_names[i], name) == 0)
			return i;
	return -1;
}
