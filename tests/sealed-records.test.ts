/**
 * SEP "Durable sensitive state": the complete arguments, submission body, requester input, answers and webhook
 * payloads are protected for confidentiality and integrity at rest (sealed with AES-256-GCM, bound to their row),
 * reviewers still see them, a record that does not open is never used (the call is denied, the page errors),
 * keys rotate, an older database's plain-text rows are sealed when it is migrated, and everything derived from a
 * task's arguments is deleted when its retention ends.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import { config } from "../lib/config";
import { isSealed, sealedKid, SealedRecordError } from "../lib/crypto/seal";
import { keyRing } from "../lib/crypto/keys";
import { db } from "../lib/db/client";
import { applyMigrations } from "../lib/db/migrate";
import { rotateKeys, sealLegacyRows } from "../lib/db/sealed-rows";
import { sweep } from "../lib/execution/sweep";
import { requestFor } from "../lib/inbox/queries";
import { askRequester } from "../lib/tasks/ask";
import { callTool } from "../lib/tasks/call";
import { decide } from "../lib/tasks/decide";
import { updateTask } from "../lib/tasks/update";
import type { Viewer } from "../lib/inbox/inbox";
import { deliverDue } from "../lib/webhooks/deliver";
import { createWebhook } from "../lib/webhooks/admin";
import { principal, requestIdOf, resetDb, userId } from "./support/db";

// A fixed clock in the future: the claim checks the approval against the real clock as well.
import { T0 } from "./support/proof";
const at = (s: number) => new Date(T0.getTime() + s * 1000);

async function viewerFor(email: string): Promise<Viewer> {
  const u = await db().user.findUniqueOrThrow({ where: { email } });
  return { id: u.id, role: u.role, groups: u.groups };
}

/** The tool's own systems (the demo shop's ledger): a tool's effect is not Countersign's record of the call. */
const TOOL_TABLES = ["Order", "Refund", "Transfer", "Deployment"];

/** Tables (of all in the public schema) with a row whose text, in any column, contains `needle`. */
async function tablesContaining(needle: string): Promise<string[]> {
  const tables = await db().$queryRaw<{ tablename: string }[]>`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`;
  const hits: string[] = [];
  for (const { tablename } of tables) {
    const [{ n }] = await db().$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${tablename}" t WHERE t::text ILIKE $1`, `%${needle}%`);
    if (n > 0) hits.push(tablename);
  }
  return hits;
}

/** Every sealed value in the database (any table, any column), as text. */
async function sealedValues(): Promise<{ table: string; value: string }[]> {
  const cols = await db().$queryRaw<{ table_name: string; column_name: string }[]>`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = 'public' AND data_type IN ('jsonb', 'json', 'text', 'character varying')`;
  const out: { table: string; value: string }[] = [];
  for (const c of cols) {
    const rows = await db().$queryRawUnsafe<{ v: string }[]>(
      `SELECT "${c.column_name}"::text AS v FROM "${c.table_name}" WHERE "${c.column_name}"::text LIKE '%cs1.%'`,
    );
    for (const r of rows) out.push({ table: `${c.table_name}.${c.column_name}`, value: r.v });
  }
  return out;
}

type Flow = { taskId: string; requestId: string; marker: string; account: string; sent: string[] };

/**
 * A gated wire transfer carrying `marker` in its memo, justification, ticket and the requester's answer, and an
 * account of its own (which the summary names): asked, answered, approved twice, executed, webhooks delivered.
 */
async function approvedTransfer(): Promise<Flow> {
  const marker = `mk${randomBytes(6).toString("hex")}`;
  const account = `acct-${randomBytes(4).toString("hex")}`;
  const admin = await userId("admin@countersign.test");
  await createWebhook({ url: "https://hooks.example/in", events: ["request.created", "request.decided", "task.completed"] }, admin, at(0));
  const out = await callTool(
    await principal("ops-bot"),
    "wire_transfer",
    { to: account, amount: 30_001, memo: `invoice ${marker}` },
    { tasks: true, input: { justification: `asked by ${marker}`, ticket: `T-${marker}` } },
    at(0),
  );
  if (out.kind !== "task") throw new Error(`expected a task, got ${out.kind}`);
  const taskId = out.task.taskId;
  const requestId = await requestIdOf(taskId);
  const theo = await userId("theo.treasury@countersign.test");
  const tara = await userId("tara.treasury@countersign.test");
  await askRequester({ requestId, reviewerId: theo, question: "Which invoice is this?" }, at(1));
  const key = (await db().clarification.findFirstOrThrow({ where: { requestId } })).key;
  await updateTask(await principal("ops-bot"), taskId, { [key]: { action: "accept", content: { answer: `see ${marker}` } } }, at(2));
  expect(await decide({ requestId, reviewerId: tara, decision: "approve" }, at(3))).toMatchObject({ ok: true });
  expect(await decide({ requestId, reviewerId: theo, decision: "approve" }, at(4))).toMatchObject({ ok: true });
  const sent: string[] = [];
  await deliverDue(at(5), { fetch: (async (_url: string, init: RequestInit) => { sent.push(String(init.body)); return new Response(null, { status: 204 }); }) as typeof fetch });
  expect(await db().webhookDelivery.count({ where: { status: "delivered" } })).toBe(3);
  return { taskId, requestId, marker, account, sent };
}

async function pendingTransfer(to: string, memo: string) {
  const out = await callTool(await principal("ops-bot"), "wire_transfer", { to, amount: 30_002, memo }, { tasks: true, input: { justification: "month end" } }, at(0));
  if (out.kind !== "task") throw new Error("expected a task");
  return { taskId: out.task.taskId, requestId: await requestIdOf(out.task.taskId) };
}

async function approveTwice(requestId: string, now: Date) {
  await decide({ requestId, reviewerId: await userId("tara.treasury@countersign.test"), decision: "approve" }, now);
  await decide({ requestId, reviewerId: await userId("theo.treasury@countersign.test"), decision: "approve" }, now);
}

const originalKeys = process.env.COUNTERSIGN_DATA_KEYS;
beforeEach(resetDb);
afterEach(() => {
  process.env.COUNTERSIGN_DATA_KEYS = originalKeys;
});

describe("sensitive state is protected for confidentiality and integrity at rest", () => {
  it("arguments, submission body and input, answers and webhook payloads are not stored in plain text; reviewers still see them", async () => {
    const f = await approvedTransfer();
    // Only the tool's own ledger (the transfer's memo, the tool's effect) holds the text: Countersign's records do not.
    expect(await tablesContaining(f.marker)).toEqual(["Transfer"]);

    const task = await db().$queryRaw<{ arguments: unknown }[]>`SELECT arguments FROM "Task" WHERE id = ${f.taskId}`;
    expect(isSealed(task[0].arguments)).toBe(true);
    const intent = await db().$queryRaw<{ body: unknown; requester: unknown }[]>`SELECT body, requester FROM "SubmissionIntent" WHERE "taskId" = ${f.taskId}`;
    expect(intent.length).toBeGreaterThan(0);
    for (const i of intent) expect([isSealed(i.body), isSealed(i.requester)]).toEqual([true, true]);
    const req = await db().$queryRaw<{ body: Record<string, unknown> }[]>`SELECT body FROM "ApprovalRequest" WHERE id = ${f.requestId}`;
    expect(req[0].body.arguments).toBeUndefined();
    expect(req[0].body.input).toBeUndefined();
    expect(isSealed(req[0].body.sealed)).toBe(true);
    const cl = await db().$queryRaw<{ answer: unknown }[]>`SELECT answer FROM "Clarification" WHERE "taskId" = ${f.taskId}`;
    expect(isSealed(cl[0].answer)).toBe(true);
    const wd = await db().$queryRaw<{ payload: unknown; taskId: string | null }[]>`SELECT payload, "taskId" FROM "WebhookDelivery"`;
    expect(wd.length).toBe(3);
    for (const d of wd) expect([isSealed(d.payload), d.taskId]).toEqual([true, f.taskId]);
    expect(await db().auditEvent.count({ where: { taskId: f.taskId } })).toBeGreaterThan(5);

    // Receivers get the event as before (with the summary).
    const created = f.sent.map((b) => JSON.parse(b)).find((e) => e.type === "request.created");
    expect(created.data.summary).toContain(f.account);

    // The reviewer sees the exact call, its canonical JSON and digest, the input and the answer.
    const view = await requestFor(f.requestId, await viewerFor("theo.treasury@countersign.test"), at(6));
    expect(view!.arguments).toEqual({ to: f.account, amount: 30_001, memo: `invoice ${f.marker}` });
    expect(view!.canonicalArguments).toContain(`invoice ${f.marker}`);
    expect(view!.digestMatches).toBe(true);
    expect(view!.input).toEqual({ justification: `asked by ${f.marker}`, ticket: `T-${f.marker}` });
    expect(view!.clarifications[0].answer).toBe(`see ${f.marker}`);
    expect(view!.summary).toContain(f.account);
    expect(view!.disposition).toBe("approved-executed");
  });

  it("a ciphertext copied from another row does not open: re-evaluation denies the call and the tool never runs", async () => {
    // Same account and amount (so the resource checks alike), other memos.
    const a = await pendingTransfer("acct-aaa", "first");
    const b = await pendingTransfer("acct-aaa", "second");
    // The attacker moves A's sealed arguments into B's row (and A's digest along, so the digest check alone would pass).
    await db().$executeRaw`UPDATE "Task" SET arguments = (SELECT arguments FROM "Task" WHERE id = ${a.taskId}),
      "argumentsDigest" = (SELECT "argumentsDigest" FROM "Task" WHERE id = ${a.taskId}) WHERE id = ${b.taskId}`;
    await approveTwice(b.requestId, at(3));
    const t = await db().task.findUniqueOrThrow({ where: { id: b.taskId } });
    expect([t.status, t.disposition]).toEqual(["completed", "denied-not-executed"]);
    expect(await db().transfer.count()).toBe(0);
    // The untouched row still opens and runs.
    await approveTwice(a.requestId, at(4));
    expect((await db().task.findUniqueOrThrow({ where: { id: a.taskId } })).disposition).toBe("approved-executed");
    expect(await db().transfer.findMany({ select: { memo: true } })).toEqual([{ memo: "first" }]);
  });

  it("a tampered ciphertext fails its integrity check: the call is denied, the request page shows an error instead of data", async () => {
    const flip = (s: string) => s.slice(0, -3) + (s.at(-3) === "A" ? "B" : "A") + s.slice(-2);
    const a = await pendingTransfer("acct-ccc", "third");
    const [row] = await db().$queryRaw<{ arguments: string }[]>`SELECT arguments FROM "Task" WHERE id = ${a.taskId}`;
    await db().$executeRaw`UPDATE "Task" SET arguments = to_jsonb(${flip(row.arguments)}::text) WHERE id = ${a.taskId}`;
    await approveTwice(a.requestId, at(3));
    const t = await db().task.findUniqueOrThrow({ where: { id: a.taskId } });
    expect([t.status, t.disposition]).toEqual(["completed", "denied-not-executed"]);
    expect(await db().transfer.count()).toBe(0);

    const b = await pendingTransfer("acct-ccd", "third b");
    const [req] = await db().$queryRaw<{ body: Record<string, string> }[]>`SELECT body FROM "ApprovalRequest" WHERE id = ${b.requestId}`;
    await db().$executeRaw`UPDATE "ApprovalRequest" SET body = jsonb_set(body, '{sealed}', to_jsonb(${flip(req.body.sealed)}::text)) WHERE id = ${b.requestId}`;
    const theo = await viewerFor("theo.treasury@countersign.test");
    await expect(requestFor(b.requestId, theo, at(1))).rejects.toBeInstanceOf(SealedRecordError);
    // Nobody can decide on what they cannot be shown.
    await expect(decide({ requestId: b.requestId, reviewerId: theo.id, decision: "approve" }, at(2))).rejects.toBeInstanceOf(SealedRecordError);
    expect(await db().review.count({ where: { requestId: b.requestId } })).toBe(0);
    // The sweeper keeps going, and the request ends at its deadline: the call is denied, never run.
    await sweep(at(60));
    await sweep(new Date(T0.getTime() + 3 * 24 * 3600_000));
    const tb = await db().task.findUniqueOrThrow({ where: { id: b.taskId } });
    expect([tb.status, tb.disposition]).toEqual(["completed", "denied-not-executed"]);
    expect(await db().transfer.count()).toBe(0);
  });

  it("a webhook delivery whose sealed payload fails its integrity check ends as failed; the others are delivered", async () => {
    await createWebhook({ url: "https://hooks.example/in", events: ["request.created"] }, await userId("admin@countersign.test"), at(0));
    await pendingTransfer("acct-hhh", "seventh");
    await pendingTransfer("acct-hhi", "eighth");
    const [first] = await db().$queryRaw<{ id: string; payload: string }[]>`SELECT id, payload FROM "WebhookDelivery" ORDER BY id LIMIT 1`;
    const [other] = await db().$queryRaw<{ payload: string }[]>`SELECT payload FROM "WebhookDelivery" WHERE id <> ${first.id}`;
    await db().$executeRaw`UPDATE "WebhookDelivery" SET payload = to_jsonb(${other.payload}::text) WHERE id = ${first.id}`;
    const sent: string[] = [];
    const r = await deliverDue(at(5), { fetch: (async (_u: string, init: RequestInit) => { sent.push(String(init.body)); return new Response(null, { status: 204 }); }) as typeof fetch });
    expect(r).toMatchObject({ delivered: 1, failed: 1 });
    expect(sent).toHaveLength(1);
    expect((await db().webhookDelivery.findUniqueOrThrow({ where: { id: first.id }, select: { status: true } })).status).toBe("failed");
  });

  it("a sealed answer moved to another question does not open", async () => {
    const a = await pendingTransfer("acct-ddd", "fourth");
    const b = await pendingTransfer("acct-dde", "fourth b");
    const theo = await userId("theo.treasury@countersign.test");
    for (const x of [a, b]) expect(await askRequester({ requestId: x.requestId, reviewerId: theo, question: "Why is this needed?" }, at(1))).toMatchObject({ ok: true });
    const key = (await db().clarification.findFirstOrThrow({ where: { taskId: a.taskId } })).key;
    await updateTask(await principal("ops-bot"), a.taskId, { [key]: { action: "accept", content: { answer: "because" } } }, at(2));
    expect((await db().clarification.findFirstOrThrow({ where: { taskId: a.taskId } })).answer).toMatchObject({ action: "accept" });
    await db().$executeRaw`UPDATE "Clarification" SET answer = (SELECT answer FROM "Clarification" WHERE "taskId" = ${a.taskId}) WHERE "taskId" = ${b.taskId}`;
    await expect(db().clarification.findMany({ where: { taskId: b.taskId } })).rejects.toBeInstanceOf(SealedRecordError);
  });

  it("key rotation: new writes use the newest key, older keys still read, rotateKeys re-seals every row under the newest", async () => {
    const before = await approvedTransfer();
    const oldKid = keyRing().current.kid;
    process.env.COUNTERSIGN_DATA_KEYS = `rot${Date.now().toString(36)}:${randomBytes(32).toString("base64")},${originalKeys}`;
    const newKid = keyRing().current.kid;
    expect(newKid).not.toBe(oldKid);

    const after = await pendingTransfer("acct-eee", "fifth");
    const [fresh] = await db().$queryRaw<{ arguments: string }[]>`SELECT arguments FROM "Task" WHERE id = ${after.taskId}`;
    expect(sealedKid(fresh.arguments)).toBe(newKid);
    const theo = await viewerFor("theo.treasury@countersign.test");
    expect((await requestFor(before.requestId, theo, at(7)))!.arguments).toMatchObject({ memo: `invoice ${before.marker}` });
    expect((await sealedValues()).some((v) => v.value.includes(`cs1.${oldKid}.`))).toBe(true);

    const report = await rotateKeys(db());
    expect(report.rotated).toBeGreaterThanOrEqual(7);
    expect(report.unreadable).toBe(0);
    const values = await sealedValues();
    expect(values.filter((v) => v.value.includes(`cs1.${oldKid}.`))).toEqual([]);
    expect(await rotateKeys(db())).toEqual({ sealed: 0, rotated: 0, unreadable: 0 });

    // The old key can now be retired: everything still opens under the new one alone.
    process.env.COUNTERSIGN_DATA_KEYS = process.env.COUNTERSIGN_DATA_KEYS.split(",")[0];
    const view = await requestFor(before.requestId, theo, at(8));
    expect(view!.arguments).toMatchObject({ memo: `invoice ${before.marker}` });
    expect(view!.digestMatches).toBe(true);
    expect(view!.clarifications[0].answer).toBe(`see ${before.marker}`);
    await approveTwice(after.requestId, at(9));
    expect((await db().task.findUniqueOrThrow({ where: { id: after.taskId } })).disposition).toBe("approved-executed");
  });

  it("an older database's plain-text records are refused as they are, and sealed by the migration step, after which the call runs", async () => {
    const a = await pendingTransfer("acct-fff", "sixth");
    const args = { to: "acct-fff", amount: 30_002, memo: "sixth" };
    const body = (await db().approvalRequest.findUniqueOrThrow({ where: { id: a.requestId } })).body as Record<string, unknown>;
    const intents = await db().submissionIntent.findMany({ where: { taskId: a.taskId } });
    // What an older version wrote: the same records, in plain text.
    await db().$executeRaw`UPDATE "Task" SET arguments = ${JSON.stringify(args)}::jsonb WHERE id = ${a.taskId}`;
    await db().$executeRaw`UPDATE "ApprovalRequest" SET body = ${JSON.stringify(body)}::jsonb WHERE id = ${a.requestId}`;
    for (const i of intents) {
      await db().$executeRaw`UPDATE "SubmissionIntent" SET body = ${JSON.stringify(i.body)}::jsonb, requester = ${JSON.stringify(i.requester)}::jsonb WHERE id = ${i.id}`;
    }
    const legacyId = `msg_${randomUUID().replace(/-/g, "")}`;
    const hook = await createWebhook({ url: "https://hooks.example/old", events: ["task.completed"] }, await userId("admin@countersign.test"), at(0));
    await db().$executeRaw`INSERT INTO "WebhookDelivery" (id, "webhookId", "eventType", payload, "nextAttemptAt", "createdAt")
      VALUES (${legacyId}, ${hook.webhook.id}, 'task.completed', ${JSON.stringify({ type: "task.completed", data: { taskId: a.taskId, summary: "old" } })}::jsonb, ${at(0)}, ${at(0)})`;
    expect(await tablesContaining("sixth")).toEqual(expect.arrayContaining(["Task", "ApprovalRequest", "SubmissionIntent"]));
    await expect(requestFor(a.requestId, await viewerFor("theo.treasury@countersign.test"), at(1))).rejects.toBeInstanceOf(SealedRecordError);

    // What `npm start` and `npm run db:migrate` run: the migrations (none due), then the sealing of old rows.
    expect(await applyMigrations(inject("databaseUrl"))).toEqual([]);
    expect(await tablesContaining("sixth")).toEqual([]);
    expect(await sealLegacyRows(db())).toEqual({ sealed: 0, rotated: 0, unreadable: 0 });
    const view = await requestFor(a.requestId, await viewerFor("theo.treasury@countersign.test"), at(2));
    expect(view!.arguments).toEqual(args);
    expect(view!.digestMatches).toBe(true);
    expect((await db().webhookDelivery.findUniqueOrThrow({ where: { id: legacyId } })).payload).toMatchObject({ data: { summary: "old" } });
    await approveTwice(a.requestId, at(3));
    expect((await db().task.findUniqueOrThrow({ where: { id: a.taskId } })).disposition).toBe("approved-executed");
  });
});

describe("a sealed field a write does not give", () => {
  it("given as undefined (Prisma's \"not given\"), is left alone: created as null, kept by an update", async () => {
    const bot = await principal();
    const record = { tool: "issue_refund", agentId: bot.agentId, userId: bot.userId, resourceType: "order", resourceId: "O-1001", status: "executed" };
    const created = await db().callRecord.create({ data: { ...record, createdAt: at(0), snapshot: undefined } });
    expect((await db().callRecord.findUniqueOrThrow({ where: { id: created.id } })).snapshot).toBeNull();
    const sealed = await db().callRecord.create({ data: { ...record, createdAt: at(1), snapshot: { args: { order_id: "O-1001" } } } });
    await db().callRecord.update({ where: { id: sealed.id }, data: { status: "void", snapshot: undefined } });
    expect((await db().callRecord.findUniqueOrThrow({ where: { id: sealed.id } })).snapshot).toEqual({ args: { order_id: "O-1001" } });
  });
});

describe("retention end deletes everything derived from the task's arguments", () => {
  it("after the purge no table holds the marker, and the task's sealed records are deleted, not just unreadable", async () => {
    const f = await approvedTransfer();
    const keep = await pendingTransfer("acct-ggg", "still pending");
    const sealedBefore = (await sealedValues()).length;
    expect(await tablesContaining(f.account)).toEqual(expect.arrayContaining(["ApprovalRequest", "Task", "Transfer"]));

    const r = await sweep(new Date(at(10).getTime() + 2 * config.resultRetentionMs + 30 * 24 * 3600_000));
    expect(r.purged).toBeGreaterThanOrEqual(1);
    expect(await db().task.findUnique({ where: { id: f.taskId } })).toBeNull();

    // Every table, every column (rows cast to text): nothing but the tool's own ledger holds the marker.
    const markerHits = await tablesContaining(f.marker);
    expect(markerHits.filter((t) => !TOOL_TABLES.includes(t))).toEqual([]);
    expect(markerHits).toEqual(["Transfer"]);
    // The account is the resource the call acted on. Besides the tool's ledger, only the call ledger policy's history
    // windows sum over keeps it (for up to HISTORY_RETENTION_DAYS, so a purge cannot reset a per-account total),
    // and there only as the resource key, in no other column.
    expect((await tablesContaining(f.account)).filter((t) => !TOOL_TABLES.includes(t))).toEqual(["CallRecord"]);
    expect(await db().callRecord.count({ where: { resourceId: f.account } })).toBe(1);
    const [{ elsewhere }] = await db().$queryRaw<{ elsewhere: number }[]>`
      SELECT count(*)::int AS elsewhere FROM "CallRecord" t WHERE (to_jsonb(t) - 'resourceId')::text ILIKE ${`%${f.account}%`}`;
    expect(elsewhere).toBe(0);
    // The record keeps no sealed snapshot of what policy evaluated (it is cleared with the task).
    const [{ snapshots }] = await db().$queryRaw<{ snapshots: number }[]>`
      SELECT count(*)::int AS snapshots FROM "CallRecord" WHERE "taskId" = ${f.taskId} AND snapshot IS NOT NULL`;
    expect(snapshots).toBe(0);
    // Ciphertext cannot contain the marker: the sealed records themselves must be gone.
    expect(await db().submissionIntent.count({ where: { taskId: f.taskId } })).toBe(0);
    expect(await db().webhookDelivery.count({ where: { taskId: f.taskId } })).toBe(0);
    const [req] = await db().$queryRaw<{ body: Record<string, unknown> }[]>`SELECT body FROM "ApprovalRequest" WHERE id = ${f.requestId}`;
    expect(Object.keys(req.body).sort()).toEqual(["argumentsDigest", "generation", "policy", "redacted", "requirements", "taskId", "tool"]);
    const cl = await db().$queryRaw<{ answer: unknown; question: string }[]>`SELECT answer, question FROM "Clarification" WHERE "taskId" = ${f.taskId}`;
    expect(cl.map((c) => c.answer)).toEqual([null]);
    const left = await sealedValues();
    expect(left.length).toBeLessThan(sealedBefore);
    // What remains sealed belongs to the task still in its retention.
    expect(await db().task.findUnique({ where: { id: keep.taskId } })).not.toBeNull();
    expect(await db().auditEvent.count({ where: { taskId: f.taskId, type: "task.purged" } })).toBe(1);
    // The history still lists the decided request, without its details.
    const view = await requestFor(f.requestId, await viewerFor("theo.treasury@countersign.test"), at(20));
    expect(view).toMatchObject({ redacted: true, arguments: null });
  });
});
