/*
 * SHA-256 (FIPS 180-4): the audit log's digest of arguments, the bearer
 * tokens', a skill file's (tools/skill_catalog.c).
 */
#ifndef SHA256_H
#define SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN	32

void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

#endif
