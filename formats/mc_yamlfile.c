/*
 * mc_yamlfile.c - YAML to a jansson tree with libyaml's event parser (see
 * mc_yamlfile.h for the typing and what is refused).
 */
#include "mc_yamlfile.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <yaml.h>

#include "mc_parse.h"
#include "mc_util.h"

/* Nesting deeper than any trainer file: a bound on the recursion. */
#define DEPTH_MAX 32

struct yctx {
	yaml_parser_t p;
	const char *name;
	char *err;
	size_t errlen;
};

/* YAML 1.1's plain-scalar words (yaml.org/type/bool.html, null.html). */
static const char *const true_words[] = { "true", "True", "TRUE", "yes",
	"Yes", "YES", "on", "On", "ON", NULL };
static const char *const false_words[] = { "false", "False", "FALSE", "no",
	"No", "NO", "off", "Off", "OFF", NULL };
static const char *const null_words[] = { "", "~", "null", "Null", "NULL",
					  NULL };

static bool in_words(const char *s, const char *const *w)
{
	for (; *w; w++)
		if (!strcmp(s, *w))
			return true;
	return false;
}

/* Digits at *s, past them: how many. */
static size_t digits(const char **s)
{
	size_t n = 0;

	while (**s >= '0' && **s <= '9') {
		(*s)++;
		n++;
	}
	return n;
}

/* ^[-+]?[0-9]+$: scanned, not a regex compiled per scalar (a large
 * file of numbers took seconds that way). */
static bool yaml_int(const char *s)
{
	s += *s == '-' || *s == '+';
	return digits(&s) && !*s;
}

/* ^[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ or
 * ^[-+]?[0-9]+[eE][-+]?[0-9]+$ (YAML 1.1's float, as PyYAML resolves). */
static bool yaml_float(const char *s)
{
	size_t whole, frac = 0;
	bool dot;

	s += *s == '-' || *s == '+';
	whole = digits(&s);
	dot = *s == '.';
	if (dot) {
		s++;
		frac = digits(&s);
	}
	if (!whole && !frac)
		return false;
	if (*s == 'e' || *s == 'E') {
		s++;
		s += *s == '-' || *s == '+';
		if (!digits(&s))
			return false;
	} else if (!dot) {
		return false;
	}
	return !*s;
}

/* A plain scalar typed as YAML 1.1's resolver types it. */
static json_t *plain_scalar(const char *s)
{
	if (in_words(s, null_words))
		return json_null();
	if (in_words(s, true_words))
		return json_true();
	if (in_words(s, false_words))
		return json_false();
	if (yaml_int(s) && strlen(s) < 19)
		return json_integer(strtoll(s, NULL, 10));
	if (yaml_float(s))
		return json_real(strtod(s, NULL));
	return json_string(s);
}

static int next(struct yctx *c, yaml_event_t *e)
{
	if (yaml_parser_parse(&c->p, e))
		return 0;
	if (c->p.problem)
		mc_err(c->err, c->errlen, "%s: not YAML at line %zu, column "
		       "%zu: %s", c->name, c->p.problem_mark.line + 1,
		       c->p.problem_mark.column + 1, c->p.problem);
	else
		mc_err(c->err, c->errlen, "%s: not YAML", c->name);
	return -1;
}

static json_t *node(struct yctx *c, yaml_event_t *e, int depth);

/* The mapping or sequence that event e opened, to its end. */
static json_t *collection(struct yctx *c, yaml_event_t *e, int depth)
{
	bool map = e->type == YAML_MAPPING_START_EVENT;
	yaml_event_type_t end = map ? YAML_MAPPING_END_EVENT
				    : YAML_SEQUENCE_END_EVENT;
	json_t *o = map ? json_object() : json_array();
	yaml_event_t k, v;

	for (;;) {
		json_t *key, *val;

		if (next(c, &k))
			goto bad;
		if (k.type == end) {
			yaml_event_delete(&k);
			return o;
		}
		key = node(c, &k, depth + 1);
		if (!key)
			goto bad;
		if (!map) {
			json_array_append_new(o, key);
			continue;
		}
		if (!json_is_string(key)) {
			/* A key of another type read as its text. */
			char *t = json_dumps(key, JSON_ENCODE_ANY);

			json_decref(key);
			key = json_string(t ? t : "?");
			free(t);
		}
		if (next(c, &v)) {
			json_decref(key);
			goto bad;
		}
		if (json_object_get(o, json_string_value(key))) {
			char q[MC_QUOTE_MAX];

			mc_err(c->err, c->errlen, "%s: line %zu: key \"%s\" "
			       "given twice", c->name, v.start_mark.line + 1,
			       mc_escape(json_string_value(key), 48, q,
					 sizeof(q)));
			yaml_event_delete(&v);
			json_decref(key);
			goto bad;
		}
		val = node(c, &v, depth + 1);
		if (!val) {
			json_decref(key);
			goto bad;
		}
		json_object_set_new(o, json_string_value(key), val);
		json_decref(key);
	}
bad:
	json_decref(o);
	return NULL;
}

/* The value event e starts; consumes (deletes) e. */
static json_t *node(struct yctx *c, yaml_event_t *e, int depth)
{
	json_t *r = NULL;
	size_t line = e->start_mark.line + 1;

	if (depth > DEPTH_MAX) {
		mc_err(c->err, c->errlen, "%s: line %zu: nested deeper than "
		       "%d levels", c->name, line, DEPTH_MAX);
	} else if (e->type == YAML_ALIAS_EVENT ||
		   (e->type == YAML_SCALAR_EVENT && e->data.scalar.anchor) ||
		   (e->type == YAML_MAPPING_START_EVENT &&
		    e->data.mapping_start.anchor) ||
		   (e->type == YAML_SEQUENCE_START_EVENT &&
		    e->data.sequence_start.anchor)) {
		mc_err(c->err, c->errlen, "%s: line %zu: an alias or anchor "
		       "(not read)", c->name, line);
	} else if (e->type == YAML_SCALAR_EVENT) {
		const char *s = (const char *)e->data.scalar.value;

		r = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
		    ? plain_scalar(s) : json_string(s);
		if (!r)	/* not UTF-8: jansson refuses it */
			mc_err(c->err, c->errlen, "%s: line %zu: a value that "
			       "is not UTF-8", c->name, line);
	} else if (e->type == YAML_MAPPING_START_EVENT ||
		   e->type == YAML_SEQUENCE_START_EVENT) {
		r = collection(c, e, depth);
	} else {
		mc_err(c->err, c->errlen, "%s: line %zu: unexpected YAML "
		       "event", c->name, line);
	}
	yaml_event_delete(e);
	return r;
}

json_t *mc_yamlfile_parse(const char *text, size_t len, const char *name,
			  char *err, size_t errlen)
{
	struct yctx c = { .name = name, .err = err, .errlen = errlen };
	yaml_event_t e;
	json_t *r = NULL;

	if (!yaml_parser_initialize(&c.p)) {
		mc_err(err, errlen, "%s: cannot start the YAML parser", name);
		return NULL;
	}
	yaml_parser_set_input_string(&c.p, (const unsigned char *)text, len);
	/* STREAM-START, then DOCUMENT-START or STREAM-END. */
	for (;;) {
		if (next(&c, &e))
			goto out;
		if (e.type == YAML_STREAM_START_EVENT ||
		    e.type == YAML_DOCUMENT_START_EVENT) {
			yaml_event_delete(&e);
			continue;
		}
		if (e.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&e);
			mc_err(err, errlen, "%s: empty file", name);
			goto out;
		}
		break;
	}
	r = node(&c, &e, 0);
out:
	yaml_parser_delete(&c.p);
	return r;
}
