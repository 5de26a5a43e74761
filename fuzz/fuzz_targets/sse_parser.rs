//! The SSE parser (`mcp_transports::sse::SseParser`): any bytes, fed whole or one byte at a
//! time, give the same events, last event id and retry; no dispatched event is empty or over
//! the cap. Regressions: fuzz/regressions/sse_parser/ (a test in sse.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_transports::sse::{SseItem, SseParser};

/// Everything the parser reports for `data` fed in chunks of `size`.
fn parse(max: usize, data: &[u8], size: usize) -> (Vec<SseItem>, Option<String>, Option<u64>) {
    let mut parser = SseParser::new(max);
    let items = data.chunks(size).flat_map(|c| parser.feed(c)).collect();
    (items, parser.last_event_id().map(str::to_owned), parser.retry())
}

fuzz_target!(|data: &[u8]| {
    for max in [16, 1 << 20] {
        let whole = parse(max, data, data.len().max(1));
        assert_eq!(whole, parse(max, data, 1), "chunking changed what was parsed");
        for item in &whole.0 {
            match item {
                SseItem::Event(e) => {
                    assert!(!e.data.is_empty(), "an empty event was dispatched");
                    assert!(e.data.len() <= max, "an event over the cap was dispatched");
                }
                SseItem::Oversize { limit } => assert_eq!(*limit, max),
            }
        }
    }
});
