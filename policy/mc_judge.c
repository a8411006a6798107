/*
 * mc_judge.c - the one judgement (see mc_judge.h).
 */
#include <string.h>

#include "mc_judge.h"

void mc_judge(const struct mc_policy *p, const struct mc_request *r,
	      const struct mc_alloc *a, const struct mc_node *n,
	      const char *step, const char *host, struct mc_judgement *out)
{
	mc_verdict_compute(p, r, n, a, &out->v);
	out->why = mc_verdict_why(&out->v);
	out->impossible = mc_verdict_impossible(&out->v);
	mc_verdict_explain(p, &out->v, step, host, &out->e);
}

const char *const mc_launch_words[] = { "runs", "warned", "refused",
					"unchecked", NULL };

enum mc_launch mc_launch_outcome(const struct mc_policy *p, bool user_warn,
				 bool fits)
{
	if (p->mode == MC_MODE_OFF)
		return MC_LAUNCH_UNCHECKED;
	if (fits)
		return MC_LAUNCH_RUNS;
	if (p->mode == MC_MODE_WARN || (user_warn && p->allow_user_warn))
		return MC_LAUNCH_WARNED;
	return MC_LAUNCH_REFUSED;
}

const char *mc_launch_line(const struct mc_policy *p, bool user_warn,
			   enum mc_launch o)
{
	switch (o) {
	case MC_LAUNCH_UNCHECKED:
		return "memcore: Mode=off: the step runs unchecked";
	case MC_LAUNCH_WARNED:
		return p->mode == MC_MODE_WARN
		       ? "memcore: Mode=warn: the step runs anyway"
		       : "memcore: --memcore=warn: the step runs anyway";
	case MC_LAUNCH_REFUSED:
		/* Said once, and about this refusal: a user who never
		 * asked for warn must not read it as a mistake in their
		 * command. */
		if (!p->allow_user_warn)
			return user_warn
			       ? "memcore: --memcore=warn cannot turn this "
				 "refusal into a warning at this site "
				 "(AllowUserWarn=no)"
			       : "memcore: this refusal cannot be turned into "
				 "a warning at this site (AllowUserWarn=no)";
		if (user_warn)
			return NULL;	/* cannot be: warn would run it */
		return "memcore: --memcore=warn is allowed here "
		       "(AllowUserWarn=yes): it would run the step with this "
		       "explanation as a warning";
	default:
		return NULL;
	}
}
