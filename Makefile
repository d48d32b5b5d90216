# telescope — the front door. `make demo` and `make test` each do all the
# set-up a fresh Debian machine needs, then build, then run.
#
#   make test      install missing packages, build, run every test
#   make demo      install missing packages, build, run a scripted session
#   make build     configure and build only
#   make check-hard  the sanitizer build of the whole suite (CI runs it too)
#   make bench     the benchmarks of tests/bench (results: BENCHMARKS.md)

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_ARGS ?=
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_ARGS ?=

APT_PACKAGES := build-essential cmake pkg-config libjansson-dev libuv1-dev \
                libwebsockets-dev libwebsockets-evlib-uv check valgrind clang \
                chromium

.PHONY: all deps node-deps configure build test demo check-hard bench clean format

all: build

# Packages: installed with apt-get when we are root or have password-less
# sudo; otherwise the exact command is printed and make stops.
deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; \
	  elif sudo -n true 2>/dev/null; then SUDO="sudo"; \
	  else echo "Missing packages:$$missing"; \
	       echo "Run: sudo apt-get update && sudo apt-get install -y$$missing"; exit 1; fi; \
	  echo "Installing:$$missing"; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# The Node packages the client tests use, pinned by tests/client/package-lock.json.
node-deps: deps
	@if [ ! -d tests/client/node_modules ] || \
	    [ tests/client/package-lock.json -nt tests/client/node_modules/.package-lock.json ]; then \
	  echo "Installing the pinned Node test packages (npm ci)"; \
	  cd tests/client && npm ci --no-audit --no-fund --loglevel=error; \
	fi

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

test: build node-deps
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

demo: build node-deps
	@sh examples/demo.sh $(BUILD)

# The whole suite again under ASan+UBSan, in its own build tree (valgrind
# tests excluded: the two instrumentations do not mix).
check-hard:
	@$(MAKE) --no-print-directory test BUILD=build-asan BUILD_TYPE=Debug \
	  CMAKE_ARGS="-DTELESCOPE_SANITIZE=ON -DCMAKE_C_COMPILER=clang" \
	  CTEST_ARGS="-LE valgrind"

bench: build node-deps
	@sh tests/bench/run.sh $(BUILD)

format:
	@clang-format -i server/*.c server/*.h watcher/sim/*.c watcher/sim/*.h tests/unit/*.c

clean:
	rm -rf $(BUILD) build-asan
