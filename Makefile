# telescope — the front door. Each target installs only what it needs on a
# fresh machine (Debian, Ubuntu, Fedora, Arch, Alpine, macOS with Homebrew:
# scripts/deps.sh, docs/install.md), then builds, then runs:
#
#   make build     the compiler, cmake and the libraries; configure and build
#   make demo      ... plus Node/npm and the pinned MCP SDK; run a scripted session
#   make test      ... plus Check, valgrind, clang and chromium; run every test
#   make check-hard  the whole suite under ASan+UBSan, plus 60 s of fuzzing per target (CI runs it)
#   make test-lws43  the unit, integration and sim tests against libwebsockets 4.3.5 (CI runs it)
#   make fuzz      a longer fuzz run (FUZZ_SECONDS per target, default 600)
#   make bench     the benchmarks of tests/bench (results: BENCHMARKS.md)
#   make mutants   plant each bug of tests/mutants/ in a copy, run the tests that cover it
#   make mutants-auto  mechanical mutants of the C lines changed lately, sampled (a seed printed)
#   make soak      the model and integration tests SOAK_RUNS times (default 5) beside 2 busy
#                  loops; each failure with its replay line (tests/soak.sh)

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_ARGS ?=
JOBS       ?= $(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)
CTEST_ARGS ?=

.PHONY: all deps deps-build deps-demo deps-test node-deps configure build test demo check-hard \
        fuzz bench mutants mutants-auto soak clean format test-lws43

all: build

# Packages: scripts/deps.sh installs what each step needs and is missing with
# the system's package manager (apt-get, dnf, pacman, apk, Homebrew), as root
# or with password-less sudo; otherwise it prints the command and make stops.
# TELESCOPE_DEPS_DRY_RUN=1 prints the commands only; TELESCOPE_OS=NAME skips
# the detection. A node not from the package manager (nvm...) counts.
deps-build:
	@sh scripts/deps.sh build
deps-demo: deps-build
	@sh scripts/deps.sh demo
deps-test: deps-demo
	@sh scripts/deps.sh test
deps: deps-test

# The Node packages the demo and the client tests use, pinned by
# tests/client/package-lock.json.
node-deps: deps-demo
	@if [ ! -d tests/client/node_modules ] || \
	    [ tests/client/package-lock.json -nt tests/client/node_modules/.package-lock.json ]; then \
	  echo "Installing the pinned Node test packages (npm ci)"; \
	  cd tests/client && npm ci --no-audit --no-fund --loglevel=error; \
	fi

configure: deps-build
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: deps-test build node-deps
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

demo: build node-deps
	@sh examples/demo.sh $(BUILD)

# The unit, integration and sim tests against libwebsockets 4.3.5 (Debian 13's,
# Ubuntu 24.04's), built once from Debian's source package into
# ~/.cache/telescope/lws-4.3.5 (tests/lws/against.sh), in build-lws43. Not
# part of make test (Debian 12's 4.1.6 stays the default); CI runs it.
test-lws43: deps-test node-deps
	@JOBS=$(JOBS) sh tests/lws/against.sh 4.3.5 trixie build-lws43

# The whole suite again under ASan+UBSan, in its own build tree (valgrind
# tests excluded: the two instrumentations do not mix), with the libFuzzer
# targets built, their saved inputs replayed, and each fuzzed for 60 s.
SANITIZE_ARGS := -DTELESCOPE_SANITIZE=ON -DTELESCOPE_FUZZ=ON -DCMAKE_C_COMPILER=clang
# The model-based test runs up to 300 sequences here, for at most 7 minutes
# (make test: 200, for at most 4).
check-hard:
	@MODEL_SEQUENCES=$${MODEL_SEQUENCES:-300} MODEL_BUDGET_S=$${MODEL_BUDGET_S:-420} $(MAKE) --no-print-directory test BUILD=build-asan \
	  BUILD_TYPE=Debug CMAKE_ARGS="$(SANITIZE_ARGS)" CTEST_ARGS="-LE valgrind"
	@sh tests/fuzz/run.sh build-asan 60

# A longer fuzz run (FUZZ_SECONDS per target).
FUZZ_SECONDS ?= 600
fuzz: deps-test
	@$(MAKE) --no-print-directory build BUILD=build-asan BUILD_TYPE=Debug \
	  CMAKE_ARGS="$(SANITIZE_ARGS)"
	@sh tests/fuzz/run.sh build-asan $(FUZZ_SECONDS)

bench: deps-test build node-deps
	@sh tests/bench/run.sh $(BUILD)

# How strong the tests are: each plausible bug of tests/mutants/*.mutant is
# planted alone in a copy of the tree (build-mutants/src; the worktree is not
# touched), built in build-mutants/build, and the tests that cover its file
# run; killed / survived / not applicable and a score. Not part of make test.
mutants: deps-test node-deps
	@node tests/mutants/run.mjs build-mutants $(MUTANTS)

# Mutants nobody chose: the classic operators (relational, logical, compound
# assignment, ±1, deleted statements, swapped arguments) over the C lines
# changed since MUTANTS_BASE (default: 200 commits back), MUTANTS_COUNT of
# them (default 40) sampled with MUTANTS_SEED (printed; random when unset).
# One that does not build is skipped. The score goes to tests/mutants/SCORES.md.
mutants-auto: deps-test node-deps
	@node tests/mutants/auto.mjs $(if $(MUTANTS_BASE),--base $(MUTANTS_BASE)) \
	  $(if $(MUTANTS_COUNT),--count $(MUTANTS_COUNT)) $(if $(MUTANTS_SEED),--seed $(MUTANTS_SEED)) build-mutants

# Tests that hold only on a fast machine: the model and integration tests,
# SOAK_RUNS times beside SOAK_LOAD busy loops (tests/soak.sh). Not part of
# make test.
soak: deps-test build node-deps
	@sh tests/soak.sh $(BUILD)

format:
	@clang-format -i server/*.c server/*.h watcher/sim/*.c watcher/sim/*.h tests/unit/*.c

clean:
	rm -rf $(BUILD) build-asan build-mutants build-lws43
