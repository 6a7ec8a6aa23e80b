/*
 * fuzz_scrub: libFuzzer harness for the secrets' swaps (egress/secret.c,
 * issue 24): a server's answer, cut into chunks the input chooses, goes
 * through the scrubber that replaces each bound value by its placeholder
 * on the way to the sandbox. Whatever the bytes and the cuts: as many
 * bytes come out as went in, and no value is left whole in bytes the
 * scrubber did not change (a value split across chunks included). The
 * values overlap themselves and each other ("ab-ab-...") to make the
 * kept-back tail work; the same input as a request head goes through
 * egress_swap_in, which must leave no placeholder whole.
 *
 * Input: byte 0 seeds the chunk sizes, the rest is the answer.
 * Built as the other harnesses (target fuzz_scrub, seeds corpus/scrub);
 * -DSCRUB_FUZZ_REPLAY makes the plain program ctest's scrub_fuzz_replay
 * runs over the seeds.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The answer's bytes looked at, at most: many chunks, quick runs. */
#define SCRUB_FUZZ_MAX	(64 * 1024)

static const char *const values[] = {
	"ab-ab-ab-ab-ab-ab",		/* overlaps itself every 3 */
	"b-ab-ab-ab-ab-ab-a",		/* and the first */
	"ghp_0123456789abcdefXYZ",	/* a token's shape */
};
#define NVALUES	(sizeof(values) / sizeof(values[0]))
/* base64 of "x-access-token:ab-ab-" and of what the program sent */
#define EXTRA_FROM	"eC1hY2Nlc3MtdG9rZW46YWItYWIt"
#define EXTRA_TO	"eC1hY2Nlc3MtdG9rZW46WFhYWFhY"

static void
must(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_scrub: broken invariant: %s\n", what);
		abort();
	}
}

static struct egress_secrets *
secrets(void)
{
	static struct egress_secrets ss;
	static int ready;
	char err[200];
	size_t i;

	if (ready)
		return &ss;
	for (i = 0; i < NVALUES; i++) {
		(void)snprintf(ss.s[i].name, sizeof(ss.s[i].name), "S%zu", i);
		must(egress_secret_set(&ss.s[i], values[i], strlen(values[i]),
		    err, sizeof(err)) == 0, "secret set");
	}
	ss.n = NVALUES;
	ready = 1;
	return &ss;
}

/* No value whole at a place where out is what in was. */
static void
check_clean(const struct egress_secrets *ss, const char *in, const char *out,
    size_t n, int placeholders)
{
	size_t i, k;

	for (i = 0; i < ss->n; i++) {
		const char *v = placeholders ? ss->s[i].placeholder :
		    ss->s[i].value;
		size_t l = ss->s[i].len;
		const char *p = out, *hit;

		while ((size_t)(p - out) + l <= n && (hit = memmem(p, n -
		    (size_t)(p - out), v, l)) != NULL) {
			size_t at = (size_t)(hit - out);

			for (k = 0; k < l; k++)
				if (in[at + k] != out[at + k])
					break;
			must(k < l, placeholders ? "a placeholder left whole" :
			    "a value left whole");
			p = hit + 1;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct egress_secrets *ss = secrets();
	struct egress_scrub sc;
	char *in, *out, *tmp;
	size_t n, off = 0, w = 0, cut, m;
	unsigned seed;

	if (size < 1)
		return 0;
	seed = data[0];
	n = size - 1 > SCRUB_FUZZ_MAX ? SCRUB_FUZZ_MAX : size - 1;
	in = malloc(n + 1);
	out = malloc(n + EGRESS_MAX_SECRET + 1);
	tmp = malloc(n + EGRESS_MAX_SECRET + 1);
	must(in != NULL && out != NULL && tmp != NULL, "memory");
	memcpy(in, data + 1, n);
	egress_scrub_init(&sc, ss, (1u << NVALUES) - 1);
	/* a Basic form the request sent, overlapping a value's text */
	must(egress_scrub_pair(&sc, EXTRA_FROM, EXTRA_TO, strlen(EXTRA_FROM),
	    1), "pair");
	while (off < n) {
		/* chunks of 1..32 bytes, the input's own rhythm */
		seed = seed * 1103515245u + 12345u;
		cut = 1 + (seed >> 16) % 32;
		if (cut > n - off)
			cut = n - off;
		m = egress_scrub_feed(&sc, in + off, cut, tmp);
		must(w + m <= n, "more out than in");
		memcpy(out + w, tmp, m);
		w += m;
		off += cut;
	}
	m = egress_scrub_end(&sc, tmp);
	memcpy(out + w, tmp, m);
	w += m;
	must(w == n, "as many bytes out as in");
	check_clean(ss, in, out, n, 0);
	{
		const char *p = out, *hit;
		size_t l = strlen(EXTRA_FROM), k;

		while ((size_t)(p - out) + l <= n && (hit = memmem(p, n -
		    (size_t)(p - out), EXTRA_FROM, l)) != NULL) {
			for (k = 0; k < l; k++)
				if (in[hit - out + k] != hit[k])
					break;
			must(k < l, "a Basic form left whole");
			p = hit + 1;
		}
	}
	/* the request way: in place, at once */
	memcpy(out, in, n);
	(void)egress_swap_in(ss, (1u << NVALUES) - 1, out, n);
	check_clean(ss, in, out, n, 1);
	free(in);
	free(out);
	free(tmp);
	return 0;
}

#ifdef SCRUB_FUZZ_REPLAY
static int
replay_file(const char *path)
{
	static uint8_t buf[SCRUB_FUZZ_MAX + 1];
	size_t n;
	FILE *f;

	if ((f = fopen(path, "rb")) == NULL) {
		perror(path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	(void)fclose(f);
	(void)LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

int
main(int argc, char **argv)
{
	char path[4096];
	struct dirent *e;
	int i, n = 0, bad = 0;
	DIR *d;

	for (i = 1; i < argc; i++) {
		if ((d = opendir(argv[i])) == NULL) {
			bad |= replay_file(argv[i]);
			n++;
			continue;
		}
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			(void)snprintf(path, sizeof(path), "%s/%s", argv[i],
			    e->d_name);
			bad |= replay_file(path);
			n++;
		}
		(void)closedir(d);
	}
	printf("scrub_fuzz_replay: %d inputs\n", n);
	return bad || n == 0;
}
#endif
