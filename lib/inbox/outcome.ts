/**
 * What a reviewer reads about where an approval request stands, in plain words. Pure: built from the request's
 * status and its task's status and disposition, both after a decision and on every later visit.
 */

export type OutcomeTone = "pending" | "success" | "danger" | "neutral" | "warning";

export type Outcome = { tone: OutcomeTone; title: string; detail?: string };

/** What "the tool ran" means for the tools a reviewer sees most. */
const RAN: Record<string, string> = {
  issue_refund: "the refund was issued",
  wire_transfer: "the transfer was sent",
  delete_path: "the path was deleted",
  deploy_service: "the deployment ran",
};

export function describeOutcome(input: {
  tool: string;
  requestStatus: string;
  taskStatus?: string | null;
  disposition?: string | null;
  approvals: number;
  approvalsRequired: number;
  /** The tool's own words about what happened, if it ran. */
  resultText?: string | null;
  /** Why the re-check after approval refused the call, as stored (e.g. "Order O-2289 has EUR 30.00 left ..."). */
  denialDetail?: string | null;
}): Outcome {
  const { tool, requestStatus, taskStatus, disposition, approvals, approvalsRequired, resultText, denialDetail } = input;
  const ran = RAN[tool] ?? "the tool ran";
  const detail = resultText ?? undefined;
  switch (requestStatus) {
    case "pending": {
      const left = Math.max(approvalsRequired - approvals, 1);
      return {
        tone: "pending",
        title:
          approvals > 0
            ? `Waiting for another approver (${approvals} of ${approvalsRequired} approvals)`
            : `Waiting for approval (${left === 1 ? "1 approval" : `${left} approvals`} needed)`,
      };
    }
    case "approved":
      switch (disposition) {
        case "approved-executed":
          return { tone: "success", title: `Approved — ${ran}`, detail };
        case "execution-error":
          return { tone: "danger", title: "Approved — but the tool failed when it ran", detail };
        case "outcome-unknown":
          return { tone: "warning", title: "Approved — the tool was started but its outcome is unknown", detail };
        case "denied-not-executed":
          return denialDetail
            ? { tone: "warning", title: `Approved, but it did not run: ${denialDetail}`, detail }
            : { tone: "warning", title: "Approved, but the re-check refused it — the tool did not run", detail };
        default:
          if (taskStatus === "cancelled") return { tone: "neutral", title: "Approved, but the agent cancelled — the tool did not run" };
          if (taskStatus === "failed") return { tone: "danger", title: "Approved, but the task failed", detail };
          return { tone: "pending", title: "Approved — running the tool" };
      }
    case "denied":
      return { tone: "danger", title: "Denied — the tool did not run" };
    case "expired":
      return { tone: "neutral", title: "Expired — nobody decided in time; the tool did not run" };
    case "cancelled":
      return { tone: "neutral", title: "Cancelled by the agent — the tool did not run" };
    case "failed":
      return { tone: "danger", title: "The approval request failed — the tool did not run" };
    default:
      return { tone: "neutral", title: `Status: ${requestStatus}` };
  }
}

/**
 * The status badge beside a request's title: an approved request whose call did not run, or failed, is not shown
 * as "approved" (green) but as what happened.
 */
export function badgeStatus(requestStatus: string, disposition?: string | null): string {
  if (requestStatus !== "approved") return requestStatus;
  if (disposition === "denied-not-executed") return "not run";
  if (disposition === "execution-error") return "failed";
  if (disposition === "outcome-unknown") return "outcome unknown";
  return requestStatus;
}

/** What the decide action answers the request page with. */
export type DecisionState =
  | { status: "idle" }
  | { status: "error"; message: string; field?: "comment" | "confirm" }
  | { status: "done"; decision: "approve" | "deny"; outcome: Outcome };

/** What the ask-the-requester action answers with. */
export type AskState = { status: "idle" } | { status: "error"; message: string } | { status: "done"; message: string };
