//! The harness crate's one integration test binary: the scenario library (one test per
//! scenario file), the CLI's error paths, process hygiene and the committed schema.

mod architecture;
mod cli;
mod external;
mod hygiene;
mod layout;
mod scenarios;
mod secrets;
