/* Shared between policy.c and policy_resolve.c only. */
#ifndef POLICY_INTERNAL_H
#define POLICY_INTERNAL_H

#include <stddef.h>

struct policy;

void policy_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void policy_skills_clear(struct policy *p);

#endif
