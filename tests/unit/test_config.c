/*
 * test_config.c - memcore.conf parsing, its error messages, partition
 * overrides, plugstack arguments and the shipped etc/memcore.conf.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "mc_test_files.h"

#include "mc_config.h"
#include "mc_parse.h"
#include "mc_util.h"

#define GiB ((uint64_t)1 << 30)
#define MiB ((uint64_t)1 << 20)

/* Big: keep it off the stack. */
static struct mc_config cfg;
static char err[MC_ERR_MAX];

static int parse(const char *text)
{
	err[0] = '\0';
	return mc_config_parse(text, strlen(text), "t.conf", &cfg, err,
			       sizeof(err));
}

/* Each figure of the policy p against the one expected (w), by name. */
#define SAME(f)								\
	do {								\
		if (p->f != w->f)					\
			fail_msg("%s: " #f " is %lld, want %lld", what,	\
				 (long long)p->f, (long long)w->f);	\
	} while (0)
#define SAME_REAL(f)							\
	do {								\
		if (p->f != w->f)					\
			fail_msg("%s: " #f " is %g, want %g", what,	\
				 p->f, w->f);				\
	} while (0)

static void assert_policy(const char *what, const struct mc_policy *p,
			  const struct mc_policy *w)
{
	SAME(mode);
	SAME(dataloader_workers);
	SAME(max_dataloader_workers);
	SAME(reserved_cores);
	SAME(min_cores_per_gpu);
	SAME_REAL(host_ram_per_gpu_ram);
	SAME(ram_per_worker_bytes);
	SAME(ram_per_task_bytes);
	SAME(gpu_memory_bytes);
	SAME_REAL(offload_buffer_factor);
	SAME(zero_init);
	SAME(bind);
	if (strcmp(p->topology_file, w->topology_file))
		fail_msg("%s: topology_file is '%s', want '%s'", what,
			 p->topology_file, w->topology_file);
	SAME(cgroup_memory);
	SAME(allow_user_warn);
	SAME(on_error);
	SAME(node_ram_bytes);
	SAME(node_cores);
	SAME(node_gpus);
	SAME(unified_memory);
}

/* memcore.conf(5)'s defaults. */
static const struct mc_policy defaults = {
	.mode = MC_MODE_ENFORCE,
	.dataloader_workers = 2,
	.max_dataloader_workers = 64,
	.reserved_cores = 4,
	.min_cores_per_gpu = 0,
	.host_ram_per_gpu_ram = 1.0,
	.ram_per_worker_bytes = 4 * GiB,
	.ram_per_task_bytes = 1 * GiB,
	.gpu_memory_bytes = 0,
	.offload_buffer_factor = 1.5,
	.zero_init = 1,
	.bind = MC_BIND_NUMA,
	.topology_file = "",
	.cgroup_memory = 1,
	.allow_user_warn = 0,
	.on_error = MC_ON_ERROR_REFUSE,
	.node_ram_bytes = 0,
	.node_cores = 0,
	.node_gpus = 0,
	.unified_memory = MC_UNIFIED_AUTO,
};

static void assert_defaults(const struct mc_policy *p)
{
	assert_policy("defaults", p, &defaults);
}

static void test_defaults(void **state)
{
	(void)state;
	mc_config_init(&cfg);
	assert_defaults(&cfg.global);
	assert_int_equal(cfg.n_partitions, 0);
	assert_int_equal(parse(""), 0);
	assert_defaults(&cfg.global);
	assert_int_equal(parse("# only a comment\n\n   \t\n"), 0);
	assert_defaults(&cfg.global);
	assert_string_equal(cfg.path, "t.conf");
}

static void test_every_key(void **state)
{
	const struct mc_policy *p = &cfg.global;

	(void)state;
	assert_int_equal(parse(
		"mode=WARN DataloaderWorkers=4 MAXDATALOADERWORKERS=8\n"
		"ReservedCores=6 MinCoresPerGpu=16 # a comment\n"
		"HostRamPerGpuRam=1.5\tRamPerWorker=6G RamPerTask=512M\n"
		"GpuMemory=80G OffloadBufferFactor=2 ZeroInit=no\r\n"
		"Bind=none TopologyFile=/etc/slurm/topo.xml CgroupMemory=no\n"
		"AllowUserWarn=false OnError=allow NodeRam=2048 NodeCores=96\n"
		"NodeGpus=8 UnifiedMemory=Yes WorkersPerCore=3"), 0);
	assert_policy("every key", p, &(const struct mc_policy){
		.mode = MC_MODE_WARN,
		.dataloader_workers = 4,
		.max_dataloader_workers = 8,
		.reserved_cores = 6,
		.min_cores_per_gpu = 16,
		.host_ram_per_gpu_ram = 1.5,
		.ram_per_worker_bytes = 6 * GiB,
		.ram_per_task_bytes = 512 * MiB,
		.gpu_memory_bytes = 80 * GiB,
		.offload_buffer_factor = 2.0,
		.zero_init = 0,
		.bind = MC_BIND_NONE,
		.topology_file = "/etc/slurm/topo.xml",
		.cgroup_memory = 0,
		.allow_user_warn = 0,
		.on_error = MC_ON_ERROR_ALLOW,
		/* A size without a suffix is MiB, as in slurm.conf. */
		.node_ram_bytes = 2048 * MiB,
		.node_cores = 96,
		.node_gpus = 8,
		.unified_memory = MC_UNIFIED_YES,
		.workers_per_core = 3,
	});

	assert_int_equal(parse("GpuMemory=auto"), 0);
	assert_int_equal(cfg.global.gpu_memory_bytes, 0);
}

/* The config must be back at defaults after any error. */
static void assert_error(const char *text, const char *want)
{
	assert_int_equal(parse(text), -1);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
	assert_defaults(&cfg.global);
	assert_int_equal(cfg.n_partitions, 0);
	assert_string_equal(cfg.path, "");
}

static void test_errors(void **state)
{
	(void)state;
	assert_error("Mode=warn\nRamPerWorker=4Q\n",
		     "t.conf:2: RamPerWorker: unknown size suffix 'Q' (" MC_SIZE_SUFFIXES ")");
	assert_error("Colour=blue", "t.conf:1: Colour: unknown key");
	assert_error("Mode=strict",
		     "t.conf:1: Mode: expected enforce, warn or off");
	assert_error("\n\nDataloaderWorkers=", "t.conf:3: DataloaderWorkers: "
		     "missing value");
	assert_error("Mode=warn bogus", "t.conf:1: expected Key=Value (a word without '=')");
	assert_error("=5", "t.conf:1: expected Key=Value (no key before '=')");
	assert_error("DataloaderWorkers=-1",
		     "t.conf:1: DataloaderWorkers: negative");
	assert_error("DataloaderWorkers=abc",
		     "t.conf:1: DataloaderWorkers: not a number");
	/* WorkersPerCore: 0 workers a core means nothing, so it is no
	 * "off": an error naming the file and line, as any other. */
	assert_error("Mode=warn\n\nWorkersPerCore=0",
		     "t.conf:3: WorkersPerCore: must be at least 1");
	assert_error("WorkersPerCore=1025",
		     "t.conf:1: WorkersPerCore: out of range (at most 1024)");
	assert_error("Mode=warn\nPartitionName=gpu WorkersPerCore=0",
		     "t.conf:2: WorkersPerCore: must be at least 1");
	assert_error("DataloaderWorkers=1025",
		     "t.conf:1: DataloaderWorkers: out of range (at most 1024)");
	assert_error("NodeCores=99999999999",
		     "t.conf:1: NodeCores: out of range");
	assert_error("RamPerWorker=99999999999999999999T",
		     "t.conf:1: RamPerWorker: too large");
	assert_error("HostRamPerGpuRam=0",
		     "t.conf:1: HostRamPerGpuRam: must be above 0");
	assert_error("HostRamPerGpuRam=17",
		     "t.conf:1: HostRamPerGpuRam: out of range");
	assert_error("OffloadBufferFactor=0.5",
		     "t.conf:1: OffloadBufferFactor: out of range");
	assert_error("ZeroInit=maybe", "t.conf:1: ZeroInit: expected yes or no");
	assert_error("Bind=core", "t.conf:1: Bind: expected numa or none");
	assert_error("UnifiedMemory=maybe",
		     "t.conf:1: UnifiedMemory: expected auto, yes or no");
	assert_error("OnError=ignore",
		     "t.conf:1: OnError: expected refuse or allow");
	assert_error("GpuMemory=lots",
		     "t.conf:1: GpuMemory: not a number");
	/* Duplicates: across global lines, on one line. */
	assert_error("Mode=warn\n# x\nmode=off\n",
		     "t.conf:3: mode: duplicate key (first set on line 1)");
	assert_error("ReservedCores=2 ReservedCores=3",
		     "t.conf:1: ReservedCores: duplicate key (first set on line 1)");
	/* Cross-key: the default above the maximum. */
	assert_error("DataloaderWorkers=8\nMaxDataloaderWorkers=4",
		     "t.conf:1: DataloaderWorkers: DataloaderWorkers=8 is above "
		     "MaxDataloaderWorkers=4");
	assert_error("MaxDataloaderWorkers=1",
		     "t.conf:1: MaxDataloaderWorkers: DataloaderWorkers=2 is above "
		     "MaxDataloaderWorkers=1");
}

/* A RAM floor per worker above its ceiling leaves no --ram-per-worker a
 * job may ask: refused at load, where it is set. */
static void test_ram_per_worker_order(void **state)
{
	(void)state;
	assert_error("MinRamPerWorker=8G\nMaxRamPerWorker=4G",
		     "t.conf:1: MinRamPerWorker: MinRamPerWorker=8G is above "
		     "MaxRamPerWorker=4G");
	/* The other key alone against the first's default (512M). */
	assert_error("Mode=warn\nMaxRamPerWorker=256M",
		     "t.conf:2: MaxRamPerWorker: MinRamPerWorker=512M is above "
		     "MaxRamPerWorker=256M");
	assert_error("MaxRamPerWorker=4G\nPartitionName=gpu "
		     "MinRamPerWorker=5G",
		     "t.conf:2: PartitionName=gpu: MinRamPerWorker=5G is above "
		     "MaxRamPerWorker=4G");
	assert_int_equal(parse("MinRamPerWorker=4G\nMaxRamPerWorker=4G"), 0);
}

/* An error quotes a key, never its value nor a line that is no Key=Value:
 * --config may name a file that is not memcore's (a secret one, as
 * root), and its text is not to be printed. */
static void test_errors_quote_no_value(void **state)
{
	(void)state;
	assert_error("password=hunter2", "t.conf:1: password: unknown key");
	assert_int_equal(parse("password=hunter2"), -1);
	assert_null(strstr(err, "hunter2"));
	assert_int_equal(parse("root:$6$s3cret:19000:0:99999:7:::"), -1);
	assert_string_equal(err, "t.conf:1: expected Key=Value (a word "
			    "without '=')");
	assert_int_equal(parse("Mode=warn\nRamPerTask=s3cret"), -1);
	assert_string_equal(err, "t.conf:2: RamPerTask: not a number");
	assert_int_equal(parse("PartitionName=gpu token=s3cret"), -1);
	assert_string_equal(err, "t.conf:1: token: unknown key");
	/* A control byte in a key is escaped, a long key cut. */
	assert_int_equal(parse("a\033b=1"), -1);
	assert_string_equal(err, "t.conf:1: a\\x1bb: unknown key");
}

static void test_partition_errors(void **state)
{
	(void)state;
	assert_error("PartitionName=gpu Mode=warn Colour=blue",
		     "t.conf:1: Colour: unknown key");
	assert_error("PartitionName=gpu Mode=warn mode=off",
		     "t.conf:1: mode: duplicate key on this line");
	assert_error("PartitionName=gpu PartitionName=cpu",
		     "t.conf:1: PartitionName: duplicate key on this line");
	assert_error("PartitionName=gpu Mode=warn\n"
		     "PartitionName=cpu\nPartitionName=gpu Mode=off",
		     "t.conf:3: PartitionName=gpu: duplicate partition "
		     "(first on line 1)");
	assert_error("PartitionName=gpu RamPerWorker=4Q",
		     "t.conf:1: RamPerWorker: unknown size suffix 'Q' (" MC_SIZE_SUFFIXES ")");
	assert_error("PartitionName=", "t.conf:1: PartitionName: missing value");
	assert_error("Mode=warn PartitionName=gpu",
		     "t.conf:1: PartitionName= must start its line");
	assert_error("PartitionName=gpu MaxDataloaderWorkers=1",
		     "t.conf:1: PartitionName=gpu: DataloaderWorkers=2 is above "
		     "MaxDataloaderWorkers=1");
	assert_error("PartitionName=gpu x", "t.conf:1: expected Key=Value (a word without '=')");
	{
		char text[256];

		memset(text, 'p', sizeof(text));
		memcpy(text, "PartitionName=", 14);
		text[14 + MC_PARTITION_NAME_MAX] = '\0';
		assert_error(text, "name longer than 63 bytes");
	}
}

static void test_line_limits(void **state)
{
	static char text[MC_CONF_LINE_MAX + 64];
	size_t n;

	(void)state;
	/* A line of exactly MC_CONF_LINE_MAX bytes is fine. */
	memset(text, ' ', sizeof(text));
	memcpy(text, "Mode=warn", 9);
	text[MC_CONF_LINE_MAX] = '\n';
	memcpy(text + MC_CONF_LINE_MAX + 1, "ReservedCores=2", 16);
	assert_int_equal(parse(text), 0);
	assert_int_equal(cfg.global.mode, MC_MODE_WARN);
	assert_int_equal(cfg.global.reserved_cores, 2);

	/* One more byte is refused, with its line number. */
	memset(text, ' ', sizeof(text));
	memcpy(text, "Mode=warn\n", 10);
	text[10 + MC_CONF_LINE_MAX + 1] = '\0';
	assert_error(text, "t.conf:2: line longer than 4096 bytes");

	/* A NUL byte inside the text. */
	memcpy(text, "Mode=warn\nBind=n\0ne\n", 20);
	n = 20;
	assert_int_equal(mc_config_parse(text, n, "t.conf", &cfg, err,
					 sizeof(err)), -1);
	assert_non_null(strstr(err, "t.conf:2: NUL byte"));
	assert_defaults(&cfg.global);
}

static void test_partitions(void **state)
{
	struct mc_policy p;

	(void)state;
	/* Order does not matter: the partition line comes before the global
	 * it overrides, and globals it does not set still apply. */
	assert_int_equal(parse(
		"PartitionName=debug Mode=warn DataloaderWorkers=1\n"
		"PartitionName=cv DataloaderWorkers=4 RamPerWorker=6G\n"
		"Mode=enforce RamPerWorker=5G ReservedCores=8\n"), 0);
	assert_int_equal(cfg.n_partitions, 2);

	mc_config_policy(&cfg, "debug", &p);
	assert_int_equal(p.mode, MC_MODE_WARN);
	assert_int_equal(p.dataloader_workers, 1);
	assert_int_equal(p.ram_per_worker_bytes, 5 * GiB);
	assert_int_equal(p.reserved_cores, 8);

	mc_config_policy(&cfg, "cv", &p);
	assert_int_equal(p.mode, MC_MODE_ENFORCE);
	assert_int_equal(p.dataloader_workers, 4);
	assert_int_equal(p.ram_per_worker_bytes, 6 * GiB);
	assert_int_equal(p.reserved_cores, 8);

	/* Unknown, NULL and differently-cased names get the globals. */
	mc_config_policy(&cfg, "gpu", &p);
	assert_int_equal(p.mode, MC_MODE_ENFORCE);
	assert_int_equal(p.dataloader_workers, 2);
	assert_int_equal(p.ram_per_worker_bytes, 5 * GiB);
	mc_config_policy(&cfg, NULL, &p);
	assert_int_equal(p.dataloader_workers, 2);
	mc_config_policy(&cfg, "DEBUG", &p);
	assert_int_equal(p.mode, MC_MODE_ENFORCE);

	/* A key may be set globally and on a partition line. */
	assert_int_equal(parse("Mode=warn\nPartitionName=a Mode=off\n"), 0);
	mc_config_policy(&cfg, "a", &p);
	assert_int_equal(p.mode, MC_MODE_OFF);
}

static void test_set(void **state)
{
	struct mc_policy p;

	(void)state;
	assert_int_equal(parse("Mode=warn\nPartitionName=a Mode=enforce "
			       "DataloaderWorkers=3\n"), 0);
	assert_int_equal(mc_config_set(&cfg, "ramperworker", "8G",
				       "plugstack.conf", err, sizeof(err)), 0);
	assert_int_equal(cfg.global.ram_per_worker_bytes, 8 * GiB);

	/* An argument wins over the whole file, partition lines included. */
	assert_int_equal(mc_config_set(&cfg, "mode", "off", "plugstack.conf",
				       err, sizeof(err)), 0);
	mc_config_policy(&cfg, "a", &p);
	assert_int_equal(p.mode, MC_MODE_OFF);
	assert_int_equal(p.dataloader_workers, 3);

	assert_int_equal(mc_config_set(&cfg, "RamPerWorker", "4Q",
				       "plugstack.conf", err, sizeof(err)), -1);
	assert_string_equal(err, "plugstack.conf: RamPerWorker=4Q: "
			    "unknown size suffix 'Q' (" MC_SIZE_SUFFIXES ")");
	assert_int_equal(cfg.global.ram_per_worker_bytes, 8 * GiB);
	assert_int_equal(mc_config_set(&cfg, "colour", "blue",
				       "plugstack.conf", err, sizeof(err)), -1);
	assert_string_equal(err, "plugstack.conf: colour=blue: unknown key");
	assert_int_equal(mc_config_set(&cfg, "mode", "", "plugstack.conf",
				       err, sizeof(err)), -1);
	assert_string_equal(err, "plugstack.conf: mode: missing value");
	assert_int_equal(mc_config_set(&cfg, "PartitionName", "x",
				       "plugstack.conf", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown key"));
	assert_int_equal(cfg.global.mode, MC_MODE_OFF);

	/* The file's cross-key check holds for arguments: a maximum below
	 * the default workers (globals: 2) is refused and nothing changes. */
	assert_int_equal(mc_config_set(&cfg, "maxdataloaderworkers", "1",
				       "plugstack.conf", err, sizeof(err)), -1);
	assert_string_equal(err, "plugstack.conf: maxdataloaderworkers=1: "
			    "DataloaderWorkers=2 is above "
			    "MaxDataloaderWorkers=1");
	assert_int_equal(cfg.global.max_dataloader_workers, 64);
	/* ... nor through a partition that keeps its own workers. */
	assert_int_equal(mc_config_set(&cfg, "maxdataloaderworkers", "2",
				       "plugstack.conf", err, sizeof(err)), -1);
	assert_string_equal(err, "plugstack.conf: maxdataloaderworkers=2: "
			    "DataloaderWorkers=3 is above "
			    "MaxDataloaderWorkers=2 in PartitionName=a");
	mc_config_policy(&cfg, "a", &p);
	assert_int_equal(p.dataloader_workers, 3);
	assert_int_equal(p.max_dataloader_workers, 64);
}

static char tmpdir[64];

static void test_load(void **state)
{
	char path[128], want[192];

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/mc_test_config.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));

	snprintf(path, sizeof(path), "%s/ok.conf", tmpdir);
	mc_test_write_text(path, "Mode=warn\nPartitionName=x DataloaderWorkers=1\n"
		   "RamPerTask=0");
	assert_int_equal(mc_config_load(path, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.global.mode, MC_MODE_WARN);
	assert_int_equal(cfg.global.ram_per_task_bytes, 0);
	assert_int_equal(cfg.n_partitions, 1);
	assert_string_equal(cfg.path, path);

	snprintf(path, sizeof(path), "%s/bad.conf", tmpdir);
	mc_test_write_text(path, "# policy\nMode=warn\n\nRamPerWorker=4Q\n");
	assert_int_equal(mc_config_load(path, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:4: RamPerWorker: unknown size "
		 "suffix 'Q' (" MC_SIZE_SUFFIXES ")", path);
	assert_string_equal(err, want);
	assert_defaults(&cfg.global);

	snprintf(path, sizeof(path), "%s/missing.conf", tmpdir);
	assert_int_equal(mc_config_load(path, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	assert_string_equal(err, want);

	assert_int_equal(mc_config_load(tmpdir, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: is a directory", tmpdir);
	assert_string_equal(err, want);

	/* A FIFO must be refused, not read (and not hang). */
	snprintf(path, sizeof(path), "%s/fifo", tmpdir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(mc_config_load(path, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: not a regular file", path);
	assert_string_equal(err, want);
	unlink(path);

	/* Over-long line read from a file: the streaming reader sees it. */
	{
		static char big[3 * MC_CONF_LINE_MAX];

		memset(big, ' ', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		memcpy(big, "Mode=warn\nBind=none\n", 20);
		snprintf(path, sizeof(path), "%s/long.conf", tmpdir);
		mc_test_write_text(path, big);
		assert_int_equal(mc_config_load(path, &cfg, err, sizeof(err)),
				 -1);
		snprintf(want, sizeof(want), "%s:3: line longer than 4096 "
			 "bytes", path);
		assert_string_equal(err, want);
		unlink(path);
	}
	/* NUL in a file. */
	{
		FILE *f;

		snprintf(path, sizeof(path), "%s/nul.conf", tmpdir);
		f = fopen(path, "w");
		assert_non_null(f);
		fwrite("Mode=warn\nBind=n\0ne\n", 1, 20, f);
		fclose(f);
		assert_int_equal(mc_config_load(path, &cfg, err, sizeof(err)),
				 -1);
		snprintf(want, sizeof(want), "%s:2: NUL byte in line", path);
		assert_string_equal(err, want);
		unlink(path);
	}
	/* Unreadable: only meaningful when not root. */
	if (geteuid() != 0) {
		snprintf(path, sizeof(path), "%s/secret.conf", tmpdir);
		mc_test_write_text(path, "Mode=warn\n");
		chmod(path, 0);
		assert_int_equal(mc_config_load(path, &cfg, err, sizeof(err)),
				 -1);
		snprintf(want, sizeof(want), "%s: Permission denied", path);
		assert_string_equal(err, want);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/ok.conf", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bad.conf", tmpdir);
	unlink(path);
	rmdir(tmpdir);
}

/* The annotated file we ship must load and say the defaults. */
static void test_shipped_conf(void **state)
{
	const char *top = getenv("MC_TOP");
	char path[4096];
	struct mc_policy p;

	(void)state;
	snprintf(path, sizeof(path), "%s/etc/memcore.conf", top ? top : ".");
	if (mc_config_load(path, &cfg, err, sizeof(err)))
		fail_msg("%s", err);
	assert_defaults(&cfg.global);
	assert_int_equal(cfg.n_partitions, 0);

	/* And its commented-out lines, uncommented, are valid too. */
	{
		static char text[1 << 16], out[1 << 16];
		FILE *f = fopen(path, "r");
		size_t n, o = 0;

		assert_non_null(f);
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[n] = '\0';
		/* Uncomment lines of the form "#Key=..." */
		for (size_t i = 0; i < n; i++) {
			if (text[i] == '#' && (i == 0 || text[i - 1] == '\n') &&
			    i + 1 < n && text[i + 1] >= 'A' &&
			    text[i + 1] <= 'Z' && strchr(text + i, '=') &&
			    strchr(text + i, '=') < strchr(text + i, '\n') &&
			    !memchr(text + i + 1, ' ',
				    (size_t)(strchr(text + i, '=') -
					     (text + i + 1))))
				continue;
			out[o++] = text[i];
		}
		assert_int_equal(mc_config_parse(out, o, "uncommented", &cfg,
						 err, sizeof(err)), 0);
		assert_int_equal(cfg.n_partitions, 2);
		assert_int_equal(cfg.global.node_gpus, 8);
		mc_config_policy(&cfg, "debug", &p);
		assert_int_equal(p.mode, MC_MODE_WARN);
		assert_int_equal(p.dataloader_workers, 1);
		mc_config_policy(&cfg, "cv", &p);
		assert_int_equal(p.dataloader_workers, 4);
		assert_int_equal(p.ram_per_worker_bytes, 6 * GiB);
	}
}

/*
 * docs/memcore.conf.5 and the key table agree: every key the man page
 * describes under KEYS (a ".BR Key= ..." or ".BI Key= ..." line after
 * .TP or .TQ) is in
 * mc_keys and every key of mc_keys is in the man page; a key's words
 * ("enforce | warn | off", "yes | no", "auto | SIZE") are the table's.
 */
static void test_man_page_keys(void **state)
{
	const char *top = getenv("MC_TOP");
	char path[4096], line[1024];
	bool in_keys = false, head = false, seen[64] = { false };
	unsigned n_man = 0;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/docs/memcore.conf.5",
		 top ? top : ".");
	f = fopen(path, "r");
	assert_non_null(f);
	assert_true(mc_n_keys <= 64);
	while (fgets(line, sizeof(line), f)) {
		char name[64], rest[512] = "", desc[256];
		const struct mc_key *k;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, ".SH", 3)) {
			in_keys = !strcmp(line, ".SH KEYS");
			continue;
		}
		/* A key heads its paragraph: the line after .TP or .TQ. */
		bool after_tag = head;

		head = !strcmp(line, ".TP") || !strcmp(line, ".TQ");
		if (!in_keys || !after_tag || (strncmp(line, ".BR ", 4) &&
				 strncmp(line, ".BI ", 4)))
			continue;
		if (sscanf(line + 4, "%63[A-Za-z]= %511[^\n]", name, rest) < 1 ||
		    !strchr(line + 4, '=') ||
		    strchr(line + 4, '=') - (line + 4) != (long)strlen(name))
			continue;
		k = mc_key_find(name);
		if (!k)
			fail_msg("memcore.conf.5 documents %s=, which the key "
				 "table (policy/mc_config.c) lacks", name);
		assert_string_equal(k->name, name);	/* same spelling */
		seen[k - mc_keys] = true;
		n_man++;
		mc_key_describe(k, desc, sizeof(desc));
		if (k->type == MC_KEY_WORD || k->type == MC_KEY_BOOL)
			assert_string_equal(rest, desc);
		if (k->type == MC_KEY_SIZE && k->words)
			assert_int_equal(strncmp(rest, k->words[0],
						 strlen(k->words[0])), 0);
	}
	fclose(f);
	for (size_t i = 0; i < mc_n_keys; i++)
		if (!seen[i])
			fail_msg("key %s= is not in docs/memcore.conf.5 KEYS",
				 mc_keys[i].name);
	assert_int_equal(n_man, mc_n_keys);
}

/* Every key of the table parses through the same code in a file, on a
 * partition line and as a plugstack argument, and is copied by a
 * partition override; a key not allowed per partition is refused there. */
static void test_key_table(void **state)
{
	char line[256], desc[128];
	struct mc_policy p, d;

	(void)state;
	mc_policy_defaults(&d);
	for (size_t i = 0; i < mc_n_keys; i++) {
		const struct mc_key *k = &mc_keys[i];
		const char *v;

		switch (k->type) {
		case MC_KEY_WORD: v = k->words[1]; break;
		case MC_KEY_BOOL: v = *(const int *)((const char *)&d +
						     k->offset) ? "no" : "yes";
			break;
		case MC_KEY_COUNT: v = "3"; break;
		case MC_KEY_SIZE: v = "3G"; break;
		case MC_KEY_RATIO: v = "2.5"; break;
		case MC_KEY_PATH: v = "/x.xml"; break;
		case MC_KEY_DURATION: v = "3s"; break;
		default: v = "h100:80G"; break;
		}
		/* Below MaxDataloaderWorkers' default, above its count. */
		snprintf(line, sizeof(line), "PartitionName=p %s=%s\n", k->name,
			 v);
		assert_true(*mc_key_describe(k, desc, sizeof(desc)));
		if (!k->per_partition) {
			assert_int_equal(parse(line), -1);
			continue;
		}
		if (parse(line) != 0)
			fail_msg("%s", err);
		mc_config_policy(&cfg, "p", &p);
		/* The partition's value differs from the default there and
		 * only there. */
		assert_memory_not_equal((char *)&p + k->offset,
					(char *)&d + k->offset, k->size);
		mc_config_policy(&cfg, "other", &p);
		assert_memory_equal((char *)&p + k->offset,
				    (char *)&d + k->offset, k->size);
		mc_config_init(&cfg);
		assert_int_equal(mc_config_set(&cfg, k->name, v, "t", err,
					       sizeof(err)), 0);
		assert_memory_not_equal((char *)&cfg.global + k->offset,
					(char *)&d + k->offset, k->size);
	}
	assert_null(mc_key_find("NoSuchKey"));
	assert_ptr_equal(mc_key_find("mode"), &mc_keys[0]);
}

/* The plugstack line (mc_config_plugstack): config=, cache= and keys. */
static void test_plugstack(void **state)
{
	char cache[256], e[MC_ERR_MAX];
	char a0[] = "config=", a1[] = "cache=none", a2[] = "mode=warn",
	     a3[] = "cache=relative", a4[] = "bogus", a5[] = "cache=/run/f";
	char *av1[] = { a0, a1, a2 }, *av2[] = { a3, a4 }, *av3[] = { a4 },
	     *av4[] = { a5, a2 };

	(void)state;
	mc_config_plugstack(&cfg, 3, av1, "/def", cache, sizeof(cache), e,
			    sizeof(e));
	assert_string_equal(e, "plugstack.conf: config=: missing value (the "
			    "path of memcore.conf)");
	assert_string_equal(cache, "");
	assert_int_equal(cfg.global.mode, MC_MODE_WARN);
	mc_config_plugstack(&cfg, 2, av2, "/def", cache, sizeof(cache), e,
			    sizeof(e));
	/* The default file may be absent here: only the first error is
	 * kept, so check the cache message with a config that loads. */
	if (access(MC_DEFAULT_CONFIG, R_OK) != 0)
		assert_non_null(strstr(e, MC_DEFAULT_CONFIG));
	else
		assert_string_equal(e, "plugstack.conf: cache=relative: "
				    "expected an absolute path or none");
	assert_string_equal(cache, "/def");
	{
		char c[] = "config=/dev/null";
		char *av[] = { c, a3, a4 };

		mc_config_plugstack(&cfg, 3, av, "/def", cache, sizeof(cache),
				    e, sizeof(e));
		assert_string_equal(e, "/dev/null: not a regular file");
		(void)av3;
	}
	{
		char path[] = "/tmp/mc_plugstack_XXXXXX";
		int fd = mkstemp(path);
		char c[64];
		char *av[] = { c, a3, a4 }, *avb[] = { c, a4 }, *avg[] = { c,
								       a5, a2 };

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "Mode=off\n", 9), 9);
		close(fd);
		snprintf(c, sizeof(c), "config=%s", path);
		mc_config_plugstack(&cfg, 3, av, "/def", cache, sizeof(cache),
				    e, sizeof(e));
		assert_string_equal(e, "plugstack.conf: cache=relative: "
				    "expected an absolute path or none");
		mc_config_plugstack(&cfg, 2, avb, "/def", cache,
				    sizeof(cache), e, sizeof(e));
		assert_string_equal(e, "plugstack.conf: 'bogus': expected "
				    "key=value");
		assert_int_equal(cfg.global.mode, MC_MODE_OFF);
		mc_config_plugstack(&cfg, 3, avg, "/def", cache,
				    sizeof(cache), e, sizeof(e));
		assert_string_equal(e, "");
		assert_string_equal(cache, "/run/f");
		assert_int_equal(cfg.global.mode, MC_MODE_WARN);
		unlink(path);
	}
	(void)av4;
}

/* PrometheusTextfile is written by slurmstepd as root: only an absolute
 * path ending in .prom with no ".." component, as memcore.conf(5) says,
 * refused with file:line like every other key, nothing applied. */
static void test_prometheus_textfile(void **state)
{
	static const struct {
		const char *v, *why;
	} bad[] = {
		{ "/etc/passwd", "expected a file name ending in .prom" },
		{ "relative/dir/x.prom", "expected an absolute path" },
		{ "x.prom", "expected an absolute path" },
		{ "/var/lib/node_exporter/", "expected a file name ending in "
		  ".prom" },
		{ "/var/lib/node_exporter/.prom", "expected a file name ending "
		  "in .prom" },
		{ "/var/lib/x.prom.bak", "expected a file name ending in .prom" },
		{ "/var/lib/../../etc/x.prom", "a \"..\" component: expected a "
		  "path without one" },
		{ "/var/lib/node_exporter/../x.prom", "a \"..\" component: "
		  "expected a path without one" },
	};
	char text[256], want[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "Mode=warn\nPrometheusTextfile=%s"
			 "\n", bad[i].v);
		assert_int_equal(parse(text), -1);
		snprintf(want, sizeof(want), "t.conf:2: PrometheusTextfile: "
			 "%s", bad[i].why);
		assert_string_equal(err, want);
	}
	assert_int_equal(parse("PrometheusTextfile=/var/lib/node_exporter/"
			       "textfile/memcore.prom\n"), 0);
	assert_string_equal(cfg.global.prometheus_textfile,
			    "/var/lib/node_exporter/textfile/memcore.prom");
	/* ".." inside a name is a name, not a component */
	assert_int_equal(parse("PrometheusTextfile=/var/lib/a..b/..x.prom\n"),
			 0);
	assert_string_equal(cfg.global.prometheus_textfile,
			    "/var/lib/a..b/..x.prom");
}

/* At load, a PrometheusTextfile= whose directory others than root can
 * write is turned off, never refused (monitoring is not enforcement):
 * the rest of the file applies, and cfg.key_off names the file, the line,
 * the key and why (anyone could plant the file root reads back, or take
 * its temporary file's name); one not there yet passes; a root-owned
 * sticky directory above it (as /tmp) passes, the same as the textfile's
 * own directory does not. */
static void test_prometheus_textfile_dir(void **state)
{
	char top[] = "/tmp/mc-prom-XXXXXX", conf[PATH_MAX], dir[PATH_MAX],
	     text[PATH_MAX * 2], want[PATH_MAX * 2], why[MC_ERR_MAX],
	     val[PATH_MAX + 16];
	bool root = geteuid() == 0;

	(void)state;
	assert_non_null(mkdtemp(top));
	snprintf(conf, sizeof(conf), "%s/memcore.conf", top);
	snprintf(dir, sizeof(dir), "%s/prom", top);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(val, sizeof(val), "%s/memcore.prom", dir);
	snprintf(text, sizeof(text), "Mode=warn\n# the textfile\n"
		 "PrometheusTextfile=%s\n", val);
	mc_test_write_text(conf, text);

	err[0] = '\0';
	assert_int_equal(mc_config_load(conf, &cfg, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	if (root) {
		assert_string_equal(cfg.key_off, "");
		assert_string_equal(cfg.global.prometheus_textfile, val);
	} else {	/* the directory is this user's, not root's */
		assert_non_null(strstr(cfg.key_off, "is owned by uid"));
		assert_string_equal(cfg.global.prometheus_textfile, "");
	}

	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(mc_config_load(conf, &cfg, err, sizeof(err)), 0);
	if (root) {
		snprintf(want, sizeof(want), "%s:3: PrometheusTextfile=%s: "
			 "directory %s is writable by others than root (mode "
			 "0777): anyone could plant or replace the file; the "
			 "textfile is off until this is fixed (a monitoring "
			 "key: GPU steps run, uncounted there)", conf, val,
			 dir);
		assert_string_equal(cfg.key_off, want);
	}
	assert_string_equal(cfg.global.prometheus_textfile, "");
	assert_int_equal(cfg.global.mode, MC_MODE_WARN);	/* the rest applies */
	/* group-writable, and sticky, are turned off all the same */
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(mc_config_load(conf, &cfg, err, sizeof(err)), 0);
	assert_non_null(strstr(cfg.key_off, ":3: PrometheusTextfile="));
	assert_int_equal(chmod(dir, 0775), 0);
	assert_int_equal(mc_config_load(conf, &cfg, err, sizeof(err)), 0);
	assert_non_null(strstr(cfg.key_off, "writable by others than root"));
	/* as a plugstack argument: the same check, the key left off */
	mc_config_init(&cfg);
	assert_int_equal(mc_config_set(&cfg, "prometheustextfile", val, NULL,
				       err, sizeof(err)), 0);
	assert_non_null(strstr(cfg.key_off,
			       "plugstack.conf: prometheustextfile="));
	assert_non_null(strstr(cfg.key_off, "writable by others than root"));
	assert_string_equal(cfg.global.prometheus_textfile, "");

	if (root) {
		/* Debian's prometheus-node-exporter: root's directory under
		 * one a system account owns (/var/lib/prometheus) */
		assert_int_equal(chmod(dir, 0755), 0);
		assert_int_equal(chown(top, 103, 103), 0);
		assert_int_equal(chmod(top, 0755), 0);
		assert_int_equal(mc_dir_root_only(val, why, sizeof(why)), 0);
		/* ... not a person's */
		assert_int_equal(chown(top, 1000, 1000), 0);
		assert_int_equal(mc_dir_root_only(val, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "is owned by uid 1000, not root "
				       "nor a system account"));
		/* ... and the directory itself only root's */
		assert_int_equal(chown(top, 0, 0), 0);
		assert_int_equal(chown(dir, 103, 103), 0);
		assert_int_equal(mc_dir_root_only(val, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "is owned by uid 103, not root:"));
		assert_int_equal(chown(dir, 0, 0), 0);
	}
	if (root) {
		/* a sticky, world-writable directory above it: /tmp's way */
		assert_int_equal(chmod(dir, 0755), 0);
		assert_int_equal(chmod(top, 01777), 0);
		assert_int_equal(mc_dir_root_only(val, why, sizeof(why)), 0);
		/* ... not sticky: whoever can write it can rename prom */
		assert_int_equal(chmod(top, 0777), 0);
		assert_int_equal(mc_config_load(conf, &cfg, err, sizeof(err)),
				 0);
		snprintf(want, sizeof(want), "%s:3: PrometheusTextfile=%s: "
			 "directory %s is writable by others than root", conf,
			 val, top);
		assert_int_equal(strncmp(cfg.key_off, want, strlen(want)), 0);
		assert_int_equal(chmod(top, 0700), 0);
	}
	/* a directory not there yet: nothing can be planted in it */
	snprintf(val, sizeof(val), "%s/none/x.prom", top);
	snprintf(text, sizeof(text), "PrometheusTextfile=%s\n", val);
	mc_test_write_text(conf, text);
	if (root)
		assert_int_equal(mc_config_load(conf, &cfg, err, sizeof(err)),
				 0);
	assert_int_equal(mc_dir_root_only(val, why, sizeof(why)), 1);
	if (root) {
		/* ... judged by the nearest that is: under a directory
		 * anyone may write (sticky too), anyone could make it,
		 * theirs, and refuse every GPU step */
		assert_int_equal(chmod(top, 01777), 0);
		snprintf(val, sizeof(val), "%s/none/deeper/x.prom", top);
		assert_int_equal(mc_dir_root_only(val, why, sizeof(why)), -1);
		snprintf(want, sizeof(want), "%s is not there yet, and anyone "
			 "could make it: directory %s is writable by others "
			 "than root (mode 1777)", val, top);
		assert_int_equal(strncmp(why, want, strlen(want)), 0);
		/* a user's symbolic link to root's own directory: its owner
		 * could point it elsewhere after the check */
		char link[600];

		snprintf(link, sizeof(link), "%s/lnk", top);
		assert_int_equal(symlink(dir, link), 0);
		assert_int_equal(chmod(dir, 0755), 0);
		snprintf(val, sizeof(val), "%s/x.prom", link);
		assert_int_equal(lchown(link, 65534, 65534), 0);
		assert_int_equal(mc_dir_root_only(val, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "is a symbolic link of uid 65534, "
				       "not root's"));
		/* root's own link there: the resolved path decides */
		assert_int_equal(lchown(link, 0, 0), 0);
		assert_int_equal(mc_dir_root_only(val, why, sizeof(why)), 0);
		unlink(link);
		assert_int_equal(chmod(top, 0700), 0);
	}
	/* the text parser alone never looks at the file system */
	assert_int_equal(chmod(dir, 0777), 0);
	snprintf(text, sizeof(text), "PrometheusTextfile=%s/x.prom\n", dir);
	assert_int_equal(parse(text), 0);

	unlink(conf);
	rmdir(dir);
	rmdir(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_ram_per_worker_order),
		cmocka_unit_test(test_errors_quote_no_value),
		cmocka_unit_test(test_partition_errors),
		cmocka_unit_test(test_line_limits),
		cmocka_unit_test(test_partitions),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_shipped_conf),
		cmocka_unit_test(test_man_page_keys),
		cmocka_unit_test(test_key_table),
		cmocka_unit_test(test_plugstack),
		cmocka_unit_test(test_prometheus_textfile),
		cmocka_unit_test(test_prometheus_textfile_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
