//! Loading a scenario for the harness: the mock's loader (the format and the server script,
//! [`mcp_mock::load`]) plus the load-time validation of the checks, which live here
//! ([`crate::checks`]). Every scenario the harness runs is loaded through [`load`].

use crate::checks;
use crate::error::HarnessError;
use mcp_scenario::Scenario;
use mcp_scenario::load::Locator;
use std::path::Path;

/// Reads and validates one scenario file; errors name file:line:column and the field.
pub fn load(path: &Path) -> Result<Scenario, HarnessError> {
    let scenario = mcp_mock::load(path)?;
    if let Err(invalid) = checks::validate(&scenario) {
        // Only a broken file is read a second time, to say where the check is.
        let text = std::fs::read_to_string(path).unwrap_or_default();
        return Err(Locator::new(path, &text).check(invalid.index, invalid.message).into());
    }
    Ok(scenario)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "name: x\nsummary: s\ntransport: http\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/list\n    as: lst\n  - op: request\n    method: ping\n    as: png\n  - op: reply\n    result: {\"tools\": []}\nchecks:\n  - outcome: {step: 2, ok: true}\n";

    /// Loads GOOD with `check` appended; the error message, if any.
    fn with_check(check: &str) -> Result<(), String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = dir.path().join("x.yaml");
        std::fs::write(&path, format!("{GOOD}  - {check}\n")).map_err(|e| e.to_string())?;
        load(&path).map(|_| ()).map_err(|e| e.to_string().replace(&path.display().to_string(), "x.yaml"))
    }

    #[test]
    fn good_checks_load() {
        for check in [
            "outcome: {step: 1, ok: false, error: boom}",
            "cancelled: {request: lst}",
            "answered: {request: png}",
            "signal: {name: TERM}",
            "http: {method: tools/list, header: Mcp-Session-Id, value: \"{session}\", every: true}",
        ] {
            assert_eq!(with_check(check), Ok(()), "{check}");
        }
    }

    #[test]
    fn bad_checks_name_file_line_column_and_field() {
        let cases = [
            (
                "outcome: {step: 9}",
                "field `step`: plan step 9 does not exist (the client plan has 2 steps, numbered from 1)",
            ),
            (
                "outcome: {step: 1, ok: true, error: boom}",
                "fields `ok: true` and `error`: an expected error implies `ok: false`",
            ),
            ("cancelled: {request: png}", "field `request`: no server `expect` is labelled \"png\""),
            ("answered: {request: lst}", "field `request`: no server `request` is labelled \"lst\""),
            ("signal: {name: SIGFOO}", "field `name`: unknown signal \"SIGFOO\""),
            ("http: {header: \"bad header\"}", "field `header`: \"bad header\" is not a valid header name"),
            ("http: {value: x}", "fields `value` / `every` need `header`"),
            ("http: {header: accept, every: true, count: 2}", "fields `every` and `count`: give one, not both"),
            (
                "http: {http_method: GET, count: 1, at_most: 1}",
                "fields `at_most` and `count`: give one, not both (`at_most` is the \"no more than N\" form)",
            ),
            (
                "sent: {method: ping, count: 1, at_most: 1}",
                "fields `count` and `at_most`: give one, not both (`at_most` is the \"no more than N\" form)",
            ),
            ("http: {connection: 0}", "field `connection`: connections are numbered from 1"),
            (
                "http: {http_method: get}",
                "field `http_method`: \"get\" must be an uppercase HTTP method such as POST, GET, DELETE",
            ),
        ];
        for (check, message) in cases {
            assert_eq!(with_check(check), Err(format!("x.yaml:21:5: check 2: {message}")), "{check}");
        }
        let e = with_check("http: {header: X-Custom}").expect_err("not recorded");
        assert!(e.starts_with("x.yaml:21:5: check 2: field `header`: \"X-Custom\" is not recorded"), "{e}");
    }

    /// Each file under fuzz/regressions/scenario_loader/ (written as `<its name>.yaml`, so
    /// that its `name:` can match) loads or is refused with an error that names the file and
    /// a line:column inside it; never a panic (what `fuzz/fuzz_targets/scenario_loader.rs`
    /// asserts).
    #[test]
    fn fuzz_regressions_load_or_name_the_place() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/scenario_loader");
        let mut files: Vec<_> =
            std::fs::read_dir(&dir).expect("the regressions folder").map(|e| e.expect("entry").path()).collect();
        files.sort();
        assert!(!files.is_empty(), "no regressions in {}", dir.display());
        let scratch = tempfile::tempdir().expect("a scratch folder");
        for file in files {
            let data = std::fs::read(&file).expect("a regression file");
            let path = scratch.path().join(file.file_name().expect("a name")).with_extension("yaml");
            std::fs::write(&path, &data).expect("the scratch file");
            let Err(e) = load(&path) else { continue };
            let shown = e.to_string();
            let rest = shown
                .strip_prefix(&path.display().to_string())
                .unwrap_or_else(|| panic!("{}: {shown}", file.display()));
            if let Some(at) = rest.strip_prefix(':').filter(|r| !r.starts_with(' ')) {
                let line: usize =
                    at.split(':').next().and_then(|l| l.parse().ok()).unwrap_or_else(|| panic!("{shown}"));
                // Lines as YAML counts them: a lone CR ends a line too.
                let ends = data
                    .iter()
                    .enumerate()
                    .filter(|&(i, &b)| b == b'\n' || (b == b'\r' && data.get(i + 1) != Some(&b'\n')));
                let lines = ends.count() + 1;
                assert!(line <= lines, "{}: line {line} of {lines}: {shown}", file.display());
            }
        }
    }
}
