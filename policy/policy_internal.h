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
