//! How many times the costly steps of judging a run ran, process-wide: reads of a run's
//! record from its first byte ([`crate::record::RunFollower`]), transcripts built
//! ([`crate::transcript::Transcript`]) and redactors learnt from a run's wire
//! ([`crate::transcript::Redactor::for_run`]).
//!
//! A run reads its record once (incrementally where a plan step waits on it) and builds one
//! transcript and one redactor; the harness's pipeline test holds a real run to that, so a
//! second read added anywhere on the way fails it. Counted in every build: three relaxed
//! increments per run cost nothing, and a counter kept only in debug builds would let the
//! test pass on zeros in a release one.

use std::sync::atomic::{AtomicUsize, Ordering};

static RECORD_READS: AtomicUsize = AtomicUsize::new(0);
static TRANSCRIPTS: AtomicUsize = AtomicUsize::new(0);
static REDACTORS: AtomicUsize = AtomicUsize::new(0);

/// The counts so far in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    /// Reads of a run directory's records from their first byte.
    pub record_reads: usize,
    /// [`crate::transcript::Transcript`]s built.
    pub transcripts: usize,
    /// [`crate::transcript::Redactor`]s learnt from a run.
    pub redactors: usize,
}

impl Tally {
    /// The counts now.
    pub fn now() -> Tally {
        Tally {
            record_reads: RECORD_READS.load(Ordering::Relaxed),
            transcripts: TRANSCRIPTS.load(Ordering::Relaxed),
            redactors: REDACTORS.load(Ordering::Relaxed),
        }
    }

    /// What was counted between `earlier` and this tally.
    pub fn since(self, earlier: Tally) -> Tally {
        Tally {
            record_reads: self.record_reads - earlier.record_reads,
            transcripts: self.transcripts - earlier.transcripts,
            redactors: self.redactors - earlier.redactors,
        }
    }
}

pub(crate) fn record_read() {
    RECORD_READS.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn transcript_built() {
    TRANSCRIPTS.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn redactor_built() {
    REDACTORS.fetch_add(1, Ordering::Relaxed);
}
