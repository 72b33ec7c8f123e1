/**
 * Moves one task forward from whatever the approval backend now says. Safe to call from anywhere, any number of
 * times, in several processes at once: every transition is a conditional update that only one caller can win.
 *
 *   pending            -> nothing, or a terminal denial once the request deadline has passed
 *   denied / expired   -> completed, denied-not-executed
 *   cancelled          -> cancelled;  failed -> failed (before any claim)
 *   approved           -> re-evaluate with the approval as input:
 *                           allow   -> claim -> run the tool once -> approved-executed | execution-error
 *                           retry   -> stays working; bounded backoff with jitter, clamped into the approval's
 *                                      validity (never a denial; the task ends only once the approval expired)
 *                           request -> the generation is consumed and a new request opened (bounded chain)
 *                           deny    -> completed, denied-not-executed
 */
import type { Task } from "../db/generated/client";
import { db, Prisma } from "../db/client";
import { appendAudit } from "../audit/append";
import type { BackendStatus, SubmissionBody, Submitted } from "../approvals/backend";
import { approvalBackend } from "../approvals/inbox-backend";
import { config } from "../config";
import { faultPoint } from "../faults";
import { logFailure } from "../log";
import { sanitizeForModel } from "../sanitize";
import type { ApprovalInput, Decision } from "../policy/evaluate";
import type { RequesterContext } from "../tasks/create";
import { newSubmissionKey } from "../tasks/create";
import { isTerminal } from "../tasks/view";
import { getTool } from "../tools/catalog";
import { ToolError, ToolOutcomeUnknownError } from "../tools/types";
import { principalStillValid } from "../auth/agents";
import { approvalExpiredAtClaim, claim, executionDeadlineFrom, type ClaimApproval } from "./claim";
import { deniedNotExecuted, executed, executionError, outcomeUnknown, type DenialCause } from "./outcomes";
import { reevaluate } from "./reevaluate";
import { terminalize } from "./terminalize";

const PRE_CLAIM = ["awaiting_approval", "retry_wait"];

async function deny(t: Task, cause: DenialCause, now: Date, detail?: string): Promise<boolean> {
  const won = await terminalize({
    taskId: t.id,
    fromPhases: PRE_CLAIM,
    generation: t.generation,
    to: { status: "completed", outcome: deniedNotExecuted(cause, detail) },
    audit: { type: "task.denied", actor: "system", data: detail ? { cause, detail } : { cause } },
    now,
  });
  // A request still open at the backend (expiry, failed re-evaluation) is withdrawn: nothing stays pending for
  // reviewers once the task has ended.
  if (won && t.handle) await approvalBackend().cancel?.(t.handle, now);
  return won;
}

/**
 * What advancing learned that the task row does not hold: why a pending request may never resolve; and whether
 * the task may have moved (`moved`), so a row read before advancing is stale and must be read again.
 */
export type AdvanceNote = { pendingNote?: string; moved?: true };

/** Advances the task by id, or from its row as just read (which saves reading it again). */
export async function advanceTask(task: string | Task, now: Date): Promise<AdvanceNote> {
  const t = typeof task === "string" ? await db().task.findUnique({ where: { id: task } }) : task;
  if (!t || isTerminal(t)) return {};
  if (t.phase === "claimed") {
    if (t.executionDeadline && t.executionDeadline.getTime() <= now.getTime()) {
      await expireExecution(t, now);
      return { moved: true };
    }
    return {};
  }
  if (!PRE_CLAIM.includes(t.phase) || !t.handle) return {};
  if (t.phase === "retry_wait" && t.nextAttemptAt && t.nextAttemptAt.getTime() > now.getTime()) return {};

  const st = await approvalBackend().status(t.handle, now);
  if (st.state === "pending" && t.requestDeadline.getTime() > now.getTime()) return { pendingNote: st.note };
  await moveOn(t, st, now);
  return { moved: true };
}

/** The task's next step once the backend's answer is anything but "still pending, in time". */
async function moveOn(t: Task, st: BackendStatus, now: Date): Promise<void> {
  switch (st.state) {
    case "pending":
      await deny(t, "expired", now);
      return;
    case "denied":
      await deny(t, "denied", now);
      return;
    case "expired":
      await deny(t, "expired", now);
      return;
    case "cancelled":
      await terminalize({ taskId: t.id, fromPhases: PRE_CLAIM, generation: t.generation, to: { status: "cancelled" }, audit: { type: "task.cancelled", actor: "backend" }, now });
      return;
    case "failed":
      await terminalize({
        taskId: t.id,
        fromPhases: PRE_CLAIM,
        generation: t.generation,
        to: { status: "failed", error: { code: -32603, message: "The approval backend failed before execution; the tool did not run." } },
        audit: { type: "task.failed", actor: "backend" },
        now,
      });
      return;
    case "approved":
      await onApproved(t, st.approval!, now);
  }
}

async function onApproved(t: Task, approval: ApprovalInput, now: Date): Promise<void> {
  if (approval.expiresAt.getTime() <= now.getTime()) {
    await deny(t, "approval-expired", now);
    return;
  }
  // Stryker disable next-line ConditionalExpression: equivalent; the UPDATE's own `"approvalExpiresAt" IS NULL` decides, this only saves the statement.
  if (!t.approvalExpiresAt) {
    // The pending deadline is now the approval's validity: record it and extend retention to cover it.
    const retain = new Date(approval.expiresAt.getTime() + config.resultRetentionMs);
    await db().$executeRaw`
      UPDATE "Task" SET "approvalExpiresAt" = ${approval.expiresAt},
        "retainUntil" = GREATEST(COALESCE("retainUntil", ${retain}), ${retain}), "lastUpdatedAt" = ${now}
      WHERE id = ${t.id} AND generation = ${t.generation} AND status IN ('working', 'input_required') AND "approvalExpiresAt" IS NULL`;
  }
  // A task waiting for the requester's answer (input_required) is not executed until it is working again; its
  // approval's validity is recorded all the same, so it still ends when the approval expires.
  if (t.status !== "working") return;
  const re = await reevaluate(t, approval, now);
  switch (re.next) {
    case "allow": {
      const req = re.decision.requirements;
      await execute(t, now, req && {
        approverGroup: req.approverGroup,
        escalatedTo: approval.escalatedTo ?? null,
        approverIds: approval.approverIds,
        approvalsRequired: req.approvalsRequired,
        requesterUserId: t.principalUserId,
      });
      return;
    }
    case "retry":
      await scheduleRetry(t, approval, re.retryAfterMs, now);
      return;
    case "request":
      await chainRequest(t, re.decision, now);
      return;
    case "deny":
      await deny(t, re.cause, now, re.detail);
  }
}

/** Claim, run once, store. A failed claim means another caller won, or a fence (cancel, expiry, revocation) did. */
async function execute(t: Task, now: Date, approval: ClaimApproval | undefined): Promise<void> {
  const token = await claim(t.id, t.generation, now, approval);
  if (!token) {
    const after = await db().task.findUnique({ where: { id: t.id } });
    if (!after || isTerminal(after) || after.phase === "claimed" || after.generation !== t.generation) return;
    if (await approvalExpiredAtClaim(t.id, now)) {
      await deny(after, "approval-expired", now);
    } else if (!(await principalStillValid(after.agentId))) {
      await deny(after, "principal", now);
    }
    // Otherwise an approver lost eligibility just before the claim: the next advance re-evaluates with the
    // approvals that still count (and opens a new request if they no longer suffice).
    return;
  }
  await faultPoint("after-claim");
  const tool = getTool(t.tool)!;
  let outcome;
  try {
    const out = await tool.run(tool.schema.parse(t.arguments), {
      taskId: t.id,
      now,
      resource: { type: t.resourceType, id: t.resourceId },
      // The deadline the claim just set (`t` was read before the claim and has none).
      deadline: executionDeadlineFrom(now),
    });
    // A result the tool reported as an error (an upstream's isError) ran and failed.
    outcome = out.isError ? executionError(sanitizeForModel(out.text || "the tool reported an error.", 500)) : executed(out.text, out.structured);
  } catch (e) {
    if (e instanceof ToolOutcomeUnknownError) {
      outcome = outcomeUnknown();
    } else {
      if (!(e instanceof ToolError)) logFailure(`tool ${t.tool} for task ${t.id}`, e);
      outcome = executionError(e instanceof ToolError ? e.message : "an internal error occurred.");
    }
  }
  const stored = await terminalize({
    taskId: t.id,
    fromPhases: ["claimed"],
    claimedBy: token,
    to: { status: "completed", outcome },
    audit: { type: "execution.completed", actor: "system", data: { disposition: outcome.disposition } },
    now,
  });
  if (!stored) {
    await db().$transaction((tx) =>
      appendAudit(tx, { type: "execution.result-late", actor: "system", taskId: t.id, data: { disposition: outcome.disposition }, at: now }),
    );
  }
}

/** A claimed task whose execution deadline passed without a stored result: it may have run. Never re-invoked. */
export async function expireExecution(t: Task, now: Date): Promise<boolean> {
  return terminalize({
    taskId: t.id,
    fromPhases: ["claimed"],
    to: { status: "completed", outcome: outcomeUnknown() },
    audit: { type: "execution.outcome-unknown", actor: "system" },
    now,
  });
}

/** Below this, a wait is not worth scheduling before the approval's expiry: the task waits out the expiry instead. */
const MIN_RETRY_MS = 1_000;

/**
 * When a retryable re-evaluation is tried again: after the backend's hint or bounded exponential backoff, with
 * jitter, but never past the approval's validity. A retryable outcome is never completed as a denial, so a wait
 * that would reach the expiry is clamped to halfway there (another attempt while the approval is still valid);
 * with less than two MIN_RETRY_MS left, the next attempt is the expiry itself, where advancing ends the task.
 */
export function nextAttemptAt(now: Date, waitMs: number, expiresAt: Date): Date {
  const left = expiresAt.getTime() - now.getTime();
  if (waitMs < left) return new Date(now.getTime() + waitMs);
  if (left >= 2 * MIN_RETRY_MS) return new Date(now.getTime() + Math.floor(left / 2));
  return expiresAt;
}

async function scheduleRetry(t: Task, approval: ApprovalInput, retryAfterMs: number | undefined, now: Date): Promise<void> {
  const base = retryAfterMs ?? Math.min(1_000 * 2 ** t.attempts, 60_000);
  const wait = Math.round(base * (0.5 + Math.random() * 0.5));
  const next = nextAttemptAt(now, wait, approval.expiresAt);
  await db().$transaction(async (tx) => {
    const n = await tx.task.updateMany({
      where: { id: t.id, generation: t.generation, status: "working", phase: { in: PRE_CLAIM } },
      data: { phase: "retry_wait", nextAttemptAt: next, attempts: { increment: 1 }, lastUpdatedAt: now },
    });
    if (n.count === 1) {
      await appendAudit(tx, { type: "execution.retry-scheduled", actor: "system", taskId: t.id, data: { attempt: t.attempts + 1, nextAttemptAt: next.toISOString() }, at: now });
    }
  });
}

/**
 * Re-evaluation said "request": consume the current generation first (so a late callback or status for it can
 * never act), then open a new request under a fresh key with crash-consistent creation.
 */
async function chainRequest(t: Task, decision: Extract<Decision, { decision: "requestable" }>, now: Date): Promise<void> {
  if (t.generation >= config.maxGenerations) {
    await deny(t, "chain-exhausted", now);
    return;
  }
  const prev = await db().submissionIntent.findUniqueOrThrow({ where: { taskId_generation: { taskId: t.id, generation: t.generation } } });
  const generation = t.generation + 1;
  const key = newSubmissionKey();
  const requirements = { ...decision.requirements, requestDeadlineSec: Math.min(decision.requirements.requestDeadlineSec, config.maxPendingWindowMs / 1000), approvalValiditySec: Math.min(decision.requirements.approvalValiditySec, config.maxPendingWindowMs / 1000) };
  const body: SubmissionBody = {
    ...(prev.body as unknown as SubmissionBody),
    generation,
    policy: { ruleId: decision.rule.id, ruleKey: decision.rule.ruleKey, version: decision.rule.version, reason: decision.reason },
    requirements,
  };
  const requester: RequesterContext = { ...(prev.requester as unknown as RequesterContext), rule: decision.rule, reason: decision.reason, requirements };
  const deadline = new Date(now.getTime() + Math.min(requirements.requestDeadlineSec * 1000, config.maxPendingWindowMs));
  const retain = new Date(deadline.getTime() + config.resultRetentionMs);
  const consumed = await db().$transaction(async (tx) => {
    const n = await tx.$executeRaw`
      UPDATE "Task" SET generation = ${generation}, phase = 'submitting', handle = NULL, "approvalExpiresAt" = NULL,
        "requestDeadline" = ${deadline}, "policyRuleId" = ${decision.rule.id}, "policyRuleKey" = ${decision.rule.ruleKey}, "policyVersion" = ${decision.rule.version},
        "retainUntil" = GREATEST(COALESCE("retainUntil", ${retain}), ${retain}), "lastUpdatedAt" = ${now}
      WHERE id = ${t.id} AND generation = ${t.generation} AND status = 'working' AND phase IN ('awaiting_approval', 'retry_wait')`;
    if (n !== 1) return false;
    await tx.submissionIntent.create({
      data: {
        idempotencyKey: key,
        taskId: t.id,
        agentId: t.agentId,
        generation,
        body: body as unknown as Prisma.InputJsonValue,
        requester: requester as unknown as Prisma.InputJsonValue,
        createdAt: now,
      },
    });
    await appendAudit(tx, { type: "request.superseded", actor: "system", taskId: t.id, requestId: t.handle, data: { generation: t.generation, next: generation }, at: now });
    return true;
  });
  if (!consumed) return;
  const submitted = await approvalBackend().submit(key, body, now);
  await attachGeneration(t.id, generation, key, submitted, now);
}

/**
 * Binds a chained generation's handle (also used by reconciliation). If the task stopped waiting for this
 * generation meanwhile (a cancel won), the request just made is cancelled so no orphan stays in the inbox.
 */
export async function attachGeneration(taskId: string, generation: number, key: string, submitted: Submitted, now: Date): Promise<void> {
  const { handle, deadline } = submitted;
  // The backend's deadline becomes the task's pending deadline (a late re-submission starts its clock later),
  // and retention is extended to cover it.
  const retain = new Date(deadline.getTime() + config.resultRetentionMs);
  const attached = await db().$transaction(async (tx) => {
    const n = await tx.$executeRaw`
      UPDATE "Task" SET handle = ${handle}, phase = 'awaiting_approval', "requestDeadline" = ${deadline},
        "retainUntil" = GREATEST(COALESCE("retainUntil", ${retain}), ${retain}), "lastUpdatedAt" = ${now}
      WHERE id = ${taskId} AND generation = ${generation} AND phase = 'submitting' AND status = 'working'`
      .then((count) => ({ count }));
    await tx.submissionIntent.updateMany({
      where: { idempotencyKey: key, state: "open" },
      data: { state: n.count === 1 ? "bound" : "cancelled", handle },
    });
    if (n.count === 1) await appendAudit(tx, { type: "request.reopened", actor: "system", taskId, requestId: handle, data: { generation }, at: now });
    return n.count === 1;
  });
  if (!attached) await approvalBackend().cancel?.(handle, now);
}
