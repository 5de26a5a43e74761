//! `mcp-harness`: a thin binary over the `mcp_harness` library. See `mcp-harness --help`.

use clap::{Args, Parser, Subcommand};
use mcp_harness::commands::browse;
use mcp_harness::commands::check_record::check_record;
use mcp_harness::commands::review::review;
use mcp_harness::commands::run::{Baselines, How, Judging, merge, run};
use mcp_harness::commands::{Format, emit};
use mcp_harness::partition::{self, Partition};
use mcp_harness::select::Selection;
use mcp_harness::{HarnessError, snapshot};
use mcp_scenario::{Revision, TransportName};
use std::path::PathBuf;

const TOP_HELP: &str = "Examples:
  mcp-harness run                                   the library against the bundled client
  mcp-harness run -t cmd:\"node my-driver.mjs\"      against your client's driver (clients/README.md)
  mcp-harness list --tag host                       scenarios a real host can pass
  mcp-harness explain session-id-on-initialized     one scenario in words
  mcp-harness review                                pending snapshots, one diff at a time

Exit codes:
  0  every run passed (or was skipped for the target, or is pending); with
     --expected-failures: the results match the baseline
  1  at least one run failed or errored; with --expected-failures: a failure not in the
     baseline, or a listed scenario that now passes
  2  bad usage: unknown target, missing path, invalid scenario or baseline file; with
     --keep-going, an invalid scenario file was skipped (the other files still ran; 2 wins
     over 0 and 1, so CI never mistakes a half-loaded library for a green one)";

const RUN_EXAMPLES: &str = "Examples:
  mcp-harness run                                     every scenario, bundled client
  mcp-harness run scenarios/http --filter 'sse-*'      a folder, names matching a glob
  mcp-harness run --transport http --revision 2025-11-25 -t cmd:\"clients/python/run-v2\"
  mcp-harness run bug.yaml --no-snapshots              a one-off reproduction: checks only
  mcp-harness run --tag '!slow'                       a quick pass: no run that waits out a
                                                      client's default timeout (30-60 s)
  mcp-harness run --keep-going --fail-fast --format json > results.json
  mcp-harness run -t cmd:\"node client.js\" --partition 2/4 --reports shard-2
                                                      one CI job's share of the scenarios;
                                                      `mcp-harness merge shard-*` joins them";

const MERGE_EXAMPLES: &str = "Examples:
  mcp-harness merge shard-1 shard-2 shard-3 --reports reports
  mcp-harness merge shards/* --expected-failures baseline.yml --reports reports

Each folder is what one `run --partition k/n --reports DIR` wrote. Every shard of the count
must be there once (a missing shard would read as its scenarios never failing). Without
--expected-failures any failure fails the merge, as a run without it does; give merge the
baseline the shards were run with.";

const LIST_EXAMPLES: &str = "Examples:
  mcp-harness list                                    every scenario
  mcp-harness list --transport legacy-sse --tag must
  mcp-harness list --text timeout scenarios/http

Each line: name  [transports]  revision  tags  (PENDING: reason). Tags are derived: the
area folder (stdio, http, regressions, ...), the bases the checks rest on (must, should,
project, driver, unclassified), pending, and slow (a run deadline of 30 s or more: the
scenario waits out a client's own default timeout). `--tag '!slow'` keeps the others.";

const EXPLAIN_EXAMPLES: &str = "Examples:
  mcp-harness explain scenarios/stdio/malformed-line-is-skipped.yaml
  mcp-harness explain malformed-line-is-skipped          by name, in the embedded library
  mcp-harness explain malformed-line-is-skipped --in scenarios   by name, in a folder";

const CHECK_EXAMPLES: &str = "Examples:
  mcp-harness check                                   the embedded library
  mcp-harness check bug.yaml                          one file: file:line:column messages";

const MATRIX_EXAMPLES: &str = "Examples:
  mcp-harness matrix                                  reports/clients/<client>/results.json → reports/clients/*.md";

const SCHEMA_EXAMPLES: &str = "Examples:
  mcp-harness schema > scenarios/schema.json          what `make schema` does";

const CHECK_RECORD_EXAMPLES: &str = "Examples:
  mcp-harness mock stdio scenarios/stdio/handshake-order.yaml --record /tmp/host.jsonl
      (point a host's server command at that line, use the host, quit it), then:
  mcp-harness check-record scenarios/stdio/handshake-order.yaml /tmp/host.jsonl
  mcp-harness mock serve scenarios/http/session-capture-and-resend.yaml --record /tmp/http-host.jsonl
      (give the host the printed URL, use it, stop the mock with Ctrl-C), then:
  mcp-harness check-record scenarios/http/session-capture-and-resend.yaml /tmp/http-host.jsonl --strict";

/// `check-record --help`'s epilogue: the check kinds a recording cannot judge, as the checks
/// themselves say ([`mcp_harness::checks::outcome_readers`]), then the examples.
fn check_record_help() -> String {
    format!(
        "Checks that read a client's report, not applicable to a recording: {}.\n\n{CHECK_RECORD_EXAMPLES}",
        mcp_harness::checks::outcome_readers()
    )
}

const CONTRACT_EXAMPLES: &str = "Examples:
  mcp-harness contract > clients/CONTRACT.md          what `make schema` does
  MCP_HARNESS_DECLARE=1 clients/typescript/run        what a driver declares (one JSON line)";

/// Runs MCP client-transport scenarios against a client, checks the wire and snapshots it.
#[derive(Parser, Debug)]
#[command(name = "mcp-harness", version, after_help = TOP_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Which scenarios to take (shared by `run` and `list`).
#[derive(Args, Debug, Clone, Default)]
struct Filters {
    /// Only these transports: stdio, http, legacy-sse (repeat or comma-separate). A scenario
    /// over several runs only on the ones given. Default: all.
    #[arg(long, value_name = "TRANSPORT", value_delimiter = ',', value_parser = TransportName::parse)]
    transport: Vec<TransportName>,
    /// Only scenarios speaking these revisions, e.g. 2025-11-25 (repeat or comma-separate).
    /// Default: all.
    #[arg(long, value_name = "REVISION", value_delimiter = ',', value_parser = Revision::parse)]
    revision: Vec<Revision>,
    /// Only scenarios carrying every one of these tags (area folder, basis level, pending,
    /// slow, host: a host that runs no plan can pass it); `!TAG` keeps those without it,
    /// e.g. `--tag '!slow'` for a quick pass, `--tag host` for a real host. Default: no tag
    /// filter.
    #[arg(long, value_name = "TAG", value_delimiter = ',')]
    tag: Vec<String>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run scenarios and write reports/: index.html, summary.md, results.json, junit.xml.
    #[command(after_help = RUN_EXAMPLES)]
    Run {
        /// Scenario files or folders (searched recursively for *.yaml). Default: the library
        /// embedded in this binary (`./scenarios` is not taken unless named).
        paths: Vec<PathBuf>,
        /// The client under test: bundled, bundled:stdio, bundled:http, bundled:legacy-sse,
        /// cmd:"<command line>", or cmd+persistent:"<command line>" (one driver process
        /// serves many plans; clients/README.md "Persistent drivers").
        #[arg(long, short, default_value = "bundled")]
        target: String,
        /// Only scenarios whose name matches: a glob when it holds `*`, `?` or `[`, else a
        /// substring. Default: every scenario.
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
        #[command(flatten)]
        filters: Filters,
        /// How many runs at once (default: 4 per core for bundled, whose runs mostly wait on
        /// timers; 1 per core for cmd: targets, which spend CPU starting their runtime; 3 per
        /// core for cmd+persistent:, whose interpreters start once). Observation windows
        /// (plans with waits of a second or more) run on top of these, in their own slots
        /// (4 per core for bundled, 3 for cmd+persistent:, none for cmd:).
        #[arg(short = 'j', long)]
        jobs: Option<usize>,
        /// Write snapshots instead of comparing them.
        #[arg(long, conflicts_with = "no_snapshots")]
        update_snapshots: bool,
        /// Fail a run whose snapshot is missing instead of writing it as the first one (for
        /// CI, where the target's snapshots are committed). Without it, a run with no
        /// snapshot yet is judged by its checks alone and its transcript written as new.
        #[arg(long, conflicts_with_all = ["update_snapshots", "no_snapshots"])]
        require_snapshots: bool,
        /// Compare no snapshot and write nothing beside the scenarios (no .snap, no
        /// .snap.new): a one-off run judged by its checks alone. Default: compare.
        #[arg(long)]
        no_snapshots: bool,
        /// After the first failed or errored run, start no more; the runs not started are
        /// reported as `not run` (runs already going finish). Default: run everything.
        #[arg(long)]
        fail_fast: bool,
        /// Report each invalid scenario file and skip it; the valid ones still run. The exit
        /// code is then 2 (see "Exit codes"). Default: any invalid file stops the run before
        /// it starts.
        #[arg(long)]
        keep_going: bool,
        /// What goes to stdout: `text` (the summary) or `json` (the results.json document:
        /// totals, wall time, every run). Default: text.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// For a third-party client, fail runs on unmet SHOULDs too (by default they are
        /// warnings). Checks rest on `must` (fails), `should` (warns) or `project` (a rule
        /// of our SPEC.md for the bundled transports: a note); the bundled client fails on all.
        #[arg(long)]
        strict: bool,
        /// Where to write index.html, summary.md, results.json and junit.xml (docs/ci.md).
        #[arg(long, default_value = "reports")]
        reports: PathBuf,
        /// Print only what needs a look (failures, errors, runs not exercised that no baseline
        /// expects) and the totals, and no progress.
        #[arg(long, short)]
        quiet: bool,
        /// Judge failures against this expected-failures baseline (the official conformance
        /// suite's format plus `flaky:`): exit 1 only for unlisted failures and for listed
        /// scenarios that now pass.
        #[arg(long, value_name = "FILE")]
        expected_failures: Option<PathBuf>,
        /// Run only shard K of N (`K/N`, e.g. `2/4`): each scenario belongs to one shard,
        /// chosen by a hash of its path inside the library, so it stays in its shard whatever
        /// else is selected. `mcp-harness merge` joins the shards' reports folders. Default:
        /// every selected scenario.
        #[arg(long, value_name = "K/N", value_parser = partition::parse)]
        partition: Option<Partition>,
        /// Write a baseline listing this run's failures to FILE (keeps its `flaky:` list).
        #[arg(long, value_name = "FILE")]
        write_baseline: Option<PathBuf>,
    },
    /// List scenarios, one line each: name, transports, revision, tags, pending marker.
    #[command(after_help = LIST_EXAMPLES)]
    List {
        /// Scenario files or folders (searched recursively for *.yaml). Default: the library
        /// embedded in this binary (`./scenarios` is not taken unless named).
        paths: Vec<PathBuf>,
        /// Only scenarios whose name or summary contains this text (case-insensitive), or
        /// whose name matches it as a glob (`*`, `?`, `[`). Default: all.
        #[arg(long, value_name = "TEXT")]
        text: Option<String>,
        #[command(flatten)]
        filters: Filters,
    },
    /// A scenario in words: what the client is asked to do, what the mock does step by
    /// step, and what is checked, on which basis.
    #[command(after_help = EXPLAIN_EXAMPLES)]
    Explain {
        /// A scenario file, or a scenario's name (its file stem) to find under --in.
        scenario: String,
        /// Where to look for a scenario given by name. Default: the library embedded in this
        /// binary.
        #[arg(long = "in", value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Write the compatibility matrix (<DIR>/<client>.md and <DIR>/README.md) from
    /// <DIR>/<client>/results.json files.
    #[command(after_help = MATRIX_EXAMPLES)]
    Matrix {
        /// The folder holding one results folder per client.
        #[arg(default_value = "reports/clients")]
        dir: PathBuf,
    },
    /// Judge a recording of a real MCP host against a scenario's checks.
    ///
    /// The recording is what `mcp-mock serve|stdio <scenario> --record FILE` (or
    /// `mcp-harness mock …`) wrote while a host talked to it: give FILE (its structured
    /// record is read from FILE.wire/ beside it) or a --run-dir directory. The host is
    /// judged as a third-party client: an unmet MUST fails (exit 1), a SHOULD warns
    /// (--strict fails it), a rule of our SPEC.md is a note. Checks that read what a client
    /// reports about its plan (listed below) are not applicable: a host runs no plan. Exit 0
    /// when it passes, 1 when it fails, 2 for an invalid scenario or an unreadable recording.
    #[command(after_help = check_record_help())]
    CheckRecord {
        /// The scenario file the mock served.
        scenario: PathBuf,
        /// The --record FILE (or a record directory).
        recording: PathBuf,
        /// The transport, when the recording does not say and the scenario lists several.
        #[arg(long, value_parser = ["stdio", "http", "legacy-sse"])]
        transport: Option<String>,
        /// Fail on unmet SHOULDs too (by default they are warnings).
        #[arg(long)]
        strict: bool,
    },
    /// Load and validate scenario files without running them.
    #[command(after_help = CHECK_EXAMPLES)]
    Check {
        /// Scenario files or folders. Default: the library embedded in this binary.
        paths: Vec<PathBuf>,
    },
    /// The scenario library embedded in this binary: write it out to edit or extend it.
    #[command(subcommand)]
    Scenarios(ScenariosCommand),
    /// Print the JSON Schema of the scenario format (committed as scenarios/schema.json).
    #[command(after_help = SCHEMA_EXAMPLES)]
    Schema,
    /// Print the driver contract reference: every plan op and field, its meaning, default and
    /// the contract version that added it (committed as clients/CONTRACT.md).
    #[command(after_help = CONTRACT_EXAMPLES)]
    Contract,
    /// Run the mock server (same as the `mcp-mock` binary; see `mcp-harness mock --help`):
    /// `mock serve <scenario>` or `mock stdio <scenario>` points a real MCP host at a scenario.
    Mock,
    /// Record a real session and write it as a scenario that replays the server's side and
    /// pins the client's (scenarios/README.md "From a field bug to a scenario").
    #[command(after_help = RECORD_HELP)]
    Record(RecordArgs),
    /// Join the reports folders of a partitioned run's shards (`run --partition k/n`) into
    /// one report: index.html, summary.md, results.json, junit.xml, and one baseline
    /// comparison. Exit codes as for `run`.
    #[command(after_help = MERGE_EXAMPLES)]
    Merge {
        /// The shards' reports folders (each holds the results.json its `run` wrote).
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        /// Where to write the merged report.
        #[arg(long, default_value = "reports")]
        reports: PathBuf,
        /// Judge the merged runs against this expected-failures baseline, as `run
        /// --expected-failures` does.
        #[arg(long, value_name = "FILE")]
        expected_failures: Option<PathBuf>,
        /// Print only what needs a look and the totals.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Review pending snapshots (`.snap.new`, left by a changed transcript or by the first
    /// run of a failing scenario): each as a diff against the accepted one, then accept
    /// (it replaces the `.snap`), reject (it is deleted) or skip. On a terminal it asks; with
    /// `--accept` / `--reject` it does that to every one without asking; otherwise it lists
    /// them. Exit 0 when none is left pending, 1 when some are (a CI check), 2 on an error.
    #[command(after_help = REVIEW_EXAMPLES)]
    Review {
        /// Scenario files or folders to look under.
        #[arg(default_value = "scenarios")]
        paths: Vec<PathBuf>,
        /// Accept every pending snapshot without asking.
        #[arg(long, conflicts_with = "reject")]
        accept: bool,
        /// Reject every pending snapshot without asking.
        #[arg(long)]
        reject: bool,
    },
}

/// `mcp-harness scenarios …`.
#[derive(Subcommand, Debug)]
enum ScenariosCommand {
    /// Write the embedded library (scenario files, the bundled target's snapshots, README.md,
    /// schema.json) into DIR, to edit or extend; then run DIR: a path given to `run`, `list`,
    /// `check` or `explain --in` is the library instead of the embedded one.
    #[command(after_help = EXPORT_EXAMPLES)]
    Export {
        /// The folder to write (created when missing).
        dir: PathBuf,
        /// Overwrite files in DIR that differ from the embedded ones (by default an edited
        /// file is kept and the export refused).
        #[arg(long)]
        force: bool,
    },
}

const EXPORT_EXAMPLES: &str = "Examples:
  mcp-harness scenarios export scenarios              then edit, and: mcp-harness run scenarios
  mcp-harness scenarios export vendor/mcp-scenarios --force   refresh a copy (overwrites edits)";

const REVIEW_EXAMPLES: &str = "Examples:
  mcp-harness review                                  every pending snapshot under scenarios/, one by one
  mcp-harness review scenarios/stdio --accept         accept all of them there
  mcp-harness review --reject                         throw every pending one away
  mcp-harness review > /dev/null || echo pending      a CI check: exit 1 while any is pending";

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
    /// stdio: the real server's command and its arguments (after `--`, or simply last: the
    /// first word that is not an option of `record` starts it, and everything after it is
    /// the server's, options included).
    #[arg(trailing_var_arg = true, allow_hyphen_values = false, value_name = "COMMAND")]
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
        // Log lines pass the secret policy: a transport's debug line may quote an error body.
        .with_writer(|| mcp_mock::secrets::LogWriter(std::io::stderr()))
        .init();
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Run {
            paths,
            target,
            filter,
            filters,
            jobs,
            update_snapshots,
            require_snapshots,
            no_snapshots,
            fail_fast,
            keep_going,
            format,
            strict,
            reports,
            quiet,
            expected_failures,
            partition,
            write_baseline,
        } => {
            let baselines = Baselines { expected: expected_failures, write: write_baseline };
            let judging = Judging {
                snapshots: snapshot::Policy {
                    update: update_snapshots,
                    require: require_snapshots,
                    read_only: paths.is_empty(),
                },
                compare: !no_snapshots,
                strict,
            };
            let selection = selection(filter, false, filters);
            let how = How { fail_fast, keep_going, format, quiet, partition };
            report("mcp-harness", run(paths, &target, jobs, judging, &selection, reports, how, baselines))
        }
        Command::List { paths, text, filters } => {
            report("mcp-harness", browse::list(paths, &selection(text, true, filters)))
        }
        Command::Explain { scenario, dir } => report("mcp-harness", browse::explain(&scenario, dir)),
        Command::Check { paths } => report("mcp-harness", browse::check(paths)),
        Command::CheckRecord { scenario, recording, transport, strict } => report(
            "mcp-harness",
            check_record(&scenario, &recording, transport.as_deref(), strict).map_err(|e| vec![e]),
        ),
        Command::Matrix { dir } => report(
            "mcp-harness",
            mcp_harness::matrix::write(&dir)
                .map(|clients| {
                    println!("wrote {} and README.md for {} clients", dir.display(), clients.len());
                    0
                })
                .map_err(|e| vec![e]),
        ),
        Command::Schema => {
            emit(&mcp_scenario::schema::schema_json());
            0
        }
        Command::Contract => {
            emit(&mcp_scenario::contract::reference_markdown());
            0
        }
        Command::Mock => unreachable_mock(),
        Command::Record(args) => report("mcp-harness record", record(args)),
        Command::Review { paths, accept, reject } => review(&paths, accept, reject),
        Command::Scenarios(ScenariosCommand::Export { dir, force }) => {
            report("mcp-harness scenarios export", browse::export(&dir, force))
        }
        Command::Merge { shards, reports, expected_failures, quiet } => {
            report("mcp-harness merge", merge(&shards, reports, expected_failures, quiet))
        }
    };
    std::process::exit(code);
}

fn record(args: RecordArgs) -> Result<i32, Vec<HarnessError>> {
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
    result.map_err(|e| vec![e])
}

/// A command's exit code, or its errors on stderr (each after `prefix`) and theirs.
fn report(prefix: &str, result: Result<i32, Vec<HarnessError>>) -> i32 {
    match result {
        Ok(code) => code,
        Err(errors) => {
            for e in &errors {
                eprintln!("{prefix}: {e}");
            }
            errors.first().map(HarnessError::exit_code).unwrap_or(2)
        }
    }
}

fn unreachable_mock() -> i32 {
    // Handled before clap parses; kept so `--help` lists the subcommand.
    mcp_mock::cli::run(["mcp-harness mock", "--help"])
}

fn selection(filter: Option<String>, in_summary: bool, f: Filters) -> Selection {
    Selection { filter, in_summary, transports: f.transport, revisions: f.revision, tags: f.tag }
}
