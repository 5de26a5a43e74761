//! The committed compatibility matrix (`reports/clients/<client>.md`) holds its passes to DESIGN
//! "A verdict is earned": every third-party cell that says `pass` names the check with an MCP
//! basis (or, in the driver self-test, the driver contract; or a `promise:` of that client's
//! own, which binds it alone) that the run judged.

use std::path::Path;

#[test]
fn every_pass_in_the_committed_matrix_rests_on_a_check_with_an_mcp_basis() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/clients");
    let mut pages = 0;
    let mut passes = 0;
    let mut bare = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("reports/clients is committed").flatten() {
        let path = entry.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // A client's page opens with its title; other pages (the grid, the re-triage notes)
        // are no client's.
        let Some(client) = name.strip_suffix(".md") else { continue };
        let text = std::fs::read_to_string(&path).expect("readable");
        if !text.starts_with(&format!("# {client}: scenario results")) {
            continue;
        }
        pages += 1;
        // | scenario | transport | result | baseline | reason | rests on |
        for row in text.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| scenario")) {
            let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
            let [scenario, transport, result, _baseline, _reason, rests_on, ..] = cells[..] else { continue };
            if !result.starts_with("pass") {
                continue;
            }
            passes += 1;
            if !["must: ", "should: ", "driver: ", "promise: "].iter().any(|p| rests_on.starts_with(p)) {
                bare.push(format!("{name}: {scenario} [{transport}] {result}: rests on {rests_on:?}"));
            }
        }
    }
    assert!(pages >= 4, "a page per driver under {}", dir.display());
    assert!(passes > 100, "the pages hold passes ({passes})");
    assert!(bare.is_empty(), "{} pass(es) rest on no check with an MCP basis:\n{}", bare.len(), bare.join("\n"));
}
