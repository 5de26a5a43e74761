//! The physical ceiling of a stdio round trip: a JSONL server that answers every line at
//! once with a fixed result carrying the line's id, spliced in as raw bytes (std, blocking,
//! flushed per line). No JSON parsing, no recording; a reply, not the line itself, because a
//! correlating client (the bundled one) would take an echoed request for a server request.

use std::io::{BufRead, BufWriter, Write};

fn main() {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut output = BufWriter::new(std::io::stdout().lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let reply = [
            &br#"{"jsonrpc":"2.0","id":"#[..],
            id_of(&line),
            br#","result":{"content":[{"type":"text","text":"the quick brown fox jumps"}]}}"#,
            b"\n",
        ];
        if reply.iter().try_for_each(|part| output.write_all(part)).and_then(|_| output.flush()).is_err() {
            return;
        }
    }
}

/// The raw bytes after `"id":` up to the next `,` or `}`; `null` when there are none.
fn id_of(line: &[u8]) -> &[u8] {
    let key = br#""id":"#;
    let Some(at) = line.windows(key.len()).position(|w| w == key) else { return b"null" };
    let rest = &line[at + key.len()..];
    let end = rest.iter().position(|&b| b == b',' || b == b'}').unwrap_or(rest.len());
    &rest[..end]
}
