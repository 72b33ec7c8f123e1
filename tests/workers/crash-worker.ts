/**
 * Child process for tests/crash.test.ts. Run with COUNTERSIGN_FAULT set, it dies by SIGKILL at that fault point
 * (lib/faults.ts) in the middle of the operation; if it survives it prints one JSON line and exits 0.
 *
 *   node --import tsx tests/workers/crash-worker.ts call <agentName> <tool> <argsJson> <nowIso>
 *   node --import tsx tests/workers/crash-worker.ts advance <taskId> <nowIso>
 *   node --import tsx tests/workers/crash-worker.ts deliver-notifications <nowIso>
 *
 * With APPROVAL_BACKEND=apart the built-in inbox is bound as a backend outside Countersign's database would be
 * (no submitWithin), so creation takes the intent, submit, bind path that the after-intent and after-submit
 * faults cut.
 */
import { closeDb } from "../../lib/db/client";
import { DEMO_AGENTS } from "../../lib/db/seed";
import { authenticateAgent } from "../../lib/auth/agents";
import { advanceTask } from "../../lib/execution/advance";
import { deliverNotifications } from "../../lib/notify/deliver";
import { callTool } from "../../lib/tasks/call";
import { bindApprovalBackend, inboxBackend } from "../../lib/approvals/inbox-backend";

if (process.env.APPROVAL_BACKEND === "apart") bindApprovalBackend({ ...inboxBackend, submitWithin: undefined });

const [mode, ...rest] = process.argv.slice(2);
let out: unknown;
if (mode === "call") {
  const [agentName, tool, argsJson, nowIso] = rest;
  const agent = await authenticateAgent(DEMO_AGENTS.find((a) => a.name === agentName)!.token);
  if (!agent) throw new Error(`agent ${agentName} did not authenticate`);
  out = await callTool(agent, tool, JSON.parse(argsJson), { tasks: true }, new Date(nowIso));
} else if (mode === "advance") {
  const [taskId, nowIso] = rest;
  await advanceTask(taskId, new Date(nowIso));
  out = { advanced: taskId };
} else if (mode === "deliver-notifications") {
  out = await deliverNotifications(new Date(rest[0]), { limit: 1 });
} else {
  throw new Error(`unknown mode ${mode}`);
}
process.stdout.write(JSON.stringify({ survived: true, out }) + "\n");
await closeDb();
process.exit(0);
