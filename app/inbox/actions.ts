"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authorizeAction, REVIEW_ROLES } from "@/lib/auth/session";
import { withdrawApproval, type WithdrawState } from "@/lib/approvals/withdraw";
import { approveMany, MAX_BULK, type BulkState } from "@/lib/tasks/approve-many";

const bulkSchema = z
  .array(z.object({ requestId: z.uuid(), argumentsDigest: z.string().max(200) }))
  .min(1, "Select at least one request.")
  .max(MAX_BULK, `Approve at most ${MAX_BULK} requests at once.`);

/**
 * Approve the selected requests, each on its own (`approveMany`: only single-approver, non-high-risk, no-passkey
 * requests, each bound to the arguments digest the reviewer was shown, each reviewed and audited by itself).
 */
export async function bulkApproveAction(items: { requestId: string; argumentsDigest: string }[]): Promise<BulkState> {
  const who = await authorizeAction(REVIEW_ROLES);
  if (!who.ok) return { status: "error", message: who.error };
  const parsed = bulkSchema.safeParse(items);
  if (!parsed.success) return { status: "error", message: parsed.error.issues[0]?.message ?? "That selection could not be read." };
  const results = await approveMany(who.user.id, parsed.data, new Date());
  revalidatePath("/inbox");
  return { status: "done", results };
}

/** Withdraw the signed-in reviewer's approval of a request still awaiting others (`withdrawApproval` decides). */
export async function withdrawAction(_prev: WithdrawState, formData: FormData): Promise<WithdrawState> {
  const who = await authorizeAction(REVIEW_ROLES);
  if (!who.ok) return { status: "error", message: who.error };
  const id = z.uuid().safeParse(formData.get("requestId"));
  if (!id.success) return { status: "error", message: "That request could not be read. Reload the page and try again." };
  const result = await withdrawApproval({ requestId: id.data, reviewerId: who.user.id }, new Date());
  // Not /inbox: the Awaiting others list keeps the row, now saying it was withdrawn, until the reviewer moves on.
  revalidatePath(`/requests/${id.data}`);
  if (!result.ok) return { status: "error", message: result.error };
  return { status: "done", message: "Your approval was withdrawn. The request is back in your inbox." };
}
