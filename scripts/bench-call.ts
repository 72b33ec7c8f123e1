/**
 * Gated-call benchmark against an earlier version: `npm run bench:call [-- --baseline <git ref>]`. Prints figures;
 * it is not a test.
 *
 * The same calls go through this checkout's lib/tasks/call.ts and through the baseline's (a git ref of this
 * repository, extracted into .cache/bench-call/<commit>, with its own generated database client), each on its own
 * scratch database (in-memory embedded PGlite, or a fresh database on the PostgreSQL server named by DATABASE_URL,
 * created and dropped by the child), seeded with that version's demo data. Rounds alternate between the two
 * versions in fresh processes, so a busy machine slows both alike; the figures are medians of the rounds' medians
 * and the ratio of this checkout to the baseline in the same run:
 *   - the whole decision of an allowed call (an ops-bot staging deploy: policy, tool, audit), one at a time;
 *   - the whole decision of a gated call (a production deploy: policy, task, approval request, audit), one at a
 *     time, and the throughput of gated calls from CLIENTS concurrent callers.
 *
 *   npm run bench:call                                   baseline 9e99274 (the last version before Cedar policy)
 *   ROUNDS=6 CALLS=200 CLIENTS=8 npm run bench:call -- --baseline <ref>
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:call
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { scratchDatabase } from "./bench-db";
import { benchChildEnv, median, reportFigures, runRound, timeEach } from "./bench-support";

const DEFAULT_BASELINE = "9e99274";
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const CALLS = Number(process.env.CALLS ?? 200);
const CLIENTS = Number(process.env.CLIENTS ?? 8);

type Figures = { allowedMs: number; gatedMs: number; gatedPerSecond: number };

/** One round inside one version's tree: scratch database, that version's migrations and demo data, the calls. */
async function child(root: string): Promise<void> {
  process.chdir(root);
  const cleanup = benchChildEnv("bench-call");
  const lib = (p: string) => import(pathToFileURL(path.join(root, p)).href);
  // The same embedded server (this checkout's) for both versions: what differs is only the version's own code.
  const scratch = await scratchDatabase();
  const url = scratch.url;
  process.env.DATABASE_URL = url;
  try {
    await (await lib("lib/db/migrate.ts")).applyMigrations(url);
    const { db, closeDb } = await lib("lib/db/client.ts");
    const seed = await lib("lib/db/seed.ts");
    await seed.seedDemo(db(), { steadyClock: true });
    const { authenticateAgent } = await lib("lib/auth/agents.ts");
    const { callTool } = await lib("lib/tasks/call.ts");
    const ops = await authenticateAgent(seed.DEMO_AGENTS[1].token);
    const at = new Date("2100-11-30T10:00:00Z");
    let v = 0;
    const call = (environment: string) =>
      callTool(ops, "deploy_service", { service: "checkout-api", environment, version: `${environment === "staging" ? 9 : 8}.${v++}.0` }, { tasks: true }, at);
    const expectOutcome = async (f: () => Promise<unknown>, expect: string) => {
      const r = await f();
      if (JSON.stringify(r).indexOf(expect) < 0) throw new Error(`unexpected outcome: ${JSON.stringify(r).slice(0, 300)}`);
    };
    for (let i = 0; i < 20; i++) {
      await call("staging");
      await call("production");
    }
    await expectOutcome(() => call("staging"), "deployed to staging");
    await expectOutcome(() => call("production"), "\"kind\":\"task\"");
    const allowedMs = await timeEach(CALLS, () => call("staging"));
    const gatedMs = await timeEach(CALLS, () => call("production"));
    let left = CALLS;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (left-- > 0) await call("production");
      }),
    );
    const gatedPerSecond = (CALLS / (performance.now() - t0)) * 1000;
    const figures: Figures = { allowedMs, gatedMs, gatedPerSecond };
    reportFigures(figures);
    await closeDb();
  } finally {
    await scratch.drop();
    cleanup();
  }
}

/** The baseline's tree: its files at the ref, this checkout's node_modules, its own generated Prisma client. */
function baselineTree(ref: string): { root: string; commit: string } {
  const git = (...args: string[]) => {
    const r = spawnSync("git", args, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.trim()}`);
    return r.stdout.trim();
  };
  const commit = git("rev-parse", "--verify", `${ref}^{commit}`);
  const root = path.resolve(".cache/bench-call", commit);
  if (!fs.existsSync(path.join(root, "lib/db/generated"))) {
    fs.rmSync(root, { recursive: true, force: true });
    fs.mkdirSync(root, { recursive: true });
    const tar = spawnSync("sh", ["-c", `git archive ${commit} | tar -x -C "${root}"`], { stdio: "inherit" });
    if (tar.status !== 0) throw new Error("could not extract the baseline");
    fs.symlinkSync(path.resolve("node_modules"), path.join(root, "node_modules"));
    const gen = spawnSync(process.execPath, ["scripts/prisma-generate.mjs"], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
    if (gen.status !== 0) throw new Error("could not generate the baseline's database client");
  }
  return { root, commit };
}

function round(root: string): Figures {
  return runRound<Figures>("scripts/bench-call.ts", ["--child", root]);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === "--child") return child(argv[1]);
  const at = argv.indexOf("--baseline");
  const ref = at >= 0 ? argv[at + 1] : DEFAULT_BASELINE;
  const current = path.resolve(".");
  const baseline = baselineTree(ref);
  const rounds: { current: Figures[]; baseline: Figures[] } = { current: [], baseline: [] };
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate which version goes first, so neither always runs on the warmer (or busier) machine.
    const order = i % 2 ? (["baseline", "current"] as const) : (["current", "baseline"] as const);
    for (const which of order) rounds[which].push(round(which === "current" ? current : baseline.root));
    process.stderr.write(`round ${i + 1}/${ROUNDS} done\n`);
  }
  const pick = (xs: Figures[], k: keyof Figures) => median(xs.map((x) => x[k]));
  const db = process.env.DATABASE_URL ? "PostgreSQL" : "embedded PGlite (in memory)";
  console.log(`Gated-call benchmark on ${db}: this checkout vs ${ref} (${baseline.commit.slice(0, 7)}), ${ROUNDS} alternating rounds of ${CALLS} calls; medians of the rounds' medians`);
  console.log(`| figure | baseline | this checkout | this / baseline |`);
  console.log(`|---|---|---|---|`);
  const row = (label: string, k: keyof Figures, unit: string, better: "lower" | "higher") => {
    const b = pick(rounds.baseline, k);
    const c = pick(rounds.current, k);
    const fmt = (x: number) => (unit === "ms" ? `${x.toFixed(2)} ms` : `${x.toFixed(0)}/s`);
    console.log(`| ${label} | ${fmt(b)} | ${fmt(c)} | ${(c / b).toFixed(2)} (${better} is better) |`);
  };
  row("allowed call, one at a time (median latency)", "allowedMs", "ms", "lower");
  row("gated call, one at a time (median latency)", "gatedMs", "ms", "lower");
  row(`gated calls, ${CLIENTS} concurrent callers (throughput)`, "gatedPerSecond", "/s", "higher");
}

await main();
