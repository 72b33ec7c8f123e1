/**
 * The domain's own words for a gated call and its task. Wire shapes (JSON-RPC, _meta keys) are built from these
 * only in lib/mcp.
 */

/** The authenticated caller of the MCP endpoint: an agent acting on behalf of a user. */
export type Principal = {
  agentId: string;
  agentName: string;
  userId: string;
  userName: string;
  /** What policy reads of the user (read at authentication; absent in principals made by hand, then read when needed). */
  userEmail?: string;
  userRole?: string;
  userGroups?: string[];
};

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

export type Disposition = "approved-executed" | "denied-not-executed" | "execution-error" | "outcome-unknown";

/** What a tool call produced, in domain terms. `text` always says whether the tool ran. */
export type ToolOutcome = {
  text: string;
  isError: boolean;
  structured?: Record<string, unknown>;
  /** The content blocks as another server gave them (an upstream tool's result); `text` is used when absent. */
  content?: unknown[];
  /** Set on every result of an approval task (never on a call that needed no approval). */
  disposition?: Disposition;
};

/** A task as its creator may see it. Contains nothing from the approval backend and no reviewer identity. */
export type TaskView = {
  taskId: string;
  status: TaskStatus;
  /** Server-authored, sanitized text for the model. */
  statusMessage?: string;
  createdAt: Date;
  lastUpdatedAt: Date;
  /** Retention from createdAt; null means unlimited. */
  ttlMs: number | null;
  pollIntervalMs: number;
  /** Non-terminal and denied for now: the SEP-2643 envelope with remediation "available" applies. */
  pending: boolean;
  /** Present when status is completed. */
  result?: ToolOutcome;
  /** Present when status is failed (a JSON-RPC error object). */
  error?: { code: number; message: string };
  /** Present when status is input_required: the outstanding questions, answered with tasks/update. */
  inputRequests?: Record<string, InputQuestion>;
};

/** One form-mode question: a message and a flat JSON Schema object of primitive fields. */
export type InputQuestion = { message: string; requestedSchema: Record<string, unknown> };

/** What `callTool` decided for one tools/call. */
export type CallOutcome =
  /** The tool ran at once (allowed), or the call was refused without a task (plain denial, bad input). */
  | { kind: "result"; outcome: ToolOutcome }
  /** A requestable denial for a tasks-capable client: the durable task that now tracks it. */
  | { kind: "task"; task: TaskView; modelMessage: string }
  /** A requestable denial for a client that did not declare the tasks extension: the degraded path. */
  | { kind: "approval-required"; outcome: ToolOutcome }
  /** The rule needs submission input (justification, ticket) before anything is submitted: ask, then retry. */
  | { kind: "input-required"; key: string; question: InputQuestion };
