"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authorize, REVIEW_ROLES } from "@/lib/auth/session";
import { describeOutcome, type DecisionState } from "@/lib/inbox/outcome";
import { decide } from "@/lib/tasks/decide";

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

/** Approve or deny one approval request as the signed-in reviewer. The four-eyes rules live in `decide`. */
export async function decideAction(_prev: DecisionState, formData: FormData): Promise<DecisionState> {
  const who = await authorize(REVIEW_ROLES);
  if (!who.ok) return { status: "error", message: who.error };

  const comment = formData.get("comment");
  const parsed = decisionSchema.safeParse({
    requestId: formData.get("requestId"),
    decision: formData.get("decision"),
    comment: typeof comment === "string" ? comment : "",
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

  const result = await decide({ requestId, reviewerId: who.user.id, decision, comment: parsed.data.comment || undefined }, new Date());
  revalidatePath(`/requests/${requestId}`);
  revalidatePath("/inbox");
  if (!result.ok) return { status: "error", message: result.error };

  const tool = typeof formData.get("tool") === "string" ? String(formData.get("tool")) : "";
  const outcome =
    result.requestStatus === "pending"
      ? { tone: "pending" as const, title: "Your approval is recorded — waiting for another approver" }
      : describeOutcome({
          tool,
          requestStatus: result.requestStatus,
          taskStatus: result.taskStatus,
          disposition: result.disposition,
          approvals: 0,
          approvalsRequired: 0,
        });
  return { status: "done", decision, outcome };
}
