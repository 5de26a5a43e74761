//! The results contract: the `results.json` document `mcp-harness run` writes (and prints
//! with `--format json`), the one document CI jobs and other tools read. The harness's report
//! writers, the matrix, `merge` and the HTML report read and write only these types.
//!
//! # Compatibility
//!
//! [`Document::format_version`] is [`FORMAT_VERSION`]. Within one format version a field is
//! only ever added, never removed, renamed or given another meaning, and an added field is
//! optional to read (it has a default), so a reader written against version N reads every
//! document of version N, older or newer, as long as it ignores members it does not know
//! (serde's default; these types do). A status or verdict added to an enum is such an
//! addition: a reader matches the names it knows and treats the rest as "needs a look".
//! Removing or changing the meaning of a field, or of a status, is a new format version;
//! [`Document::parse`] refuses a version it does not know and says which it reads. Documents
//! written before the field existed carry no `format_version` and are version 1.
//!
//! # Layout
//!
//! - [`document`] — the document: [`Document`], [`FORMAT_VERSION`], [`Totals`], [`Partition`].
//! - [`run`] — one run's result ([`RunResult`]): status, checks, steps, snapshot, baseline.
//!
//! # Serde style
//!
//! `results.json` is read by tools this crate does not know, so the rule is the
//! compatibility one above: names are `snake_case` (`rename_all` on every enum; the tagged
//! ones name their tag, `state` and `how`), no type denies unknown fields, a struct with
//! optional members carries `#[skip_serializing_none]` (an absent `Option` reads as
//! `None`), and every other member added after the first version says `#[serde(default)]`,
//! with `skip_serializing_if` where an empty value is left out of the document.

pub mod document;
pub mod run;

pub use document::{Document, FORMAT_VERSION, Partition, Totals};
pub use run::*;
