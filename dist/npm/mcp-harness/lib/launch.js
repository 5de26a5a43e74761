'use strict';
// The npm launcher of mcp-harness (the esbuild pattern): this package holds no binary; npm
// installs, of its optionalDependencies, the one platform package whose `os` and `cpu`
// match this machine (@mcp-harness/<platform>-<arch>), and this runs the binary from it
// with the same arguments, standard streams and exit status. Signals sent to the launcher
// (a CI timeout's SIGTERM) are passed on, so the harness can stop its runs and clients.

const { spawn } = require('node:child_process');

function launch(name) {
  const platform = `${process.platform}-${process.arch}`;
  const pkg = `@mcp-harness/${platform}`;
  let exe;
  try {
    exe = require.resolve(`${pkg}/bin/${name}`);
  } catch {
    const built = Object.keys(require('../package.json').optionalDependencies || {});
    const why = built.includes(pkg)
      ? `npm did not install it: optional dependencies are left out by --omit=optional or --no-optional; install again without that flag`
      : `no build exists for ${platform} (there are: ${built.join(', ')}); build from source with a Rust toolchain (cargo build --release -p mcp-harness -p mcp-mock)`;
    console.error(`${name}: the package ${pkg}, which holds the binary for this machine, is not installed: ${why}`);
    process.exit(2);
  }
  const child = spawn(exe, process.argv.slice(2), { stdio: 'inherit' });
  const forward = (signal) => () => child.kill(signal);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, forward(signal));
  }
  child.on('error', (e) => {
    console.error(`${name}: cannot start ${exe}: ${e.message}`);
    process.exit(2);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

module.exports = { launch };
