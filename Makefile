# The two commands a newcomer needs: `make run` and `make test`. See README.md.
CARGO ?= cargo
HARNESS := target/debug/mcp-harness
SCENARIOS ?= scenarios

.PHONY: run test bench fmt lint schema build validate validate-one baselines baseline-one clients reference conformance nextest-check nginx

## Build the harness (debug: fast to build, and the library still runs in seconds).
build:
	$(CARGO) build -p mcp-harness -p mcp-mock

## The nginx scenarios (scenarios/proxies/nginx-*) need a real nginx: the Debian package
## `nginx` (`apt-get install -y nginx`), installed here when missing and apt-get can.
nginx:
	@command -v nginx >/dev/null || test -x /usr/sbin/nginx || test -n "$$MCP_NGINX" || \
	  { command -v apt-get >/dev/null && apt-get install -y nginx >/dev/null; } || \
	  { echo "the nginx scenarios need nginx: apt-get install -y nginx (or set MCP_NGINX)"; exit 1; }

## Run the scenario library against the bundled transports; reports go to reports/.
run: build nginx
	$(HARNESS) run $(SCENARIOS) --target bundled

## Third-party SDK drivers (clients/README.md): name → launcher.
CLIENTS ?= typescript python-v2 python-v1 rmcp
client_cmd_typescript := clients/typescript/run
client_cmd_python-v2 := clients/python/run-v2
client_cmd_python-v1 := clients/python/run-v1
client_cmd_rmcp := clients/rmcp/run

## Install the drivers (idempotent, fast when already installed).
clients:
	bash clients/install.sh $(sort $(patsubst python-%,python,$(CLIENTS)))

## Run the library against every driver and compare with its expected-failures baseline
## (clients/baselines/<client>.yml): fails only when a client's results change. Reports in
## reports/clients/<client>/, then the committed matrix reports/clients/<client>.md + README.md.
validate: build clients
	@status=0; for c in $(CLIENTS); do \
	  echo "== $$c"; \
	  $(MAKE) --no-print-directory validate-one CLIENT=$$c || status=1; \
	done; \
	$(HARNESS) matrix reports/clients; exit $$status

validate-one:
	$(HARNESS) run $(SCENARIOS) --target "cmd:$(client_cmd_$(CLIENT))" --reports reports/clients/$(CLIENT) \
	  --quiet --expected-failures clients/baselines/$(CLIENT).yml

## Rewrite each client's baseline from a fresh run (review the diff before committing).
baselines: build clients
	@for c in $(CLIENTS); do $(MAKE) --no-print-directory baseline-one CLIENT=$$c; done
	$(HARNESS) matrix reports/clients

baseline-one:
	-$(HARNESS) run $(SCENARIOS) --target "cmd:$(client_cmd_$(CLIENT))" --reports reports/clients/$(CLIENT) \
	  --quiet --write-baseline clients/baselines/$(CLIENT).yml

## The official MCP conformance suite's client scenarios against mcp-client (README.md,
## "Official conformance suite"): installs the pinned suite and Node 22 (conformance/install.sh),
## judges against conformance/expected-failures.yml, writes reports/conformance/README.md.
conformance:
	bash conformance/install.sh
	$(CARGO) build -p mcp-client
	conformance/node_modules/.bin/node conformance/run.mjs --client target/debug/mcp-client --reports reports/conformance

## Run every test: unit tests, the scenario library (one test per scenario file), CLI tests.
test: nginx
	$(CARGO) test --workspace

## The reference client (clients/reference/, Python stdlib) against the whole library, snapshots off;
## `make test` runs only the planted-bug self-test (harness/tests/harness/reference.rs).
reference:
	$(CARGO) test -p mcp-harness --test harness -- --ignored reference_client_passes_the_library

## cargo-nextest partitions: `hash:1/2` and `hash:2/2` together run every scenario test once
## (docs/ci.md). Runs the harness's tests twice over, so not part of `make test`.
nextest-check:
	bash .ci/nextest-check

## Benchmarks (figures, not pass/fail; method and figures in BENCHMARKS.md): the library's
## wall time per target (bundled, plus the drivers named in CLIENTS: `make bench CLIENTS=rmcp`;
## the default here is bundled only), stdio and HTTP round trips, HTTP server throughput, a
## long HTTP run and hostile input. BENCH_REPS (default 5) and the rest: bench/run.sh.
## The bench programs are not workspace members (bench/Cargo.toml says why): built here only.
bench_clients := $(if $(filter file,$(origin CLIENTS)),,$(CLIENTS))
bench: nginx
	$(CARGO) build --release -p mcp-harness -p mcp-mock
	$(CARGO) build --release --manifest-path bench/Cargo.toml --target-dir $(or $(CARGO_TARGET_DIR),target)
	@# rmcp's client (stdio round trips) builds beside the rmcp driver, when that is installed.
	@rt="$${MCP_RMCP_TARGET_DIR:-$$([ -d /work ] && echo /work/target-rmcp || echo clients/rmcp/target)}"; \
	  if [ -x "$$rt/release/mcp-driver-rmcp" ]; then \
	    CARGO_TARGET_DIR="$$rt" $(CARGO) build --release --manifest-path bench/rmcp/Cargo.toml; fi
	BENCH_CLIENTS="$(bench_clients)" bash bench/run.sh

## Regenerate scenarios/schema.json from the format's Rust types.
schema: build
	$(HARNESS) schema > scenarios/schema.json

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) clippy --workspace --all-targets
