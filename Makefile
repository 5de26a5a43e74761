# The two commands a newcomer needs: `make run` and `make test`. See README.md.
CARGO ?= cargo
## Where cargo builds: $CARGO_TARGET_DIR when set, else target/ under the project.
BUILD_DIR := $(or $(CARGO_TARGET_DIR),target)
HARNESS := $(BUILD_DIR)/debug/mcp-harness
SCENARIOS ?= scenarios

.PHONY: run test soak bench fmt lint schema build validate validate-one baselines baseline-one clients reference conformance nextest-check nginx fuzz mutants dist dist-check

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
CLIENTS ?= typescript typescript-v2 python-v2 python-v1 rmcp rmcp-serve
client_cmd_typescript := clients/typescript/run
client_cmd_typescript-v2 := clients/typescript-v2/run
client_cmd_python-v2 := clients/python/run-v2
client_cmd_python-v1 := clients/python/run-v1
client_cmd_rmcp := clients/rmcp/run
## rmcp's default lifecycle (plain serve(), what most rmcp users get): its own column.
client_cmd_rmcp-serve := clients/rmcp/run --default-lifecycle
## How each driver runs: cmd+persistent (one driver process serves many plans; clients/README.md
## "Persistent drivers") where the driver supports it. ONE_SHOT=1: one process per run (cmd:).
client_mode_typescript := cmd+persistent
client_mode_typescript-v2 := cmd+persistent
client_mode_python-v2 := cmd+persistent
client_mode_python-v1 := cmd+persistent
client_mode_rmcp := cmd
client_mode_rmcp-serve := cmd
client_target = $(if $(ONE_SHOT),cmd,$(client_mode_$(CLIENT))):$(client_cmd_$(CLIENT))
## Runs at once, where the harness's default for the target kind does not fit: the rmcp driver
## is a native binary that starts in milliseconds, so its one-shot runs mostly wait on timers,
## like the bundled client's (4 per core); the default for `cmd:` (1 per core) is for
## interpreters. Same verdicts either way; a pass over the library drops from ~50 s to ~17 s.
client_jobs_rmcp := $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) * 4 )))
client_jobs_rmcp-serve := $(client_jobs_rmcp)
client_jobs = $(if $(client_jobs_$(CLIENT)),-j $(client_jobs_$(CLIENT)))

## Install the drivers (idempotent, fast when already installed).
clients:
	bash clients/install.sh $(sort $(patsubst rmcp-%,rmcp,$(patsubst python-%,python,$(CLIENTS))))

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
	$(HARNESS) run $(SCENARIOS) --target "$(client_target)" $(client_jobs) --reports reports/clients/$(CLIENT) \
	  --quiet --expected-failures clients/baselines/$(CLIENT).yml

## Rewrite each client's baseline from a fresh run (review the diff before committing).
baselines: build clients
	@for c in $(CLIENTS); do $(MAKE) --no-print-directory baseline-one CLIENT=$$c; done
	$(HARNESS) matrix reports/clients

baseline-one:
	-$(HARNESS) run $(SCENARIOS) --target "$(client_target)" $(client_jobs) --reports reports/clients/$(CLIENT) \
	  --quiet --write-baseline clients/baselines/$(CLIENT).yml

## The official MCP conformance suite's client scenarios against mcp-client (README.md,
## "Official conformance suite"): installs the pinned suite and Node 22 (conformance/install.sh),
## judges against conformance/expected-failures.yml, writes reports/conformance/README.md.
conformance:
	bash conformance/install.sh
	$(CARGO) build -p mcp-client
	conformance/node_modules/.bin/node conformance/run.mjs --client $(BUILD_DIR)/debug/mcp-client --reports reports/conformance

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

## Soak: the library SOAK_RUNS times (default 20) at -j 2 x cores beside a CPU hog, for the
## bundled target and each driver in SOAK_CLIENTS (e.g. SOAK_CLIENTS="typescript rmcp");
## lists every run whose outcome or normalised transcript differed from the first (soak/run.sh).
## SOAK_PROFILE=heavy: about 8x CPU oversubscription (a hog per core, -j 4 x cores, a cargo
## build churning), 10 repetitions; SOAK_MAKE_TEST=5 then runs `make test` 5 times under it.
SOAK_CLIENTS ?=
soak: build nginx
	bash soak/run.sh bundled $(foreach c,$(SOAK_CLIENTS),$(c)=$(client_mode_$(c)):$(client_cmd_$(c)))

## Fuzz the input parsers (fuzz/, README.md "Fuzzing"): each target in FUZZ_TARGETS for
## FUZZ_SECONDS (default 60) from its seed corpus; fails on the first crash, panic, hang or
## OOM and says where libFuzzer saved the input. Not part of `make test` or .ci/run.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= jsonl_framer sse_parser scenario_loader http_request
fuzz:
	bash fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

## Mutation testing of mcp-transports (cargo-mutants, installed when missing): pass 1 runs every
## mutant against the workspace's tests, pass 2 the caught ones against the scenario library alone
## (`cargo test -p mcp-harness --test harness scenarios::`); reports/mutants/<shard>/summary.md.
## Sharded (MUTANTS_SHARD=k/n), resumable (--iterate: a rerun skips what is done), bounded
## (MUTANTS_MINUTES per pass, MUTANTS_TIMEOUT s per mutant); more knobs in .ci/mutants. Hours.
mutants:
	bash .ci/mutants

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
	@rt="$${MCP_RMCP_TARGET_DIR:-clients/rmcp/target}"; \
	  if [ -x "$$rt/release/mcp-driver-rmcp" ]; then \
	    CARGO_TARGET_DIR="$$rt" $(CARGO) build --release --manifest-path bench/rmcp/Cargo.toml; fi
	BENCH_CLIENTS="$(bench_clients)" BENCH_MODES="$(foreach c,$(bench_clients),$(c)=$(client_mode_$(c)))" \
	  BENCH_JOBS="$(foreach c,$(bench_clients),$(if $(client_jobs_$(c)),$(c)=$(client_jobs_$(c))))" bash bench/run.sh

## Packages (README.md, "Packages"): the npm launcher, the npm platform package with the
## binaries, and a Python wheel, for this machine's platform, into DIST_DIR. Release binaries by
## default; DIST_PROFILE=debug packs the debug build (what dist-check installs: same code, no
## second build).
DIST_PROFILE ?= release
DIST_DIR ?= target/dist
dist:
	$(CARGO) build $(if $(filter release,$(DIST_PROFILE)),--release) -p mcp-harness -p mcp-mock
	python3 dist/pack.py --bin-dir $(BUILD_DIR)/$(DIST_PROFILE) --out $(DIST_DIR)

## Install the packages offline, each into a fresh project or venv with no Rust toolchain on
## PATH, and run the embedded library's quick pass against the reference client through the
## installed command (dist/check.sh). About 1.5 minutes; .ci/run runs it.
CHECK_PROFILE ?= debug
dist-check:
	$(MAKE) --no-print-directory dist DIST_PROFILE=$(CHECK_PROFILE) DIST_DIR=target/dist-$(CHECK_PROFILE)
	bash dist/check.sh target/dist-$(CHECK_PROFILE)

## Regenerate scenarios/schema.json from the format's Rust types.
schema: build
	$(HARNESS) schema > scenarios/schema.json
	$(HARNESS) contract > clients/CONTRACT.md

## Format the workspace and the crates outside it (bench programs, fuzz targets, rmcp driver).
fmt:
	$(CARGO) fmt --all
	for m in bench/Cargo.toml bench/rmcp/Cargo.toml fuzz/Cargo.toml clients/rmcp/Cargo.toml; do \
	  $(CARGO) fmt --manifest-path $$m || exit 1; done

lint:
	$(CARGO) clippy --workspace --all-targets
