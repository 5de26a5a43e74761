//! The proxies crate's one integration test binary: the fault proxy and nginx against a
//! tiny upstream on loopback, over real sockets.

mod fault_proxy;
mod nginx;
mod support;
