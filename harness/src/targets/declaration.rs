//! What an external driver declares of itself (`clients/CONTRACT.md`): asked once before the
//! runs, by starting the command with `MCP_HARNESS_DECLARE=1`, so a plan that uses an op or
//! field the driver does not handle is skipped with the field named instead of run with the
//! field dropped. A command that prints no declaration (a client that is not a driver, or a
//! driver older than declarations) runs every plan as written, after one notice saying so.

use crate::process_group;
use mcp_scenario::Scenario;
use mcp_scenario::contract::{self, Declaration};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

/// The environment variable that asks a driver for its declaration.
pub const DECLARE_ENV: &str = "MCP_HARNESS_DECLARE";
/// The environment variable that tells every run the contract version the harness speaks.
pub const CONTRACT_ENV: &str = "MCP_HARNESS_CONTRACT";
/// How long a driver may take to print its declaration: an interpreter's start-up on a busy
/// machine, with room to spare.
const DECLARE_TIMEOUT: Duration = Duration::from_secs(15);
/// Lines read before giving up on finding the declaration.
const MAX_LINES: usize = 50;

/// What the harness learned of a driver.
#[derive(Debug, Clone)]
pub enum Declared {
    /// It declared itself.
    Yes(Declaration),
    /// It did not: why (shown once, in the notice).
    No(String),
}

impl Declared {
    /// Asks the program on `argv` for its declaration.
    pub async fn ask(argv: &[String]) -> Declared {
        let Some((program, args)) = argv.split_first() else { return Declared::No("the command line is empty".into()) };
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args).env(DECLARE_ENV, "1").env(CONTRACT_ENV, contract::VERSION);
        process_group::lead_own_group(&mut cmd, std::process::Stdio::null());
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return Declared::No(format!("it could not be started ({e})")),
        };
        let pgid = child.id().unwrap_or(0);
        let read = async {
            let Some(out) = child.stdout.take() else { return Declared::No("no stdout".into()) };
            let mut lines = BufReader::new(out).lines();
            for _ in 0..MAX_LINES {
                match lines.next_line().await {
                    Ok(Some(line)) if line.contains("\"contract\"") => {
                        return match Declaration::parse(&line) {
                            Ok(d) => Declared::Yes(d),
                            Err(e) => Declared::No(format!("its declaration line is wrong: {e}")),
                        };
                    }
                    Ok(Some(_)) => continue,
                    _ => break,
                }
            }
            Declared::No(format!("it printed no declaration when run with {DECLARE_ENV}=1"))
        };
        let declared = tokio::time::timeout(DECLARE_TIMEOUT, read).await.unwrap_or_else(|_| {
            Declared::No(format!(
                "it printed no declaration within {}s of being run with {DECLARE_ENV}=1",
                DECLARE_TIMEOUT.as_secs()
            ))
        });
        process_group::kill(pgid);
        let _ = child.wait().await;
        declared
    }

    /// The notice shown once before the runs, if any: an undeclared command, or a driver
    /// written against another contract version.
    pub fn notice(&self, target: &str) -> Option<String> {
        match self {
            Declared::No(why) => Some(format!(
                "note: {target} declares no driver contract ({why}): its plans run as written, and a plan field it ignores would go unnoticed. A driver declares the ops and fields it handles: see clients/CONTRACT.md."
            )),
            Declared::Yes(d) if d.contract.as_str() > contract::VERSION => Some(format!(
                "note: {target} declares driver contract {}, newer than this harness's {}: update mcp-harness.",
                d.contract,
                contract::VERSION
            )),
            Declared::Yes(d) => {
                let missed = d.missed();
                (!missed.is_empty()).then(|| {
                    let added: Vec<String> = missed
                        .iter()
                        .map(|(v, items)| {
                            format!("{v} added {}", items.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", "))
                        })
                        .collect();
                    format!(
                        "note: {target} declares driver contract {}; this harness speaks {}. Since then: {}. Plans that use an op or field the driver does not declare are skipped for it with the field named; update the driver (clients/CONTRACT.md).",
                        d.contract,
                        contract::VERSION,
                        added.join("; ")
                    )
                })
            }
        }
    }

    /// Why `scenario` is skipped for this driver, if it is: the first plan step using an op
    /// or field the driver does not declare.
    pub fn declines(&self, scenario: &Scenario) -> Option<String> {
        let Declared::Yes(d) = self else { return None };
        scenario.client.iter().enumerate().find_map(|(i, step)| {
            let item = d.lacks(step)?;
            let since = contract::since(&item).map(|v| format!("; it came in contract {v}")).unwrap_or_default();
            let op = item.split('.').next().unwrap_or_default();
            Some(format!(
                "step {} ({op}) uses `{item}`, which the driver does not declare (it declares contract {}{since})",
                i + 1,
                d.contract
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(line: &str) -> Declared {
        Declared::Yes(Declaration::parse(line).expect("parses"))
    }

    #[test]
    fn an_old_driver_is_told_what_changed_and_skips_what_it_lacks() {
        let d = declared(
            r#"{"contract":"2026-12-01","performs":{"connect":["handshake"],"request":["method"],"close":[]}}"#,
        );
        let notice = d.notice("cmd:x").expect("a notice");
        assert!(notice.contains("2026-12-05 added") && notice.contains("`connect.legacy_fallback`"), "{notice}");
        let scenario = crate::checks::testing::with_plan("  - op: connect\n    protocol_version: \"2026-07-28\"\n");
        let why = d.declines(&scenario).expect("skipped");
        assert_eq!(
            why,
            "step 1 (connect) uses `connect.protocol_version`, which the driver does not declare (it declares contract 2026-12-01; it came in contract 2026-12-05)"
        );
        let plain = crate::checks::testing::with_plan("  - op: connect\n  - op: request\n    method: ping\n");
        assert_eq!(d.declines(&plain), None);
    }

    #[test]
    fn a_current_driver_gets_no_notice_and_an_undeclared_one_runs_everything() {
        let current = format!(r#"{{"contract":"{}","performs":{{"connect":[]}}}}"#, contract::VERSION);
        assert_eq!(declared(&current).notice("cmd:x"), None);
        let none = Declared::No("it printed no declaration".into());
        assert!(none.notice("cmd:x").is_some_and(|n| n.contains("runs as written") || n.contains("run as written")));
        let scenario = crate::checks::testing::with_plan("  - op: connect\n    protocol_version: \"2026-07-28\"\n");
        assert_eq!(none.declines(&scenario), None);
    }

    #[tokio::test]
    async fn asks_the_program_and_reads_its_line() {
        let line = format!(r#"{{"contract":"{}","performs":{{"close":[]}}}}"#, contract::VERSION);
        let script = format!("[ \"$MCP_HARNESS_DECLARE\" = 1 ] && echo starting && echo '{line}'");
        match Declared::ask(&["sh".into(), "-c".into(), script]).await {
            Declared::Yes(d) => assert_eq!(d.contract, contract::VERSION),
            Declared::No(why) => panic!("not declared: {why}"),
        }
        match Declared::ask(&["sh".into(), "-c".into(), "echo hello".into()]).await {
            Declared::No(why) => assert!(why.contains("printed no declaration"), "{why}"),
            Declared::Yes(_) => panic!("declared"),
        }
    }
}
