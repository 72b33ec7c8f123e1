/**
 * What the benchmark scripts share: medians and percentiles, timing one call at a time, counting the statements the
 * driver sends, the environment of a benchmark child process (its own data folder, the per-agent limits out of the way), and running one round in a
 * fresh child process that reports its figures on a `FIGURES <json>` line.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The p-th percentile (0..100) by nearest rank. */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** The median wall time in ms of `n` calls of `f`, one at a time. */
export async function timeEach(n: number, f: (i: number) => unknown): Promise<number> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f(i);
    out.push(performance.now() - t);
  }
  return median(out);
}

/**
 * The environment of a benchmark child: a data folder of its own (keys), per-agent limits high enough that the
 * figures measure the work and not the limits, and the demo policy without its business-hours rule (so a gated
 * call is gated the same way at any hour). Returns a function that removes the data folder.
 */
export function benchChildEnv(prefix: string): () => void {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `countersign-${prefix}-`));
  process.env.COUNTERSIGN_DATA_DIR = dataDir;
  process.env.COUNTERSIGN_MAX_PENDING_PER_AGENT = "1000000";
  process.env.COUNTERSIGN_SUBMISSIONS_PER_MINUTE = "1000000";
  process.env.COUNTERSIGN_DEMO_STEADY_CLOCK = "1";
  return () => fs.rmSync(dataDir, { recursive: true, force: true });
}

/**
 * Counts every statement the app's driver sends, and the time spent in them, by wrapping pg's Client.query (the
 * Prisma adapter's pool clients are pg Clients): each query call is one statement, BEGIN, COMMIT and ROLLBACK
 * included; each BEGIN is one transaction. `restore()` puts the driver's own function back.
 */
export async function countStatements() {
  const pg = (await import("pg")).default;
  const counter = { statements: 0, transactions: 0, ms: 0 };
  const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
  (pg.Client.prototype as unknown as { query: typeof query }).query = function (this: unknown, ...a: unknown[]) {
    const first = a[0] as string | { text?: string } | undefined;
    const text = typeof first === "string" ? first : (first?.text ?? "");
    counter.statements++;
    if (/^\s*BEGIN\b/i.test(text)) counter.transactions++;
    const t = performance.now();
    const done = () => void (counter.ms += performance.now() - t);
    // Called with a callback (as the Prisma adapter does) or for a promise.
    const last = a[a.length - 1];
    if (typeof last === "function") {
      a[a.length - 1] = function (this: unknown, ...r: unknown[]) {
        done();
        return (last as (...r: unknown[]) => unknown).apply(this, r);
      };
    }
    const out = query.apply(this, a);
    if (typeof last !== "function" && out && typeof (out as Promise<unknown>).then === "function") return (out as Promise<unknown>).finally(done);
    return out;
  };
  return {
    restore: () => void ((pg.Client.prototype as unknown as { query: typeof query }).query = query),
    /** The statements, transactions and database time of `f`, run alone. */
    async measure<T>(f: () => Promise<T>): Promise<{ value: T; statements: number; transactions: number; dbMs: number; ms: number }> {
      const before = { ...counter };
      const t = performance.now();
      const value = await f();
      const ms = performance.now() - t;
      return { value, statements: counter.statements - before.statements, transactions: counter.transactions - before.transactions, dbMs: counter.ms - before.ms, ms };
    },
  };
}

export function reportFigures(figures: unknown): void {
  process.stdout.write(`FIGURES ${JSON.stringify(figures)}\n`);
}

/**
 * Runs `script` with `args` in a fresh process (through tsx, or plain node with `nodeArgs` such as --cpu-prof and
 * the tsx loader) and returns the figures it reported.
 */
export function runRound<T>(script: string, args: string[], opts: { env?: NodeJS.ProcessEnv; nodeArgs?: string[] } = {}): T {
  const [cmd, pre] = opts.nodeArgs
    ? [process.execPath, [...opts.nodeArgs, "--import", "tsx"]]
    : [path.resolve("node_modules/.bin/tsx"), []];
  const r = spawnSync(cmd, [...pre, path.resolve(script), ...args], {
    encoding: "utf8",
    env: opts.env ?? process.env,
    maxBuffer: 64 << 20,
    // The round's progress and errors go straight to this process's stderr.
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = r.stdout.split("\n").find((l) => l.startsWith("FIGURES "));
  if (r.status !== 0 || !line) throw new Error(`round ${script} ${args.join(" ")} failed (exit ${r.status}); its errors are above`);
  return JSON.parse(line.slice("FIGURES ".length)) as T;
}
