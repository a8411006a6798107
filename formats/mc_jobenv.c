/*
 * mc_jobenv.c - a variable's value in the job's environment by Slurm's
 * --export rules (mc_jobenv.h, where each rule's source is named).
 */
#include <string.h>
#include <strings.h>

#include "mc_jobenv.h"

#define VER(a, b, c) (((unsigned long)(a) << 16) | ((b) << 8) | (c))
#define NIL_FROM VER(23, 2, 3)		/* sbatch --export=NIL */
#define FILE_DROPPED_FROM VER(26, 5, 0)	/* no --export: file's entries go */

int mc_submit_cmd_parse(const char *s, enum mc_submit_cmd *cmd)
{
	static const char *const names[] = { "sbatch", "srun", "salloc" };

	for (int i = 0; s && i < 3; i++)
		if (!strcmp(s, names[i])) {
			*cmd = (enum mc_submit_cmd)i;
			return 0;
		}
	return -1;
}

/*
 * The next token of --export at *pos, as Slurm's find_quote_token splits
 * it: a comma inside '...' or "..." does not split, and a token that
 * starts and ends with the same quote loses both. Its start in *tok,
 * its length returned; false at the end.
 */
static bool next_token(const char *s, size_t *pos, const char **tok,
		       size_t *tlen)
{
	const char *start = s + *pos;
	bool sq = false, dq = false;
	size_t i = 0;

	if (!*start)
		return false;
	for (;; i++) {
		if (start[i] == '\'')
			sq = !sq;
		else if (start[i] == '"')
			dq = !dq;
		else if (!start[i] || (start[i] == ',' && !sq && !dq))
			break;
	}
	*pos += i + (start[i] == ',');
	*tok = start;
	*tlen = i;
	if (i >= 2 && (start[0] == '\'' || start[0] == '"') &&
	    start[i - 1] == start[0]) {
		(*tok)++;
		*tlen -= 2;
	}
	return true;
}

static bool tok_is(const char *tok, size_t tlen, const char *word)
{
	return tlen == strlen(word) && !strncasecmp(tok, word, tlen);
}

/* tok..tlen copied into buf, or NULL when it does not fit. */
static const char *copy(const char *v, size_t vlen, char *buf, size_t len)
{
	if (vlen >= len)
		return NULL;
	memcpy(buf, v, vlen);
	buf[vlen] = '\0';
	return buf;
}

/* "NAME=VALUE" (n bytes) for NAME: VALUE's start and length. */
static bool entry_for(const char *ent, size_t n, const char *name,
		      const char **val, size_t *vlen)
{
	size_t nl = strlen(name);

	if (n <= nl || strncmp(ent, name, nl) || ent[nl] != '=')
		return false;
	*val = ent + nl + 1;
	*vlen = n - nl - 1;
	return true;
}

static const char *from_file(const struct mc_jobenv *e, const char *name,
			     char *buf, size_t len)
{
	const char *v = NULL, *val;
	size_t vlen;

	/* env_array_overwrite: a later entry of the same name wins. */
	for (size_t i = 0; i < e->nfile; i++)
		if (entry_for(e->file[i], e->file_lens[i], name, &val, &vlen))
			v = copy(val, vlen, buf, len);
	return v;
}

static const char *sbatch_value(const struct mc_jobenv *e, const char *name,
				char *buf, size_t len)
{
	const char *x = e->export_opt, *tok, *val, *v;
	size_t pos = 0, tlen, vlen;
	/* An --export-file: sbatch's own environment is gone first. */
	const char *env = e->export_file ? NULL : e->get(name, e->ctx);

	if (!x || !strcasecmp(x, "ALL")) {
		if (env)
			return env;
		return !x && e->slurm_version >= FILE_DROPPED_FROM ? NULL
			: from_file(e, name, buf, len);
	}
	if (!strcasecmp(x, "NONE") ||
	    (!strcasecmp(x, "NIL") && e->slurm_version >= NIL_FROM))
		return NULL;
	v = from_file(e, name, buf, len);
	while (next_token(x, &pos, &tok, &tlen)) {
		if (tok_is(tok, tlen, "ALL")) {
			if (env)
				v = env;
		} else if (memchr(tok, '=', tlen)) {
			if (entry_for(tok, tlen, name, &val, &vlen))
				v = copy(val, vlen, buf, len);
		} else if (tlen == strlen(name) && !strncmp(tok, name, tlen) &&
			   env) {
			v = env;
		}
	}
	return v;
}

static const char *srun_value(const struct mc_jobenv *e, const char *name,
			      char *buf, size_t len)
{
	const char *x = e->export_opt, *tok, *val, *v = NULL,
		   *env = e->get(name, e->ctx);
	size_t pos = 0, tlen, vlen;
	bool all = false;

	if (!x)
		return env;
	while (next_token(x, &pos, &tok, &tlen)) {
		if (tok_is(tok, tlen, "ALL"))
			all = true;
		if (tok_is(tok, tlen, "NONE"))
			break;
		if (memchr(tok, '=', tlen)) {
			if (entry_for(tok, tlen, name, &val, &vlen))
				v = copy(val, vlen, buf, len);
		} else if (tlen == strlen(name) && !strncmp(tok, name, tlen) &&
			   env) {
			v = env;
		}
	}
	/* env_array_merge of srun's own environment, after the list. */
	return all && env ? env : v;
}

const char *mc_jobenv_get(const struct mc_jobenv *e, const char *name,
			  char *buf, size_t len)
{
	switch (e->cmd) {
	case MC_SUBMIT_SBATCH:
		return sbatch_value(e, name, buf, len);
	case MC_SUBMIT_SRUN:
		return srun_value(e, name, buf, len);
	case MC_SUBMIT_SALLOC:
		break;
	}
	return e->get(name, e->ctx);
}

bool mc_jobenv_login(const struct mc_jobenv *e)
{
	const char *x = e->export_opt;

	return e->cmd == MC_SUBMIT_SBATCH && x && strcasecmp(x, "ALL") &&
	       (strcasecmp(x, "NIL") || e->slurm_version < NIL_FROM);
}

size_t mc_jobenv_file_entries(const char *text, size_t len,
			      const char **entries, size_t *lens, size_t max)
{
	size_t n = 0, at = 0;

	while (at < len) {
		const char *end = memchr(text + at, '\0', len - at);
		size_t el = end ? (size_t)(end - (text + at)) : len - at;

		if (!el)
			break;
		if (memchr(text + at, '=', el)) {
			if (n < max) {
				entries[n] = text + at;
				lens[n] = el;
			}
			n++;
		}
		at += el + 1;
	}
	return n;
}
