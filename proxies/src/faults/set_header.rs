//! `set_header`: a header of the request or the response is set to a value, replacing
//! what the client or the upstream sent.

use super::FaultOp;
use http::{HeaderMap, HeaderName, HeaderValue};
use mcp_scenario::via::Side;

pub(super) struct SetHeader {
    pub header: String,
    pub value: String,
    pub side: Side,
}

impl FaultOp for SetHeader {
    fn headers(&self, side: Side, headers: &mut HeaderMap) {
        if side != self.side {
            return;
        }
        match (HeaderName::try_from(self.header.as_str()), HeaderValue::try_from(self.value.as_str())) {
            (Ok(name), Ok(value)) => {
                headers.insert(name, value);
            }
            _ => tracing::warn!(header = %self.header, "set_header: not a valid header; left as is"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_value() {
        let f = SetHeader { header: "MCP-Protocol-Version".into(), value: "2025-03-26".into(), side: Side::Request };
        let mut h = HeaderMap::new();
        h.insert("mcp-protocol-version", HeaderValue::from_static("2026-07-28"));
        f.headers(Side::Request, &mut h);
        assert_eq!(h.get("mcp-protocol-version").map(|v| v.as_bytes()), Some(&b"2025-03-26"[..]));
    }
}
