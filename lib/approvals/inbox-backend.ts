/** The built-in approval backend: requests reviewed by signed-in reviewers in Countersign's own inbox. */
import { digest } from "../canonical";
import { db, Prisma } from "../db/client";
import { appendAudit, type Tx } from "../audit/append";
import { IdempotencyConflict, type ApprovalBackend, type BackendStatus, type SubmissionBody, type Submitted } from "./backend";
import { eligibleApproverIds, eligibleReviewersOfRequest } from "./eligibility";
import { escalationOf } from "./escalate";
import { enqueueNotifications } from "../notify/outbox";

function isUniqueViolation(e: unknown): boolean {
  return e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002";
}

type StatusRow = {
  id: string;
  status: string;
  deadline: Date;
  approverGroup: string;
  fallbackGroup: string | null;
  escalatedAt: Date | null;
  requesterUserId: string;
  approvalsRequired: number;
  approvedAt: Date | null;
  approvalExpiresAt: Date | null;
  /** While pending: how many reviewers could approve it now. */
  eligible: number | null;
};

/** A request's state and, while it is pending, its eligible reviewers, in one statement. */
async function statusRow(handle: string, now: Date): Promise<StatusRow | null> {
  const rows = await db().$queryRaw<StatusRow[]>`
    SELECT r.id, r.status, r.deadline, r."approverGroup", r."fallbackGroup", r."escalatedAt", r."requesterUserId", r."approvalsRequired",
      r."approvedAt", r."approvalExpiresAt",
      CASE WHEN r.status = 'pending' THEN ${eligibleReviewersOfRequest(now)} END AS eligible
    FROM "ApprovalRequest" r WHERE r.id = ${handle}`;
  return rows[0] ?? null;
}

/** The request, its audit event (announced to webhooks) and its notifications, in the caller's transaction. */
async function insertRequest(tx: Tx, key: string, bodyDigest: string, body: SubmissionBody, now: Date): Promise<Submitted> {
  const deadline = new Date(now.getTime() + body.requirements.requestDeadlineSec * 1000);
  const req = await tx.approvalRequest.create({
    data: {
      idempotencyKey: key,
      bodyDigest,
      body: body as unknown as Prisma.InputJsonValue,
      taskId: body.taskId,
      requesterUserId: body.requester.userId,
      approverGroup: body.requirements.approverGroup,
      approvalsRequired: body.requirements.approvalsRequired,
      deadline,
      approvalValiditySec: body.requirements.approvalValiditySec,
      requirePasskey: body.requirements.requirePasskey ?? false,
      ...escalationOf(body.requirements, now),
      createdAt: now,
    },
    select: { id: true, deadline: true, approverGroup: true, approvalsRequired: true },
  });
  await appendAudit(tx, {
    type: "request.created",
    actor: `agent:${body.requester.agentId}`,
    taskId: body.taskId,
    requestId: req.id,
    data: { generation: body.generation, approverGroup: req.approverGroup, approvalsRequired: req.approvalsRequired },
    at: now,
    announce: {
      event: "request.created",
      data: { tool: body.tool, summary: body.summary, approverGroup: req.approverGroup, approvalsRequired: req.approvalsRequired },
    },
  });
  await enqueueNotifications(tx, req.id, "created", now);
  return { handle: req.id, deadline: req.deadline };
}

export const inboxBackend: ApprovalBackend = {
  async submit(key, body, now) {
    const bodyDigest = digest(body);
    const existing = await db().approvalRequest.findUnique({ where: { idempotencyKey: key } });
    if (existing) {
      if (existing.bodyDigest !== bodyDigest) throw new IdempotencyConflict();
      return { handle: existing.id, deadline: existing.deadline };
    }
    try {
      return await db().$transaction((tx) => insertRequest(tx, key, bodyDigest, body, now));
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      // A concurrent submit under the same key won the insert: same rule as a repeat.
      const winner = await db().approvalRequest.findUniqueOrThrow({ where: { idempotencyKey: key } });
      if (winner.bodyDigest !== bodyDigest) throw new IdempotencyConflict();
      return { handle: winner.id, deadline: winner.deadline };
    }
  },

  async submitWithin(tx, key, body, now) {
    // The caller's transaction holds the agent's submission lock and writes the intent beside this request; a key
    // is fresh per submission, so there is no earlier request under it to compare with.
    return insertRequest(tx, key, digest(body), body, now);
  },

  async find(key) {
    const req = await db().approvalRequest.findUnique({ where: { idempotencyKey: key }, select: { id: true, deadline: true } });
    return req ? { handle: req.id, deadline: req.deadline } : null;
  },

  async status(handle, now): Promise<BackendStatus> {
    // Not the body: the status never depends on the sealed call details (lib/db/sealed.ts).
    let req = await statusRow(handle, now);
    if (!req) return { state: "failed", deadline: now, note: "The approval request is unknown to the backend." };
    if (req.status === "pending" && req.deadline.getTime() <= now.getTime()) {
      await db().$transaction(async (tx) => {
        const n = await tx.approvalRequest.updateMany({ where: { id: handle, status: "pending" }, data: { status: "expired", decidedAt: now } });
        if (n.count === 1) await enqueueNotifications(tx, handle, "outcome", now);
      });
      req = (await statusRow(handle, now))!;
    }
    const state = req.status as BackendStatus["state"];
    if (state === "approved") {
      const approverIds = await eligibleApproverIds(req.id, req, now);
      const escalatedTo = req.escalatedAt ? req.fallbackGroup : null;
      return {
        state,
        deadline: req.deadline,
        approval: { approverGroup: req.approverGroup, approverIds, ...(escalatedTo ? { escalatedTo } : {}), approvedAt: req.approvedAt!, expiresAt: req.approvalExpiresAt! },
      };
    }
    if (state === "pending") {
      const note =
        (req.eligible ?? 0) < req.approvalsRequired
          ? "Not enough eligible reviewers exist to approve this request; unless reviewers are added it will expire at its deadline."
          : undefined;
      return { state, deadline: req.deadline, note };
    }
    return { state, deadline: req.deadline };
  },

  async cancel(handle, now) {
    await db().$transaction(async (tx) => {
      const res = await tx.approvalRequest.updateMany({ where: { id: handle, status: "pending" }, data: { status: "cancelled", decidedAt: now } });
      if (res.count === 1) {
        const req = await tx.approvalRequest.findUniqueOrThrow({ where: { id: handle } });
        await appendAudit(tx, { type: "request.cancelled", actor: "system", taskId: req.taskId, requestId: handle, at: now });
        await enqueueNotifications(tx, handle, "outcome", now);
      }
    });
  },
};

const bound = globalThis as unknown as { __countersignApprovalBackend?: ApprovalBackend };

/** The backend bound to this deployment: the built-in inbox unless another was bound. */
export function approvalBackend(): ApprovalBackend {
  return bound.__countersignApprovalBackend ?? inboxBackend;
}

/** Binds another approval backend in this process (null restores the built-in inbox). */
export function bindApprovalBackend(backend: ApprovalBackend | null): void {
  bound.__countersignApprovalBackend = backend ?? undefined;
}
