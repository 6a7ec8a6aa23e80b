/*
 * The policy's secrets (policy_secret.c), for policy.c and
 * policy_resolve.c only; the secrets themselves are egress/egress.h's.
 */
#ifndef POLICY_SECRET_H
#define POLICY_SECRET_H

#include <stddef.h>

#include <json-c/json.h>

struct policy;

/* The "secrets" key: 0, or -1 with msg. */
int policy_secret_cfg(struct policy *p, struct json_object *v, char *msg,
    size_t msglen) __attribute__((warn_unused_result));
/* --secret, --egress-ca: 1 applied, 0 not one of them, -1 with msg. */
int policy_secret_flag(struct policy *p, const char *flag, const char *value,
    char *msg, size_t msglen) __attribute__((warn_unused_result));
/* At policy_finalize: the values read, the CA made, the bundle written. */
int policy_secrets_finalize(struct policy *p, char *err, size_t errlen)
    __attribute__((warn_unused_result));
/* --print-config's "secrets": names, hosts, sources; never a value. */
struct json_object *policy_secret_json(const struct policy *p);
/* Wipes the values, removes the bundle. */
void policy_secrets_free(struct policy *p);

#endif
