/**
 * Countersign as an approval gateway in front of @modelcontextprotocol/server-filesystem (a server no one here
 * wrote), started by Countersign over stdio on a scratch folder. Agents call it through Countersign's /mcp with a
 * real MCP client: reading is allowed; write_file, edit_file and move_file into protected/ need an SRE approval,
 * also when the path reaches protected/ by ".." or a symbolic link.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { closeUpstreams, upstreamPid } from "../lib/gateway/connections";
import { acceptToolChange, discoverServer, setSummaryTemplate } from "../lib/gateway/discover";
import { snapshotDigest, type ToolSnapshot } from "../lib/gateway/source";
import { listUpstreams, saveUpstream } from "../lib/gateway/servers";
import { call, getTaskRpc, OPS_BOT, REVISION, serveRoute, textOf } from "../lib/mcp/testing";
import { decide } from "../lib/tasks/decide";
import { requestIdOf, resetDb, userId } from "./support/db";
import { addPolicies, alive, until } from "./support/gateway";

const FS_SERVER = path.resolve("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const DISPOSITION = "io.modelcontextprotocol/tool-approval-disposition";
const WRITES = ["filesystem__write_file", "filesystem__edit_file", "filesystem__move_file"];

const POLICY = `
@id("filesystem-tools")
permit (principal, action in [Action::"filesystem__read_text_file", Action::"filesystem__list_directory",
  Action::"filesystem__write_file", Action::"filesystem__edit_file", Action::"filesystem__move_file",
  Action::"filesystem__read_multiple_files"], resource);

@id("filesystem-vault-reads")
@reason("Reading vault/ needs an SRE approval.")
@approvers("sre")
@quorum("1")
forbid (principal, action == Action::"filesystem__read_multiple_files", resource)
when { resource.paths_within.contains("vault") };

@id("filesystem-protected-writes")
@reason("Writes under protected/ need an SRE approval.")
@approvers("sre")
@quorum("1")
forbid (principal, action in [Action::"filesystem__write_file", Action::"filesystem__edit_file"], resource)
when { resource.path == "protected" || resource.path like "protected/*" };

@id("filesystem-protected-moves")
@reason("Moves into or out of protected/ need an SRE approval.")
@approvers("sre")
@quorum("1")
forbid (principal, action == Action::"filesystem__move_file", resource)
when { resource.destination like "protected/*" || resource.source like "protected/*" };
`;

let base: string;
let root: string;
let route: Awaited<ReturnType<typeof serveRoute>>;
let agent: Client;

async function approveAsSre(taskId: string): Promise<void> {
  const r = await decide({ requestId: await requestIdOf(taskId), reviewerId: await userId("sasha.sre@countersign.test"), decision: "approve" }, new Date());
  expect(r.ok).toBe(true);
}

const gated = async (tool: string, args: Record<string, unknown>) => {
  const r = await call(tool, args, { token: OPS_BOT });
  expect(r.body.result, JSON.stringify(r.body)).toMatchObject({ resultType: "task", status: "working" });
  return r.body.result.taskId as string;
};

beforeAll(async () => {
  process.env.COUNTERSIGN_POLL_INTERVAL_MS = "20";
  base = await fs.mkdtemp(path.join(os.tmpdir(), "cs-gateway-fs-"));
  root = await fs.realpath(base);
  await fs.mkdir(path.join(root, "protected"));
  await fs.mkdir(path.join(root, "open"));
  await fs.writeFile(path.join(root, "open", "readme.txt"), "hello from the scratch folder\n");
  await fs.writeFile(path.join(root, "protected", "config.txt"), "mode = safe\n");
  await fs.symlink(path.join(root, "protected"), path.join(root, "open", "shortcut"));
  await fs.mkdir(path.join(root, "vault"));
  await fs.writeFile(path.join(root, "vault", "key.txt"), "vault key\n");
  await fs.symlink(path.join(root, "vault"), path.join(root, "open", "back-door"));
  await resetDb();
  const now = new Date();
  await saveUpstream(
    { name: "filesystem", transport: "stdio", command: process.execPath, args: [FS_SERVER, root], env: { FS_DEMO_SECRET: "not-for-agents" }, pathArgs: ["path", "paths", "source", "destination"], root },
    "user:admin",
    now,
  );
  const report = await discoverServer("filesystem", now);
  expect(report.added).toEqual(expect.arrayContaining(["read_text_file", "write_file", "edit_file", "move_file"]));
  await addPolicies(POLICY);
  route = await serveRoute();
  agent = new Client({ name: "gateway-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: REVISION } } });
  await agent.connect(new StreamableHTTPClientTransport(route.url, { authProvider: { token: async () => OPS_BOT } }));
});

afterAll(async () => {
  delete process.env.COUNTERSIGN_POLL_INTERVAL_MS;
  await agent?.close().catch(() => {});
  await route?.close();
  await closeUpstreams();
  await fs.rm(base, { recursive: true, force: true });
});

describe("gateway in front of server-filesystem over stdio", () => {
  it("lists the upstream's tools as <server>__<tool>, filtered by policy for the agent", async () => {
    const { tools } = await agent.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["filesystem__read_text_file", ...WRITES, "deploy_service"]));
    // Tools no policy may ever permit this agent are not shown (search_files is not in the policy).
    expect(names).not.toContain("filesystem__search_files");
    const write = tools.find((t) => t.name === "filesystem__write_file")!;
    expect(write.description).toMatch(/^filesystem: Create a new file/);
    expect(write.inputSchema).toMatchObject({ type: "object", required: ["path", "content"] });
  });

  it("forwards an allowed call at once and returns the upstream's result as it gave it, audited with the argument digest", async () => {
    const r = await agent.callTool({ name: "filesystem__read_text_file", arguments: { path: "open/readme.txt" } });
    expect(r.isError).toBeFalsy();
    expect(textOf(r as never)).toBe("hello from the scratch folder\n");
    expect(r.structuredContent).toEqual({ content: "hello from the scratch folder\n" });
    const audit = await db().auditEvent.findFirst({ where: { type: "call.executed" }, orderBy: { seq: "desc" } });
    expect(audit?.data).toMatchObject({ tool: "filesystem__read_text_file", argumentsDigest: expect.stringMatching(/^sha256:/) });
  });

  it("refuses arguments that do not fit the upstream's JSON Schema before anything is forwarded", async () => {
    const r = await agent.callTool({ name: "filesystem__write_file", arguments: { path: "open/x.txt" } });
    expect(r.isError).toBe(true);
    expect(textOf(r as never)).toMatch(/Invalid arguments for filesystem__write_file: .*content.*The tool did not run/);
    await expect(fs.stat(path.join(root, "open", "x.txt"))).rejects.toThrow();
  });

  it("an upstream tool error is returned as the upstream gave it (isError)", async () => {
    const r = await agent.callTool({ name: "filesystem__read_text_file", arguments: { path: "open/missing.txt" } });
    expect(r.isError).toBe(true);
    expect(textOf(r as never)).toMatch(/ENOENT/);
  });

  it("a write outside protected/ is allowed and written at once", async () => {
    const r = await agent.callTool({ name: "filesystem__write_file", arguments: { path: "open/notes.txt", content: "free" } });
    expect(r.isError, textOf(r as never)).toBeFalsy();
    expect(await fs.readFile(path.join(root, "open", "notes.txt"), "utf8")).toBe("free");
  });

  it("a write into protected/ becomes a task; after an SRE approval it is written exactly once and the agent reads approved-executed", async () => {
    const taskId = await gated("filesystem__write_file", { path: "protected/release.txt", content: "v2" });
    await expect(fs.stat(path.join(root, "protected", "release.txt"))).rejects.toThrow();
    const task = await db().task.findUniqueOrThrow({ where: { id: taskId } });
    expect(task).toMatchObject({ resourceType: "upstream-path", resourceId: "protected/release.txt" });
    const request = await db().approvalRequest.findFirstOrThrow({ where: { id: task.handle! } });
    expect(JSON.stringify(request)).toContain("filesystem: write_file on protected/release.txt");
    await approveAsSre(taskId);
    const done = (await getTaskRpc(taskId, { token: OPS_BOT })).body.result;
    expect(done).toMatchObject({ status: "completed", result: { isError: false } });
    expect(done.result._meta[DISPOSITION]).toBe("approved-executed");
    expect(await fs.readFile(path.join(root, "protected", "release.txt"), "utf8")).toBe("v2");
    // Polling again does not run it again.
    await fs.writeFile(path.join(root, "protected", "release.txt"), "changed by someone else");
    const again = (await getTaskRpc(taskId, { token: OPS_BOT })).body.result;
    expect(again.result._meta[DISPOSITION]).toBe("approved-executed");
    expect(await fs.readFile(path.join(root, "protected", "release.txt"), "utf8")).toBe("changed by someone else");
    expect(await db().auditEvent.count({ where: { taskId, type: "execution.completed" } })).toBe(1);
  });

  it("a path that reaches protected/ by .. or by a symbolic link needs the approval too", async () => {
    for (const p of ["open/../protected/a.txt", path.join(root, "open", "..", "protected", "b.txt"), "open/shortcut/c.txt"]) {
      const taskId = await gated("filesystem__write_file", { path: p, content: "x" });
      const t = await db().task.findUniqueOrThrow({ where: { id: taskId } });
      expect(t.resourceId).toMatch(/^protected\/[abc]\.txt$/);
    }
    await gated("filesystem__edit_file", { path: "open/shortcut/config.txt", edits: [{ oldText: "safe", newText: "unsafe" }] });
    await gated("filesystem__move_file", { source: "open/readme.txt", destination: "open/shortcut/readme.txt" });
    expect(await fs.readdir(path.join(root, "protected"))).toEqual(["config.txt", "release.txt"]);
    expect(await fs.readFile(path.join(root, "protected", "config.txt"), "utf8")).toBe("mode = safe\n");
  });

  it("a path that leaves the server's folder is refused before anything is forwarded", async () => {
    const r = await agent.callTool({ name: "filesystem__write_file", arguments: { path: "../escape.txt", content: "x" } });
    expect(r.isError).toBe(true);
    expect(textOf(r as never)).toMatch(/outside the server's folder.*did not run/);
  });

  it("a per-tool summary template is what reviewers read", async () => {
    await setSummaryTemplate("filesystem", "move_file", "move {source} to {destination}", "user:admin", new Date());
    const taskId = await gated("filesystem__move_file", { source: "open/notes.txt", destination: "protected/notes.txt" });
    const request = await db().approvalRequest.findFirstOrThrow({ where: { id: await requestIdOf(taskId) } });
    expect(JSON.stringify(request)).toContain("filesystem: move open/notes.txt to protected/notes.txt");
  });

  it("a list of paths is judged path by path as resolved: one that reaches vault/ by a symbolic link makes the call a task; the upstream receives the resolved paths", async () => {
    const open = await agent.callTool({ name: "filesystem__read_multiple_files", arguments: { paths: ["open/readme.txt", "./open//readme.txt"] } });
    expect(open.isError, textOf(open as never)).toBeFalsy();
    // What the upstream was sent, and echoes back, is the resolved absolute path.
    expect(textOf(open as never)).toContain(`${path.join(root, "open", "readme.txt")}:\nhello from the scratch folder`);
    const taskId = await gated("filesystem__read_multiple_files", { paths: ["open/readme.txt", "open/back-door/key.txt"] });
    const task = await db().task.findUniqueOrThrow({ where: { id: taskId } });
    expect(task).toMatchObject({ resourceType: "upstream-path", resourceId: '["open/readme.txt","vault/key.txt"]' });
    await approveAsSre(taskId);
    const done = (await getTaskRpc(taskId, { token: OPS_BOT })).body.result;
    expect(done.result._meta[DISPOSITION]).toBe("approved-executed");
    expect(JSON.stringify(done.result.content)).toContain(`${path.join(root, "vault", "key.txt")}:\\nvault key`);
  });

  it("a tool that changed upstream is held out of tools/list and refused until an admin accepts it; a pending approval of the old tool does not execute", async () => {
    // What was accepted differs from what the upstream lists now (a "rug pull" between two discoveries).
    const row = await db().upstreamTool.findFirstOrThrow({ where: { name: "write_file" } });
    const older: ToolSnapshot = { ...(row.accepted as ToolSnapshot), description: "Write a file." };
    await db().upstreamTool.update({ where: { id: row.id }, data: { accepted: older as never, acceptedDigest: snapshotDigest(older), updatedAt: new Date() } });
    const pending = await gated("filesystem__write_file", { path: "protected/held.txt", content: "old approval" });

    const report = await discoverServer("filesystem", new Date());
    expect(report.changed).toEqual(["write_file"]);
    const { tools } = await agent.listTools();
    expect(tools.map((t) => t.name)).not.toContain("filesystem__write_file");
    const refused = await agent.callTool({ name: "filesystem__write_file", arguments: { path: "open/z.txt", content: "x" } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused as never)).toMatch(/changed upstream .* awaits an admin's review; the tool did not run/);

    await approveAsSre(pending);
    const denied = (await getTaskRpc(pending, { token: OPS_BOT })).body.result;
    expect(denied.result._meta[DISPOSITION]).toBe("denied-not-executed");
    await expect(fs.stat(path.join(root, "protected", "held.txt"))).rejects.toThrow();

    const held = await db().upstreamTool.findFirstOrThrow({ where: { name: "write_file" } });
    await acceptToolChange("filesystem", "write_file", held.observedDigest!, "user:admin", new Date());
    expect((await agent.listTools()).tools.map((t) => t.name)).toContain("filesystem__write_file");
    const ok = await agent.callTool({ name: "filesystem__write_file", arguments: { path: "open/z.txt", content: "x" } });
    expect(ok.isError, textOf(ok as never)).toBeFalsy();
    const types = (await db().auditEvent.findMany({ where: { type: { startsWith: "upstream.tool-" } } })).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["upstream.tool-changed", "upstream.tool-accepted"]));
  });

  it("the stdio environment and its values are never shown: the view names the variables only", async () => {
    const [view] = await listUpstreams();
    expect(view).toMatchObject({ name: "filesystem", envNames: ["FS_DEMO_SECRET"], health: "up" });
    expect(JSON.stringify(view)).not.toContain("not-for-agents");
    const audit = await db().auditEvent.findMany();
    expect(JSON.stringify(audit)).not.toContain("not-for-agents");
    const stored = await db().upstreamServer.findFirstOrThrow();
    expect(stored.env).toMatch(/^cs1\./);
  });

  it("a supervised upstream that exits is restarted with backoff and used again; close() stops it", async () => {
    const server = await db().upstreamServer.findFirstOrThrow({ where: { name: "filesystem" } });
    const first = (await upstreamPid(server.id))!;
    expect(alive(first)).toBe(true);
    process.kill(first, "SIGKILL");
    await until("the restarted upstream", async () => {
      const pid = await upstreamPid(server.id);
      return pid !== null && pid !== first && alive(pid) ? pid : undefined;
    });
    const r = await agent.callTool({ name: "filesystem__read_text_file", arguments: { path: "protected/config.txt" } });
    expect(textOf(r as never)).toBe("mode = safe\n");
    const second = (await upstreamPid(server.id))!;
    await closeUpstreams();
    await until("the upstream process to stop", () => !alive(second));
  });
});

describe("defaults from annotations, written as ordinary policy", () => {
  it("allows readOnlyHint tools and makes destructiveHint tools requestable by the named group; the rest is left to policy", async () => {
    const { applyAnnotationDefaults } = await import("../lib/gateway/defaults");
    const { currentDocument } = await import("../lib/policy/store");
    const set = await applyAnnotationDefaults("filesystem", { approvers: "sre" }, "user:admin", new Date());
    expect(set).toEqual(expect.arrayContaining(["filesystem__search_files", "filesystem__write_file"]));
    const doc = await currentDocument();
    expect(doc.body.defaults.tools["filesystem__search_files"]).toBe("allow");
    expect(doc.body.defaults.tools["filesystem__move_file"]).toMatchObject({ requestable: { approvers: "sre" } });
    expect(doc.body.defaults.tools).not.toHaveProperty("filesystem__create_directory");
    // search_files had no policy: it is now allowed by its default and shown.
    const r = await call("filesystem__search_files", { path: "open", pattern: "*.txt" }, { token: OPS_BOT });
    expect(r.body.result.isError, JSON.stringify(r.body)).toBe(false);
  });
});
