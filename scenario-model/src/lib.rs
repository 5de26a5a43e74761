//! The contracts every part of the harness agrees on: the scenario file format and the data
//! the mock records (the results the harness reports are the `mcp-results` crate's). Data only — no behaviour beyond
//! loading, validating and encoding it — so the mock, the harness, the reports and the
//! external drivers all read one definition.
//!
//! # Layout
//!
//! - [`scenario`] — one scenario file: name, transports, revision, and its three parts.
//! - [`plan`] — the client plan ([`ClientStep`]): the external-driver contract.
//! - [`contract`] — the driver contract's versions, drivers' declarations, its reference.
//! - [`script`] — the server script ([`ServerStep`]) and the value types its steps use.
//! - [`checks`] — check data ([`Check`]); evaluating them is the harness's job.
//! - [`basis`] — what a check rests on (`must` / `should` / `project`), beside its kind.
//! - [`payload`] — bytes from script fields (text/hex/base64/json/generate), reply lines.
//! - [`via`] — what sits between client and mock: nginx settings and the fault proxy's faults.
//! - [`wire`] — the recorded wire events ([`WireEvent`]).
//! - [`indent`] — the line whose indentation does not line up, for structural errors.
//! - [`load`](mod@load) — strict loading; errors name file:line:column and the field.
//! - [`schema`] — the JSON Schema generated from the format's types.
//! - [`signals`] — signal names as scenarios write them.
//! - [`error`] — [`ScenarioError`], the crate's one error enum.

pub mod basis;
pub mod checks;
pub mod contract;
pub mod error;
pub mod indent;
pub mod load;
pub mod payload;
pub mod plan;
pub mod scenario;
pub mod schema;
pub mod script;
pub mod signals;
pub mod via;
pub mod wire;

pub use checks::Check;
pub use error::ScenarioError;
pub use load::load;
pub use plan::ClientStep;
pub use scenario::{Revision, Scenario, TransportName, TransportSet};
pub use script::ServerStep;
pub use wire::WireEvent;

/// serde's default for boolean fields that are on unless the file says otherwise.
pub(crate) fn default_true() -> bool {
    true
}
