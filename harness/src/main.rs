//! `mcp-harness`: a thin binary over the `mcp_harness` library. See `mcp-harness --help`.

use clap::{Parser, Subcommand};
use mcp_harness::baseline::{self, Baseline};
use mcp_harness::runner::{self, RunConfig};
use mcp_harness::{HarnessError, Target, discover, report, snapshot};
use mcp_scenario::results::Verdict;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

const EXIT_CODES: &str = "Exit codes:
  0  every run passed (or was skipped for the target); with --expected-failures: the
     results match the baseline
  1  at least one run failed or errored; with --expected-failures: a failure not in the
     baseline, or a listed scenario that now passes
  2  bad usage: unknown target, missing path, invalid scenario or baseline file";

/// Runs MCP client-transport scenarios against a client, checks the wire and snapshots it.
#[derive(Parser, Debug)]
#[command(name = "mcp-harness", version, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run scenarios and write reports/results.json and reports/junit.xml.
    Run {
        /// Scenario files or folders (searched recursively for *.yaml).
        #[arg(default_value = "scenarios")]
        paths: Vec<PathBuf>,
        /// The client under test: bundled, bundled:stdio, bundled:http, bundled:legacy-sse,
        /// or cmd:"<command line>".
        #[arg(long, short, default_value = "bundled")]
        target: String,
        /// How many runs at once (default: 4 per core for bundled, whose runs mostly wait on
        /// timers; 1 per core for cmd: targets, which spend CPU starting their runtime).
        #[arg(short = 'j', long)]
        jobs: Option<usize>,
        /// Write snapshots instead of comparing them.
        #[arg(long)]
        update_snapshots: bool,
        /// Fail a run whose snapshot is missing instead of writing it as the first one (for
        /// CI, where the target's snapshots are committed). Without it, a run with no
        /// snapshot yet is judged by its checks alone and its transcript written as new.
        #[arg(long, conflicts_with = "update_snapshots")]
        require_snapshots: bool,
        /// For a third-party client, fail runs on unmet SHOULDs too (by default they are
        /// warnings). Checks rest on `must` (fails), `should` (warns) or `project` (a rule
        /// of our SPEC.md for the bundled transports: a note); the bundled client fails on all.
        #[arg(long)]
        strict: bool,
        /// Where to write results.json and junit.xml.
        #[arg(long, default_value = "reports")]
        reports: PathBuf,
        /// Print only failures and the totals.
        #[arg(long, short)]
        quiet: bool,
        /// Judge failures against this expected-failures baseline (the official conformance
        /// suite's format plus `flaky:`): exit 1 only for unlisted failures and for listed
        /// scenarios that now pass.
        #[arg(long, value_name = "FILE")]
        expected_failures: Option<PathBuf>,
        /// Write a baseline listing this run's failures to FILE (keeps its `flaky:` list).
        #[arg(long, value_name = "FILE")]
        write_baseline: Option<PathBuf>,
    },
    /// Write the compatibility matrix (<DIR>/<client>.md and <DIR>/README.md) from
    /// <DIR>/<client>/results.json files.
    Matrix {
        /// The folder holding one results folder per client.
        #[arg(default_value = "reports/clients")]
        dir: PathBuf,
    },
    /// Load and validate scenario files without running them.
    Check {
        /// Scenario files or folders.
        #[arg(default_value = "scenarios")]
        paths: Vec<PathBuf>,
    },
    /// Print the JSON Schema of the scenario format (committed as scenarios/schema.json).
    Schema,
    /// Run the mock server (same as the `mcp-mock` binary; see `mcp-harness mock --help`).
    Mock,
    /// Record a real session and write it as a scenario that replays the server's side and
    /// pins the client's (scenarios/README.md "From a field bug to a scenario").
    #[command(after_help = RECORD_HELP)]
    Record(RecordArgs),
}

const RECORD_HELP: &str = "Examples:
  stdio: put this where the host's config names the server, then use the host as usual:
    mcp-harness record --out scenarios/regressions/my-bug.yaml -- python3 server.py --flag
  HTTP: point the client at the listen address instead of the server:
    mcp-harness record --out my-bug.yaml --upstream http://127.0.0.1:8080/mcp --listen 127.0.0.1:9000
  then: mcp-harness check my-bug.yaml && mcp-harness run my-bug.yaml --target bundled

stdio: the recording ends when the server exits (the host closes it); the exit code is the
server's. HTTP: it ends on Ctrl-C / SIGTERM. The scenario is written then, and the capture
beside it (<name>.capture.jsonl, redacted too: keep it out of commits).
Redacted at capture, always: Authorization / Cookie / Set-Cookie and token/secret/key
headers, JSON members named like credentials (access_token, apiKey, password, …), bearer
tokens in any text; add your own with --redact-pattern REGEX (repeatable).";

/// `mcp-harness record` options.
#[derive(clap::Args, Debug)]
struct RecordArgs {
    /// The scenario file to write (its stem is the scenario's name: lowercase, digits, '-').
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Replay delays (and the plan's timeouts) this many times faster, e.g. 10.
    #[arg(long, default_value_t = 1.0, value_name = "FACTOR")]
    speed: f64,
    /// Also redact every match of this regular expression (repeatable).
    #[arg(long = "redact-pattern", value_name = "REGEX")]
    redact_patterns: Vec<String>,
    /// Add this session to the recording already beside --out as its next connection (a
    /// host that respawns the server); without it the recording starts afresh.
    #[arg(long)]
    append: bool,
    /// HTTP: the real server's MCP endpoint URL (Streamable HTTP or legacy SSE).
    #[arg(long, value_name = "URL", requires = "listen", conflicts_with = "command")]
    upstream: Option<String>,
    /// HTTP: where the proxy listens (the client connects here), e.g. 127.0.0.1:9000.
    #[arg(long, value_name = "ADDR", requires = "upstream")]
    listen: Option<String>,
    /// stdio: the real server's command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `mock` hands every remaining argument to the mock's own CLI untouched.
    if args.get(1).is_some_and(|a| a == "mock") {
        let rest = std::iter::once("mcp-harness mock".into()).chain(args.into_iter().skip(2));
        std::process::exit(mcp_mock::cli::run(rest));
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MCP_HARNESS_LOG")
                .unwrap_or_else(|_| "warn,mcp_transports=error".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Run {
            paths,
            target,
            jobs,
            update_snapshots,
            require_snapshots,
            strict,
            reports,
            quiet,
            expected_failures,
            write_baseline,
        } => {
            let baselines = Baselines { expected: expected_failures, write: write_baseline };
            let judging = Judging {
                snapshots: snapshot::Policy { update: update_snapshots, require: require_snapshots },
                strict,
            };
            match run(paths, &target, jobs, judging, reports, quiet, baselines) {
                Ok(code) => code,
                Err(errors) => {
                    for e in &errors {
                        eprintln!("mcp-harness: {e}");
                    }
                    errors.first().map(HarnessError::exit_code).unwrap_or(2)
                }
            }
        }
        Command::Check { paths } => {
            match discover::scenario_files(&paths).map_err(|e| vec![e]).and_then(|f| discover::load_all(&f)) {
                Ok(loaded) => {
                    println!("{} scenario files are valid", loaded.len());
                    0
                }
                Err(errors) => {
                    for e in &errors {
                        eprintln!("mcp-harness: {e}");
                    }
                    2
                }
            }
        }
        Command::Matrix { dir } => match mcp_harness::matrix::write(&dir) {
            Ok(clients) => {
                println!("wrote {} and README.md for {} clients", dir.display(), clients.len());
                0
            }
            Err(e) => {
                eprintln!("mcp-harness: {e}");
                2
            }
        },
        Command::Schema => {
            print!("{}", mcp_scenario::schema::schema_json());
            0
        }
        Command::Mock => unreachable_mock(),
        Command::Record(args) => record(args),
    };
    std::process::exit(code);
}

fn record(args: RecordArgs) -> i32 {
    use mcp_harness::record;
    let opts = record::Options {
        out: args.out,
        speed: args.speed,
        redact_patterns: args.redact_patterns,
        append: args.append,
    };
    let result = match (args.upstream, args.listen) {
        (Some(upstream), Some(listen)) => record::run_http(&opts, &upstream, &listen),
        _ => record::run_stdio(&opts, &args.command),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mcp-harness record: {e}");
            2
        }
    }
}

fn unreachable_mock() -> i32 {
    // Handled before clap parses; kept so `--help` lists the subcommand.
    mcp_mock::cli::run(["mcp-harness mock", "--help"])
}

/// The baseline files a run reads and writes.
struct Baselines {
    expected: Option<PathBuf>,
    write: Option<PathBuf>,
}

/// How runs are judged: snapshots, and whether SHOULDs fail.
struct Judging {
    snapshots: snapshot::Policy,
    strict: bool,
}

fn run(
    paths: Vec<PathBuf>,
    target: &str,
    jobs: Option<usize>,
    judging: Judging,
    reports: PathBuf,
    quiet: bool,
    baselines: Baselines,
) -> Result<i32, Vec<HarnessError>> {
    let baseline = match &baselines.expected {
        Some(path) => Some(Baseline::load(path).map_err(|e| vec![e])?),
        None => None,
    };
    let target = Target::parse(target).map_err(|e| vec![e])?;
    let files = discover::scenario_files(&paths).map_err(|e| vec![e])?;
    let scenarios = discover::load_all(&files)?;
    if let (Some(b), Some(path)) = (&baseline, &baselines.expected) {
        let selftest: Vec<&str> =
            scenarios.iter().filter(|(p, _)| baseline::is_selftest(p)).map(|(_, s)| s.name.as_str()).collect();
        b.refuse_selftest(path, &selftest).map_err(|e| vec![e])?;
    }
    let exe = std::env::current_exe().map_err(|e| vec![HarnessError::io("finding the mcp-harness executable", e)])?;
    let config = Arc::new(RunConfig {
        target: target.clone(),
        mock_command: vec![exe.display().to_string(), "mock".into()],
        snapshots: judging.snapshots,
        compare_snapshots: true,
        strict: judging.strict,
    });
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
    let parallel = jobs.unwrap_or(cores * target.runs_per_core());
    let runtime = tokio::runtime::Runtime::new().map_err(|e| vec![HarnessError::io("starting the runtime", e)])?;
    let started = Instant::now();
    let windows = cores * target.window_runs_per_core();
    let mut results = runtime.block_on(runner::run_all(runner::jobs(scenarios, &target), config, parallel, windows));
    let wall_ms = started.elapsed().as_millis() as u64;
    if let Some(b) = &baseline {
        let verdicts = b.judge(&results);
        for (r, v) in results.iter_mut().zip(verdicts) {
            r.baseline = Some(v);
        }
    }
    let mut summary = report::summary(&results, wall_ms);
    if quiet {
        summary = report::without_passes(&summary);
    }
    print!("{summary}");
    report::write(&reports, &results, wall_ms).map_err(|e| vec![e])?;
    if let Some(path) = &baselines.write {
        let previous = if path.exists() { Baseline::load(path).map_err(|e| vec![e])? } else { Baseline::default() };
        let client = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        std::fs::write(path, baseline::render(&client, &results, &previous))
            .map_err(|e| vec![HarnessError::io(format!("writing {}", path.display()), e)])?;
    }
    if let (Some(path), Some(_)) = (&baselines.expected, &baseline) {
        let mut regressions = 0;
        for r in &results {
            match r.baseline {
                Some(Verdict::UnexpectedFailure) => {
                    regressions += 1;
                    println!("NEW FAILURE  {} [{}]: not in {}", r.scenario, r.transport.as_str(), path.display());
                }
                Some(Verdict::StaleEntry) => {
                    regressions += 1;
                    println!(
                        "NOW PASSES   {} [{}]: remove it from {}",
                        r.scenario,
                        r.transport.as_str(),
                        path.display()
                    );
                }
                _ => {}
            }
        }
        println!("baseline {}: {}", path.display(), if regressions == 0 { "unchanged" } else { "CHANGED" });
        return Ok(if regressions == 0 { 0 } else { 1 });
    }
    let totals = report::Totals::of(&results);
    Ok(if totals.failed + totals.error > 0 { 1 } else { 0 })
}
