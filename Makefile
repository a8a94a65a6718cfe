# tlsmatrix: `make report` measures, `make test` checks. Both install what they need first.

SHELL := /bin/bash
CARGO ?= cargo
RUNS ?= 10
OUT ?= results/latest.jsonl
BIN := target/release

.PHONY: all setup build report run test lint bench clean

all: build

setup:
	@scripts/setup

build: setup
	$(CARGO) build --release --locked --workspace

# The main job: the default suite over every built impl, a fresh results/latest.jsonl, and
# the summary table. RUNS=30 for tighter intervals.
report: build
	rm -f $(OUT)
	$(BIN)/tlsmatrix run --runs $(RUNS) --out $(OUT)

# Every test, plus the formatting and lint gates CI enforces.
test: build lint
	set -o pipefail; $(CARGO) test --release --locked --workspace 2>&1 | tee target/test.log
	@grep -hoE 'test result: [A-Za-z]+\. [0-9]+ passed; [0-9]+ failed' target/test.log \
	  | awk '{p+=$$4; f+=$$6} END {printf "tests: %d passed, %d failed\n", p, f}'

lint: setup
	$(CARGO) fmt --all --check
	$(CARGO) clippy --release --locked --workspace --all-targets -- -D warnings

# Benchmarks that are not tests: the harness-overhead check against a raw rustls loop.
bench: build
	$(CARGO) bench --locked -p tlsmatrix-impls --bench raw_rustls_loop

clean:
	$(CARGO) clean
	rm -rf results
