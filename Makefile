# tlsmatrix: `make report` measures, `make test` checks. Both install what they need first.

SHELL := /bin/bash
CARGO ?= cargo
GO ?= go
# The timed suite's samples per figure and passes (see `tlsmatrix run --help`): 40 in 8 passes
# of 5 rounds. 60 in 12 took half again as long with 14 stacks; half of a pass's time is the
# warm-up every cell of a new process needs, so passes cost as much as samples.
RUNS ?= 40
PASSES ?= 8
# A group of the timed suite stops before PASSES once each factor's 95% interval is within
# ±UNTIL_WITHIN percent, after MIN_PASSES passes (`tlsmatrix run --until-within`); empty: every
# group takes every pass.
UNTIL_WITHIN ?= 2.5
MIN_PASSES ?= 4
SETTLE = $(if $(UNTIL_WITHIN),--until-within $(UNTIL_WITHIN) --min-passes $(MIN_PASSES))
# Timed groups sampled at once, each in its own process on its own core (tlsmatrix run --lanes):
# two where there are two cores. A factor's sides share one process either way; two lanes
# halve the timed stages, and `make repeatability` checks the factors hold with them.
LANES ?= $(shell [ "$$(nproc)" -gt 1 ] && echo 2 || echo 1)
OUT ?= results/latest.jsonl
DB ?= results/tlsmatrix.db
REPORT ?= report
# What post-quantum costs each stack: the default suite's post-quantum handshakes, each impl
# with itself, paired round by round with the same impl on the classical twin (`tlsmatrix
# run --pairs twins`): 20 samples in 4 passes.
PQ_RUNS ?= 20
PQ_PASSES ?= 4
# Instruction counts (callgrind) for a few scenarios, reported beside the timings.
# The two post-quantum handshakes beside their classical twin (the first): what ML-DSA-44 and
# X25519MLKEM768 cost each stack in instructions (about 60 s more, once; the stage is reused).
INSTR_SCENARIOS ?= handshake-tls13-ecdsa-p256-x25519-full,handshake-tls13-rsa-2048-x25519-full,bulk-tls13-aes-128-gcm-16k,handshake-tls13-mldsa44-x25519-full,handshake-tls13-ecdsa-p256-x25519mlkem768-full
# Counts repeat within 0.1%, an RSA server's within about 0.15% (make test checks three
# samples of OpenSSL's), so one sample a cell is the figure; a second doubled the stage.
INSTR_RUNS ?= 1
# The published tables the report sets beside ours (`tlsmatrix run --plan NAME`): rustls's
# report of 2026-03-07 and seeds/002, each configuration repeated here: 20 samples in 4 passes.
# Set against published factors with a 15% tolerance, they need less than the main suite's
# intervals; with the default 12 passes, a pass's warm-ups cost more than its samples.
PLAN_RUNS ?= 20
PLAN_PASSES ?= 4
# Heap per connection (allocator counts), with 100 to 1,000 connections alive. Counts repeat:
# two samples a cell agreed within 0.002% (median over 580 figures; at most 1.8%, NSS with
# 100 connections), so one sample is the figure and a second only doubled the stage.
# ML-DSA-44 beside ECDSA P-256: what a post-quantum certificate costs each connection kept.
MEMORY_SCENARIOS ?= memory-tls13-ecdsa-p256-n100,memory-tls13-ecdsa-p256-n1000,memory-tls12-ecdsa-p256-n1000,memory-tls13-rsa-2048-n1000,memory-tls13-mldsa44-n1000
MEMORY_RUNS ?= 1
# Handshakes per second with one thread and with one per core: THROUGHPUT_RUNS windows of
# THROUGHPUT_MS each per cell.
THROUGHPUT_SCENARIOS ?= throughput-tls13-ecdsa-p256-1core,throughput-tls13-ecdsa-p256-allcores
THROUGHPUT_RUNS ?= 4
THROUGHPUT_MS ?= 250
# Wire figures (bytes, flights, round trips) for the configurations that differ on a network,
# then real connections through the delay proxy at PROXY_RTTS milliseconds against the model.
# Empty: the wire suite tlsmatrix defines (Scenario::wire_suite); name ids to measure others.
WIRE_SCENARIOS ?=
WIRE_RUNS ?= 20
PROXY_RTTS ?= 0.2,30
# What explains the bulk figures: each library's own AEAD on the same records (the ceiling),
# page faults, context switches and cold blocks of the same transfers (every impl on every
# allocator, each with itself), and the baseline and one OpenSSL timed on each allocator, and
# ring and that OpenSSL built by clang (each with itself, in duet with the baseline).
BULK_SCENARIOS ?= bulk-tls12-*-16k,bulk-tls13-aes-*-16k
# Ceilings also in 1 KiB writes: which stack is faster can flip with the record size, and the
# report checks whether the AEADs alone flip with it. (Counters stay at 16 KiB: in 1 KiB they
# took 21 s more over every allocator variant, and the profile's kernel share shows faults.)
CEILING_SCENARIOS ?= $(BULK_SCENARIOS),bulk-tls13-aes-128-gcm-1k
CAUSE_RUNS ?= 3
# Where each side's time goes (perf, each impl with itself, LANES cells at once): in bulk
# the cipher, copies, malloc, the kernel or the rest, at the two AES-128-GCM write sizes; in
# the lead handshake, the parts above the crypto floor (X.509, the state machine, allocation,
# locks, ...), which the report sets on the floor run's handshakes. One sample a cell (200 ms
# in bulk, 900 ms on a handshake): most of a cell's time is fixed (the driver, perf attaching
# and naming its samples). About 35 s in two lanes (65 s one cell at a time); three samples a
# cell took 96 s alone, and the handshake's post-quantum twin too 127 s.
PROFILE_SCENARIOS ?= bulk-tls13-aes-128-gcm-16k,bulk-tls13-aes-128-gcm-1k,handshake-tls13-ecdsa-p256-x25519-full
PROFILE_RUNS ?= 1
# What a connection costs beside its handshake: each side's context (chain and key loaded) and
# connection object, made and freed, each impl with itself (`tlsmatrix run --measure setup`).
SETUP_SCENARIOS ?= handshake-tls13-ecdsa-p256-x25519-full,handshake-tls13-rsa-2048-x25519-full
# Each system library beside its rebuild with symbols (make companions): instruction counts
# of both in one run (reused while nothing changed), and a profile of both on the lead handshake.
COMPANION_SCENARIOS ?= handshake-tls13-ecdsa-p256-x25519-full,handshake-tls13-rsa-2048-x25519-full
COMPANION_PROFILE_SCENARIOS ?= handshake-tls13-ecdsa-p256-x25519-full
SETUP_RUNS ?= 5
# What ending a connection costs each side after a full handshake: close_notify each way and
# the connection freed, each impl with itself (`tlsmatrix run --measure teardown`).
TEARDOWN_RUNS ?= 5
# Each handshake of the default suite against its crypto floor: the library's own primitives
# for exactly the operations each side must perform, timed in turns with the handshake, each
# impl with itself (`tlsmatrix run --measure floor`); about 75 s over the 15 default impls.
FLOOR_RUNS ?= 5
# One server context shared by 1, 2 and 8 threads (`tlsmatrix run --measure contention`):
# the rate, its scaling and blocking waits per handshake, each impl with itself, alone on the
# machine: CONTENTION_RUNS samples of three windows of CONTENTION_MS; about 55 s.
CONTENTION_RUNS ?= 3
CONTENTION_MS ?= 300
# Each QUIC stack's handshake in turns with its own library's TLS-over-TCP handshake, on the
# QUIC suite (`tlsmatrix run --measure quic`): CPU per side, the paired factor and the
# datagrams, each impl with itself; impls with no QUIC stack are refused before any driver
# starts.
QUIC_RUNS ?= 6
# Stream data over each QUIC stack in turns with its own library's TLS bulk over TCP
# (`tlsmatrix run --measure quic-bulk`): 1 MiB and 16 MiB each way on a new connection.
QUIC_BULK_RUNS ?= 6
# Heap per live QUIC connection beside the same library's TCP connections, 100 and 1,000
# alive (`tlsmatrix run --measure quic-memory`): heap counts, a counted stage; about 80 s.
QUIC_MEMORY_RUNS ?= 2
# Each side's QUIC handshake counted by callgrind beside the same library's TCP handshake
# (`tlsmatrix run --measure quic-instructions`), split by class: about 60 s, alone on the
# machine (a QUIC stack's timers read a clock callgrind slows, and a loaded machine slows it
# more: a batch a timer added a datagram to is counted again); reused while nothing changes.
QUIC_INSTR_RUNS ?= 2
# Each QUIC stack over loopback UDP through the UDP delay proxy (`tlsmatrix wire --check
# --quic`): time to first byte at 20 and 100 ms against the model, a 1 MiB download at 50 ms
# against slow start; connections per row after a warm-up one. About a minute, mostly waiting.
QUIC_PROXY_RUNS ?= 3
VARIANT_IMPLS ?= rustls-aws-lc,rustls-aws-lc+jemalloc,rustls-aws-lc+mimalloc,openssl-3.6,openssl-3.6+jemalloc,openssl-3.6+mimalloc,openssl-3.6+clang,rustls-ring,rustls-ring+clang
VARIANT_SCENARIOS ?= bulk-tls13-aes-128-gcm-16k,bulk-tls12-aes-128-gcm-16k,handshake-tls13-ecdsa-p256-x25519-full,handshake-tls12-ecdsa-p256-x25519-full
VARIANT_RUNS ?= 12
VARIANT_PASSES ?= 4
BIN := target/release
# The Go module is pure Go by default; the project's own binaries and tests build the transport's
# OpenSSL backend in (cgo, libssl-dev), and `make go-test` checks the pure build apart.
GO_TAGS := -tags openssl

.PHONY: all setup build build-workspace build-go build-stacks build-compilers companions report run test test-compilers go-test fuzz-go lint bench bench-go clean driver-boringssl aws-lc-lib driver-aws-lc driver-wolfssl driver-mbedtls openssl-lib-clang driver-openssl-clang repeatability profile-go conformance drift weather aead-sizes nss-primitives timings-begin

all: build

setup:
	@scripts/setup

# Each step prints one line (what, whether it had to be built, how long); its whole output is
# in target/logs/<step>.log, and a failed step prints that log's end. VERBOSE=1 shows it all.
STEP := scripts/step
STAGE := scripts/stage

# Everything, in three parts that `make report` takes apart: the workspace (and the stacks it
# holds), the stacks with builds of their own, and the compiler axis.
build: build-stacks build-compilers

# The Rust workspace: tlsmatrix itself and the stacks that need no build of their own
# (rustls, the system OpenSSL, s2n-tls, GnuTLS, NSS).
build-workspace: setup
	@echo "building (logs in target/logs/):"
	@# --timings: target/cargo-timings/ says which crates held a first build up.
	@$(STEP) rust-workspace $(CARGO) build --release --locked --workspace --timings

# The Go binaries: Go's crypto/tls driver and the interop and libp2p peers. `make report`
# builds them after its first look (46 s on a new machine, which the first look would wait).
build-go: setup
	@$(STEP) go-binaries sh -c 'cd go && $(GO) build $(GO_TAGS) -o ../$(BIN)/ ./cmd/tlsmatrix-go-peer ./cmd/tlsmatrix-go-libp2p-peer ./cmd/tlsmatrix-driver-go'

# The stacks built from sources of their own (the OpenSSL releases, BoringSSL, AWS-LC), the
# system's wolfSSL and Mbed TLS, BoGo's runner and the Go transport's libssl builds.
build-stacks: build-workspace build-go
	@for v in $(OPENSSL_RELEASES); do $(MAKE) --no-print-directory driver-openssl-$$v || exit $$?; done
	@$(MAKE) --no-print-directory driver-boringssl driver-aws-lc driver-wolfssl driver-mbedtls
	@# BoGo's runner (Go, from the boring-sys sources), here and not in the conformance stage:
	@# make report's reused stages are keyed on a fingerprint of every binary, the runner's too.
	@$(STEP) bogo-runner $(BIN)/tlsmatrix conformance --build-runner
	@for v in $(filter-out $(OPENSSL_RELEASES) boringssl aws-lc,$(GO_LIBSSL)); do \
	  $(MAKE) --no-print-directory openssl-lib-$$v || exit $$?; done
	@$(MAKE) --no-print-directory companions

# The stripped system libraries rebuilt with their symbols from Debian's source packages of the
# installed versions (scripts/companion), which only explain the system's builds: `tlsmatrix
# list` shows each as IMPL+symbols. make report takes OpenSSL 3.0's (about 1.4 min on a new
# machine, then from ~/.cache/tlsmatrix); wolfSSL's (about 1.4 min more) is there for asking,
# COMPANIONS="openssl-3.0 wolfssl", and make test builds both. A system version the script has
# no source for is left out.
COMPANIONS ?= openssl-3.0
companions:
	@for c in $(COMPANIONS); do \
	  $(STEP) companion-$$c scripts/companion $$c $(BIN)/companions/$$c \
	    || { s=$$?; [ $$s -eq 3 ] || exit $$s; rm -rf $(BIN)/companions/$$c; }; done

# The compiler axis (below): only the variants stage runs it, and `make report` does not build
# it (it follows the first answer: `make build-compilers`, or `make build`, then `make
# report`); the counted stages' fingerprint leaves it out (scripts/fingerprint).
build-compilers: build-workspace
	@$(MAKE) --no-print-directory driver-openssl-clang

# A driver's first build takes the crates.io units the workspace has built (jemalloc,
# mimalloc, aws-lc-sys, ring: about 3 minutes of each first driver build on a new machine) from
# its target folder instead of compiling them again (scripts/seed-units).
# $(call seed_units,TARGET-FOLDER,MANIFEST)
seed_units = CARGO=$(CARGO) scripts/seed-units $(1) $(CURDIR)/target $(2)

# Where the drivers outside the main workspace are compiled: a folder of the machine's, not
# the clone's, so a second clone compiles only tlsmatrix's own crates and reuses BoringSSL,
# AWS-LC, aws-lc-sys and ring as built (about 11 of the 20 minutes a first build takes).
# Each clone keeps its own binaries: they are copied into $(BIN) as each is built.
# DRIVER_TARGETS=target keeps them in the clone.
DRIVER_TARGETS ?= $(HOME)/.cache/tlsmatrix/cargo-targets
export TLSMATRIX_DRIVER_TARGETS := $(DRIVER_TARGETS)

# OpenSSL releases beside the system's, each built from the openssl-src crate's sources
# (a few minutes, once) and linked statically into a driver of its own. 3.5 is the LTS that
# brought ML-KEM and ML-DSA to TLS; its libraries are built for the Go transport anyway.
OPENSSL_RELEASES ?= 1.1.1 3.5 3.6 4.0
# openssl-sys reads its variables in a target-prefixed form too, and aws-lc-sys (under
# rustls-aws-lc, in the same graph) watches only the plain OPENSSL_DIR: with the prefixed form,
# a release's folder seeded from another's (scripts/seed-target) rebuilds only openssl-sys and
# the crates above it, about 12 s, not aws-lc with them, about 2.5 min.
OPENSSL_ENV = $(shell rustc -vV | sed -n 's/host: //p' | tr a-z- A-Z_)_OPENSSL
driver-openssl-%: openssl-lib-%
	@scripts/seed-target $(DRIVER_TARGETS)/driver-openssl-$* $(OPENSSL_RELEASES:%=$(DRIVER_TARGETS)/driver-openssl-%)
	@$(call seed_units,$(DRIVER_TARGETS)/driver-openssl-$*,libssl-drivers/openssl/Cargo.toml)
	@$(OPENSSL_ENV)_DIR=$(CURDIR)/target/openssl/$* $(OPENSSL_ENV)_STATIC=1 $(STEP) driver-openssl-$* \
	  $(CARGO) build --release --locked \
	  --manifest-path libssl-drivers/openssl/Cargo.toml --target-dir $(DRIVER_TARGETS)/driver-openssl-$*
	@cp $(DRIVER_TARGETS)/driver-openssl-$*/release/tlsmatrix-driver-openssl $(BIN)/tlsmatrix-driver-openssl-$*

# One release's static libraries under target/openssl/RELEASE, built once.
openssl-lib-%:
	@CARGO_MAKEFLAGS=-j$$(nproc) $(STEP) openssl-lib-$* $(BIN)/tlsmatrix-openssl-build $* target/openssl/$*
# OpenSSL 3.5, the LTS distributions ship, for the Go transport (GO_LIBSSL=3.5): openssl-src
# 300.5 cannot share a lock file with 300.6, so its builder is a workspace of its own.
openssl-lib-3.5:
	@$(STEP) openssl-builder-lts $(CARGO) build --release --locked \
	  --manifest-path crates/openssl-build/lts/Cargo.toml --target-dir target/openssl-build-lts
	@CARGO_MAKEFLAGS=-j$$(nproc) $(STEP) openssl-lib-3.5 \
	  target/openssl-build-lts/release/tlsmatrix-openssl-build-lts 3.5 target/openssl/3.5

# The compiler axis: OpenSSL CLANG_OPENSSL and the rustls adapters beside it (aws-lc-rs and
# ring) with their C code compiled by clang instead of gcc, as impls of their own
# (`openssl-3.6+clang`, `rustls-aws-lc+clang`, `rustls-ring+clang`). About 5 minutes, once.
CLANG_OPENSSL ?= 3.6
CLANG := CC=clang CXX=clang++
openssl-lib-clang:
	@$(CLANG) CARGO_MAKEFLAGS=-j$$(nproc) $(STEP) openssl-lib-$(CLANG_OPENSSL)-clang \
	  $(BIN)/tlsmatrix-openssl-build $(CLANG_OPENSSL) target/openssl/$(CLANG_OPENSSL)-clang
driver-openssl-clang: openssl-lib-clang
	@$(CLANG) $(OPENSSL_ENV)_DIR=$(CURDIR)/target/openssl/$(CLANG_OPENSSL)-clang $(OPENSSL_ENV)_STATIC=1 \
	  $(STEP) driver-openssl-$(CLANG_OPENSSL)-clang \
	  $(CARGO) build --release --locked --manifest-path libssl-drivers/openssl/Cargo.toml \
	  --target-dir $(DRIVER_TARGETS)/driver-openssl-$(CLANG_OPENSSL)-clang
	@cp $(DRIVER_TARGETS)/driver-openssl-$(CLANG_OPENSSL)-clang/release/tlsmatrix-driver-openssl \
	  $(BIN)/tlsmatrix-driver-openssl-$(CLANG_OPENSSL)-clang

# The drivers of libssl-drivers/{boringssl,aws-lc,wolfssl,mbedtls} share one target folder: their
# common crates (aws-lc-sys for rustls-aws-lc, ring, rustls, clap, ...) are built once, not
# three times, which saves minutes on a fresh machine. (The OpenSSL releases' drivers keep one
# each, seeded from the first: sharing one, each build would undo the last one's openssl-sys.)
DRIVERS_TARGET := $(DRIVER_TARGETS)/libssl-drivers

# BoringSSL, built by the boring-sys crate from the sources it ships (cmake, bindgen).
driver-boringssl:
	@$(call seed_units,$(DRIVERS_TARGET),libssl-drivers/boringssl/Cargo.toml)
	@$(STEP) driver-boringssl $(CARGO) build --release --locked \
	  --manifest-path libssl-drivers/boringssl/Cargo.toml --target-dir $(DRIVERS_TARGET)
	@cp $(DRIVERS_TARGET)/release/tlsmatrix-driver-boringssl $(BIN)/tlsmatrix-driver-boringssl

# AWS-LC's libssl, built from the sources of the aws-lc-sys release rustls-aws-lc runs
# (scripts/aws-lc-build, about 40 s, once) into target/aws-lc, and linked statically into a
# driver of its own; openssl-sys reads it through OPENSSL_DIR as for the OpenSSL releases.
AWS_LC_DIR := $(CURDIR)/target/aws-lc
aws-lc-lib:
	@$(STEP) aws-lc-lib scripts/aws-lc-build $(AWS_LC_DIR)
driver-aws-lc: aws-lc-lib
	@$(call seed_units,$(DRIVERS_TARGET),libssl-drivers/aws-lc/Cargo.toml)
	@$(OPENSSL_ENV)_DIR=$(AWS_LC_DIR) $(OPENSSL_ENV)_STATIC=1 $(STEP) driver-aws-lc $(CARGO) build --release --locked \
	  --manifest-path libssl-drivers/aws-lc/Cargo.toml --target-dir $(DRIVERS_TARGET)
	@cp $(DRIVERS_TARGET)/release/tlsmatrix-driver-aws-lc $(BIN)/tlsmatrix-driver-aws-lc

# wolfSSL, the system's (libwolfssl-dev), GPL-2.0-or-later: linked into this binary only.
driver-wolfssl:
	@$(call seed_units,$(DRIVERS_TARGET),libssl-drivers/wolfssl/Cargo.toml)
	@$(STEP) driver-wolfssl $(CARGO) build --release --locked \
	  --manifest-path libssl-drivers/wolfssl/Cargo.toml --target-dir $(DRIVERS_TARGET)
	@cp $(DRIVERS_TARGET)/release/tlsmatrix-driver-wolfssl $(BIN)/tlsmatrix-driver-wolfssl

# Mbed TLS 3.6 LTS, built from the sources a crate ships (scripts/mbedtls-build, about 15 s,
# once) into target/mbedtls, and linked statically into a driver of its own.
MBEDTLS_DIR := $(CURDIR)/target/mbedtls
mbedtls-lib:
	@$(STEP) mbedtls-lib scripts/mbedtls-build $(MBEDTLS_DIR)
driver-mbedtls: mbedtls-lib
	@$(call seed_units,$(DRIVERS_TARGET),libssl-drivers/mbedtls/Cargo.toml)
	@TLSMATRIX_MBEDTLS_DIR=$(MBEDTLS_DIR) $(STEP) driver-mbedtls $(CARGO) build --release --locked \
	  --manifest-path libssl-drivers/mbedtls/Cargo.toml --target-dir $(DRIVERS_TARGET)
	@cp $(DRIVERS_TARGET)/release/tlsmatrix-driver-mbedtls $(BIN)/tlsmatrix-driver-mbedtls

# The main job, in the order a new machine can answer soonest:
#  1. the workspace builds (tlsmatrix and the stacks it holds), and, while the stacks with
#     builds of their own are still to build, a first look: the default suite over the stacks
#     built so far in the lead scenarios (FIRST_SCENARIOS), FIRST_RUNS samples each
#     (results/first-look.jsonl; its own database, not the report's), on screen within minutes,
#     and how long the rest will take here (`tlsmatrix estimate`: a new machine's whole run
#     in scripts/reference-timings.tsv, scaled by this machine's workspace build);
#  2. the Go binaries and the other stacks build (Go's crypto/tls is in the first look only
#     where an earlier build left its driver);
#  3. the counted stages, which count and check rather than time (instruction counts, heap
#     bytes, the interop matrix over TCP, BoGo's quick subset or, with CONFORMANCE=full, its
#     whole suite, testssl.sh's outside scan), run in two lanes beside each other once the builds are done (beside a build
#     they only share the two cores' time with it); each is reused while the binaries,
#     packages, CPU and its command line are those of its last passing run (scripts/stage
#     --reuse; REUSE=0 takes them again);
#  4. the timed stages, alone on the machine, one after another: the default suite over
#     every built impl (RUNS samples per figure at most: a group stops once its factors'
#     intervals are within UNTIL_WITHIN, see `tlsmatrix run --help`), each post-quantum
#     handshake beside its classical twin (results/post-quantum.jsonl, `--pairs twins`),
#     the two published reports repeated (--plan rustls-report, seed-002), one-core and
#     all-core throughput, wire figures, the bulk causes (ceilings, counters, profiles,
#     variants: the compiler axis only where `make build-compilers` or `make build` built
#     it, else the environment section says it was left out), setup costs, crypto floors,
#     contention, the proxy check and the Go transport's paired benchmarks (`make bench-go`);
#  5. $(REPORT)/ (index.html, report.md, results.csv) and a screenshot of it.
# Everything goes to $(DB). Cells that fail are listed in the report and make this exit 1.
# Each step's time, start and outcome go to results/timings.tsv (scripts/step,
# scripts/stage), which the report's environment section shows with what ran beside what.
report: export TLSMATRIX_TIMINGS := $(CURDIR)/results/timings.tsv
report: timings-begin build-workspace
	@# The counted stages' files are kept: scripts/stage --reuse removes them when it runs one again.
	@rm -f $(OUT) results/published.jsonl results/post-quantum.jsonl results/throughput.jsonl \
	  results/wire.jsonl results/proxy-check.json results/quic-proxy-check.json results/ceiling.jsonl results/counters.jsonl results/profile.jsonl results/allocators.jsonl results/setup.jsonl results/teardown.jsonl results/floor.jsonl results/contention.jsonl results/quic.jsonl results/quic-bulk.jsonl results/companion-profile.jsonl \
	  results/first-look.jsonl results/first-look.db
	@if [ "$(FIRST_LOOK)" = 1 ] || { [ "$(FIRST_LOOK)" = auto ] && ! $(STACKS_BUILT); }; then \
	  echo "first look: the lead scenarios over the stacks built so far, $(FIRST_RUNS) samples a figure in $(FIRST_PASSES) passes"; \
	  echo "(wide intervals; the report's figures come from the full run below), before the other stacks build"; \
	  $(STAGE) first-look $(BIN)/tlsmatrix run --scenario '$(FIRST_SCENARIOS)' --runs $(FIRST_RUNS) --passes $(FIRST_PASSES) --lanes $(LANES) \
	    --out results/first-look.jsonl --db results/first-look.db \
	    || { s=$$?; [ $$s -eq 1 ] || exit $$s; echo "first look: a cell failed (above); the full run takes it again"; }; \
	  $(BIN)/tlsmatrix estimate --reference $(REFERENCE_TIMINGS) || echo "(no estimate of the rest: above)"; \
	fi
	@$(MAKE) --no-print-directory build-stacks
	@# The Go benchmarks' binaries, one per libssl: compiled here with the other builds (not in
	@# build-stacks, which make test shares and whose smoke run needs two of them), so that the
	@# go-benchmarks stage finds them in Go's cache and no compiler runs beside its samples (a
	@# new machine's stage took 78 s with them compiled in it, 52 s without).
	@$(STEP) go-bench-binaries scripts/bench-go build $(GO_LIBSSL)
	@# After a first look, the rest again: the builds just taken say more of this host's speed
	@# (a shared host drifts) than the workspace build the first estimate was scaled by.
	@if grep -q '^first-look	' "$$TLSMATRIX_TIMINGS"; then \
	  $(BIN)/tlsmatrix estimate --reference $(REFERENCE_TIMINGS) || echo "(no estimate of the rest: above)"; fi
	@# The counted stages on COUNTED_WORKERS workers, each taking the next stage as it frees up,
	@# longest first (COUNTED_STAGES): no core stands idle while a stage is left, whatever the
	@# day's weather makes each one take.
	@status=0; \
	$(if $(CONFORMANCE_ARGS),$(STAGE) --left-out "BoGo's full suite" "this run took its quick subset ($(QUICK_BOGO)); make report CONFORMANCE=full takes every test (about 9 min of a new machine's two cores, once: reused while the binaries stay)";) \
	echo "counted stages, $(COUNTED_WORKERS) at a time, each worker taking the next as it frees up:"; \
	scripts/lanes $(COUNTED_WORKERS) $(COUNTED_STAGES) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	echo "timed stages, alone on the machine:"; \
	$(STAGE) timed-suite $(BIN)/tlsmatrix run --runs $(RUNS) --passes $(PASSES) $(SETTLE) --lanes $(LANES) --out $(OUT) --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) post-quantum $(BIN)/tlsmatrix run --pairs twins --runs $(PQ_RUNS) --passes $(PQ_PASSES) --lanes $(LANES) \
	  --out results/post-quantum.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) published $(BIN)/tlsmatrix run --plan rustls-report --runs $(PLAN_RUNS) --passes $(PLAN_PASSES) --lanes $(LANES) \
	  --out results/published.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) published-seed $(BIN)/tlsmatrix run --plan seed-002 --runs $(PLAN_RUNS) --passes $(PLAN_PASSES) --lanes $(LANES) \
	  --out results/published.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) throughput $(BIN)/tlsmatrix run --scenario '$(THROUGHPUT_SCENARIOS)' --runs $(THROUGHPUT_RUNS) --sample-ms $(THROUGHPUT_MS) --lanes $(LANES) --pairs baseline \
	  --out results/throughput.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) wire $(BIN)/tlsmatrix run --measure wire $(if $(WIRE_SCENARIOS),--scenario '$(WIRE_SCENARIOS)') --runs $(WIRE_RUNS) --warmup-ms 50 --pairs baseline \
	  --out results/wire.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) ceilings $(BIN)/tlsmatrix run --measure ceiling --scenario '$(CEILING_SCENARIOS)' --runs $(CAUSE_RUNS) --sample-ms 50 --lanes $(LANES) \
	  --out results/ceiling.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) counters $(BIN)/tlsmatrix run --measure counters --scenario '$(BULK_SCENARIOS)' --runs 2 --lanes $(LANES) --impl 'rustls-aws-lc,*' --pairs self \
	  --out results/counters.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) setup-costs $(BIN)/tlsmatrix run --measure setup --scenario '$(SETUP_SCENARIOS)' --runs $(SETUP_RUNS) --lanes $(LANES) \
	  --out results/setup.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) teardown-costs $(BIN)/tlsmatrix run --measure teardown --runs $(TEARDOWN_RUNS) --lanes $(LANES) \
	  --out results/teardown.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) crypto-floor $(BIN)/tlsmatrix run --measure floor --runs $(FLOOR_RUNS) --warmup-ms 50 --sample-ms 40 --lanes $(LANES) \
	  --out results/floor.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) contention $(BIN)/tlsmatrix run --measure contention --runs $(CONTENTION_RUNS) --sample-ms $(CONTENTION_MS) --warmup-ms 100 \
	  --out results/contention.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) quic $(BIN)/tlsmatrix run --measure quic --runs $(QUIC_RUNS) --warmup-ms 50 --sample-ms 40 --lanes $(LANES) \
	  --out results/quic.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) quic-bulk $(BIN)/tlsmatrix run --measure quic-bulk --runs $(QUIC_BULK_RUNS) --warmup-ms 50 --lanes $(LANES) \
	  --out results/quic-bulk.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) --reuse quic-instructions results/quic-instructions.jsonl,db:$(DB) $(BIN)/tlsmatrix run --measure quic-instructions \
	  --runs $(QUIC_INSTR_RUNS) --out results/quic-instructions.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) profiles $(BIN)/tlsmatrix run --measure profile --scenario '$(PROFILE_SCENARIOS)' --runs $(PROFILE_RUNS) --lanes $(LANES) \
	  --out results/profile.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	companion_impls=$$(for c in $(COMPANIONS); do [ -d $(BIN)/companions/$$c ] && printf '%s,%s+symbols,' $$c $$c; done | sed 's/,$$//'); \
	if [ -n "$$companion_impls" ]; then \
	  $(STAGE) --reuse companion results/companion.jsonl,db:$(DB) $(BIN)/tlsmatrix run --measure instructions --impl "$$companion_impls" --pairs self \
	    --scenario '$(COMPANION_SCENARIOS)' --runs 1 --out results/companion.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	  $(STAGE) companion-profile $(BIN)/tlsmatrix run --measure profile --impl "$$companion_impls" --pairs self \
	    --scenario '$(COMPANION_PROFILE_SCENARIOS)' --runs $(PROFILE_RUNS) --out results/companion-profile.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	else \
	  $(STAGE) --left-out "libraries with symbols" "no system library here has a source scripts/companion knows, so the stripped libraries' splits stay mostly unnamed"; \
	fi; \
	variant_impls='$(VARIANT_IMPLS)'; \
	if [ ! -x $(BIN)/tlsmatrix-driver-openssl-$(CLANG_OPENSSL)-clang ]; then \
	  variant_impls=$$(echo "$$variant_impls" | tr , '\n' | grep -v '+clang$$' | paste -sd, -); \
	  $(STAGE) --left-out "compiler axis" "OpenSSL $(CLANG_OPENSSL), ring and aws-lc built by clang are not built here; make build-compilers (about 5 min, once), then make report"; \
	fi; \
	$(STAGE) variants $(BIN)/tlsmatrix run --impl "$$variant_impls" --scenario '$(VARIANT_SCENARIOS)' --runs $(VARIANT_RUNS) --passes $(VARIANT_PASSES) --lanes $(LANES) --pairs self \
	  --out results/allocators.jsonl --db $(DB) || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) proxy-check $(BIN)/tlsmatrix wire --check --rtt $(PROXY_RTTS) --out results/proxy-check.json \
	  || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) quic-proxy-check $(BIN)/tlsmatrix wire --check --quic --runs $(QUIC_PROXY_RUNS) --out results/quic-proxy-check.json \
	  || { s=$$?; [ $$s -eq 1 ] || exit $$s; status=1; }; \
	$(STAGE) go-benchmarks $(SUBMAKE) --no-print-directory bench-go GO_ROUNDS=$(REPORT_GO_ROUNDS) GO_WARMUP=100ms || { s=$$?; [ $$s -eq 2 ] || exit $$s; status=1; }; \
	$(BIN)/tlsmatrix report --out $(REPORT) --db $(DB) || exit $$?; \
	scripts/chromium-headless --screenshot=$(CURDIR)/$(REPORT)/screenshot.png --window-size=1200,4000 \
	  file://$(CURDIR)/$(REPORT)/index.html >/dev/null && echo "screenshot: $(REPORT)/screenshot.png"; \
	exit $$status

# The counted stages (make report, step 3), each one command line for scripts/lanes, and their
# order: longest first by a new machine's times (instruction counts about 9-14 min on one core,
# the outside scan 6-8, interop 4-5, heap bytes 2-3, BoGo's quick subset half a minute; its
# full suite, where asked for, about 9 min of two cores, goes first).
COUNTED_WORKERS ?= 2
COUNTED_CONFORMANCE = '$(STAGE) --log --reuse conformance results/conformance.jsonl,results/conformance.txt,db:$(DB) \
  sh -c "$(BIN)/tlsmatrix conformance $(CONFORMANCE_ARGS) --out results/conformance.jsonl --db $(DB) > results/conformance.txt"'
COUNTED_INTEROP = '$(STAGE) --log --reuse interop results/interop.jsonl,results/interop.md,results/offers.json \
  sh -c "$(BIN)/tlsmatrix interop --out results/interop.jsonl --format md > results/interop.md"'
COUNTED_SCAN = '$(STAGE) --log --reuse outside-scan results/outside-scan.json $(BIN)/tlsmatrix scan --out results/outside-scan.json'
COUNTED_INSTRUCTIONS = '$(STAGE) --log --reuse instructions results/instructions.jsonl,db:$(DB) $(BIN)/tlsmatrix run --measure instructions \
  --scenario "$(INSTR_SCENARIOS)" --runs $(INSTR_RUNS) --pairs baseline --out results/instructions.jsonl --db $(DB)'
COUNTED_MEMORY = '$(STAGE) --log --reuse memory results/memory.jsonl,db:$(DB) $(BIN)/tlsmatrix run --scenario "$(MEMORY_SCENARIOS)" \
  --runs $(MEMORY_RUNS) --pairs baseline --out results/memory.jsonl --db $(DB)'
COUNTED_QUIC_MEMORY = '$(STAGE) --log --reuse quic-memory results/quic-memory.jsonl,db:$(DB) $(BIN)/tlsmatrix run --measure quic-memory \
  --runs $(QUIC_MEMORY_RUNS) --out results/quic-memory.jsonl --db $(DB)'
COUNTED_STAGES = $(if $(CONFORMANCE_ARGS),,$(COUNTED_CONFORMANCE)) $(COUNTED_INSTRUCTIONS) $(COUNTED_SCAN) \
  $(COUNTED_INTEROP) $(COUNTED_MEMORY) $(COUNTED_QUIC_MEMORY) $(if $(CONFORMANCE_ARGS),$(COUNTED_CONFORMANCE))

# BoGo in make report: quick, the subset that checks each shim and adapter work (about 50 tests
# an impl, seconds), or full, every test (about 5,000 an impl: 9 of a new machine's 45 minutes
# and a fifth of its CPU time, for verdicts that change only with a library's release; the
# stage is reused while the binaries stay, so it is paid once). `make conformance` runs full.
CONFORMANCE ?= quick
QUICK_BOGO = 50 tests an impl
CONFORMANCE_ARGS = $(if $(filter full,$(CONFORMANCE)),,$(if $(filter quick,$(CONFORMANCE)),--quick,$(error CONFORMANCE is quick or full, not '$(CONFORMANCE)')))

# make itself, named through a variable in the report's long recipe line: make runs a line
# that names $(MAKE) directly even under `make -n`, which would take the whole job.
SUBMAKE = $(MAKE)

# What the estimate after a new machine's first look scales (`tlsmatrix estimate`): a new
# machine's whole `make report`, its results/timings.tsv as the tools wrote it.
REFERENCE_TIMINGS ?= scripts/reference-timings.tsv
# The first look (above): auto runs it while a stack with a build of its own is yet to be
# built (a new machine), 1 always, 0 never.
FIRST_LOOK ?= auto
FIRST_SCENARIOS ?= handshake-tls13-ecdsa-p256-x25519-full,handshake-tls13-ecdsa-p256-x25519-ticket,handshake-tls13-rsa-2048-x25519-full,handshake-tls13-ecdsa-p256-x25519mlkem768-full,bulk-tls13-aes-128-gcm-16k
FIRST_RUNS ?= 12
FIRST_PASSES ?= 3
STACKS_BUILT = ( for d in $(OPENSSL_RELEASES:%=openssl-%) boringssl aws-lc wolfssl mbedtls; do \
  [ -x $(BIN)/tlsmatrix-driver-$$d ] || exit 1; done )
# On a new machine (no tlsmatrix built yet), what the first minutes are: the reference run's
# workspace build, which the first look waits for.
timings-begin:
	@scripts/stage --begin
	@[ -x $(BIN)/tlsmatrix ] || awk -F'\t' '$$1 == "build rust-workspace" && $$3 == "built" { \
	  printf "a new machine: the first figures follow the Rust workspace build (%.0f min on a new machine'"'"'s run in %s)\n", $$2 / 60, FILENAME; exit }' \
	  $(REFERENCE_TIMINGS) 2>/dev/null || true

# Every test, plus the formatting and lint gates CI enforces. The compiler axis, which
# `make report` leaves out unless built, is left out here too: its clang builds took 5 min 43 s
# of a new machine's make test (46 min in all on a slower host, past CI's 45), so it has a
# target of its own, test-compilers, which builds it and runs the test that checks it.
test: build-stacks lint go-test
	@$(MAKE) --no-print-directory companions COMPANIONS="openssl-3.0 wolfssl"
	set -o pipefail; $(CARGO) test --release --locked --workspace 2>&1 | tee target/test.log
	$(MAKE) --no-print-directory aead-sizes AEAD_SECONDS=1 > target/aead-sizes.txt
	@# NSS's primitives outside TLS: five positive timings.
	$(MAKE) --no-print-directory nss-primitives > target/nss-primitives.txt
	@[ "$$(grep -cE '^[A-Z0-9 -]+[a-z ]* +[0-9]+\.[0-9] us$$' target/nss-primitives.txt)" -eq 5 ] \
	  || { echo "nss-primitives: expected five timings" >&2; cat target/nss-primitives.txt >&2; exit 1; }
	@# The Go benchmarks' runner, briefly: two processes (two lanes where there are two cores),
	@# whose records must both land in one file that tlsmatrix imports as one run.
	BENCH_GO_OUT=target/bench-go-smoke scripts/bench-go 2 2ms 2ms $$(( $$(nproc) > 1 ? 2 : 1 )) 3.6 > target/bench-go-smoke.txt
	@# A libssl that is not built stops it before any sample, saying which and how to build it.
	@out=$$(BENCH_GO_OUT=target/bench-go-none scripts/bench-go 2 2ms 2ms 1 9.9 2>&1); s=$$?; \
	  [ $$s -eq 2 ] && echo "$$out" | grep -q 'OpenSSL 9.9 is not built' && [ ! -e target/bench-go-none/go-bench-parts ] \
	  || { echo "bench-go: expected exit 2 and 'OpenSSL 9.9 is not built' before any sample, got $$s: $$out" >&2; exit 1; }
	$(BIN)/tlsmatrix import target/bench-go-smoke/go-bench.jsonl --db target/bench-go-smoke/smoke.db
	@grep -q '"run_id"' target/bench-go-smoke/go-bench-parts/0.jsonl && grep -q '"run_id"' target/bench-go-smoke/go-bench-parts/1.jsonl \
	  || { echo "bench-go smoke: a process wrote no records" >&2; exit 1; }
	@grep -hoE 'test result: [A-Za-z]+\. [0-9]+ passed; [0-9]+ failed' target/test.log \
	  | awk '{p+=$$4; f+=$$6} END {printf "rust tests: %d passed, %d failed\n", p, f}'
	@awk '/^--- PASS/ {p++} /^--- FAIL/ {f++} END {printf "go tests: %d passed, %d failed\n", p, f}' target/go-test.log

# The compiler axis (build-compilers): each +clang impl listed with clang in its version, its
# driver's binary compiled by clang, and its driver left out of the counted stages' keys.
test-compilers: build-compilers
	$(CARGO) test --release --locked -p tlsmatrix --test cli -- --ignored the_compiler_axis_is_built_by_clang

# The Go module: the libp2p TLS transport's tests (every backend pair), then a short run
# of its benchmarks converted to records, to check they run and their figures are sane.
go-test: setup
	mkdir -p target
	@# Without the openssl tag and without cgo: what a go-libp2p user who wants crypto/tls alone gets.
	cd go && CGO_ENABLED=0 $(GO) build ./... && CGO_ENABLED=0 $(GO) test -count=1 ./libp2ptls
	set -o pipefail; cd go && TLSMATRIX_EXPECT_OPENSSL=$(SYSTEM_OPENSSL) $(GO) test $(GO_TAGS) -count=1 -v ./... 2>&1 \
	  | tee ../target/go-test.log | grep -E '^(--- FAIL|FAIL|ok|panic)'
	@set -o pipefail; for v in $(GO_LIBSSL); do \
	  echo "go tests, the OpenSSL backend on $$v:"; \
	  (cd go && TLSMATRIX_EXPECT_OPENSSL=$$v ../scripts/go-libssl $$v test -count=1 -v ./libp2ptls ./internal/ossl 2>&1 \
	    | tee -a ../target/go-test.log | grep -E '^(--- FAIL|FAIL|ok|panic|go-libssl)') || exit 1; \
	done
	cd go && $(GO) test $(GO_TAGS) ./internal/bench -run '^$$' -bench . -benchtime=5x -cpu=1 -benchmem > ../target/go-bench-smoke.txt
	$(MAKE) --no-print-directory fuzz-go FUZZTIME=$(FUZZTIME_TEST)

# The libssl the Go OpenSSL backend is also built against, each statically, beside the system
# one (scripts/go-libssl sets up cgo for one): the vendored OpenSSL releases, BoringSSL and
# AWS-LC (the libraries their drivers build, so they cost no build of their own).
# 1.1.1 is not among them: the backend uses OpenSSL 3's API.
GO_LIBSSL ?= $(filter-out 1.1.1,$(OPENSSL_RELEASES)) boringssl aws-lc
# The system OpenSSL's release line, read when a recipe runs (after scripts/setup has
# installed libssl-dev on a fresh machine).
SYSTEM_OPENSSL = $(shell pkg-config --modversion libssl 2>/dev/null | cut -d. -f1,2)

# Go native fuzzing of everything the transport parses from a peer: each target FUZZTIME.
# make test runs them for FUZZTIME_TEST; a finding is saved under go/libp2ptls/testdata/fuzz
# and fails the run (rerun it with go test -run 'Fuzz.../<id>').
FUZZ_TARGETS := FuzzPeerKeyFromChain FuzzSignedKeyExtension
FUZZTIME ?= 5m
# A count, not a duration: Go 1.26's fuzz coordinator can fail a target with "context
# deadline exceeded" as a duration runs out (golang/go#75804, fixed in Go 1.27); a count has
# no deadline to race. 500 inputs take about 5 s for the slowest target here.
FUZZTIME_TEST ?= 500x
fuzz-go: setup
	@mkdir -p target; cd go && for f in $(FUZZ_TARGETS); do \
	  log=../target/fuzz-$$f.log; \
	  if $(GO) test ./libp2ptls -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) > $$log 2>&1; then \
	    echo "fuzz $$f, $(FUZZTIME): $$(grep -o 'execs: [0-9]*' $$log | tail -1), no finding"; \
	  else cat $$log; echo "fuzz $$f: FAILED (log: target/fuzz-$$f.log)"; exit 1; fi; \
	done

lint: build-workspace mbedtls-lib aws-lc-lib openssl-lib-3.6
	$(CARGO) fmt --all --check
	@# No crate's modules may import each other in a circle (crates/xtask/src/modules.rs).
	@# The workspace build's xtask, not `cargo xtask` (cargo run -p xtask): features resolved
	@# for xtask alone differ from the workspace's, and gave a new machine a second aws-lc-sys
	@# and every tlsmatrix crate again (76 s of a new machine's make test).
	$(BIN)/xtask modules
	@# No function over 150 lines, no source file over 1,200 (crates/xtask/src/lengths.rs).
	$(BIN)/xtask lengths
	$(BIN)/xtask locks
	$(CARGO) clippy --release --locked --workspace --all-targets -- -D warnings
	$(CARGO) clippy --release --locked --manifest-path libssl-drivers/boringssl/Cargo.toml \
	  --target-dir $(DRIVERS_TARGET) -- -D warnings
	$(OPENSSL_ENV)_DIR=$(AWS_LC_DIR) $(OPENSSL_ENV)_STATIC=1 $(CARGO) clippy --release --locked \
	  --manifest-path libssl-drivers/aws-lc/Cargo.toml \
	  --target-dir $(DRIVERS_TARGET) -- -D warnings
	@# A vendored OpenSSL release: the code only it compiles (OpenSSL's own QUIC, 3.5 and later).
	$(OPENSSL_ENV)_DIR=$(CURDIR)/target/openssl/3.6 $(OPENSSL_ENV)_STATIC=1 $(CARGO) clippy --release --locked \
	  --manifest-path libssl-drivers/openssl/Cargo.toml --target-dir $(DRIVER_TARGETS)/driver-openssl-3.6 -- -D warnings
	$(CARGO) clippy --release --locked --manifest-path libssl-drivers/wolfssl/Cargo.toml \
	  --target-dir $(DRIVERS_TARGET) -- -D warnings
	TLSMATRIX_MBEDTLS_DIR=$(MBEDTLS_DIR) $(CARGO) clippy --release --locked \
	  --manifest-path libssl-drivers/mbedtls/Cargo.toml --target-dir $(DRIVERS_TARGET) -- -D warnings
	@cd go && unformatted="$$(gofmt -l .)" && if [ -n "$$unformatted" ]; then echo "gofmt: not formatted: $$unformatted"; exit 1; fi
	cd go && $(GO) vet ./... && $(GO) vet $(GO_TAGS) ./...

# The default plan REPEAT times in a row, then how far each factor against the baseline moved
# between the runs (targets: max/min <= 1.03 handshakes, 1.05 bulk; 90% of intervals hold
# the median; A/A within 1 +- 0.02). About REPEAT x 4 minutes here.
REPEAT ?= 5
repeatability: build
	mkdir -p results/repeatability
	rm -f results/repeatability/run-*.jsonl
	@for i in $$(seq $(REPEAT)); do echo "repeatability: run $$i of $(REPEAT)" >&2; \
	  $(BIN)/tlsmatrix run --runs $(RUNS) --passes $(PASSES) --lanes $(LANES) --out results/repeatability/run-$$i.jsonl \
	    --db results/repeatability/tlsmatrix.db > results/repeatability/run-$$i.txt || exit $$?; \
	done
	$(BIN)/tlsmatrix repeatability results/repeatability/run-*.jsonl | tee results/repeatability/summary.txt

# BoringSSL's BoGo runner against every impl's shim (the runner is built once from the
# boring-sys sources, Go 1.27 fetched through the Go module proxy): about 2.5 minutes here.
conformance: build
	$(BIN)/tlsmatrix conformance --out results/conformance.jsonl --db $(DB)

# Benchmarks that are not tests: the harness-overhead check against a raw rustls loop.
# --workspace, not -p tlsmatrix-impls: features resolved for one package alone recompile
# rustls, openssl and the rest (as for aead-sizes).
bench: build
	$(CARGO) bench --locked --workspace --bench raw_rustls_loop
	$(CARGO) bench --locked --workspace --bench raw_rustls_bulk

# Whether the relative speed of crypto libraries drifts over minutes here (no TLS): ECDSA
# P-256 and X25519 with aws-lc, ring and the system OpenSSL sampled in turns, one line of
# ratios per window. DRIFT_MINUTES (16) is about four `make repeatability` runs.
DRIFT_MINUTES ?= 16
drift:
	$(CARGO) bench --locked --workspace --bench crypto_drift -- --minutes $(DRIFT_MINUTES)

# Whether an impl's speed against the baseline follows the machine's memory weather (shared
# cache and memory): the impl's own pair and the baseline's alone in turns on one core, with a
# pointer-chase probe between (`cargo xtask weather`, an experiment); every turn goes to results/weather.csv.
WEATHER_MINUTES ?= 6
WEATHER_IMPL ?= go-crypto-tls
weather: build
	$(BIN)/xtask weather --impl $(WEATHER_IMPL) --minutes $(WEATHER_MINUTES)

# What one TLS record costs each library's AES-128-GCM by record size (no TLS): aws-lc, ring
# and the system OpenSSL in turns, time per record and a fixed + per-byte line per library.
AEAD_SECONDS ?= 20
# --workspace, not -p tlsmatrix-impls: the workspace's features, so the bench links the crates
# the release build made instead of compiling rustls, openssl and the rest again (33 s on a
# new machine, 11 now).
aead-sizes:
	$(CARGO) bench --locked --workspace --bench aead_record_cost -- --seconds $(AEAD_SECONDS)

# What NSS's own primitives cost outside TLS (ECDSA P-256 sign and verify, X25519 and P-256
# agreement through PKCS#11): where its handshakes' time goes, as docs/findings.md reads it.
nss-primitives: setup
	@mkdir -p target
	$(CC) -O2 -o target/nss-primitives build-support/nss-primitives/nss_primitives.c $$(pkg-config --cflags --libs nss)
	target/nss-primitives

# The libp2p transport's benchmarks (HandshakeNewPeers, Handshake, Latency, Connections) paired,
# the handshakes on X25519 and X25519MLKEM768, new peers on SecP256r1MLKEM768 and
# SecP384r1MLKEM1024 too (upstream cannot be made to offer these two, so they have no reference):
# upstream go-libp2p's transport (the reference), an A/A copy of it, upstream with the spec's
# self-signature check (the like-for-like reference) and every pair of our
# backends take turns in one process, GO_ROUNDS rounds of one GO_SAMPLE sample each; and
# DialNewPeers, libp2p over QUIC against TCP: a whole connection to a new peer over TCP + each
# security transport + yamux and over go-libp2p's QUIC, with CPU per connection and the first
# byte through 20 ms and 100 ms delay links (docs/go-transport.md); then, for
# each of GO_LIBSSL, a process built against that vendored libssl samples the
# reference and its OpenSSL arms. One run: records with per-round ratios in
# results/go-bench.jsonl, the factor tables in results/go-bench.txt. About 45 s for the first
# process and 35 s for each other on defaults; LANES processes run at once, each on its own
# core (scripts/bench-go); `make report` runs it too.
GO_ROUNDS ?= 60
# make report's shorter pass over the same benchmarks.
REPORT_GO_ROUNDS ?= 10
GO_SAMPLE ?= 20ms
# Each arm runs GO_WARMUP before the first round (make report: half).
GO_WARMUP ?= 200ms
# build-stacks, not build: no libssl of the Go backend's is a compiler-axis build, and make
# report, whose last stage this is, leaves that axis to `make build-compilers`.
bench-go: build-stacks
	@status=0; scripts/bench-go $(GO_ROUNDS) $(GO_SAMPLE) $(GO_WARMUP) $(LANES) $(GO_LIBSSL) || status=$$?; \
	if [ -f results/go-bench.jsonl ]; then $(BIN)/tlsmatrix import results/go-bench.jsonl --db $(DB) || exit $$?; fi; \
	exit $$status

# Where the OpenSSL backend's handshake time goes on each libssl, beside upstream go-libp2p
# (crypto/tls) profiled the same way: the HandshakeNewPeers and Handshake benchmarks (X25519;
# new peers, then the same two reconnecting) under perf with DWARF call stacks, split by
# cmd/profilesplit into the TLS library (itself split into decoding, verifying, signing, key
# exchange, lookups and allocation), the libp2p check, the kernel, the Go runtime and the
# glue, each in µs per handshake so the transports compare category by category; making the
# new peers' transports is counted apart. It ends with each backend's bound: its library's own
# time plus the leanest time outside a library of any backend, over upstream's. Upstream,
# profiled first, builds the system test binary it runs from, which system then reuses.
PROFILE_TIME ?= 3s
PROFILE_BENCHMARKS ?= HandshakeNewPeers Handshake
profile-go: build
	mkdir -p results
	@set -o pipefail; command -v perf >/dev/null || { echo "profile-go: perf is not installed (scripts/setup installs linux-perf)" >&2; exit 2; }; \
	: > results/go-profile.txt; rm -f target/go-profile-records.jsonl; \
	for v in upstream system $(GO_LIBSSL); do \
	  bin=target/go-bench-$$v.test; \
	  case $$v in upstream|system) bin=target/go-bench-system.test; go="$(GO) test $(GO_TAGS)";; *) go="../scripts/go-libssl $$v test";; esac; \
	  [ $$v = system ] || (cd go && $$go -c -o ../$$bin ./internal/bench) || exit $$?; \
	  case $$v in upstream) name=go-libp2p-upstream;; system) name=go-libp2p-openssl;; boringssl|aws-lc) name=go-libp2p-$$v;; *) name=go-libp2p-openssl-$$v;; esac; \
	  for b in $(PROFILE_BENCHMARKS); do \
	    echo "== $$name: $$b, X25519, GOMAXPROCS=1" | tee -a results/go-profile.txt; \
	    perf record -q -e cpu-clock -F 999 --call-graph dwarf,16384 -o target/go-profile-$$v-$$b.data \
	      $$bin -test.run '^$$' -test.bench "^Benchmark$$b$$/^group=X25519$$/^client=$$name$$/^server=$$name$$" \
	      -test.benchtime $(PROFILE_TIME) -test.cpu 1 | grep '^Benchmark' | tee -a results/go-profile.txt > target/go-profile-line.txt || exit $$?; \
	    ns=$$(awk '{for (i = 1; i < NF; i++) if ($$(i+1) == "ns/op") print $$i}' target/go-profile-line.txt); \
	    perf script -i target/go-profile-$$v-$$b.data 2>/dev/null | (cd go && $(GO) run ./cmd/profilesplit --top 5 --ns-per-op $$ns \
	      --record ../target/go-profile-records.jsonl --name $$name --workload $$b) | tee -a results/go-profile.txt || exit $$?; \
	  done; \
	done; \
	(cd go && $(GO) run ./cmd/profilesplit --bounds ../target/go-profile-records.jsonl) | tee -a results/go-profile.txt

clean:
	$(CARGO) clean
	rm -rf results $(REPORT)
