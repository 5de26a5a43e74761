//! The harness crate's one integration test binary: the scenario library (one test per
//! scenario file), the CLI's error paths, process hygiene, the committed schema and the
//! planted-bug self-test against the reference client (`reference`).

mod architecture;
mod cli;
mod external;
mod hygiene;
mod layout;
mod record;
mod reference;
mod scenarios;
mod secrets;
