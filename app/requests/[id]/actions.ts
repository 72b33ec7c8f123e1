"use server";

import { revalidatePath } from "next/cache";
import { headers } from "next/headers";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { z } from "zod";
import { authorizeAction, REVIEW_ROLES } from "@/lib/auth/session";
import { checkConfirmation, confirmationRefusal } from "@/lib/inbox/high-risk";
import { describeOutcome, type AskState, type DecisionState } from "@/lib/inbox/outcome";
import { askRequester } from "@/lib/tasks/ask";
import { decide } from "@/lib/tasks/decide";
import { issueApprovalChallenge, type PasskeyProof } from "@/lib/passkeys/approval";
import { relyingParty } from "@/lib/passkeys/relying-party";
import { PasskeyNonce, readAssertion } from "@/lib/passkeys/wire";

/** The origin this server action was called from (the relying party's default when none is configured). */
async function requestOrigin(): Promise<string | null> {
  return (await headers()).get("origin");
}

const decisionSchema = z.discriminatedUnion("decision", [
  z.object({
    requestId: z.uuid(),
    decision: z.literal("approve"),
    comment: z.string().trim().max(1000, "Keep the comment under 1000 characters."),
  }),
  z.object({
    requestId: z.uuid(),
    decision: z.literal("deny"),
    comment: z.string().trim().min(1, "Say why you deny this request.").max(1000, "Keep the reason under 1000 characters."),
  }),
]);

const text = (v: FormDataEntryValue | null): string => (typeof v === "string" ? v : "");

/**
 * Approve or deny one approval request as the signed-in reviewer. Cross-site calls, signed-out callers and other
 * roles are refused here; the four-eyes rules (group, not the requester, once per reviewer) live in `decide`; a
 * high-risk approval's typed confirmation is checked against the stored request, not the form.
 */
export async function decideAction(_prev: DecisionState, formData: FormData): Promise<DecisionState> {
  const who = await authorizeAction(REVIEW_ROLES);
  if (!who.ok) return { status: "error", message: who.error };

  const parsed = decisionSchema.safeParse({
    requestId: formData.get("requestId"),
    decision: formData.get("decision"),
    comment: text(formData.get("comment")),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const onComment = issue?.path[0] === "comment";
    return {
      status: "error",
      message: onComment && issue ? issue.message : "That decision could not be read. Reload the page and try again.",
      field: onComment ? "comment" : undefined,
    };
  }
  const { requestId, decision } = parsed.data;

  const typed = text(formData.get("confirm")) || null;
  if (decision === "approve") {
    const confirmed = await checkConfirmation(requestId, who.user.id, typed);
    if (!confirmed.ok) return { status: "error", message: confirmed.error, field: "confirm" };
  }

  // A passkey confirmation, when the form carries one; whether the request needs it is decided by `decide`.
  let passkey: PasskeyProof | undefined;
  if (decision === "approve" && formData.get("passkeyResponse")) {
    const nonce = PasskeyNonce.safeParse(formData.get("passkeyNonce"));
    const response = readAssertion(formData.get("passkeyResponse"));
    const rp = relyingParty(await requestOrigin());
    if (!nonce.success || !response || !rp) return { status: "error", message: "The passkey confirmation could not be read. Try again." };
    passkey = { nonce: nonce.data, response, rp };
  }

  // The confirmation is judged again under the request's lock: an approval that became the final one meanwhile needs it.
  const confirm = (req: Parameters<typeof confirmationRefusal>[0]) => confirmationRefusal(req, typed);
  const result = await decide({ requestId, reviewerId: who.user.id, decision, comment: parsed.data.comment || undefined, passkey, confirm }, new Date());
  revalidatePath(`/requests/${requestId}`);
  revalidatePath("/inbox");
  if (!result.ok) return { status: "error", message: result.error };

  const tool = text(formData.get("tool"));
  const outcome =
    result.requestStatus === "pending"
      ? { tone: "pending" as const, title: "Your approval is recorded — waiting for another approver" }
      : describeOutcome({
          tool,
          requestStatus: result.requestStatus,
          taskStatus: result.taskStatus,
          disposition: result.disposition,
          resultText: result.resultText,
          denialDetail: result.denialDetail,
          approvals: 0,
          approvalsRequired: 0,
        });
  return { status: "done", decision, outcome };
}

const askSchema = z.object({
  requestId: z.uuid(),
  question: z.string().trim().min(5, "Ask a question of at least 5 characters.").max(500, "Keep the question under 500 characters."),
});

/**
 * Ask the requester a question before deciding (the task waits in input_required until the agent answers with
 * tasks/update). Only reviewers who could decide the request may ask; `askRequester` checks that again.
 */
export async function askAction(_prev: AskState, formData: FormData): Promise<AskState> {
  const who = await authorizeAction(REVIEW_ROLES);
  if (!who.ok) return { status: "error", message: who.error };
  const parsed = askSchema.safeParse({ requestId: formData.get("requestId"), question: text(formData.get("question")) });
  if (!parsed.success) return { status: "error", message: parsed.error.issues[0]?.message ?? "That question could not be read." };
  const result = await askRequester({ requestId: parsed.data.requestId, reviewerId: who.user.id, question: parsed.data.question }, new Date());
  revalidatePath(`/requests/${parsed.data.requestId}`);
  if (!result.ok) return { status: "error", message: result.error };
  return { status: "done", message: "Your question was sent. The agent sees it on its next poll; the answer appears here." };
}

export type PasskeyChallengeState = { ok: true; nonce: string; options: PublicKeyCredentialRequestOptionsJSON } | { ok: false; error: string };

/**
 * A single-use challenge for the signed-in reviewer to confirm the approval of one request with their passkey,
 * bound to the request's id and argument digest. The approval itself is checked again by `decide`.
 */
export async function passkeyChallengeAction(requestId: string): Promise<PasskeyChallengeState> {
  const who = await authorizeAction(REVIEW_ROLES);
  if (!who.ok) return { ok: false, error: who.error };
  const id = z.uuid().safeParse(requestId);
  if (!id.success) return { ok: false, error: "That request could not be read. Reload the page and try again." };
  const rp = relyingParty(await requestOrigin());
  if (!rp) return { ok: false, error: "Passkeys are not configured on this server." };
  return issueApprovalChallenge(who.user.id, id.data, rp, new Date());
}
