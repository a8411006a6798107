/*
 * test_opts.c - the user's options (policy/mc_opts.h), one parser and one
 * set of messages for the plugin and the memcore command.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mc_opts.h"

static char err[512];

static void test_table(void **state)
{
	(void)state;
	assert_string_equal(mc_opt_name(MC_OPT_LARGEST_LAYER),
			    "largest-layer-params");
	assert_string_equal(mc_opt_env(MC_OPT_LARGEST_LAYER),
			    "MEMCORE_LARGEST_LAYER_PARAMS");
	assert_string_equal(mc_opt_env(MC_OPT_ZERO_INIT), "MEMCORE_ZERO_INIT");
	assert_int_equal(mc_opt_lookup("zero-init"), MC_OPT_ZERO_INIT);
	assert_int_equal(mc_opt_lookup("nope"), -1);
	for (int i = 0; i < MC_OPT_COUNT; i++) {
		assert_non_null(mc_opt_help(i));
		assert_non_null(mc_opt_arginfo(i));
		assert_int_equal(mc_opt_lookup(mc_opt_name(i)), i);
	}
}

static void test_values(void **state)
{
	struct mc_opts o = { 0 };

	(void)state;
	assert_int_equal(mc_opts_set(&o, MC_OPT_LARGEST_LAYER, "32.9M", false,
				     err, sizeof(err)), 0);
	assert_int_equal(o.largest_layer_params, 32900000);
	assert_int_equal(mc_opts_set(&o, MC_OPT_ZERO_INIT, "no", false, err,
				     sizeof(err)), 0);
	assert_int_equal(o.zero_init, 0);
	/* The same value twice is fine, another is refused. */
	assert_int_equal(mc_opts_set(&o, MC_OPT_ZERO_INIT, "false", false, err,
				     sizeof(err)), 0);
	assert_int_equal(mc_opts_set(&o, MC_OPT_ZERO_INIT, "yes", false, err,
				     sizeof(err)), -1);
	assert_string_equal(err, "--zero-init=yes: given twice with different "
			    "values");
	/* A variable never overrides the option. */
	assert_int_equal(mc_opts_set(&o, MC_OPT_ZERO_INIT, "yes", true, err,
				     sizeof(err)), 0);
	assert_int_equal(o.zero_init, 0);
	/* Messages name the option or the variable. */
	memset(&o, 0, sizeof(o));
	assert_int_equal(mc_opts_set(&o, MC_OPT_LARGEST_LAYER, "0", true, err,
				     sizeof(err)), -1);
	assert_string_equal(err, "MEMCORE_LARGEST_LAYER_PARAMS=0: must be at "
			    "least 1");
	assert_int_equal(mc_opts_set(&o, MC_OPT_STAGE, "4", false, err,
				     sizeof(err)), -1);
	assert_string_equal(err, "--zero-stage=4: expected a ZeRO stage 0, 1, "
			    "2 or 3");
	assert_int_equal(mc_opts_set(&o, MC_OPT_ZERO_INIT, "maybe", true, err,
				     sizeof(err)), -1);
	assert_non_null(strstr(err, "MEMCORE_ZERO_INIT=maybe: "));
}

/* A control byte in a value is refused before any parsing, the message
 * quoting it escaped: a newline must not forge a line of memcore's output
 * or slurmd's log, an ESC must not drive the user's terminal. */
static void test_control_bytes(void **state)
{
	struct mc_opts o = { 0 };

	(void)state;
	assert_int_equal(mc_opts_set_env(&o, MC_OPT_STAGE,
					 "3\nmemcore: this step fits:", err,
					 sizeof(err)), -1);
	assert_string_equal(err, "MEMCORE_ZERO_STAGE=\"3\\nmemcore: this step "
			    "fits:\": a control character in the value");
	assert_null(strchr(err, '\n'));
	assert_false(o.set[MC_OPT_STAGE]);
	assert_int_equal(mc_opts_set(&o, MC_OPT_OFFLOAD, "\x1b[31mall", false,
				     err, sizeof(err)), -1);
	assert_string_equal(err, "--offload=\"\\x1b[31mall\": a control "
			    "character in the value");
	assert_int_equal(mc_opts_set(&o, MC_OPT_DS_CONFIG, "ds.json\r", false,
				     err, sizeof(err)), -1);
	assert_string_equal(err, "--deepspeed-config=\"ds.json\\r\": a control "
			    "character in the value");
	assert_int_equal(mc_opts_set(&o, MC_OPT_PARAMS, "7B\x7f", true, err,
				     sizeof(err)), -1);
	assert_non_null(strstr(err, "=\"7B\\x7f\": a control character"));
	/* nothing was applied */
	for (int i = 0; i < MC_OPT_COUNT; i++)
		assert_false(o.set[i]);
	/* a plain value still parses */
	assert_int_equal(mc_opts_set_env(&o, MC_OPT_STAGE, "3", err,
					 sizeof(err)), 0);
	assert_int_equal(o.stage, 3);
}

static void test_request(void **state)
{
	struct mc_opts o = { 0 };
	struct mc_policy p;
	struct mc_request r = { .gpus = 8 };

	(void)state;
	mc_policy_defaults(&p);
	mc_opts_request(&o, &p, &r);
	assert_int_equal(r.gpus, 8);	/* untouched */
	assert_int_equal(r.dataloader_workers, p.dataloader_workers);
	assert_int_equal(r.zero_init, MC_ZERO_INIT_POLICY);
	assert_int_equal(r.largest_layer_params, 0);
	assert_int_equal(mc_opts_set(&o, MC_OPT_WORKERS, "5", false, err,
				     sizeof(err)), 0);
	assert_int_equal(mc_opts_set(&o, MC_OPT_PARAMS, "2851598336", false,
				     err, sizeof(err)), 0);
	assert_int_equal(mc_opts_set(&o, MC_OPT_STAGE, "3", true, err,
				     sizeof(err)), 0);
	assert_int_equal(mc_opts_set(&o, MC_OPT_OFFLOAD, "optimizer", false,
				     err, sizeof(err)), 0);
	assert_int_equal(mc_opts_set(&o, MC_OPT_ZERO_INIT, "yes", false, err,
				     sizeof(err)), 0);
	assert_int_equal(mc_opts_set(&o, MC_OPT_LARGEST_LAYER, "32899072",
				     false, err, sizeof(err)), 0);
	mc_opts_request(&o, &p, &r);
	assert_int_equal(r.dataloader_workers, 5);
	assert_int_equal(r.model_params, 2851598336ULL);
	assert_int_equal(r.zero_stage, 3);
	assert_int_equal(r.offload, MC_OFFLOAD_OPTIMIZER);
	assert_int_equal(r.zero_init, MC_ZERO_INIT_YES);
	assert_int_equal(r.largest_layer_params, 32899072);
}

static int set(struct mc_opts *o, enum mc_opt_id id, const char *v,
	       bool env)
{
	return mc_opts_set(o, id, v, env, err, sizeof(err));
}

/* --model-params below 1M is a count without its suffix (7 for 7B): it is
 * refused, naming the option (or variable) and value, with the suffixed
 * forms; nothing set. 1M itself is taken. */
static void test_params_min(void **state)
{
	struct mc_opts o = { 0 };

	(void)state;
	assert_int_equal(set(&o, MC_OPT_PARAMS, "7", false), -1);
	assert_string_equal(err, "--model-params=7: 7 parameters is below 1M "
			    "(1e6), the smallest model taken; give the count "
			    "with its suffix: 7B for 7 billion, 7M for 7 "
			    "million");
	assert_false(o.set[MC_OPT_PARAMS]);
	assert_int_equal(o.params, 0);
	assert_int_equal(set(&o, MC_OPT_PARAMS, "999999", true), -1);
	assert_non_null(strstr(err, "MEMCORE_MODEL_PARAMS=999999: 999999 "
			       "parameters is below 1M"));
	assert_int_equal(set(&o, MC_OPT_PARAMS, "999K", false), -1);
	assert_non_null(strstr(err, "--model-params=999K: 999000 parameters"));
	assert_int_equal(set(&o, MC_OPT_PARAMS, "1M", false), 0);
	assert_int_equal(o.params, 1000000);
	o = (struct mc_opts){ 0 };
	assert_int_equal(set(&o, MC_OPT_PARAMS, "1e6", false), 0);
	assert_int_equal(o.params, 1000000);
	/* A layer may be smaller than that: only the model is held to it. */
	assert_int_equal(set(&o, MC_OPT_LARGEST_LAYER, "5000", false), 0);
	assert_int_equal(o.largest_layer_params, 5000);
}

/* The combinations no policy accepts, refused where all options are known
 * (srun/sbatch/salloc's init_post_opt, memcore check): each row the
 * options set, in order, on nothing, then checked. */
static void test_check(void **state)
{
	static const struct {
		const char *name;
		struct {
			enum mc_opt_id id;
			const char *v;
			bool env;		/* from MEMCORE_* */
		} set[4];			/* up to the first without v */
		int rc;
		const char *err;		/* the error, exactly */
		const char *err_in;		/* in the error */
	} rows[] = {
		{ "nothing", .rc = 0 },
		/* sbatch --offload=all with no --zero-stage */
		{ "--offload=all alone",
		  .set = { { MC_OPT_OFFLOAD, "all", false } }, .rc = -1,
		  .err = "--offload=all (parameter offload) needs "
			 "--zero-stage=3, and no stage is given: add "
			 "--zero-stage=3, or use --offload=optimizer with "
			 "stage 1 or 2" },
		{ "--offload=all --zero-stage=2",
		  .set = { { MC_OPT_OFFLOAD, "all", false },
			   { MC_OPT_STAGE, "2", false } }, .rc = -1,
		  .err_in = "needs --zero-stage=3, not 1 or 2" },
		/* stage 3: the model is still missing */
		{ "--offload=all --zero-stage=3",
		  .set = { { MC_OPT_OFFLOAD, "all", false },
			   { MC_OPT_STAGE, "3", false } }, .rc = -1,
		  .err_in = "--offload=all needs --model-params" },
		{ "--offload=all --zero-stage=3 --model-params=7B",
		  .set = { { MC_OPT_OFFLOAD, "all", false },
			   { MC_OPT_STAGE, "3", false },
			   { MC_OPT_PARAMS, "7B", false } }, .rc = 0 },
		{ "... and --largest-layer-params=8B",
		  .set = { { MC_OPT_OFFLOAD, "all", false },
			   { MC_OPT_STAGE, "3", false },
			   { MC_OPT_PARAMS, "7B", false },
			   { MC_OPT_LARGEST_LAYER, "8B", false } }, .rc = -1,
		  .err = "--largest-layer-params: more than --model-params" },
		/* --offload=none and a stage without a model are fine */
		{ "--offload=none --zero-stage=2",
		  .set = { { MC_OPT_OFFLOAD, "none", false },
			   { MC_OPT_STAGE, "2", false } }, .rc = 0 },
		/* optimizer offload from the environment: the message says so */
		{ "MEMCORE_OFFLOAD=optimizer --model-params=7B",
		  .set = { { MC_OPT_OFFLOAD, "optimizer", true },
			   { MC_OPT_PARAMS, "7B", false } }, .rc = -1,
		  .err = "--offload=optimizer needs --zero-stage=1, 2 or 3 "
			 "(ZeRO offload has no stage 0): add --zero-stage, or "
			 "drop --offload (from the environment: "
			 "MEMCORE_OFFLOAD)" },
		{ "MEMCORE_OFFLOAD=optimizer --model-params=7B "
		  "MEMCORE_ZERO_STAGE=1",
		  .set = { { MC_OPT_OFFLOAD, "optimizer", true },
			   { MC_OPT_PARAMS, "7B", false },
			   { MC_OPT_STAGE, "1", true } }, .rc = 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mc_opts o = { 0 };
		int rc;

		for (size_t k = 0; k < 4 && rows[i].set[k].v; k++)
			if (set(&o, rows[i].set[k].id, rows[i].set[k].v,
				rows[i].set[k].env))
				fail_msg("%s: setting %s: %s", rows[i].name,
					 rows[i].set[k].v, err);
		err[0] = '\0';
		rc = mc_opts_check(&o, err, sizeof(err));
		if (rc != rows[i].rc)
			fail_msg("%s: check %d, want %d ('%s')", rows[i].name,
				 rc, rows[i].rc, err);
		if (rows[i].err && strcmp(err, rows[i].err))
			fail_msg("%s: error '%s', want '%s'", rows[i].name, err,
				 rows[i].err);
		if (rows[i].err_in && !strstr(err, rows[i].err_in))
			fail_msg("%s: error '%s' lacks '%s'", rows[i].name, err,
				 rows[i].err_in);
	}
}

/* Several DataLoaders per rank: --dataloader-workers=8+2 is 10 per GPU. */
static void test_workers_list(void **state)
{
	static const struct {
		const char *v, *why;
	} bad[] = {
		{ "8+", "--dataloader-workers=8+: an empty part: expected N or "
			"one count per DataLoader joined by +, such as 8+2" },
		{ "+2", "--dataloader-workers=+2: an empty part" },
		{ "8++2", "--dataloader-workers=8++2: an empty part" },
		{ "+", "--dataloader-workers=+: an empty part" },
		{ "a+1", "--dataloader-workers=a+1: 'a': not a number" },
		{ "1+-1", "--dataloader-workers=1+-1: '-1': " },
		{ "1+2 ", "--dataloader-workers=1+2 : '2 ': not a whole number" },
		{ "1+1+1+1+1+1+1+1+1", "--dataloader-workers=1+1+1+1+1+1+1+1+1: "
			"more than 8 DataLoaders (parts joined by +)" },
		{ "1000+25", "--dataloader-workers=1000+25: out of range (at "
			"most 1024 in all)" },
		{ "1+1025", "--dataloader-workers=1+1025: '1025': out of range" },
		{ "1+99999999999999999999999999999999999",
		  "'99999999999999999999999999999999999': out of range" },
	};
	struct mc_opts o = { 0 };
	struct mc_policy p;
	struct mc_request r = { 0 };
	char list[64];

	(void)state;
	mc_policy_defaults(&p);
	assert_string_equal(mc_opts_workers_list(&o, 2, list, sizeof(list)),
			    "2");
	assert_int_equal(set(&o, MC_OPT_WORKERS, "8+2", false), 0);
	assert_int_equal(o.workers, 10);
	assert_int_equal(o.n_worker_parts, 2);
	assert_string_equal(mc_opts_workers_list(&o, 2, list, sizeof(list)),
			    "8+2");
	mc_opts_request(&o, &p, &r);
	assert_int_equal(r.dataloader_workers, 10);
	/* the same list again is the same value; another sum is not */
	assert_int_equal(set(&o, MC_OPT_WORKERS, "8+2", false), 0);
	assert_int_equal(set(&o, MC_OPT_WORKERS, "10", false), -1);
	assert_non_null(strstr(err, "given twice with different values"));
	o = (struct mc_opts){ 0 };
	assert_int_equal(set(&o, MC_OPT_WORKERS, "10", false), 0);
	assert_string_equal(mc_opts_workers_list(&o, 2, list, sizeof(list)),
			    "10");
	o = (struct mc_opts){ 0 };
	assert_int_equal(set(&o, MC_OPT_WORKERS, "0+1+0+1+0+1+0+1", true), 0);
	assert_int_equal(o.workers, 4);
	assert_string_equal(mc_opts_workers_list(&o, 2, list, sizeof(list)),
			    "0+1+0+1+0+1+0+1");
	o = (struct mc_opts){ 0 };
	assert_int_equal(set(&o, MC_OPT_WORKERS, "1000+24", false), 0);
	assert_int_equal(o.workers, MC_WORKERS_LIMIT);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mc_opts b = { 0 }, z = { 0 };

		err[0] = '\0';
		assert_int_equal(set(&b, MC_OPT_WORKERS, bad[i].v, false), -1);
		if (!strstr(err, bad[i].why))
			fail_msg("%s: '%s' not in '%s'", bad[i].v, bad[i].why,
				 err);
		assert_memory_equal(&b, &z, sizeof(b));	/* unchanged */
	}
	/* MaxDataloaderWorkers applies to the total */
	p.max_dataloader_workers = 8;
	o = (struct mc_opts){ 0 };
	assert_int_equal(set(&o, MC_OPT_WORKERS, "6+3", false), 0);
	mc_opts_request(&o, &p, &r);
	assert_int_equal(mc_request_check(&p, &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--dataloader-workers=9: more than "
			       "MaxDataloaderWorkers=8"));
}

/* --dataset-in-memory[=SIZE]: SIZE as --mem takes it, or none. */
static void test_dataset_in_memory(void **state)
{
	struct mc_opts o = { 0 };
	struct mc_policy p;
	struct mc_request r = { .gpus = 2 };
	static const char *const bad[][2] = {
		{ "abc", "--dataset-in-memory=abc: not a number" },
		{ "0", "--dataset-in-memory=0: expected a size from 1M to "
		       "1024T, or no value for the --dataset paths' measured "
		       "size" },
		{ "-5G", "--dataset-in-memory=-5G: negative value not "
			 "allowed" },
		{ "99999999999999999999", "--dataset-in-memory="
		  "99999999999999999999: too large" },
		{ "2000T", "--dataset-in-memory=2000T: expected a size from "
			   "1M to 1024T, or no value for the --dataset paths' "
			   "measured size" },
	};

	(void)state;
	mc_policy_defaults(&p);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(mc_opts_set(&o, MC_OPT_DATASET_IN_MEMORY,
					     bad[i][0], false, err,
					     sizeof(err)), -1);
		assert_string_equal(err, bad[i][1]);
		assert_false(o.set[MC_OPT_DATASET_IN_MEMORY]);
	}
	assert_int_equal(mc_opts_set_env(&o, MC_OPT_DATASET_IN_MEMORY, "x1",
					 err, sizeof(err)), -1);
	assert_string_equal(err, "MEMCORE_DATASET_IN_MEMORY=x1: not a number");
	/* the option alone, as srun and slurmstepd get it */
	assert_int_equal(mc_opts_set(&o, MC_OPT_DATASET_IN_MEMORY, NULL, false,
				     err, sizeof(err)), 0);
	assert_true(mc_opts_dataset_measured(&o));
	mc_opts_request(&o, &p, &r);
	assert_int_equal(r.use.dataset_bytes, 0);
	memset(&o, 0, sizeof(o));
	assert_int_equal(mc_opts_set(&o, MC_OPT_DATASET_IN_MEMORY, "", false,
				     err, sizeof(err)), 0);
	assert_true(mc_opts_dataset_measured(&o));
	memset(&o, 0, sizeof(o));
	/* a bare number is MiB, as --mem */
	assert_int_equal(mc_opts_set(&o, MC_OPT_DATASET_IN_MEMORY, "20480",
				     false, err, sizeof(err)), 0);
	assert_false(mc_opts_dataset_measured(&o));
	mc_opts_request(&o, &p, &r);
	assert_int_equal(r.use.dataset_bytes, 20ULL << 30);
	assert_int_equal(mc_opts_set(&o, MC_OPT_DATASET_IN_MEMORY, "21G",
				     false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "given twice with different values"));
	/* the variable's "yes": measured; an option wins over it */
	memset(&o, 0, sizeof(o));
	assert_int_equal(mc_opts_set_env(&o, MC_OPT_DATASET_IN_MEMORY, "yes",
					 err, sizeof(err)), 0);
	assert_true(mc_opts_dataset_measured(&o));
	assert_int_equal(mc_opts_set(&o, MC_OPT_DATASET_IN_MEMORY, "4G",
				     false, err, sizeof(err)), 0);
	assert_int_equal(o.dataset_in_memory_bytes, 4ULL << 30);
	assert_int_equal(mc_opt_lookup("dataset-in-memory"),
			 MC_OPT_DATASET_IN_MEMORY);
}

/* --dataset-in-memory=SIZE:KIND, or KIND alone: what the data is, for
 * how its workers share it (mc_terms.h); objects when not said. */
static void test_dataset_kind(void **state)
{
	static const struct {
		const char *v;
		uint64_t bytes;		/* 0: measured */
		enum mc_dataset_kind kind;
	} good[] = {
		{ "200G:arrays", 200ULL << 30, MC_DATASET_ARRAYS },
		{ "210330M:ARRAYS", 210330ULL << 20, MC_DATASET_ARRAYS },
		{ "200G:objects", 200ULL << 30, MC_DATASET_OBJECTS },
		{ "200G", 200ULL << 30, MC_DATASET_OBJECTS },
		{ "arrays", 0, MC_DATASET_ARRAYS },
		{ "yes:arrays", 0, MC_DATASET_ARRAYS },
		{ ":arrays", 0, MC_DATASET_ARRAYS },
		{ "objects", 0, MC_DATASET_OBJECTS },
	};
	static const char *const bad[][2] = {
		{ "200G:numpy", "--dataset-in-memory=200G:numpy: unknown kind "
		  "'numpy' after ':' (arrays: numpy/Arrow data the workers "
		  "share; objects: Python objects each worker copies)" },
		{ "200G:", "--dataset-in-memory=200G:: unknown kind ''" },
		{ "0:arrays", "--dataset-in-memory=0:arrays: expected a size "
		  "from 1M to 1024T" },
		{ "abc:arrays", "--dataset-in-memory=abc:arrays: not a number" },
		{ "arrays:200G", "--dataset-in-memory=arrays:200G: unknown "
		  "kind '200G'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct mc_opts o = { 0 };
		struct mc_policy p;
		struct mc_request r = { .gpus = 2 };

		mc_policy_defaults(&p);
		assert_int_equal(mc_opts_set(&o, MC_OPT_DATASET_IN_MEMORY,
					     good[i].v, false, err,
					     sizeof(err)), 0);
		assert_int_equal(o.dataset_in_memory_bytes, good[i].bytes);
		assert_int_equal(mc_opts_dataset_measured(&o), !good[i].bytes);
		mc_opts_request(&o, &p, &r);
		assert_int_equal(r.use.dataset_kind, good[i].kind);
		assert_int_equal(r.use.dataset_bytes, good[i].bytes);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mc_opts o = { 0 };

		assert_int_equal(mc_opts_set(&o, MC_OPT_DATASET_IN_MEMORY,
					     bad[i][0], false, err,
					     sizeof(err)), -1);
		if (strncmp(err, bad[i][1], strlen(bad[i][1])))
			fail_msg("'%s': '%s', want '%s'", bad[i][0], err,
				 bad[i][1]);
		assert_false(o.set[MC_OPT_DATASET_IN_MEMORY]);
	}
	/* The variable says it as the option does. */
	{
		struct mc_opts o = { 0 };

		assert_int_equal(mc_opts_set_env(&o, MC_OPT_DATASET_IN_MEMORY,
						 "2G:arrays", err,
						 sizeof(err)), 0);
		assert_int_equal(o.dataset_kind, MC_DATASET_ARRAYS);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_control_bytes),
		cmocka_unit_test(test_params_min),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_workers_list),
		cmocka_unit_test(test_dataset_in_memory),
		cmocka_unit_test(test_dataset_kind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
