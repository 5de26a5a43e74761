//! The wire transcript of one run as the checks and the snapshot read it: the mock crate's
//! [`mcp_mock::transcript`], re-exported under the name the harness has always used.
//!
//! It lives in the mock crate since `mcp-mock serve|stdio --record` writes the snapshot
//! rendering itself (a host recorded there has no harness around it), and the mock cannot
//! depend on the harness; one renderer keeps a recording and a `.snap` the same text.

pub use mcp_mock::transcript::*;
