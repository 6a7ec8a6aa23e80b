/* Lookup in the embedded schema table. */
#include <string.h>

#include "schema_files.h"

const struct schema_file *
schema_file_find(const char *name)
{
	size_t i;

	for (i = 0; i < schema_files_count; i++)
		if (strcmp(schema_files[i].name, name) == 0)
			return &schema_files[i];
	return NULL;
}
