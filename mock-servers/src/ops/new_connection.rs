//! `new_connection`: the steps after it run on the client's next connection (a respawned
//! stdio mock, the next Streamable HTTP session, the next legacy SSE stream). The script is
//! split there before it runs (`mcp_scenario::script::connection_parts`), so the step
//! itself does nothing.

use super::op::{About, Fault, Op};
use super::rules::{Problem, Validation};
use super::transports::Transports;
use mcp_scenario::script::step;

impl Op for step::NewConnection {
    fn about(&self) -> About {
        About::new(Transports::ALL, Fault::None, "(the steps below run on the client's next connection)")
    }

    fn validate(&self, cx: &mut Validation<'_>) -> Result<(), Problem> {
        cx.new_connection();
        Ok(())
    }
}
