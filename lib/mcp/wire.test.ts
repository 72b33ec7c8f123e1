import { CallToolResultV2Schema, GetTaskResultV2Schema, isCreateTaskResultV2, isDetailedTaskV2 } from "@modelcontextprotocol/ext-tasks/core/v2";
import { describe, expect, it } from "vitest";
import type { TaskView, ToolOutcome } from "../tasks/types";
import {
  AUTHORIZATION_KEY,
  DISPOSITION_KEY,
  MODEL_IMMEDIATE_RESPONSE_KEY,
  createTaskResultToWire,
  declaresFormElicitation,
  declaresTasksExtension,
  getTaskResultToWire,
  toolResultToWire,
} from "./wire";

const created = new Date("2026-06-02T10:30:00Z");
const later = new Date("2026-06-03T09:05:00Z");

function task(over: Partial<TaskView> = {}): TaskView {
  return {
    taskId: "786512e2-9e0d-44bd-8f29-789f320fe840",
    status: "working",
    statusMessage: "Transfers over $25,000 require treasury approval.",
    createdAt: created,
    lastUpdatedAt: created,
    ttlMs: 604800000,
    pollIntervalMs: 15000,
    pending: true,
    ...over,
  };
}

function completed(result: ToolOutcome): TaskView {
  return task({ status: "completed", statusMessage: undefined, lastUpdatedAt: later, pending: false, result });
}

const PENDING = { reason: "insufficient_authorization", remediation: "available", remediationHints: [{ type: "task" }] };
const UNAVAILABLE = { reason: "insufficient_authorization", remediation: "unavailable" };

describe("CreateTaskResult (a requestable denial returns a task)", () => {
  it("is the flat result of the SEP's end-to-end example, field for field", () => {
    const wire = createTaskResultToWire(task(), "This transfer is pending treasury approval. You can continue other work and check back.");
    expect(JSON.parse(JSON.stringify(wire))).toEqual({
      resultType: "task",
      taskId: "786512e2-9e0d-44bd-8f29-789f320fe840",
      status: "working",
      statusMessage: "Transfers over $25,000 require treasury approval.",
      createdAt: "2026-06-02T10:30:00.000Z",
      lastUpdatedAt: "2026-06-02T10:30:00.000Z",
      ttlMs: 604800000,
      pollIntervalMs: 15000,
      _meta: {
        "io.modelcontextprotocol/authorization": PENDING,
        "io.modelcontextprotocol/model-immediate-response":
          "This transfer is pending treasury approval. You can continue other work and check back.",
      },
    });
  });

  it("parses as a tasks-extension CreateTaskResult (no task wrapper, no result, no error)", () => {
    const wire = createTaskResultToWire(task(), "pending");
    expect(isCreateTaskResultV2(JSON.parse(JSON.stringify(wire)))).toBe(true);
    expect(wire).not.toHaveProperty("task");
    expect(wire).not.toHaveProperty("result");
    expect(wire).not.toHaveProperty("error");
  });

  it("keeps an unlimited retention as ttlMs null", () => {
    expect(createTaskResultToWire(task({ ttlMs: null }), "m").ttlMs).toBeNull();
  });

  it("omits the pending envelope for a task that is no longer denied (claimed, executing)", () => {
    const wire = createTaskResultToWire(task({ pending: false }), "m");
    expect(wire._meta).not.toHaveProperty(AUTHORIZATION_KEY);
    expect(wire._meta[MODEL_IMMEDIATE_RESPONSE_KEY]).toBe("m");
  });
});

describe("tasks/get", () => {
  it("never carries resultType (the SDK stamps complete; task would be refused)", () => {
    for (const t of [task(), completed({ text: "done", isError: false, disposition: "approved-executed" })]) {
      expect(getTaskResultToWire(t)).not.toHaveProperty("resultType");
    }
  });

  it("repeats the authorization envelope while the task is pending", () => {
    const wire = getTaskResultToWire(task());
    expect(wire._meta).toEqual({ [AUTHORIZATION_KEY]: PENDING });
    expect(wire).not.toHaveProperty("result");
    expect(wire).not.toHaveProperty("error");
    expect(isDetailedTaskV2(JSON.parse(JSON.stringify(wire)))).toBe(true);
  });

  it("drops the envelope once the task is working but no longer denied", () => {
    expect(getTaskResultToWire(task({ pending: false }))).not.toHaveProperty("_meta");
  });

  it("inlines the completed result with the disposition in its _meta (the SEP's completed example)", () => {
    const wire = getTaskResultToWire(
      completed({ text: "Transfer of $50,000 to acct-991 completed.", isError: false, disposition: "approved-executed" }),
    );
    expect(JSON.parse(JSON.stringify(wire))).toEqual({
      taskId: "786512e2-9e0d-44bd-8f29-789f320fe840",
      status: "completed",
      createdAt: "2026-06-02T10:30:00.000Z",
      lastUpdatedAt: "2026-06-03T09:05:00.000Z",
      ttlMs: 604800000,
      pollIntervalMs: 15000,
      result: {
        resultType: "complete",
        content: [{ type: "text", text: "Transfer of $50,000 to acct-991 completed." }],
        isError: false,
        _meta: { "io.modelcontextprotocol/tool-approval-disposition": "approved-executed" },
      },
    });
    expect(isDetailedTaskV2(JSON.parse(JSON.stringify(wire)))).toBe(true);
  });

  it("marks a terminal denial with disposition denied-not-executed and remediation unavailable", () => {
    const wire = getTaskResultToWire(
      completed({ text: "The refund was denied by a reviewer; it did not run.", isError: true, disposition: "denied-not-executed" }),
    );
    expect(wire.result?.isError).toBe(true);
    expect(wire.result?._meta).toEqual({ [DISPOSITION_KEY]: "denied-not-executed", [AUTHORIZATION_KEY]: UNAVAILABLE });
    expect(wire).not.toHaveProperty("_meta");
  });

  it.each(["execution-error", "outcome-unknown"] as const)("never carries the envelope on %s", (disposition) => {
    const wire = getTaskResultToWire(completed({ text: "The tool ran and failed.", isError: true, disposition }));
    expect(wire.result?._meta).toEqual({ [DISPOSITION_KEY]: disposition });
    expect(wire).not.toHaveProperty("_meta");
  });

  it("carries structuredContent when the tool produced some", () => {
    const wire = getTaskResultToWire(
      completed({ text: "Refund R-1 issued.", isError: false, structured: { refund_id: "R-1" }, disposition: "approved-executed" }),
    );
    expect(wire.result?.structuredContent).toEqual({ refund_id: "R-1" });
  });

  it("reports a failed task with error {code, message} and no result", () => {
    const wire = getTaskResultToWire(
      task({ status: "failed", pending: false, error: { code: -32603, message: "Approval backend unavailable" } }),
    );
    expect(wire.error).toEqual({ code: -32603, message: "Approval backend unavailable" });
    expect(wire).not.toHaveProperty("result");
    expect(wire).not.toHaveProperty("_meta");
    expect(isDetailedTaskV2(JSON.parse(JSON.stringify(wire)))).toBe(true);
  });

  it("a completed task's inlined result carries resultType complete, as every 2026-07-28 result does", () => {
    for (const disposition of ["approved-executed", "denied-not-executed", "execution-error", "outcome-unknown"] as const) {
      const wire = getTaskResultToWire(completed({ text: "done", isError: disposition !== "approved-executed", disposition }));
      expect(wire.result?.resultType).toBe("complete");
      expect(CallToolResultV2Schema.safeParse(JSON.parse(JSON.stringify(wire.result))).success).toBe(true);
    }
  });

  it.each([
    ["working", task()],
    ["working, no longer denied", task({ pending: false })],
    ["input_required", task({ status: "input_required", inputRequests: { q: { message: "Which ticket?", requestedSchema: { type: "object", properties: { answer: { type: "string" } } } } } })],
    ["completed", completed({ text: "Refund R-1 issued.", isError: false, structured: { refund_id: "R-1" }, disposition: "approved-executed" })],
    ["completed, denied", completed({ text: "Denied; the tool did not run.", isError: true, disposition: "denied-not-executed" })],
    ["completed without a stored result", task({ status: "completed", pending: false })],
    ["failed", task({ status: "failed", pending: false, error: { code: -32603, message: "Approval backend unavailable" } })],
    ["failed without a stored error", task({ status: "failed", pending: false })],
    ["cancelled", task({ status: "cancelled", pending: false })],
  ])("%s: parses as the tasks extension's tasks/get result once the SDK stamps resultType", (_label, t) => {
    const wire = JSON.parse(JSON.stringify({ ...getTaskResultToWire(t), resultType: "complete" }));
    expect(GetTaskResultV2Schema.safeParse(wire).success).toBe(true);
    if (wire.status === "completed") expect(CallToolResultV2Schema.safeParse(wire.result).success).toBe(true);
  });

  it("a completed task without a stored result reads as outcome-unknown, never as executed or not executed", () => {
    const wire = getTaskResultToWire(task({ status: "completed", pending: false }));
    expect(wire.result).toMatchObject({ resultType: "complete", isError: true, _meta: { [DISPOSITION_KEY]: "outcome-unknown" } });
    expect(wire.result?.content[0].text).toMatch(/whether the tool ran is unknown/);
  });

  it("reports a cancelled task with neither result nor error nor envelope", () => {
    const wire = getTaskResultToWire(task({ status: "cancelled", pending: false }));
    expect(Object.keys(wire).sort()).toEqual(
      ["createdAt", "lastUpdatedAt", "pollIntervalMs", "status", "statusMessage", "taskId", "ttlMs"].sort(),
    );
  });
});

describe("ordinary tools/call results", () => {
  it("is a plain CallToolResult without _meta when the call needed no approval", () => {
    expect(toolResultToWire({ text: "Refund R-2 issued.", isError: false })).toEqual({
      content: [{ type: "text", text: "Refund R-2 issued." }],
      isError: false,
    });
  });

  it("keeps isError on a degraded approval-required answer", () => {
    const wire = toolResultToWire({ text: "This refund needs a support lead's approval; it did not run.", isError: true });
    expect(wire.isError).toBe(true);
    expect(wire).not.toHaveProperty("_meta");
  });
});

describe("per-request client capabilities", () => {
  it("recognises the tasks extension", () => {
    expect(declaresTasksExtension({ extensions: { "io.modelcontextprotocol/tasks": {} } })).toBe(true);
  });

  it.each([undefined, null, {}, { extensions: {} }, { extensions: { "io.modelcontextprotocol/tasks": true } }, { tasks: {} }])(
    "does not see it in %j",
    (caps) => {
      expect(declaresTasksExtension(caps)).toBe(false);
    },
  );
});

describe("input_required tasks (SEP-2663 inputRequests)", () => {
  it("lists each outstanding question as an embedded form-mode elicitation/create request, keyed as asked", () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };
    const wire = getTaskResultToWire(task({ status: "input_required", inputRequests: { clarification_1: { message: "Which ticket?", requestedSchema: schema } } }));
    expect(wire.inputRequests).toEqual({
      clarification_1: { method: "elicitation/create", params: { mode: "form", message: "Which ticket?", requestedSchema: schema } },
    });
    expect(isDetailedTaskV2(JSON.parse(JSON.stringify({ ...wire, resultType: "complete" })))).toBe(true);
    expect(wire._meta?.[AUTHORIZATION_KEY]).toEqual(PENDING);
  });

  it("carries no inputRequests on any other status", () => {
    expect(getTaskResultToWire(task())).not.toHaveProperty("inputRequests");
  });
});

describe("form elicitation in the per-request capabilities", () => {
  it.each([
    [{ elicitation: {} }, true],
    [{ elicitation: { form: {} } }, true],
    [{ elicitation: { form: {}, url: {} } }, true],
    [{ elicitation: { url: {} } }, false],
    [{}, false],
    [undefined, false],
  ])("%j -> %s", (caps, expected) => {
    expect(declaresFormElicitation(caps)).toBe(expected);
  });
});
