/* Shared between the files of policy/ only. */
#ifndef POLICY_INTERNAL_H
#define POLICY_INTERNAL_H

#include <stddef.h>

struct policy;

void policy_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void policy_skills_clear(struct policy *p);

/* policy_protect.c: the protected_paths key. set: 0, or -1 with msg. */
struct json_object;
int policy_protect_set(struct policy *p, struct json_object *v, char *msg,
    size_t msglen) __attribute__((warn_unused_result));
void policy_protect_clear(struct policy *p);
struct json_object *policy_protect_json(const struct policy *p);
/*
 * policy_json.c: NULL when text (len bytes) holds nothing RFC 8259 refuses
 * that json-c's strict mode lets through (comments, single quotes, NaN,
 * Infinity, "1.", raw control characters in strings); else a sentence
 * saying what, with *where its offset. The structure is json-c's to check.
 */
const char *policy_json_not_rfc8259(const char *text, size_t len,
    size_t *where);
/* After json-c stopped at text[end]: a plainer sentence, or NULL. */
const char *policy_json_explain(const char *text, size_t end);

struct policy_database;
struct json_object;

/* --print-config: every bind, per command and language, and the allowed
 * paths (owned JSON object; policy_binds.c). */
struct json_object *binds_to_json(const struct policy *p);

/*
 * Pins d->path (absolute, canonical): opens its directory O_PATH, checks
 * that the last component is a regular file (not a symlink) and records
 * its st_dev/st_ino. 0, or -1 with err.
 */
int policy_pin_database(struct policy_database *d, char *err, size_t errlen)
    __attribute__((warn_unused_result));

/* Closes what policy_pin_database opened; safe on an unpinned entry. */
void policy_unpin_database(struct policy_database *d);


#endif
