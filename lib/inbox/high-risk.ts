/**
 * High-risk approvals need a typed confirmation. Definition (one of the two the issue offered): a request is
 * high-risk when its rule needs two or more approvals (`approvalsRequired >= 2`). Rules are versioned data, so
 * this follows the policy: today that is wire transfers above USD 25,000 and deletions under prod/, and an admin
 * who raises any rule to two approvals makes its requests high-risk too, with no code change.
 *
 * What the reviewer types is what would hurt most to get wrong: the amount when the call has one, else the path,
 * else the tool's name. The page asks for it; the decide action checks it again on the server (`checkConfirmation`).
 */
import { db } from "@/lib/db/client";
import { readBody } from "./body";

export const HIGH_RISK_MIN_APPROVALS = 2;

export type Confirmation = {
  /** What to type, in words: "the amount", "the path", "the tool name". */
  what: "amount" | "path" | "tool";
  /** The exact value shown to the reviewer beside the field. */
  expected: string;
};

export function isHighRisk(approvalsRequired: number): boolean {
  return approvalsRequired >= HIGH_RISK_MIN_APPROVALS;
}

/** The confirmation a request needs before an approval, or null when it is not high-risk. */
export function confirmationFor(req: { tool: string; arguments: unknown; approvalsRequired: number }): Confirmation | null {
  if (!isHighRisk(req.approvalsRequired)) return null;
  const args = req.arguments && typeof req.arguments === "object" && !Array.isArray(req.arguments) ? (req.arguments as Record<string, unknown>) : {};
  if (typeof args.amount === "number" && Number.isFinite(args.amount)) return { what: "amount", expected: args.amount.toFixed(2) };
  if (typeof args.path === "string" && args.path) return { what: "path", expected: args.path };
  return { what: "tool", expected: req.tool };
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
 * Server-side check of a typed confirmation for approving `requestId` (read from the database, never from the
 * form). A request that is not high-risk needs none.
 */
export async function checkConfirmation(requestId: string, typed: string | null): Promise<ConfirmationCheck> {
  const r = await db().approvalRequest.findUnique({ where: { id: requestId }, select: { body: true, approvalsRequired: true } });
  if (!r) return { ok: false, error: "No such request." };
  const body = readBody(r.body);
  const c = confirmationFor({ tool: body.tool ?? "unknown", arguments: body.arguments, approvalsRequired: r.approvalsRequired });
  if (!c) return { ok: true };
  if (typed && confirms(c, typed)) return { ok: true };
  return { ok: false, error: `This is a high-risk request: type the ${c.what} (${c.expected}) exactly to confirm your approval.` };
}
