/*
 * test_parse.c - the strict parsers and byte formatting of mc_parse.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mc_parse.h"
#include "mc_config.h"

#define GiB ((uint64_t)1 << 30)
#define MiB ((uint64_t)1 << 20)

static char err[256];

static void assert_size(const char *s, uint64_t unit, uint64_t want)
{
	uint64_t v = 12345;

	err[0] = '\0';
	if (mc_parse_size(s, unit, &v, err, sizeof(err)))
		fail_msg("'%s' refused: %s", s, err);
	assert_int_equal(v, want);
}

static void assert_size_err(const char *s, const char *why)
{
	uint64_t v = 12345;

	err[0] = '\0';
	assert_int_equal(mc_parse_size(s, 1, &v, err, sizeof(err)), -1);
	assert_int_equal(v, 12345);	/* untouched on error */
	if (!strstr(err, why))
		fail_msg("'%s': error '%s' lacks '%s'", s, err, why);
}

static void test_size_ok(void **state)
{
	(void)state;
	assert_size("0", 1, 0);
	assert_size("4096", 1, 4096);
	assert_size("400", MiB, 400 * MiB);
	assert_size("4G", 1, 4 * GiB);
	assert_size("4g", 1, 4 * GiB);
	assert_size("4GB", 1, 4 * GiB);
	assert_size("4gb", 1, 4 * GiB);
	assert_size("4Kb", 1, 4096);
	assert_size("4TB", 1, 4ULL << 40);
	assert_size("1024T", 1, 1ULL << 50);
	assert_size("512M", 1, 512 * MiB);
	assert_size("2K", 1, 2048);
	assert_size("1T", 1, (uint64_t)1 << 40);
	assert_size("18446744073709551615", 1, UINT64_MAX);
	assert_size("16777215T", 1, 16777215ULL << 40);
}

/* sbatch refuses --mem=1.5G ("Invalid --mem specification"): so does every
 * size a user or an administrator types, with the whole form when exact. */
static void test_size_fraction_refused(void **state)
{
	(void)state;
	assert_size_err("1.5G", "not a whole number: sizes are whole, as "
			"Slurm takes them (1536M)");
	assert_size_err("0.5M", "(512K)");
	assert_size_err("2.0T", "(2T)");
	assert_size_err("1.5", "not a whole number");
	assert_size_err("0.001K", "not a whole number");
	/* with MiB as the unit: no hint below a MiB (Slurm's --mem unit) */
	err[0] = '\0';
	assert_int_equal(mc_parse_size("2.5", MiB, &(uint64_t){7}, err,
				       sizeof(err)), -1);
	assert_string_equal(err, "not a whole number: sizes are whole, as "
			    "Slurm takes them");
	assert_int_equal(mc_parse_size("0.5K", MiB, &(uint64_t){7}, err,
				       sizeof(err)), -1);
	assert_string_equal(err, "not a whole number: sizes are whole, as "
			    "Slurm takes them");
}

/* Slurm's own rounded figures (a partition's TRES "mem=4.37T") still read,
 * rounded down to a byte. */
static void test_size_rounded(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(mc_parse_size_rounded("1.5G", 1, &v, err,
					       sizeof(err)), 0);
	assert_int_equal(v, 3 * GiB / 2);
	assert_int_equal(mc_parse_size_rounded("1.5", 1, &v, err,
					       sizeof(err)), 0);
	assert_int_equal(v, 1);
	assert_int_equal(mc_parse_size_rounded("4580304", MiB, &v, err,
					       sizeof(err)), 0);
	assert_int_equal(v, 4580304 * MiB);
	assert_int_equal(mc_parse_size_rounded("1.G", 1, &v, err,
					       sizeof(err)), -1);
}

static void test_size_errors(void **state)
{
	(void)state;
	assert_size_err("", "empty");
	assert_size_err("-1", "negative");
	assert_size_err("-4G", "negative");
	assert_size_err("abc", "not a number");
	assert_size_err(" 4G", "not a number");
	assert_size_err("+4G", "not a number");
	assert_size_err(".5G", "not a number");
	assert_size_err("1.G", "not a number");
	assert_size_err("4Q", "unknown size suffix 'Q'");
	assert_size_err("4G ", "unknown size suffix 'G '");
	assert_size_err("4GBB", "unknown size suffix");
	assert_size_err("4B", "unknown size suffix 'B'");
	/* What sbatch 22.05 refuses ("Invalid --mem specification") is
	 * refused, with the list of what it takes. */
	assert_size_err("4GiB", "unknown size suffix 'GiB' (K, M, G or T "
			"(binary), optionally with B: 4G or 4GB)");
	assert_size_err("100Gi", "unknown size suffix 'Gi'");
	assert_size_err("4kib", "unknown size suffix 'kib'");
	assert_size_err("2P", "unknown size suffix 'P' (K, M, G or T");
	assert_size_err("2p", "unknown size suffix 'p'");
	assert_size_err("1E", "unknown size suffix 'E'");
	assert_size_err("100GX", "unknown size suffix 'GX'");
	assert_size_err("100G5", "unknown size suffix 'G5'");
	assert_size_err("100b", "unknown size suffix 'b'");
	assert_size_err("18446744073709551616", "too large");
	assert_size_err("99999999999999999999999", "too large");
	assert_size_err("16777216T", "too large");
	assert_size_err("17179869184G", "too large");
	assert_int_equal(mc_parse_size(NULL, 1, &(uint64_t){0}, err,
				       sizeof(err)), -1);
}

static void assert_count_err(const char *s, uint32_t max, const char *why)
{
	uint32_t v = 77;

	err[0] = '\0';
	assert_int_equal(mc_parse_count(s, max, &v, err, sizeof(err)), -1);
	assert_int_equal(v, 77);
	if (!strstr(err, why))
		fail_msg("'%s': error '%s' lacks '%s'", s, err, why);
}

static void test_count(void **state)
{
	uint32_t v = 0;

	(void)state;
	assert_int_equal(mc_parse_count("0", 10, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 0);
	assert_int_equal(mc_parse_count("10", 10, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 10);
	assert_int_equal(mc_parse_count("4294967295", UINT32_MAX, &v, err,
					sizeof(err)), 0);
	assert_int_equal(v, UINT32_MAX);
	assert_count_err("11", 10, "out of range (at most 10)");
	assert_count_err("-1", 10, "negative");
	assert_count_err("abc", 10, "not a number");
	assert_count_err("", 10, "empty");
	assert_count_err("99999999999", UINT32_MAX, "out of range");
	assert_count_err("99999999999999999999999", UINT32_MAX,
			 "out of range");
	assert_count_err("4294967296", UINT32_MAX, "out of range");
	assert_count_err("2x", 10, "not a whole number");
	assert_count_err("2.0", 10, "not a whole number");
	assert_count_err("2 ", 10, "not a whole number");
	assert_count_err(" 2", 10, "not a number");
	assert_count_err("+2", 10, "not a number");
}

static void test_ratio(void **state)
{
	double d = 0;

	(void)state;
	assert_int_equal(mc_parse_ratio("1.5", 0, 16, &d, err, sizeof(err)), 0);
	assert_true(d == 1.5);
	assert_int_equal(mc_parse_ratio("1", 0, 16, &d, err, sizeof(err)), 0);
	assert_true(d == 1.0);
	assert_int_equal(mc_parse_ratio("16", 0, 16, &d, err, sizeof(err)), 0);
	assert_true(d == 16.0);
	assert_int_equal(mc_parse_ratio("0.25", 0, 16, &d, err, sizeof(err)),
			 0);
	assert_true(d == 0.25);
	assert_int_equal(mc_parse_ratio("16.01", 0, 16, &d, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(mc_parse_ratio("0.5", 1, 16, &d, err, sizeof(err)),
			 -1);
	assert_int_equal(mc_parse_ratio("-1", 0, 16, &d, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "negative"));
	assert_int_equal(mc_parse_ratio("inf", 0, 16, &d, err, sizeof(err)),
			 -1);
	assert_int_equal(mc_parse_ratio("nan", 0, 16, &d, err, sizeof(err)),
			 -1);
	assert_int_equal(mc_parse_ratio("1e1", 0, 16, &d, err, sizeof(err)),
			 -1);
	assert_int_equal(mc_parse_ratio("", 0, 16, &d, err, sizeof(err)), -1);
	assert_int_equal(mc_parse_ratio("1,5", 0, 16, &d, err, sizeof(err)),
			 -1);
	assert_int_equal(mc_parse_ratio("99999999999999999999999", 0, 16, &d,
					err, sizeof(err)), -1);
}

static void assert_params(const char *s, uint64_t want)
{
	uint64_t v = 0;

	if (mc_parse_params(s, &v, err, sizeof(err)))
		fail_msg("'%s' refused: %s", s, err);
	assert_int_equal(v, want);
}

static void assert_params_err(const char *s, const char *why)
{
	uint64_t v = 5;

	err[0] = '\0';
	assert_int_equal(mc_parse_params(s, &v, err, sizeof(err)), -1);
	assert_int_equal(v, 5);
	if (!strstr(err, why))
		fail_msg("'%s': error '%s' lacks '%s'", s, err, why);
}

static void test_params(void **state)
{
	(void)state;
	assert_params("7B", 7000000000ULL);
	assert_params("70b", 70000000000ULL);
	assert_params("7G", 7000000000ULL);
	assert_params("350M", 350000000ULL);
	assert_params("125K", 125000ULL);
	assert_params("1.5T", 1500000000000ULL);
	assert_params("6.7e9", 6700000000ULL);
	assert_params("6.7E9", 6700000000ULL);
	assert_params("1e15", 1000000000000000ULL);
	assert_params("2851598336", 2851598336ULL);
	assert_params("2.851598336B", 2851598336ULL);
	assert_params("1", 1);
	assert_params_err("", "empty");
	assert_params_err("-7B", "negative");
	assert_params_err("abc", "not a number");
	assert_params_err("7X", "unknown suffix 'X'");
	assert_params_err("7BB", "unknown suffix 'BB'");
	/* The whole suffix is named, and the list is what is taken: one
	 * letter, G the same as B. */
	assert_params_err("7GB", "unknown suffix 'GB' (one letter: K, M, B or "
			  "G (the same: 1e9), T; or an exponent as in 6.7e9)");
	assert_params_err("7Gi", "unknown suffix 'Gi'");
	assert_params("7g", 7000000000ULL);
	assert_params("7k", 7000ULL);
	assert_params("7t", 7000000000000ULL);
	assert_params_err("0", "at least 1");
	assert_params_err("0.1", "at least 1");
	assert_params_err("1e16", "too large");
	assert_params_err("1001T", "too large");
	assert_params_err("1e", "not a number");
	assert_params_err("99999999999999999999999", "too large");
}

static void test_bool_word(void **state)
{
	int b = -1, w = -1;

	(void)state;
	assert_int_equal(mc_parse_bool("yes", &b, err, sizeof(err)), 0);
	assert_int_equal(b, 1);
	assert_int_equal(mc_parse_bool("OFF", &b, err, sizeof(err)), 0);
	assert_int_equal(b, 0);
	assert_int_equal(mc_parse_bool("True", &b, err, sizeof(err)), 0);
	assert_int_equal(b, 1);
	assert_int_equal(mc_parse_bool("0", &b, err, sizeof(err)), 0);
	assert_int_equal(b, 0);
	assert_int_equal(mc_parse_bool("maybe", &b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "yes or no"));
	assert_int_equal(mc_parse_bool("", &b, err, sizeof(err)), -1);

	assert_int_equal(mc_parse_word("WARN", mc_mode_words, &w, err,
				       sizeof(err)), 0);
	assert_int_equal(w, MC_MODE_WARN);
	assert_int_equal(mc_parse_word("off", mc_mode_words, &w, err,
				       sizeof(err)), 0);
	assert_int_equal(w, MC_MODE_OFF);
	assert_int_equal(mc_parse_word("strict", mc_mode_words, &w, err,
				       sizeof(err)), -1);
	assert_string_equal(err, "expected enforce, warn or off");
	assert_int_equal(mc_parse_word("", mc_bind_words, &w, err,
				       sizeof(err)), -1);
}

static void test_fmt(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(mc_fmt_bytes(704 * GiB, b, sizeof(b)), "704 GiB");
	assert_string_equal(mc_fmt_bytes(136876720128ULL, b, sizeof(b)),
			    "127.48 GiB");
	assert_string_equal(mc_fmt_bytes(512 * MiB, b, sizeof(b)), "512 MiB");
	assert_string_equal(mc_fmt_bytes(0, b, sizeof(b)), "0 B");
	assert_string_equal(mc_fmt_bytes(1023, b, sizeof(b)), "1023 B");
	assert_string_equal(mc_fmt_bytes(1536, b, sizeof(b)), "1.50 KiB");
	assert_string_equal(mc_fmt_bytes((uint64_t)2 << 40, b, sizeof(b)),
			    "2048 GiB");
	assert_string_equal(mc_fmt_bytes(UINT64_MAX, b, sizeof(b)),
			    "17179869184.00 GiB");

	assert_string_equal(mc_fmt_mem_option(704 * GiB, b, sizeof(b)),
			    "704G");
	assert_string_equal(mc_fmt_mem_option(513 * MiB, b, sizeof(b)),
			    "513M");
	assert_string_equal(mc_fmt_mem_option(513 * MiB - 1, b, sizeof(b)),
			    "513M");
	assert_string_equal(mc_fmt_mem_option(36 * GiB + GiB / 2, b,
					      sizeof(b)), "37G");
	assert_string_equal(mc_fmt_mem_option(136876720128ULL, b, sizeof(b)),
			    "128G");
	assert_string_equal(mc_fmt_mem_option(3 * GiB / 2, b, sizeof(b)),
			    "1536M");
	assert_string_equal(mc_fmt_mem_option(672 * GiB + 1, b, sizeof(b)),
			    "673G");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_ok),
		cmocka_unit_test(test_size_errors),
		cmocka_unit_test(test_size_fraction_refused),
		cmocka_unit_test(test_size_rounded),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_ratio),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_bool_word),
		cmocka_unit_test(test_fmt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
