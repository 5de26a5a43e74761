//! `strip_header`: a header (any case) is removed from the request or the response.

use super::FaultOp;
use http::HeaderMap;
use mcp_scenario::via::Side;

pub(super) struct StripHeader {
    pub header: String,
    pub side: Side,
}

impl FaultOp for StripHeader {
    fn headers(&self, side: Side, headers: &mut HeaderMap) {
        if side == self.side {
            headers.remove(self.header.as_str());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_its_side_only_in_any_case() {
        let f = StripHeader { header: "MCP-Protocol-Version".into(), side: Side::Request };
        let mut h = HeaderMap::new();
        h.insert("mcp-protocol-version", http::HeaderValue::from_static("2025-11-25"));
        let mut r = h.clone();
        f.headers(Side::Response, &mut r);
        assert_eq!(r.len(), 1);
        f.headers(Side::Request, &mut h);
        assert!(h.is_empty());
    }
}
