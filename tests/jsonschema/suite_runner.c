/*
 * Runs the official JSON-Schema-Test-Suite (draft2020-12, copied beside this
 * file) through schemas/validator. Every group is run unless skips[] names it
 * with the text its compile error must contain: a group that fails to compile
 * without a listed reason is a failure, and so is a listed skip that compiles.
 * optional/ is run too; its known ECMA-262/bignum differences are listed in
 * diffs[] and must still differ (a stale entry fails).
 * Usage: jsonschema-suite DATA_DIR [-v]
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "validator.h"

/* Nesting of the suite files themselves. */
#define SUITE_JSON_DEPTH 256
/* Largest suite file we read (the biggest is ~60 KiB). */
#define SUITE_FILE_MAX (4 * 1024 * 1024)

/* A group whose schema must fail to compile, and why. group NULL: every group of the file. */
struct skip {
	const char *file;
	const char *group;
	const char *needle;	/* must appear in the compile error */
	const char *reason;
};

/* A test that runs but whose outcome differs from the suite, and why. test NULL: every test. */
struct diff {
	const char *file;
	const char *group;
	const char *test;
	const char *reason;
};

#define R_REMOTE "remote refs (another document): no network fetch"
#define R_DYN "$dynamicRef/$dynamicAnchor unsupported"
#define R_DYNANCHOR "$ref to a $dynamicAnchor: $dynamicAnchor unsupported"
#define R_META "$ref to the 2020-12 metaschema: remote, no network fetch"
#define R_CONTENT "content* keywords unsupported (rejected, not silently ignored)"
#define R_UNKNOWN "unknown keywords are rejected by project rule"
#define R_DIALECT "custom metaschemas/vocabularies: only the 2020-12 dialect is accepted in $schema"
#define R_DEPS "dependencies (pre-2019-09 keyword) is not 2020-12: rejected"

#include "suite_skips.inc"

struct counts {
	unsigned passed, failed, skipped_groups, known_diffs, groups;
};

static bool verbose;

static char *
read_file(const char *path, size_t *len)
{
	FILE *f;
	char *buf;
	size_t n;

	if ((f = fopen(path, "rbe")) == NULL)
		return NULL;
	if ((buf = malloc(SUITE_FILE_MAX + 1)) == NULL) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, SUITE_FILE_MAX, f);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static struct json_object *
parse_file(const char *path)
{
	struct json_tokener *tok;
	struct json_object *j;
	char *text;
	size_t len;

	if ((text = read_file(path, &len)) == NULL)
		return NULL;
	tok = json_tokener_new_ex(SUITE_JSON_DEPTH);
	j = json_tokener_parse_ex(tok, text, (int)len);
	if (json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(j);
		j = NULL;
	}
	json_tokener_free(tok);
	free(text);
	return j;
}

static const struct skip *
find_skip(const char *file, const char *group)
{
	size_t i;

	for (i = 0; i < sizeof(skips) / sizeof(skips[0]); i++)
		if (strcmp(skips[i].file, file) == 0 &&
		    (skips[i].group == NULL || strcmp(skips[i].group, group) == 0))
			return &skips[i];
	return NULL;
}

static const struct diff *
find_diff(const char *file, const char *group, const char *test)
{
	size_t i;

	for (i = 0; diffs[i].file != NULL; i++)
		if (strcmp(diffs[i].file, file) == 0 && strcmp(diffs[i].group, group) == 0 &&
		    (diffs[i].test == NULL || strcmp(diffs[i].test, test) == 0))
			return &diffs[i];
	return NULL;
}

static void
run_tests(const char *file, const char *gdesc, const struct schema *s,
    const struct json_object *tests, struct counts *n)
{
	struct schema_error e;
	struct json_object *t, *v;
	const struct diff *d;
	const char *tdesc;
	enum mcp_err st;
	bool want, got;
	size_t i;

	for (i = 0; i < json_object_array_length(tests); i++) {
		t = json_object_array_get_idx(tests, i);
		json_object_object_get_ex(t, "description", &v);
		tdesc = json_object_get_string(v);
		json_object_object_get_ex(t, "valid", &v);
		want = json_object_get_boolean(v);
		json_object_object_get_ex(t, "data", &v);
		st = schema_validate(s, v, &e);
		got = st == MCP_OK;
		if (st != MCP_OK && st != MCP_ERR_INVALID_PARAMS) {
			printf("FAIL %s: \"%s\": \"%s\": validate error %d: %s\n", file, gdesc,
			    tdesc, (int)st, e.message);
			n->failed++;
			continue;
		}
		d = find_diff(file, gdesc, tdesc);
		if (d != NULL && got != want) {
			printf("known difference %s: \"%s\": \"%s\": %s\n", file, gdesc, tdesc,
			    d->reason);
			n->known_diffs++;
		} else if (d != NULL) {
			printf("FAIL %s: \"%s\": \"%s\": listed as a known difference but passes\n",
			    file, gdesc, tdesc);
			n->failed++;
		} else if (got != want) {
			printf("FAIL %s: \"%s\": \"%s\": expected %s, got %s (%s)\n", file, gdesc,
			    tdesc, want ? "valid" : "invalid", got ? "valid" : "invalid",
			    e.message);
			n->failed++;
		} else {
			if (verbose)
				printf("ok %s: \"%s\": \"%s\"\n", file, gdesc, tdesc);
			n->passed++;
		}
	}
}

static void
run_group(const char *file, const struct json_object *g, struct counts *n)
{
	char err[512];
	struct json_object *schema, *tests, *v;
	struct schema *s = NULL;
	const struct skip *sk;
	const char *gdesc;
	enum mcp_err st;

	n->groups++;
	json_object_object_get_ex(g, "description", &v);
	gdesc = json_object_get_string(v);
	json_object_object_get_ex(g, "schema", &schema);
	json_object_object_get_ex(g, "tests", &tests);
	sk = find_skip(file, gdesc);
	st = schema_compile(schema, &s, err, sizeof(err));
	if (st != MCP_OK && sk != NULL && strstr(err, sk->needle) != NULL) {
		printf("skip %s: \"%s\": %s\n", file, gdesc, sk->reason);
		n->skipped_groups++;
		return;
	}
	if (st != MCP_OK) {
		printf("FAIL %s: \"%s\": schema does not compile: %s\n", file, gdesc, err);
		n->failed++;
		return;
	}
	if (sk != NULL && sk->group != NULL) {
		printf("FAIL %s: \"%s\": listed as a skip (%s) but compiles\n", file, gdesc,
		    sk->reason);
		n->failed++;
	} else {
		run_tests(file, gdesc, s, tests, n);
	}
	schema_free(s);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every *.json in dir/sub (sorted); sub "" or "optional/". */
static int
run_dir(const char *dir, const char *sub, struct counts *n)
{
	char path[4096], rel[512], *names[256];
	struct json_object *doc;
	struct dirent *de;
	size_t cnt = 0, i, k, len;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	if ((d = opendir(path)) == NULL) {
		fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL && cnt < 256) {
		len = strlen(de->d_name);
		if (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0)
			names[cnt++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, cnt, sizeof(names[0]), name_cmp);
	for (i = 0; i < cnt; i++) {
		snprintf(rel, sizeof(rel), "%s%s", sub, names[i]);
		snprintf(path, sizeof(path), "%s/%s", dir, rel);
		if ((doc = parse_file(path)) == NULL) {
			printf("FAIL %s: cannot read or parse\n", rel);
			n->failed++;
			free(names[i]);
			continue;
		}
		for (k = 0; k < json_object_array_length(doc); k++)
			run_group(rel, json_object_array_get_idx(doc, k), n);
		json_object_put(doc);
		free(names[i]);
	}
	return 0;
}

/* optional/format/: format is an annotation here, so every group is a skip. */
static int
count_format(const char *dir, struct counts *n)
{
	char path[4096];
	struct json_object *doc;
	struct dirent *de;
	size_t len, files = 0, groups = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/optional/format", dir);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/optional/format/%s", dir, de->d_name);
		if ((doc = parse_file(path)) == NULL)
			continue;
		files++;
		groups += json_object_array_length(doc);
		json_object_put(doc);
	}
	closedir(d);
	printf("skip optional/format/ (%zu files, %zu groups): format is an annotation only "
	    "(no format assertion)\n", files, groups);
	n->skipped_groups += (unsigned)groups;
	n->groups += (unsigned)groups;
	return 0;
}

int
main(int argc, char **argv)
{
	struct counts req = { 0 }, opt = { 0 };

	if (argc < 2) {
		fprintf(stderr, "usage: %s DATA_DIR [-v]\n", argv[0]);
		return 2;
	}
	verbose = argc > 2 && strcmp(argv[2], "-v") == 0;
	if (run_dir(argv[1], "", &req) < 0 || run_dir(argv[1], "optional/", &opt) < 0 ||
	    count_format(argv[1], &opt) < 0)
		return 2;
	printf("groups: %u required (%u run), %u optional (%u run)\n", req.groups,
	    req.groups - req.skipped_groups, opt.groups, opt.groups - opt.skipped_groups);
	printf("json-schema-test-suite optional: %u passed, %u failed, %u known differences, "
	    "%u groups skipped\n", opt.passed, opt.failed, opt.known_diffs, opt.skipped_groups);
	printf("json-schema-test-suite: %u passed, %u failed, %u groups skipped\n", req.passed,
	    req.failed, req.skipped_groups);
	return req.failed == 0 && opt.failed == 0 ? 0 : 1;
}
