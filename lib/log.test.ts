/** The logger on its own: JSON lines, the level from COUNTERSIGN_LOG_LEVEL, the request id, accepted ids. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { captureLog } from "../tests/support/log";
import { logFailure, logInfo, logLevel, logRequest, logWarn, setLogDestination } from "./log";
import { acceptedRequestId, runWithRequestId, withRequestId } from "./request-context";

afterEach(() => {
  vi.unstubAllEnvs();
  setLogDestination();
});

describe("server log", () => {
  it("writes one JSON object per line, with level, time and message", () => {
    const log = captureLog();
    logInfo("started", { port: 3000 });
    logWarn("careful");
    logFailure("sweep", new TypeError("secret text"));
    expect(log.lines()).toEqual([
      expect.objectContaining({ level: "info", msg: "started", port: 3000, time: expect.any(String) }),
      expect.objectContaining({ level: "warn", msg: "careful" }),
      expect.objectContaining({ level: "error", msg: "sweep failed", errorClass: "TypeError" }),
    ]);
    expect(log.raw.join("\n")).not.toContain("secret text");
    expect(log.lines().every((l) => !("requestId" in l))).toBe(true);
  });

  it("takes its level from COUNTERSIGN_LOG_LEVEL (default info; an unknown value is info)", () => {
    expect(logLevel("")).toBe("info");
    expect(logLevel("WARN")).toBe("warn");
    expect(logLevel("loud")).toBe("info");
    vi.stubEnv("COUNTERSIGN_LOG_LEVEL", "error");
    const lines: string[] = [];
    setLogDestination({ write: (s) => void lines.push(s) });
    logInfo("quiet");
    logWarn("quiet too");
    logFailure("x", new Error("y"));
    expect(lines.map((l) => JSON.parse(l).level)).toEqual(["error"]);
  });

  it("puts the current request's id on every line logged while it is handled, and echoes it", async () => {
    const log = captureLog();
    const res = await withRequestId(new Request("http://localhost/x", { headers: { "x-request-id": "req-0123456789" } }), async () => {
      logInfo("inside");
      await new Promise((r) => setImmediate(r));
      logRequest("mcp", "POST", 200, 1.23);
      return new Response("ok");
    });
    logInfo("outside");
    expect(res.headers.get("x-request-id")).toBe("req-0123456789");
    expect(log.lines().map((l) => [l.msg, l.requestId])).toEqual([
      ["inside", "req-0123456789"],
      ["request handled", "req-0123456789"],
      ["outside", undefined],
    ]);
    runWithRequestId("job-0123456789", () => logInfo("job"));
    expect(log.lines().at(-1)).toMatchObject({ requestId: "job-0123456789" });
  });

  it("keeps an incoming request id only when it is 8-64 plain characters", () => {
    expect(acceptedRequestId("0f8fad5b-d9cb-469f-a165-70867728950e")).toBe("0f8fad5b-d9cb-469f-a165-70867728950e");
    expect(acceptedRequestId("abc.DEF_123-xyz")).toBe("abc.DEF_123-xyz");
    for (const bad of [null, "", "short", "a".repeat(65), "has space 12345", 'quote"12345678', "line\n12345678", "-leading-dash-1234", "ünïcode-12345678"]) {
      const got = acceptedRequestId(bad);
      expect(got).not.toBe(bad);
      expect(got).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it("answers with a copy when the response's headers cannot be changed", async () => {
    const res = await withRequestId(new Request("http://localhost/x"), async () => Response.redirect("http://localhost/y", 302));
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("http://localhost/y");
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
