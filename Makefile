# The two commands of the README. Each does its own set-up on a fresh Debian 12.
BUILD ?= build
JOBS ?= $(shell nproc)
# The shared library by default, so the tests check its SONAME and exports; SHARED=OFF for static.
SHARED ?= ON

.PHONY: demo test build setup clean

setup:
	@scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=$(SHARED) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: Llama-3-8B-shaped decode and prefill on the default device.
demo: build
	$(BUILD)/vkattn demo

# Every test on the default device with the Khronos validation layer on.
test: build
	cd $(BUILD) && VKATTN_VALIDATION=1 ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
