//! Signal names used in scenarios.

use nix::sys::signal::Signal;

/// The signal for a name such as `SIGTERM` or `TERM`.
pub fn by_name(name: &str) -> Option<Signal> {
    let full = if name.starts_with("SIG") { name.to_string() } else { format!("SIG{name}") };
    full.parse().ok()
}
