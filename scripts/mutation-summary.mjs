#!/usr/bin/env node
/**
 * Summarises the StrykerJS reports under a folder (default reports/mutation; every <run>/mutation.json in it):
 * the mutation score per source folder, and each surviving or uncovered mutant as file:line, mutator and the
 * replacement. Writes <folder>/summary.md and prints it. Score = (killed + timed out) / (those + survived + no
 * coverage); ignored (static), compile and runtime errors do not count, as in Stryker's own score.
 */
import fs from "node:fs";
import path from "node:path";

const dir = process.argv[2] ?? "reports/mutation";
const hasResults = (d) => fs.existsSync(path.join(dir, d, "mutation.json")) || fs.existsSync(path.join(dir, d, "events"));
const runs = fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory() && hasResults(d.name)) : [];
if (fs.existsSync(path.join(dir, "mutation.json"))) runs.unshift({ name: "." });

/** A finished run's report; for a run stopped early, the mutants its event recorder wrote before it stopped. */
function readRun(runDir) {
  const file = path.join(runDir, "mutation.json");
  if (fs.existsSync(file)) return { at: fs.statSync(file).mtimeMs, partial: false, files: JSON.parse(fs.readFileSync(file, "utf8")).files };
  const events = path.join(runDir, "events");
  const files = {};
  let at = 0;
  for (const name of fs.readdirSync(events).filter((n) => n.endsWith("-onMutantTested.json"))) {
    const m = JSON.parse(fs.readFileSync(path.join(events, name), "utf8"));
    const rel = path.relative(process.cwd(), m.fileName);
    (files[rel] ??= { mutants: [] }).mutants.push(m);
    at = Math.max(at, fs.statSync(path.join(events, name)).mtimeMs);
  }
  return { at, partial: true, files };
}

// Runs may overlap (a folder, then one file of it again after new tests): the newest result of each mutant wins.
const byFile = new Map();
const keyOf = (m) => `${m.location.start.line}:${m.location.start.column}-${m.location.end.line}:${m.location.end.column}:${m.mutatorName}:${m.replacement ?? ""}`;
const partial = [];
for (const run of runs) {
  const report = readRun(path.join(dir, run.name));
  const at = report.at;
  if (report.partial) partial.push(run.name);
  for (const [name, f] of Object.entries(report.files)) {
    const mutants = byFile.get(name) ?? new Map();
    for (const m of f.mutants) {
      const prev = mutants.get(keyOf(m));
      if (!prev || prev.at < at) mutants.set(keyOf(m), { at, m });
    }
    byFile.set(name, mutants);
  }
}

const DETECTED = new Set(["Killed", "Timeout"]);
const UNDETECTED = new Set(["Survived", "NoCoverage"]);
const folders = new Map();
const undetected = [];
for (const [name, f] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
  const folder = path.dirname(name);
  const c = folders.get(folder) ?? { detected: 0, undetected: 0, ignored: 0, errors: 0 };
  const sorted = [...f.values()].map((x) => x.m).sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column);
  for (const m of sorted) {
    if (DETECTED.has(m.status)) c.detected++;
    else if (UNDETECTED.has(m.status)) {
      c.undetected++;
      undetected.push({ name, m });
    } else if (m.status === "Ignored") c.ignored++;
    else c.errors++;
  }
  folders.set(folder, c);
}

const pct = (c) => (c.detected + c.undetected ? ((100 * c.detected) / (c.detected + c.undetected)).toFixed(1) + "%" : "-");
const total = [...folders.values()].reduce((a, c) => ({ detected: a.detected + c.detected, undetected: a.undetected + c.undetected, ignored: a.ignored + c.ignored, errors: a.errors + c.errors }), { detected: 0, undetected: 0, ignored: 0, errors: 0 });
const unfinished = [...new Set([...partial, ...runs.filter((r) => fs.existsSync(path.join(dir, r.name, "unfinished"))).map((r) => r.name)])];
const lines = [
  "# Mutation testing summary",
  "",
  `Generated ${new Date().toISOString()} from ${runs.length} run(s) in ${dir}.` + (unfinished.length ? ` Unfinished (stopped before the end; counts only the mutants tested): ${unfinished.join(", ")}.` : ""),
  "",
  "| folder | score | detected | survived or uncovered | ignored (static) | errors |",
  "| --- | --- | --- | --- | --- | --- |",
  ...[...folders].map(([f, c]) => `| ${f} | ${pct(c)} | ${c.detected} | ${c.undetected} | ${c.ignored} | ${c.errors} |`),
  `| **all** | **${pct(total)}** | ${total.detected} | ${total.undetected} | ${total.ignored} | ${total.errors} |`,
  "",
  "## Surviving and uncovered mutants",
  "",
  ...undetected.map(({ name, m }) => {
    const l = m.location.start;
    const repl = (m.replacement ?? "").replace(/\s+/g, " ").slice(0, 100);
    return `- ${name}:${l.line}:${l.column} ${m.mutatorName} (${m.status})${repl ? ": `" + repl.replace(/`/g, "'") + "`" : ""}`;
  }),
  "",
];
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, "summary.md"), lines.join("\n"));
console.log(lines.join("\n"));
