# The two commands a newcomer needs: `make run` and `make test`. See README.md.
CARGO ?= cargo
HARNESS := target/debug/mcp-harness
SCENARIOS ?= scenarios

.PHONY: run test bench fmt lint schema build validate clients

## Build the harness (debug: fast to build, and the library still runs in seconds).
build:
	$(CARGO) build -p mcp-harness -p mcp-mock

## Run the scenario library against the bundled transports; reports go to reports/.
run: build
	$(HARNESS) run $(SCENARIOS) --target bundled

## Third-party SDK drivers (clients/README.md): name → launcher. rmcp joins once its driver exists.
CLIENTS ?= typescript python-v2 python-v1
client_cmd_typescript := clients/typescript/run
client_cmd_python-v2 := clients/python/run-v2
client_cmd_python-v1 := clients/python/run-v1
client_cmd_rmcp := clients/rmcp/run

## Install the drivers (idempotent, fast when already installed).
clients:
	bash clients/install.sh $(if $(filter rmcp,$(CLIENTS)),all,typescript python)

## Run the library against every driver; reports in reports/clients/<client>/. Findings
## (failed runs) do not fail the target: the reports are the product; bad usage (exit 2) does.
validate: build clients
	$(foreach c,$(CLIENTS),echo "== $(c)" && { $(HARNESS) run $(SCENARIOS) --target "cmd:$(client_cmd_$(c))" --reports reports/clients/$(c) --quiet || test $$? -eq 1; } &&) true

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
