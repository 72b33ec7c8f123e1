/**
 * Task fixtures of the official MCP conformance suite (@modelcontextprotocol/conformance, tasks-* scenarios),
 * served ONLY when the server runs in conformance mode (COUNTERSIGN_CONFORMANCE=1; see registry.ts).
 *
 * They are ordinary Countersign tools: every call is evaluated by policy (rules seeded by lib/mcp/conformance),
 * a requestable denial opens a real approval task through lib/tasks, and an automatic resolver (a reviewer
 * account of its own, lib/mcp/conformance/resolver.ts) decides it through the same review and execution path as
 * a human. What differs per fixture is only how the resolver decides:
 *   slow_compute       approves once `seconds` have passed; cancellable until then
 *   failing_job        approves; the tool then fails (completed, execution-error)
 *   protocol_error_job makes the approval backend report a failure (failed, -32603, before any claim)
 *   confirm_delete     asks one in-task question (input_required), approves when confirmed
 *   multi_input        asks two questions at once; approves when both are answered
 *   greet_later        approves at once (the task behind test_tool_with_task's MRTR round)
 * None has a side effect outside its result text.
 */
import { z } from "zod";
import { ToolError, type ToolDef } from "./types";

const FIXTURE = { fixture: "conformance" } as const;

function fixture<A>(def: Omit<ToolDef<A>, "mappingVersion" | "resource" | "summary" | "policyResource"> & { summary?: (a: A) => string }): ToolDef<A> {
  return {
    mappingVersion: 1,
    policyResource: { entity: "Fixture", shape: { fixture: { type: "String" } } },
    async resource() {
      return { type: "fixture", id: def.name, properties: { ...FIXTURE } };
    },
    summary: (a: A) => def.summary?.(a) ?? `Conformance fixture ${def.name}`,
    ...def,
  } as ToolDef<A>;
}

const slowCompute = fixture({
  name: "slow_compute",
  title: "Slow compute (conformance fixture)",
  description: "Computes a result after `seconds` seconds. Runs as an approval task that an automatic resolver approves when the time is up.",
  schema: z.object({ seconds: z.number().int().min(0).max(3600).default(0), label: z.string().max(100).optional() }).strict(),
  summary: (a) => `slow_compute ${a.label ?? ""} (${a.seconds} s)`,
  async run(a) {
    return { text: `Computed ${a.label ?? "the result"} after ${a.seconds} s.`, structured: { label: a.label ?? null, seconds: a.seconds } };
  },
});

const failingJob = fixture({
  name: "failing_job",
  title: "Failing job (conformance fixture)",
  description: "A job that always fails when it runs. Needs the tasks extension.",
  schema: z.object({}).passthrough(),
  async run() {
    throw new ToolError("This job always fails (conformance fixture).");
  },
});

const protocolErrorJob = fixture({
  name: "protocol_error_job",
  title: "Protocol error job (conformance fixture)",
  description: "A job whose approval backend fails before anything runs, so the task ends failed with a JSON-RPC error.",
  schema: z.object({}).passthrough(),
  async run() {
    throw new ToolError("protocol_error_job never reaches execution.");
  },
});

const confirmDelete = fixture({
  name: "confirm_delete",
  title: "Confirm delete (conformance fixture)",
  description: "Asks the requester to confirm, in the task, before it is approved. Deletes nothing.",
  schema: z.object({ filename: z.string().min(1).max(200) }).strict(),
  summary: (a) => `confirm_delete ${a.filename}`,
  async run(a) {
    return { text: `Confirmed the deletion of ${a.filename} (conformance fixture: nothing was deleted).`, structured: { filename: a.filename } };
  },
});

const multiInput = fixture({
  name: "multi_input",
  title: "Multi input (conformance fixture)",
  description: "Asks two in-task questions at once; runs once both are answered.",
  schema: z.object({}).passthrough(),
  async run() {
    return { text: "Both answers were received." };
  },
});

const greetLater = fixture({
  name: "greet_later",
  title: "Greet later (conformance fixture)",
  description: "Greets someone by name, as an approval task that is approved at once.",
  schema: z.object({ name: z.string().min(1).max(100) }).strict(),
  async run(a) {
    return { text: `Hello, ${a.name}!` };
  },
});

export const CONFORMANCE_FIXTURE_TOOLS: ToolDef[] = [slowCompute, failingJob, protocolErrorJob, confirmDelete, multiInput, greetLater];

export function conformanceMode(): boolean {
  return process.env.COUNTERSIGN_CONFORMANCE === "1";
}
