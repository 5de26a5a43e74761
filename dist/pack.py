#!/usr/bin/env python3
"""Packs built mcp-harness and mcp-mock binaries for npm and PyPI (`make dist`).

Writes into OUT:

- `mcp-harness-<v>.tgz`: the npm launcher package (`dist/npm/mcp-harness/`, with the
  package.json written here): `bin` entries `mcp-harness` and `mcp-mock`, and an optional
  dependency on every platform package, of which npm installs the one whose `os`/`cpu`
  match (the esbuild and biome pattern: no install script, no download at install time).
- `mcp-harness-<platform>-<v>.tgz`: the platform package `@mcp-harness/<platform>`, holding
  the two binaries. `npm pack` makes both tarballs, so they are what npm itself publishes.
- `mcp_transport_harness-<v>-py3-none-<tag>.whl`: a wheel holding the two binaries in its
  `.data/scripts/` folder, which pip installs onto the environment's `bin/` with their mode.
  Written here with the standard library rather than by maturin (`bindings = "bin"` makes
  the same layout): maturin would run its own cargo build of the workspace (a second
  release build on a 2-core machine, with flags of its own) and is one more tool to install,
  while a wheel is a zip with a fixed layout (PEP 427, PEP 491). The platform tag is
  `manylinux_2_<N>_<arch>`, N being the newest glibc symbol version the binaries need
  (read from them), so pip installs it only where that glibc exists.

A `make dist` packs the binaries of the machine it runs on. A release builds the platform
package on each platform it supports and packs the launcher once with `--platforms` naming
them all; by default the launcher depends on this machine's platform package alone, so that
it never names a package that was not built.

Usage: pack.py --bin-dir target/release --out target/dist [--platforms linux-x64,...] [--no-strip]
"""

import argparse
import base64
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BINARIES = ("mcp-harness", "mcp-mock")
WHEEL_NAME = "mcp_transport_harness"
PYPI_NAME = "mcp-transport-harness"
DESCRIPTION = (
    "A conformance harness for MCP client transports: scriptable mock servers replay a library "
    "of transport faults against your MCP client, record the wire and check it."
)
LICENSE = "MIT OR Apache-2.0"


def die(message):
    print(f"pack.py: {message}", file=sys.stderr)
    sys.exit(2)


def npm_platform():
    """This machine as npm names it (`process.platform`-`process.arch`)."""
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    arch = {"x86_64": "x64", "AMD64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine())
    if not system or not arch:
        die(f"no package layout for {platform.system()} {platform.machine()}: add it to NPM_PLATFORMS and wheel_tag()")
    return f"{system}-{arch}"


def wheel_tag(binaries, npm):
    """The wheel's platform tag for binaries built here."""
    arch = {"x64": "x86_64", "arm64": "aarch64"}[npm.split("-")[1]]
    if npm.startswith("darwin"):
        return f"macosx_11_0_{'arm64' if arch == 'aarch64' else arch}"
    needed = set()
    for b in binaries:
        needed.update(re.findall(rb"GLIBC_2\.(\d+)", b.read_bytes()))
    minor = max((int(m) for m in needed), default=17)
    return f"manylinux_2_{max(minor, 17)}_{arch}"


def version_of(harness):
    out = subprocess.run([str(harness), "--version"], capture_output=True, text=True, check=True).stdout
    match = re.match(r"mcp-harness (\S+)", out)
    if not match:
        die(f"{harness} --version printed {out!r}, not `mcp-harness <version>`")
    return match.group(1)


def stage_binaries(bin_dir, into, strip):
    into.mkdir(parents=True)
    staged = []
    for name in BINARIES:
        src = bin_dir / name
        if not src.is_file():
            die(f"{src} is missing: build it first (cargo build --release -p mcp-harness -p mcp-mock)")
        dst = into / name
        shutil.copyfile(src, dst)
        if strip and shutil.which("strip"):
            # The debug info is for this machine's debugger; users get a smaller download.
            subprocess.run(["strip", str(dst)], check=True)
        dst.chmod(0o755)
        staged.append(dst)
    return staged


def npm_pack(folder, out):
    result = subprocess.run(
        ["npm", "pack", "--pack-destination", str(out), "--loglevel=error"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        die(f"npm pack in {folder} failed:\n{result.stderr}")
    return out / result.stdout.strip().splitlines()[-1]


def write_json(path, doc):
    path.write_text(json.dumps(doc, indent=2) + "\n")


def npm_packages(binaries, version, npm, platforms, stage, out):
    system, cpu = npm.split("-")
    plat = stage / "platform"
    (plat / "bin").mkdir(parents=True)
    for b in binaries:
        shutil.copy2(b, plat / "bin" / b.name)
    write_json(
        plat / "package.json",
        {
            "name": f"@mcp-harness/{npm}",
            "version": version,
            "description": f"The mcp-harness and mcp-mock binaries for {npm} (installed by the mcp-harness package).",
            "license": LICENSE,
            "os": [system],
            "cpu": [cpu],
            "files": ["bin/"],
            "preferUnplugged": True,
        },
    )
    (plat / "README.md").write_text(
        f"# @mcp-harness/{npm}\n\nThe `mcp-harness` and `mcp-mock` binaries for {npm}. Install "
        "`mcp-harness`, which depends on this package when it matches the machine.\n"
    )
    launcher = stage / "launcher"
    shutil.copytree(HERE / "npm" / "mcp-harness", launcher)
    write_json(
        launcher / "package.json",
        {
            "name": "mcp-harness",
            "version": version,
            "description": DESCRIPTION,
            "license": LICENSE,
            "bin": {name: f"bin/{name}.js" for name in BINARIES},
            "files": ["bin/", "lib/"],
            "engines": {"node": ">=18"},
            "optionalDependencies": {f"@mcp-harness/{p}": version for p in platforms},
        },
    )
    return npm_pack(launcher, out), npm_pack(plat, out)


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel(binaries, version, tag, out):
    path = out / f"{WHEEL_NAME}-{version}-py3-none-{tag}.whl"
    info = f"{WHEEL_NAME}-{version}.dist-info"
    readme = (HERE / "npm" / "mcp-harness" / "README.md").read_text().replace(
        "npm install --save-dev mcp-harness", f"pip install {PYPI_NAME}"
    ).replace("npx ", "")
    metadata = (
        "Metadata-Version: 2.1\n"
        f"Name: {PYPI_NAME}\n"
        f"Version: {version}\n"
        f"Summary: {DESCRIPTION}\n"
        f"License: {LICENSE}\n"
        "Requires-Python: >=3.8\n"
        "Classifier: Programming Language :: Rust\n"
        "Classifier: Topic :: Software Development :: Testing\n"
        "Description-Content-Type: text/markdown\n\n" + readme
    )
    files = [(f"{WHEEL_NAME}-{version}.data/scripts/{b.name}", b.read_bytes(), 0o755) for b in binaries]
    files.append((f"{info}/METADATA", metadata.encode(), 0o644))
    wheel_text = f"Wheel-Version: 1.0\nGenerator: mcp-harness dist/pack.py\nRoot-Is-Purelib: false\nTag: py3-none-{tag}\n"
    files.append((f"{info}/WHEEL", wheel_text.encode(), 0o644))
    record = [record_line(name, data) for name, data, _ in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in files:
            entry = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            entry.external_attr = (0o100000 | mode) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", required=True, type=Path, help="where cargo built mcp-harness and mcp-mock")
    parser.add_argument("--out", required=True, type=Path, help="where the packages go")
    parser.add_argument("--no-strip", action="store_true", help="keep the binaries' debug info")
    parser.add_argument(
        "--platforms",
        help="the platform packages the launcher depends on, comma-separated (default: this machine's)",
    )
    args = parser.parse_args()
    if not shutil.which("npm"):
        die("npm is not on PATH: the npm packages are made with `npm pack` (install Node.js)")
    npm = npm_platform()
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    for old in list(args.out.glob("mcp-harness-*.tgz")) + list(args.out.glob(f"{WHEEL_NAME}-*.whl")):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp)
        binaries = stage_binaries(args.bin_dir, stage / "bin", not args.no_strip)
        version = version_of(binaries[0])
        platforms = args.platforms.split(",") if args.platforms else [npm]
        if npm not in platforms:
            die(f"--platforms {args.platforms} leaves out {npm}, the platform packed here")
        launcher, plat = npm_packages(binaries, version, npm, platforms, stage, args.out)
        whl = wheel(binaries, version, wheel_tag(binaries, npm), args.out)
    for p in (launcher, plat, whl):
        print(f"{p}  ({p.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
