/**
 * Which requests may be decided (approved) from a chat message. One rule, in one place: a request that needs more
 * than one approver is approved in Countersign itself, where each reviewer sees the whole request and the approvals
 * so far. A further condition (a step-up requirement such as a passkey) is one more line here.
 */

/** What a stored request requires of its approval, as far as chat is concerned. */
export type ChatRequirements = { approvalsRequired: number };

export function decidableInChat(requirements: ChatRequirements): boolean {
  if (requirements.approvalsRequired > 1) return false;
  return true;
}
