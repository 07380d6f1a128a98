# aqsync — the two commands a fresh Debian machine needs:
#   make demo   install what is missing, build, and play the demo through JACK
#   make test   install what is missing, build, and run every test
SHELL := /bin/bash
SWIFT ?= swift
DEBS := jackd2 libjack-jackd2-dev jack-tools libsoxr-dev libsoundtouch-dev sox ffmpeg pkg-config libavcodec-dev libavutil-dev libmpg123-dev pipewire pipewire-jack pipewire-bin wireplumber dbus binutils librsvg2-bin gcc g++ libgme-dev tmux liblo-tools
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: transport-check loop-check deps build release test check-nolocks jack-reclaim demo fuzz clean bench bench-offline bench-check capacity-check

## Install the Debian packages the build and the tests need (only those missing).
deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

## Every test: unit tests, JACK integration tests (each starts its own private jackd),
## and the proof that the render path's @_noLocks checking is on. Tests that use JACK (their
## suite or module name says JACK) run one at a time: libjack is not safe with several
## servers and clients opening and closing in parallel in one process.
test: deps check-nolocks jack-reclaim
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip JACK
	$(SWIFT) test --skip-build --filter JACK --no-parallel

## libjack's server registry (/dev/shm/jack-shm-registry) has 8 slots for the whole machine; a
## jackd that died without its orderly shutdown (killed, or its test process killed) keeps its
## slot until a server of the same name registers again, and with 8 such slots no jackd starts
## ("Too many servers already active"). This starts and cleanly stops a server under each
## registered name that no running jackd has, which frees the slot.
jack-reclaim:
	@[ -e /dev/shm/jack-shm-registry ] || exit 0; \
	for entry in $$(strings /dev/shm/jack-shm-registry | sed -n 's/^jack-[0-9]*:\(.*\):$$/\1/p'); do \
	  pgrep -f -- "jackd.* -n $$entry( |$$)" >/dev/null && continue; \
	  echo "jack-reclaim: freeing the registry slot of dead server $$entry"; \
	  jackd --no-realtime -n "$$entry" -d dummy -r 48000 -p 256 >/dev/null 2>&1 & pid=$$!; \
	  for i in $$(seq 50); do JACK_DEFAULT_SERVER="$$entry" jack_lsp >/dev/null 2>&1 && break; sleep 0.1; done; \
	  kill -TERM $$pid 2>/dev/null; wait $$pid 2>/dev/null; \
	done; true

## The compiler must refuse an allocation under @_noLocks, and the render entry point must
## carry the attribute: otherwise nothing proves the render path is lock- and allocation-free.
check-nolocks:
	@grep -B3 'package func render(' Sources/AQCore/RenderCore+Render.swift | grep -q '@_noLocks' \
	  || { echo "check-nolocks: RenderCore.render lacks @_noLocks"; exit 1; }
	@grep -B3 'public func render(' Sources/AQCore/RenderTarget.swift | grep -q '@_noLocks' \
	  || { echo "check-nolocks: RenderTarget.render lacks @_noLocks"; exit 1; }
	@if $(SWIFT)c -parse-as-library -emit-sil -o /dev/null Tests/NoLocksProbe/MustNotCompile.swift >/dev/null 2>&1; then \
	  echo "check-nolocks: an allocation under @_noLocks compiled: the checker is off"; exit 1; \
	else echo "check-nolocks: the compiler refuses allocation under @_noLocks (as it must)"; fi

## The main job: the demo session (docs/examples/demo) through JACK, every track on its exact
## frame. Its audio is synthesized first (nothing is committed); aqsync starts a private JACK
## server when none is reachable and stops it on exit; --capture writes what was played.
DEMO := docs/examples/demo
demo: deps
	$(SWIFT) build -c release --product aqsync
	@.build/release/aqsync make-demo $(DEMO) >/dev/null
	.build/release/aqsync play $(DEMO)/session.toml --capture .build/demo-capture.wav
	@echo "what was played: .build/demo-capture.wav"

## The soak and the period-change battery (issue 21, docs/timing.md): by hand, not in CI's
## time. `make test` runs a 3-minute soak; these run the long ones.
SOAK_MINUTES ?= 30
BATTERY_RUNS ?= 20
.PHONY: soak battery
soak: deps
	$(SWIFT) build --build-tests
	AQSYNC_SOAK_MINUTES=$(SOAK_MINUTES) $(SWIFT) test --skip-build --filter SoakOnJACKTests
## The transport-follow tests alone, live and replayed, on jackd and PipeWire (docs/transport.md;
## `make test` runs them too).
transport-check: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --no-parallel --filter 'TransportFollow|JackTimebaseReplay'

## The live loop test with the issue's 100 passes of a 1.000 s loop (about 100 s; make test plays 3).
loop-check: deps
	$(SWIFT) build --build-tests
	AQSYNC_LOOP_PASSES=100 $(SWIFT) test --skip-build --no-parallel --filter loopLiveEqualsOfflineRender

battery: deps
	$(SWIFT) build --build-tests
	AQSYNC_BATTERY_RUNS=$(BATTERY_RUNS) $(SWIFT) test --skip-build --no-parallel --filter 'periodChangeBattery|quantumChangeBattery'

## Benchmarks (docs/benchmarking.md). The live bench starts a private jackd when none runs.
## (The allocation counter aqsync bench preloads is a library of its own: built beside it.)
bench: deps
	$(SWIFT) build -c release --product aqsync
	$(SWIFT) build -c release --product AQAllocCounter
	.build/release/aqsync bench

bench-offline:
	$(SWIFT) build -c release --product aqsync
	$(SWIFT) build -c release --product AQAllocCounter
	.build/release/aqsync bench --offline

## Fails when the render loop allocates (mallocCountTotal threshold 0) or the malloc counter
## is broken (the allocating control no longer counts), or when the capacity check fails.
bench-check:
	cd Benchmarks && $(SWIFT) package benchmark thresholds check --filter 'Allocations.*'
	$(MAKE) capacity-check

## Fails when 32 WAV or 32 MP3 tracks (3 s, P=256, private jackd) do not play live without a
## loss of aqsync's own, judged beside a plain C client on the same server (docs/benchmarking.md,
## "Capacity"). One trial per format (three when it fails), 12 to 40 s, on the debug build
## `make test` made.
capacity-check: jack-reclaim
	$(SWIFT) build --product aqsync
	.build/debug/aqsync bench --capacity --formats wav,mp3 --periods 256 --seconds 3 \
	  --capacity-start 32 --capacity-limit 32 --require 32

## Fuzz the file-stream parser with libFuzzer for FUZZ_SECONDS (default 60), seeded with the
## test fixtures. A crash leaves its input in .build-fuzz/artifacts/ and fails the target.
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -sanitize=fuzzer,address -parse-as-library -O
fuzz: deps
	@mkdir -p .build-fuzz/corpus .build-fuzz/artifacts
	$(SWIFT)c $(FUZZ_FLAGS) -wmo -module-name AQTypes -emit-module -emit-module-path .build-fuzz/AQTypes.swiftmodule \
	  -c Sources/AQTypes/*.swift -o .build-fuzz/AQTypes.o 2>&1 | grep -v "Cannot export local symbol" || true
	$(SWIFT)c $(FUZZ_FLAGS) -wmo -module-name AQFileStream -I .build-fuzz -emit-module \
	  -emit-module-path .build-fuzz/AQFileStream.swiftmodule -c Sources/AQFileStream/*.swift -o .build-fuzz/AQFileStream.o \
	  2>&1 | grep -v "Cannot export local symbol" || true
	$(SWIFT)c $(FUZZ_FLAGS) -I .build-fuzz Tests/Fuzz/FuzzFileStream.swift .build-fuzz/AQTypes.o .build-fuzz/AQFileStream.o \
	  -o .build-fuzz/fuzz-filestream 2>&1 | grep -v "Cannot export local symbol" || true
	AQFS_FUZZ_CORPUS=$$PWD/.build-fuzz/corpus $(SWIFT) test --filter AQFileStreamTests >/dev/null
	cd .build-fuzz && SWIFT_BACKTRACE=enable=no ./fuzz-filestream -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=16384 -timeout=10 -artifact_prefix=artifacts/ corpus

clean:
	rm -rf .build .build-*

## The C API (issue 12, docs/c-api.md): `make install PREFIX=DIR` (default ~/.local, writable
## without root) builds libAudioToolbox.so and puts the headers in DIR/include, the library in
## DIR/lib and DIR/lib/pkgconfig/AudioToolbox.pc. `make examples` builds the C tutorials in
## docs/examples/c against the installed library (into .build/c-examples).
PREFIX ?= $(HOME)/.local
CAPI_CONFIG ?= release
CAPI_HEADERS := Sources/CAudioToolbox/include
## The toolchain's Core Foundation (swift-corelibs-foundation): its headers (lib/swift/CoreFoundation)
## and libFoundation.so (lib/swift/linux), which exports it; programs get both through pkg-config.
SWIFT_LIB_DIR ?= $(shell d=$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")"); echo "$$(cd "$$d/../lib/swift" 2>/dev/null && pwd)")
.PHONY: install install-files examples
install: deps
	$(SWIFT) build -c $(CAPI_CONFIG) --product AudioToolbox
	$(MAKE) -s install-files PREFIX="$(PREFIX)" LIBDIR_SRC="$$($(SWIFT) build -c $(CAPI_CONFIG) --show-bin-path)"

## Copies what `install` built (LIBDIR_SRC holds libAudioToolbox.so); the C API tests use it
## on the library `swift build` made, so that the installed layout itself is what they test.
install-files:
	@[ -n "$(LIBDIR_SRC)" ] || { echo "install-files: LIBDIR_SRC is not set"; exit 1; }
	install -d "$(PREFIX)/include" "$(PREFIX)/lib/pkgconfig"
	cp -R $(CAPI_HEADERS)/AudioToolbox $(CAPI_HEADERS)/CoreAudio $(CAPI_HEADERS)/CoreAudioTypes \
	  $(CAPI_HEADERS)/CoreFoundation $(CAPI_HEADERS)/MacTypes.h $(CAPI_HEADERS)/AQSyncEnum.h $(CAPI_HEADERS)/TargetConditionals.h "$(PREFIX)/include/"
	install -m 644 Sources/CAudioToolbox/modulemaps/AudioToolbox.modulemap "$(PREFIX)/include/AudioToolbox/module.modulemap"
	install -m 644 Sources/CAudioToolbox/modulemaps/CoreAudio.modulemap "$(PREFIX)/include/CoreAudio/module.modulemap"
	install -m 755 "$(LIBDIR_SRC)/libAudioToolbox.so" "$(PREFIX)/lib/libAudioToolbox.so"
	@[ -f "$(SWIFT_LIB_DIR)/CoreFoundation/CoreFoundation.h" ] || { echo "install-files: no Core Foundation headers in '$(SWIFT_LIB_DIR)' (set SWIFT_LIB_DIR to the toolchain's usr/lib/swift)"; exit 1; }
	printf '%s\n' "prefix=$(PREFIX)" 'includedir=$${prefix}/include' 'libdir=$${prefix}/lib' \
	  "cfincludedir=$(SWIFT_LIB_DIR)" "cflibdir=$(SWIFT_LIB_DIR)/linux" '' \
	  'Name: AudioToolbox' 'Description: Audio Queue Services and Audio File Stream Services on JACK (aqsync), on the toolchain'"'"'s Core Foundation' \
	  'Version: 0.1' 'Cflags: -I$${includedir} -isystem $${cfincludedir}' \
	  'Libs: -L$${libdir} -lAudioToolbox -Wl,-rpath,$${libdir} -L$${cflibdir} -lFoundation -ldispatch -lBlocksRuntime -Wl,-rpath,$${cflibdir} -lm' \
	  > "$(PREFIX)/lib/pkgconfig/AudioToolbox.pc"
	@echo "installed the C API in $(PREFIX) (PKG_CONFIG_PATH=$(PREFIX)/lib/pkgconfig)"

examples:
	@mkdir -p .build/c-examples
	for f in docs/examples/c/*.c; do \
	  PKG_CONFIG_PATH="$(PREFIX)/lib/pkgconfig:$$PKG_CONFIG_PATH" cc -Wall -Wextra -o .build/c-examples/$$(basename $$f .c) $$f \
	    $$(PKG_CONFIG_PATH="$(PREFIX)/lib/pkgconfig:$$PKG_CONFIG_PATH" pkg-config --cflags --libs AudioToolbox) -lm || exit 1; \
	done
	@echo "built: $$(ls .build/c-examples)"
