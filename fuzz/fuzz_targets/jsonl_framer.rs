//! The stdio transport's JSON Lines framer (`mcp_transports::stdio::Framer`): any bytes, fed
//! whole or one byte at a time, give the same frames, and no frame is over the cap, blank or
//! holds a line end. Each line is then read as the transport reads it, straight into an
//! [`Inbound`], which must be what classifying its parsed `Value` gives (or the same error).
//! Regressions: fuzz/regressions/jsonl_framer/ (a test in stdio.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_transports::Inbound;
use mcp_transports::stdio::{Frame, Framer};

/// The frames of `data` fed in chunks of `size` (`None`: an oversize line).
fn frames(max: usize, data: &[u8], size: usize) -> Vec<Option<Vec<u8>>> {
    let mut framer = Framer::new(max);
    let mut out = Vec::new();
    let mut on = |f: Frame<'_>| {
        out.push(match f {
            Frame::Line(line) => Some(line.to_vec()),
            Frame::Oversize => None,
        })
    };
    for chunk in data.chunks(size) {
        framer.push(chunk, &mut on);
    }
    framer.finish(&mut on);
    out
}

fuzz_target!(|data: &[u8]| {
    for max in [8, 1 << 20] {
        let whole = frames(max, data, data.len().max(1));
        assert_eq!(whole, frames(max, data, 1), "chunking changed the frames");
        for line in whole.iter().flatten() {
            assert!(line.len() <= max, "a line over the cap was emitted");
            assert!(!line.contains(&b'\n'), "a line holds a newline");
            assert!(line.iter().any(|b| !matches!(b, b' ' | b'\t' | b'\r')), "a blank line was emitted");
        }
    }
    for line in frames(1 << 20, data, data.len().max(1)).iter().flatten() {
        let Ok(text) = std::str::from_utf8(line) else { continue };
        let parsed = serde_json::from_str::<Inbound>(text).map_err(|e| e.to_string());
        let classified = serde_json::from_str(text).map(Inbound::from_value).map_err(|e| e.to_string());
        assert_eq!(parsed, classified, "parsed straight and through a Value, {text:?} differs");
    }
});
