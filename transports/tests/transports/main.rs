//! The transports crate's one integration test binary: every transport driven end to end
//! through the public API, against a hand-written HTTP server (`support`), wiremock, or a
//! child process.

mod client;
mod legacy_sse;
mod oauth;
mod stdio;
mod streamable_http;
mod support;
