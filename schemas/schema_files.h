/*
 * The schema files (schemas/NAME.json), embedded at build time (embed.cmake).
 * The table is const and sorted by name; texts are NUL-terminated.
 */
#ifndef SCHEMA_FILES_H
#define SCHEMA_FILES_H

#include <stddef.h>

struct schema_file {
	const char *name;	/* file name, e.g. "calculate.input.json" */
	const char *text;	/* static, NUL-terminated */
	size_t len;		/* bytes, without the NUL */
};

extern const struct schema_file schema_files[];
extern const size_t schema_files_count;

/* The embedded file called name, or NULL. */
const struct schema_file *schema_file_find(const char *name);

#endif
