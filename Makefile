# trowel — the README's two commands:
#   make run    install what is missing, build, make samples, run trowel on them
#   make test   install what is missing, build, run every test
# Other targets: make (build only), sanitize, valgrind, fuzz, fuzz-long, bench, archcheck, install, clean.

BUILD      ?= build
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
FUZZ_SECONDS ?= 20
FUZZ_LONG_SECONDS ?= 600
FUZZ_JOBS ?= 1

.PHONY: all build run test sanitize valgrind fuzz fuzz-long fuzz-build bench install clean archcheck deps-build deps-test deps-ci

all: build

deps-build:
	@scripts/deps.sh build
deps-test:
	@scripts/deps.sh test
deps-ci:
	@scripts/deps.sh ci

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_ARGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j$(JOBS)

run: deps-test
	@$(MAKE) --no-print-directory build
	scripts/run-samples.sh $(BUILD)

test: deps-test
	@$(MAKE) --no-print-directory build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

# The whole suite again, built with AddressSanitizer and UBSan.
sanitize: deps-ci
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTROWEL_SANITIZE=ON
	cmake --build build-asan -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j$(JOBS)

# Every unit test under valgrind's memcheck.
valgrind: deps-ci
	@$(MAKE) --no-print-directory build
	scripts/valgrind-tests.sh $(BUILD)

# Every libFuzzer target, FUZZ_SECONDS each, from its seed corpus.
fuzz: fuzz-build
	scripts/fuzz-smoke.sh build-fuzz $(FUZZ_SECONDS)

# The nightly campaign: every target FUZZ_LONG_SECONDS (600) each, FUZZ_JOBS
# (1) at a time, keeping what it finds (docs/FUZZING.md).
fuzz-long: fuzz-build
	JOBS=$(FUZZ_JOBS) scripts/fuzz-long.sh build-fuzz $(FUZZ_LONG_SECONDS)

fuzz-build: deps-ci
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTROWEL_FUZZ=ON -DTROWEL_TESTS=OFF
	cmake --build build-fuzz -j$(JOBS)

# Issue 21's shape checks (layers, seams, symbols); see docs/plan-architecture.md.
archcheck:
	@$(MAKE) --no-print-directory build
	scripts/check-architecture.sh . $(BUILD)

# Every benchmark, side by side with its peer tool; figures in docs/PERFORMANCE.md.
bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory build
	bench/bench_szdd.sh $(BUILD)
	bench/bench_cine.sh $(BUILD)
	bench/bench_vsif.sh $(BUILD)
	bench/bench_codecs.sh $(BUILD)
	bench/bench_trespasser.sh $(BUILD)
	bench/bench_scumm.sh $(BUILD)
	bench/bench_vpp.sh $(BUILD)
	bench/bench_asm.sh $(BUILD)
	bench/bench_mount.sh $(BUILD)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan build-fuzz
