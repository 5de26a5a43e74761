//! The HTML report in a real browser: `mcp-harness run` over a stdio, an HTTP and a
//! legacy-SSE scenario writes `index.html`; headless Chromium loads it from `file://` (the
//! page's own script draws it, nothing else is loaded), and the DOM it dumps must hold a
//! sequence diagram per run with both lanes and arrows each way. A screenshot of the page is
//! saved as `reports/report-screenshot.png`.
//!
//! A second test plants one failing check and one snapshot that differs among passing runs:
//! the page must open on them, list them first, mark the wire event the failed check is about
//! and link it, and show the snapshot-only failure as a failure with its diff.
//!
//! Without Chromium the tests say what to install and passes as skipped, except under
//! `CI=true` (or `CI=1`), where `.ci/run` installs it, so its absence fails.

use assert_cmd::Command;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The three runs: one per transport kind, each with its committed bundled snapshot (so the
/// run compares and writes nothing beside the scenarios).
const SCENARIOS: [(&str, &str); 3] = [
    ("stdio", "scenarios/stdio/blank-lines-skipped.yaml"),
    ("http", "scenarios/http/get-listener-delivers-messages.yaml"),
    ("legacy-sse", "scenarios/legacy-sse/endpoint-after-messages.yaml"),
];

/// How long one Chromium invocation may take before it is killed (a cold start on a busy
/// two-core machine takes a few seconds).
const BROWSER_DEADLINE: Duration = Duration::from_secs(60);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The browser: `$MCP_HARNESS_CHROMIUM`, else the first of the usual names on `PATH`.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MCP_HARNESS_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Runs the browser headless on `url` with `args`, under [`BROWSER_DEADLINE`] (its whole
/// process group is killed past it); returns its stdout.
async fn headless(browser: &Path, profile: &Path, args: &[String], url: &str) -> String {
    let mut cmd = tokio::process::Command::new(browser);
    cmd.args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let child = cmd.spawn().unwrap_or_else(|e| panic!("starting {}: {e}", browser.display()));
    let pid = child.id().map(|p| p as i32);
    match tokio::time::timeout(BROWSER_DEADLINE, child.wait_with_output()).await {
        Ok(Ok(out)) => {
            assert!(
                out.status.success(),
                "{} {args:?} exited {}:\n{}",
                browser.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
        Ok(Err(e)) => panic!("waiting for {}: {e}", browser.display()),
        Err(_) => {
            if let Some(pid) = pid {
                let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            }
            panic!("{} {args:?} did not finish within {BROWSER_DEADLINE:?}", browser.display())
        }
    }
}

/// Each `<div class="diagram" …>` of the dumped DOM: (its `data-transport`, its markup up to
/// the next diagram or the end of its table cell).
fn diagrams(dom: &str) -> Vec<(String, &str)> {
    let starts: Vec<usize> = dom.match_indices("<div class=\"diagram\"").map(|(i, _)| i).collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let end = starts.get(k + 1).copied().unwrap_or(dom.len());
            let chunk = &dom[i..end];
            let chunk = &chunk[..chunk.find("</td>").unwrap_or(chunk.len())];
            let head = &chunk[..chunk.find('>').unwrap_or(chunk.len())];
            let transport = head
                .split("data-transport=\"")
                .nth(1)
                .and_then(|s| s.split('"').next())
                .unwrap_or_default()
                .to_string();
            (transport, chunk)
        })
        .collect()
}

/// The browser, or `None` after saying on stderr how to install it (a failure under CI).
fn browser_or_skip(test: &str) -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        assert!(
            !under_ci(),
            "Chromium is not installed and CI is set: the browser test must run in CI \
             (install it with `apt-get install -y chromium`; .ci/run does)"
        );
        // Straight to stderr, past the test harness's capture: a skip must be seen in `make test`.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test}: Chromium is not installed. Install it to run this test: `apt-get install -y \
             chromium` (Debian/Ubuntu), or set MCP_HARNESS_CHROMIUM to a Chromium or Chrome binary."
        );
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_draws_each_transport_as_a_sequence_diagram_in_chromium() {
    let Some(browser) = browser_or_skip("the_report_draws_each_transport_as_a_sequence_diagram_in_chromium") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let reports = dir.path().join("reports");
    Command::cargo_bin("mcp-harness")
        .expect("binary built")
        .current_dir(workspace())
        .arg("run")
        .args(SCENARIOS.map(|(_, path)| path))
        .args(["--reports", reports.to_str().expect("utf8")])
        .env("CI", "1")
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let page = reports.join("index.html");
    let url = format!("file://{}", page.display());

    let dom = headless(&browser, &dir.path().join("profile-dom"), &["--dump-dom".into()], &format!("{url}#all")).await;
    assert!(dom.contains("data-ready=\"true\""), "the page's script did not finish:\n{dom}");
    let drawn = diagrams(&dom);
    for (transport, _) in SCENARIOS {
        let mine: Vec<&str> = drawn.iter().filter(|(t, _)| t == transport).map(|(_, d)| *d).collect();
        assert!(
            !mine.is_empty(),
            "no diagram for the {transport} run; diagrams: {:?}",
            drawn.iter().map(|d| &d.0).collect::<Vec<_>>()
        );
        let all = mine.concat();
        for needle in [
            "class=\"lane client\"",
            "class=\"lane mock\"",
            "class=\"ev client_to_mock request",
            "class=\"ev mock_to_client response",
            "class=\"arrow\"",
            "class=\"dt\"",
        ] {
            assert!(all.contains(needle), "the {transport} diagram has no {needle}:\n{all}");
        }
    }
    let http: String = drawn.iter().filter(|(t, _)| t == "http").map(|(_, d)| *d).collect();
    assert!(http.contains(" get\""), "the HTTP diagram does not show the GET listener:\n{http}");
    let sse: String = drawn.iter().filter(|(t, _)| t == "legacy-sse").map(|(_, d)| *d).collect();
    assert!(sse.contains("SSE event=endpoint"), "the legacy-SSE diagram does not show the endpoint event:\n{sse}");

    // The screenshot: written beside, then moved into reports/ whole.
    let shot = dir.path().join("report-screenshot.png");
    let args =
        [format!("--screenshot={}", shot.display()), "--window-size=1280,2000".into(), "--hide-scrollbars".into()];
    headless(&browser, &dir.path().join("profile-shot"), &args, &format!("{url}#all")).await;
    let png = std::fs::read(&shot).expect("the screenshot was written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "not a screenshot of a drawn page ({} bytes)",
        png.len()
    );
    let target = workspace().join("reports/report-screenshot.png");
    std::fs::write(&target, png).unwrap_or_else(|e| panic!("writing {}: {e}", target.display()));
}

/// The `<tr class="run" …>` rows of the dumped DOM's run table, in page order: (id, hidden).
fn run_rows(dom: &str) -> Vec<(String, bool)> {
    dom.match_indices("<tr class=\"run")
        .map(|(i, _)| {
            let head = &dom[i..i + dom[i..].find('>').unwrap_or(0)];
            let id = head.split("id=\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or_default().to_string();
            (id, head.contains(" hidden"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_puts_failures_first_and_marks_the_event_a_failed_check_is_about() {
    let Some(browser) = browser_or_skip("the_report_puts_failures_first_and_marks_the_event_a_failed_check_is_about")
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).expect("mkdir");
    // Two passing runs, one planted failing check (the client's tools/list is the event it
    // is about), one snapshot edited so that the run fails on its snapshot alone.
    for (_, path) in SCENARIOS {
        let from = workspace().join(path);
        let name = from.file_name().expect("name").to_owned();
        std::fs::copy(&from, scenarios.join(&name)).expect("copy scenario");
        std::fs::copy(from.with_extension("snap"), scenarios.join(&name).with_extension("snap")).expect("copy snap");
    }
    let planted = workspace().join(SCENARIOS[0].1);
    let yaml = std::fs::read_to_string(&planted).expect("read");
    std::fs::write(
        scenarios.join("planted-failure.yaml"),
        yaml.replacen("name: blank-lines-skipped", "name: planted-failure", 1)
            + "  - not_sent: {method: tools/list}\n    must: \"planted: fails whenever the client lists tools\"\n",
    )
    .expect("write planted");
    let snap = scenarios.join("get-listener-delivers-messages.snap");
    let text = std::fs::read_to_string(&snap).expect("read snap");
    assert!(text.contains("list_changed"), "the http snapshot changed; pick another line to edit");
    std::fs::write(&snap, text.replacen("list_changed", "list_CHANGED", 1)).expect("edit snap");

    let reports = dir.path().join("reports");
    Command::cargo_bin("mcp-harness")
        .expect("binary built")
        .current_dir(workspace())
        .arg("run")
        .arg(&scenarios)
        .args(["--reports", reports.to_str().expect("utf8")])
        .env("CI", "1")
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1);
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reports.join("results.json")).expect("results.json"))
            .expect("json");
    let runs = results["runs"].as_array().expect("runs");
    let n_of = |name: &str| runs.iter().position(|r| r["scenario"] == name).expect(name) + 1;
    let (planted_n, snap_n) = (n_of("planted-failure"), n_of("get-listener-delivers-messages"));
    // A snapshot-only failure is a failure in results.json too.
    let snap_failures = &runs[snap_n - 1]["failures"];
    assert_eq!(snap_failures[0]["check"], "snapshot", "{snap_failures}");
    let about = &runs[planted_n - 1]["failures"][0]["about"][0];
    assert!(about["event"].is_u64(), "the planted failure points at no event: {}", runs[planted_n - 1]);

    let url = format!("file://{}", reports.join("index.html").display());
    // Opened plain: the two failures first, the passing runs filtered out, chips counted.
    let dom = headless(&browser, &dir.path().join("p1"), &["--dump-dom".into()], &url).await;
    assert!(dom.contains("data-ready=\"true\""), "the page's script did not finish:\n{dom}");
    let rows = run_rows(&dom);
    assert_eq!(rows.len(), 4, "{rows:?}");
    let first: Vec<&str> = rows[..2].iter().map(|(id, _)| id.as_str()).collect();
    for n in [planted_n, snap_n] {
        assert!(first.contains(&format!("run-{n}").as_str()), "run {n} is not listed first: {rows:?}");
    }
    assert!(rows[..2].iter().all(|(_, hidden)| !hidden), "a failure is hidden: {rows:?}");
    assert!(rows[2..].iter().all(|(_, hidden)| *hidden), "passing runs are shown on opening: {rows:?}");
    assert!(dom.contains(">2 failed</button>") && dom.contains(">2 passed</button>"), "count chips missing");

    // The planted failure opened: its event marked, named, and linked from the failure.
    let dom =
        headless(&browser, &dir.path().join("p2"), &["--dump-dom".into()], &format!("{url}#run-{planted_n}")).await;
    let ev_id = format!("ev-{planted_n}-{}-{}", about["connection"], about["event"]);
    let marked = dom.find(&format!("id=\"{ev_id}\"")).map(|i| &dom[dom[..i].rfind('<').unwrap_or(0)..i]);
    assert!(
        marked.is_some_and(|head| head.contains(" about\"") && head.contains("request")),
        "event {ev_id} is not marked: {marked:?}"
    );
    assert!(dom.contains("data-about=\"check 3 (not_sent)\""), "the marked event does not name its check");
    assert!(dom.contains(&format!("href=\"#{ev_id}\"")), "the failure does not link to its event");
    let marked_events = dom
        .match_indices("<div class=\"ev ")
        .filter(|(i, _)| dom[*i..*i + dom[*i..].find('>').unwrap_or(0)].contains(" about\""))
        .count();
    assert_eq!(marked_events, 1, "more than the one tools/list event is marked");

    // The snapshot-only failure: listed under Failures, with the diff right after.
    let dom = headless(&browser, &dir.path().join("p3"), &["--dump-dom".into()], &format!("{url}#run-{snap_n}")).await;
    let detail = &dom[dom.find("class=\"run-detail\"").expect("opened")..];
    let failures = detail.find(">Failures<").expect("a Failures section");
    let diff = detail.find("class=\"diff\"").expect("the diff");
    assert!(failures < diff && detail[failures..diff].contains("snapshot: the wire transcript differs"), "{detail}");
    assert!(detail[diff..].contains("list_CHANGED"), "the diff does not show the edited line");
}
