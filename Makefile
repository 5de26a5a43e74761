# The two commands a newcomer needs: `make run` and `make test`. See README.md.
CARGO ?= cargo
HARNESS := target/debug/mcp-harness
SCENARIOS ?= scenarios

.PHONY: run test bench fmt lint schema build

## Build the harness (debug: fast to build, and the library still runs in seconds).
build:
	$(CARGO) build -p mcp-harness -p mcp-mock

## Run the scenario library against the bundled transports; reports go to reports/.
run: build
	$(HARNESS) run $(SCENARIOS) --target bundled

## Run every test: unit tests, the scenario library (one test per scenario file), CLI tests.
test:
	$(CARGO) test --workspace

## Benchmarks (figures, not pass/fail): wall time of the stdio library.
bench:
	$(CARGO) build --release -p mcp-harness -p mcp-mock
	bash bench/run.sh

## Regenerate scenarios/schema.json from the format's Rust types.
schema: build
	$(HARNESS) schema > scenarios/schema.json

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) clippy --workspace --all-targets
