/**
 * A task's story from the audit trail, in words: the call, the request, each review, questions and answers, the
 * claim, the execution and its result. Pure apart from `timelineFor`, which reads the events and the names of the
 * people and agents they mention. Text that came from outside (comments, questions) stays plain text.
 */
import { db } from "@/lib/db/client";

export type TimelineEntry = {
  seq: number;
  at: string;
  type: string;
  actor: string;
  title: string;
  /** Untrusted text quoted from the event (a comment, a question); shown as text only. */
  quote?: string;
  tone: "neutral" | "success" | "danger" | "pending";
};

type Event = { seq: number; at: Date; type: string; actor: string; data: unknown };

const str = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);
const utc = (iso: string): string => (Number.isNaN(Date.parse(iso)) ? iso : `${new Date(iso).toISOString().slice(0, 19).replace("T", " ")} UTC`);
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);

const DISPOSITION: Record<string, string> = {
  "approved-executed": "the tool ran once and succeeded",
  "denied-not-executed": "the tool did not run",
  "execution-error": "the tool ran but failed",
  "outcome-unknown": "the outcome is unknown (the tool may have run)",
};

const CAUSE: Record<string, string> = {
  denied: "a reviewer denied it",
  expired: "nobody decided before the deadline",
  "approval-expired": "the approval expired before execution",
  policy: "the policy re-check refused it",
  principal: "the agent or its user is no longer authorized",
  binding: "the tool, arguments or resource changed",
  "chain-exhausted": "it needed approval too many times",
};

/** ", standing in for tara@…" when a delegate reviewed through a delegation (lib/approvals/delegation.ts). */
function standingIn(d: Record<string, unknown>): string {
  const who = Array.isArray(d.standingInFor) ? d.standingInFor.filter((x): x is string => typeof x === "string") : [];
  return who.length ? `, standing in for ${who.join(" and ")}` : "";
}

export function describeEvent(e: Event, actorName: string): TimelineEntry {
  const d = (e.data && typeof e.data === "object" ? e.data : {}) as Record<string, unknown>;
  const base = { seq: e.seq, at: e.at.toISOString(), type: e.type, actor: actorName };
  switch (e.type) {
    case "task.created":
      return { ...base, title: `${actorName} called ${str(d.tool) ?? "the tool"}; policy held it for approval`, tone: "neutral" };
    case "request.created": {
      const n = num(d.approvalsRequired);
      return { ...base, title: `Approval request sent to ${str(d.approverGroup) ?? "reviewers"}${n ? ` (${n} approval${n === 1 ? "" : "s"} needed)` : ""}`, tone: "pending" };
    }
    case "review.approved":
      return { ...base, title: `${actorName} approved${standingIn(d)}${d.passkey && typeof d.passkey === "object" ? ", confirmed with a passkey" : ""}`, quote: str(d.comment), tone: "success" };
    case "review.withdrawn":
      return { ...base, title: `${actorName} withdrew their approval`, tone: "neutral" };
    case "review.denied":
      return { ...base, title: `${actorName} denied${standingIn(d)}`, quote: str(d.comment), tone: "danger" };
    case "request.escalated":
      return { ...base, title: `No decision in time: escalated to ${str(d.fallbackGroup) ?? "the fallback group"}, whose reviewers may decide it too`, tone: "pending" };
    case "request.approved":
      return { ...base, title: `Request approved${num(d.approvals) ? ` with ${num(d.approvals)} approval${num(d.approvals) === 1 ? "" : "s"}` : ""}${str(d.expiresAt) ? `; approval valid until ${utc(str(d.expiresAt)!)}` : ""}`, tone: "success" };
    case "request.denied":
      return { ...base, title: "Request denied", tone: "danger" };
    case "request.cancelled":
      return { ...base, title: "Request cancelled", tone: "neutral" };
    case "request.failed":
      return { ...base, title: "The approval backend failed", quote: str(d.note), tone: "danger" };
    case "request.superseded":
      return { ...base, title: "Policy needed a new approval; this request was superseded", tone: "neutral" };
    case "request.reopened":
      return { ...base, title: `A new approval request was opened (generation ${num(d.generation) ?? "?"})`, tone: "pending" };
    case "task.input-requested":
      return { ...base, title: `${actorName} asked the requester a question`, quote: str(d.question), tone: "pending" };
    case "task.input-received":
      return { ...base, title: `${actorName} answered`, tone: "neutral" };
    case "execution.claimed":
      return { ...base, title: "Policy re-checked with the approval; execution claimed (runs at most once)", tone: "pending" };
    case "execution.completed":
      return { ...base, title: `Executed: ${DISPOSITION[str(d.disposition) ?? ""] ?? str(d.disposition) ?? "finished"}`, tone: d.disposition === "approved-executed" ? "success" : "danger" };
    case "execution.outcome-unknown":
      return { ...base, title: "Execution did not report back in time: outcome unknown", tone: "danger" };
    case "execution.result-late":
      return { ...base, title: "A late execution result arrived after the task had ended", tone: "neutral" };
    case "execution.retry-scheduled":
      return { ...base, title: `Execution postponed (attempt ${num(d.attempt) ?? "?"}); retry scheduled`, tone: "pending" };
    case "task.denied":
      return { ...base, title: `Task ended denied-not-executed: ${CAUSE[str(d.cause) ?? ""] ?? "the tool did not run"}${str(d.detail) ? ` (${str(d.detail)})` : ""}`, tone: "danger" };
    case "task.cancelled":
      return { ...base, title: `${actorName} cancelled the task; the tool did not run`, tone: "neutral" };
    case "task.failed":
      return { ...base, title: "Task failed before execution; the tool did not run", tone: "danger" };
    case "task.purged":
      return { ...base, title: "Retention ended: the task and its arguments were deleted", tone: "neutral" };
    case "intent.closed":
      return { ...base, title: "A submission that never reached the backend was closed", tone: "neutral" };
    default:
      return { ...base, title: e.type, tone: "neutral" };
  }
}

/** Names for audit actors ("user:<id>", "agent:<id>", "system", "backend"). */
export async function actorNames(actors: string[]): Promise<Map<string, string>> {
  const userIds = [...new Set(actors.filter((a) => a.startsWith("user:")).map((a) => a.slice(5)))];
  const agentIds = [...new Set(actors.filter((a) => a.startsWith("agent:")).map((a) => a.slice(6)))];
  const [users, agents] = await Promise.all([
    userIds.length ? db().user.findMany({ where: { id: { in: userIds } }, select: { id: true, name: true } }) : [],
    agentIds.length ? db().agent.findMany({ where: { id: { in: agentIds } }, select: { id: true, name: true } }) : [],
  ]);
  const names = new Map<string, string>([
    ["system", "Countersign"],
    ["backend", "The approval backend"],
  ]);
  for (const u of users) names.set(`user:${u.id}`, u.name);
  for (const a of agents) names.set(`agent:${a.id}`, `agent ${a.name}`);
  return names;
}

/** Every audit event of a task (its requests' events carry the task id too), oldest first. */
export async function timelineFor(taskId: string): Promise<TimelineEntry[]> {
  const events = await db().auditEvent.findMany({ where: { taskId }, orderBy: { seq: "asc" }, take: 500 });
  const names = await actorNames(events.map((e) => e.actor));
  return events.map((e) => describeEvent(e, names.get(e.actor) ?? e.actor));
}
