/**
 * The approval-backend contract of the SEP, kept narrow so an external service (for example an AuthZEN ARAP
 * Access Request Service) could be bound in place of the built-in reviewer inbox:
 *  - submit under a caller-supplied idempotency key: a repeat with an equivalent body returns the same handle,
 *    a different body under the same key is refused;
 *  - find a handle by key (crash recovery);
 *  - status of a handle: pending, approved (with the approval material used as re-evaluation input), denied,
 *    expired, cancelled, failed;
 *  - cancel (optional);
 *  - submit inside Countersign's own transaction (optional: only a backend that shares its database).
 * Nothing of this crosses the MCP wire.
 */
import type { Tx } from "../audit/append";
import type { ApprovalInput, Requirements } from "../policy/evaluate";

export type SubmissionBody = {
  taskId: string;
  generation: number;
  tool: string;
  arguments: unknown;
  argumentsDigest: string;
  summary: string;
  requester: { userId: string; userName: string; agentId: string; agentName: string };
  policy: { ruleId: string; ruleKey: string; version: number; reason: string };
  requirements: Requirements;
  /** Submission input collected before submission (MRTR): untrusted text, shown to reviewers as text only. */
  input?: SubmissionInput;
  /**
   * How the tool described itself when the call was made (an upstream server's words: untrusted, shown to
   * reviewers as text only), so a reviewer reads what the tool claims to do beside what it is asked to do.
   */
  toolInfo?: ToolInfo;
};

export type ToolInfo = { title: string; description: string };

export type SubmissionInput = { justification: string; ticket?: string };

export type BackendState = "pending" | "approved" | "denied" | "expired" | "cancelled" | "failed";

export type BackendStatus = {
  state: BackendState;
  /** Present when approved: only approvals from reviewers still eligible now. */
  approval?: ApprovalInput;
  deadline: Date;
  /** Why a pending request may never resolve (for example too few eligible reviewers). */
  note?: string;
};

export class IdempotencyConflict extends Error {
  constructor() {
    super("A different request body was already submitted under this idempotency key.");
  }
}

/** A durable handle and the request deadline the backend holds the request open until. */
export type Submitted = { handle: string; deadline: Date };

export interface ApprovalBackend {
  submit(key: string, body: SubmissionBody, now: Date): Promise<Submitted>;
  /**
   * Optional, for a backend that keeps its requests in Countersign's own database: the same submission, written
   * inside the caller's transaction, so the intent, the request and the task commit together or not at all (no
   * step between them for a crash to fall into). A backend elsewhere leaves it out, and creation takes the
   * crash-consistent path of intent, submit, bind.
   */
  submitWithin?(tx: Tx, key: string, body: SubmissionBody, now: Date): Promise<Submitted>;
  find(key: string): Promise<Submitted | null>;
  status(handle: string, now: Date): Promise<BackendStatus>;
  cancel?(handle: string, now: Date): Promise<void>;
}
