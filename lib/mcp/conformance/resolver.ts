/**
 * The automatic resolver of conformance mode: a reviewer account of its own ("Conformance Resolver", group
 * conformance-resolver) that decides the task fixtures' approval requests through the same verbs a human uses
 * (reviewRequest, askQuestions) or, for protocol_error_job, makes the backend report a failure. It is driven by
 * the agent's own polls: tasks/get calls `resolveFixtureTask` before reading the task, so the fixtures settle on
 * the suite's schedule without a background process. The task then moves on exactly like any other task
 * (re-evaluation, claim, execution, disposition).
 */
import { db } from "../../db/client";
import { reviewRequest } from "../../approvals/review";
import { askQuestions } from "../../tasks/ask-questions";
import { recordBackendFailure } from "../../tasks/backend-failure";
import type { InputQuestion } from "../../tasks/types";
import { isTerminal } from "../../tasks/view";
import { RESOLVER_EMAIL } from "./seed";

const FIXTURES = new Set(["slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "greet_later"]);

const CONFIRM_SCHEMA = {
  type: "object",
  properties: {
    confirm: { type: "boolean", title: "Confirm", description: "true to go ahead" },
    name: { type: "string", title: "Name", maxLength: 100 },
  },
  required: ["confirm"],
};

export async function resolveFixtureTask(taskId: string, agentId: string, now: Date): Promise<void> {
  const t = await db().task.findFirst({ where: { id: taskId, agentId } });
  if (!t || !FIXTURES.has(t.tool) || isTerminal(t) || !t.handle) return;
  const req = await db().approvalRequest.findUnique({ where: { id: t.handle } });
  if (!req || req.status !== "pending") return;
  const resolver = await db().user.findUnique({ where: { email: RESOLVER_EMAIL } });
  if (!resolver) return;
  const approve = () => reviewRequest({ requestId: req.id, reviewerId: resolver.id, decision: "approve" }, now);
  const deny = (comment: string) => reviewRequest({ requestId: req.id, reviewerId: resolver.id, decision: "deny", comment }, now);
  const args = (t.arguments ?? {}) as Record<string, unknown>;

  switch (t.tool) {
    case "slow_compute": {
      const seconds = typeof args.seconds === "number" ? args.seconds : 0;
      if (now.getTime() - t.createdAt.getTime() >= seconds * 1000) await approve();
      return;
    }
    case "failing_job":
    case "greet_later":
      await approve();
      return;
    case "protocol_error_job":
      await recordBackendFailure(req.id, "The approval backend failed (conformance fixture).", now);
      return;
    case "confirm_delete":
    case "multi_input": {
      if (t.status !== "working") return; // still waiting for the agent's answers
      const asked = await db().clarification.findMany({ where: { taskId } });
      if (asked.length === 0) {
        const questions: Record<string, InputQuestion> =
          t.tool === "confirm_delete"
            ? { confirm: { message: `Confirm the deletion of ${String(args.filename ?? "the file")}?`, requestedSchema: CONFIRM_SCHEMA } }
            : {
                first: { message: "First question: confirm to continue.", requestedSchema: CONFIRM_SCHEMA },
                second: { message: "Second question: confirm to continue.", requestedSchema: CONFIRM_SCHEMA },
              };
        await askQuestions({ requestId: req.id, reviewerId: resolver.id, questions }, now);
        return;
      }
      if (asked.some((c) => !c.answeredAt)) return;
      const confirmed = asked.every((c) => {
        const a = c.answer as { action?: string; content?: { confirm?: unknown } } | null;
        return a?.action === "accept" && a.content?.confirm === true;
      });
      if (confirmed) await approve();
      else await deny("The requester did not confirm.");
      return;
    }
  }
}
