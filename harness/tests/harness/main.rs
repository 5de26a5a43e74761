//! The harness crate's one integration test binary: the scenario library (one test per
//! scenario file), the CLI's error paths, process hygiene and hostile external clients (`hostile`), the committed schema, the HTML
//! report in headless Chromium (`browser`), a host's recording judged by `check-record`
//! (`recording`), the planted-bug self-test against the reference client (`reference`) and
//! the persistent driver mode with a fake driver (`persistent`), the library's timing
//! margins (`margins`), the committed matrix's passes (`matrix`), and every message the mock
//! sends held to its revision's official schema (`mock_conformance`).

mod action;
mod architecture;
mod browser;
mod cli;
mod docs;
mod external;
mod files;
mod hostile;
mod hosts;
mod hygiene;
mod layout;
mod margins;
mod matrix;
mod mock_conformance;
mod partition;
mod persistent;
mod record;
mod recording;
mod reference;
mod scenarios;
mod secrets;
mod starvation;
