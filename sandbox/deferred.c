/*
 * deferred: the two byte strings of a sandbox built ahead of its call
 * (sb_request.deferred). Its shape: everything a request says that went
 * into building it, compared byte for byte at sb_finish() so that one
 * built for one shape never serves another. Its launch: what the call
 * brings, written to the waiting program's stdin (init.c reads it).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct buf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void
put(struct buf *b, const void *s, size_t n)
{
	char *np;
	size_t cap;

	if (b->failed || n == 0)
		return;
	if (b->cap - b->len < n) {
		cap = b->cap * 2 > b->len + n ? b->cap * 2 : b->len + n + 256;
		if ((np = realloc(b->p, cap)) == NULL) {
			b->failed = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* A string with its NUL; NULL as a lone 0xff (no string holds one alone). */
static void
put_str(struct buf *b, const char *s)
{
	if (s == NULL)
		put(b, "\xff", 2);
	else
		put(b, s, strlen(s) + 1);
}

static void
put_u64(struct buf *b, uint64_t v)
{
	put(b, &v, sizeof(v));
}

static char *
finish(struct buf *b, size_t *ret_len)
{
	if (b->failed) {
		free(b->p);
		return NULL;
	}
	*ret_len = b->len;
	return b->p;
}

char *
sb_shape_bytes(const struct sb_request *req, size_t *ret_len)
{
	const struct sb_limits *l = &req->limits;
	struct buf b = { NULL, 0, 0, false };
	size_t i;

	put_str(&b, req->workspace_host);
	put_str(&b, req->workspace_path != NULL ? req->workspace_path :
	    SB_DEFAULT_WORKSPACE);
	put_u64(&b, req->workspace_writable);
	for (i = 0; req->workspace_protect != NULL &&
	    req->workspace_protect[i] != NULL; i++)
		put_str(&b, req->workspace_protect[i]);
	put_u64(&b, req->workspace_protect != NULL ? i : UINT64_MAX);
	for (i = 0; i < req->nbinds; i++) {
		put_str(&b, req->binds[i].host_path);
		put_str(&b, req->binds[i].sandbox_path);
		put_u64(&b, req->binds[i].writable);
	}
	put_u64(&b, req->nbinds);
	put_u64(&b, (uint64_t)req->network);
	put_u64(&b, l->as_bytes);
	put_u64(&b, l->memory_bytes);
	put_u64(&b, l->fsize_bytes);
	put_u64(&b, l->nofile);
	put_u64(&b, l->nproc);
	put_u64(&b, l->tmp_bytes);
	put_u64(&b, l->stdout_cap);
	put_u64(&b, l->stderr_cap);
	return finish(&b, ret_len);
}

char *
sb_launch_bytes(const struct sb_request *req, size_t *ret_len,
    struct sb_result *res)
{
	const char *const *envp = req->envp != NULL ? req->envp :
	    sb_default_env;
	struct sb_launch_head h = { .magic = SB_LAUNCH_MAGIC,
	    .cpu_s = req->limits.cpu_s };
	struct buf b = { NULL, 0, 0, false };
	size_t i;

	put(&b, &h, sizeof(h));
	put_str(&b, req->program);
	for (i = 0; req->argv[i] != NULL; i++, h.argc++)
		put_str(&b, req->argv[i]);
	for (i = 0; envp[i] != NULL; i++, h.envc++)
		put_str(&b, envp[i]);
	if (b.failed || b.len - sizeof(h) > SB_LAUNCH_MAX ||
	    (size_t)h.argc + h.envc > SB_LAUNCH_MAX_STRINGS) {
		free(b.p);
		if (b.failed)
			sb_fail(res, SB_STAGE_RESOURCES, ENOMEM, "the launch");
		else
			(void)sb_request_fail(res, E2BIG, "argv and envp are "
			    "above SB_LAUNCH_MAX (2 MiB) or SB_LAUNCH_MAX_STRINGS "
			    "(131072 strings)");
		return NULL;
	}
	h.len = (uint32_t)(b.len - sizeof(h));
	memcpy(b.p, &h, sizeof(h));
	put(&b, req->stdin_data, req->stdin_len);
	return finish(&b, ret_len);
}
