/*
 * secret: the placeholders of bound secrets and the two swaps (issue 24).
 * Towards a bound host the placeholder becomes the value in a request's
 * head (egress_swap_in); on the way back the value becomes the
 * placeholder in every byte (egress_scrub_*, a stream: a value may be
 * split across TLS records or reads). Both have the same length, so
 * neither swap changes a message's framing. Pure but for getrandom(2);
 * the fuzzer calls the scrubber directly.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "egress.h"

/* The placeholder's letters: what a header, a URL and a shell take as is. */
static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/*
 * A value's own pages: never in a core file (MADV_DONTDUMP), never
 * swapped out where mlock is allowed (it may not be, unprivileged: then
 * only the dump is kept from it). The placeholder lives beside it.
 */
static char *
value_alloc(size_t len)
{
	char *p = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, 2 * len, MADV_DONTDUMP);
	(void)mlock(p, 2 * len);
	return p;
}

static void
value_free(char *p, size_t len)
{
	if (p == NULL)
		return;
	explicit_bzero(p, 2 * len);
	(void)munlock(p, 2 * len);
	(void)munmap(p, 2 * len);
}

int
egress_secret_set(struct egress_secret *s, const char *value, size_t len,
    char *err, size_t errlen)
{
	unsigned char rnd[EGRESS_MAX_SECRET];
	size_t i;

	if (len < EGRESS_MIN_SECRET || len > EGRESS_MAX_SECRET) {
		(void)snprintf(err, errlen, "its value is %zu bytes: %d to %d "
		    "are taken (a shorter one's placeholder could be guessed)",
		    len, EGRESS_MIN_SECRET, EGRESS_MAX_SECRET);
		return -1;
	}
	for (i = 0; i < len; i++) {
		if (value[i] <= ' ' || value[i] > '~') {
			(void)snprintf(err, errlen, "its value has a byte a "
			    "header cannot carry (0x%02x at offset %zu): only "
			    "printable ASCII without spaces is taken",
			    (unsigned)(unsigned char)value[i], i);
			return -1;
		}
	}
	if ((s->value = value_alloc(len)) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->placeholder = s->value + len;
	s->len = len;
	memcpy(s->value, value, len);
	/* a placeholder equal to its value would leak it: draw again */
	do {
		if (getrandom(rnd, len, 0) != (ssize_t)len) {
			(void)snprintf(err, errlen, "no random bytes for its "
			    "placeholder");
			return -1;
		}
		for (i = 0; i < len; i++)
			s->placeholder[i] = alphabet[rnd[i] %
			    (sizeof(alphabet) - 1)];
	} while (memcmp(s->placeholder, s->value, len) == 0);
	explicit_bzero(rnd, sizeof(rnd));
	return 0;
}

void
egress_secrets_wipe(struct egress_secrets *ss)
{
	size_t i;

	for (i = 0; i < ss->n; i++) {
		value_free(ss->s[i].value, ss->s[i].len);
		ss->s[i].value = ss->s[i].placeholder = NULL;
		ss->s[i].len = 0;
	}
}

uint32_t
egress_secrets_bound(const struct egress_secrets *ss, const char *host,
    uint16_t port)
{
	uint32_t mask = 0;
	size_t i, j;

	for (i = 0; ss != NULL && i < ss->n; i++)
		for (j = 0; j < ss->s[i].nhosts; j++)
			if (egress_pattern_covers(&ss->s[i].hosts[j], host,
			    port))
				mask |= 1u << i;
	return mask;
}

int
egress_secrets_find(const struct egress_secrets *ss, uint32_t mask,
    const char *buf, size_t len, bool placeholder)
{
	size_t i;

	for (i = 0; ss != NULL && i < ss->n; i++) {
		const struct egress_secret *s = &ss->s[i];

		if ((mask & (1u << i)) != 0 && s->len > 0 && memmem(buf, len,
		    placeholder ? s->placeholder : s->value, s->len) != NULL)
			return (int)i;
	}
	return -1;
}

/* Every from[0..n) in buf[0..len) becomes to[0..n), left to right. */
static bool
replace_all(char *buf, size_t len, const char *from, const char *to, size_t n)
{
	char *p = buf, *hit;
	bool any = false;

	while ((size_t)(p - buf) + n <= len &&
	    (hit = memmem(p, len - (size_t)(p - buf), from, n)) != NULL) {
		memcpy(hit, to, n);
		p = hit + n;
		any = true;
	}
	return any;
}

uint32_t
egress_swap_in(const struct egress_secrets *ss, uint32_t mask, char *buf,
    size_t len)
{
	uint32_t hits = 0;
	size_t i;

	for (i = 0; ss != NULL && i < ss->n; i++)
		if ((mask & (1u << i)) != 0 && ss->s[i].len > 0 &&
		    replace_all(buf, len, ss->s[i].placeholder,
		    ss->s[i].value, ss->s[i].len))
			hits |= 1u << i;
	return hits;
}

void
egress_scrub_init(struct egress_scrub *sc, const struct egress_secrets *ss,
    uint32_t mask)
{
	sc->ss = ss;
	sc->mask = mask;
	sc->nkeep = 0;
	sc->hits = 0;
	sc->nextra = 0;
}

bool
egress_scrub_pair(struct egress_scrub *sc, const char *from, const char *to,
    size_t len, uint32_t mask)
{
	if (sc->nextra == EGRESS_SCRUB_EXTRA || len == 0 ||
	    len > EGRESS_MAX_SECRET)
		return false;
	memcpy(sc->extra[sc->nextra].from, from, len);
	memcpy(sc->extra[sc->nextra].to, to, len);
	sc->extra[sc->nextra].len = len;
	sc->extra[sc->nextra++].mask = mask;
	return true;
}

/* The longest tail of buf[0..n) shorter than v[0..l) that begins it. */
static size_t
tail_of(const char *buf, size_t n, const char *v, size_t l, size_t best)
{
	size_t k = l - 1 < n ? l - 1 : n;

	for (; k > best; k--)
		if (buf[n - k] == v[0] && memcmp(buf + n - k, v, k) == 0)
			return k;
	return best;
}

/*
 * The longest tail of buf[0..n) that begins one of the values (shorter
 * than it): those bytes may be the start of a value the next chunk ends.
 * Quadratic in a value's length at worst (a value of one repeated byte
 * and a stream of it): 4096 x 4096 byte compares a chunk, a few ms.
 */
static size_t
tail_to_keep(const struct egress_scrub *sc, const char *buf, size_t n)
{
	size_t i, best = 0;

	for (i = 0; i < sc->ss->n; i++)
		if ((sc->mask & (1u << i)) != 0 && sc->ss->s[i].len > 0)
			best = tail_of(buf, n, sc->ss->s[i].value,
			    sc->ss->s[i].len, best);
	for (i = 0; i < sc->nextra; i++)
		best = tail_of(buf, n, sc->extra[i].from, sc->extra[i].len,
		    best);
	return best;
}

size_t
egress_scrub_feed(struct egress_scrub *sc, const char *in, size_t len,
    char *out)
{
	size_t n = sc->nkeep + len, keep, i;

	if (sc->mask == 0 && sc->nextra == 0) {
		memcpy(out, in, len);
		return len;
	}
	memcpy(out, sc->keep, sc->nkeep);
	memcpy(out + sc->nkeep, in, len);
	for (i = 0; i < sc->ss->n; i++)
		if ((sc->mask & (1u << i)) != 0 && sc->ss->s[i].len > 0 &&
		    replace_all(out, n, sc->ss->s[i].value,
		    sc->ss->s[i].placeholder, sc->ss->s[i].len))
			sc->hits |= 1u << i;
	for (i = 0; i < sc->nextra; i++)
		if (replace_all(out, n, sc->extra[i].from, sc->extra[i].to,
		    sc->extra[i].len))
			sc->hits |= sc->extra[i].mask;
	keep = tail_to_keep(sc, out, n);
	memcpy(sc->keep, out + n - keep, keep);
	sc->nkeep = keep;
	return n - keep;
}

size_t
egress_scrub_end(struct egress_scrub *sc, char *out)
{
	size_t n = sc->nkeep;

	memcpy(out, sc->keep, n);
	explicit_bzero(sc->keep, sizeof(sc->keep));
	sc->nkeep = 0;
	return n;
}
