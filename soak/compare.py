#!/usr/bin/env python3
"""Compares the repetitions `soak/run.sh` wrote under DIR/1, DIR/2, ... with the first.

A run (scenario file x transport) differs in its verdict when its status or the checks it
failed (failures and warnings: by check, not by message, since messages may quote timings)
is not the same as in repetition 1. For the bundled client the notes (SPEC.md's rules, which
judge it) count too, and so does its transcript (DIR/<i>/transcripts/..., one file per run):
both ends are ours, and the transcript is its snapshot. For a third-party client neither is
a verdict (SPEC.md's rules judge only our client; its snapshot mismatch fails nothing): a
run whose notes or transcript alone differed is listed apart, with the first differing line,
for a person to read (most often the client's own timing: a GET listener that came before or
after a request), and is no failure of the soak. A run skipped in both (a step the driver
cannot do) is compared by status alone: its transcript is the client closing after the step
it could not do, which no check judges and no snapshot keeps. Exits 1 when any verdict
differed. A transcript whose lines are the same but in another order (exchange numbers
aside) is marked so: most often the client sent two messages at once and they arrived the
other way round, which is still a difference, but one to read as such.

A client's own race is no flake of the harness: a run its baseline lists `flaky:` (with the
race named in a comment there, e.g. the TypeScript SDK's two concurrent POSTs after a
cancellation) is reported `flaky (baseline)` whatever its status, in CI and in every report,
so a status that differs there is listed apart with the rest that is no verdict, and fails
nothing.

    soak/compare.py DIR [BASELINE]
"""
import difflib
import json
import re
import sys
from pathlib import Path


def runs_of(rep: Path):
    """(path, transport) -> (status, failed checks, notes, transcript name, bundled) for one
    repetition."""
    doc = json.loads((rep / "results.json").read_text())
    out = {}
    for r in doc["runs"]:
        failed = tuple(sorted(f"{kind}:{c['check']}" for kind in ("failures", "warnings") for c in r.get(kind) or []))
        notes = tuple(sorted(f"notes:{c['check']}" for c in r.get("notes") or []))
        name = f"{r['path'].lstrip('/').removesuffix('.yaml')}.{r['transport']}.txt"
        out[(r["path"], r["transport"])] = (r["status"], failed, notes, name, r.get("target") == "bundled")
    return out


def flaky_of(baseline: Path | None) -> set[str]:
    """The `flaky:` entries of a baseline file (`name` or `name@transport`)."""
    if baseline is None or not baseline.is_file():
        return set()
    entries, section = set(), None
    for line in baseline.read_text().splitlines():
        if line and not line.startswith((" ", "#")):
            section = line.rstrip(":").strip()
        elif section == "flaky" and line.strip().startswith("- "):
            entries.add(line.strip()[2:].split("#")[0].strip())
    return entries


def listed_flaky(flaky: set[str], path: str, transport: str) -> bool:
    name = Path(path).stem
    return name in flaky or f"{name}@{transport}" in flaky


def transcripts_of(rep: Path):
    """File under transcripts/ -> its text: the harness names them (one per run)."""
    root = rep / "transcripts"
    return {str(f.relative_to(root)): f.read_text() for f in root.rglob("*.txt")} if root.is_dir() else {}


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
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = Path(sys.argv[1])
    flaky = flaky_of(Path(sys.argv[2]) if len(sys.argv) == 3 else None)
    reps = sorted((p for p in root.iterdir() if p.is_dir() and p.name.isdigit()), key=lambda p: int(p.name))
    reps = [p for p in reps if (p / "results.json").exists()]
    if len(reps) < 2:
        print(f"soak: fewer than two repetitions with results under {root}", file=sys.stderr)
        return 2
    first, first_texts = runs_of(reps[0]), transcripts_of(reps[0])
    verdicts, wire, races = {}, {}, {}
    for rep in reps[1:]:
        other, texts = runs_of(rep), transcripts_of(rep)
        for key in sorted(set(first) | set(other)):
            a, b = first.get(key), other.get(key)
            if a is None or b is None:
                verdicts.setdefault(key, []).append((rep.name, "ran in only one of the two"))
                continue
            (status_a, failed_a, notes_a, name, bundled), (status_b, failed_b, notes_b, _, _) = a, b
            if listed_flaky(flaky, *key) and (status_a, failed_a) != (status_b, failed_b):
                why = f"status {status_a} -> {status_b}, checks {list(failed_a)} -> {list(failed_b)}"
                races.setdefault(key, []).append((rep.name, why))
                continue
            if status_a != status_b:
                verdicts.setdefault(key, []).append((rep.name, f"status {status_a} -> {status_b}"))
                continue
            if failed_a != failed_b:
                verdicts.setdefault(key, []).append((rep.name, f"checks {list(failed_a)} -> {list(failed_b)}"))
                continue
            whys = []
            if notes_a != notes_b:
                whys.append(f"notes {list(notes_a)} -> {list(notes_b)}")
            ta, tb = first_texts.get(name), texts.get(name)
            # A run skipped in both is compared by status alone (see above).
            if ta != tb and status_a != "skipped":
                if ta is None or tb is None:
                    whys.append("transcript: written in only one of the two")
                elif same_lines_reordered(ta, tb):
                    whys.append("transcript (same lines, another order): " + first_difference(ta, tb))
                else:
                    whys.append("transcript: " + first_difference(ta, tb))
            if whys:
                (verdicts if bundled else wire).setdefault(key, []).append((rep.name, "; ".join(whys)))
    total = len(first)

    def show(found):
        for (path, transport), diffs in sorted(found.items()):
            print(f"  {path} [{transport}]: differed in {len(diffs)} of {len(reps) - 1}")
            for rep, why in diffs[:3]:
                print(f"    repetition {rep}: {why}")

    if verdicts:
        print(f"soak: {root}: the verdicts of {len(verdicts)} of {total} runs differed from repetition {reps[0].name} in {len(reps)} repetitions:")
        show(verdicts)
    else:
        print(f"soak: {root}: {len(reps)} repetitions, {total} runs each, no verdict differed from repetition {reps[0].name}")
    if wire:
        print(f"soak: {root}: {len(wire)} runs of a third-party client differed in their notes or transcript alone (no verdict; read them):")
        show(wire)
    if races:
        print(f"soak: {root}: {len(races)} runs its baseline lists flaky (the client's own race, reported 'flaky (baseline)' every time) differed in status or checks:")
        show(races)
    return 1 if verdicts else 0


if __name__ == "__main__":
    sys.exit(main())
