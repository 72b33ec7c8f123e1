/**
 * Which requests a reviewer may approve together from the inbox, one rule in one place: those that need a single
 * approval, are not high-risk, and need no passkey. Everything else is approved on its own page, where the whole
 * request, the typed confirmation or the passkey prompt is in front of the reviewer. `approveMany` checks this again
 * against the stored request; the inbox only uses it to offer the checkbox.
 */
import { isHighRisk } from "./high-risk";

export function approvableInBulk(r: { approvalsRequired: number; requirePasskey: boolean }): boolean {
  return r.approvalsRequired === 1 && !isHighRisk(r.approvalsRequired) && !r.requirePasskey;
}
