/**
 * Crash-consistent creation of an approval task (SEP "Crash-consistent creation" and "At-most-once and
 * deduplication"):
 *  1. dedup first: an open task or in-progress intent for the same (agent, user, tool, arguments) is reused;
 *  2. record the submission intent (fresh high-entropy key, exact body, requester context) together with the
 *     dedup slot, before contacting the backend;
 *  3. submit under that key;
 *  4. persist the task bound to the returned handle, then return it.
 * A crash between any two steps is repaired by reconcile.ts on start-up. A backend that keeps its requests in
 * Countersign's own database (the built-in inbox) takes steps 2 to 4 in one transaction instead: the intent, the
 * request and the task commit together or not at all, so there is no step between them for a crash to fall into.
 *
 * The call's policy-history record (lib/policy/history.ts), when the caller made one, is linked to the task in the
 * transaction that records the intent, so from then on it follows the task (reconciliation binds it or voids it);
 * a call that opens no task of its own (an identical one is open, a limit refuses it, creation fails before the
 * intent) voids it.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { db, Prisma } from "../db/client";
import type { Task } from "../db/generated/client";
import { appendAudit, type Tx } from "../audit/append";
import { approvalBackend } from "../approvals/inbox-backend";
import type { ApprovalBackend, SubmissionBody, SubmissionInput, Submitted, ToolInfo } from "../approvals/backend";
import { digest } from "../canonical";
import { config } from "../config";
import { faultPoint } from "../faults";
import { logFailure } from "../log";
import { linkRecordToTask, recordPendingForTask, settleRecord, type HistoryCall } from "../policy/history";
import type { EvaluationRequest, Requirements, RuleRef } from "../policy/evaluate";
import { enforceCallerLimits, lockCallerLoad } from "./limits";
import { toView } from "./view";
import type { Principal, TaskView } from "./types";

/** Everything needed to create the task row from an intent, recorded with the intent (requester context). */
export type RequesterContext = {
  principal: Principal;
  tool: string;
  toolVersion: string;
  argumentsDigest: string;
  resource: { type: string; id: string };
  dedupKey: string;
  rule: RuleRef;
  reason: string;
  requirements: Requirements;
};

/** An identical call's submission is still in progress: its task does not exist yet, and nothing has run. */
export class SubmissionInProgress extends Error {
  constructor() {
    super(
      "An identical call is being submitted for approval right now and its task is still being created. " +
        "This call submitted nothing and the tool has not run. Retry the same call shortly to receive that task.",
    );
  }
}

export function dedupKeyOf(principal: Principal, tool: string, argumentsDigest: string): string {
  return digest({ agentId: principal.agentId, userId: principal.userId, tool, argumentsDigest });
}

export function newSubmissionKey(): string {
  return randomBytes(32).toString("base64url");
}

function boundedSec(sec: number): number {
  return Math.min(sec * 1000, config.maxPendingWindowMs) / 1000;
}

/** Waits briefly for a concurrent creator to bind its task (the window between intent and task). */
async function existingTask(taskId: string): Promise<TaskView> {
  const until = Date.now() + 5_000;
  while (Date.now() < until) {
    const t = await db().task.findUnique({ where: { id: taskId } });
    if (t) return toView(t);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new SubmissionInProgress();
}

export type CreateInput = {
  principal: Principal;
  tool: string;
  toolVersion: string;
  args: unknown;
  argumentsDigest: string;
  summary: string;
  resource: EvaluationRequest["resource"];
  rule: RuleRef;
  reason: string;
  requirements: Requirements;
  input?: SubmissionInput;
  /** How the tool described itself at the call (carried to reviewers in the submission body). */
  toolInfo?: ToolInfo;
  /** The call's pending record in policy history (withHistory), linked to the task this call opens. */
  historyRecordId?: string | null;
  /** Or the call itself, recorded as pending with the task this call opens (withHistory's `recordWithTask`). */
  historyCall?: HistoryCall;
};

/** The call opened no task of its own: its history record stops counting (best effort; the error that got here wins). */
async function voidRecord(recordId: string | null, now: Date): Promise<void> {
  if (!recordId) return;
  try {
    await settleRecord({ id: recordId }, "void", now);
  } catch (e) {
    logFailure("voiding a call record", e);
  }
}

type Prepared = { dedupKey: string; taskId: string; key: string; body: SubmissionBody; requester: RequesterContext };

type Opened = { taskId: string; key: string; body: SubmissionBody } | { joins: string };

export async function createApprovalTask(input: CreateInput, now: Date): Promise<TaskView> {
  const recordId = input.historyRecordId ?? null;
  const prepared = prepare(input);
  const backend = approvalBackend();
  if (backend.submitWithin) return createInOneTransaction(input, prepared, backend, recordId, now);
  let opened: Opened;
  try {
    opened = await recordIntent(input, prepared, recordId, now);
  } catch (e) {
    await voidRecord(recordId, now);
    throw e;
  }
  if ("joins" in opened) {
    // An identical call's task (and its own record) already counts this call.
    await voidRecord(recordId, now);
    return existingTask(opened.joins);
  }
  const { taskId, key, body } = opened;
  faultPoint("after-intent");

  const submitted = await backend.submit(key, body, now);
  faultPoint("after-submit");

  // The row this call created is the task as it stands; only when another process bound the intent first is it read.
  const created = await bindTask(key, submitted, now);
  return toView(created ?? (await db().task.findUniqueOrThrow({ where: { id: taskId } })));
}

/** The submission's identities and bodies: a fresh task id and submission key, the body the backend gets. */
function prepare(input: CreateInput): Prepared {
  const dedupKey = dedupKeyOf(input.principal, input.tool, input.argumentsDigest);
  const taskId = randomUUID();
  const key = newSubmissionKey();
  const requirements: Requirements = {
    ...input.requirements,
    requestDeadlineSec: boundedSec(input.requirements.requestDeadlineSec),
    approvalValiditySec: boundedSec(input.requirements.approvalValiditySec),
  };
  const body: SubmissionBody = {
    taskId,
    generation: 1,
    tool: input.tool,
    arguments: input.args,
    argumentsDigest: input.argumentsDigest,
    summary: input.summary,
    requester: {
      userId: input.principal.userId,
      userName: input.principal.userName,
      agentId: input.principal.agentId,
      agentName: input.principal.agentName,
    },
    policy: { ruleId: input.rule.id, ruleKey: input.rule.ruleKey, version: input.rule.version, reason: input.reason },
    requirements,
    ...(input.input ? { input: input.input } : {}),
    ...(input.toolInfo ? { toolInfo: input.toolInfo } : {}),
  };
  const requester: RequesterContext = {
    principal: input.principal,
    tool: input.tool,
    toolVersion: input.toolVersion,
    argumentsDigest: input.argumentsDigest,
    resource: { type: input.resource.type, id: input.resource.id },
    dedupKey,
    rule: input.rule,
    reason: input.reason,
    requirements,
  };
  return { dedupKey, taskId, key, body, requester };
}

/** The call's history record follows the task: linked (a counted call's record) or written now (recordWithTask). */
async function recordWithTask(tx: Tx, input: CreateInput, recordId: string | null, taskId: string, now: Date): Promise<void> {
  if (recordId) await linkRecordToTask(recordId, taskId, tx);
  else if (input.historyCall) await recordPendingForTask(tx, input.historyCall, taskId, now);
}

/**
 * Steps 1 to 4 in one transaction, for a backend in Countersign's own database: under the agent's lock, an open
 * identical task to join or the limits, then the dedup slot, the request, the intent (already bound to its
 * handle: the record of what was submitted under which key), the task and the history record.
 */
async function createInOneTransaction(input: CreateInput, p: Prepared, backend: ApprovalBackend, recordId: string | null, now: Date): Promise<TaskView> {
  let created: { task: Task } | { joins: string };
  try {
    created = await db().$transaction(async (tx) => {
      const opened = await openSubmission(tx, input, p, now, () => backend.submitWithin!(tx, p.key, p.body, now));
      if ("joins" in opened) return opened;
      const submitted = opened.submitted!;
      const task = await createTaskRow(tx, { taskId: p.taskId, generation: 1, args: p.body.arguments, ctx: p.requester, createdAt: now }, submitted, now);
      await recordWithTask(tx, input, recordId, p.taskId, now);
      faultPoint("in-creation-transaction");
      return { task };
    });
  } catch (e) {
    await voidRecord(recordId, now);
    throw e;
  }
  if ("joins" in created) {
    await voidRecord(recordId, now);
    return existingTask(created.joins);
  }
  return toView(created.task);
}

/**
 * Under the agent's lock: an open identical task to join, or the limits enforced and the dedup slot and the intent
 * written. With `submitWithin` (a backend in this database) the request is submitted in the same transaction and
 * the intent is written already bound to its handle; without, the intent stays open until `bindTask`.
 */
async function openSubmission(
  tx: Tx,
  input: CreateInput,
  p: Prepared,
  now: Date,
  submitWithin?: () => Promise<Submitted>,
): Promise<{ joins: string } | { submitted: Submitted | null }> {
  const load = await lockCallerLoad(tx, input.principal.agentId, p.dedupKey, now);
  if (load.joins) return { joins: load.joins };
  enforceCallerLimits(load);
  await tx.dedupSlot.create({ data: { dedupKey: p.dedupKey, taskId: p.taskId, createdAt: now }, select: { dedupKey: true } });
  const submitted = submitWithin ? await submitWithin() : null;
  await tx.submissionIntent.create({
    data: {
      idempotencyKey: p.key,
      taskId: p.taskId,
      agentId: input.principal.agentId,
      generation: 1,
      body: p.body as unknown as Prisma.InputJsonValue,
      requester: p.requester as unknown as Prisma.InputJsonValue,
      ...(submitted ? { state: "bound" as const, handle: submitted.handle } : {}),
      createdAt: now,
    },
    select: { id: true },
  });
  return { submitted };
}

/** Steps 1 and 2: an open identical task to join, or the recorded intent (with the history record linked). */
async function recordIntent(input: CreateInput, p: Prepared, recordId: string | null, now: Date): Promise<Opened> {
  const { dedupKey, taskId, key, body } = p;
  try {
    const joins = await db().$transaction(async (tx) => {
      const opened = await openSubmission(tx, input, p, now);
      if ("joins" in opened) return opened.joins;
      await recordWithTask(tx, input, recordId, taskId, now);
      return null;
    });
    if (joins) return { joins };
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") {
      const winner = await db().dedupSlot.findUnique({ where: { dedupKey } });
      if (winner) return { joins: winner.taskId };
    }
    throw e;
  }
  return { taskId, key, body };
}

/** The task row of a submission the backend accepted, and its audit event (the task waits as long as the request). */
async function createTaskRow(
  tx: Tx,
  from: { taskId: string; generation: number; args: unknown; ctx: RequesterContext; createdAt: Date },
  submitted: Submitted,
  now: Date,
): Promise<Task> {
  const { taskId, generation, ctx } = from;
  const { handle, deadline: requestDeadline } = submitted;
  const task = await tx.task.create({
    data: {
      id: taskId,
      agentId: ctx.principal.agentId,
      principalUserId: ctx.principal.userId,
      tool: ctx.tool,
      toolVersion: ctx.toolVersion,
      arguments: from.args as Prisma.InputJsonValue,
      argumentsDigest: ctx.argumentsDigest,
      resourceType: ctx.resource.type,
      resourceId: ctx.resource.id,
      dedupKey: ctx.dedupKey,
      policyRuleId: ctx.rule.id,
      policyRuleKey: ctx.rule.ruleKey,
      policyVersion: ctx.rule.version,
      reason: ctx.reason,
      status: "working",
      phase: "awaiting_approval",
      handle,
      generation,
      requestDeadline,
      // Retention covers the pending deadline plus resultRetention (provisional; extended later).
      retainUntil: new Date(requestDeadline.getTime() + config.resultRetentionMs),
      createdAt: from.createdAt,
      lastUpdatedAt: now,
    },
  });
  await appendAudit(tx, {
    type: "task.created",
    actor: `agent:${ctx.principal.agentId}`,
    taskId,
    requestId: handle,
    data: { tool: ctx.tool, argumentsDigest: ctx.argumentsDigest, rule: ctx.rule, generation },
    at: now,
  });
  return task;
}

/**
 * Creates the task row for an intent whose request the backend accepted, and marks the intent bound. Idempotent:
 * used by creation and by reconciliation after a crash.
 */
export async function bindTask(key: string, submitted: Submitted, now: Date): Promise<Task | null> {
  const { handle } = submitted;
  return db().$transaction(async (tx) => {
    const intent = await tx.submissionIntent.findUniqueOrThrow({ where: { idempotencyKey: key } });
    const body = intent.body as unknown as SubmissionBody;
    const ctx = intent.requester as unknown as RequesterContext;
    const bound = await tx.submissionIntent.updateMany({ where: { idempotencyKey: key, state: "open" }, data: { state: "bound", handle } });
    if (bound.count !== 1) return null;
    return createTaskRow(tx, { taskId: intent.taskId, generation: intent.generation, args: body.arguments, ctx, createdAt: intent.createdAt }, submitted, now);
  });
}
