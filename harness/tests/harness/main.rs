//! The harness crate's one integration test binary: the scenario library (one test per
//! scenario file), the CLI's error paths, process hygiene and hostile external clients (`hostile`), the committed schema, the HTML
//! report in headless Chromium (`browser`), a host's recording judged by `check-record`
//! (`recording`) and the planted-bug self-test against the reference client (`reference`).

mod architecture;
mod browser;
mod cli;
mod docs;
mod external;
mod hostile;
mod hygiene;
mod layout;
mod record;
mod recording;
mod reference;
mod scenarios;
mod secrets;
