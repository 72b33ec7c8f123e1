/**
 * Shared helpers for the proof tests (claim-race, cancel-race, crash, lifecycle, model): fixed clocks, fresh
 * orders so many tasks can be opened without resetting the database, approvals recorded in the backend without
 * advancing the task, side-effect and audit counts, and child processes that reach the run's database over TCP.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { expect, vi } from "vitest";
import { db } from "../../lib/db/client";
import { reviewRequest } from "../../lib/approvals/review";
import { saveRuleVersion, type RuleInput } from "../../lib/policy/save-rule";
import { callTool } from "../../lib/tasks/call";
import type { Principal } from "../../lib/tasks/types";
import { principal, requestIdOf, userId } from "./db";

export const SEC = 1_000;
export const MIN = 60 * SEC;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;
/** The configured defaults (lib/config.ts) the assertions rely on. */
export const RESULT_RETENTION_MS = 7 * DAY;
export const EXECUTION_DEADLINE_MS = 60 * SEC;

/**
 * The fixed clock of the domain tests. It lies far in the future on purpose: the execution claim checks validity
 * at the later of the time passed in and the database's own clock, so a fixed clock ahead of real time keeps
 * every expiry boundary exact; a test that needs real time passing uses real dates.
 */
export const T0 = new Date("2100-11-30T10:00:00.000Z");
export const at = (ms: number, base: Date = T0) => new Date(base.getTime() + ms);

export const LONG = process.env.LONG_PROOFS === "1";

export const LEADS = ["lena.lead@countersign.test", "sam.lead@countersign.test"] as const;
export const TREASURY = ["tara.treasury@countersign.test", "theo.treasury@countersign.test"] as const;
export const SRES = ["sasha.sre@countersign.test", "sid.sre@countersign.test"] as const;

/** A demo-shop order of its own, so a test can open many independent refund tasks without resetting. */
export async function freshOrder(id: string, totalCents = 20_000): Promise<string> {
  await db().order.create({ data: { id, customer: "Proof Test", totalCents, currency: "EUR" } });
  return id;
}

/**
 * Email on for the rest of the test (undone by `vi.unstubAllEnvs()`): the outbox writes its rows; nothing is
 * delivered, as no mail server listens there and the test does not run the sender.
 */
export function emailOutboxOn(): void {
  vi.stubEnv("COUNTERSIGN_SMTP_URL", "smtp://127.0.0.1:9");
  vi.stubEnv("COUNTERSIGN_PUBLIC_URL", "https://countersign.example.com");
}

/** A gated (approval-required) call that must come back as a working task. */
export async function gatedCall(agent: Principal, tool: string, args: unknown, now: Date): Promise<string> {
  const out = await callTool(agent, tool, args, { tasks: true }, now);
  if (out.kind !== "task") throw new Error(`expected a task for ${tool}, got ${out.kind}: ${JSON.stringify(out)}`);
  expect(out.task.status).toBe("working");
  return out.task.taskId;
}

/** A production deploy through the ops bot: one SRE approval (the demo rule deploy-production). */
export async function gatedDeploy(version = "9.9.9", now: Date = T0): Promise<string> {
  return gatedCall(await principal("ops-bot"), "deploy_service", { service: "checkout-api", environment: "production", version }, now);
}

export async function gatedRefund(orderId: string, now: Date = T0, agent?: Principal): Promise<string> {
  return gatedCall(agent ?? (await principal()), "issue_refund", { order_id: orderId }, now);
}

/** Records a reviewer's decision in the backend only (what an inbox click does before the task is advanced). */
export async function review(taskId: string, email: string, decision: "approve" | "deny", now: Date) {
  return reviewRequest(
    { requestId: await requestIdOf(taskId), reviewerId: await userId(email), decision, comment: decision === "deny" ? "Not justified" : undefined },
    now,
  );
}

export async function approveOnly(taskId: string, email: string, now: Date): Promise<void> {
  const r = await review(taskId, email, "approve", now);
  if (!r.ok) throw new Error(`approval by ${email} refused: ${r.error}`);
}

export function taskRow(taskId: string) {
  return db().task.findUniqueOrThrow({ where: { id: taskId } });
}

/** Every side-effect row any tool wrote for this task (refund, transfer, deployment). */
export async function sideEffects(taskId: string): Promise<number> {
  const [r, t, d] = await Promise.all([
    db().refund.count({ where: { taskId } }),
    db().transfer.count({ where: { taskId } }),
    db().deployment.count({ where: { taskId } }),
  ]);
  return r + t + d;
}

export function auditCount(taskId: string, type: string): Promise<number> {
  return db().auditEvent.count({ where: { taskId, type } });
}

/** The body must state what the disposition says (SEP "Execution disposition": body and disposition agree). */
export function expectBodyAgrees(result: { text: string; isError: boolean; disposition?: string }): void {
  switch (result.disposition) {
    case "approved-executed":
      expect(result.isError).toBe(false);
      expect(result.text).toMatch(/executed once/);
      expect(result.text).not.toMatch(/did not run|may have run/);
      break;
    case "denied-not-executed":
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/did not run/);
      expect(result.text).not.toMatch(/executed once|may have run/);
      break;
    case "execution-error":
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/ran but failed/);
      expect(result.text).toMatch(/side effect may have occurred/);
      break;
    case "outcome-unknown":
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/may have run/);
      expect(result.text).not.toMatch(/did not run|executed once/);
      break;
    default:
      throw new Error(`a completed approval task without a known disposition: ${JSON.stringify(result)}`);
  }
}

/** A denial that says why: completed denied-not-executed, the body agrees, the tool never ran and no claim was made. */
export async function expectDenied(taskId: string, words: RegExp): Promise<void> {
  const t = await taskRow(taskId);
  expect(t).toMatchObject({ status: "completed", disposition: "denied-not-executed", phase: "done" });
  expectBodyAgrees(t.result as never);
  expect((t.result as { text: string }).text).toMatch(words);
  expect(await sideEffects(taskId)).toBe(0);
  expect(await auditCount(taskId, "execution.claimed")).toBe(0);
}

export type Worker = {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with the next stdout line. */
  nextLine(): Promise<string>;
  /** Resolves when the process ended: exit code or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
};

/**
 * Starts `tests/workers/<script>` as a separate OS process (node --import tsx) reaching the run's database over
 * TCP. A small pool keeps several processes within the embedded server's connection cap.
 */
export function startWorker(script: string, args: string[], env: Record<string, string> = {}): Worker {
  const file = path.resolve(import.meta.dirname, "..", "workers", script);
  const child = spawn(process.execPath, ["--import", "tsx", file, ...args], {
    cwd: path.resolve(import.meta.dirname, "..", ".."),
    env: { ...process.env, DB_POOL_MAX: "4", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.on("data", (d) => (err += String(d)));
  const rl = readline.createInterface({ input: child.stdout });
  const lines: string[] = [];
  const waiters: ((l: string) => void)[] = [];
  rl.on("line", (l) => {
    const w = waiters.shift();
    if (w) w(l);
    else lines.push(l);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    nextLine: () => {
      const l = lines.shift();
      if (l !== undefined) return Promise.resolve(l);
      return new Promise<string>((resolve, reject) => {
        waiters.push(resolve);
        void exited.then(({ code, signal }) => reject(new Error(`worker ${script} ended (code ${code}, signal ${signal}) before a line; stderr:\n${err}`)));
      });
    },
    exited,
    stderr: () => err,
  };
}

export function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const t = performance.now();
  return fn().finally(() => console.log(`[proof] ${label}: ${Math.round(performance.now() - t)} ms`));
}

/** Edits a rule through saveRuleVersion: a new active version of the rule key, the previous one retired (at T0 unless told). */
export async function editRule(ruleKey: string, changes: Partial<RuleInput>, now: Date = T0): Promise<number> {
  const cur = await db().policyRule.findFirstOrThrow({ where: { ruleKey, active: true } });
  const input: RuleInput = {
    ruleKey: cur.ruleKey,
    tool: cur.tool,
    description: cur.description,
    field: cur.field,
    operator: cur.operator as RuleInput["operator"],
    value: cur.value,
    currency: cur.currency,
    effect: cur.effect as RuleInput["effect"],
    approverGroup: cur.approverGroup,
    approvalsRequired: cur.approvalsRequired,
    requestDeadlineSec: cur.requestDeadlineSec,
    approvalValiditySec: cur.approvalValiditySec,
    requireJustification: cur.requireJustification,
    reason: cur.reason,
    active: true,
    ...changes,
  };
  const saved = await saveRuleVersion(input, await userId("admin@countersign.test"), now);
  return saved.version;
}
