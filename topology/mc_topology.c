/*
 * mc_topology.c - node facts from hwloc 2.x (live machine or lstopo XML).
 *
 * Everything hwloc allocates is released before returning: this code runs
 * in slurmd/slurmstepd, which live long and must not leak per call.
 */
#include "mc_topology.h"
#include "mc_util.h"
#include "mc_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwloc.h>

#define MC_VENDOR_UNKNOWN	0x0000
#define MC_VENDOR_NVIDIA	0x10de
#define MC_VENDOR_AMD		0x1002
#define MC_VENDOR_MATROX	0x102b
#define MC_VENDOR_ASPEED	0x1a03

#define MC_KIB			1024ULL

/*
 * GPU memory exposed as NUMA nodes (POWER9 + NVLink) must not count as host
 * RAM: hwloc >= 2.0 marks it with subtype "GPUMemory"; hwloc 1.x dumps (and
 * kernels hwloc does not recognise) show it only as CPU-less NUMA nodes.
 */
static bool mc_numa_is_host(hwloc_obj_t numa)
{
	if (numa->subtype && strcmp(numa->subtype, "GPUMemory") == 0)
		return false;
	if (!numa->cpuset || hwloc_bitmap_iszero(numa->cpuset))
		return false;
	return true;
}

/* The normal (non-memory) object a NUMA node hangs from, past MemCaches. */
static hwloc_obj_t mc_numa_attach(hwloc_obj_t numa)
{
	hwloc_obj_t p = numa->parent;

	while (p && hwloc_obj_type_is_memory(p->type))
		p = p->parent;
	return p;
}

/*
 * NUMA node P# of a PCI device: walk up from its first non-I/O ancestor
 * (a Package, Group, L3Cache...) until an object either carries host NUMA
 * nodes itself (memory children) or covers exactly one host NUMA node.
 * The locality object is often below the NUMA level (an L3Cache on MI250X
 * nodes), and on POWER9 the Package also carries GPU-memory NUMA nodes,
 * which must never be chosen.
 */
static int mc_gpu_numa(hwloc_topology_t topo, hwloc_obj_t pci)
{
	hwloc_obj_t obj = hwloc_get_non_io_ancestor_obj(topo, pci);

	for (; obj; obj = obj->parent) {
		hwloc_obj_t n = NULL;
		int attached = -1, covered = -1, ncovered = 0;

		while ((n = hwloc_get_next_obj_by_type(topo,
				HWLOC_OBJ_NUMANODE, n)) != NULL) {
			if (!mc_numa_is_host(n))
				continue;
			if (mc_numa_attach(n) == obj &&
			    (attached < 0 || n->os_index < (unsigned)attached))
				attached = (int)n->os_index;
			if (obj->nodeset &&
			    hwloc_bitmap_isset(obj->nodeset, n->os_index)) {
				ncovered++;
				covered = (int)n->os_index;
			}
		}
		if (attached >= 0)
			return attached;
		if (ncovered == 1)
			return covered;
	}
	return -1;
}

static bool mc_class_is_gpu(unsigned class_id)
{
	return class_id == 0x0300 || class_id == 0x0302 ||
	       class_id == 0x0380 || class_id == 0x1200;
}

/* An OS device that only exists for a GPU runtime (not DRM card*, etc.). */
static bool mc_osdev_is_gpu_runtime(hwloc_obj_t os)
{
	static const char *const prefixes[] = {
		"cuda", "nvml", "rsmi", "opencl",
	};
	size_t i;

	if (os->type != HWLOC_OBJ_OS_DEVICE || !os->name)
		return false;
	if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU &&
	    os->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC)
		return false;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(os->name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

static bool mc_pci_is_gpu(hwloc_obj_t pci)
{
	unsigned vendor = pci->attr->pcidev.vendor_id;
	unsigned cls = pci->attr->pcidev.class_id;
	hwloc_obj_t c;

	/* BMC display chips are VGA class but never compute GPUs. */
	if (vendor == MC_VENDOR_ASPEED || vendor == MC_VENDOR_MATROX)
		return false;
	/* sysfs snapshots without vendor files still give the class. */
	if (vendor == MC_VENDOR_UNKNOWN && (cls >> 8) == 0x03)
		return true;
	if (!mc_class_is_gpu(cls))
		return false;
	if (vendor == MC_VENDOR_NVIDIA || vendor == MC_VENDOR_AMD)
		return true;
	for (c = pci->io_first_child; c; c = c->next_sibling)
		if (mc_osdev_is_gpu_runtime(c))
			return true;
	return false;
}

/* A KiB count from an info attribute; false if absent or not a number. */
static bool mc_info_kib(hwloc_obj_t obj, const char *name, uint64_t *bytes)
{
	const char *v = hwloc_obj_get_info_by_name(obj, name);
	unsigned long long kib;
	char *end;

	if (!v || !*v)
		return false;
	errno = 0;
	kib = strtoull(v, &end, 10);
	if (errno || *end != '\0' || kib == 0 || kib > UINT64_MAX / MC_KIB)
		return false;
	*bytes = (uint64_t)kib * MC_KIB;
	return true;
}

uint32_t mc_topology_slurm_gpus(const struct mc_node_facts *f)
{
	return f->n_mig ? f->n_mig : f->n_gpus;
}

int mc_topology_gpu_numa(const struct mc_node_facts *f, unsigned index)
{
	unsigned card = index;

	if (f->n_mig) {
		if (index >= f->n_mig || index >= MC_MAX_MIG)
			return -1;
		card = f->mig[index].parent;
	}
	if (card >= f->n_gpus || card >= MC_MAX_GPUS)
		return -1;
	return f->gpus[card].numa_os_index;
}

int mc_pci_is_apu(uint16_t vendor_id, uint16_t device_id)
{
	/* AMD Instinct MI300A (Linux pci.ids "Aqua Vanjaram [Instinct
	 * MI300A]"): CPU and GPU dies on one package around one HBM3 pool.
	 * MI300X (0x74a1) and later Instinct cards have memory of their
	 * own; NVIDIA Grace Hopper's H100 keeps its own HBM as well. */
	return vendor_id == 0x1002 && device_id == 0x74a0;
}

const char *mc_pci_vendor_name(uint16_t vendor_id)
{
	switch (vendor_id) {
	case 0x10de:
		return "NVIDIA";
	case 0x1002:
		return "AMD";
	case 0x8086:
		return "Intel";
	default:
		return NULL;
	}
}

/*
 * A name from the PCI ids alone, for dumps without PCI names (hwloc 1.x
 * built without a PCI database, e.g. LLNL Lassen's): "NVIDIA [10de:1db1]".
 * Left "" when the ids are 0000:0000 too.
 */
static void mc_gpu_id_name(hwloc_obj_t pci, struct mc_gpu *g)
{
	const char *vendor = hwloc_obj_get_info_by_name(pci, "PCIVendor");

	if (g->vendor_id == 0 && g->device_id == 0)
		return;		/* no ids either (sysfs snapshots): "" */
	if (!vendor || !vendor[0])
		vendor = mc_pci_vendor_name(g->vendor_id);
	snprintf(g->model, sizeof(g->model), "%s [%04x:%04x]",
		 vendor ? vendor : "PCI device", (unsigned)g->vendor_id,
		 (unsigned)g->device_id);
}

static void mc_gpu_fill(hwloc_topology_t topo, hwloc_obj_t pci,
			struct mc_gpu *g)
{
	const struct hwloc_pcidev_attr_s *a = &pci->attr->pcidev;
	const char *model = NULL;
	hwloc_obj_t c;

	memset(g, 0, sizeof(*g));
	snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%04x:%02x:%02x.%01x",
		 (unsigned)a->domain, (unsigned)a->bus, (unsigned)a->dev,
		 (unsigned)a->func);
	g->vendor_id = a->vendor_id;
	g->device_id = a->device_id;
	g->class_id = a->class_id;
	g->numa_os_index = mc_gpu_numa(topo, pci);
	g->memory_source = MC_MEM_SRC_NONE;
	g->apu = mc_pci_is_apu(g->vendor_id, g->device_id);

	for (c = pci->io_first_child; c; c = c->next_sibling) {
		uint64_t bytes;

		if (c->type != HWLOC_OBJ_OS_DEVICE)
			continue;
		if (g->memory_source == MC_MEM_SRC_NONE) {
			if (mc_info_kib(c, "CUDAGlobalMemorySize", &bytes)) {
				g->memory_bytes = bytes;
				g->memory_source = MC_MEM_SRC_CUDA;
			} else if (mc_info_kib(c, "RSMIVRAMSize", &bytes)) {
				g->memory_bytes = bytes;
				g->memory_source = MC_MEM_SRC_RSMI;
			}
		}
		if (!model)
			model = hwloc_obj_get_info_by_name(c, "GPUModel");
	}
	/* The runtime's name ("NVIDIA H200") beats the PCI database's. */
	if (!model)
		model = hwloc_obj_get_info_by_name(pci, "PCIDevice");
	/* hwloc 1.x dumps may carry the name as the object's name only. */
	if (!model && pci->name && pci->name[0])
		model = pci->name;
	if (model)
		snprintf(g->model, sizeof(g->model), "%s", model);
	else
		mc_gpu_id_name(pci, g);
}

static int mc_gpu_cmp(const void *pa, const void *pb)
{
	const struct mc_gpu *a = pa, *b = pb;

	/* "%04x:%02x:%02x.%01x" sorts textually in domain:bus:dev.fn order. */
	return strcmp(a->pci_bus_id, b->pci_bus_id);
}

/* Fill f->pu_core: each PU's core, named by the core's lowest PU. */
static int mc_collect_cores(hwloc_topology_t topo, struct mc_node_facts *f,
			    bool have_cores, char *err, size_t errlen)
{
	hwloc_obj_t c = NULL;

	memset(f->pu_core, 0xff, sizeof(f->pu_core));
	while ((c = hwloc_get_next_obj_by_type(topo, have_cores
			? HWLOC_OBJ_CORE : HWLOC_OBJ_PU, c)) != NULL) {
		int first = hwloc_bitmap_first(c->cpuset), pu;

		if (first < 0)
			continue;
		hwloc_bitmap_foreach_begin(pu, c->cpuset) {
			if (pu >= MC_MAX_PUS || first >= MC_MAX_PUS) {
				mc_err(err, errlen,
					  "topology %s: CPU %d above the %d "
					  "memcore handles", f->source, pu,
					  MC_MAX_PUS - 1);
				return -1;
			}
			f->pu_core[pu] = (uint16_t)first;
		} hwloc_bitmap_foreach_end();
	}
	return 0;
}

/*
 * hwloc's NUMA latency matrix (from the ACPI SLIT, "NUMALatency"), between
 * the host NUMA nodes objs[0..f->n_numa); none when the topology has no
 * such matrix or it misses one of them.
 */
static void mc_collect_distances(hwloc_topology_t topo,
				 struct mc_node_facts *f,
				 hwloc_obj_t const *objs)
{
	struct hwloc_distances_s *d = NULL;
	unsigned nr = 1;
	int idx[MC_MAX_NUMA];

	f->numa_distances = 0;
	if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, &d,
					HWLOC_DISTANCES_KIND_MEANS_LATENCY,
					0) < 0 || nr < 1 || !d)
		return;
	for (uint32_t i = 0; i < f->n_numa; i++)
		if ((idx[i] = hwloc_distances_obj_index(d, objs[i])) < 0)
			goto out;
	for (uint32_t i = 0; i < f->n_numa; i++)
		for (uint32_t j = 0; j < f->n_numa; j++) {
			hwloc_uint64_t v = d->values[(unsigned)idx[i] *
						     d->nbobjs +
						     (unsigned)idx[j]];

			f->numa_distance[i][j] = v > UINT16_MAX ? UINT16_MAX
							       : (uint16_t)v;
		}
	f->numa_distances = 1;
out:
	hwloc_distances_release(topo, d);
}

static int mc_collect_numa(hwloc_topology_t topo, struct mc_node_facts *f,
			   char *err, size_t errlen)
{
	hwloc_obj_t n = NULL, objs[MC_MAX_NUMA];
	/* Some topologies (hwloc 1.x dumps of odd platforms) lack Cores. */
	bool have_cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0;

	while ((n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
					       n)) != NULL) {
		struct mc_numa *m;
		int len;

		if (!mc_numa_is_host(n))
			continue;
		if (f->n_numa >= MC_MAX_NUMA) {
			mc_err(err, errlen,
				  "topology %s: more than %d host NUMA nodes",
				  f->source, MC_MAX_NUMA);
			return -1;
		}
		objs[f->n_numa] = n;
		m = &f->numa[f->n_numa++];
		m->os_index = n->os_index;
		{
			hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(
				topo, HWLOC_OBJ_PACKAGE, n);

			m->package = pkg ? (int)pkg->os_index : -1;
		}
		m->memory_bytes = n->attr->numanode.local_memory;
		m->cores = (uint32_t)hwloc_get_nbobjs_inside_cpuset_by_type(
			topo, n->cpuset,
			have_cores ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU);
		len = hwloc_bitmap_list_snprintf(m->cpus, sizeof(m->cpus),
						 n->cpuset);
		/* A cut list would bind to the wrong CPUs: refuse instead. */
		if (len < 0 || (size_t)len >= sizeof(m->cpus)) {
			mc_err(err, errlen,
				  "topology %s: CPU list of NUMA node %u longer than %d characters",
				  f->source, n->os_index, MC_CPULIST_MAX - 1);
			return -1;
		}
		/* Parsed here, once: every plan reads the mask. */
		if (hwloc_bitmap_last(n->cpuset) >= MC_MAX_PUS ||
		    hwloc_bitmap_to_ulongs(n->cpuset, MC_CPUMASK_WORDS,
					   m->cpu_mask) < 0) {
			mc_err(err, errlen,
				  "topology %s: NUMA node %u has a CPU numbered %d or more",
				  f->source, n->os_index, MC_MAX_PUS);
			return -1;
		}
		/* A wrapped sum would read as a small node: refuse it. */
		if (m->memory_bytes > UINT64_MAX - f->host_ram_bytes) {
			mc_err(err, errlen,
				  "topology %s: the NUMA nodes' memory (local_memory) adds up to more than 2^64 bytes, at NUMA node %u",
				  f->source, n->os_index);
			return -1;
		}
		f->host_ram_bytes += m->memory_bytes;
	}
	if (f->n_numa == 0) {
		mc_err(err, errlen,
			  "topology %s: no NUMA node with CPUs and host memory",
			  f->source);
		return -1;
	}
	mc_collect_distances(topo, f, objs);
	if (mc_collect_cores(topo, f, have_cores, err, errlen) < 0)
		return -1;
	f->pus = (uint32_t)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	f->cores = have_cores ?
		(uint32_t)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) :
		f->pus;
	return 0;
}

static int mc_collect_gpus(hwloc_topology_t topo, struct mc_node_facts *f,
			   char *err, size_t errlen)
{
	hwloc_obj_t pci = NULL;
	uint32_t i;

	/* Walking PCI objects (not OS devices) counts each device once. */
	while ((pci = hwloc_get_next_pcidev(topo, pci)) != NULL) {
		if (!mc_pci_is_gpu(pci))
			continue;
		if (f->n_gpus >= MC_MAX_GPUS) {
			mc_err(err, errlen,
				  "topology %s: more than %d GPUs",
				  f->source, MC_MAX_GPUS);
			return -1;
		}
		mc_gpu_fill(topo, pci, &f->gpus[f->n_gpus++]);
	}
	qsort(f->gpus, f->n_gpus, sizeof(f->gpus[0]), mc_gpu_cmp);
	for (i = 0; i < f->n_gpus; i++)
		f->gpus[i].index = i;
	return 0;
}

/*
 * Peek at the <topology version="X.Y"> of an XML file, so that a file from
 * a newer hwloc gets a message that says so instead of "Invalid argument".
 * Returns the major version, 1 for a v1 file (no version attribute), or 0
 * when it cannot tell.
 */
static int mc_xml_major(const char *path)
{
	char buf[4096], *p, *v, *end;
	FILE *fp = fopen(path, "re");
	size_t n;

	if (!fp)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	p = strstr(buf, "<topology");
	if (!p)
		return 0;
	end = strchr(p, '>');
	v = strstr(p, "version=\"");
	if (!v || (end && v > end))
		return 1;
	return atoi(v + strlen("version=\""));
}

/* Check the file before hwloc does, to name the real problem. */
static int mc_check_file(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd = mc_open_regular("topology", path, MC_OPEN_SAY_EISDIR, 0, &st,
				 err, errlen);

	if (fd < 0)
		return -1;
	close(fd);
	if (st.st_size == 0) {
		mc_err(err, errlen, "topology %s: empty file", path);
		return -1;
	}
	return 0;
}

static void mc_xml_error(const char *path, char *err, size_t errlen)
{
	int major = mc_xml_major(path);

	if (major > HWLOC_API_VERSION >> 16)
		mc_err(err, errlen,
			  "topology %s: XML format %d.x is newer than hwloc %s can read; export it again with an hwloc 2.x lstopo --of xml",
			  path, major, HWLOC_VERSION);
	else
		mc_err(err, errlen,
			  "topology %s: hwloc cannot load this XML (truncated, corrupt, or not a complete topology); set HWLOC_XML_VERBOSE=1 for hwloc's details",
			  path);
}

/*
 * Live discovery runs inside slurmd, so keep out the hwloc plugins that
 * cost more than they give here:
 *  - "pci" (libpciaccess) leaks about 1 KiB per load (valgrind, Debian 12
 *    hwloc 2.9.0 + libpciaccess 0.17); hwloc's linux component reads the
 *    same PCI devices, classes and locality from sysfs without it;
 *  - "opencl" starts every installed OpenCL runtime (slow, touches the
 *    GPUs) and "gl" connects to X servers; we read neither's attributes.
 * XML loads never run these plugins.
 */
static int mc_blacklist_plugins(hwloc_topology_t topo, char *err,
				size_t errlen)
{
#if HWLOC_API_VERSION >= 0x00020100
	static const char *const names[] = { "pci", "opencl", "gl" };
	size_t i;

	/* hwloc refuses (EINVAL) to blacklist a component it does not
	 * have: Debian ships them in libhwloc-plugins, which a node may
	 * lack. A component that is not there cannot run: nothing to do. */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (hwloc_topology_set_components(topo,
				HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
				names[i]) < 0 && errno != EINVAL) {
			mc_err(err, errlen,
				  "topology live: hwloc component %s: %s",
				  names[i], strerror(errno));
			return -1;
		}
#endif
	(void)err;
	(void)errlen;
	return 0;
}

bool mc_topology_ram_disagrees(const struct mc_node_facts *f)
{
	uint64_t a = f->hwloc_ram_bytes, b = f->host_ram_bytes;
	uint64_t hi = a > b ? a : b, diff = a > b ? a - b : b - a;

	return a && b && diff > hi / 100;
}

uint64_t mc_kernel_ram_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || page <= 0)
		return 0;
	return (uint64_t)pages * (uint64_t)page;
}

/*
 * The live machine's host RAM as slurmd counts it (RealMemory), less the
 * memory of the NUMA nodes hwloc sees but leaves out of host RAM (GPU
 * memory onlined as NUMA nodes: the kernel counts it in MemTotal).
 * hwloc's own figure when the kernel's is unknown.
 */
static uint64_t mc_live_ram(hwloc_topology_t topo, uint64_t hwloc_bytes)
{
	uint64_t kernel = mc_kernel_ram_bytes(), other = 0;
	hwloc_obj_t n = NULL;

	while ((n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
					       n)) != NULL)
		if (!mc_numa_is_host(n))
			other += n->attr->numanode.local_memory;
	if (kernel <= other)
		return hwloc_bytes;
	return kernel - other;
}

int mc_topology_load(const char *xml_path, struct mc_node_facts *f,
		     char *err, size_t errlen)
{
	hwloc_topology_t topo;
	bool live = !xml_path || !*xml_path;
	int rc = -1;

	if (err && errlen)
		err[0] = '\0';
	if (!f) {
		mc_err(err, errlen, "topology: no place for the facts");
		return -1;
	}
	memset(f, 0, sizeof(*f));
	if (live) {
		snprintf(f->source, sizeof(f->source), "live");
	} else {
		if (strlen(xml_path) >= sizeof(f->source)) {
			mc_err(err, errlen, "topology %.64s...: %s",
				  xml_path, strerror(ENAMETOOLONG));
			return -1;
		}
		snprintf(f->source, sizeof(f->source), "%s", xml_path);
		if (mc_check_file(xml_path, err, errlen) < 0)
			return -1;
	}

	if (hwloc_topology_init(&topo) < 0) {
		mc_err(err, errlen, "topology %s: hwloc init: %s",
			  f->source, strerror(errno));
		return -1;
	}
	/*
	 * Filters must be set before load: hwloc silently ignores them after.
	 * KEEP_ALL, because KEEP_IMPORTANT may drop PCI devices and OS
	 * devices without a known subtype (DGX-2 nvml osdevs have none).
	 */
	if (hwloc_topology_set_io_types_filter(topo,
			HWLOC_TYPE_FILTER_KEEP_ALL) < 0) {
		mc_err(err, errlen, "topology %s: hwloc I/O filter: %s",
			  f->source, strerror(errno));
		goto out;
	}
	if (live) {
		if (hwloc_topology_set_flags(topo,
				HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM) < 0) {
			mc_err(err, errlen, "topology live: hwloc flags: %s",
				  strerror(errno));
			goto out;
		}
		if (mc_blacklist_plugins(topo, err, errlen) < 0)
			goto out;
	} else if (hwloc_topology_set_xml(topo, xml_path) < 0) {
		/*
		 * Must stop here: after a failed set_xml, load() would quietly
		 * discover the live machine instead of the file.
		 */
		mc_xml_error(xml_path, err, errlen);
		goto out;
	}
	if (hwloc_topology_load(topo) < 0) {
		if (live)
			mc_err(err, errlen, "topology live: hwloc load: %s",
				  strerror(errno));
		else
			mc_xml_error(xml_path, err, errlen);
		goto out;
	}
	if (mc_collect_numa(topo, f, err, errlen) < 0 ||
	    mc_collect_gpus(topo, f, err, errlen) < 0)
		goto out;
	f->hwloc_ram_bytes = f->host_ram_bytes;
	if (live)
		f->host_ram_bytes = mc_live_ram(topo, f->hwloc_ram_bytes);
	rc = 0;
out:
	hwloc_topology_destroy(topo);
	if (rc < 0) {
		/* Never hand half-filled facts to a caller that ignores rc. */
		char src[sizeof(f->source)];

		memcpy(src, f->source, sizeof(src));
		memset(f, 0, sizeof(*f));
		memcpy(f->source, src, sizeof(src));
	}
	return rc;
}
