/*
 * What a python started ahead (pool.h's python kind) reads for its call:
 * the format its wrapper (pool.c) and its feeders (run_code.c, repl.c)
 * share, apart from both so that neither includes the other.
 */
#ifndef WARM_H
#define WARM_H

#include <stddef.h>
#include <stdint.h>

/*
 * The stdin a waiting python takes for one call, owned (free it): a header
 * line with the byte lengths of the code and of each argument, then
 * those bytes, then the call's stdin. NULL on allocation failure.
 */
char *warm_stdin(const char *code, const char *const *args, size_t nargs,
    const void *in, size_t in_len, size_t *ret_len);

#endif
