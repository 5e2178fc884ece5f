#!/usr/bin/env node
// Runs the test suite under Node (the one running npm), the current Node LTS (scripts/node-lts.mjs), Deno and Bun (the
// binaries come from npm) and fails if any runtime fails. `npm test -- node deno` runs only the runtimes named.
//
// Each runtime's full report goes to a file, .cache/test-logs/<suite>-<runtime>.log (ignored by git, rewritten each
// run); the console gets a line when a runtime starts and one when it ends, then a table (passed, failed, skipped,
// time per runtime, and the total) and, for a runtime that failed, only its failing tests: each one's name, where it
// failed and its message (the assertion, the diff), cut to a few lines. CI keeps only the end of a long log, which
// thus says what failed. A runtime that fails without a failing test (a type error, a crash at load, no counts) has
// its log's last lines shown instead.
//
// `npm test -- --verbose` (or WATCHWIRE_TEST_VERBOSE=1; `npm run test:servers -- --verbose` too) streams each
// runtime's full report to the console as well, as it runs.
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const names = ["node", "node-lts", "deno", "bun"];
// `--suite servers`: the tests of tests/servers/ (scripts/test-servers.mjs sets up their servers and passes this).
const args = process.argv.slice(2);
const suiteAt = args.indexOf("--suite");
const suite = suiteAt >= 0 ? args.splice(suiteAt, 2)[1] : "main";
const verboseAt = args.indexOf("--verbose");
if (verboseAt >= 0) args.splice(verboseAt, 1);
const verbose = verboseAt >= 0 || /^(1|true|yes)$/i.test(process.env.WATCHWIRE_TEST_VERBOSE ?? "");
const unknown = args.filter((a) => !names.includes(a));
if (!["main", "servers"].includes(suite) || unknown.length > 0) {
  console.error(
    `test-all: unknown ${unknown.length > 0 ? `runtime or option ${unknown.join(" ")}` : `suite ${suite}`}`,
  );
  console.error(`usage: node scripts/test-all.mjs [--suite main|servers] [--verbose] [${names.join("|")}]...`);
  process.exit(2);
}
const prefix = suite === "servers" ? "test:servers:" : "test:";
const only = args;
const logDir = join(root, ".cache", "test-logs");
const MAX_MESSAGE_LINES = 20; // of one failing test's message
const MAX_LINE_CHARS = 240;
const MAX_FAILURES = 25; // listed per runtime; the log has them all

/** Node's reporter: TAP when not on a terminal up to Node 22, the spec reporter after; the Node running npm may be
 * either. A timed-out test counts as cancelled, not failed: both are failures here. */
function nodeReport(lines, text) {
  const count = (key) => lastNumber(text, new RegExp(`^(?:# |ℹ )${key} (\\d+)$`, "gm"));
  const [pass, fail, cancelled, skipped, todo] = ["pass", "fail", "cancelled", "skipped", "todo"].map(count);
  return {
    counts: pass === undefined ? undefined : {
      passed: pass,
      failed: (fail ?? 0) + (cancelled ?? 0),
      skipped: (skipped ?? 0) + (todo ?? 0),
    },
    failures: /^TAP version/m.test(text) ? nodeTapFailures(lines) : nodeSpecFailures(lines),
  };
}

// TAP: `not ok N - name`, indented 4 per level of nesting under `# Subtest:` lines, then a YAML block with the error
// (a quoted string or a `|-` block), the stack, and the failure's type (`subtestsFailed` for a parent whose children
// failed, which are listed themselves). A test file that fails to load is a failing test named after the file, its
// error on the `# ` lines just before it.
function nodeTapFailures(lines) {
  const failures = [];
  const parents = [];
  const unescape = (s) => s.replace(/\\([\\#])/g, "$1");
  for (let i = 0; i < lines.length; i++) {
    const subtest = lines[i].match(/^(\s*)# Subtest: (.*)$/);
    if (subtest) {
      const depth = subtest[1].length / 4;
      parents.length = depth;
      parents[depth] = unescape(subtest[2]);
      continue;
    }
    const notOk = lines[i].match(/^(\s*)not ok \d+ - (.*?)(?:(?<!\\) # (?:TODO|SKIP)\b.*)?$/i);
    if (!notOk || /(?<!\\) # TODO\b/i.test(lines[i])) continue;
    const indent = notOk[1];
    const depth = indent.length / 4;
    const yaml = {};
    if (lines[i + 1] === `${indent}  ---`) {
      const field = new RegExp(`^${indent}  ([\\w]+):(?: (.*))?$`);
      let key;
      for (let j = i + 2; j < lines.length && lines[j] !== `${indent}  ...`; j++) {
        const m = lines[j].match(field);
        if (m) {
          key = m[1];
          yaml[key] = m[2] === "|-" || m[2] === "|" || m[2] === undefined ? [] : [unquote(m[2])];
        } else if (key && lines[j].startsWith(`${indent}    `)) yaml[key].push(lines[j].slice(indent.length + 4));
        else if (key && lines[j].trim() === "") yaml[key].push("");
      }
    }
    if (yaml.failureType?.[0] === "subtestsFailed") continue;
    // An error's name, as the other reporters show it (an AssertionError's message does not say it is one).
    const errorName = yaml.name?.[0];
    let message = (yaml.error ?? []).map((line, k) => (k === 0 && errorName ? `${errorName}: ${line}` : line));
    const file = yaml.location?.[0]?.replace(/:\d+:\d+$/, "");
    if ((yaml.error ?? []).join("\n") === "test failed" && file !== undefined && unescape(notOk[2]) === file) {
      // The file failed as a whole: its output before its result says why.
      const output = [];
      for (let j = i - 2; j >= 0 && /^# (?!Subtest: )/.test(lines[j]); j--) output.unshift(lines[j].slice(2));
      message = fileFailure(output);
      notOk[2] = shortPath(file);
    }
    failures.push({
      name: [...parents.slice(0, depth), unescape(notOk[2])].join(" > "),
      where: where([...(yaml.stack ?? []), ...message]) ?? shortPath(file),
      message,
    });
  }
  return failures;
}

// The spec reporter lists the failures again at its end, under "failing tests:": `test at FILE:LINE:COL`, `✖ name
// (time)`, then the error indented by 2, its stack, and its properties. Names there are without their parents, which
// the tree of results above gives (`▶ parent`, children indented by 2 more).
function nodeSpecFailures(lines) {
  const start = lines.findLastIndex((line) => /^✖ failing tests:\s*$/.test(line));
  if (start < 0) return [];
  const result = /^(\s*)✖ (.*) \(\d[\d.]*m?s\)(?: # .*)?$/;
  const tree = [];
  const parents = [];
  for (let i = 0; i < start; i++) {
    const group = lines[i].match(/^(\s*)▶ (.*)$/);
    const failed = lines[i].match(result);
    const m = group ?? failed;
    if (!m) continue;
    const depth = m[1].length / 2;
    parents.length = depth;
    if (group) parents[depth] = m[2];
    else tree.push({ leaf: m[2], full: [...parents, m[2]].join(" > "), at: i, used: false });
  }
  const failures = [];
  for (let i = start + 1; i < lines.length; i++) {
    const head = lines[i].match(/^✖ (.*?)(?: \(\d[\d.]*m?s\))?$/);
    if (!head || !/^test at /.test(lines[i - 1] ?? "")) continue;
    const body = [];
    for (let j = i + 1; j < lines.length && !/^test at /.test(lines[j]); j++) body.push(lines[j].replace(/^ {2}/, ""));
    const stackAt = body.findIndex((line) => /^\s+at /.test(line));
    let message = trimBlank(stackAt >= 0 ? body.slice(0, stackAt) : body);
    if (message.length === 1) message = [unquote(message[0])];
    const file = lines[i - 1].replace(/^test at /, "").replace(/:\d+:\d+$/, "");
    const inTree = tree.find((t) => !t.used && t.leaf === head[1]);
    if (inTree) inTree.used = true;
    if (message.join("\n") === "test failed" && head[1] === file) {
      // The file failed as a whole: its output says why, somewhere among the lines that are not the reporter's (the
      // files run in parallel), from the first that names the file.
      const output = lines.slice(0, start).filter((line) => !/^\s*[✔✖﹣▶ℹ] /.test(line));
      const at = output.findIndex((line) => line.includes(file));
      message = fileFailure(at >= 0 ? output.slice(at, at + 20) : []);
    }
    failures.push({ name: inTree?.full ?? head[1], where: where(body) ?? shortPath(file), message });
  }
  return failures;
}

// Deno: a line per test (`name ... FAILED (3ms)`), then under "ERRORS" each failure: `name => ./file:line:col`,
// `error: ` and the error, the source line with a caret under it, and the stack; under "FAILURES" the names again; then
// `ok | 5 passed (2 steps) | 0 failed | 1 ignored (1s)` or `FAILED | ...`.
function denoReport(lines, text) {
  const summary = [...text.matchAll(/^(?:ok|FAILED) \|.*$/gm)].at(-1)?.[0];
  const number = (key) => Number(summary?.match(new RegExp(`(\\d+) ${key}`))?.[1] ?? 0);
  return {
    counts: summary === undefined
      ? undefined
      : { passed: number("passed"), failed: number("failed"), skipped: number("ignored") },
    failures: denoFailures(lines),
  };
}

function denoFailures(lines) {
  const start = lines.findIndex((line) => /^\s*ERRORS\s*$/.test(line));
  if (start < 0) {
    return lines.filter((line) => / \.\.\. FAILED\b/.test(line))
      .map((line) => ({ name: line.replace(/ \.\.\. FAILED\b.*$/, ""), message: [] }));
  }
  let end = lines.findIndex((line, i) => i > start && /^\s*FAILURES\s*$/.test(line));
  if (end < 0) end = lines.length;
  const isHead = (i) => /^\S/.test(lines[i]) && /^error: /.test(lines[i + 1] ?? "");
  const failures = [];
  for (let i = start + 1; i < end; i++) {
    if (!isHead(i)) continue;
    const block = [];
    for (let j = i + 1; j < end && !isHead(j); j++) block.push(lines[j]);
    block[0] = block[0].replace(/^error: /, "");
    const stackAt = block.findIndex((line) => /^\s+at /.test(line));
    const message = (stackAt >= 0 ? block.slice(0, stackAt) : block)
      // The source line and the caret under it.
      .filter((line, k, all) => !/^\s*\^+\s*$/.test(line) && !/^\s*\^+\s*$/.test(all[k + 1] ?? ""));
    const [, name, at] = lines[i].match(/^(.*?)(?: => (\S+:\d+:\d+))?$/);
    // A step is named `test ... step`.
    failures.push({ name: name.replaceAll(" ... ", " > "), where: where(block) ?? shortPath(at), message });
  }
  return failures;
}

// Bun: a line per test, `(pass) name [1.2ms]`, `(fail) ...`, `(skip) ...`, under a `tests/<f>.test.ts:` line; a failing
// test's errors come just ahead of its `(fail)` line (each with source lines, a caret, the error, its properties and
// its stack), an error outside any test between `# Unhandled error between tests` and dashes; at the end ` 3 pass`,
// ` 1 skip`, ` 2 fail`, ` 1 error`.
function bunReport(lines, text) {
  const count = (key) => lastNumber(text, new RegExp(`^\\s*(\\d+) ${key}$`, "gm"));
  const [pass, fail, skip, todo, error] = ["pass", "fail", "skip", "todo", "errors?"].map(count);
  return {
    counts: pass === undefined && fail === undefined ? undefined : {
      passed: pass ?? 0,
      failed: (fail ?? 0) + (error ?? 0),
      skipped: (skip ?? 0) + (todo ?? 0),
    },
    failures: bunFailures(lines),
  };
}

function bunFailures(lines) {
  const failures = [];
  let from = 0;
  let file;
  for (let i = 0; i < lines.length; i++) {
    const header = lines[i].match(/^(\S+\.[cm]?[jt]sx?):$/);
    if (header) file = header[1];
    if (header || /^\((pass|skip|todo)\) /.test(lines[i])) from = i + 1;
    const fail = lines[i].match(/^\(fail\) (.*?)(?: \[[\d.]+m?s\])?$/);
    if (fail) {
      const block = lines.slice(from, i);
      failures.push({ name: fail[1], where: where(block) ?? file, message: bunMessage(block) });
      from = i + 1;
    }
    if (/^# Unhandled error between tests/.test(lines[i])) {
      const block = [];
      let j = i + 2; // past the dashes
      for (; j < lines.length && !/^-{5,}$/.test(lines[j]); j++) block.push(lines[j]);
      failures.push({ name: `(an error outside any test${file ? ` in ${file}` : ""})`, message: bunMessage(block) });
      from = i = j;
    }
  }
  return failures;
}

/** A Bun error block without its source lines, carets, stacks and properties: each error ends with its stack, and
 * its properties (`generatedMessage: true,`, `code: "ERR_..."`, one a line, indented) are the last paragraph before it. */
function bunMessage(block) {
  const kept = [];
  let error = [];
  const flush = () => {
    error = trimBlank(error);
    // The properties: the last paragraph, if its first line (past the error's own) is one.
    let last = error.length - 1;
    while (last > 1 && error[last - 1].trim() !== "") last--;
    const cut = last > 0 && /^ +[\w$]+: /.test(error[last]) ? last : error.length;
    if (error.length > 0) kept.push(...(kept.length > 0 ? [""] : []), ...trimBlank(error.slice(0, cut)));
    error = [];
  };
  for (const line of block) {
    if (/^\s+at /.test(line)) flush();
    else if (!/^\s*\d+ \| /.test(line) && !/^\s*\^+\s*$/.test(line)) error.push(line.replace(/^error: /, ""));
  }
  flush();
  return kept;
}

/** The last number a global regular expression's first group matched in text. */
function lastNumber(text, re) {
  const m = [...text.matchAll(re)].at(-1);
  return m === undefined ? undefined : Number(m[1]);
}

/** A YAML or inspected string without its quotes ('it''s', "a \"b\""). */
function unquote(s) {
  if (/^'.*'$/.test(s)) return s.slice(1, -1).replace(/''/g, "'");
  if (/^".*"$/.test(s)) {
    try {
      return JSON.parse(s);
    } catch {
      return s.slice(1, -1);
    }
  }
  return s;
}

/** The message of a test file that failed as a whole (it did not load, or exited early), from its output: the part
 * from the first line that names an error (the lines above it are the source) to its stack. */
function fileFailure(output) {
  const from = output.findIndex((line) => /\b\w*(Error|error)\b/.test(line));
  const part = from >= 0 ? output.slice(from) : output;
  const to = part.findIndex((line) => /^\s+at /.test(line));
  return ["(the file failed as a whole)", ...trimBlank(to >= 0 ? part.slice(0, to) : part)];
}

/** Lines without the blank ones at either end. */
function trimBlank(lines) {
  let from = 0;
  let to = lines.length;
  while (from < to && lines[from].trim() === "") from++;
  while (to > from && lines[to - 1].trim() === "") to--;
  return lines.slice(from, to);
}

/** Where a stack says an error happened, as `tests/<f>.test.ts:7:10`: its first place in a test file, else its first in
 * this checkout (not in node_modules). */
function where(lines) {
  const places = lines.flatMap((line) =>
    [...line.matchAll(/(?:file:\/\/)?(\/[^\s():'"]+):(\d+):(\d+)/g)]
      .filter((m) => m[1].startsWith(root) && !m[1].includes("/node_modules/"))
      .map((m) => ({ file: shortPath(m[1]), at: `${shortPath(m[1])}:${m[2]}:${m[3]}` }))
  );
  return (places.find((p) => /\.test\.[cm]?[jt]sx?$/.test(p.file)) ?? places[0])?.at;
}

function shortPath(path) {
  if (path === undefined) return undefined;
  const plain = path.replace(/^file:\/\//, "").replace(/^\.\//, "");
  return plain.startsWith(root) ? relative(root, plain) : plain;
}

// deno-lint-ignore no-control-regex
const ansi = /\x1b\[[0-9;]*m/g;
// deno-lint-ignore no-control-regex
const ansiAtStart = /^\x1b\[[0-9;]*m/;

function duration(ms) {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  return `${Math.floor(s / 60)}m ${String(Math.round(s % 60)).padStart(2, "0")}s`;
}

function shownPath(path) {
  const rel = relative(process.cwd(), path);
  return rel.startsWith("..") ? path : rel;
}

const reports = { node: nodeReport, "node-lts": nodeReport, deno: denoReport, bun: bunReport };
const runtimes = names
  .filter((name) => (only.length === 0 ? suite === "main" || name !== "node-lts" : only.includes(name)))
  .map((name) => ({ name, script: `${prefix}${name}`, report: reports[name] }));

function run(runtime) {
  const log = join(logDir, `${suite}-${runtime.name}.log`);
  const file = createWriteStream(log);
  const started = Date.now();
  file.write(`# npm run ${runtime.script} (in ${root}), ${new Date(started).toISOString()}\n`);
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", "--silent", runtime.script], {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    let pending = ""; // a colour code cut by a chunk's end
    const keep = (chunk, to) => {
      const text = pending + chunk.toString();
      const cut = text.lastIndexOf("\x1b");
      const whole = cut >= 0 && !ansiAtStart.test(text.slice(cut)) ? cut : text.length;
      pending = text.slice(whole);
      const plain = text.slice(0, whole).replace(ansi, "");
      output += plain;
      file.write(plain);
      if (verbose) to.write(chunk);
    };
    child.stdout.on("data", (c) => keep(c, process.stdout));
    child.stderr.on("data", (c) => keep(c, process.stderr));
    let spawnError;
    child.on("error", (error) => (spawnError = error));
    child.on("close", (exitCode, signal) => {
      const ms = Date.now() - started;
      output += pending;
      const code = exitCode ?? 1;
      const lines = output.split(/\r?\n/);
      const { counts, failures } = runtime.report(lines, output);
      const ok = code === 0 && counts !== undefined && counts.passed > 0 && counts.failed === 0;
      // A run that stopped before any test failed (a type error, a crash at load) leaves no failure to find: its
      // report's end says why.
      const tail = ok || failures.length > 0 ? [] : trimBlank(lines).slice(-40);
      if (!ok && failures.length === 0 && tail.length === 0) tail.push(`(no output; npm run ${runtime.script})`);
      if (spawnError) tail.push(`(could not run npm: ${spawnError.message})`);
      file.end(
        `${output.endsWith("\n") ? "" : "\n"}# exit ${exitCode ?? `by ${signal}`} after ${duration(ms)}\n`,
        () => resolve({ name: runtime.name, code, signal, ms, counts, failures, tail, ok, log }),
      );
    });
  });
}

/** One line for a runtime's outcome: `1237 passed, 0 failed, 2 skipped (2m 04s)`. */
function outcome(r) {
  const time = `(${duration(r.ms)})`;
  if (r.counts === undefined) {
    return `CRASHED: no test counts in its report, exit ${r.signal ?? r.code} ${time}`;
  }
  const { passed, failed, skipped } = r.counts;
  const counts = `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`;
  if (r.ok) return `${counts} ${time}`;
  return `FAILED: ${counts}${failed === 0 ? `, exit ${r.signal ?? r.code}` : ""} ${time}`;
}

function cut(line) {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)} …` : line;
}

mkdirSync(logDir, { recursive: true });
const results = [];
for (const [i, runtime] of runtimes.entries()) {
  const step = `[${i + 1}/${runtimes.length}] ${runtime.name}`;
  if (verbose) console.log(`\n=== ${runtime.name} ===`);
  console.log(`${step}: running ${suite === "main" ? "the suite" : `the ${suite} suite`} ...`);
  const r = await run(runtime);
  results.push(r);
  console.log(`${step}: ${outcome(r)}`);
}

const rows = results.map((r) => [
  r.name,
  r.counts?.passed ?? "-",
  r.counts?.failed ?? "-",
  r.counts?.skipped ?? "-",
  duration(r.ms),
  r.ok ? "ok" : r.counts === undefined ? "CRASHED" : "FAILED",
]);
const sum = (key) => results.reduce((n, r) => n + (r.counts?.[key] ?? 0), 0);
const allOk = results.length > 0 && results.every((r) => r.ok);
rows.push([
  "total",
  sum("passed"),
  sum("failed"),
  sum("skipped"),
  duration(results.reduce((n, r) => n + r.ms, 0)),
  allOk ? "ok" : "FAILED",
]);
const header = ["runtime", "passed", "failed", "skipped", "time", ""];
const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => String(row[c]).length)));
const format = (row) =>
  row.map((cell, c) => (c === 0 || c === 5 ? String(cell).padEnd(widths[c]) : String(cell).padStart(widths[c])))
    .join("  ").trimEnd();
console.log(`\n=== ${suite === "main" ? "test" : `${suite} test`} summary ===`);
console.log(format(header));
for (const [k, row] of rows.entries()) {
  if (k === rows.length - 1) console.log(format(widths.map((w) => "-".repeat(w))));
  console.log(format(row));
}
console.log(`full logs: ${shownPath(join(logDir, `${suite}-<runtime>.log`))}`);

const bad = results.filter((r) => !r.ok);
// A test that fails with the same message in several runtimes has it shown once, under the first.
const shown = new Map();
const sameness = (message) =>
  trimBlank(message).join("\n").replace(/^(?:error: |Error: )?(\w*Error)?(?: \[\w+\])?(?::\s*)?/, "$1: ");
for (const r of bad) {
  const what = r.failures.length > 0
    ? `${r.failures.length} failing test${r.failures.length === 1 ? "" : "s"}`
    : r.counts === undefined
    ? "no test counts in its report"
    : "no failing test found in its report";
  console.log(`\n=== ${r.name}: ${what} (full log: ${shownPath(r.log)}) ===`);
  for (const f of r.failures.slice(0, MAX_FAILURES)) {
    console.log(`\n✖ ${f.name}${f.where ? `  [${f.where}]` : ""}`);
    const message = trimBlank(f.message);
    const before = shown.get(f.name);
    if (before && message.length > 0 && before.sameness === sameness(message)) {
      console.log(`    (the same message as in ${before.runtime}, above)`);
      continue;
    }
    if (!before) shown.set(f.name, { runtime: r.name, sameness: sameness(message) });
    for (const line of message.slice(0, MAX_MESSAGE_LINES)) console.log(`    ${cut(line)}`.trimEnd());
    if (message.length > MAX_MESSAGE_LINES) {
      console.log(`    … ${message.length - MAX_MESSAGE_LINES} more lines in the log`);
    }
  }
  if (r.failures.length > MAX_FAILURES) {
    console.log(`\n… and ${r.failures.length - MAX_FAILURES} more failing tests in ${shownPath(r.log)}`);
  }
  if (r.tail.length > 0) {
    console.log(`the last ${r.tail.length === 1 ? "line" : `${r.tail.length} lines`} of its log:`);
    for (const line of r.tail) console.log(cut(line));
  }
}
if (bad.length > 0) {
  const each = bad.map((r) =>
    `${r.name} (${
      r.failures.length > 0
        ? `${r.failures.length} failing`
        : r.counts === undefined
        ? "crashed"
        : `exit ${r.signal ?? r.code}`
    })`
  );
  console.log(
    `\n${suite === "main" ? "npm test" : `${suite} tests`}: FAILED in ${each.join(", ")}; full logs in ${
      shownPath(logDir)
    }/`,
  );
}
process.exit(allOk ? 0 : 1);
