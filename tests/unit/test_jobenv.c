/*
 * test_jobenv.c - a variable as the job will see it (mc_jobenv.h): each
 * --export rule of sbatch and srun as Slurm's source applies it, the
 * versions where it changes (NIL from 23.02.3, the --export-file's
 * entries dropped without --export from 26.05), sbatch's environment
 * gone under an --export-file, the quoting of
 * find_quote_token, and the --export-file's NUL-separated entries.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mc_jobenv.h"

#define V22 0x160508UL	/* 22.05.8 */
#define V24 0x180B05UL	/* 24.11.5 */
#define V26 0x1A0503UL	/* 26.05.3 */
#define W "MEMCORE_DATALOADER_WORKERS"

/* The submitting process's environment: NULL-terminated "NAME=VALUE". */
static const char *lookup(const char *name, void *ctx)
{
	size_t nl = strlen(name);

	for (const char *const *p = ctx; *p; p++)
		if (!strncmp(*p, name, nl) && (*p)[nl] == '=')
			return *p + nl + 1;
	return NULL;
}

static const char *env_w1[] = { "PATH=/bin", W "=1", NULL };
static const char *env_none[] = { "PATH=/bin", NULL };

/* W in the job of cmd with --export x, environment env, file entries. */
static const char *job(enum mc_submit_cmd cmd, const char *x,
		       const char **env, const char *file, size_t flen,
		       unsigned long ver)
{
	static char buf[64];
	static const char *ents[8];
	static size_t lens[8];
	struct mc_jobenv e = {
		.cmd = cmd, .export_opt = x, .slurm_version = ver,
		.get = lookup, .ctx = env,
	};

	e.export_file = file != NULL;
	e.file = ents;
	e.file_lens = lens;
	e.nfile = file ? mc_jobenv_file_entries(file, flen, ents, lens, 8) : 0;
	return mc_jobenv_get(&e, W, buf, sizeof(buf));
}

#define SB(x, env) job(MC_SUBMIT_SBATCH, x, env, NULL, 0, V22)
#define SR(x, env) job(MC_SUBMIT_SRUN, x, env, NULL, 0, V22)

static void assert_val(const char *got, const char *want)
{
	if (!want)
		assert_null(got);
	else {
		assert_non_null(got);
		assert_string_equal(got, want);
	}
}

static void test_sbatch(void **state)
{
	(void)state;
	assert_val(SB(NULL, env_w1), "1");		/* all of it */
	assert_val(SB("ALL", env_w1), "1");
	assert_val(SB("all", env_w1), "1");		/* xstrcasecmp */
	assert_val(SB("NONE", env_w1), NULL);
	assert_val(SB("none", env_w1), NULL);
	assert_val(SB("ALL," W "=3", env_w1), "3");	/* the list, in order */
	assert_val(SB(W "=3,ALL", env_w1), "1");	/* ALL after it */
	assert_val(SB(W "=3,ALL", env_none), "3");	/* unset: stays */
	assert_val(SB("PATH," W, env_w1), "1");		/* NAME: when set */
	assert_val(SB("PATH", env_w1), NULL);		/* not named */
	assert_val(SB(W "=2", env_none), "2");
	assert_val(SB("NONE," W "=2", env_none), "2");	/* a list, not NONE */
	assert_val(SB(W, env_none), NULL);
	assert_val(SB("MEMCORE_DATALOADER_WORKERSX=5", env_none), NULL);
	/* A whole token in quotes loses them; a comma inside does not split. */
	assert_val(SB("'" W "=4'", env_none), "4");
	assert_val(SB("\"A=1,2\"," W "=5", env_none), "5");
	assert_val(SB("A='x,y'," W "=6", env_none), "6");
}

static void test_nil(void **state)
{
	(void)state;
	/* 22.05: NIL is a list naming a variable NIL; 23.02.3 on: none. */
	assert_val(job(MC_SUBMIT_SBATCH, "NIL", env_w1, NULL, 0, V22), NULL);
	assert_val(job(MC_SUBMIT_SBATCH, "NIL", env_w1, NULL, 0, V24), NULL);
	{
		struct mc_jobenv e = { .cmd = MC_SUBMIT_SBATCH,
				       .export_opt = "NIL", .get = lookup,
				       .ctx = env_w1 };

		e.slurm_version = V22;
		assert_true(mc_jobenv_login(&e));	/* a list */
		e.slurm_version = V24;
		assert_false(mc_jobenv_login(&e));	/* NIL: no login env */
		e.export_opt = "NONE";
		assert_true(mc_jobenv_login(&e));
		e.export_opt = "ALL";
		assert_false(mc_jobenv_login(&e));
		e.export_opt = NULL;
		assert_false(mc_jobenv_login(&e));
		e.cmd = MC_SUBMIT_SRUN;
		e.export_opt = "NONE";
		assert_false(mc_jobenv_login(&e));
	}
}

static void test_export_file(void **state)
{
	static const char f[] = W "=7\0OTHER=1\0";
	static const char f_nonul[] = "OTHER=1\0" W "=8";
	static const char f_empty_stops[] = "OTHER=1\0\0" W "=9\0";
	static const char f_other[] = "OTHER=1\0";

	(void)state;
	/* The file's entries; sbatch's own environment is gone. */
	assert_val(job(MC_SUBMIT_SBATCH, NULL, env_none, f, sizeof(f) - 1, V22), "7");
	assert_val(job(MC_SUBMIT_SBATCH, NULL, env_w1, f, sizeof(f) - 1, V22), "7");
	assert_val(job(MC_SUBMIT_SBATCH, NULL, env_w1, f_other, sizeof(f_other) - 1, V22), NULL);
	assert_val(job(MC_SUBMIT_SBATCH, NULL, env_none, f, sizeof(f) - 1, V24), "7");
	/* 26.05 without --export: the file's entries are gone too. */
	assert_val(job(MC_SUBMIT_SBATCH, NULL, env_w1, f, sizeof(f) - 1, V26), NULL);
	assert_val(job(MC_SUBMIT_SBATCH, "ALL", env_w1, f, sizeof(f) - 1, V26), "7");
	assert_val(job(MC_SUBMIT_SBATCH, "ALL", env_w1, f_other, sizeof(f_other) - 1, V22), NULL);
	/* NONE drops them; a list keeps them under its own tokens. */
	assert_val(job(MC_SUBMIT_SBATCH, "NONE", env_none, f, sizeof(f) - 1, V22), NULL);
	assert_val(job(MC_SUBMIT_SBATCH, "PATH", env_w1, f, sizeof(f) - 1, V22), "7");
	assert_val(job(MC_SUBMIT_SBATCH, W "=2", env_w1, f, sizeof(f) - 1, V22), "2");
	assert_val(job(MC_SUBMIT_SBATCH, W, env_w1, f_other, sizeof(f_other) - 1, V22), NULL);
	assert_val(job(MC_SUBMIT_SBATCH, NULL, env_none, f_nonul,
		       sizeof(f_nonul) - 1, V22), "8");
	assert_val(job(MC_SUBMIT_SBATCH, NULL, env_none, f_empty_stops,
		       sizeof(f_empty_stops) - 1, V22), NULL);
	/* srun and salloc have no --export-file. */
	assert_val(job(MC_SUBMIT_SALLOC, NULL, env_none, f, sizeof(f) - 1, V22), NULL);
}

static void test_srun(void **state)
{
	(void)state;
	assert_val(SR(NULL, env_w1), "1");
	assert_val(SR("NONE", env_w1), NULL);
	assert_val(SR(W "=3", env_w1), "3");
	/* ALL anywhere: srun's environment last, over the list. */
	assert_val(SR("ALL," W "=3", env_w1), "1");
	assert_val(SR("ALL," W "=3", env_none), "3");
	/* NONE ends the list. */
	assert_val(SR("NONE," W "=3", env_none), NULL);
	assert_val(SR(W "=3,NONE", env_none), "3");
	assert_val(SR("PATH," W, env_w1), "1");
	assert_val(SR("PATH", env_w1), NULL);
	assert_val(job(MC_SUBMIT_SALLOC, "NONE", env_w1, NULL, 0, V22), "1");
}

static void test_cmd_parse(void **state)
{
	enum mc_submit_cmd c;

	(void)state;
	assert_int_equal(mc_submit_cmd_parse("srun", &c), 0);
	assert_int_equal(c, MC_SUBMIT_SRUN);
	assert_int_equal(mc_submit_cmd_parse("salloc", &c), 0);
	assert_int_equal(c, MC_SUBMIT_SALLOC);
	assert_int_equal(mc_submit_cmd_parse("sbatch", &c), 0);
	assert_int_equal(c, MC_SUBMIT_SBATCH);
	assert_int_equal(mc_submit_cmd_parse("scrontab", &c), -1);
	assert_int_equal(mc_submit_cmd_parse(NULL, &c), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sbatch),
		cmocka_unit_test(test_nil),
		cmocka_unit_test(test_export_file),
		cmocka_unit_test(test_srun),
		cmocka_unit_test(test_cmd_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
