/**
 * SEP "Durable sensitive state": arguments are kept out of ordinary logs. On every failure path the server log
 * says where and the error's class: never a tool error's message, an argument, a stack frame or a file path.
 */
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../lib/db/client";
import { errorClass, logFailure } from "../lib/log";
import { OPS_BOT, call } from "../lib/mcp/testing";
import { callTool } from "../lib/tasks/call";
import { decide } from "../lib/tasks/decide";
import { getTool } from "../lib/tools/catalog";
import { ToolError } from "../lib/tools/types";
import { requestIdOf, principal, resetDb, userId } from "./support/db";
import { captureLog } from "./support/log";

// A fixed clock in the future: the claim checks the approval against the real clock as well.
import { T0 } from "./support/proof";
const MARKER = "mk-7f3a9c-secret-memo";

// Everything written to the console and to the server log (JSON lines).
let lines: string[] = [];
let log: ReturnType<typeof captureLog>;
function captureLogs() {
  lines = [];
  for (const m of ["error", "warn", "log", "info", "debug"] as const) {
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
      lines.push(args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}\n${a.stack}` : typeof a === "string" ? a : JSON.stringify(a))).join(" "));
    });
  }
  log = captureLog();
  lines = log.raw;
}

function expectCleanLogs() {
  const root = path.resolve(".");
  for (const l of lines) {
    expect(l).not.toContain(MARKER);
    expect(l).not.toContain(root);
    expect(l).not.toMatch(/\n\s+at |node_modules|\.ts:\d+|file:\/\//);
  }
}

/** A transfer large enough to need two treasury approvals, approved by both (which runs it); its task row after. */
async function approvedTransfer(args: Record<string, unknown>) {
  const out = await callTool(await principal("ops-bot"), "wire_transfer", args, { tasks: true }, T0);
  if (out.kind !== "task") throw new Error("expected a task");
  const requestId = await requestIdOf(out.task.taskId);
  await decide({ requestId, reviewerId: await userId("tara.treasury@countersign.test"), decision: "approve" }, T0);
  await decide({ requestId, reviewerId: await userId("theo.treasury@countersign.test"), decision: "approve" }, T0);
  return db().task.findUniqueOrThrow({ where: { id: out.task.taskId } });
}

beforeEach(async () => {
  await resetDb();
  captureLogs();
});
afterEach(() => {
  vi.restoreAllMocks();
  log.restore();
});

describe("nothing from arguments or tool errors reaches ordinary logs", () => {
  it("a tool's unexpected error is logged as its class only, never its message or stack", async () => {
    const tool = getTool("wire_transfer")!;
    vi.spyOn(tool, "run").mockImplementation(async (args: { memo?: string }) => {
      const e = new TypeError(`cannot post ${args.memo} from ${path.resolve("lib/tools/wire-transfer.ts")}:40`);
      (e as { code?: string }).code = `E ${args.memo}`;
      throw e;
    });
    const t = await approvedTransfer({ to: "acct-log", amount: 30_001, memo: `pay ${MARKER}` });
    expect(t.disposition).toBe("execution-error");
    expect(JSON.stringify(t.result)).not.toContain(MARKER);
    // The agent reads general words; the log says where (the tool and the task) and the class.
    expect(JSON.stringify(t.result)).toContain("an internal error occurred.");
    expect(log.lines()).toContainEqual(expect.objectContaining({ level: "error", where: `tool wire_transfer for task ${t.id}`, errorClass: "TypeError" }));
    expectCleanLogs();
  });

  it("a tool's own refusal (a ToolError) is the tool's words to the agent and no failure in the log", async () => {
    vi.spyOn(getTool("wire_transfer")!, "run").mockRejectedValue(new ToolError("The receiving account is closed."));
    const t = await approvedTransfer({ to: "acct-closed", amount: 30_001 });
    expect(t.disposition).toBe("execution-error");
    expect(JSON.stringify(t.result)).toContain("The receiving account is closed.");
    expect(log.lines().filter((l) => l.level === "error")).toEqual([]);
  });

  it("text arguments with a NUL byte or a lone surrogate, sent on the wire, leave no argument text, stack frame or path in the log", async () => {
    for (const args of [
      { to: `acct\u0000${MARKER}`, amount: 30_001 },
      { to: "acct-x", amount: 30_001, memo: `\ud800${MARKER}` },
      { to: "acct-y", amount: 30_001, memo: `\udfff\u0000${MARKER}` },
    ]) {
      const r = await call("wire_transfer", args);
      expect(r.status).toBeLessThan(500);
      expect(r.text).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
    }
    expect(await db().task.count()).toBe(0);
    expectCleanLogs();
  });

  it("logFailure states where and the error's class, even when the error's name, message and code carry request text", () => {
    const e = new RangeError(`bad ${MARKER} at ${path.resolve("lib/x.ts")}:1:2`);
    e.name = `Evil ${MARKER}`;
    (e as { code?: string }).code = MARKER;
    logFailure("tools/call wire_transfer\n  at /forged/frame.ts:1", e);
    expect(errorClass(e)).toBe("RangeError");
    expect(errorClass(Object.assign(new Error("x"), { code: "P2002" }))).toBe("Error P2002");
    expect(errorClass("a string")).toBe("string");
    expect(lines).toHaveLength(1);
    expect(log.lines()[0]).toMatchObject({ level: "error", msg: "tools/call wire_transfer failed", where: "tools/call wire_transfer", errorClass: "RangeError" });
    expectCleanLogs();
  });
});

describe("server log lines of a request: JSON, with its request id, without argument values or tokens", () => {
  const BAD_TOKEN = "cs_mk-7f3a9c-secret-token-0000000000000000";

  it("a call whose tool fails unexpectedly, and a call with a bad token: every line is JSON, carries the response's x-request-id, and holds no argument or token", async () => {
    const tool = getTool("wire_transfer")!;
    vi.spyOn(tool, "run").mockImplementation(async (args: { memo?: string }) => {
      throw new TypeError(`cannot post ${args.memo}`);
    });
    // ops-bot's small transfer runs at once (no approval), so the tool's failure happens inside the request.
    const ok = await call("wire_transfer", { to: "acct-log", amount: 10, memo: `password=${MARKER}` }, { token: OPS_BOT, headers: { "x-request-id": "trace-abc-12345678" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-request-id")).toBe("trace-abc-12345678");
    const refused = await call("wire_transfer", { to: "acct-log", amount: 10, memo: MARKER }, { token: BAD_TOKEN });
    expect(refused.status).toBe(401);
    const refusedId = refused.headers.get("x-request-id")!;
    expect(refusedId).toMatch(/^[0-9a-f-]{36}$/);

    const parsed = log.lines();
    const first = parsed.filter((l) => l.requestId === "trace-abc-12345678");
    expect(first.map((l) => l.msg)).toEqual(expect.arrayContaining([expect.stringMatching(/failed$/), "request handled"]));
    expect(first.find((l) => l.level === "error")).toMatchObject({ errorClass: "TypeError" });
    expect(parsed.filter((l) => l.requestId === refusedId)).toEqual([expect.objectContaining({ level: "warn", msg: "request refused", status: 401, route: "mcp" })]);
    // Every line of the server log belongs to one of the two requests.
    expect(parsed.every((l) => l.requestId === "trace-abc-12345678" || l.requestId === refusedId)).toBe(true);
    for (const l of lines) {
      expect(l).not.toContain("secret-token");
      expect(l).not.toContain("acct-log");
      expect(l).not.toContain("password");
    }
    expectCleanLogs();
  });

  it("an incoming x-request-id that does not fit the pattern is replaced, never echoed or logged", async () => {
    for (const forged of ["short", `x\n{"level":"error"}`, "a".repeat(65), `id-${MARKER} extra`]) {
      const r = await call("issue_refund", { order_id: "O-1021" }, { headers: { "x-request-id": forged.replace(/\n/g, " ") } });
      const id = r.headers.get("x-request-id")!;
      expect(id).not.toBe(forged);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(log.lines().filter((l) => l.msg === "request handled")).toHaveLength(4);
    expectCleanLogs();
  });
});
