#!/usr/bin/env python3
"""Compares the repetitions `soak/run.sh` wrote under DIR/1, DIR/2, ... with the first.

A run (scenario file x transport) differs when its status or the checks it failed
(failures, warnings, notes: by check, not by message, since messages may quote timings) is
not the same as in repetition 1; a transcript (DIR/<i>/transcripts/..., one file per run)
differs when its text is not. A run skipped in both (a step the driver cannot do) is compared
by status alone: its transcript is the client closing after the step it could not do, which
no check judges and no snapshot keeps. Prints
each differing run with the repetitions it differed in and the first differing line, and
exits 1 when there was any. A transcript whose lines are the same but in another order
(exchange numbers aside) is marked so: most often the client sent two messages at once and
they arrived the other way round, which is still a difference, but one to read as such.

    soak/compare.py DIR
"""
import difflib
import json
import re
import sys
from pathlib import Path


def runs_of(rep: Path):
    """(path, transport) -> (status, failed checks) for one repetition."""
    doc = json.loads((rep / "results.json").read_text())
    out = {}
    for r in doc["runs"]:
        checks = tuple(
            sorted(f"{kind}:{c['check']}" for kind in ("failures", "warnings", "notes") for c in r.get(kind, []))
        )
        out[(r["path"], r["transport"])] = (r["status"], checks)
    return out


def transcripts_of(rep: Path):
    """File under transcripts/ -> its text: the harness names them (one per run)."""
    root = rep / "transcripts"
    return {str(f.relative_to(root)): f.read_text() for f in root.rglob("*.txt")} if root.is_dir() else {}


def skipped_transcripts(runs):
    """The names under transcripts/ of the skipped runs among `runs` (as `runs_of` gives
    them): `<path without .yaml>.<transport>.txt`, as the harness names them (an absolute
    path loses its leading `/`)."""
    return {
        f"{path.lstrip('/').removesuffix('.yaml')}.{transport}.txt"
        for (path, transport), (status, _) in runs.items()
        if status == "skipped"
    }


def first_difference(a: str, b: str) -> str:
    for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0):
        if line.startswith(("-", "+")) and not line.startswith(("---", "+++")):
            return line
    return "(whitespace only)"


def same_lines_reordered(a: str, b: str) -> bool:
    """The two texts hold the same lines, exchange numbers (#4) aside, in another order."""
    norm = lambda t: sorted(re.sub(r"#\d+", "#n", line) for line in t.splitlines())
    return a != b and norm(a) == norm(b)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = Path(sys.argv[1])
    reps = sorted((p for p in root.iterdir() if p.is_dir() and p.name.isdigit()), key=lambda p: int(p.name))
    reps = [p for p in reps if (p / "results.json").exists()]
    if len(reps) < 2:
        print(f"soak: fewer than two repetitions with results under {root}", file=sys.stderr)
        return 2
    first, first_texts = runs_of(reps[0]), transcripts_of(reps[0])
    first_skipped = skipped_transcripts(first)
    differing = {}
    for rep in reps[1:]:
        other, texts = runs_of(rep), transcripts_of(rep)
        skipped_in_both = first_skipped & skipped_transcripts(other)
        for key in sorted(set(first) | set(other)):
            a, b = first.get(key), other.get(key)
            if a == b:
                continue
            if a is None or b is None:
                why = "ran in only one of the two"
            elif a[0] != b[0]:
                why = f"status {a[0]} -> {b[0]}"
            else:
                why = f"checks {list(a[1])} -> {list(b[1])}"
            differing.setdefault(key, []).append((rep.name, why))
        for name in sorted(set(first_texts) | set(texts)):
            a, b = first_texts.get(name), texts.get(name)
            if a != b and name not in skipped_in_both:
                if a is None or b is None:
                    why = "transcript: written in only one of the two"
                elif same_lines_reordered(a, b):
                    why = "transcript (same lines, another order): " + first_difference(a, b)
                else:
                    why = "transcript: " + first_difference(a, b)
                differing.setdefault(("transcripts/" + name, ""), []).append((rep.name, why))
    total = len(first)
    if not differing:
        print(f"soak: {root}: {len(reps)} repetitions, {total} runs each, none differed from repetition {reps[0].name}")
        return 0
    print(f"soak: {root}: {len(differing)} of {total} runs differed from repetition {reps[0].name} in {len(reps)} repetitions:")
    for (path, transport), diffs in sorted(differing.items()):
        print(f"  {path}{f' [{transport}]' if transport else ''}: differed in {len(diffs)} of {len(reps) - 1}")
        for rep, why in diffs[:3]:
            print(f"    repetition {rep}: {why}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
