/*
 * mc_parse.h - strict parsers for the values users and admins type:
 * sizes, counts, ratios, parameter counts and enumerated words.
 *
 * Every parser takes the whole string (no leading/trailing junk, no sign
 * unless stated), never overflows, and on error returns -1 and writes a
 * short reason (no prefix, no key name: the caller adds where it came from)
 * into err[errlen]. On success it returns 0 and writes *out.
 * Pure C, no allocation, safe in slurmstepd.
 */
#ifndef MC_PARSE_H
#define MC_PARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A size in bytes: digits with an optional binary suffix K, M, G, T
 * (also KB/MB/GB/TB; case-insensitive), exactly what sbatch 22.05 takes
 * for --mem, --mem-per-gpu and --mem-per-cpu (str_to_mbytes: the letter
 * and at most a B after it; 2P, 4GiB and 4B are "Invalid --mem
 * specification"). The largest is therefore written in T (1P = 1024T). No suffix means bytes when default_unit is 1, or
 * the given unit (e.g. 1 << 20 for MiB, as --mem does). Whole numbers
 * only, as sbatch's --mem, --mem-per-gpu and --mem-per-cpu (slurm_opt.c
 * str_to_mbytes: "Invalid --mem specification" for 1.5G) and slurm.conf:
 * "1.5G" is refused, the error giving the exact whole form when there is
 * one ("... (1536M)"). Every size a user or an administrator types goes
 * through this one parser: the command's options, memcore's options and
 * variables, memcore.conf's size keys.
 * Errors: empty, negative, not a number, not a whole number, unknown
 * suffix (with MC_SIZE_SUFFIXES), overflow of 2^64.
 */
#define MC_SIZE_SUFFIXES "K, M, G or T (binary), optionally with B: 4G or " \
			 "4GB"
int mc_parse_size(const char *s, uint64_t default_unit, uint64_t *out,
		  char *err, size_t errlen);

/*
 * The same, for the figures Slurm itself prints rounded (a TRES string's
 * "mem=4.37T"): a fraction is accepted and rounded down to a byte. Never
 * for what a user types.
 */
int mc_parse_size_rounded(const char *s, uint64_t default_unit,
			  uint64_t *out, char *err, size_t errlen);

/*
 * A non-negative decimal count in [0, max]: "0".."max". Rejects empty
 * strings, signs, spaces, trailing junk and values above max (overflow).
 */
int mc_parse_count(const char *s, uint32_t max, uint32_t *out,
		   char *err, size_t errlen);

/* mc_parse_count of a count that must be at least 1 ("must be at least
 * 1" for 0): --nodes, --shards, --seq-len and the like. */
int mc_parse_count_min1(const char *s, uint32_t max, uint32_t *out,
			char *err, size_t errlen);

/*
 * A non-negative finite ratio such as "1.0" or "1.5", in [min, max].
 */
int mc_parse_ratio(const char *s, double min, double max, double *out,
		   char *err, size_t errlen);

/*
 * A parameter count: "7B", "70b", "350M", "1.5T", "6.7e9" or plain
 * digits. Suffixes are decimal and one letter, any case (K=1e3, M=1e6,
 * B=1e9 with G its alias, giga, T=1e12), as model cards write them; an
 * unknown one is named whole in the error with the list. Result in
 * parameters, at least 1, at most 1e15 (--model-params also refuses below
 * MC_PARAMS_MIN: mc_opts_set).
 */
#define MC_PARAMS_MIN 1000000ULL	/* 1M: no model is smaller */
int mc_parse_params(const char *s, uint64_t *out, char *err, size_t errlen);

/*
 * A boolean the way slurm.conf writes them: yes/no, true/false, 1/0, on/off
 * (case-insensitive).
 */
int mc_parse_bool(const char *s, int *out, char *err, size_t errlen);

/*
 * One word out of a NULL-terminated list (case-insensitive); *out is its
 * index. The error lists the accepted words.
 */
int mc_parse_word(const char *s, const char *const *words, int *out,
		  char *err, size_t errlen);

/*
 * An NVIDIA MIG profile inside a GPU type or device name: "1g.10gb",
 * "3g.40gb", "a100_1g.10gb", "nvidia_a100-sxm4-80gb_2g.20gb", "NVIDIA
 * A100-SXM4-80GB MIG 1g.10gb", "1g.10gb+me" (case-insensitive; the first
 * "<N>g.<M>gb" that stands as a word). *bytes = M GiB: the profile's
 * memory as NVIDIA names it (rounded up: a 1g.10gb slice of an A100 80GB
 * has 9.75 GiB), so a floor sized from it never falls short. profile
 * (may be NULL) receives "1g.10gb" (lower case, with a "+..." suffix).
 * Returns 0, or -1 when s names no MIG profile.
 */
int mc_mig_profile(const char *s, uint64_t *bytes, char *profile,
		   size_t len);

/*
 * printf a reason into err[errlen] (always terminated, never overflowing;
 * err may be NULL or errlen 0 to drop it). Returns -1, so that a parser
 * can `return mc_err(err, errlen, "why")`.
 */
int mc_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Print a byte count for people: "704 GiB", "127.48 GiB", "512 MiB".
 * Whole numbers print without decimals; otherwise two decimals. The unit
 * is the largest of B, KiB, MiB, GiB that keeps the number >= 1 (never
 * TiB: "2048 GiB" compares at a glance with "704 GiB").
 * Returns buf.
 */
const char *mc_fmt_bytes(uint64_t bytes, char *buf, size_t buflen);

/*
 * Print a byte count the way --mem takes it, rounded UP so that the value
 * covers bytes: "704G", "37G", "513M". Whole GiB and anything from 10 GiB
 * up print in G (rounding up adds less than a GiB); smaller sizes that are
 * not whole GiB print in M. Returns buf.
 */
const char *mc_fmt_mem_option(uint64_t bytes, char *buf, size_t buflen);

#endif
