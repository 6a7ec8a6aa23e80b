/*
 * plan_wire: a run's plan as bytes, for the exec'd init (init.c), which
 * holds nothing of the server's memory and so gets the plan in a memfd.
 * The layout: the struct itself, then every string the init reads; each
 * pointer of the copy is its string's offset + 1 in the bytes (0: NULL).
 * What only the parent reads (the protected paths, the owned copies) is
 * not packed, and is zero in the init's plan. The filters are the init's
 * own copies of the same const programs, named by a flag.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* Pointers of a packed plan are offsets; a filter is one of these. */
#define WIRE_FILTER	((uintptr_t)1)
/*
 * Before the struct: what says the server and the init read one layout
 * (a mixed install, an init_path of another build); a mismatch is
 * refused, never read as some other field. Bump the version with any
 * change of struct sb_plan's meaning that keeps its size.
 */
#define WIRE_MAGIC	0x6d63702d706c616eULL	/* "mcp-plan" */
#define WIRE_VERSION	4u
struct wire_head {
	uint64_t magic;
	uint32_t version;
	uint32_t plan_size;
};
#define WIRE_HEAD	((sizeof(struct wire_head) + 15) & ~(size_t)15)

struct wire {
	char *buf;
	size_t len, cap;
	int err;
};

static uintptr_t
put_bytes(struct wire *w, const void *s, size_t n)
{
	size_t off = w->len, need = (n + 1 + 7) & ~(size_t)7;
	char *nb;

	if (w->err != 0)
		return 0;
	if (w->cap - w->len < need) {
		size_t cap = w->cap * 2 > w->len + need ? w->cap * 2 :
		    w->len + need;

		if ((nb = realloc(w->buf, cap)) == NULL) {
			w->err = ENOMEM;
			return 0;
		}
		w->buf = nb;
		w->cap = cap;
	}
	memcpy(w->buf + off, s, n);
	memset(w->buf + off + n, 0, need - n);
	w->len += need;
	return (uintptr_t)off + 1;
}

static const char *
put_str(struct wire *w, const char *s)
{
	return s == NULL ? NULL : (const char *)put_bytes(w, s, strlen(s));
}

/* All of buf to fd. */
int
sb_write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int
sb_plan_pack(const struct sb_plan *p, int *ret)
{
	struct wire w = { .cap = WIRE_HEAD + sizeof(*p) + 16384 };
	const struct wire_head head = { .magic = WIRE_MAGIC,
	    .version = WIRE_VERSION, .plan_size = (uint32_t)sizeof(*p) };
	struct sb_plan *q;
	size_t i;
	int fd, rc;

	if ((w.buf = malloc(w.cap)) == NULL)
		return -ENOMEM;
	w.len = WIRE_HEAD + ((sizeof(*p) + 7) & ~(size_t)7);
	memset(w.buf, 0, WIRE_HEAD);
	memcpy(w.buf, &head, sizeof(head));
	q = (struct sb_plan *)(void *)(w.buf + WIRE_HEAD);
	memcpy(q, p, sizeof(*p));
	memset(q->prot, 0, sizeof(q->prot));
	q->nprot = 0;
	q->ws_host = NULL;
	memset(q->owned, 0, sizeof(q->owned));
	q->nowned = 0;
	/* q moves with w.buf: each field is written through the new base */
#define PUT(field, expr) do {						\
		uintptr_t v_ = (uintptr_t)(expr);			\
		((struct sb_plan *)(void *)(w.buf + WIRE_HEAD))->field =	\
		    (void *)v_;						\
	} while (0)
	PUT(staging, put_str(&w, p->staging));
	PUT(root_opts, put_str(&w, p->root_opts));
	PUT(hostname, put_str(&w, p->hostname));
	PUT(cwd, put_str(&w, p->cwd));
	for (i = 0; i < p->nmops && i < SB_MAX_MOPS; i++) {
		const struct sb_mop *m = &p->mops[i];

		PUT(mops[i].path, put_str(&w, m->path));
		PUT(mops[i].host, put_str(&w, m->host));
		PUT(mops[i].arg, m->arg == NULL ? 0 :
		    put_bytes(&w, m->arg, m->arg_len));
	}
	for (i = 0; i < p->nll_rules && i < SB_MAX_LANDLOCK_RULES; i++)
		PUT(ll_rules[i].path, put_str(&w, p->ll_rules[i].path));
	PUT(filter, p->filter != NULL ? WIRE_FILTER : 0);
	PUT(sysv_filter, p->sysv_filter != NULL ? WIRE_FILTER : 0);
	PUT(memfd_filter, p->memfd_filter != NULL ? WIRE_FILTER : 0);
#undef PUT
	if (w.err == 0 && w.len > SB_PLAN_WIRE_MAX)
		w.err = E2BIG;
	if (w.err != 0) {
		free(w.buf);
		return -w.err;
	}
	if ((fd = memfd_create("sb-plan", MFD_CLOEXEC | MFD_ALLOW_SEALING)) <
	    0) {
		free(w.buf);
		return -errno;
	}
	rc = sb_write_all(fd, w.buf, w.len);
	free(w.buf);
	/* as written, for good: the init maps it */
	if (rc == 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK |
	    F_SEAL_GROW | F_SEAL_SEAL) < 0)
		rc = -errno;
	if (rc < 0) {
		(void)close(fd);
		return rc;
	}
	*ret = fd;
	return 0;
}

/* The string at packed offset v, NUL-terminated within len; NULL if 0. */
static int
get_str(char *base, size_t len, const char **s)
{
	uintptr_t v = (uintptr_t)*s;

	if (v == 0)
		return 0;
	if (v - 1 >= len || memchr(base + v - 1, '\0', len - (v - 1)) == NULL)
		return -EINVAL;
	*s = base + v - 1;
	return 0;
}

int
sb_plan_unpack(int fd, const struct sb_filters *f, struct sb_plan **ret)
{
	struct stat st;
	struct sb_plan *p;
	char *base;
	size_t len, i;
	int rc = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	len = (size_t)st.st_size;
	if (len < WIRE_HEAD + sizeof(*p) || len > SB_PLAN_WIRE_MAX)
		return -EINVAL;
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	{
		struct wire_head h;

		memcpy(&h, base, sizeof(h));
		if (h.magic != WIRE_MAGIC || h.version != WIRE_VERSION ||
		    h.plan_size != sizeof(*p)) {
			(void)munmap(base, len);
			return -EPROTO;
		}
	}
	p = (struct sb_plan *)(void *)(base + WIRE_HEAD);
	if (p->nmops > SB_MAX_MOPS || p->nll_rules > SB_MAX_LANDLOCK_RULES ||
	    p->nrlimits > SB_MAX_RLIMITS || p->nfds < 0 ||
	    p->nfds > SB_FD_FIRST_BIND - SB_FD_STATUS ||
	    p->last_cap < 0 || p->last_cap > 63)
		rc = -EINVAL;
	for (i = 0; rc == 0 && i < p->nrlimits; i++)
		if (p->rlimits[i].resource < 0 ||
		    p->rlimits[i].resource >= SB_MAX_RLIMITS)
			rc = -EINVAL;
	for (i = 0; rc == 0 && i < p->nmops; i++) {
		struct sb_mop *m = &p->mops[i];
		const char *arg = m->arg;

		if ((unsigned)m->kind > SB_MOP_TREE ||
		    (m->kind == SB_MOP_BIND && (m->fd < SB_FD_FIRST_BIND ||
		    m->fd >= SB_FD_FIRST_BIND + SB_MAX_MOPS)) ||
		    (m->kind == SB_MOP_TREE && (m->fd < SB_FD_TREE ||
		    m->fd >= SB_FD_TREE + SB_MAX_TREES))) {
			rc = -EINVAL;
			break;
		}
		if ((rc = get_str(base, len, &m->path)) < 0 ||
		    (rc = get_str(base, len, &m->host)) < 0 ||
		    (rc = get_str(base, len, &arg)) < 0)
			break;
		/* the bytes of arg, with its NUL, lie inside */
		if (arg != NULL && m->arg_len >= len - (size_t)(arg - base))
			rc = -EINVAL;
		m->arg = arg;
	}
	for (i = 0; rc == 0 && i < p->nll_rules; i++)
		rc = get_str(base, len, &p->ll_rules[i].path);
	if (rc == 0 && (get_str(base, len, &p->staging) < 0 ||
	    get_str(base, len, &p->root_opts) < 0 ||
	    get_str(base, len, &p->hostname) < 0 ||
	    get_str(base, len, &p->cwd) < 0))
		rc = -EINVAL;
	if (rc == 0 && (p->staging == NULL || p->root_opts == NULL ||
	    p->hostname == NULL || p->cwd == NULL || p->filter == NULL))
		rc = -EINVAL;
	if (rc < 0) {
		(void)munmap(base, len);
		return rc;
	}
	p->filter = f->main;
	p->sysv_filter = p->sysv_filter != NULL ? f->sysv : NULL;
	p->memfd_filter = p->memfd_filter != NULL ? f->memfd : NULL;
	*ret = p;
	return 0;
}
