// Runs the official MCP conformance suite's client scenarios against mcp-client and judges
// the results against an expected-failures file (see README.md, `make conformance`).
//
//   node conformance/run.mjs --client <mcp-client binary> [--scenarios F] [--expected-failures F]
//                            [--reports DIR] [--only <scenario>[@<revision>]]...
//
// Each (scenario, revision) of scenarios.yml runs alone, one after the other (the sse-retry
// scenario measures the client's reconnect delay, so nothing runs beside it), through the
// suite's own CLI: `conformance client --command <client> --scenario S --spec-version R`.
// A run passes when that CLI exits 0, which it does only when no check failed or warned and
// the client exited 0 (or the scenario allows a client error).
//
// Writes <reports>/results.json and <reports>/README.md (the results page), keeps the
// suite's per-run output under <reports>/runs/, prints one line per run and a closing
// `N passed, N failed` line. Exit 1 on an unexpected result (an unlisted failure, a listed
// run that passes, an entry that matches no run), 2 on bad input.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const suitePackage = join(here, 'node_modules/@modelcontextprotocol/conformance');
const suiteCli = join(suitePackage, 'dist/index.js');
/** The suite's own limit per run; mcp-client ends its runs sooner (20 s). */
const SUITE_TIMEOUT_MS = 30000;

function fail(message) {
  console.error(`run.mjs: ${message}`);
  process.exit(2);
}

function parseArgs(argv) {
  const args = {
    client: undefined,
    scenarios: join(here, 'scenarios.yml'),
    expected: join(here, 'expected-failures.yml'),
    reports: 'reports/conformance',
    only: []
  };
  for (let i = 0; i < argv.length; i++) {
    const value = () => argv[++i] ?? fail(`${argv[i - 1]} needs a value`);
    switch (argv[i]) {
      case '--client': args.client = resolve(value()); break;
      case '--scenarios': args.scenarios = value(); break;
      case '--expected-failures': args.expected = value(); break;
      case '--reports': args.reports = value(); break;
      case '--only': args.only.push(value()); break;
      default: fail(`unknown argument ${argv[i]} (see the comment at the top of run.mjs)`);
    }
  }
  if (!args.client) fail('--client <mcp-client binary> is required');
  if (!existsSync(args.client)) fail(`no client at ${args.client} (build it: cargo build -p mcp-client)`);
  if (!existsSync(suiteCli)) fail(`the suite is not installed at ${suitePackage} (run: bash conformance/install.sh)`);
  return args;
}

function readYaml(path) {
  try {
    return parse(readFileSync(path, 'utf8'));
  } catch (e) {
    fail(`${path}: ${e.message}`);
  }
}

/** The runs of scenarios.yml: [{scenario, revision, transport}]. */
function loadRuns(path) {
  const doc = readYaml(path);
  if (!doc?.revisions || typeof doc.revisions !== 'object') fail(`${path}: needs a revisions: map of revision → scenario list`);
  const transport = new Set(doc.transport ?? []);
  const runs = [];
  for (const [revision, scenarios] of Object.entries(doc.revisions)) {
    if (!Array.isArray(scenarios)) fail(`${path}: revisions.${revision} must be a list of scenario names`);
    for (const scenario of scenarios) runs.push({ scenario, revision, transport: transport.has(scenario) });
  }
  for (const name of transport) {
    if (!runs.some((r) => r.scenario === name)) fail(`${path}: transport scenario ${name} is not run at any revision`);
  }
  return runs;
}

/**
 * The entries of expected-failures.yml: [{key, reason, matches(run)}]. Each names one run,
 * `<scenario>@<revision>`: a pattern or a bare scenario name would excuse runs nobody
 * looked at (a new scenario of the suite, a revision added later), so both are refused.
 */
function loadExpected(path) {
  const doc = readYaml(path);
  const client = doc?.client ?? {};
  if (client === null || typeof client !== 'object' || Array.isArray(client)) {
    fail(`${path}: client: must map "<scenario>@<revision>" to its reason (a list has no reasons; none: client: {})`);
  }
  return Object.entries(client).map(([key, reason]) => {
    if (key.includes('*')) {
      fail(`${path}: ${key}: patterns are not accepted; name each failing run as "<scenario>@<revision>" with its own reason`);
    }
    const [scenario, revision, ...rest] = key.split('@');
    if (!scenario || !revision || rest.length > 0) {
      fail(`${path}: ${key}: name one run as "<scenario>@<revision>" (e.g. "tools_call@2026-07-28")`);
    }
    if (typeof reason !== 'string' || reason.trim() === '') fail(`${path}: ${key}: give the reason it fails, as a string`);
    return { key, reason, matches: (run) => run.scenario === scenario && run.revision === revision };
  });
}

/** The client scenario names this build of the suite has. */
function suiteScenarios() {
  const out = spawnSync(process.execPath, [suiteCli, 'list', '--client'], { encoding: 'utf8' });
  if (out.status !== 0) fail(`conformance list --client failed: ${out.stderr}`);
  return new Set([...out.stdout.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]));
}

function runOne(run, client, rawDir) {
  const dir = join(rawDir, run.revision, run.scenario.replaceAll('/', '_'));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  const out = spawnSync(
    process.execPath,
    [suiteCli, 'client', '--command', client, '--scenario', run.scenario, '--spec-version', run.revision,
      '--timeout', String(SUITE_TIMEOUT_MS), '-o', dir],
    { encoding: 'utf8', timeout: SUITE_TIMEOUT_MS + 15000 }
  );
  const seconds = (Date.now() - started) / 1000;
  writeFileSync(join(dir, 'suite-output.txt'), `${out.stdout ?? ''}${out.stderr ?? ''}`);
  // The suite writes <dir>/<scenario>-<timestamp>/ (auth/x nests one level deeper).
  const found = readdirSync(dir, { recursive: true }).find((f) => f.endsWith('checks.json'));
  const resultDir = found && dirname(join(dir, found));
  const checks = resultDir ? JSON.parse(readFileSync(join(resultDir, 'checks.json'), 'utf8')) : [];
  const clientStderr = resultDir ? readIfExists(join(resultDir, 'stderr.txt')) : '';
  const count = (status) => checks.filter((c) => c.status === status).length;
  const skipped = /SKIPPED: scenario/.test(out.stdout ?? '');
  return {
    ...run,
    passed: out.status === 0 && !skipped && checks.length > 0,
    exitCode: out.status,
    skipped,
    seconds: Math.round(seconds * 10) / 10,
    checks: { success: count('SUCCESS'), failure: count('FAILURE'), warning: count('WARNING') },
    problems: checks
      .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
      .map((c) => `${c.status} ${c.id}: ${oneLine(c.errorMessage ?? c.description)}`),
    clientError: lastLine(clientStderr.split('\n').filter((l) => l.startsWith('mcp-client:')).join('\n')),
    output: relative(process.cwd(), dir)
  };
}

function readIfExists(path) {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}
/** One line of a message, its URLs' hosts and ports elided (they differ per run). */
function oneLine(text) {
  return String(text)
    .replace(/(https?:\/\/)[^/\s'"]+/g, '$1<host>')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 300);
}
function lastLine(text) {
  return oneLine(text.trim().split('\n').pop() ?? '');
}

/**
 * Each result's verdict against the expected failures, and the entries that excuse no
 * failure. An entry names one run: that run passing makes it stale, and so does naming a
 * run scenarios.yml does not have.
 */
function judge(results, expected) {
  const entryFor = (r) => expected.find((e) => e.matches(r));
  for (const r of results) {
    const entry = entryFor(r);
    r.expectedFailure = entry && !r.passed ? { key: entry.key, reason: entry.reason } : undefined;
    if (r.skipped) r.verdict = 'error: skipped by the suite (not applicable at this revision; fix scenarios.yml)';
    else if (r.passed) r.verdict = entry ? `unexpected pass: remove "${entry.key}" from the expected failures` : 'pass';
    else r.verdict = entry ? 'expected failure' : 'unexpected failure';
  }
  return expected.filter((e) => !results.some((r) => !r.passed && entryFor(r) === e)).map((e) => e.key);
}

function page(results, unused, meta) {
  const lines = [
    '# Official MCP conformance suite: client scenarios against mcp-client',
    '',
    `Written by \`make conformance\`: @modelcontextprotocol/conformance ${meta.suiteVersion}, Node ${meta.node},`,
    'mcp-client over the bundled transports (`client-cli/`). Each scenario runs at the revision in the',
    'second column (the suite sets `MCP_CONFORMANCE_PROTOCOL_VERSION`); "transport" marks the scenarios',
    'that concern the bundled transports. Expected failures and their reasons:',
    '`conformance/expected-failures.yml`.',
    '',
    `**${meta.passed} passed, ${meta.failed} failed** (${meta.expected} of the failures expected); ` +
      `transport scenarios: ${meta.transportPassed} of ${meta.transportRuns} runs pass.`,
    '',
    '| scenario | revision | transport | result | checks ok / failed / warned | verdict |',
    '|---|---|---|---|---|---|'
  ];
  for (const r of results) {
    const c = r.checks;
    lines.push(
      `| ${r.scenario} | ${r.revision} | ${r.transport ? 'yes' : ''} | ${r.passed ? 'pass' : 'FAIL'} | ` +
        `${c.success} / ${c.failure} / ${c.warning} | ${r.verdict} |`
    );
  }
  const failing = results.filter((r) => !r.passed);
  if (failing.length > 0) lines.push('', '## Failures', '');
  {
    for (const r of failing) {
      lines.push(`### ${r.scenario} @ ${r.revision}`, '');
      if (r.expectedFailure) lines.push(`Expected (\`${r.expectedFailure.key}\`): ${r.expectedFailure.reason}`, '');
      if (r.clientError) lines.push(`Client: \`${r.clientError}\``, '');
      for (const p of r.problems.slice(0, 8)) lines.push(`- ${p}`);
      if (r.problems.length > 8) lines.push(`- … ${r.problems.length - 8} more (see results.json)`);
      lines.push('');
    }
  }
  if (unused.length > 0) {
    lines.push('## Expected-failure entries that excuse no failing run', '', ...unused.map((k) => `- ${k}`), '');
  }
  return lines.join('\n').trimEnd() + '\n';
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  let runs = loadRuns(args.scenarios);
  const expected = loadExpected(args.expected);
  const known = suiteScenarios();
  const missing = runs.filter((r) => !known.has(r.scenario)).map((r) => r.scenario);
  if (missing.length > 0) fail(`${args.scenarios}: the installed suite has no client scenario ${[...new Set(missing)].join(', ')}`);
  if (args.only.length > 0) {
    runs = runs.filter((r) => args.only.some((o) => o === r.scenario || o === `${r.scenario}@${r.revision}`));
    if (runs.length === 0) fail(`--only ${args.only.join(' ')} matches no run of ${args.scenarios}`);
  }

  mkdirSync(args.reports, { recursive: true });
  const rawDir = join(args.reports, 'runs');
  const results = [];
  for (const run of runs) {
    const result = runOne(run, args.client, rawDir);
    results.push(result);
    console.log(`${result.passed ? 'pass' : 'FAIL'} ${run.scenario}@${run.revision} (${result.seconds} s)`);
  }
  // A partial run (--only) cannot tell which entries are unused.
  const unused = judge(results, expected).filter(() => args.only.length === 0);

  const suiteVersion = JSON.parse(readFileSync(join(suitePackage, 'package.json'), 'utf8')).version;
  const failed = results.filter((r) => !r.passed);
  const meta = {
    suiteVersion,
    node: process.versions.node,
    passed: results.length - failed.length,
    failed: failed.length,
    expected: failed.filter((r) => r.expectedFailure).length,
    transportRuns: results.filter((r) => r.transport).length,
    transportPassed: results.filter((r) => r.transport && r.passed).length
  };
  writeFileSync(join(args.reports, 'results.json'), JSON.stringify({ ...meta, results, unusedExpectedFailures: unused }, null, 2) + '\n');
  if (args.only.length === 0) writeFileSync(join(args.reports, 'README.md'), page(results, unused, meta));

  const unexpected = results.filter((r) => r.verdict !== 'pass' && r.verdict !== 'expected failure');
  for (const r of unexpected) console.log(`unexpected: ${r.scenario}@${r.revision}: ${r.verdict}${r.clientError ? ` — ${r.clientError}` : ''}`);
  for (const key of unused) console.log(`unexpected: expected-failure entry "${key}" excuses no failing run (remove it)`);
  console.log(`${meta.expected} of the failures expected; transport scenarios: ${meta.transportPassed} of ${meta.transportRuns} runs pass`);
  console.log(`conformance: ${meta.passed} passed, ${meta.failed} failed`);
  const transportListed = results.filter((r) => r.transport && r.expectedFailure).map((r) => `${r.scenario}@${r.revision}`);
  if (transportListed.length > 0) console.log(`note: transport scenarios still expected to fail: ${transportListed.join(', ')}`);
  process.exit(unexpected.length > 0 || unused.length > 0 ? 1 : 0);
}

main();
