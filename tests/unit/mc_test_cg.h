/*
 * mc_test_cg.h - a cgroup handle (struct mc_cgroup) on a fixture tree for
 * the unit tests: what mc_cgroup_find or mc_cgroup_at give the product on
 * a real host.
 */
#ifndef MC_TEST_CG_H
#define MC_TEST_CG_H

#include <stdio.h>
#include <string.h>

#include "mc_cgroup.h"
#include "mc_memstat.h"

/* dir of hierarchy version (0: read from dir's files, as mc_cgroup_at;
 * 1 when there are none), limits looked for up to root (NULL: dir's own
 * only). */
static inline struct mc_cgroup mc_test_cg(const char *dir, int version,
					  const char *root)
{
	struct mc_cgroup cg;
	char err[256];

	memset(&cg, 0, sizeof(cg));
	cg.ops = version ? mc_cgroup_ops_of((uint32_t)version)
			 : mc_cgroup_ops_at(dir, err, sizeof(err));
	if (!cg.ops)
		cg.ops = &mc_cgroup_v1;
	snprintf(cg.dir, sizeof(cg.dir), "%s", dir);
	snprintf(cg.mount, sizeof(cg.mount), "%s", root ? root : "");
	return cg;
}

/* A pointer to mc_test_cg's handle, for a call's argument. */
#define MC_TEST_CG(dir, version, root) \
	(&(struct mc_cgroup[1]){ mc_test_cg((dir), (version), (root)) }[0])

#endif
