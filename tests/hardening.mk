# tests/hardening.mk - sanitizers, valgrind and fuzzing; included
# from the Makefile.
#
#   make sanitize   the unit tests and the fuzz corpora (tests/fuzz/corpus/,
#                   seeds and every crash input ever found) built again into
#                   $(B)/asan/ with gcc -fsanitize=address,undefined, run
#                   with halt_on_error                     (part of check)
#   make valgrind   memcore check and memcore audit under valgrind memcheck
#                   (--error-exitcode=99: exit 1 is memcore's "refused")
#                   on every topology in tests/data/, zero errors (check;
#                   tests/valgrind.sh, MC_JOBS at a time)
#   make integration-asan  memcore.so with ASan/UBSan loaded by the real
#                   slurmd and slurmstepd, through the integration tests
#                   of the plugin's paths (ASAN_IT_TESTS); fails on any
#                   report (tests/integration/NOTES.md, "Sanitizers")
#   make fuzz       each libFuzzer target (clang-19) for FUZZ_SECONDS (60)
#                   from its seed corpus; fails on any crash. Not part of
#                   check: a separate CI step, budget 5 x FUZZ_SECONDS + 1 min
#
# A crash found by make fuzz is saved as $(B)/fuzz/crash-<target>-*; copy it
# into tests/fuzz/corpus/<target>/ (and fix the bug): make sanitize then
# replays it on every check.

CLANG        ?= clang-19
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := config opts parse list jobfiles memstat metrics timeline dataset
# What the targets parse: pure C, no Slurm, no hwloc (cgroup/ whole: the
# summary asks its table of operations, mc_cgroup_ops_of).
FUZZ_SRC     := $(foreach d,util formats policy data alloc report cgroup,$(wildcard $(d)/*.c))
FUZZ_INC     := $(ENGINE_INC) -Ispank -Itests/fuzz
SAN_FLAGS    := -fsanitize=address,undefined -fno-omit-frame-pointer \
                -fno-sanitize-recover=all
SAN_ENV      := ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1 \
                UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
                LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:fast_unwind_on_malloc=0

.PHONY: sanitize sanitize-run valgrind fuzz fuzz-build

# The unit tests and replay drivers, built into $(B)/asan by a sub-make with
# the sanitizers in CFLAGS (compile and link).
sanitize:
	$(MAKE) --no-print-directory -j$(NPROC) B=$(B)/asan \
	  CFLAGS="-O1 -g -DMC_DEBUG $(SAN_FLAGS)" sanitize-run

REPLAY_BIN := $(FUZZ_TARGETS:%=$(B)/replay/replay_%)
$(B)/replay/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(FUZZ_SRC)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(FUZZ_INC) -o $@ tests/fuzz/replay.c $< $(FUZZ_SRC) -lm \
	  $(PKG_LIBS)

sanitize-run: $(UNIT_BIN) $(REPLAY_BIN)
	@MC_TOP=$(CURDIR) $(SAN_ENV) bash tests/pool.sh -p asan -l $(B)/logs/asan -- $(UNIT_BIN)
	@set -e; for t in $(FUZZ_TARGETS); do echo "== asan+ubsan corpus $$t"; \
	  $(SAN_ENV) $(B)/replay/replay_$$t tests/fuzz/corpus/$$t; done

valgrind: $(CLI)
	bash tests/valgrind.sh $(CLI)

FUZZ_BIN := $(FUZZ_TARGETS:%=$(B)/fuzz/fuzz_%)
$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_SRC) tests/fuzz/fuzz.h
	@mkdir -p $(dir $@)
	$(CLANG) -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined $(FUZZ_INC) \
	  -DMC_VERSION='"$(VERSION)"' $(PKG_CFLAGS) -o $@ $< $(FUZZ_SRC) -lm \
	  $(PKG_LIBS)

fuzz-build: $(FUZZ_BIN)

# Each target starts from a copy of its seeds in $(B)/fuzz/corpus-<t> (the
# repo's corpus is only read) and stops after FUZZ_SECONDS.
fuzz: $(FUZZ_BIN)
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	  mkdir -p $(B)/fuzz/corpus-$$t; \
	  $(SAN_ENV) $(B)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
	    -artifact_prefix=$(B)/fuzz/crash-$$t- \
	    $(B)/fuzz/corpus-$$t tests/fuzz/corpus/$$t \
	    >$(B)/fuzz/$$t.log 2>&1 || { tail -n 60 $(B)/fuzz/$$t.log; \
	    echo "FAIL: fuzz $$t crashed: $$(ls $(B)/fuzz/crash-$$t-* 2>/dev/null)"; \
	    exit 1; }; \
	  grep -E '^Done|stat::number_of_executed_units' $(B)/fuzz/$$t.log | head -n 1; \
	done; echo "fuzz: $(FUZZ_TARGETS): no crash in $(FUZZ_SECONDS) s each"

# The plugin under ASan/UBSan inside the real slurmd and slurmstepd: only
# memcore.so is built again (into $(B)/asan-it, compile and link flags);
# the command and the test programs there are this tree's plain ones (make
# sanitize and make valgrind check the command). tests/integration/lib.sh
# with MC_SANITIZE=1 preloads libasan into slurmd and fails a test on any
# report (NOTES.md, "Sanitizers"). The tests: those that run the plugin's
# paths in slurmd and slurmstepd. Not test_30: it fills a step's memory
# limit with tmpfs pages no kill frees, and on v1 slurmstepd is charged to
# that cgroup; an ASan slurmstepd takes fresh pages for every allocation
# (the quarantine) where Slurm's own reuses freed ones, and the OOM killer
# then ends it instead (NOTES.md).
#
# The compiler there is clang-19 with its shared ASan runtime, not gcc's
# libasan: slurmstepd forks each task while its other threads call malloc,
# and only a runtime that takes its allocator's locks around fork (LLVM 18
# and later: pthread_atfork; gcc 12's libasan and LLVM 14's do not) keeps
# the child from inheriting a lock held by a thread it does not have (a
# task stuck before exec in __sanitizer::FutexWait, seen under load).
ASAN_IT_B     := $(B)/asan-it
ASAN_IT_CC    ?= clang-19
ASAN_IT_RT    := $(shell $(ASAN_IT_CC) -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
ASAN_IT_FLAGS := $(SAN_FLAGS) -shared-libasan -Wno-unknown-warning-option
ASAN_IT_TESTS ?= test_10 test_20 test_26 test_36 test_37_after test_40 test_70 test_75 test_92
.PHONY: integration-asan
integration-asan: $(PLUGIN) $(CLI) $(PROGS)
	@command -v $(ASAN_IT_CC) >/dev/null || { echo "memcore: make integration-asan needs $(ASAN_IT_CC) (contrib/install-deps.sh check)"; exit 1; }
	$(MAKE) --no-print-directory B=$(ASAN_IT_B) CC=$(ASAN_IT_CC) \
	  CFLAGS="-O1 -g -DMC_DEBUG $(ASAN_IT_FLAGS)" \
	  LDFLAGS="-fsanitize=address,undefined -shared-libasan -Wl,-rpath,$(dir $(ASAN_IT_RT))" \
	  PLUGIN_EXTRA=$(ASAN_IT_B)/tests/asan/memcore_asan.o \
	  PLUGIN_MAP=tests/asan/memcore-asan.map $(ASAN_IT_B)/memcore.so
	ln -sfn ../memcore $(ASAN_IT_B)/memcore
	ln -sfn ../progs $(ASAN_IT_B)/progs
	MC_SANITIZE=1 MEMCORE_BUILD=$(CURDIR)/$(ASAN_IT_B) bash tests/integration/run.sh $(ASAN_IT_TESTS)
