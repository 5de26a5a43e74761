//! `stall`: the request reaches the upstream, its answer never reaches the client.

use super::FaultOp;

pub(super) struct Stall;

impl FaultOp for Stall {
    fn stalls(&self) -> bool {
        true
    }
}
