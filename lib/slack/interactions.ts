/**
 * What Countersign does with a request from Slack: an interaction (a button in a request's message, Slack's
 * block_actions payload) or a slash command (`/countersign link <code>`, `/countersign unlink`). Every request is
 * first checked: Slack's signature over the raw body with the signing secret, a timestamp within five minutes, and
 * never seen before (the signatures seen inside the window are remembered, and forgotten after it). A request that
 * fails any check changes nothing, is audited, and is answered 401.
 *
 * A Slack user acts only as the Countersign user linked to them, and decides through the same review verb as the
 * browser (lib/tasks/decide: four-eyes, never the requester, eligibility, any denial stands). Approving in Slack is refused for a
 * request that decidableInChat() keeps in Countersign; denying is allowed for every request, because a denial is
 * the safe direction (it stops the call, and any denial stands in the browser too).
 */
import { z } from "zod";
import { appendAudit } from "../audit/append";
import { db } from "../db/client";
import { decide } from "../tasks/decide";
import { readBody, summaryOf } from "../inbox/body";
import { logWarn } from "../log";
import { webApi, type SlackApi } from "./api";
import { decidableInChat, storedRequirements } from "./decidable";
import { APPROVE_ACTION, DENY_ACTION, OPEN_ACTION } from "./message";
import { linkedUserId, linkSlackAccount, slackKey, unlinkSlackAccount, type SlackIdentity } from "./link";
import { slackSettings, slackSigningSecret } from "./settings";
import { SLACK_TIMESTAMP_WINDOW_SEC, verifySlackSignature } from "./signature";

export type SlackReply = {
  status: number;
  body: Record<string, unknown> | null;
  /** An interaction's decision and its private reply, which may finish after the answer (see SLACK_ACK_MS). */
  settled?: Promise<void>;
};

/** How long a seen signature is remembered: past the window, a replay fails the timestamp check anyway. */
const SEEN_FOR_MS = 2 * SLACK_TIMESTAMP_WINDOW_SEC * 1000;

/** The reason given to a denial made in Slack (Slack's buttons carry no text). */
export const SLACK_DENIAL_REASON = "Denied in Slack.";

/** Slack's payloads are small; a larger body is refused before it is read as a form. */
export const MAX_SLACK_BODY = 64 * 1024;
const TOO_LARGE: SlackReply = { status: 413, body: { error: "too large" } };

const REFUSED: SlackReply = { status: 401, body: { error: "invalid request" } };

async function audit(type: string, actor: string, data: Record<string, unknown>, now: Date, requestId?: string) {
  await db().$transaction((tx) => appendAudit(tx, { type, actor, requestId: requestId ?? null, data, at: now }));
}

/** True the first time a signature is seen; forgets signatures older than the window, so the memory stays bounded. */
export async function firstSighting(signature: string, now: Date): Promise<boolean> {
  await db().slackSeenRequest.deleteMany({ where: { seenAt: { lt: new Date(now.getTime() - SEEN_FOR_MS) } } });
  const n = await db().slackSeenRequest.createMany({ data: [{ signature, seenAt: now }], skipDuplicates: true });
  return n.count === 1;
}

type Headers = { get(name: string): string | null };

/** The checks every request from Slack passes before it is read; a failure is audited (without the body). */
async function genuine(kind: "interaction" | "command", headers: Headers, rawBody: string, now: Date): Promise<boolean> {
  const secret = slackSigningSecret();
  if (!secret) return false;
  const signature = headers.get("x-slack-signature");
  const check = verifySlackSignature({ secret, timestamp: headers.get("x-slack-request-timestamp"), signature, rawBody }, now);
  let reason: string | null = check.ok ? null : check.reason;
  if (!reason && !(await firstSighting(signature!, now))) reason = "replayed";
  if (!reason) return true;
  await audit("slack.request.refused", "slack", { kind, reason }, now);
  logWarn("slack request refused", { kind, reason });
  return false;
}

const blockActions = z.object({
  type: z.literal("block_actions"),
  user: z.object({ id: z.string().min(1).max(40), team_id: z.string().max(40).optional() }),
  team: z.object({ id: z.string().min(1).max(40) }).nullable().optional(),
  channel: z.object({ id: z.string().min(1).max(40) }).optional(),
  actions: z.array(z.object({ action_id: z.string().max(255), value: z.string().max(2000).optional() })).min(1),
});

/** A signed POST to the interactions URL: form-encoded, the block_actions payload as JSON in `payload`. */
export async function handleSlackInteraction(headers: Headers, rawBody: string, now: Date, api?: SlackApi): Promise<SlackReply> {
  if (!slackSigningSecret()) return { status: 404, body: { error: "Slack is not configured" } };
  if (rawBody.length > MAX_SLACK_BODY) return TOO_LARGE;
  if (!(await genuine("interaction", headers, rawBody, now))) return REFUSED;
  let parsed;
  try {
    parsed = blockActions.safeParse(JSON.parse(new URLSearchParams(rawBody).get("payload") ?? ""));
  } catch {
    parsed = null;
  }
  // A genuine payload of another type (a shortcut, a view) is acknowledged and ignored.
  if (!parsed?.success) return { status: 200, body: null };
  const p = parsed.data;
  const who: SlackIdentity = { teamId: p.team?.id ?? p.user.team_id ?? "", userId: p.user.id };
  const action = p.actions[0];
  if (action.action_id === OPEN_ACTION) return { status: 200, body: null };
  if (action.action_id !== APPROVE_ACTION && action.action_id !== DENY_ACTION) return { status: 200, body: null };
  const requestId = action.value ?? "";
  const decision = action.action_id === APPROVE_ACTION ? "approve" : "deny";
  const channel = p.channel?.id;
  // The decision, then its outcome told to the presser privately. An approval moves the task on at once, which may
  // run a slow tool; Slack wants its answer within 3 seconds, so the answer does not wait past SLACK_ACK_MS: the
  // work goes on (the review is already recorded or about to be) and the ephemeral message follows when it is done.
  const settled = (async () => {
    const text = await decideFromSlack(who, requestId, decision, now);
    const bot = slackSettings();
    if (channel && (api || bot)) {
      try {
        await (api ?? webApi(bot!.token)).postEphemeral(channel, p.user.id, text);
      } catch {
        logWarn("slack reply not delivered", { requestId });
      }
    }
  })().catch((e: unknown) => {
    logWarn("slack decision failed", { requestId, error: e instanceof Error ? e.name : "unknown" });
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, SLACK_ACK_MS)))]);
  clearTimeout(timer);
  return { status: 200, body: null, settled };
}

/** How long an interaction's answer waits for its decision before acknowledging (Slack's limit is 3 seconds). */
export const SLACK_ACK_MS = 2500;

/** A decision from a Slack button: by the linked user only, through the review verb; the outcome in words. */
export async function decideFromSlack(who: SlackIdentity, requestId: string, decision: "approve" | "deny", now: Date): Promise<string> {
  const refuse = async (why: string, data: Record<string, unknown> = {}) => {
    await audit("slack.review.refused", `slack:${slackKey(who)}`, { slackUser: slackKey(who), decision, why, ...data }, now, known ? requestId : undefined);
    return why;
  };
  const req = await db().approvalRequest.findUnique({ where: { id: requestId }, select: { id: true, approvalsRequired: true, requirePasskey: true, body: true } });
  const known = req !== null;
  const userId = await linkedUserId(who);
  if (!userId) return refuse("Your Slack account is not linked to a Countersign reviewer. Link it from your profile page in Countersign.");
  if (!req) return refuse("No such request.", { userId });
  const body = readBody(req.body);
  if (decision === "approve" && !decidableInChat(storedRequirements(req, body))) {
    const why = req.requirePasskey ? "its approvals are confirmed with a passkey" : "it needs more than one approver";
    return refuse(`This request cannot be approved in Slack: ${why}. Open it in Countersign to approve it.`, { userId });
  }
  const result = await decide({ requestId, reviewerId: userId, decision, comment: decision === "deny" ? SLACK_DENIAL_REASON : undefined }, now);
  const summary = summaryOf(body);
  if (!result.ok) return `Not recorded: ${result.error}`;
  if (decision === "deny") return `You denied “${summary}”. The request is denied.`;
  return result.requestStatus === "approved"
    ? `You approved “${summary}”. The request is approved.`
    : `Your approval of “${summary}” is recorded; the request is ${result.requestStatus}.`;
}

const COMMAND_HELP = "Use `/countersign link <code>` with the code from your Countersign profile page, or `/countersign unlink`.";

/** A signed POST to the slash command URL: form-encoded command, text, user_id, team_id. Answered ephemerally. */
export async function handleSlackCommand(headers: Headers, rawBody: string, now: Date): Promise<SlackReply> {
  if (!slackSigningSecret()) return { status: 404, body: { error: "Slack is not configured" } };
  if (rawBody.length > MAX_SLACK_BODY) return TOO_LARGE;
  if (!(await genuine("command", headers, rawBody, now))) return REFUSED;
  const form = new URLSearchParams(rawBody);
  const who: SlackIdentity = { teamId: form.get("team_id") ?? "", userId: form.get("user_id") ?? "" };
  const reply = (text: string): SlackReply => ({ status: 200, body: { response_type: "ephemeral", text } });
  if (!who.userId) return reply(COMMAND_HELP);
  const [verb, arg] = (form.get("text") ?? "").trim().split(/\s+/, 2);
  if (verb === "link" && arg) {
    const r = await linkSlackAccount(arg, who, now);
    if (!r.ok) await audit("slack.link.refused", `slack:${slackKey(who)}`, { slackUser: slackKey(who), why: r.error }, now);
    return reply(r.ok ? `Linked: you act in Slack as ${r.userName}.` : r.error);
  }
  if (verb === "unlink") {
    const userId = await linkedUserId(who);
    const done = userId ? await unlinkSlackAccount(userId, `slack:${slackKey(who)}`, now) : false;
    return reply(done ? "Unlinked: this Slack account no longer acts in Countersign." : "This Slack account is not linked.");
  }
  return reply(COMMAND_HELP);
}
