/**
 * High-risk approvals need a typed confirmation. Definition (one of the two the issue offered): a request is
 * high-risk when its rule needs two or more approvals (`approvalsRequired >= 2`). Rules are versioned data, so
 * this follows the policy: today that is wire transfers above USD 25,000 and deletions under prod/, and an admin
 * who raises any rule to two approvals makes its requests high-risk too, with no code change.
 *
 * Only the approval that completes a high-risk quorum is confirmed this way: the one whose click runs the call. The
 * approvals before it run nothing, so they are not slowed down.
 *
 * What the reviewer types is short and what would hurt most to get wrong: the amount when the call has one, else
 * the account, else the last segment of the path, else the tool's name. The page asks for it; the decide action
 * checks it again on the server against the stored request and its approvals so far (`checkConfirmation`).
 */
import { db } from "@/lib/db/client";
import { readBody } from "./body";
import { completesQuorum } from "./consequence";

export const HIGH_RISK_MIN_APPROVALS = 2;

export type Confirmation = {
  /** What to type: the amount, the account, the last segment of the path, the tool's name. */
  what: "amount" | "account" | "segment" | "tool";
  /** The exact value shown to the reviewer beside the field. */
  expected: string;
  /** What to type, in words: "the amount", "the last part of the path". */
  words: string;
};

export function isHighRisk(approvalsRequired: number): boolean {
  return approvalsRequired >= HIGH_RISK_MIN_APPROVALS;
}

/** What to type, in words, for each kind of confirmation. */
export const CONFIRMATION_WORDS: Record<Confirmation["what"], string> = {
  amount: "the amount",
  account: "the account",
  segment: "the last part of the path",
  tool: "the tool name",
};

/**
 * The confirmation an approval needs, or null: only the approval that completes the quorum (`approvals` so far)
 * of a high-risk request.
 */
export function confirmationFor(req: { tool: string; arguments: unknown; approvalsRequired: number; approvals: number }): Confirmation | null {
  if (!isHighRisk(req.approvalsRequired) || !completesQuorum(req.approvals, req.approvalsRequired)) return null;
  const args = req.arguments && typeof req.arguments === "object" && !Array.isArray(req.arguments) ? (req.arguments as Record<string, unknown>) : {};
  const ask = (what: Confirmation["what"], expected: string): Confirmation => ({ what, expected, words: CONFIRMATION_WORDS[what] });
  if (typeof args.amount === "number" && Number.isFinite(args.amount)) return ask("amount", args.amount.toFixed(2));
  if (typeof args.to === "string" && args.to) return ask("account", args.to);
  if (typeof args.path === "string" && args.path) {
    const last = args.path.split("/").filter(Boolean).pop();
    if (last) return ask("segment", last);
  }
  return ask("tool", req.tool);
}

/** Amounts compare as numbers to the cent ("30000", "30,000.00" and "30000.00" all confirm 30000.00). */
function sameAmount(typed: string, expected: string): boolean {
  const clean = typed.trim().replace(/^(usd|eur|\$|€)\s*/i, "").replace(/[,\s_]/g, "");
  if (!/^\d+(\.\d{1,2})?$/.test(clean)) return false;
  return Math.round(Number(clean) * 100) === Math.round(Number(expected) * 100);
}

export function confirms(c: Confirmation, typed: string): boolean {
  if (c.what === "amount") return sameAmount(typed, c.expected);
  return typed.trim() === c.expected;
}

export type ConfirmationCheck = { ok: true } | { ok: false; error: string };

/**
 * Why an approval of the request (its stored body, quorum and approvals so far) is refused for want of the typed
 * confirmation, or null when `typed` confirms it or none is needed. The one rule, used before the review and again
 * under the request's row lock (ReviewInput.confirm), so an approval that became the final one meanwhile is held too.
 */
export function confirmationRefusal(req: { body: unknown; approvalsRequired: number; approvals: number }, typed: string | null): string | null {
  const body = readBody(req.body);
  const c = confirmationFor({ tool: body.tool ?? "unknown", arguments: body.arguments, approvalsRequired: req.approvalsRequired, approvals: req.approvals });
  if (!c || (typed && confirms(c, typed))) return null;
  return `This is a high-risk request and your approval runs it: type ${c.words} (${c.expected}) exactly to confirm.`;
}

/**
 * Server-side check of a typed confirmation for approving `requestId` (read from the database, never from the
 * form). A request that is not high-risk needs none, and neither does an approval that does not complete the quorum.
 */
export async function checkConfirmation(requestId: string, reviewerId: string, typed: string | null): Promise<ConfirmationCheck> {
  // The approvals of others: a reviewer who already reviewed is refused as such by the review, not asked to type.
  const r = await db().approvalRequest.findUnique({
    where: { id: requestId },
    select: { body: true, approvalsRequired: true, _count: { select: { reviews: { where: { decision: "approve", reviewerId: { not: reviewerId } } } } } },
  });
  if (!r) return { ok: false, error: "No such request." };
  const error = confirmationRefusal({ body: r.body, approvalsRequired: r.approvalsRequired, approvals: r._count.reviews }, typed);
  return error ? { ok: false, error } : { ok: true };
}
