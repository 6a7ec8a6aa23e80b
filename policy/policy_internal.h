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

#endif
