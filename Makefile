# memcore - Slurm SPANK plugin that sizes host RAM and CPU cores to GPU jobs.
#
#   make            build memcore.so and the memcore command
#   make check      installs the Debian packages it needs (root), then unit
#                   tests and integration tests on a real local Slurm, with
#                   the guest tier (make vm-check) beside them; warnings are
#                   errors here (WERROR=-Werror), not in a plain make; ends
#                   with each tier's time and the ten slowest tests
#   make unit       the cmocka and command tests (about 20 s; README,
#                   Developing, has the loop for one test)
#   make vm-check   the guest tier alone: QEMU guests with cgroup v2 and
#                   Slurm 22.05/24.11/26.05 (tests/vm/README.md);
#                   make vm-check-trixie: one suite (bookworm, trixie, sid)
#   make fuzz       libFuzzer targets, FUZZ_SECONDS each (tests/hardening.mk)
#   make integration-asan  the plugin's integration tests with memcore.so
#                   under ASan/UBSan in the real slurmd and slurmstepd
#                   (tests/hardening.mk)
#   make demo       a local Slurm with the plugin, a refused and a fitting job
#   make bench      memcore's cost per step launch and of check --partition
#                   at 10,000 nodes, written to BENCHMARKS.md
#   make install    DESTDIR, PREFIX, SLURM_PLUGIN_DIR, SYSCONFDIR honoured
#   make deb        a Debian package of this tree, in build/deb/
#   make clean

# The one place the version is set: --version, slurmd's log line and the
# packages' file names come from it; contrib/debian/changelog,
# contrib/memcore.spec and the man pages' headers must agree with it
# (tests/cli/test_build.sh checks; `make version` prints it).
VERSION      := 0.3.0
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
MANDIR       ?= $(PREFIX)/share/man
SYSCONFDIR   ?= /etc/slurm
DOCDIR       ?= $(PREFIX)/share/doc/memcore
DATADIR      ?= $(PREFIX)/share/memcore
# Slurm's plugin directory: where libslurm's pkg-config or Debian puts it.
SLURM_PLUGIN_DIR ?= $(shell d=$$(pkg-config --variable=libdir slurm 2>/dev/null); \
	for c in $$d/slurm-wlm $$d/slurm /usr/lib/$$(gcc -print-multiarch 2>/dev/null)/slurm-wlm /usr/lib64/slurm; do \
	  [ -d "$$c" ] && { echo $$c; exit; }; done; echo /usr/lib/$$(gcc -print-multiarch)/slurm-wlm)

CC       ?= gcc
PKGS     := hwloc libcgroup jansson yaml-0.1
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# Messages are cut to fit their buffers on purpose, so truncation is no error.
# -Werror only where the toolchain is the project's own (make check, CI:
# WERROR=-Werror): a user's compiler, glibc or CFLAGS (-O0 warns with
# _FORTIFY_SOURCE) must not stop their build over a warning.
WERROR   ?=
WARN     := -Wall -Wextra $(WERROR) -Wformat=2 -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wno-unused-parameter \
            -Wno-format-truncation
HARDEN   := -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIC \
            -fno-strict-overflow -fno-delete-null-pointer-checks
CFLAGS   ?= -O2 -g
ALL_CFLAGS = -std=gnu11 $(CFLAGS) $(WARN) $(HARDEN) -MMD -MP \
             -DMC_VERSION='"$(VERSION)"' $(ENGINE_INC) -Icompat \
             $(PKG_CFLAGS)
HARDEN_LD := -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack -Wl,--as-needed

B        := build
# Parallel builds and test pools (make check; tests/pool.sh reads MC_JOBS).
NPROC    := $(shell nproc 2>/dev/null || echo 2)
# The engine's rooms, bottom floor first: shared helpers (util), the file
# formats memcore reads and writes (formats), the cgroups (cgroup: on
# util only), the rules, judge and decision (policy), then what builds on
# them: the data path (data), Slurm's allocation model (alloc), after the
# step (report), the node (topology). A room includes only its own
# headers and those of rooms before it here.
ENGINE_DIRS  := util formats cgroup policy data alloc report topology
ENGINE_INC   := $(ENGINE_DIRS:%=-I%)
ENGINE_SRC   := $(foreach d,$(ENGINE_DIRS),$(wildcard $(d)/*.c))
SPANK_SRC    := $(wildcard spank/*.c)
CLI_SRC      := $(wildcard cli/*.c)
UNIT_SRC     := $(wildcard tests/unit/test_*.c)

ENGINE_OBJ := $(ENGINE_SRC:%.c=$(B)/%.o)
SPANK_OBJ  := $(SPANK_SRC:%.c=$(B)/%.o)
CLI_OBJ    := $(CLI_SRC:%.c=$(B)/%.o)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)

PLUGIN := $(B)/memcore.so
CLI    := $(B)/memcore

.PHONY: all check unit unit-bins corpus-gen integration demo install uninstall clean deps bench progs vm-check version

all: $(PLUGIN) $(CLI)

version:
	@echo $(VERSION)

# Objects are rebuilt when the compiler or its flags change (make check
# adds -Werror to a tree a plain make built): $(B)/.cflags holds the last.
FLAGS_NOW := $(CC) $(ALL_CFLAGS)
ifneq ($(file <$(B)/.cflags),$(FLAGS_NOW))
$(shell mkdir -p $(B))
$(file >$(B)/.cflags,$(FLAGS_NOW))
endif

$(B)/%.o: %.c $(B)/.cflags
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/libmemcore.a: $(ENGINE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The plugin exports only the SPANK symbols (spank/memcore.map). -z nodelete:
# a sampler thread stuck in a cgroup read keeps its code mapped after
# slurmstepd's dlclose (spank/mc_sampler.h).
# PLUGIN_EXTRA and PLUGIN_MAP: the ASan build's additions (tests/hardening.mk).
PLUGIN_EXTRA ?=
PLUGIN_MAP   ?= spank/memcore.map
$(PLUGIN): $(SPANK_OBJ) $(PLUGIN_EXTRA) $(B)/libmemcore.a $(PLUGIN_MAP)
	$(CC) -shared -pthread $(LDFLAGS) -o $@ $(SPANK_OBJ) $(PLUGIN_EXTRA) $(B)/libmemcore.a $(HARDEN_LD) \
	  -Wl,-z,nodelete -Wl,--version-script=$(PLUGIN_MAP) $(PKG_LIBS)

# Only the command links libslurm (node facts from slurmctld); memcore.so
# never does: slurmstepd must not load a second copy of Slurm.
$(CLI): $(CLI_OBJ) $(B)/libmemcore.a
	$(CC) -pie -pthread $(LDFLAGS) -o $@ $(CLI_OBJ) $(B)/libmemcore.a $(HARDEN_LD) $(PKG_LIBS) \
	  -lslurm

$(B)/tests/%: tests/unit/%.c $(B)/libmemcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(B)/libmemcore.a \
	  $(PKG_LIBS) -lcmocka

# The longest first (test_build.sh compiles the tree again), so that the
# pool does not end on it alone.
CLI_TESTS := tests/cli/test_build.sh $(filter-out tests/cli/test_build.sh,$(wildcard tests/cli/test_*.sh))
# The cmocka binaries, then the tests/cli scripts, MC_JOBS at a time (all
# CPUs by default; tests/pool.sh): each prints PASS/FAIL and its seconds,
# a failed one its whole log. One unit test alone, rebuilt first:
# `make build/tests/test_rules && MC_TOP=$PWD build/tests/test_rules`.
unit: $(UNIT_BIN) $(CLI) $(PLUGIN)
	@MC_TOP=$(CURDIR) bash tests/pool.sh -p unit -l $(B)/logs/unit -- $(UNIT_BIN)
	@MEMCORE=$(CURDIR)/$(CLI) bash tests/pool.sh -r bash -p cli -l $(B)/logs/cli -- \
	  $(CLI_TESTS)

# Helper programs of the integration tests (tests/integration/progs/*.c).
PROGS := $(patsubst tests/integration/progs/%.c,$(B)/progs/%,$(wildcard tests/integration/progs/*.c))
$(B)/progs/%: tests/integration/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $<

progs: $(PROGS)

integration: all $(PROGS)
	MEMCORE_BUILD=$(CURDIR)/$(B) bash tests/integration/run.sh

# check and demo do all set-up on a fresh Debian 12 machine (as root): the
# packages first, then a new make that sees their pkg-config files.
# tests/check.sh runs the tiers, the guest tier beside the host tiers,
# and prints each tier's time and the ten slowest tests at the end. (Not
# $(MAKE) in this line: make -n would run a line that names it.)
check:
	bash contrib/install-deps.sh check
	MC_MAKE="make --no-print-directory WERROR=-Werror" bash tests/check.sh

unit-bins: $(UNIT_BIN)

# The generated submit-vs-launch corpus (tests/integration/corpus/table.txt
# expanded by gen_corpus.awk; test_61 on three slurmd, test_62's
# version-dependent rows): prints every disagreement. Both are in make
# check (test_61 on the host, test_62 in the trixie and sid guests; 0
# disagreements each); this target also runs test_62 on the host's 22.05
# (MC_CORPUS_GEN=1; tests/integration/NOTES.md).
corpus-gen: all $(PROGS)
	MC_CORPUS_GEN=1 MC_TEST_TIMEOUT=$${MC_TEST_TIMEOUT:-900} MEMCORE_BUILD=$(CURDIR)/$(B) bash tests/integration/run.sh test_61 test_62

# The guest tier (tests/vm): each Debian suite's Slurm in a QEMU guest with
# cgroup v2, the suites side by side (MEMCORE_VM_JOBS). A guest that cannot
# run is a loud SKIP, a failure with CI=true; a tier where every guest was
# skipped fails (exit 77 from check.sh) unless MEMCORE_VM_ALLOW_SKIP=1.
VM_SUITES ?= bookworm trixie sid
VM_SKIP_OK = rc=$$?; [ $$rc = 77 ] && [ "$${MEMCORE_VM_ALLOW_SKIP:-0}" = 1 ] && \
	echo "memcore-vm: MEMCORE_VM_ALLOW_SKIP=1: the guest tier ran nothing, allowed" && exit 0; exit $$rc
vm-check:
	bash tests/vm/check.sh $(VM_SUITES) || { $(VM_SKIP_OK); }
vm-check-%:
	bash tests/vm/check.sh $* || { $(VM_SKIP_OK); }

demo:
	bash contrib/install-deps.sh demo
	$(MAKE) all
	MEMCORE_BUILD=$(CURDIR)/$(B) bash tests/integration/demo.sh

# What memcore costs per step launch (BENCHMARKS.md, name=value lines);
# several minutes, a test cluster of its own; never part of check.
$(B)/bench/bench_load: tests/bench/bench_load.c $(B)/libmemcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libmemcore.a $(PKG_LIBS)

# What memcore's own cgroup costs, call by call (no Slurm; root).
$(B)/bench/cg_probe: tests/bench/cg_probe.c $(B)/libmemcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libmemcore.a $(PKG_LIBS)

# What a running step's live gauges cost its sampler thread, per write.
$(B)/bench/bench_gauges: tests/bench/bench_gauges.c $(B)/spank/mc_gaugefile.o $(B)/libmemcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/spank/mc_gaugefile.o $(B)/libmemcore.a

bench: all $(B)/bench/bench_load $(B)/bench/cg_probe $(B)/bench/bench_gauges
	MEMCORE_BUILD=$(CURDIR)/$(B) bash tests/bench/run.sh

# Debian 12 packages (root; no-op when present): every target's, or
# DEPS_TARGET=build|demo|check|deb|bench only (contrib/install-deps.sh).
DEPS_TARGET ?= all
deps:
	bash contrib/install-deps.sh $(DEPS_TARGET)

install: all
	install -d $(DESTDIR)$(SLURM_PLUGIN_DIR) $(DESTDIR)$(BINDIR) \
	  $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man5 \
	  $(DESTDIR)$(SYSCONFDIR)/plugstack.conf.d $(DESTDIR)$(DOCDIR) \
	  $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DATADIR) \
	  $(DESTDIR)$(DATADIR)/grafana $(DESTDIR)$(DATADIR)/prometheus/consoles
	install -m 0755 $(PLUGIN) $(DESTDIR)$(SLURM_PLUGIN_DIR)/memcore.so
	install -m 0755 $(CLI) $(DESTDIR)$(BINDIR)/memcore
	install -m 0644 docs/memcore.8 $(DESTDIR)$(MANDIR)/man8/memcore.8
	install -m 0644 docs/memcore.conf.5 $(DESTDIR)$(MANDIR)/man5/memcore.conf.5
	sed 's|@SLURM_PLUGIN_DIR@|$(SLURM_PLUGIN_DIR)|; s|@SYSCONFDIR@|$(SYSCONFDIR)|' \
	  etc/plugstack.conf.d/memcore.conf.in \
	  > $(DESTDIR)$(SYSCONFDIR)/plugstack.conf.d/memcore.conf
	install -m 0644 etc/memcore.conf $(DESTDIR)$(DOCDIR)/memcore.conf.example
	sed -e 's|^local MEMCORE = .*|local MEMCORE = "$(BINDIR)/memcore"|' \
	  -e 's|^local MEMCORE_CONF = .*|local MEMCORE_CONF = "$(SYSCONFDIR)/memcore.conf"|' \
	  contrib/cli_filter.lua >$(DESTDIR)$(DATADIR)/cli_filter.lua
	chmod 0644 $(DESTDIR)$(DATADIR)/cli_filter.lua
	install -m 0644 contrib/examples/*.sbatch $(DESTDIR)$(DOCDIR)/examples/
	install -m 0644 contrib/grafana/memcore.json $(DESTDIR)$(DATADIR)/grafana/memcore.json
	install -m 0644 contrib/prometheus/consoles/memcore.html \
	  $(DESTDIR)$(DATADIR)/prometheus/consoles/memcore.html
	[ -e $(DESTDIR)$(SYSCONFDIR)/memcore.conf ] || \
	  install -m 0644 etc/memcore.conf $(DESTDIR)$(SYSCONFDIR)/memcore.conf

uninstall:
	rm -f $(DESTDIR)$(SLURM_PLUGIN_DIR)/memcore.so $(DESTDIR)$(BINDIR)/memcore \
	  $(DESTDIR)$(MANDIR)/man8/memcore.8 $(DESTDIR)$(MANDIR)/man5/memcore.conf.5 \
	  $(DESTDIR)$(SYSCONFDIR)/plugstack.conf.d/memcore.conf \
	  $(DESTDIR)$(DOCDIR)/memcore.conf.example \
	  $(DESTDIR)$(DATADIR)/cli_filter.lua \
	  $(DESTDIR)$(DATADIR)/grafana/memcore.json \
	  $(DESTDIR)$(DATADIR)/prometheus/consoles/memcore.html
	rm -rf $(DESTDIR)$(DOCDIR)/examples

# The Debian package (Debian 12; debhelper, dpkg-dev, fakeroot): this tree
# without build output is copied to $(B)/deb/memcore-$(VERSION) with
# contrib/debian as its debian/, and dpkg-buildpackage leaves the .deb in
# $(B)/deb/. RPM sites: contrib/memcore.spec.
DEB_DIR := $(B)/deb
.PHONY: deb
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/memcore-$(VERSION)
	tar -C $(CURDIR) --exclude=./.git --exclude=./$(B) --exclude=./build \
	  --exclude=./tests/integration/.work --exclude=./debian -cf - . \
	  | tar -C $(DEB_DIR)/memcore-$(VERSION) -xf -
	cp -r contrib/debian $(DEB_DIR)/memcore-$(VERSION)/debian
	# (not our make variables: the package build runs its own make)
	cd $(DEB_DIR)/memcore-$(VERSION) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	  -u MAKEOVERRIDES dpkg-buildpackage -b -us -uc
	@ls $(DEB_DIR)/*.deb

clean:
	rm -rf $(B)

include tests/hardening.mk

-include $(shell find $(B) -path $(B)/deb -prune -o -type f -name '*.d' -print 2>/dev/null)
