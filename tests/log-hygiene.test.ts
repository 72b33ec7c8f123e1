/**
 * SEP "Durable sensitive state": arguments are kept out of ordinary logs. On every failure path the server log
 * says where and the error's class: never a tool error's message, an argument, a stack frame or a file path.
 */
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../lib/db/client";
import { errorClass, logFailure } from "../lib/log";
import { call } from "../lib/mcp/testing";
import { callTool } from "../lib/tasks/call";
import { decide } from "../lib/tasks/decide";
import { getTool } from "../lib/tools/catalog";
import { requestIdOf, principal, resetDb, userId } from "./support/db";

// A fixed clock in the future: the claim checks the approval against the real clock as well.
import { T0 } from "./support/proof";
const MARKER = "mk-7f3a9c-secret-memo";

let lines: string[] = [];
function captureLogs() {
  lines = [];
  for (const m of ["error", "warn", "log", "info", "debug"] as const) {
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
      lines.push(args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}\n${a.stack}` : typeof a === "string" ? a : JSON.stringify(a))).join(" "));
    });
  }
}

function expectCleanLogs() {
  const root = path.resolve(".");
  for (const l of lines) {
    expect(l).not.toContain(MARKER);
    expect(l).not.toContain(root);
    expect(l).not.toMatch(/\n\s+at |node_modules|\.ts:\d+|file:\/\//);
  }
}

beforeEach(async () => {
  await resetDb();
  captureLogs();
});
afterEach(() => vi.restoreAllMocks());

describe("nothing from arguments or tool errors reaches ordinary logs", () => {
  it("a tool's unexpected error is logged as its class only, never its message or stack", async () => {
    const tool = getTool("wire_transfer")!;
    vi.spyOn(tool, "run").mockImplementation(async (args: { memo?: string }) => {
      const e = new TypeError(`cannot post ${args.memo} from ${path.resolve("lib/tools/wire-transfer.ts")}:40`);
      (e as { code?: string }).code = `E ${args.memo}`;
      throw e;
    });
    const out = await callTool(await principal("ops-bot"), "wire_transfer", { to: "acct-log", amount: 30_001, memo: `pay ${MARKER}` }, { tasks: true }, T0);
    if (out.kind !== "task") throw new Error("expected a task");
    const requestId = await requestIdOf(out.task.taskId);
    await decide({ requestId, reviewerId: await userId("tara.treasury@countersign.test"), decision: "approve" }, T0);
    await decide({ requestId, reviewerId: await userId("theo.treasury@countersign.test"), decision: "approve" }, T0);
    const t = await db().task.findUniqueOrThrow({ where: { id: out.task.taskId } });
    expect(t.disposition).toBe("execution-error");
    expect(JSON.stringify(t.result)).not.toContain(MARKER);
    expect(lines.some((l) => l.includes("TypeError"))).toBe(true);
    expectCleanLogs();
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
    expect(lines[0]).toBe("[countersign] tools/call wire_transfer failed: RangeError");
    expectCleanLogs();
  });
});
