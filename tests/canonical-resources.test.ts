/**
 * Policy judges the resource the tool will act on, never the string the agent typed. For every tool, a table of
 * spellings of one target goes through callTool (validation, mapping, evaluation, then a run, a refusal or a
 * task) and every spelling must get the same decision: the same task for the same canonical resource, the same
 * immediate result, or the same refusal as invalid input with nothing written.
 *
 * delete_path resolves paths as the operating system does (symbolic links in folders on the way followed), so a
 * link elsewhere in the sandbox that leads into prod/ needs prod/'s approvals; the resolved path is resolved again
 * at execution, and a call whose path now names something else is never run (SEP: "a changed envelope (tool,
 * arguments, principal, or subject/resource) requires a new approval").
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../lib/db/client";
import { advanceTask } from "../lib/execution/advance";
import { callTool } from "../lib/tasks/call";
import type { Principal } from "../lib/tasks/types";
import { deletePath, sandboxDir } from "../lib/tools/delete-path";
import { issueRefund } from "../lib/tools/issue-refund";
import { principal, resetDb } from "./support/db";
import { MIN, SRES, T0, approveOnly, at, expectBodyAgrees, gatedCall, sideEffects, taskRow } from "./support/proof";

let ops: Principal;
let support: Principal;

beforeEach(async () => {
  await resetDb();
  ops = await principal("ops-bot");
  support = await principal("support-bot");
});
afterEach(() => {
  vi.restoreAllMocks();
});

const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

/** What callTool decided, in one comparable word: the task's resource, a run, a policy denial or invalid input. */
async function decisionOf(agent: Principal, tool: string, args: unknown): Promise<string> {
  const before = await db().task.count();
  const out = await callTool(agent, tool, args, { tasks: true }, T0);
  if (out.kind === "task") {
    const t = await taskRow(out.task.taskId);
    return `approval needed for ${t.resourceType} ${t.resourceId}`;
  }
  expect(await db().task.count()).toBe(before);
  if (out.kind !== "result") return out.kind;
  if (!out.outcome.isError) return "ran";
  const text = out.outcome.text;
  expect(text).toMatch(/did not run/);
  if (/^Denied by policy/.test(text)) return "denied by policy";
  return "invalid input";
}

async function expectAllDecided(agent: Principal, tool: string, spellings: unknown[], expected: string) {
  const got: Record<string, string> = {};
  for (const args of spellings) got[JSON.stringify(args)] = await decisionOf(agent, tool, args);
  expect(got).toEqual(Object.fromEntries(spellings.map((a) => [JSON.stringify(a), expected])));
}

async function nothingSubmitted() {
  expect(await db().submissionIntent.count()).toBe(0);
  expect(await db().approvalRequest.count()).toBe(0);
}

// ---- delete_path ----

const root = () => sandboxDir();
const exists = (rel: string) => fs.lstat(path.join(root(), rel)).then(() => true, () => false);

async function sandboxWithLinks() {
  const r = root();
  for (const rel of ["staging/current", "staging/logs-link", "staging/app.log", "staging/escape", "production", "staging-old"]) {
    await fs.rm(path.join(r, rel), { recursive: true, force: true });
  }
  await fs.mkdir(path.join(r, "production"), { recursive: true });
  await fs.writeFile(path.join(r, "production/notes.txt"), "not production data\n");
  await fs.mkdir(path.join(r, "staging-old/logs"), { recursive: true });
  await fs.writeFile(path.join(r, "staging-old/logs/old.log"), "old staging log\n");
  await fs.symlink("../prod", path.join(r, "staging/current"));
  await fs.symlink("../prod/logs", path.join(r, "staging/logs-link"));
  await fs.symlink("../prod/logs/app-2026-11-29.log", path.join(r, "staging/app.log"));
  await fs.symlink(os.tmpdir(), path.join(r, "staging/escape"));
}

async function prodIntact() {
  expect(await exists("prod/logs/app-2026-11-29.log")).toBe(true);
  expect(await exists("prod/cache/render-cache.bin")).toBe(true);
}

describe("delete_path: policy evaluates the canonical, resolved path the tool will delete", () => {
  beforeEach(sandboxWithLinks);

  it("the production folder itself: every spelling, and every link that leads to it, needs two SRE approvals", async () => {
    const spellings = ["prod", "prod/", "./prod", "prod/.", "prod//", "./prod/./", "prod\\", "staging/../prod", "prod/logs/..", "staging/current/", "staging/current/.", "staging/logs-link/.."];
    await expectAllDecided(ops, "delete_path", spellings.map((p) => ({ path: p })), "approval needed for path prod");
    await prodIntact();
  });

  it("a folder in prod/: every spelling, and every link that leads to it, needs two SRE approvals", async () => {
    const spellings = ["prod/logs", "./prod/logs/", "prod//logs", "prod/cache/../logs", "staging/current/logs", "staging/current/./logs/", "staging/logs-link/", "staging/logs-link/."];
    await expectAllDecided(ops, "delete_path", spellings.map((p) => ({ path: p })), "approval needed for path prod/logs");
    const files = ["prod/logs/app-2026-11-29.log", "staging/current/logs/app-2026-11-29.log", "staging/logs-link/app-2026-11-29.log", "staging/logs-link//app-2026-11-29.log"];
    await expectAllDecided(ops, "delete_path", files.map((p) => ({ path: p })), "approval needed for path prod/logs/app-2026-11-29.log");
    await prodIntact();
  });

  it("the summary reviewers read names the resolved path and what it is, and the spelling that was asked for", async () => {
    const out = await callTool(ops, "delete_path", { path: "staging/current/logs/" }, { tasks: true }, T0);
    if (out.kind !== "task") throw new Error(out.kind);
    const intent = await db().submissionIntent.findFirstOrThrow({ where: { taskId: out.task.taskId } });
    expect((intent.body as { summary: string }).summary).toBe("Delete the folder prod/logs in the sandbox (requested as staging/current/logs/)");
  });

  it("a symbolic link as the last component is deleted itself, not what it points to: no approval, and prod/ is untouched", async () => {
    expect(await decisionOf(ops, "delete_path", { path: "staging/current" })).toBe("ran");
    expect(await decisionOf(ops, "delete_path", { path: "./staging//app.log" })).toBe("ran");
    expect(await exists("staging/current")).toBe(false);
    expect(await exists("staging/app.log")).toBe(false);
    await prodIntact();
  });

  it("a sibling that only shares the letters (production/) is not under prod/", async () => {
    expect(await decisionOf(ops, "delete_path", { path: "./production/notes.txt" })).toBe("ran");
    expect(await decisionOf(ops, "delete_path", { path: "production/" })).toBe("ran");
    expect(await exists("production")).toBe(false);
    await prodIntact();
  });

  it("a path that leaves the sandbox, names the sandbox itself or names nothing is invalid input, and nothing is deleted or submitted", async () => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), "countersign-outside-"));
    await fs.writeFile(path.join(outside, "keep.txt"), "outside the sandbox\n");
    const spellings = [
      "../outside.txt",
      "/etc/hostname",
      "prod/../..",
      ".",
      "./",
      "staging/..",
      `staging/escape/${path.basename(outside)}/keep.txt`,
      `staging/escape/${path.basename(outside)}/`,
      "prod/no-such-file",
      "staging/current/no-such-file",
    ];
    await expectAllDecided(ops, "delete_path", spellings.map((p) => ({ path: p })), "invalid input");
    expect(await fs.readFile(path.join(outside, "keep.txt"), "utf8")).toBe("outside the sandbox\n");
    await prodIntact();
    await nothingSubmitted();
    await fs.rm(outside, { recursive: true, force: true });
  });
});

describe("delete_path: the resource is re-resolved at execution", () => {
  beforeEach(sandboxWithLinks);

  async function approvedDeletionThroughLink(): Promise<string> {
    const taskId = await gatedCall(ops, "delete_path", { path: "staging/current/logs" }, T0);
    expect((await taskRow(taskId)).resourceId).toBe("prod/logs");
    await approveOnly(taskId, SRES[0], at(MIN));
    await approveOnly(taskId, SRES[1], at(MIN));
    return taskId;
  }

  async function repointLink() {
    await fs.rm(path.join(root(), "staging/current"));
    await fs.symlink("../staging-old", path.join(root(), "staging/current"));
  }

  it("a changed envelope requires a new approval: the link on the path is re-pointed after creation, so the resource has another identity and the call ends denied-not-executed, nothing deleted", async () => {
    const taskId = await approvedDeletionThroughLink();
    // The same arguments now lead to staging-old/logs, which no rule protects: policy alone would allow it.
    await repointLink();
    await advanceTask(taskId, at(2 * MIN));
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expectBodyAgrees(t.result as never);
    expect((t.result as { text: string }).text).toMatch(/the resource changed while the request was pending/);
    expect(await exists("staging-old/logs/old.log")).toBe(true);
    await prodIntact();
    expect(await db().auditEvent.count({ where: { taskId, type: "execution.claimed" } })).toBe(0);
  });

  it("the tool acts on exactly the approved resolved path: a link re-pointed after the claim is refused when the tool runs, nothing deleted", async () => {
    const taskId = await approvedDeletionThroughLink();
    const run = deletePath.run.bind(deletePath);
    vi.spyOn(deletePath, "run").mockImplementationOnce(async (args, ctx) => {
      await repointLink();
      return run(args, ctx);
    });
    await advanceTask(taskId, at(2 * MIN));
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "completed", disposition: "execution-error" });
    expect((t.result as { text: string }).text).toMatch(/staging\/current\/logs now resolves to staging-old\/logs, not to prod\/logs as decided; refused, nothing was deleted/);
    expect(await exists("staging-old/logs/old.log")).toBe(true);
    await prodIntact();
  });

  it("an approved deletion through a link that still leads to the approved path deletes exactly that path", async () => {
    const taskId = await approvedDeletionThroughLink();
    await advanceTask(taskId, at(2 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(await exists("prod/logs")).toBe(false);
    expect(await exists("staging/current")).toBe(true);
    expect(await exists("prod/cache/render-cache.bin")).toBe(true);
  });
});

describe("re-evaluation compares the resource's identity with the one the task was created for", () => {
  it.each([
    ["another order (id)", { type: "order", id: "O-1021" }],
    ["another kind of resource with the same id (type)", { type: "customer", id: "O-2289" }],
  ])("a mapping that now names %s: a changed envelope requires a new approval, so the call ends denied-not-executed and nothing runs", async (_label, identity) => {
    const taskId = await gatedCall(support, "issue_refund", { order_id: "O-2289" }, T0);
    expect(await taskRow(taskId)).toMatchObject({ resourceType: "order", resourceId: "O-2289" });
    await approveOnly(taskId, "lena.lead@countersign.test", at(MIN));
    // Policy alone would allow what the mapping now returns (a small amount): only the identity check stops it.
    vi.spyOn(issueRefund, "resource").mockResolvedValue({ ...identity, properties: { amount_cents: 100, currency: "EUR", refundable_cents: 18_000 } });
    await advanceTask(taskId, at(2 * MIN));
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expect((t.result as { text: string }).text).toMatch(/the resource changed while the request was pending/);
    expect(await db().refund.count()).toBe(0);
    expect(await sideEffects(taskId)).toBe(0);
  });
});

// ---- issue_refund ----

describe("issue_refund: one order and one amount, however they are spelled", () => {
  it("the order as stored and the amount in cents: equivalent spellings all need the same approval", async () => {
    const spellings = [
      { order_id: "O-2289" },
      { order_id: "O-2289", amount: 180 },
      json('{"order_id":"O-2289","amount":180.00}'),
      json('{"order_id":"O-2289","amount":1.8e2}'),
      json('{"order_id":"O-2289","amount":18000e-2}'),
    ];
    await expectAllDecided(support, "issue_refund", spellings, "approval needed for order O-2289");
    const resources = await db().submissionIntent.findMany({ select: { requester: true } });
    const ids = resources.map((r) => (r.requester as { resource: { type: string; id: string } }).resource);
    expect(new Set(ids.map((r) => `${r.type} ${r.id}`))).toEqual(new Set(["order O-2289"]));
  });

  it("spellings that are not the stored order or not a JSON number of cents are invalid input, never another decision", async () => {
    const spellings = [
      { order_id: "o-2289" },
      { order_id: "O-２２８９" },
      { order_id: "О-2289" },
      { order_id: " O-2289" },
      { order_id: "O-2289 " },
      { order_id: "O-2289\u200b" },
      { order_id: "O-02289" },
      { order_id: "O-2289", amount: "180" },
      { order_id: "O-2289", amount: "180.00" },
      { order_id: "O-2289", amount: 180.001 },
      { order_id: "O-2289", amount: null },
    ];
    await expectAllDecided(support, "issue_refund", spellings, "invalid input");
    await nothingSubmitted();
    expect(await db().refund.count()).toBe(0);
  });

  it("a small refund runs at once, for the same cents whatever the spelling", async () => {
    await expectAllDecided(support, "issue_refund", [{ order_id: "O-1021", amount: 5 }, json('{"order_id":"O-1021","amount":5.00}'), json('{"order_id":"O-1021","amount":5e0}')], "ran");
    expect((await db().refund.findMany({ where: { orderId: "O-1021" } })).map((r) => r.amountCents)).toEqual([500, 500, 500]);
  });
});

// ---- wire_transfer ----

describe("wire_transfer: one account and one amount, however they are spelled", () => {
  it("above USD 25,000: 25000.01, 25000.010 and 2.500001e4 are one amount and one approval", async () => {
    const spellings = [
      { to: "acct-991", amount: 25_000.01 },
      json('{"to":"acct-991","amount":25000.010}'),
      json('{"to":"acct-991","amount":2.500001e4}'),
    ];
    await expectAllDecided(ops, "wire_transfer", spellings, "approval needed for account acct-991");
    expect(await db().task.count()).toBe(1);
  });

  it("at USD 25,000: 25000, 25000.00 and 2.5e4 all run at once, for the same cents", async () => {
    // Each to its own account: a second USD 25,000 to one account within 24 hours needs treasury (its 24-hour total).
    const spellings = [{ to: "acct-991", amount: 25_000 }, json('{"to":"acct-992","amount":25000.00}'), json('{"to":"acct-993","amount":2.5e4}')];
    for (const args of spellings) expect(await decisionOf(ops, "wire_transfer", args)).toBe("ran");
    const transfers = await db().transfer.findMany({ orderBy: { toAccount: "asc" } });
    expect(transfers.map((t) => [t.toAccount, Number(t.amountCents)])).toEqual([["acct-991", 2_500_000], ["acct-992", 2_500_000], ["acct-993", 2_500_000]]);
  });

  it("above USD 1,000,000: every spelling is denied by policy", async () => {
    await expectAllDecided(ops, "wire_transfer", [{ to: "acct-991", amount: 1_000_000.01 }, json('{"to":"acct-991","amount":1.00000001e6}')], "denied by policy");
  });

  it("account spellings in another case, with spaces, as an IBAN or with look-alike letters, and amounts as text or with a third decimal, are invalid input", async () => {
    const spellings = [
      { to: "ACCT-991", amount: 30_000 },
      { to: "Acct-991", amount: 30_000 },
      { to: " acct-991", amount: 30_000 },
      { to: "acct-991 ", amount: 30_000 },
      { to: "acct 991", amount: 30_000 },
      { to: "аcct-991", amount: 30_000 },
      { to: "acct-９９１", amount: 30_000 },
      { to: "acct-991\u200b", amount: 30_000 },
      { to: "DE89 3704 0044 0532 0130 00", amount: 30_000 },
      { to: "DE89370400440532013000", amount: 30_000 },
      { to: "acct-991", amount: "30000" },
      { to: "acct-991", amount: "2.5e4" },
      { to: "acct-991", amount: "25,000.01" },
      { to: "acct-991", amount: 25_000.001 },
    ];
    await expectAllDecided(ops, "wire_transfer", spellings, "invalid input");
    await nothingSubmitted();
    expect(await db().transfer.count()).toBe(0);
  });
});

// ---- deploy_service ----

describe("deploy_service: one service, environment and version, however they are spelled", () => {
  it("to production: 1.4.2, v1.4.2 and 01.04.02 are one version and need the same approval, evaluated as 1.4.2", async () => {
    const spellings = ["1.4.2", "v1.4.2", "01.04.02", "v001.4.2"].map((version) => ({ service: "checkout-api", environment: "production", version }));
    await expectAllDecided(ops, "deploy_service", spellings, "approval needed for service checkout-api");
    const summaries = (await db().submissionIntent.findMany()).map((i) => (i.body as { summary: string }).summary);
    expect(new Set(summaries)).toEqual(new Set(["Deploy checkout-api 1.4.2 to production"]));
  });

  it("environments and service names in another case, with spaces, abbreviated or with look-alike letters are invalid input", async () => {
    const base = { service: "checkout-api", environment: "production", version: "1.4.2" };
    const spellings = [
      ...["Production", "PRODUCTION", "prod", " production", "production ", "prоduction", "ｐｒｏｄｕｃｔｉｏｎ", "production\u200b"].map((environment) => ({ ...base, environment })),
      ...["Checkout-API", "checkout_api", "сheckout-api", "checkout-api ", "ｃheckout-api"].map((service) => ({ ...base, service })),
      { ...base, version: "1.4" },
      { ...base, version: "V1.4.2" },
      { ...base, version: "１.4.2" },
    ];
    await expectAllDecided(ops, "deploy_service", spellings, "invalid input");
    await nothingSubmitted();
    expect(await db().deployment.count()).toBe(0);
  });

  it("to staging: runs at once and records the canonical version", async () => {
    await expectAllDecided(ops, "deploy_service", ["v2.0.10", "2.0.010"].map((version) => ({ service: "checkout-api", environment: "staging", version })), "ran");
    expect((await db().deployment.findMany()).map((d) => d.version)).toEqual(["2.0.10", "2.0.10"]);
  });
});
