//! The mock crate's one integration test binary: the `mcp-mock` HTTP servers driven over
//! real sockets (reqwest for ordinary exchanges, raw TCP for the faults), and the crate's
//! module layering.

mod http;
mod layers;
