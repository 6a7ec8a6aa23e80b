/*
 * spares: what each run needs new and costs the most to make (its ipc
 * namespace with its limits, some 0.1 ms of unshare and sysctl writes; its
 * cgroup, some 0.15 ms of mkdir in each hierarchy and limit writes), made
 * ahead by sb_ctx_prepare() for the figures of the last run, so that a
 * call that finds one takes it instead of making its own. The server
 * prepares after it has answered a call, off that call's path. A spare is
 * never used twice: each is as fresh as what a run makes itself, and one
 * whose figures no longer match the runs is removed, not reused.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

void
sb_spares_init(struct sb_spares *sp)
{
	memset(sp, 0, sizeof(*sp));
	(void)pthread_mutex_init(&sp->lock, NULL);
	sp->inited = true;
}

void
sb_spares_fini(struct sb_ctx *ctx)
{
	struct sb_spares *sp = &ctx->spares;

	if (!sp->inited)
		return;
	while (sp->nipc > 0)
		(void)close(sp->ipc[--sp->nipc]);
	while (sp->ncg > 0)
		sb_cg_run_remove(&ctx->cg, &sp->cg[--sp->ncg]);
	while (sp->nretired > 0)
		sb_cg_run_remove(&ctx->cg, &sp->retired[--sp->nretired]);
	(void)pthread_mutex_destroy(&sp->lock);
	sp->inited = false;
}

/* The figures runs use now (the last plan's); spares are made for them. */
void
sb_spares_want(struct sb_ctx *ctx, const struct sb_plan *p)
{
	struct sb_spares *sp = &ctx->spares;

	(void)pthread_mutex_lock(&sp->lock);
	sp->want = true;
	sp->shmmax = p->shmmax;
	sp->shmall = p->shmall;
	sp->ipc_wanted = p->ipc_by_parent;
	sp->mem_bytes = p->limits.memory_bytes;
	sp->nproc = p->limits.nproc;
	(void)pthread_mutex_unlock(&sp->lock);
}

/* An ipc namespace made with exactly these limits, or -1. */
int
sb_spare_ipc_take(struct sb_ctx *ctx, uint64_t shmmax, uint64_t shmall)
{
	struct sb_spares *sp = &ctx->spares;
	int fd = -1;

	(void)pthread_mutex_lock(&sp->lock);
	if (sp->nipc > 0 && sp->ipc_shmmax == shmmax &&
	    sp->ipc_shmall == shmall)
		fd = sp->ipc[--sp->nipc];
	(void)pthread_mutex_unlock(&sp->lock);
	return fd;
}

/* A run cgroup made for exactly these figures into *r, or false. */
bool
sb_spare_cg_take(struct sb_ctx *ctx, const struct sb_limits *l,
    struct sb_cg_run *r)
{
	struct sb_spares *sp = &ctx->spares;
	bool got = false;

	(void)pthread_mutex_lock(&sp->lock);
	if (sp->ncg > 0 && sp->cg_mem == l->memory_bytes &&
	    sp->cg_nproc == l->nproc) {
		*r = sp->cg[--sp->ncg];
		got = true;
	}
	(void)pthread_mutex_unlock(&sp->lock);
	return got;
}

/*
 * A finished run's cgroup (its init reaped, so no task is left in it):
 * removed by the next prepare, or now when SB_RETIRED are waiting. Its
 * figures were read already (sb_cg_run_finish).
 */
void
sb_spare_cg_retire(struct sb_ctx *ctx, struct sb_cg_run *r)
{
	struct sb_spares *sp = &ctx->spares;
	bool kept = false;

	if (!r->made)
		return;
	(void)pthread_mutex_lock(&sp->lock);
	if (sp->inited && sp->nretired < SB_RETIRED) {
		sp->retired[sp->nretired++] = *r;
		sb_cg_run_init(r);
		kept = true;
	}
	(void)pthread_mutex_unlock(&sp->lock);
	if (!kept)
		sb_cg_run_remove(&ctx->cg, r);
}

/* One ipc namespace with the limits, entered and left again: its fd. */
static int
make_ipc(struct sb_ctx *ctx, uint64_t shmmax, uint64_t shmall)
{
	int fd, rc;

	if ((rc = sb_ipc_make(ctx, shmmax, shmall)) < 0)
		return rc;
	fd = open("/proc/thread-self/ns/ipc", O_RDONLY | O_CLOEXEC);
	rc = fd < 0 ? -errno : 0;
	/* back home; should that fail, the next run's ipc_enter comes back
	 * from wherever this thread is (it only ever unshares or setns) */
	if (setns(ctx->ipc_home_fd, CLONE_NEWIPC) < 0 && rc == 0) {
		rc = -errno;
		(void)close(fd);
	}
	return rc < 0 ? rc : fd;
}

void
sb_ctx_prepare(struct sb_ctx *ctx)
{
	struct sb_spares *sp;
	struct sb_limits l;
	struct sb_cg_run run, stale[SB_SPARES];
	struct sb_result res;
	uint64_t shmmax, shmall;
	unsigned nstale = 0, i;
	int fd, stale_ipc[SB_SPARES], nstale_ipc = 0;
	bool ipc, cg, cg_ok;

	if (ctx == NULL || !ctx->spares.inited)
		return;
	sp = &ctx->spares;
	(void)pthread_mutex_lock(&sp->lock);
	while (sp->nretired > 0) {
		run = sp->retired[--sp->nretired];
		(void)pthread_mutex_unlock(&sp->lock);
		sb_cg_run_remove(&ctx->cg, &run);
		(void)pthread_mutex_lock(&sp->lock);
	}
	if (!sp->want) {
		(void)pthread_mutex_unlock(&sp->lock);
		return;
	}
	/* figures changed: what was made for the old ones goes */
	if (sp->ipc_shmmax != sp->shmmax || sp->ipc_shmall != sp->shmall ||
	    !sp->ipc_wanted)
		while (sp->nipc > 0)
			stale_ipc[nstale_ipc++] = sp->ipc[--sp->nipc];
	if (sp->cg_mem != sp->mem_bytes || sp->cg_nproc != sp->nproc)
		while (sp->ncg > 0)
			stale[nstale++] = sp->cg[--sp->ncg];
	sp->ipc_shmmax = shmmax = sp->shmmax;
	sp->ipc_shmall = shmall = sp->shmall;
	sp->cg_mem = sp->mem_bytes;
	sp->cg_nproc = sp->nproc;
	memset(&l, 0, sizeof(l));
	l.memory_bytes = sp->mem_bytes;
	l.nproc = sp->nproc;
	ipc = sp->ipc_wanted && ctx->ipc_home_fd >= 0 &&
	    sp->nipc + sp->making_ipc < SB_SPARES;
	cg = ctx->cg.version != 0 && sp->ncg + sp->making_cg < SB_SPARES;
	sp->making_ipc += ipc;
	sp->making_cg += cg;
	(void)pthread_mutex_unlock(&sp->lock);

	for (i = 0; i < (unsigned)nstale_ipc; i++)
		(void)close(stale_ipc[i]);
	for (i = 0; i < nstale; i++)
		sb_cg_run_remove(&ctx->cg, &stale[i]);
	/* one of each per call answered: the spares refill as fast as runs
	 * take them, and a burst of calls makes its own meanwhile */
	fd = ipc ? make_ipc(ctx, shmmax, shmall) : -1;
	cg_ok = false;
	if (cg) {
		memset(&res, 0, sizeof(res));
		/* on failure the run makes its own, and says why */
		cg_ok = sb_cg_run_make(&ctx->cg, &l, &run, &res) == 0;
		sb_result_fini(&res);
	}
	(void)pthread_mutex_lock(&sp->lock);
	sp->making_ipc -= ipc;
	sp->making_cg -= cg;
	if (fd >= 0 && sp->ipc_shmmax == shmmax && sp->ipc_shmall == shmall &&
	    sp->nipc < SB_SPARES) {
		sp->ipc[sp->nipc++] = fd;
		fd = -1;
	}
	if (cg_ok && sp->cg_mem == l.memory_bytes && sp->cg_nproc == l.nproc &&
	    sp->ncg < SB_SPARES) {
		sp->cg[sp->ncg++] = run;
		cg_ok = false;
	}
	(void)pthread_mutex_unlock(&sp->lock);
	if (fd >= 0)
		(void)close(fd);
	if (cg_ok)
		sb_cg_run_remove(&ctx->cg, &run);
}
