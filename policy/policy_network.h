/*
 * The policy's network section (policy_network.c): the config key, the
 * flags and --print-config, for policy.c only (json-c stays inside the
 * policy library). policy.h has what others use: policy_network_enabled()
 * and policy_network_summary(). The rules are egress/egress.h.
 */
#ifndef POLICY_NETWORK_H
#define POLICY_NETWORK_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

struct policy;
struct egress_rules;

/* Empty rules with the default bounds (owned), or NULL. */
struct egress_rules *policy_network_new(void);

/*
 * Applies the value of the config key "network". 0, or -1 with *key the
 * member at fault (NULL: the value itself) and msg saying why.
 */
int policy_network_cfg(struct policy *p, struct json_object *v,
    const char **key, char *msg, size_t msglen)
    __attribute__((warn_unused_result));

/* One flag: 1 if it was a network flag and applied, 0 if it is not one,
 * -1 with msg when its value is refused. */
int policy_network_flag(struct policy *p, const char *flag, const char *value,
    char *msg, size_t msglen) __attribute__((warn_unused_result));

/* The section as --print-config shows it (false when off). Owned. */
struct json_object *policy_network_json(const struct policy *p);

#endif
