/**
 * The per-request server registers what the request can reach: a 2026-07-28 tools/call only the tool its Mcp-Name
 * header names (the SDK has checked the header against the body), anything else the whole catalog with the
 * degraded-path tools. The calls themselves are proved on the wire (endpoint.test.ts, wire.test.ts).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { resetDb } from "../../tests/support/db";
import { DEMO_AGENTS } from "../db/seed";
import { agentTokenVerifier } from "./auth";
import { createServer } from "./server";

beforeEach(resetDb);

async function registered(era: "modern" | "legacy", headers: Record<string, string>): Promise<string[]> {
  const authInfo = await agentTokenVerifier.verifyAccessToken(DEMO_AGENTS[1].token);
  const server = await createServer({ era, authInfo, requestInfo: new Request("http://localhost/mcp", { method: "POST", headers }) });
  // McpServer keeps its registered tools in a private record; what it lists and dispatches comes from there.
  return Object.keys((server as unknown as { _registeredTools: Record<string, unknown> })._registeredTools).sort();
}

describe("createServer", () => {
  it("registers only the called tool for a 2026-07-28 tools/call", async () => {
    expect(await registered("modern", { "mcp-method": "tools/call", "mcp-name": "deploy_service" })).toEqual(["deploy_service"]);
  });

  it("registers the whole catalog and the degraded-path tools for a name not in the catalog, tools/list, or a 2025-era request", async () => {
    const all = await registered("modern", { "mcp-method": "tools/list" });
    expect(all).toEqual(expect.arrayContaining(["deploy_service", "issue_refund", "request_access", "get_request_status"]));
    expect(await registered("modern", { "mcp-method": "tools/call", "mcp-name": "request_access" })).toEqual(all);
    expect(await registered("modern", { "mcp-method": "tools/call", "mcp-name": "no_such_tool" })).toEqual(all);
    expect(await registered("modern", { "mcp-method": "tools/call" })).toEqual(all);
    expect(await registered("legacy", { "mcp-method": "tools/call", "mcp-name": "deploy_service" })).toEqual(all);
  });

  it("registers no tools for the tasks methods", async () => {
    expect(await registered("modern", { "mcp-method": "tasks/get", "mcp-name": "t-1" })).toEqual([]);
  });
});
