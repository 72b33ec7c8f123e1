import type { z } from "zod";
import type { ResourceView } from "../policy/evaluate";
import type { ResourceAttr } from "../policy/schema";

/** A tool's own refusal or failure, with words fit for the caller. */
export class ToolError extends Error {}

/** The call's arguments do not fit the tool: refused before policy, nothing ran. */
export class ToolInputError extends ToolError {}

export type ToolRunContext = {
  taskId: string | null;
  now: Date;
  /**
   * The resource policy decided on (for an approval task, the one it was created and re-evaluated for). A tool
   * whose mapping reads changing state maps again when it runs and refuses unless it still names this resource.
   */
  resource: { type: string; id: string };
  /** The execution deadline of an approval task: a tool that calls out bounds its call by it. */
  deadline?: Date;
};

/** Another approval request waiting on the same resource (read by lib/inbox/facts.ts, given to a tool's `facts`). */
export type PendingOnResource = { requestId: string; summary: string; amountMinor: number | null; currency: string | null };

/** The resource as it is now, in the words a reviewer reads before deciding (a tool's optional `facts` hook). */
export type ToolFacts = {
  /** Label and value pairs, e.g. { label: "Left to refund", value: "EUR 30.00" }. */
  facts: { label: string; value: string }[];
  /** The same in one short line, for the inbox row. */
  line: string;
  /** Set when the call can no longer run as asked: why, e.g. "Order O-2289 has EUR 30.00 left to refund ...". */
  blocked?: string;
  /** Set when it can run, but not together with every other pending request on the resource. */
  caution?: string;
  /** What approving does, when it needs the resource's state to say (the order's currency). */
  effect?: ToolEffect;
};

/** What approving does, in words: `does` completes "approving ... now", `button` completes "Approve and ...". */
export type ToolEffect = { does: string; button: string };

/** What a run produced. `content` and `isError` are set by tools that return a result as another server gave it. */
export type ToolRunResult = { text: string; structured?: Record<string, unknown>; content?: unknown[]; isError?: boolean };

export type ToolDef<A = any> = {
  name: string;
  title: string;
  description: string;
  schema: z.ZodType<A>;
  /** The JSON Schema agents see, when the tool has one of its own (the zod schema then validates against it). */
  inputSchema?: Record<string, unknown>;
  /** More of the tool's contract that toolVersion covers (an upstream tool's accepted snapshot digest). */
  contract?: string;
  /**
   * Set while the tool may not be called (an upstream tool whose description, schema or annotations changed and
   * await an admin's review): the words of the refusal. Such a tool is left out of tools/list.
   */
  held?: string;
  /** Bumped when the mapping from arguments to the policy's resource changes meaning. */
  mappingVersion: number;
  /**
   * Maps a call onto the AuthZEN resource, reading the current state (re-read at execution, never replayed): what
   * the tool will act on, canonical (one id for every spelling of the same target; ambiguous spellings refused
   * with ToolInputError), so policy never judges the string the agent typed.
   */
  resource(args: A): Promise<ResourceView>;
  /**
   * The resource as policy sees it: its Cedar entity type and the types of the mapping's properties (money as
   * { minor, currency } built from two properties). Conditions in policy are validated against this shape.
   */
  policyResource: { entity: string; shape: Record<string, ResourceAttr> };
  /** One line a reviewer reads, e.g. "EUR 180.00 refund on order O-2289". */
  summary(args: A, resource: ResourceView): string;
  /**
   * Throws ToolBusyError when the tool cannot be reached right now (an upstream server that is down): checked
   * before an approved call is claimed, so the call is retried within the approval's validity, never lost.
   */
  ready?(): Promise<void>;
  /**
   * The resource as it is now, read for a reviewer (never for policy): what decides whether to approve. `pending`
   * are the other approval requests waiting on the same resource. Tools without state to show (gateway tools) have none.
   */
  facts?(args: A, ctx: { now: Date; pending: PendingOnResource[] }): Promise<ToolFacts>;
  /** What approving this call does, in words. Without it a reviewer reads "runs <tool> with these arguments". */
  effect?(args: A): ToolEffect;
  /** Performs the side effect once; returns what happened in words. Throws ToolError on failure. */
  run(args: A, ctx: ToolRunContext): Promise<ToolRunResult>;
};

/** A transient hold (for example the resource is locked): re-evaluation says "retry later", not "deny". */
export class ToolBusyError extends ToolError {
  constructor(message: string, readonly retryAfterMs?: number) {
    super(message);
  }
}

/**
 * The request may have reached the tool and no answer came back (a transport failure or timeout after sending):
 * the outcome is unknown and the call is never retried automatically.
 */
export class ToolOutcomeUnknownError extends ToolError {}
