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
//!
//! # Serde style
//!
//! The scenario format is written by people and refused loudly: every struct a file spells
//! out field by field is `#[serde(deny_unknown_fields)]` (a typo is an error that names the
//! field; the loader's own position-finding parse, `Spans`, is lenient on purpose). Names are
//! `snake_case`; steps are tagged by the field that names them (`op`, a fault's `fault`),
//! checks by their key (`- outcome: {…}`); transport names are `kebab-case` and revisions
//! their dates, as files write them. A struct or enum with optional members carries
//! `#[skip_serializing_none]` (an absent `Option` reads as `None`, serde's own rule, and is
//! not written back); any other member that may be left out says `#[serde(default)]` (or
//! `default = "…"` for a value other than the type's), and `skip_serializing_if` with the
//! type's own test (`Vec::is_empty`, `BTreeMap::is_empty`, `std::ops::Not::not` for an off
//! flag) when `record` must not write it. No `flatten`: it would lose `deny_unknown_fields`
//! ([`payload`] says more). [`wire`] is a record the mock writes, not a file people write:
//! it does not deny unknown fields.

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
