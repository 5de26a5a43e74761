//! The GitHub Action (`action.yml`, `action/*.sh`) and the workflows `docs/` shows, checked
//! offline: `action.yml` against SchemaStore's action-metadata schema, each workflow (every
//! `yaml` block of docs/ci.md and docs/github-actions-example.yml) against its workflow
//! schema — both vendored in `tests/schemas/` (its README says from where) and read with the
//! `jsonschema` crate — the inputs the action passes to its script against the ones it
//! declares, and `action/run.sh` itself run against the reference client as the action's
//! run step would.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn yaml(text: &str, what: &str) -> Value {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("{what} is not YAML: {e}"))
}

fn schema_errors(schema: &str, doc: &Value) -> Vec<String> {
    let path = repo().join("harness/tests/schemas").join(schema);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("vendored schema")).expect("JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    validator.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path)).collect()
}

fn action() -> Value {
    yaml(&std::fs::read_to_string(repo().join("action.yml")).expect("action.yml"), "action.yml")
}

#[test]
fn the_action_is_valid_action_metadata() {
    let errors = schema_errors("github-action.json", &action());
    assert!(errors.is_empty(), "action.yml:\n{}", errors.join("\n"));
}

/// The schema is no rubber stamp: an action without `runs`, and a composite step that names
/// no shell, are refused.
#[test]
fn the_action_schema_refuses_what_github_refuses() {
    let mut broken = action();
    broken.as_object_mut().expect("a mapping").remove("runs");
    assert!(!schema_errors("github-action.json", &broken).is_empty());
    let mut broken = action();
    broken["runs"]["steps"][1].as_object_mut().expect("a step").remove("shell");
    assert!(!schema_errors("github-action.json", &broken).is_empty());
}

#[test]
fn the_documented_workflows_are_valid() {
    let ci = std::fs::read_to_string(repo().join("docs/ci.md")).expect("docs/ci.md");
    let blocks: Vec<&str> =
        ci.split("```yaml\n").skip(1).map(|b| b.split("```").next().expect("a closed block")).collect();
    assert!(blocks.len() >= 2, "docs/ci.md shows a TypeScript and a Python SDK's workflow");
    let example = std::fs::read_to_string(repo().join("docs/github-actions-example.yml")).expect("example");
    for (i, text) in blocks.iter().copied().chain([example.as_str()]).enumerate() {
        let doc = yaml(text, &format!("workflow {i}"));
        let errors = schema_errors("github-workflow.json", &doc);
        assert!(errors.is_empty(), "workflow {i}:\n{}\n{text}", errors.join("\n"));
    }
    let uses_action = blocks.iter().filter(|b| b.contains("uses: OWNER/mcp-harness@")).count();
    assert!(uses_action >= 2, "the workflows use the action");
}

/// Each input is passed to a step (as `INPUT_<NAME>`) and each `INPUT_` the scripts read is
/// an input: a renamed input cannot be silently dropped.
#[test]
fn every_input_reaches_the_scripts_and_every_script_input_is_declared() {
    let action = action();
    let inputs: Vec<String> = action["inputs"].as_object().expect("inputs").keys().cloned().collect();
    let steps = action["runs"]["steps"].as_array().expect("steps");
    let passed: Vec<String> = steps
        .iter()
        .filter_map(|s| s["env"].as_object())
        .flat_map(|env| env.keys().filter_map(|k| k.strip_prefix("INPUT_")).map(str::to_string))
        .collect();
    for input in &inputs {
        if input == "install" {
            continue; // read by the install step's `if:`
        }
        let var = input.to_uppercase().replace('-', "_");
        assert!(passed.contains(&var), "input {input} reaches no step as INPUT_{var}");
    }
    let scripts = ["action/run.sh", "action/install.sh"]
        .map(|s| std::fs::read_to_string(repo().join(s)).unwrap_or_else(|e| panic!("{s}: {e}")))
        .join("\n");
    let read = regex::Regex::new(r"INPUT_([A-Z_]+)").expect("pattern");
    for m in read.captures_iter(&scripts) {
        assert!(passed.iter().any(|p| p == &m[1]), "a script reads INPUT_{} that no step passes", &m[1]);
    }
    for step in steps.iter().filter_map(|s| s["run"].as_str()) {
        for script in step.split('"').filter(|w| w.starts_with("$GITHUB_ACTION_PATH/")) {
            let file = script.trim_start_matches("$GITHUB_ACTION_PATH/");
            assert!(repo().join(file).is_file(), "a step runs {file}, which does not exist");
        }
    }
}

/// What `action/run.sh` wrote: its exit code, `$GITHUB_OUTPUT`, `$GITHUB_STEP_SUMMARY`, stdout.
struct Step {
    code: Option<i32>,
    output: String,
    summary: String,
    stdout: String,
}

fn run_step(dir: &Path, inputs: &[(&str, &str)]) -> Step {
    let (output, summary) = (dir.join("output"), dir.join("summary"));
    let _ = std::fs::remove_file(&output);
    let _ = std::fs::remove_file(&summary);
    let mut cmd = Command::new("bash");
    cmd.arg(repo().join("action/run.sh"))
        .current_dir(repo())
        .env("MCP_HARNESS", env!("CARGO_BIN_EXE_mcp-harness"))
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("INPUT_REPORTS", dir.join("reports"));
    for (k, v) in inputs {
        cmd.env(format!("INPUT_{k}"), v);
    }
    let out = cmd.output().expect("bash runs");
    Step {
        code: out.status.code(),
        output: std::fs::read_to_string(&output).unwrap_or_default(),
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}

#[test]
fn the_run_step_reports_and_fails_only_on_unexpected_results() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = [
        ("COMMAND", "clients/reference/run"),
        ("SCENARIOS", "scenarios/stdio/handshake-order.yaml scenarios/stdio/string-ids.yaml"),
        ("PARTITION", "1/1"),
    ];
    let step = run_step(tmp.path(), &base);
    assert_eq!(step.code, Some(0), "{}", step.stdout);
    assert!(step.output.contains("exit-code=0\n"), "{}\n{}", step.output, step.stdout);
    assert!(step.output.contains("artifact=mcp-harness-report-shard-1-of-1\n"), "{}", step.output);
    assert!(
        step.summary.contains("### mcp-harness (shard 1/1)") && step.summary.contains("2 passed"),
        "{}",
        step.summary
    );
    assert!(tmp.path().join("reports/junit.xml").is_file() && tmp.path().join("reports/index.html").is_file());

    // A baseline that lists a passing run: unexpected, exit-code 1, and the step itself
    // still exits 0 so that the upload runs.
    let baseline = tmp.path().join("baseline.yml");
    std::fs::write(&baseline, "client:\n  - handshake-order\n").expect("write");
    let mut inputs = base.to_vec();
    let baseline = baseline.display().to_string();
    inputs.push(("BASELINE", &baseline));
    let step = run_step(tmp.path(), &inputs);
    assert_eq!(step.code, Some(0));
    assert!(step.output.contains("exit-code=1\n"), "{}\n{}", step.output, step.stdout);
    assert!(step.stdout.contains("::error::mcp-harness: unexpected results"), "{}", step.stdout);

    // The merge job: the shard's folder merged into one report.
    let shard = tmp.path().join("shard-1");
    std::fs::rename(tmp.path().join("reports"), &shard).expect("move");
    let shards = format!("{}/shard-*", tmp.path().display());
    let step = run_step(tmp.path(), &[("MERGE", &shards)]);
    assert!(step.output.contains("exit-code=0\n"), "judged afresh, without the shard's baseline: {}", step.stdout);
    assert!(step.stdout.contains("merge") && step.summary.contains("2 passed"), "{}\n{}", step.stdout, step.summary);

    // Inputs it cannot use are refused with what to write.
    let step = run_step(tmp.path(), &[("COMMAND", "x"), ("STRICT", "yes")]);
    assert!(step.output.contains("exit-code=2") && step.stdout.contains("write true or false"), "{}", step.stdout);
    let step = run_step(tmp.path(), &[]);
    assert!(step.stdout.contains("the command input is empty"), "{}", step.stdout);
}
