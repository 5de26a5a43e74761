//! `retry_on_502`: a gateway that sends the request again while the upstream answers 502,
//! `tries` times in all — what runs a tool twice behind a proxy (seed 003 §6.3).

use super::FaultOp;

pub(super) struct RetryOn502 {
    pub tries: u32,
}

impl FaultOp for RetryOn502 {
    fn tries_on_502(&self) -> u32 {
        self.tries
    }
}
