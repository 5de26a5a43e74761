//! The HTML report in a real browser: `mcp-harness run` over a stdio, an HTTP and a
//! legacy-SSE scenario writes `index.html`; headless Chromium loads it from `file://` (the
//! page's own script draws it, nothing else is loaded), and the DOM it dumps must hold a
//! sequence diagram per run with both lanes and arrows each way. A screenshot of the page is
//! saved as `reports/report-screenshot.png`.
//!
//! Without Chromium the test says what to install and passes as skipped, except under
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_draws_each_transport_as_a_sequence_diagram_in_chromium() {
    let Some(browser) = chromium() else {
        assert!(
            !under_ci(),
            "Chromium is not installed and CI is set: the browser test must run in CI \
             (install it with `apt-get install -y chromium`; .ci/run does)"
        );
        // Straight to stderr, past the test harness's capture: a skip must be seen in `make test`.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED the_report_draws_each_transport_as_a_sequence_diagram_in_chromium: Chromium is not \
             installed. Install it to run this test: `apt-get install -y chromium` (Debian/Ubuntu), or set \
             MCP_HARNESS_CHROMIUM to a Chromium or Chrome binary."
        );
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
