//! A byte-level WHATWG server-sent-events parser (SPEC §4 "SSE parsing").
//!
//! Why our own parser rather than a crate: a conformance harness must see exactly what the
//! server put on the wire. We need partial events (a stream that drops mid-event must
//! discard the partial event, not guess), CR-only line ends and a CR/LF pair split across
//! two reads, exact event boundaries, the `id`/`retry` bookkeeping resumption depends on,
//! and a hard memory bound with resynchronisation when one event is over the size cap.
//! Feeding arbitrary chunk boundaries must give the same events as one big chunk.
//!
//! Deviations from WHATWG, both deliberate: an event whose data is empty is not dispatched
//! (an MCP server's "priming" event `id: 1\ndata:\n\n` carries no JSON-RPC message, but its
//! id still becomes the last event id, as WHATWG says); and an event dropped for its size
//! commits nothing, not even its `id`.

/// The UTF-8 byte order mark, stripped only at stream start.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
/// Room for a field name in front of a value of `max_event_bytes`, so that a `data:` line
/// carrying a message of exactly the cap still fits.
const LINE_SLACK: usize = 64;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event` field; `None` when absent or empty (WHATWG's default type `message`).
    pub event: Option<String>,
    /// The `data` lines joined with `\n`; never empty for a dispatched event.
    pub data: String,
    /// The `id` field this event itself carried, if any (see [`SseParser::last_event_id`]
    /// for the id that persists across events).
    pub id: Option<String>,
    /// The `retry` field this event carried, if valid.
    pub retry: Option<u64>,
}

/// What [`SseParser::feed`] produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseItem {
    /// A complete event.
    Event(SseEvent),
    /// An event went over the cap: it is dropped, and everything up to the next blank line
    /// is skipped without being buffered.
    Oversize {
        /// The cap in bytes.
        limit: usize,
    },
}

/// What the current line is, decided by its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineMode {
    /// A field line, buffered.
    Field,
    /// A `:` comment: skipped without buffering.
    Comment,
    /// Part of an oversize event: skipped without buffering.
    Discard,
}

/// An incremental parser: feed it chunks as they arrive, in order.
#[derive(Debug)]
pub struct SseParser {
    max_event_bytes: usize,
    /// Bytes of the BOM matched so far at stream start; `None` once past the start.
    bom_matched: Option<usize>,
    /// The previous byte was a CR: a following LF belongs to the same line end.
    after_cr: bool,
    line: Vec<u8>,
    /// Whether the current line has any byte (it may not be buffered).
    line_started: bool,
    mode: LineMode,
    /// The rest of the current event is being discarded.
    discarding: bool,
    data: String,
    data_lines: usize,
    event: Option<String>,
    event_id: Option<String>,
    event_retry: Option<u64>,
    /// WHATWG "last event ID buffer" (pending until the event completes).
    id_buffer: String,
    /// WHATWG "last event ID string": what a reconnect sends as `Last-Event-ID`.
    last_event_id: String,
    retry: Option<u64>,
}

impl SseParser {
    /// A parser for a fresh stream; events over `max_event_bytes` of data are dropped.
    pub fn new(max_event_bytes: usize) -> Self {
        SseParser {
            max_event_bytes,
            bom_matched: Some(0),
            after_cr: false,
            line: Vec::new(),
            line_started: false,
            mode: LineMode::Field,
            discarding: false,
            data: String::new(),
            data_lines: 0,
            event: None,
            event_id: None,
            event_retry: None,
            id_buffer: String::new(),
            last_event_id: String::new(),
            retry: None,
        }
    }

    /// The id a reconnect sends as `Last-Event-ID`: the latest `id` of a completed event
    /// (events with empty data count). `None` when no id was seen or it was reset to empty.
    pub fn last_event_id(&self) -> Option<&str> {
        if self.last_event_id.is_empty() { None } else { Some(&self.last_event_id) }
    }

    /// The reconnection delay the server asked for with `retry`, in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Parses one chunk and returns the events it completed. Never panics on any input.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseItem> {
        let mut out = Vec::new();
        let mut rest = chunk;
        // Strip a BOM at stream start, even when it is split across chunks.
        while let Some(matched) = self.bom_matched {
            let Some((&b, tail)) = rest.split_first() else { return out };
            if b == BOM[matched] {
                rest = tail;
                self.bom_matched = if matched + 1 == BOM.len() { None } else { Some(matched + 1) };
            } else {
                // Not a BOM after all: replay the bytes we swallowed as content.
                self.bom_matched = None;
                let swallowed = BOM[..matched].to_vec();
                self.scan(&swallowed, &mut out);
            }
        }
        self.scan(rest, &mut out);
        out
    }

    fn scan(&mut self, mut bytes: &[u8], out: &mut Vec<SseItem>) {
        while !bytes.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if bytes[0] == b'\n' {
                    bytes = &bytes[1..];
                    continue;
                }
            }
            match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(pos) => {
                    self.push_content(&bytes[..pos], out);
                    self.after_cr = bytes[pos] == b'\r';
                    self.end_line(out);
                    bytes = &bytes[pos + 1..];
                }
                None => {
                    self.push_content(bytes, out);
                    bytes = &[];
                }
            }
        }
    }

    /// Adds bytes (no line ends) to the current line, buffering only field lines.
    fn push_content(&mut self, bytes: &[u8], out: &mut Vec<SseItem>) {
        if bytes.is_empty() {
            return;
        }
        if !self.line_started {
            self.line_started = true;
            self.mode = if self.discarding {
                LineMode::Discard
            } else if bytes[0] == b':' {
                LineMode::Comment
            } else {
                LineMode::Field
            };
        }
        if self.mode != LineMode::Field {
            return;
        }
        if self.line.len() + bytes.len() > self.max_event_bytes.saturating_add(LINE_SLACK) {
            self.overflow(out);
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn end_line(&mut self, out: &mut Vec<SseItem>) {
        let started = std::mem::replace(&mut self.line_started, false);
        let mode = std::mem::replace(&mut self.mode, LineMode::Field);
        if !started {
            self.end_event(out);
            return;
        }
        if mode == LineMode::Field {
            let line = std::mem::take(&mut self.line);
            self.field(&line, out);
        }
    }

    fn field(&mut self, line: &[u8], out: &mut Vec<SseItem>) {
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        let value = String::from_utf8_lossy(value);
        match name {
            b"data" => {
                let extra = value.len() + usize::from(self.data_lines > 0);
                if self.data.len() + extra > self.max_event_bytes {
                    self.overflow(out);
                    return;
                }
                if self.data_lines > 0 {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.data_lines += 1;
            }
            b"event" => self.event = if value.is_empty() { None } else { Some(value.into_owned()) },
            b"id" if !value.contains('\0') => {
                self.id_buffer = value.to_string();
                self.event_id = Some(value.into_owned());
            }
            // All digits but too large for u64 fails the parse: ignored like any invalid value.
            b"retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(ms);
                    self.event_retry = Some(ms);
                }
            }
            _ => {}
        }
    }

    /// The current event went over the cap: report once, drop it, skip to the blank line.
    fn overflow(&mut self, out: &mut Vec<SseItem>) {
        if self.discarding {
            return;
        }
        out.push(SseItem::Oversize { limit: self.max_event_bytes });
        self.discarding = true;
        self.mode = LineMode::Discard;
        self.line = Vec::new();
        self.reset_event();
        // An oversize event commits nothing, not even its id.
        self.id_buffer = self.last_event_id.clone();
    }

    fn end_event(&mut self, out: &mut Vec<SseItem>) {
        if std::mem::replace(&mut self.discarding, false) {
            return;
        }
        self.last_event_id = self.id_buffer.clone();
        if !self.data.is_empty() {
            out.push(SseItem::Event(SseEvent {
                event: self.event.take(),
                data: std::mem::take(&mut self.data),
                id: self.event_id.take(),
                retry: self.event_retry.take(),
            }));
        }
        self.reset_event();
    }

    fn reset_event(&mut self) {
        self.data = String::new();
        self.data_lines = 0;
        self.event = None;
        self.event_id = None;
        self.event_retry = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(items: Vec<SseItem>) -> Vec<SseEvent> {
        items
            .into_iter()
            .filter_map(|i| match i {
                SseItem::Event(e) => Some(e),
                SseItem::Oversize { .. } => None,
            })
            .collect()
    }

    fn parse(input: &[u8]) -> Vec<SseItem> {
        SseParser::new(1024).feed(input)
    }

    fn ev(data: &str) -> SseEvent {
        SseEvent { data: data.into(), ..SseEvent::default() }
    }

    #[test]
    fn simple_event_with_every_field() {
        let got = events(parse(b"event: message\nid: 7\nretry: 250\ndata: {\"a\":1}\n\n"));
        assert_eq!(
            got,
            vec![SseEvent {
                event: Some("message".into()),
                data: "{\"a\":1}".into(),
                id: Some("7".into()),
                retry: Some(250)
            }]
        );
    }

    #[test]
    fn data_field_forms() {
        for (input, data) in [
            // Only one leading space is stripped; no colon means an empty value.
            (&b"data:  two\n\n"[..], " two"),
            (b"data:x\n\n", "x"),
            (b"data\ndata: y\n\n", "\ny"),
            // Multi-line data is joined with LF.
            (b"data: a\ndata: b\ndata: c\n\n", "a\nb\nc"),
            // Invalid UTF-8 is replaced, not fatal.
            (b"data: a\xFFb\n\n", "a\u{FFFD}b"),
        ] {
            assert_eq!(events(parse(input)), vec![ev(data)], "{input:?}");
        }
    }

    #[test]
    fn all_line_end_styles() {
        for input in [
            &b"data: a\r\ndata: b\r\n\r\n"[..],
            b"data: a\rdata: b\r\r",
            b"data: a\ndata: b\n\n",
            b"data: a\r\ndata: b\r\r",
        ] {
            assert_eq!(events(parse(input)), vec![ev("a\nb")], "{input:?}");
        }
    }

    #[test]
    fn cr_then_lf_in_next_chunk_is_one_line_end() {
        let mut p = SseParser::new(1024);
        assert!(p.feed(b"data: a\r").is_empty());
        // The LF completes the CR line end; it is not a blank line.
        assert!(p.feed(b"\n").is_empty());
        assert_eq!(events(p.feed(b"\r\n")), vec![ev("a")]);
    }

    #[test]
    fn comments_and_unknown_fields_ignored() {
        let got = events(parse(b": keep-alive\n:\ndata: x\nfoo: bar\n: another\n\n: tail\n\n"));
        assert_eq!(got, vec![ev("x")]);
    }

    #[test]
    fn empty_data_not_dispatched_but_id_kept() {
        let mut p = SseParser::new(1024);
        assert!(p.feed(b"id: prime-1\ndata:\n\n").is_empty());
        assert_eq!(p.last_event_id(), Some("prime-1"));
        assert!(p.feed(b"id: 2\n\n").is_empty());
        assert_eq!(p.last_event_id(), Some("2"));
        // The id persists for later events without their own id.
        assert_eq!(events(p.feed(b"data: x\n\n")), vec![ev("x")]);
        assert_eq!(p.last_event_id(), Some("2"));
        // An empty id resets it.
        p.feed(b"id\n\n");
        assert_eq!(p.last_event_id(), None);
    }

    #[test]
    fn id_with_nul_ignored_and_retry_digits_only() {
        let mut p = SseParser::new(1024);
        p.feed(b"id: ok\n\nid: a\0b\ndata: x\n\n");
        assert_eq!(p.last_event_id(), Some("ok"));
        p.feed(b"retry: 12a\nretry: -5\nretry:\nretry: 99999999999999999999999\ndata: y\n\n");
        assert_eq!(p.retry(), None);
        let got = events(p.feed(b"retry: 40\ndata: z\n\n"));
        assert_eq!(got[0].retry, Some(40));
        assert_eq!(p.retry(), Some(40));
    }

    #[test]
    fn partial_event_at_eof_is_not_dispatched() {
        let mut p = SseParser::new(1024);
        assert_eq!(events(p.feed(b"data: one\n\nid: 9\ndata: two\n")), vec![ev("one")]);
        // The stream ends here: "two" is never dispatched and id 9 never committed.
        assert_eq!(p.last_event_id(), None);
    }

    #[test]
    fn bom_only_at_stream_start() {
        assert_eq!(events(parse(b"\xEF\xBB\xBFdata: a\n\n")), vec![ev("a")]);
        // Split across chunks.
        let mut p = SseParser::new(1024);
        assert!(p.feed(b"\xEF").is_empty());
        assert!(p.feed(b"\xBB").is_empty());
        assert_eq!(events(p.feed(b"\xBFdata: a\n\n")), vec![ev("a")]);
        // A second BOM is content: the field name is no longer "data".
        assert!(events(parse(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n")).is_empty());
        // A partial BOM followed by other bytes is replayed as content.
        assert_eq!(events(parse(b"\xEFdata: a\n\ndata: b\n\n")), vec![ev("b")]);
    }

    #[test]
    fn oversize_event_dropped_and_parser_resyncs() {
        let mut p = SseParser::new(8);
        let items = p.feed(b"id: 1\ndata: 12345678\n\nid: 2\ndata: 123456789\ndata: more\n\ndata: ok\n\n");
        assert_eq!(
            items,
            vec![
                SseItem::Event(SseEvent { id: Some("1".into()), ..ev("12345678") }),
                SseItem::Oversize { limit: 8 },
                SseItem::Event(ev("ok"))
            ]
        );
        // The oversize event's id was not committed.
        assert_eq!(p.last_event_id(), Some("1"));
        // Joined lines count too.
        assert_eq!(p.feed(b"data: 1234\ndata: 1234\n\n"), vec![SseItem::Oversize { limit: 8 }]);
    }

    #[test]
    fn oversize_memory_is_bounded_on_endless_line() {
        let mut p = SseParser::new(16);
        let mut reports = 0;
        reports += p.feed(b"data: ").len();
        for _ in 0..10_000 {
            reports += p.feed(&[b'x'; 100]).len();
            assert!(p.line.len() <= 16 + LINE_SLACK);
        }
        assert_eq!(reports, 1);
        // Endless comments never buffer either.
        let mut q = SseParser::new(16);
        q.feed(b":");
        for _ in 0..1000 {
            q.feed(&[b'c'; 100]);
        }
        assert!(q.line.is_empty());
        assert_eq!(events(q.feed(b"\ndata: fine\n\n")), vec![ev("fine")]);
    }

    /// Every split point of a rich stream gives the same items as one chunk.
    #[test]
    fn chunk_split_at_every_byte_position() {
        let input: &[u8] =
            b"\xEF\xBB\xBF: hi\r\nevent: message\r\nid: 1\r\ndata: {\"x\":\r\ndata: 1}\r\n\r\nretry: 5\rdata: b\r\rid: 3\ndata:\n\ndata: c\n\nid: 4\ndata: partial";
        let mut whole_parser = SseParser::new(1024);
        let whole = whole_parser.feed(input);
        assert_eq!(events(whole.clone()).len(), 3);
        for split in 0..=input.len() {
            let mut p = SseParser::new(1024);
            let mut got = p.feed(&input[..split]);
            got.extend(p.feed(&input[split..]));
            assert_eq!(got, whole, "split at {split}");
            assert_eq!(p.last_event_id(), Some("3"), "split at {split}");
            assert_eq!(p.retry(), Some(5));
        }
        // And byte by byte.
        let mut p = SseParser::new(1024);
        let got: Vec<SseItem> = input.iter().flat_map(|b| p.feed(std::slice::from_ref(b))).collect();
        assert_eq!(got, whole);
    }

    #[test]
    fn oversize_split_at_every_byte_position() {
        let input: &[u8] = b"data: 0123456789abcdef\r\ndata: x\r\n\r\ndata: ok\r\n\r\n";
        for split in 0..=input.len() {
            let mut p = SseParser::new(10);
            let mut got = p.feed(&input[..split]);
            got.extend(p.feed(&input[split..]));
            assert_eq!(got, vec![SseItem::Oversize { limit: 10 }, SseItem::Event(ev("ok"))], "split at {split}");
        }
    }

    /// Each regression under fuzz/regressions/sse_parser/ parses alike whole and byte by
    /// byte, and no event is empty or over the cap (what `fuzz/fuzz_targets/sse_parser.rs`
    /// asserts).
    #[test]
    fn fuzz_regressions_parse_alike_in_any_chunking() {
        let parse = |max: usize, data: &[u8], size: usize| {
            let mut p = SseParser::new(max);
            let items: Vec<SseItem> = data.chunks(size).flat_map(|c| p.feed(c)).collect();
            (items, p.last_event_id().map(str::to_owned), p.retry())
        };
        for (path, data) in crate::stdio::tests::fuzz_regressions("sse_parser") {
            for max in [16, 1 << 20] {
                let whole = parse(max, &data, data.len().max(1));
                assert_eq!(whole, parse(max, &data, 1), "{}: chunking changed what was parsed", path.display());
                for item in &whole.0 {
                    let fine = match item {
                        SseItem::Event(e) => !e.data.is_empty() && e.data.len() <= max,
                        SseItem::Oversize { limit } => *limit == max,
                    };
                    assert!(fine, "{}: {item:?}", path.display());
                }
            }
        }
    }
}
