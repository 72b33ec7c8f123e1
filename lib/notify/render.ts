/**
 * What a notification says, as plain text and HTML, from the request it is about. Pure: the caller passes the
 * request's facts, the recipient and the time. Untrusted text (the summary, the arguments, a denial's reason, names)
 * is escaped in the HTML and stripped of line breaks in the subject; nothing secret is part of a request's facts.
 */

import { readableAmounts } from "../tools/money";

export type NotificationKind = "created" | "reminder" | "outcome" | "escalated";

export type RequestFacts = {
  id: string;
  summary: string;
  tool: string;
  arguments: unknown;
  approverGroup: string;
  /** The fallback group the request has escalated to, if it has. */
  escalatedTo?: string | null;
  approvalsRequired: number;
  /** Whether each approval must be confirmed with the reviewer's passkey (so only in the browser). */
  requirePasskey: boolean;
  approvals: number;
  /** pending | approved | denied | expired | cancelled | failed */
  status: string;
  deadline: Date;
  agentName: string;
  requesterName: string;
  /** Who decided and why, for the outcome (denials carry their reason). */
  reviews: { name: string; decision: string; comment: string | null }[];
  /** The request's page, or null for a recipient who cannot open it (the requester's user). */
  link: string | null;
  /** What the request's policy required of its approval, as stored with it. */
  requirements?: Record<string, unknown>;
};

export type Rendered = { subject: string; text: string; html: string };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** One line, no control characters, bounded: safe as a mail header. */
function headerText(s: string, max = 120): string {
  // eslint-disable-next-line no-control-regex
  const one = s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ").replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

const WHEN = new Intl.DateTimeFormat("en-GB", {
  timeZone: "UTC",
  day: "numeric",
  month: "short",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
});

export function formatDeadline(deadline: Date, now: Date): string {
  return `${WHEN.format(deadline)} UTC (${relative(deadline.getTime() - now.getTime())})`;
}

function relative(ms: number): string {
  if (ms <= 0) return "passed";
  const min = Math.round(ms / 60_000);
  if (min < 1) return "in less than a minute";
  if (min < 90) return `in ${min} minute${min === 1 ? "" : "s"}`;
  const h = Math.round(min / 60);
  if (h < 48) return `in ${h} hour${h === 1 ? "" : "s"}`;
  const d = Math.round(h / 24);
  return `in ${d} days`;
}

const OUTCOME_WORD: Record<string, string> = {
  approved: "Approved",
  denied: "Denied",
  expired: "Expired",
  cancelled: "Withdrawn",
  failed: "Failed",
};

function outcomeSentence(r: RequestFacts): string {
  const by = (decision: string) => r.reviews.filter((v) => v.decision === decision);
  switch (r.status) {
    case "approved":
      return `It was approved by ${by("approve").map((v) => v.name).join(" and ") || "its reviewers"}.`;
    case "denied": {
      const d = by("deny")[0];
      return d ? `It was denied by ${d.name}${d.comment ? `: ${d.comment}` : "."}` : "It was denied.";
    }
    case "expired":
      return "It expired without a decision; the tool did not run.";
    case "cancelled":
      return "It was withdrawn before a decision (the task ended); the tool did not run.";
    case "failed":
      return "The approval backend failed it; the tool did not run.";
    default:
      return `It is ${r.status}.`;
  }
}

function argumentLines(args: unknown): [string, string][] {
  if (!args || typeof args !== "object" || Array.isArray(args)) return [];
  return Object.entries(args as Record<string, unknown>).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]);
}

export function renderNotification(kind: NotificationKind, r: RequestFacts, recipient: { name: string }, now: Date): Rendered {
  const summary = readableAmounts(r.summary);
  const deadline = formatDeadline(r.deadline, now);
  const quorum = r.approvalsRequired === 1 ? "1 approval" : `${r.approvalsRequired} approvals`;
  const ask = `${r.agentName} (acting for ${r.requesterName}) asks to run ${r.tool} and needs ${quorum} from ${r.approverGroup}.`;
  let subject: string;
  let lead: string;
  let action: string;
  if (kind === "created") {
    subject = `Approval needed: ${summary}`;
    lead = ask;
    action = "Review it";
  } else if (kind === "escalated") {
    subject = `Escalated: ${summary}`;
    lead = `No decision came in time, so this request is now offered to ${r.escalatedTo ?? "the fallback group"} too. ${ask} ${r.approvals} of ${quorum} recorded so far.`;
    action = "Open the request";
  } else if (kind === "reminder") {
    subject = `Reminder: ${summary} (deadline ${relativeShort(r.deadline, now)})`;
    lead = `Still waiting for a decision. ${ask} ${r.approvals} of ${quorum} recorded so far.`;
    action = "Review it";
  } else {
    subject = `${OUTCOME_WORD[r.status] ?? r.status}: ${summary}`;
    lead = `${outcomeSentence(r)} ${r.agentName} (acting for ${r.requesterName}) had asked to run ${r.tool}.`;
    action = "See the request";
  }
  const args = argumentLines(r.arguments);
  const text = [
    `Hello ${recipient.name},`,
    "",
    lead,
    "",
    `  ${summary}`,
    "",
    kind === "outcome" ? `Deadline was: ${WHEN.format(r.deadline)} UTC` : `Deadline: ${deadline}`,
    ...(args.length ? ["Arguments:", ...args.map(([k, v]) => `  ${k}: ${v}`)] : []),
    ...(r.link ? ["", `${action}: ${r.link}`] : []),
    "",
    "You receive this because you review requests for this group or asked for this call. You can turn these emails off on your profile page in Countersign.",
  ].join("\n");
  const e = escapeHtml;
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#0f172a;line-height:1.5">
<p>Hello ${e(recipient.name)},</p>
<p>${e(lead)}</p>
<p style="font-size:1.1em;font-weight:600" dir="auto">${e(summary)}</p>
<p>${kind === "outcome" ? `Deadline was: ${e(WHEN.format(r.deadline))} UTC` : `Deadline: <strong>${e(deadline)}</strong>`}</p>
${args.length ? `<table style="border-collapse:collapse">${args.map(([k, v]) => `<tr><th style="text-align:left;padding:2px 12px 2px 0;font-weight:500">${e(k)}</th><td style="font-family:monospace" dir="auto">${e(v)}</td></tr>`).join("")}</table>` : ""}
${r.link ? `<p><a href="${e(r.link)}" style="display:inline-block;background:#1e40af;color:#fff;padding:8px 14px;border-radius:6px;text-decoration:none">${e(action)}</a></p>` : ""}
<p style="color:#475569;font-size:0.85em">You receive this because you review requests for this group or asked for this call. You can turn these emails off on your profile page in Countersign.</p>
</body></html>`;
  return { subject: headerText(`[Countersign] ${subject}`, 160), text, html };
}

function relativeShort(deadline: Date, now: Date): string {
  return relative(deadline.getTime() - now.getTime());
}
