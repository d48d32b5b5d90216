# telescope — the front door. Each target installs only what it needs on a
# fresh Debian machine, then builds, then runs:
#
#   make build     the compiler, cmake and the libraries; configure and build
#   make demo      ... plus Node/npm and the pinned MCP SDK; run a scripted session
#   make test      ... plus Check, valgrind, clang and chromium; run every test
#   make check-hard  the whole suite under ASan+UBSan, plus 60 s of fuzzing per target (CI runs it)
#   make fuzz      a longer fuzz run (FUZZ_SECONDS per target, default 600)
#   make bench     the benchmarks of tests/bench (results: BENCHMARKS.md)
#   make mutants   plant each bug of tests/mutants/ in a copy, run the tests that cover it
#   make soak      the model and integration tests SOAK_RUNS times (default 5) beside 2 busy
#                  loops; each failure with its replay line (tests/soak.sh)

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_ARGS ?=
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_ARGS ?=

# What building and running needs (libwebsockets' libuv support is a runtime
# plugin: without libwebsockets-evlib-uv no context can be created).
APT_BUILD := build-essential cmake pkg-config libjansson-dev libuv1-dev \
             libwebsockets-dev libwebsockets-evlib-uv
# The demo's scripted MCP client.
APT_DEMO  := nodejs npm
# Only the tests: unit tests (Check), leak checks, the sanitizer and fuzz
# build, and the headless browser the chart tests render SVG with.
APT_TEST  := check valgrind clang libclang-rt-14-dev chromium

.PHONY: all deps deps-build deps-demo deps-test node-deps configure build test demo check-hard \
        fuzz bench mutants soak clean format

all: build

# Packages: installed with apt-get when we are root or have password-less
# sudo; otherwise the exact command is printed and make stops. A Node that
# did not come from apt (nvm, NodeSource) counts as installed.
define install_missing
	@missing=""; \
	for p in $(1); do \
	  case $$p in nodejs|npm) command -v $${p%js} >/dev/null 2>&1 && continue;; esac; \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; \
	  elif sudo -n true 2>/dev/null; then SUDO="sudo"; \
	  else echo "Missing packages:$$missing"; \
	       echo "Run: sudo apt-get update && sudo apt-get install -y$$missing"; exit 1; fi; \
	  echo "Installing:$$missing"; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

deps-build:
	$(call install_missing,$(APT_BUILD))
deps-demo: deps-build
	$(call install_missing,$(APT_DEMO))
deps-test: deps-demo
	$(call install_missing,$(APT_TEST))
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

# Tests that hold only on a fast machine: the model and integration tests,
# SOAK_RUNS times beside SOAK_LOAD busy loops (tests/soak.sh). Not part of
# make test.
soak: deps-test build node-deps
	@sh tests/soak.sh $(BUILD)

format:
	@clang-format -i server/*.c server/*.h watcher/sim/*.c watcher/sim/*.h tests/unit/*.c

clean:
	rm -rf $(BUILD) build-asan build-mutants
