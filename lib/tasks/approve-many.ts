/**
 * Approve several requests at once from the inbox. Each request is still approved on its own: checked against
 * `approvableInBulk` as stored (one approval, not high-risk, no passkey), bound to the arguments digest the reviewer
 * was shown (a request whose arguments differ is refused), and reviewed through the same `decide` as a single
 * approval, so every four-eyes rule holds and each review is audited as its own event. One request's refusal never
 * stops the others; the answer says what happened to each.
 */
import { db } from "../db/client";
import { approvableInBulk } from "../inbox/bulk";
import { readBody, summaryOf } from "../inbox/body";
import { describeOutcome } from "../inbox/outcome";
import { argumentDigestOf } from "../passkeys/approval";
import { decide } from "./decide";

export const MAX_BULK = 50;

export type BulkItem = { requestId: string; argumentsDigest: string };

export type BulkResult = {
  requestId: string;
  summary: string;
  ok: boolean;
  /** What happened to it when ok (the outcome in words, as the request page says it); why not otherwise. */
  message: string;
};

/** What the inbox's bulk approval answers with. */
export type BulkState = { status: "idle" } | { status: "error"; message: string } | { status: "done"; results: BulkResult[] };

export async function approveMany(reviewerId: string, items: BulkItem[], now: Date): Promise<BulkResult[]> {
  const results: BulkResult[] = [];
  const seen = new Set<string>();
  for (const item of items.slice(0, MAX_BULK)) {
    if (seen.has(item.requestId)) continue;
    seen.add(item.requestId);
    const r = await db().approvalRequest.findUnique({
      where: { id: item.requestId },
      select: { approvalsRequired: true, requirePasskey: true, body: true },
    });
    if (!r) {
      results.push({ requestId: item.requestId, summary: "unknown request", ok: false, message: "No such request." });
      continue;
    }
    const body = readBody(r.body);
    const summary = summaryOf(body);
    const refuse = (message: string) => results.push({ requestId: item.requestId, summary, ok: false, message });
    if (!approvableInBulk(r)) {
      refuse("This request needs more than one approval, a typed confirmation or a passkey: open it to approve it.");
      continue;
    }
    if (!item.argumentsDigest || argumentDigestOf(r.body) !== item.argumentsDigest) {
      refuse("Its arguments are not the ones you were shown: open it to review it.");
      continue;
    }
    const d = await decide({ requestId: item.requestId, reviewerId, decision: "approve" }, now);
    if (!d.ok) refuse(d.error);
    else {
      const outcome = describeOutcome({ tool: body.tool ?? "unknown", ...d, approvals: 1, approvalsRequired: r.approvalsRequired });
      results.push({ requestId: item.requestId, summary, ok: true, message: outcome.title });
    }
  }
  return results;
}
