/*
 * test_step.c - what mc_step_read makes of the job environment and SPANK
 * items that slurmstepd hands a plugin, including the malformed ones a user
 * cannot produce through a real srun (Slurm sets or clears these variables
 * itself): SLURM_GPUS_ON_NODE=abc, a GPU count that disagrees with the
 * index list, an empty S_STEP_ALLOC_CORES.
 *
 * The seam: spank/mc_step.c is compiled into this test, and spank_getenv and
 * spank_get_item answer from a table instead of slurmstepd
 * (mc_fake_spank.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../spank/mc_step.c"

/* slurmstepd as a table: fake, setenv_fake (shared with test_decision.c). */
#include "mc_fake_spank.h"

/* A plain srun step of 2 GPUs, 2 GiB, 4 cores. */
static int setup(void **state)
{
	memset(&fake, 0, sizeof(fake));
	fake.job_id = 42;
	fake.nnodes = 1;
	fake.step_mem = 2048;
	fake.job_mem = 2048;
	fake.step_cores = "0-3";
	fake.job_cores = "0-3";
	fake.env[0][0] = "SLURMD_NODENAME";
	fake.env[0][1] = "mc-node1";
	fake.env[1][0] = "SLURM_GPUS_ON_NODE";
	fake.env[1][1] = "2";
	fake.env[2][0] = "SLURM_STEP_GPUS";
	fake.env[2][1] = "0,1";
	return 0;
}

static int read_step(struct mc_step *s, char *err)
{
	err[0] = '\0';
	return mc_step_read(NULL, s, err, MC_ERR_MAX);
}

static void test_plain(void **state)
{
	struct mc_step s;
	char err[MC_ERR_MAX];

	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.gpus, 2);
	assert_int_equal(s.n_gpu_idx, 2);
	assert_int_equal(s.cores, 4);
	assert_int_equal(s.mem_mb, 2048);
	assert_string_equal(s.step_name, "42.0");
	assert_string_equal(s.host, "mc-node1");
	assert_false(mc_step_ignored(&s));
}

/* GPU figures from Slurm that are not figures: refused, each from the plain
 * step of setup() with one variable changed. */
static void test_gpus_refused(void **state)
{
	static const struct {
		const char *name, *var, *value;
		const char *err;	/* in the error; NULL: any */
	} rows[] = {
		{ "count not a number", "SLURM_GPUS_ON_NODE", "abc",
		  "SLURM_GPUS_ON_NODE=abc: " },
		{ "count negative", "SLURM_GPUS_ON_NODE", "-1",
		  "SLURM_GPUS_ON_NODE=-1: " },
		{ "count out of range", "SLURM_GPUS_ON_NODE",
		  "99999999999999999999", "out of range" },
		{ "index list not a list", "SLURM_STEP_GPUS", "junk",
		  "GPU index list 'junk' from Slurm" },
		{ "index range backwards", "SLURM_STEP_GPUS", "3-1", NULL },
		{ "more indices than any node has GPUs", "SLURM_STEP_GPUS",
		  "0-999", NULL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mc_step s;
		char err[MC_ERR_MAX];
		int rc;

		setup(state);
		setenv_fake(rows[i].var, rows[i].value);
		rc = read_step(&s, err);
		if (rc != -1)
			fail_msg("%s: %s=%s read, rc %d", rows[i].name,
				 rows[i].var, rows[i].value, rc);
		if (rows[i].err && !strstr(err, rows[i].err))
			fail_msg("%s: error '%s' lacks '%s'", rows[i].name, err,
				 rows[i].err);
	}
}

/* The count and the list disagree: both are kept, and mc_stepd refuses
 * the step (setup_error) rather than guess. */
static void test_count_disagrees(void **state)
{
	struct mc_step s;
	char err[MC_ERR_MAX];

	setenv_fake("SLURM_STEP_GPUS", "0");
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.gpus, 2);
	assert_int_equal(s.n_gpu_idx, 1);
}

/* A batch step: only SLURM_JOB_GPUS is Slurm's; a SLURM_STEP_GPUS there
 * was exported by the user at sbatch time and must not count. */
static void test_batch_ignores_step_gpus(void **state)
{
	struct mc_step s;
	char err[MC_ERR_MAX];

	fake.step_id = SLURM_BATCH_SCRIPT;
	setenv_fake("SLURM_GPUS_ON_NODE", "8");
	setenv_fake("SLURM_STEP_GPUS", "0");
	setenv_fake("SLURM_JOB_GPUS", "0-7");
	assert_int_equal(read_step(&s, err), 0);
	assert_string_equal(s.step_name, "42.batch");
	assert_int_equal(s.gpus, 8);
	assert_int_equal(s.n_gpu_idx, 8);
}

/* Only the list: the count comes from it. No GPUs at all: ignored. */
static void test_count_from_list_and_none(void **state)
{
	struct mc_step s;
	char err[MC_ERR_MAX];

	setenv_fake("SLURM_GPUS_ON_NODE", "");
	setenv_fake("SLURM_STEP_GPUS", "4-6");
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.gpus, 3);
	assert_int_equal(s.gpu_idx[0], 4);
	setenv_fake("SLURM_STEP_GPUS", "");
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.gpus, 0);
	assert_true(mc_step_ignored(&s));
	fake.step_id = SLURM_EXTERN_CONT;
	setenv_fake("SLURM_GPUS_ON_NODE", "2");
	assert_int_equal(read_step(&s, err), 0);
	assert_true(mc_step_ignored(&s));
}

/* Cores: an empty or malformed list is "unknown" (-1), never a crash or a
 * count of 0 that would refuse every step; the caller then uses the node. */
static void test_cores(void **state)
{
	struct mc_step s;
	char err[MC_ERR_MAX];

	fake.step_cores = "";
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.cores, -1);
	fake.step_cores = "0-11,24-35";
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.cores, 24);
	fake.step_cores = "0-,x";
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.cores, -1);
	fake.step_cores = NULL;
	fake.job_cores = NULL;
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.cores, -1);
	assert_int_equal(s.job_cores, -1);
}

/* Memory: the step's, else the job's; the source in the user's terms. */
static void test_memory(void **state)
{
	struct mc_step s;
	char err[MC_ERR_MAX];

	fake.step_mem = 0;
	fake.job_mem = 4096;
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.mem_mb, 4096);
	assert_string_equal(s.mem_source, "--mem=4G");
	setenv_fake("SLURM_MEM_PER_GPU", "1024");
	/* An srun step inherits sbatch's variable: its allocation is what
	 * it says. The batch step's own request is named as it was made. */
	assert_int_equal(read_step(&s, err), 0);
	assert_string_equal(s.mem_source, "--mem=4G");
	fake.step_id = SLURM_BATCH_SCRIPT;
	assert_int_equal(read_step(&s, err), 0);
	assert_string_equal(s.mem_source, "--mem-per-gpu=1024M");
	fake.step_id = 0;
	fake.job_mem = 0;
	setenv_fake("SLURM_MEM_PER_GPU", "");
	assert_int_equal(read_step(&s, err), 0);
	assert_string_equal(s.mem_source, "no memory limit: the whole node");
}

/* A step started inside a job carries the batch node's SLURMD_NODENAME:
 * the node is named from SLURM_STEP_NODELIST and S_JOB_NODEID. */
static void test_node_named_in_step(void **state)
{
	struct mc_step s;
	char err[MC_ERR_MAX];

	fake.nnodes = 2;
	fake.node_id = 1;
	setenv_fake("SLURMD_NODENAME", "mc-n1");
	setenv_fake("SLURM_STEP_NODELIST", "mc-n1,mc-n3");
	assert_int_equal(read_step(&s, err), 0);
	assert_string_equal(s.host, "mc-n3");
	assert_int_equal(s.nodes, 2);
	/* A list too short for the index: the variable, as before. */
	fake.node_id = 2;
	assert_int_equal(read_step(&s, err), 0);
	assert_string_equal(s.host, "mc-n1");
}

/* The batch step (S_JOB_NNODES 0 there) counts the job's nodes. */
static void test_batch_counts_job_nodes(void **state)
{
	struct mc_step s;
	char err[MC_ERR_MAX];

	fake.step_id = SLURM_BATCH_SCRIPT;
	fake.nnodes = 0;
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.nodes, 1);
	setenv_fake("SLURM_JOB_NUM_NODES", "3");
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.nodes, 3);
	setenv_fake("SLURM_JOB_NUM_NODES", "3x");
	assert_int_equal(read_step(&s, err), -1);
	assert_non_null(strstr(err, "SLURM_JOB_NUM_NODES=3x"));
	/* Another step's node count is Slurm's item, not the job's. */
	fake.step_id = 0;
	fake.nnodes = 2;
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.nodes, 2);
}

/* A step of a heterogeneous job: its node list is every component's and
 * its node id the component's, so the node is the host name; the
 * components' job ids are kept for ending the step in each. */
static void test_het_step(void **state)
{
	struct mc_step s;
	char err[MC_ERR_MAX], host[64];

	fake.job_id = 2;
	fake.node_id = 0;
	setenv_fake("SLURMD_NODENAME", "mc-n1");
	setenv_fake("SLURM_STEP_NODELIST", "mc-n1,mc-n2,mc-n3");
	setenv_fake("SLURM_HET_SIZE", "2");
	setenv_fake("SLURM_JOB_ID_HET_GROUP_0", "1");
	setenv_fake("SLURM_JOB_ID_HET_GROUP_1", "2");
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.n_het, 2);
	assert_int_equal(s.het_job_id[0], 1);
	assert_int_equal(s.het_job_id[1], 2);
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	host[sizeof(host) - 1] = '\0';
	assert_string_equal(s.host, host);
	/* A component's id missing: not taken as heterogeneous. */
	setenv_fake("SLURM_JOB_ID_HET_GROUP_1", "");
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.n_het, 0);
	/* The batch step is never a heterogeneous step. */
	setenv_fake("SLURM_JOB_ID_HET_GROUP_1", "2");
	fake.step_id = SLURM_BATCH_SCRIPT;
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.n_het, 0);
}

/* Values of any length are read whole (a fixed buffer once made a long
 * value read as unset): a long number is judged as a number, a long
 * partition name is an error naming the variable, a long node name is
 * only cut (it is shown, never matched). */
static void test_long_values(void **state)
{
	static char longv[4096], zeros[600], list[400];
	struct mc_step s;
	char err[MC_ERR_MAX];
	size_t n = 0;

	memset(longv, '1', sizeof(longv) - 1);
	setenv_fake("SLURM_GPUS_ON_NODE", longv);
	assert_int_equal(read_step(&s, err), -1);
	assert_non_null(strstr(err, "SLURM_GPUS_ON_NODE=1111"));
	assert_non_null(strstr(err, "out of range"));
	/* 2, written with 500 leading zeros: read whole, it is 2. */
	memset(zeros, '0', 500);
	zeros[500] = '2';
	setenv_fake("SLURM_GPUS_ON_NODE", zeros);
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.gpus, 2);
	/* A 64-GPU list, one index at a time: longer than 256 bytes. */
	for (int i = 0; i < 64; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%04d",
				      i ? "," : "", i);
	assert_true(n > 256);
	setenv_fake("SLURM_GPUS_ON_NODE", "64");
	setenv_fake("SLURM_STEP_GPUS", list);
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.n_gpu_idx, 64);
	assert_int_equal(s.gpu_idx[63], 63);
	setenv_fake("SLURMD_NODENAME", longv);
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(strlen(s.host), sizeof(s.host) - 1);
	/* The partition is never the environment's (mc_jobview.h): a long
	 * forged one is not even read. */
	setenv_fake("SLURM_JOB_PARTITION", longv);
	assert_int_equal(read_step(&s, err), 0);
	assert_string_equal(s.partition, "");
}

/* SLURM_SHARDS_ON_NODE that is not a count came from the job: on a GPU
 * step the user's error (s.user_err, not a failed read, which would be
 * called the node's set-up); on a CPU-only step nothing. A count without
 * Slurm's GPU variables is only "unsure" (the policy decides). */
static void test_shards_from_job(void **state)
{
	struct mc_step s;
	char err[MC_ERR_MAX];

	setenv_fake("SLURM_GPUS_ON_NODE", "1");
	setenv_fake("SLURM_STEP_GPUS", "0");
	setenv_fake("SLURM_SHARDS_ON_NODE", "xx");
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.gpus, 1);
	assert_non_null(strstr(s.user_err, "SLURM_SHARDS_ON_NODE=xx in the "
				      "job's environment"));
	assert_non_null(strstr(s.user_err, "set by the job"));
	setenv_fake("SLURM_GPUS_ON_NODE", "");
	setenv_fake("SLURM_STEP_GPUS", "");
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.gpus, 0);
	assert_string_equal(s.user_err, "");
	assert_true(mc_step_ignored(&s));
	setenv_fake("SLURM_SHARDS_ON_NODE", "2");
	assert_int_equal(read_step(&s, err), 0);
	assert_int_equal(s.shards, 2);
	assert_true(s.share_gpu);
}

/* mc_step_getenv: found, unset, empty, and a value past the cap. */
static void test_getenv(void **state)
{
	static char huge[MC_ENV_VALUE_READ_MAX + 2];
	char *v, err[MC_ERR_MAX];

	setenv_fake("MEMCORE_MODE", "warn");
	assert_int_equal(mc_step_getenv(NULL, "MEMCORE_MODE", &v, err,
					sizeof(err)), 1);
	assert_string_equal(v, "warn");
	free(v);
	assert_int_equal(mc_step_getenv(NULL, "MEMCORE_NONE", &v, err,
					sizeof(err)), 0);
	assert_null(v);
	setenv_fake("MEMCORE_MODE", "");
	assert_int_equal(mc_step_getenv(NULL, "MEMCORE_MODE", &v, err,
					sizeof(err)), 0);
	memset(huge, 'x', sizeof(huge) - 1);
	setenv_fake("MEMCORE_MODE", huge);
	assert_int_equal(mc_step_getenv(NULL, "MEMCORE_MODE", &v, err,
					sizeof(err)), -1);
	assert_null(v);
	assert_non_null(strstr(err, "MEMCORE_MODE: value longer than"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_plain, setup),
		cmocka_unit_test_setup(test_gpus_refused, setup),
		cmocka_unit_test_setup(test_count_disagrees, setup),
		cmocka_unit_test_setup(test_batch_ignores_step_gpus, setup),
		cmocka_unit_test_setup(test_count_from_list_and_none, setup),
		cmocka_unit_test_setup(test_cores, setup),
		cmocka_unit_test_setup(test_memory, setup),
		cmocka_unit_test_setup(test_long_values, setup),
		cmocka_unit_test_setup(test_shards_from_job, setup),
		cmocka_unit_test_setup(test_getenv, setup),
		cmocka_unit_test_setup(test_node_named_in_step, setup),
		cmocka_unit_test_setup(test_batch_counts_job_nodes, setup),
		cmocka_unit_test_setup(test_het_step, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
