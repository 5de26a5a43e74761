//! The stdio capture: `mcp-harness record --out F -- <server command…>` stands where the
//! server's command stood in a host's config. It spawns the real server and relays stdin,
//! stdout and stderr byte for byte as they come (no line buffering on the relay: a partial
//! line reaches the client as the server wrote it), recording each line of each direction
//! with its time; it passes SIGTERM, SIGINT and SIGHUP on to the server, and when the server
//! has exited it writes the scenario and exits with the server's status.

use super::capture::{Captured, ConnectionCapture};
use super::secrets::Secrets;
use mcp_scenario::wire::Recorded;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The capture being built, shared by the relay tasks.
#[derive(Clone)]
struct Log {
    start: Instant,
    inner: Arc<Mutex<(Vec<Captured>, Secrets)>>,
}

impl Log {
    fn t_us(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    fn push(&self, make: impl FnOnce(u64, &mut Secrets) -> Captured) {
        let t = self.t_us();
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (events, secrets) = &mut *guard;
        let e = make(t, secrets);
        events.push(e);
    }
}

/// Splits a byte stream into lines for the record; the relay itself never waits for one.
#[derive(Default)]
struct Lines {
    partial: Vec<u8>,
}

impl Lines {
    fn feed(&mut self, chunk: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for &b in chunk {
            if b == b'\n' {
                out.push(std::mem::take(&mut self.partial));
            } else {
                self.partial.push(b);
            }
        }
        out
    }
}

/// Copies `from` to `to` as it arrives, handing each chunk to `seen`; returns at EOF (or
/// when `to` is gone: the reader side keeps draining so the writer never blocks).
async fn relay(mut from: impl AsyncRead + Unpin, mut to: Option<impl AsyncWrite + Unpin>, mut seen: impl FnMut(&[u8])) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        seen(&buf[..n]);
        if let Some(w) = to.as_mut()
            && (w.write_all(&buf[..n]).await.is_err() || w.flush().await.is_err())
        {
            to = None;
        }
    }
}

fn client_line(t_us: u64, s: &mut Secrets, raw: &[u8]) -> Captured {
    let (bytes, json) = s.line(raw);
    Captured::ClientLine { t_us, bytes: Recorded::whole(&bytes), json }
}

fn server_line(t_us: u64, s: &mut Secrets, raw: &[u8], terminated: bool) -> Captured {
    let (bytes, _) = s.line(raw);
    Captured::ServerLine { t_us, bytes: Recorded::whole(&bytes), terminated }
}

/// Runs the server `command` with the relay until it exits; returns its capture and the
/// exit code to exit with (the server's, or 128 + the signal that killed it).
pub async fn record(command: &[String], secrets: Secrets) -> std::io::Result<(ConnectionCapture, i32)> {
    use tokio::signal::unix::{SignalKind, signal};
    let (program, args) = command.split_first().ok_or_else(|| std::io::Error::other("no server command after `--`"))?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| std::io::Error::new(e.kind(), format!("starting the server {program:?}: {e}")))?;
    let log = Log { start: Instant::now(), inner: Arc::new(Mutex::new((Vec::new(), secrets))) };
    let pid = child.id().and_then(|p| i32::try_from(p).ok());

    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let l = log.clone();
    // Client → server. At EOF the server's stdin is closed (dropped) and the EOF recorded.
    let upstream = tokio::spawn(async move {
        let mut lines = Lines::default();
        let l2 = l.clone();
        relay(tokio::io::stdin(), stdin, |chunk| {
            for line in lines.feed(chunk) {
                l2.push(|t, s| client_line(t, s, &line));
            }
        })
        .await;
        if !lines.partial.is_empty() {
            let rest = std::mem::take(&mut lines.partial);
            l.push(|t, s| client_line(t, s, &rest));
        }
        l.push(|t_us, _| Captured::StdinEof { t_us });
    });
    let l = log.clone();
    let downstream = tokio::spawn(async move {
        let Some(stdout) = stdout else { return };
        let mut lines = Lines::default();
        let l2 = l.clone();
        relay(stdout, Some(tokio::io::stdout()), |chunk| {
            for line in lines.feed(chunk) {
                l2.push(|t, s| server_line(t, s, &line, true));
            }
        })
        .await;
        if !lines.partial.is_empty() {
            let rest = std::mem::take(&mut lines.partial);
            l.push(|t, s| server_line(t, s, &rest, false));
        }
    });
    let l = log.clone();
    let errors = tokio::spawn(async move {
        let Some(stderr) = stderr else { return };
        relay(stderr, Some(tokio::io::stderr()), |chunk| {
            let text = String::from_utf8_lossy(chunk).into_owned();
            l.push(|t_us, s| Captured::Stderr { t_us, bytes: Recorded::whole(s.text(&text).as_bytes()) });
        })
        .await;
    });

    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut hup = signal(SignalKind::hangup())?;
    let status = loop {
        let (name, sig) = tokio::select! {
            status = child.wait() => break status?,
            _ = term.recv() => ("SIGTERM", nix::sys::signal::Signal::SIGTERM),
            _ = int.recv() => ("SIGINT", nix::sys::signal::Signal::SIGINT),
            _ = hup.recv() => ("SIGHUP", nix::sys::signal::Signal::SIGHUP),
        };
        log.push(|t_us, _| Captured::Signal { t_us, name: name.into() });
        if let Some(pid) = pid {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
        }
    };
    // The server's output is drained before its exit is recorded and the scenario written;
    // the client's stdin may stay open past the server's exit, so that relay is left behind.
    let _ = downstream.await;
    let _ = errors.await;
    use std::os::unix::process::ExitStatusExt;
    let signal_name = status.signal().map(|s| {
        nix::sys::signal::Signal::try_from(s).map(|s| s.as_str().to_owned()).unwrap_or_else(|_| format!("signal {s}"))
    });
    log.push(|t_us, _| Captured::Exit { t_us, code: status.code(), signal: signal_name });
    upstream.abort();
    let code = status.code().or(status.signal().map(|s| 128 + s)).unwrap_or(1);
    let (events, secrets) = {
        let mut guard = log.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (events, secrets) = &mut *guard;
        (std::mem::take(events), secrets.take_redacted())
    };
    let capture = ConnectionCapture {
        transport: "stdio".into(),
        source: shlex::try_join(command.iter().map(String::as_str)).unwrap_or_default(),
        events,
        redacted: secrets,
    };
    Ok((capture, code))
}

#[cfg(test)]
mod tests {
    use super::Lines;

    #[test]
    fn lines_split_across_chunks() {
        let mut l = Lines::default();
        assert!(l.feed(b"{\"a\"").is_empty());
        assert_eq!(l.feed(b":1}\n{"), vec![b"{\"a\":1}".to_vec()]);
        assert_eq!(l.partial, b"{");
    }
}
