/**
 * Which requests may be approved from a chat message. One rule, in one place: a request that needs more than one
 * approver is approved in Countersign itself, where each reviewer sees the whole request and the approvals so far.
 * A further condition (a step-up requirement such as a passkey) is one more line here.
 */
import type { Requirements } from "../policy/evaluate";

/** The stored request's requirements: its approvalsRequired column, with the rest of what its policy required. */
export type ChatRequirements = Pick<Requirements, "approvalsRequired"> & Partial<Requirements>;

export function decidableInChat(requirements: ChatRequirements): boolean {
  if (requirements.approvalsRequired > 1) return false;
  return true;
}

/** The requirements decidableInChat judges, from a stored request (the column is what the review verb counts). */
export function storedRequirements(approvalsRequired: number, body: { requirements?: Partial<Requirements> }): ChatRequirements {
  return { ...body.requirements, approvalsRequired };
}
