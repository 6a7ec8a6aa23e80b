/*
 * netns: a pool of empty network namespaces, each lent to one sandbox at a
 * time and taken back only after that sandbox's init was reaped (so every
 * process, socket and abstract name of the previous run is gone). Joining
 * one costs a setns(); creating a fresh one costs ~0.6 ms and more on
 * teardown. Needs CAP_SYS_ADMIN (a root server); otherwise runs create a
 * fresh netns each. Loopback stays down (network none), except in the
 * namespaces made for proxy runs, which never serve another kind; a pool
 * full of the other kind sends a run to a fresh netns. The pool grows on
 * demand up to its size, so a server that never runs a sandbox (or starts
 * and stops at once) makes none.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/*
 * Create one empty netns with this thread and come back home; with lo_up,
 * its loopback raised (for SB_NET_PROXY runs: their inits, in our user
 * namespace's netns, could not raise it themselves).
 */
static int
netns_create(int home_fd, bool lo_up)
{
	int fd, rc = 0;

	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	if ((fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)
		rc = -errno;
	if (rc == 0 && lo_up)
		rc = sb_lo_up();
	if (setns(home_fd, CLONE_NEWNET) < 0) {
		/* This thread is stranded in the new netns: say so loudly. */
		rc = -errno;
		if (fd >= 0)
			(void)close(fd);
		return rc;
	}
	if (rc < 0 && fd >= 0)
		(void)close(fd);
	return rc < 0 ? rc : fd;
}

int
sb_netns_pool_init(struct sb_netns_pool *p, unsigned n)
{
	int fd;

	memset(p, 0, sizeof(*p));
	p->home_fd = -1;
	if (n > SB_MAX_NETNS_POOL)
		n = SB_MAX_NETNS_POOL;
	p->cap = n;
	if (pthread_mutex_init(&p->lock, NULL) != 0)
		return -ENOMEM;
	p->home_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (p->home_fd < 0) {
		fd = -errno;
		sb_netns_pool_fini(p);
		return fd;
	}
	return 0;
}

/*
 * A free slot, marked busy; a new netns when none is free and the pool is
 * not full yet; -1 when all are lent out (or creating one failed: the run
 * then makes a fresh one, as without a pool).
 */
int
sb_netns_pool_take(struct sb_netns_pool *p, bool lo_up)
{
	unsigned i;
	int slot = -1, fd;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->n; i++) {
		if (!p->busy[i] && p->lo_up[i] == lo_up) {
			p->busy[i] = true;
			slot = (int)i;
			break;
		}
	}
	if (slot < 0 && p->n < p->cap &&
	    (fd = netns_create(p->home_fd, lo_up)) >= 0) {
		p->fds[p->n] = fd;
		p->busy[p->n] = true;
		p->lo_up[p->n] = lo_up;
		slot = (int)p->n++;
	}
	pthread_mutex_unlock(&p->lock);
	return slot;
}

void
sb_netns_pool_give(struct sb_netns_pool *p, int slot)
{
	if (slot < 0)
		return;
	pthread_mutex_lock(&p->lock);
	p->busy[slot] = false;
	pthread_mutex_unlock(&p->lock);
}

void
sb_netns_pool_fini(struct sb_netns_pool *p)
{
	unsigned i;

	for (i = 0; i < p->n; i++)
		(void)close(p->fds[i]);
	p->n = 0;
	if (p->home_fd >= 0)
		(void)close(p->home_fd);
	p->home_fd = -1;
	pthread_mutex_destroy(&p->lock);
}
