# The two commands of the README. Each does its own set-up on a fresh Debian 12.
BUILD ?= build
SANITIZE_BUILD ?= build-sanitize
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 25
JOBS ?= $(shell nproc)
# The shared library by default, so the tests check its SONAME and exports; SHARED=OFF for static.
SHARED ?= ON
# Unity builds (eight sources per compiler run) parse the heavy headers (CLI11,
# fmt, nlohmann/json, gtest) once per batch instead of once per source: the
# three builds of CI take about a third of the compile time (docs/reliability.md,
# "Time in CI"). UNITY=OFF builds one source at a time, as a plain cmake build does.
UNITY ?= ON

.PHONY: demo test build setup clean sanitize fuzz

setup:
	@scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=$(SHARED) -DCMAKE_UNITY_BUILD=$(UNITY) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: Llama-3-8B-shaped decode and prefill on the default device.
demo: build
	$(BUILD)/vkattn demo

# Every test on the default device with the Khronos validation layer on.
test: build
	cd $(BUILD) && VKATTN_VALIDATION=1 ctest --output-on-failure -j $(JOBS)

# The library, CLI and unit tests under AddressSanitizer (with LeakSanitizer)
# and UndefinedBehaviorSanitizer; the oracle grids (Grid/*) stay on `make test`.
sanitize: setup
	@cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKATTN_SANITIZE=ON -DVKATTN_INSTALL=OFF -DVKATTN_BUILD_PYTHON=OFF -DCMAKE_UNITY_BUILD=$(UNITY) >/dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	cd $(SANITIZE_BUILD) && VKATTN_VALIDATION=1 \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --output-on-failure -j $(JOBS) -E '^Grid/'

# Every libFuzzer harness (clang, ASan+UBSan) for FUZZ_SECONDS on the committed corpus.
fuzz: setup
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKATTN_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_UNITY_BUILD=$(UNITY) >/dev/null
	@cmake --build $(FUZZ_BUILD) --target fuzzers -j $(JOBS)
	scripts/run-fuzzers.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD) $(FUZZ_BUILD)
