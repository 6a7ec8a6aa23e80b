/*
 * Unit tests of a SKILL.md frontmatter read as the Skills extension's
 * entries carry it (tools/skill_catalog.h, skill_frontmatter): the YAML
 * subset the Agent Skills format uses, typed as YAML 1.2's core schema
 * types plain scalars, and everything beyond that refused with its line.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <json-c/json.h>

#include "skill_catalog.h"

/* text's frontmatter as compact JSON, or "ERR: why". Owned. */
static char *
fm(const char *text)
{
	struct json_object *o;
	char err[256], *s;

	o = skill_frontmatter(text, strlen(text), err, sizeof(err));
	if (o == NULL) {
		s = malloc(strlen(err) + 6);
		strcpy(s, "ERR: ");
		strcat(s, err);
		return s;
	}
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

static void
is(const char *text, const char *want)
{
	char *got = fm(text);

	ck_assert_msg(strcmp(got, want) == 0, "for\n%s\ngot  %s\nwant %s", text,
	    got, want);
	free(got);
}

START_TEST(scalars_are_typed_as_yaml_core_types_them)
{
	is("---\nname: pdf\ndescription: Fill forms\n---\n# body\n",
	    "{\"name\":\"pdf\",\"description\":\"Fill forms\"}");
	is("---\na: true\nb: False\nc: ~\nd:\ne: 12\nf: -3.5\ng: 1e3\n"
	    "h: 0.1.2\ni: yes\nj: 007\n---\n",
	    "{\"a\":true,\"b\":false,\"c\":null,\"d\":null,\"e\":12,"
	    "\"f\":-3.5,\"g\":1000.0,\"h\":\"0.1.2\",\"i\":\"yes\",\"j\":7}");
	is("---\nurl: http://x/y # a comment\nhash: a#b\n---\n",
	    "{\"url\":\"http:\\/\\/x\\/y\",\"hash\":\"a#b\"}");
}
END_TEST

START_TEST(quoted_and_block_scalars)
{
	is("---\na: \"x: \\\"y\\\"\\n\"\nb: 'it''s # not a comment'\n---\n",
	    "{\"a\":\"x: \\\"y\\\"\\n\",\"b\":\"it's # not a comment\"}");
	is("---\nd: >\n  one\n  two\n\n  three\nn: x\n---\n",
	    "{\"d\":\"one two\\nthree\\n\",\"n\":\"x\"}");
	is("---\nd: |\n  one\n    two\n  three\n---\n",
	    "{\"d\":\"one\\n  two\\nthree\\n\"}");
}
END_TEST

START_TEST(a_map_or_a_list_one_level_down)
{
	is("---\nname: s\nmetadata:\n  version: \"2.1\"\n  author: me\n"
	    "tags:\n  - a\n  - 'b c'\n---\n",
	    "{\"name\":\"s\",\"metadata\":{\"version\":\"2.1\",\"author\":\"me\"},"
	    "\"tags\":[\"a\",\"b c\"]}");
	is("---\n# a comment\nname: s\n\n---\n", "{\"name\":\"s\"}");
	is("---\r\nname: s\r\n---\r\n", "{\"name\":\"s\"}");
}
END_TEST

START_TEST(what_it_does_not_take_is_refused_with_its_line)
{
	is("# no frontmatter\n",
	    "ERR: line 1 of the frontmatter: SKILL.md does not begin with a "
	    "--- line");
	is("---\nname: s\n", "ERR: line 3 of the frontmatter: no closing "
	    "--- line");
	is("---\ntags: [a, b]\n---\n", "ERR: line 2 of the frontmatter: YAML "
	    "this reader does not take (flow collections, anchors, aliases, "
	    "tags, directives)");
	is("---\na: &x 1\n---\n", "ERR: line 2 of the frontmatter: YAML this "
	    "reader does not take (flow collections, anchors, aliases, tags, "
	    "directives)");
	is("---\nm:\n  k:\n    deeper: 1\n---\n", "ERR: line 4 of the "
	    "frontmatter: nesting deeper than one level");
	is("---\nname: a\nname: b\n---\n", "ERR: line 3 of the frontmatter: a "
	    "key given twice");
	is("---\na: \"open\n---\n", "ERR: line 2 of the frontmatter: a quoted "
	    "scalar that does not end on its line");
	is("---\nd: |-\n  x\n---\n", "ERR: line 2 of the frontmatter: a block "
	    "scalar's chomping indicator");
	is("---\n\ta: 1\n---\n", "ERR: line 2 of the frontmatter: a tab in the "
	    "indentation");
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("tools_skill");
	TCase *tc = tcase_create("frontmatter");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, scalars_are_typed_as_yaml_core_types_them);
	tcase_add_test(tc, quoted_and_block_scalars);
	tcase_add_test(tc, a_map_or_a_list_one_level_down);
	tcase_add_test(tc, what_it_does_not_take_is_refused_with_its_line);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
