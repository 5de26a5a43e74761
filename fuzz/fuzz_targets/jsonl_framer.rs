//! The stdio transport's JSON Lines framer (`mcp_transports::stdio::Framer`): any bytes, fed
//! whole or one byte at a time, give the same frames, and no frame is over the cap, blank or
//! holds a line end. Regressions: fuzz/regressions/jsonl_framer/ (a test in stdio.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
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
});
