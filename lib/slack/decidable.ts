/**
 * Which requests may be approved from a chat message. One rule, in one place: a request that needs more than one
 * approver is approved in Countersign itself, where each reviewer sees the whole request and the approvals so far.
 * Nor is one whose approvals must be confirmed with a passkey (WebAuthn runs in the browser).
 */
import type { Requirements } from "../policy/evaluate";

/** The stored request's requirements: its approvalsRequired column, with the rest of what its policy required. */
export type ChatRequirements = Pick<Requirements, "approvalsRequired"> & Partial<Requirements>;

export function decidableInChat(requirements: ChatRequirements): boolean {
  if (requirements.approvalsRequired > 1) return false;
  // An approval that must be confirmed with the reviewer's passkey is made in the browser, where WebAuthn runs.
  if (requirements.requirePasskey) return false;
  return true;
}

/** The requirements decidableInChat judges, from a stored request (its columns are what the review verb reads). */
export function storedRequirements(
  columns: { approvalsRequired: number; requirePasskey: boolean },
  body: { requirements?: Partial<Requirements> },
): ChatRequirements {
  return { ...body.requirements, approvalsRequired: columns.approvalsRequired, requirePasskey: columns.requirePasskey };
}
