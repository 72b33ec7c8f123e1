/** The words of every completed approval task. The body says whether the tool ran, did not run, or may have run. */
import type { Disposition, ToolOutcome } from "../tasks/types";

type Completed = ToolOutcome & { disposition: Disposition };

export function executed(text: string, structured?: Record<string, unknown>): Completed {
  return { text: `Approved and executed once: ${text}`, isError: false, structured, disposition: "approved-executed" };
}

export type DenialCause = "denied" | "expired" | "approval-expired" | "policy" | "principal" | "binding" | "chain-exhausted";

const DENIAL_WORDS: Record<DenialCause, string> = {
  denied: "The approval request was denied.",
  expired: "The approval request expired before anyone decided it.",
  "approval-expired": "The approval expired before the call could be executed.",
  policy: "Re-evaluation of the current policy after approval denied the call.",
  principal: "The requesting agent or its user is no longer authorized.",
  binding: "The tool, its arguments or the resource changed while the request was pending, so the approval no longer applies.",
  "chain-exhausted": "The call still needed approval after the maximum number of approval requests.",
};

/** `detail`: the real reason when one is known (the tool's own words, the policy's reason), kept in the result. */
export function deniedNotExecuted(cause: DenialCause, detail?: string): Completed {
  const why = detail ? ` ${detail.trim().replace(/([^.!?])$/, "$1.")}` : "";
  return {
    text: `${DENIAL_WORDS[cause]}${why} The tool did not run, so no side effect occurred. Do not retry this task.`,
    isError: true,
    disposition: "denied-not-executed",
  };
}

export function executionError(message: string): Completed {
  return {
    text: `Approved, and the tool ran but failed: ${message} A side effect may have occurred; do not retry automatically.`,
    isError: true,
    disposition: "execution-error",
  };
}

export function outcomeUnknown(): Completed {
  return {
    text: "Approved and claimed for execution, but the outcome could not be confirmed. The tool may have run; do not retry automatically.",
    isError: true,
    disposition: "outcome-unknown",
  };
}
