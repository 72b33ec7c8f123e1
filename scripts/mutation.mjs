#!/usr/bin/env node
/**
 * Mutation testing of the approval core: `npm run test:mutation [-- <folder or file> ...]` (not part of `npm test`).
 *
 *   npm run test:mutation                                   lib/execution, lib/approvals, lib/tasks, lib/policy
 *   npm run test:mutation -- lib/policy                     one folder
 *   npm run test:mutation -- lib/tasks/call.ts:60-120       one file, or a line range of it
 *
 * Each argument is its own StrykerJS run (stryker.config.mjs) with its report in reports/mutation/<name>/
 * (index.html, mutation.json); after the runs, reports/mutation/summary.md gives the score per folder and every
 * surviving mutant (scripts/mutation-summary.mjs). StrykerJS needs Node 22: under an older Node this script uses
 * the Node 22 that scripts/conformance.sh pins (installed into .cache/conformance on first use).
 *
 * Environment:
 *   MUTATION_CONCURRENCY=1     Stryker workers (each runs the suite on its own in-memory database)
 *   MUTATION_TIME_LIMIT_MIN    a budget for the whole invocation: no run starts after it, and a run still going
 *                              at the end of it is stopped (its folder is then reported as unfinished)
 *   MUTATION_INCREMENTAL=1     reuse the previous results of unchanged code and tests (reports/mutation/<name>/)
 *   MUTATION_STATIC=1          also test static (module-level) mutants; each reruns every test
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
process.chdir(root);
const FOLDERS = ["lib/execution", "lib/approvals", "lib/tasks", "lib/policy"];
const targets = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const runs = (targets.length ? targets : FOLDERS).map((t) => t.replace(/\/+$/, ""));
const limitMin = Number(process.env.MUTATION_TIME_LIMIT_MIN ?? 0);
const deadline = limitMin > 0 ? Date.now() + limitMin * 60_000 : Infinity;

function node22() {
  if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath;
  const cache = process.env.COUNTERSIGN_CONFORMANCE_CACHE ?? ".cache/conformance";
  const bin = path.resolve(cache, "node_modules/.bin/node");
  const lock = "conformance/runner/package-lock.json";
  const cached = path.join(cache, "package-lock.json");
  if (!fs.existsSync(bin) || !fs.existsSync(cached) || fs.readFileSync(cached, "utf8") !== fs.readFileSync(lock, "utf8")) {
    console.log(`[mutation] StrykerJS needs Node 22; installing the pinned one into ${cache}`);
    fs.mkdirSync(cache, { recursive: true });
    fs.copyFileSync("conformance/runner/package.json", path.join(cache, "package.json"));
    fs.copyFileSync(lock, cached);
    const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: cache, stdio: "inherit" });
    if (r.status !== 0) throw new Error("could not install Node 22 (no registry access?)");
  }
  return bin;
}

/** The report folder's name: the target made safe for a path, shortened with a digest when it lists many files. */
function runName(target) {
  const name = target.replace(/^lib\//, "").replace(/[^A-Za-z0-9.-]+/g, "_");
  return name.length <= 80 ? name : `${name.slice(0, 60)}-${createHash("sha256").update(target).digest("hex").slice(0, 12)}`;
}

const node = node22();
const stryker = path.resolve("node_modules/@stryker-mutator/core/bin/stryker.js");
let status = 0;
for (const target of runs) {
  const name = runName(target);
  const reportDir = `reports/mutation/${name}`;
  if (Date.now() >= deadline) {
    console.log(`[mutation] ${target}: not started, the time limit (${limitMin} min) is used up`);
    status = 1;
    continue;
  }
  fs.mkdirSync(reportDir, { recursive: true });
  // A run stopped at the time limit leaves only its events: the previous run's report must not stand in for it.
  for (const stale of ["unfinished", "mutation.json"]) fs.rmSync(path.join(reportDir, stale), { force: true });
  const started = Date.now();
  console.log(`[mutation] ${target} -> ${reportDir}/index.html`);
  const child = spawn(node, [stryker, "run", "stryker.config.mjs"], {
    stdio: "inherit",
    detached: true, // its own process group, so a time limit stops Stryker and every worker it started
    env: { ...process.env, MUTATION_MUTATE: target, MUTATION_REPORT_DIR: reportDir },
  });
  let timer;
  if (deadline !== Infinity) {
    timer = setTimeout(() => {
      console.log(`[mutation] ${target}: stopped at the time limit (${limitMin} min)`);
      fs.writeFileSync(path.join(reportDir, "unfinished"), new Date().toISOString() + "\n");
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {}
    }, Math.max(0, deadline - Date.now()));
  }
  const code = await new Promise((resolve) => child.on("exit", (c) => resolve(c ?? 1)));
  clearTimeout(timer);
  fs.writeFileSync(path.join(reportDir, "duration.txt"), `${Math.round((Date.now() - started) / 1000)}\n`);
  if (code !== 0) status = 1;
}

const summary = spawnSync(process.execPath, ["scripts/mutation-summary.mjs", "reports/mutation"], { stdio: "inherit" });
process.exit(status || summary.status || 0);
