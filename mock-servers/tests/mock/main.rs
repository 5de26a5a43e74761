//! The mock crate's one integration test binary: the mocks driven in-process (stdio on
//! duplex pipes, HTTP on a loopback listener), the process edge through the binary, the
//! mock run by a person (`serve`, `stdio <scenario>`, `--record`), and
//! the crate's module layering.

mod binary;
mod http;
mod layers;
mod oauth;
mod standalone;
mod stdio;
mod support;
