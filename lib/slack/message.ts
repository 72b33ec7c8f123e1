/**
 * The channel message for a request, as Slack blocks. Pure: the caller passes the request's facts, whether it may be
 * decided in chat (decidableInChat) and the time. Untrusted text (the summary, arguments, names, a denial's reason)
 * is escaped for Slack's mrkdwn, so it cannot make a link, a mention or a channel ping.
 */
import { formatDeadline, type RequestFacts } from "../notify/render";
import { readableAmounts } from "../tools/money";

export const APPROVE_ACTION = "countersign_approve";
export const DENY_ACTION = "countersign_deny";
export const OPEN_ACTION = "countersign_open";

/** Slack's three control characters in mrkdwn and plain text: `<` and `>` make links and mentions, `&` escapes. */
export function escapeMrkdwn(s: string): string {
  return s.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!);
}

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

const OUTCOME: Record<string, string> = {
  approved: "Approved",
  denied: "Denied",
  expired: "Expired without a decision; the tool did not run",
  cancelled: "Withdrawn before a decision; the tool did not run",
  failed: "Failed in the approval backend; the tool did not run",
};

function outcomeLine(r: RequestFacts): string {
  const names = (d: string) => r.reviews.filter((v) => v.decision === d);
  if (r.status === "approved") return `*Approved* by ${escapeMrkdwn(names("approve").map((v) => v.name).join(" and ") || "its reviewers")}`;
  if (r.status === "denied") {
    const d = names("deny")[0];
    return d ? `*Denied* by ${escapeMrkdwn(d.name)}${d.comment ? `: ${escapeMrkdwn(clip(d.comment, 500))}` : ""}` : "*Denied*";
  }
  return `*${OUTCOME[r.status] ?? escapeMrkdwn(r.status)}*`;
}

function argumentText(args: unknown): string | null {
  if (!args || typeof args !== "object" || Array.isArray(args)) return null;
  const lines = Object.entries(args as Record<string, unknown>).map(
    ([k, v]) => `${escapeMrkdwn(clip(k, 80))}: ${escapeMrkdwn(clip(typeof v === "string" ? v : JSON.stringify(v), 300))}`,
  );
  return lines.length ? clip(lines.join("\n"), 2800) : null;
}

export type SlackMessageBody = { text: string; blocks: Record<string, unknown>[] };

export function requestMessage(r: RequestFacts, decidable: boolean, now: Date): SlackMessageBody {
  const summary = escapeMrkdwn(clip(readableAmounts(r.summary), 500));
  const pending = r.status === "pending" && r.deadline.getTime() > now.getTime();
  const quorum = r.approvalsRequired === 1 ? "1 approval" : `${r.approvalsRequired} approvals`;
  const head = pending ? `Approval needed: ${summary}` : `${OUTCOME[r.status]?.split(";")[0] ?? escapeMrkdwn(r.status)}: ${summary}`;
  const blocks: Record<string, unknown>[] = [
    { type: "section", text: { type: "mrkdwn", text: `*${head}*` } },
    {
      type: "section",
      fields: [
        { type: "mrkdwn", text: `*Asked by*\n${escapeMrkdwn(clip(r.agentName, 80))} for ${escapeMrkdwn(clip(r.requesterName, 80))}` },
        { type: "mrkdwn", text: `*Tool*\n${escapeMrkdwn(clip(r.tool, 120))}` },
        { type: "mrkdwn", text: `*Needs*\n${quorum} from ${escapeMrkdwn(r.approverGroup)}` },
        { type: "mrkdwn", text: pending ? `*Deadline*\n${formatDeadline(r.deadline, now)}` : `*Deadline was*\n${formatDeadline(r.deadline, r.deadline)}` },
      ],
    },
  ];
  const args = argumentText(r.arguments);
  if (args) blocks.push({ type: "section", text: { type: "mrkdwn", text: `*Arguments*\n${args}` } });
  if (!pending) blocks.push({ type: "section", text: { type: "mrkdwn", text: outcomeLine(r) } });
  const open = { type: "button", action_id: OPEN_ACTION, text: { type: "plain_text", text: "Open in Countersign" }, ...(r.link ? { url: r.link } : {}) };
  const elements: Record<string, unknown>[] = [];
  if (pending && decidable) {
    elements.push({ type: "button", action_id: APPROVE_ACTION, style: "primary", value: r.id, text: { type: "plain_text", text: "Approve" } });
  }
  if (pending) elements.push({ type: "button", action_id: DENY_ACTION, style: "danger", value: r.id, text: { type: "plain_text", text: "Deny" } });
  if (r.link) elements.push(open);
  if (elements.length) blocks.push({ type: "actions", block_id: `countersign:${r.id}`, elements });
  if (pending && !decidable) {
    blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: `Needs ${quorum}: approve it in Countersign. A denial from here stands.` }] });
  }
  return { text: head, blocks };
}
