/*
 * Internals shared by validator.c (compile), validator_eval.c (validate) and
 * validator_num.c (numbers, JSON equality, message text). Not an interface
 * for anything outside schemas/validator*.c.
 */
#ifndef VALIDATOR_IMPL_H
#define VALIDATOR_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "validator.h"

/* Members tracked for unevaluated* without allocating (bits, in 64-bit words). */
#define SACC_INLINE_WORDS 4
/* Longest rendering of a constant or enum list kept for messages. */
#define SCHEMA_TEXT_MAX 200

/* Instance types, as a mask. SNT_INTEGER is also set for integral numbers. */
enum {
	SNT_NULL = 1 << 0,
	SNT_BOOLEAN = 1 << 1,
	SNT_OBJECT = 1 << 2,
	SNT_ARRAY = 1 << 3,
	SNT_NUMBER = 1 << 4,
	SNT_STRING = 1 << 5,
	SNT_INTEGER = 1 << 6,
};

/* A JSON number, exactly: json-c gives int64 (uint64 above), or double. */
struct snum {
	bool is_int;
	__int128 i;		/* when is_int */
	double d;		/* when !is_int; always finite */
};

/* A number as m * 10^e (the shortest decimal that reads back the same double). */
struct sdec {
	uint64_t m;
	int e;
};

struct spattern {
	pcre2_code *code;	/* owned */
	const char *src;	/* borrowed from the schema doc */
};

struct snode;

struct sprop {
	const char *name;	/* borrowed from the schema doc */
	struct snode *node;
};

struct spatprop {
	struct spattern pat;
	struct snode *node;
};

struct sdepreq {
	const char *name;	/* borrowed from the schema doc */
	const char **req;	/* names, borrowed */
	size_t nreq;
};

/* Which keywords a node has, so evaluation skips absent ones with one test. */
enum {
	SK_TYPE = 1u << 0,
	SK_ENUM = 1u << 1,
	SK_CONST = 1u << 2,
	SK_MINIMUM = 1u << 3,
	SK_MAXIMUM = 1u << 4,
	SK_EXMIN = 1u << 5,
	SK_EXMAX = 1u << 6,
	SK_MULTIPLE = 1u << 7,
	SK_MINLEN = 1u << 8,
	SK_MAXLEN = 1u << 9,
	SK_PATTERN = 1u << 10,
	SK_MINITEMS = 1u << 11,
	SK_MAXITEMS = 1u << 12,
	SK_UNIQUE = 1u << 13,
	SK_MINCONTAINS = 1u << 14,
	SK_MAXCONTAINS = 1u << 15,
	SK_MINPROPS = 1u << 16,
	SK_MAXPROPS = 1u << 17,
	SK_FALSE = 1u << 18,	/* the boolean schema false */
};

#define SK_NUMERIC (SK_MINIMUM | SK_MAXIMUM | SK_EXMIN | SK_EXMAX | SK_MULTIPLE)
#define SK_STRING (SK_MINLEN | SK_MAXLEN | SK_PATTERN)

/* One compiled schema (object or boolean). Immutable after compile. */
struct snode {
	uint32_t kw;		/* SK_* */
	uint8_t types;		/* SNT_* allowed, when SK_TYPE */
	bool has_object;	/* any object keyword below */
	bool has_array;		/* any array keyword below */

	const struct json_object *enum_val;	/* borrowed from doc: an array */
	const struct json_object *const_val;	/* borrowed from doc */
	char *enum_text;	/* owned: enum values or const for messages */

	struct snum minimum, maximum, exmin, exmax, multiple;
	struct sdec multiple_dec;

	uint64_t min_len, max_len;
	struct spattern pattern;

	uint64_t min_items, max_items, min_contains, max_contains;
	struct snode **prefix;	/* prefixItems */
	size_t nprefix;
	struct snode *items, *contains;

	uint64_t min_props, max_props;
	struct sprop *props;	/* sorted by strcmp of name */
	size_t nprops;
	struct spatprop *patprops;
	size_t npatprops;
	struct snode *additional, *propnames;
	const char **required;	/* borrowed names */
	size_t nrequired;
	struct sdepreq *depreq;
	size_t ndepreq;
	struct sprop *depsch;	/* dependentSchemas: name -> schema */
	size_t ndepsch;

	struct snode **allof, **anyof, **oneof;
	size_t nallof, nanyof, noneof;
	struct snode *not_, *if_, *then_, *else_;
	struct snode *ref;
	const char *ref_src;	/* borrowed */
	const char *ref_path;	/* where the $ref is, for compile errors; sc_calloc'd */
	uint8_t mark;		/* compile only: cycle search colour */
	struct snode *uneval_props, *uneval_items;
};

/* Bump allocation list of one schema: every node and array hangs here. */
struct salloc {
	struct salloc *next;
	max_align_t data[];
};

struct schema {
	struct json_object *doc;	/* owned reference: strings and constants point into it */
	struct snode *root;
	struct salloc *allocs;		/* owned: freed with the schema */
	struct spattern **patterns;	/* every compiled pattern, to free */
	size_t npatterns, cpatterns;
	pcre2_match_context *mctx;	/* owned: limits for every match; read-only when validating */
	uint32_t max_ovec;		/* unused by matches; kept 1 */
};


/* --- compile (validator.c, validator_kw.c) --- */

/* Room for the JSON pointer of the schema location being compiled. */
#define SCHEMA_CPATH_MAX 1024

/* Open-addressing map from a json-c object (by address) to a value. */
struct smap_ent {
	const void *k;		/* borrowed json object; NULL: empty slot */
	void *v;
};

struct smap {
	struct smap_ent *e;	/* owned */
	size_t cap, n;
};

/* A schema resource ($id, or the document) or, with a name, a $anchor in one. */
struct sres {
	const char *uri;	/* absolute (or "" for an id-less document), sc_calloc'd */
	const char *name;	/* anchor name, borrowed from the doc; NULL: the resource */
	const struct json_object *j;	/* borrowed from the doc */
	const char *path;	/* JSON pointer of j in the document, sc_calloc'd */
};

struct cctx {
	struct schema *s;
	const struct json_object *doc;	/* borrowed root */
	const char *base;		/* base URI of the schema being compiled */
	char path[SCHEMA_CPATH_MAX];	/* pointer of the location being compiled */
	size_t pathlen;
	unsigned depth;
	size_t nnodes;
	struct smap cache;		/* json object -> struct snode */
	struct smap bases;		/* json object -> base URI (from the scan) */
	enum mcp_err st;
	char *err;			/* borrowed from the caller */
	size_t errlen;
	struct sres *res;		/* owned: resources and anchors found by the scan */
	size_t nres, cres;
	struct snode **refs;		/* owned: nodes with $ref, in compile order */
	size_t nrefs, crefs;
};

typedef int sc_kw_fn(struct cctx *c, struct snode *n, const char *kw,
    const struct json_object *v);
struct kwdef {
	const char *name;
	sc_kw_fn *fn;		/* NULL: annotation, accepted and ignored */
};

/* The keyword named k, or NULL (validator_kw.c). */
const struct kwdef *sc_kw_find(const char *k);
/* validator_ref.c: records resources, anchors and base URIs before compiling. */
int sc_scan(struct cctx *c, const struct json_object *doc);
sc_kw_fn sc_kw_id, sc_kw_anchor, sc_kw_ref;
/* Fails if $refs form a loop that never descends into the instance. */
int sc_check_cycles(struct cctx *c);
/* validator.c */
void *sc_map_get(const struct smap *m, const void *k);
int sc_map_put(struct cctx *c, struct smap *m, const void *k, void *v);

int sc_fail(struct cctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sc_nomem(struct cctx *c);
void *sc_calloc(struct cctx *c, size_t n, size_t size);
size_t sc_path_push(struct cctx *c, const char *tok);
size_t sc_path_push_idx(struct cctx *c, size_t i);
void sc_path_pop(struct cctx *c, size_t old);
void sc_path_set(struct cctx *c, const char *p, size_t len);
int sc_count(struct cctx *c, const char *kw, const struct json_object *v, uint64_t *ret);
int sc_number(struct cctx *c, const char *kw, const struct json_object *v, struct snum *ret);
int sc_string(struct cctx *c, const char *kw, const struct json_object *v, const char **ret);
int sc_names(struct cctx *c, const char *kw, const struct json_object *v,
    const char ***ret, size_t *retn);
int sc_pattern(struct cctx *c, const char *kw, const char *src, struct spattern *ret);
/* ECMA-262 pattern -> PCRE2 pattern, malloc'd; NULL: *bad names PCRE-only syntax,
 * or is NULL for out of memory (validator_regex.c). */
char *sc_regex_translate(const char *src, const char **bad);
int sc_node(struct cctx *c, const struct json_object *j, struct snode **ret);
int sc_sub(struct cctx *c, const char *kw, const char *name, size_t idx, bool use_idx,
    const struct json_object *v, struct snode **ret);
int sc_sub_array(struct cctx *c, const char *kw, const struct json_object *v,
    struct snode ***ret, size_t *retn);
int sc_sub_map(struct cctx *c, const char *kw, const struct json_object *v,
    struct sprop **ret, size_t *retn);

/* --- validate (validator_eval.c, validator_apply.c, validator_verr.c) --- */

/* Longest argument name quoted in a message. */
#define SCHEMA_ARG_NAME_MAX 72

enum {
	V_ABORT = -1,	/* a bound was exceeded; c->fatal says which */
	V_OK = 0,
	V_FAIL = 1,
};

struct vseg {
	const char *key;	/* borrowed from the instance; NULL: idx */
	size_t idx;
};

/* One validate call; lives on the caller's stack. */
struct vctx {
	const struct schema *s;
	struct schema_error *err;	/* borrowed from the caller; may be NULL */
	unsigned quiet;			/* >0: inside anyOf/oneOf/not/if/contains */
	unsigned depth;			/* nested sv_node calls */
	unsigned nseg;
	unsigned long work;
	enum mcp_err fatal;
	pcre2_match_data *md;		/* owned, made on first match */
	pcre2_match_context *mctx;	/* owned, made on first match: copy of s->mctx + callout */
	unsigned long regex_steps;	/* PCRE2 callouts so far (SCHEMA_MAX_REGEX_STEPS) */
	struct json_object *name;	/* owned, made on first propertyNames */
	size_t raw_off;			/* where the last message's text follows its "argument ...: " */
	struct vseg seg[SCHEMA_MAX_INSTANCE_DEPTH];	/* instance path, for messages */
};

/*
 * Which members of one instance object or array some keyword has evaluated
 * (by position), for unevaluatedProperties/unevaluatedItems. Only built
 * below a node that has one of those; NULL everywhere else.
 */
struct sacc {
	size_t n;
	uint64_t *bits;			/* inl, or owned if n > 64 * SACC_INLINE_WORDS */
	uint64_t inl[SACC_INLINE_WORDS];
};

/* validator_eval.c */
int sv_node(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc);
int sv_at(struct vctx *c, const struct snode *n, const struct json_object *inst,
    const char *key, size_t idx);

/* validator_apply.c */
int sv_acc_init(struct vctx *c, struct sacc *a, const struct json_object *inst);
void sv_acc_fini(struct sacc *a);
void sv_acc_mark(struct sacc *a, size_t i);
bool sv_acc_has(const struct sacc *a, size_t i);
void sv_acc_merge(struct sacc *dst, const struct sacc *src);
/* Re-runs a failing n with errors on: why (its message text) and kw. Failure path only. */
int sv_explain(struct vctx *c, const struct snode *n, const struct json_object *inst,
    char *why, size_t size, char *kw, size_t kwsize);
int sv_logic(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc);
int sv_unevaluated(struct vctx *c, const struct snode *n, const struct json_object *inst,
    struct sacc *acc);

/* validator_verr.c */
int sv_fail(struct vctx *c, const char *kw, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int sv_abort(struct vctx *c, enum mcp_err st, const char *kw, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The current instance location as a JSON pointer, cut at a whole token. */
void sv_path(const struct vctx *c, char *buf, size_t size);
/* 1 match, 0 no match, 2 not UTF-8, V_ABORT. */
int sv_match(struct vctx *c, const struct spattern *p, const char *s, size_t len);
uint8_t sv_type_mask(const struct json_object *j);
int sv_fail_type(struct vctx *c, const struct snode *n, const struct json_object *inst);
int sv_fail_additional(struct vctx *c, const struct snode *n, const char *k);

/* --- validator_num.c --- */
bool snum_from_json(const struct json_object *j, struct snum *ret);
int snum_cmp(const struct snum *a, const struct snum *b);
bool snum_is_integral(const struct snum *a);
void snum_to_dec(const struct snum *a, struct sdec *ret);
bool sdec_is_multiple(const struct sdec *a, const struct sdec *b);
void snum_format(const struct snum *a, char *buf, size_t size);
/* 1 equal, 0 not, -1 over the work or depth bound (*work counts steps). */
int sjson_equal(const struct json_object *a, const struct json_object *b,
    unsigned depth, unsigned long *work);
/* A short rendering of j for messages (strings quoted, nesting elided). */
void sjson_render(const struct json_object *j, char *buf, size_t size);
/* s quoted for a message: control characters and quotes escaped, cut to size. */
void squote(const char *s, size_t len, char *buf, size_t size);
size_t sutf8_len(const char *s, size_t len);

#endif
