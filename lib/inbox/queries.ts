/**
 * Read queries of the reviewer side: the inbox and one request's page. Read-only; every decision goes through
 * `lib/tasks/decide.ts`, which enforces the four-eyes rules. The eligibility computed here only decides whether
 * the page offers the buttons, and mirrors those rules (the inbox's `where` and `whyCannotAct` below).
 */
import { z } from "zod";
import { isEligibleReviewer } from "@/lib/approvals/eligibility";
import { canonicalJson, digest } from "@/lib/canonical";
import { db } from "@/lib/db/client";
import { describeOutcome, type Outcome } from "./outcome";

export type Viewer = { id: string; role: string; groups: string[] };

/** The submission body the approval backend stores (lib/approvals/backend.ts SubmissionBody), read leniently. */
const bodySchema = z.object({
  taskId: z.string().optional(),
  generation: z.number().optional(),
  tool: z.string().optional(),
  arguments: z.unknown().optional(),
  argumentsDigest: z.string().optional(),
  summary: z.string().optional(),
  requester: z
    .object({
      userId: z.string().optional(),
      userName: z.string().optional(),
      agentId: z.string().optional(),
      agentName: z.string().optional(),
    })
    .partial()
    .optional(),
  policy: z
    .object({ ruleId: z.string(), ruleKey: z.string(), version: z.number(), reason: z.string() })
    .partial()
    .optional(),
});

type Body = z.infer<typeof bodySchema>;

function readBody(raw: unknown): Body {
  const parsed = bodySchema.safeParse(raw);
  return parsed.success ? parsed.data : {};
}

function summaryOf(body: Body): string {
  if (body.summary) return body.summary;
  const args = body.arguments;
  if (args && typeof args === "object" && !Array.isArray(args)) {
    const parts = Object.entries(args as Record<string, unknown>)
      .slice(0, 3)
      .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
    return `${body.tool ?? "tool"}(${parts.join(", ")})`;
  }
  return body.tool ?? "tool call";
}

export type InboxItem = {
  id: string;
  tool: string;
  summary: string;
  requesterName: string;
  agentName: string;
  approverGroup: string;
  approvals: number;
  approvalsRequired: number;
  createdAt: string;
  deadline: string;
};

/** Pending requests this reviewer may act on now: their group, not their own, not yet reviewed by them. */
export async function inboxFor(viewer: Viewer, now: Date): Promise<InboxItem[]> {
  if (viewer.role !== "reviewer" || viewer.groups.length === 0) return [];
  const rows = await db().approvalRequest.findMany({
    where: {
      status: "pending",
      approverGroup: { in: viewer.groups },
      requesterUserId: { not: viewer.id },
      deadline: { gt: now },
      reviews: { none: { reviewerId: viewer.id } },
    },
    orderBy: { createdAt: "desc" },
    take: 200,
    include: { reviews: { where: { decision: "approve" }, select: { id: true } } },
  });
  return rows.map((r) => {
    const body = readBody(r.body);
    return {
      id: r.id,
      tool: body.tool ?? "unknown",
      summary: summaryOf(body),
      requesterName: body.requester?.userName ?? "unknown user",
      agentName: body.requester?.agentName ?? "unknown agent",
      approverGroup: r.approverGroup,
      approvals: r.reviews.length,
      approvalsRequired: r.approvalsRequired,
      createdAt: r.createdAt.toISOString(),
      deadline: r.deadline.toISOString(),
    };
  });
}

export type ReviewView = { id: string; reviewerName: string; decision: string; comment: string | null; at: string };

export type RequestView = {
  id: string;
  taskId: string;
  status: string;
  tool: string;
  summary: string;
  arguments: unknown;
  canonicalArguments: string;
  argumentsDigest: string | null;
  /** Whether the digest recorded with the call matches the arguments shown here. */
  digestMatches: boolean | null;
  bodyDigest: string;
  requesterName: string;
  agentName: string;
  reason: string;
  ruleKey: string | null;
  ruleVersion: number | null;
  approverGroup: string;
  approvals: number;
  approvalsRequired: number;
  createdAt: string;
  deadline: string;
  decidedAt: string | null;
  statusNote: string | null;
  reviews: ReviewView[];
  taskStatus: string | null;
  disposition: string | null;
  outcome: Outcome;
  /** Null when this viewer may approve or deny now; otherwise why not, in words. */
  cannotAct: string | null;
};

export function whyCannotAct(
  r: { status: string; approverGroup: string; requesterUserId: string; deadline: Date },
  reviewerIds: string[],
  viewer: Viewer,
  now: Date,
): string | null {
  if (r.status !== "pending") return "This request has already been decided.";
  if (r.deadline.getTime() <= now.getTime()) return "The deadline for this request has passed.";
  if (r.requesterUserId === viewer.id) return "You asked for this call, so someone else must approve it.";
  if (reviewerIds.includes(viewer.id)) return "You have already reviewed this request; another approver must decide.";
  if (!isEligibleReviewer({ ...viewer, active: true }, r.approverGroup, r.requesterUserId)) {
    return `Only ${r.approverGroup} reviewers may decide this request.`;
  }
  return null;
}

function resultTextOf(result: unknown): string | null {
  if (!result || typeof result !== "object") return null;
  const text = (result as { text?: unknown }).text;
  return typeof text === "string" ? text : null;
}

/**
 * One request as a reviewer sees it, or null when it does not exist or this viewer may not see it (admins see
 * every request; reviewers those addressed to one of their groups).
 */
export async function requestFor(id: string, viewer: Viewer, now: Date): Promise<RequestView | null> {
  const r = await db().approvalRequest.findUnique({
    where: { id },
    include: { reviews: { orderBy: { createdAt: "asc" }, include: { reviewer: { select: { name: true } } } } },
  });
  if (!r) return null;
  if (viewer.role !== "admin" && !viewer.groups.includes(r.approverGroup)) return null;
  const task = await db().task.findUnique({
    where: { id: r.taskId },
    select: { status: true, disposition: true, result: true, argumentsDigest: true },
  });
  const body = readBody(r.body);
  const args = body.arguments ?? null;
  let canonical: string;
  let computed: string | null = null;
  try {
    canonical = canonicalJson(args);
    computed = digest(args);
  } catch {
    canonical = JSON.stringify(args);
  }
  const recorded = task?.argumentsDigest ?? body.argumentsDigest ?? null;
  const approvals = r.reviews.filter((v) => v.decision === "approve").length;
  const tool = body.tool ?? "unknown";
  return {
    id: r.id,
    taskId: r.taskId,
    status: r.status,
    tool,
    summary: summaryOf(body),
    arguments: args,
    canonicalArguments: canonical,
    argumentsDigest: recorded,
    digestMatches: recorded && computed ? recorded === computed : null,
    bodyDigest: r.bodyDigest,
    requesterName: body.requester?.userName ?? "unknown user",
    agentName: body.requester?.agentName ?? "unknown agent",
    reason: body.policy?.reason ?? "",
    ruleKey: body.policy?.ruleKey ?? null,
    ruleVersion: body.policy?.version ?? null,
    approverGroup: r.approverGroup,
    approvals,
    approvalsRequired: r.approvalsRequired,
    createdAt: r.createdAt.toISOString(),
    deadline: r.deadline.toISOString(),
    decidedAt: r.decidedAt?.toISOString() ?? null,
    statusNote: r.statusNote,
    reviews: r.reviews.map((v) => ({
      id: v.id,
      reviewerName: v.reviewer.name,
      decision: v.decision,
      comment: v.comment,
      at: v.createdAt.toISOString(),
    })),
    taskStatus: task?.status ?? null,
    disposition: task?.disposition ?? null,
    outcome: describeOutcome({
      tool,
      requestStatus: r.status,
      taskStatus: task?.status,
      disposition: task?.disposition,
      approvals,
      approvalsRequired: r.approvalsRequired,
      resultText: resultTextOf(task?.result),
    }),
    cannotAct: whyCannotAct(r, r.reviews.map((v) => v.reviewerId), viewer, now),
  };
}
