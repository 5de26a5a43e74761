//! The scenario loader the CLI uses (`mcp_harness::load::load`: YAML → Scenario, the mock's op
//! rules, the checks' rules) on any file: it loads or names the file (and, for a format
//! error, a line:column inside it), never panics. Regressions: fuzz/regressions/
//! scenario_loader/ (a test in harness/src/load.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// One scratch folder per fuzzing process (the loader reads a file, as the CLI does).
fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("mcp-fuzz-scenario-loader-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch folder");
        dir
    })
}

/// The file is named after its `name:` line when it has a usable one, so that inputs get
/// past the name-equals-stem rule to the validation behind it.
fn stem(text: &str) -> &str {
    let name = text.lines().find_map(|l| l.strip_prefix("name:")).map(str::trim).unwrap_or("");
    let usable = !name.is_empty() && name.len() < 64 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if usable { name } else { "fuzz" }
}

/// Lines as YAML counts them: a lone CR ends a line too (`str::lines` does not see it).
fn yaml_lines(data: &[u8]) -> usize {
    let ends = data.iter().enumerate().filter(|&(i, &b)| b == b'\n' || (b == b'\r' && data.get(i + 1) != Some(&b'\n')));
    ends.count() + 1
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let path = scratch().join(format!("{}.yaml", stem(&text)));
    std::fs::write(&path, data).expect("scratch file");
    let result = mcp_harness::load::load(&path);
    let _ = std::fs::remove_file(&path);
    let Err(error) = result else { return };
    let shown = error.to_string();
    let place = path.display().to_string();
    let rest = shown.strip_prefix(&place).unwrap_or_else(|| panic!("the error does not name the file: {shown}"));
    if let Some(at) = rest.strip_prefix(':').filter(|r| !r.starts_with(' ')) {
        let mut parts = at.splitn(3, ':');
        let line: usize = parts.next().and_then(|l| l.parse().ok()).unwrap_or_else(|| panic!("no line: {shown}"));
        let column: usize = parts.next().and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("no column: {shown}"));
        assert!(line <= yaml_lines(data), "line {line} is past the end: {shown}");
        assert!(line > 0 || column == 0, "column {column} on line 0: {shown}");
        assert!(parts.next().is_some_and(|m| !m.trim().is_empty()), "no message: {shown}");
    }
});
