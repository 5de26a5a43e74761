//! `strip_header`: a header (any case) is removed from the request or the response.

use super::{FaultOp, side_of};
use http::HeaderMap;
use mcp_scenario::via::Side;

pub(super) struct StripHeader {
    pub header: String,
    pub side: Side,
}

impl StripHeader {
    fn strip(&self, headers: &mut HeaderMap) {
        headers.remove(self.header.as_str());
    }
}

impl FaultOp for StripHeader {
    fn request(&self, headers: &mut HeaderMap) {
        if let Some(h) = side_of(self.side, Side::Request, headers) {
            self.strip(h);
        }
    }

    fn response(&self, headers: &mut HeaderMap) {
        if let Some(h) = side_of(self.side, Side::Response, headers) {
            self.strip(h);
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
        f.response(&mut r);
        assert_eq!(r.len(), 1);
        f.request(&mut h);
        assert!(h.is_empty());
    }
}
