/**
 * The consequence of the click, in words, for the reviewer about to approve: whether their approval completes the
 * quorum (and so runs the call now) or how many more are needed after theirs, and what the Approve button says.
 */
import type { ToolEffect } from "@/lib/tools/types";

export type Consequence = {
  /** This approval completes the quorum: approving runs the call. */
  final: boolean;
  message: string;
  /** The Approve button's words. */
  approveLabel: string;
};

/** Whether one more approval completes the quorum. */
export function completesQuorum(approvals: number, approvalsRequired: number): boolean {
  return approvals + 1 >= approvalsRequired;
}

export function consequenceOf(input: { approvals: number; approvalsRequired: number; effect: ToolEffect; blocked?: string | null }): Consequence {
  const { approvals, approvalsRequired, effect, blocked } = input;
  if (!completesQuorum(approvals, approvalsRequired)) {
    const after = approvalsRequired - approvals - 1;
    const more = after === 1 ? "One more approval is needed" : `${after} more approvals are needed`;
    return { final: false, message: `${more} after yours; nothing runs until then.`, approveLabel: "Approve" };
  }
  if (blocked) {
    return {
      final: true,
      message: `You are the final approver, but the call cannot run as asked: ${blocked} Approving would not run it.`,
      approveLabel: "Approve",
    };
  }
  return { final: true, message: `You are the final approver: approving ${effect.does} now.`, approveLabel: `Approve and ${effect.button}` };
}
