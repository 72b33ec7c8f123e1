/**
 * One call decided by a compiled policy, for the policy's unit tests: a plain requester's agent, no history, a
 * fixed instant far from any clock change.
 */
import { evaluate, type CompiledPolicy, type Decision, type ResourceView } from "../../lib/policy/evaluate";

export const CALL_TIME = new Date("2100-01-01T00:00:00Z");

export function decideCall(
  policy: CompiledPolicy,
  call: { tool: string; properties: ResourceView["properties"]; args?: unknown; agentName?: string },
): Decision {
  return evaluate(
    {
      subject: { agentId: "a1", agentName: call.agentName ?? "bot", user: { id: "u1", email: "u@countersign.test", name: "U", role: "requester", groups: [] } },
      action: { name: call.tool },
      resource: { type: call.tool, id: "r1", properties: call.properties },
      context: { args: call.args ?? {}, history: {} },
    },
    policy,
    CALL_TIME,
  );
}
