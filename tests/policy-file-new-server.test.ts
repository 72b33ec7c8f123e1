/**
 * One import registers an upstream server and the policy on its tools: the file's new servers are listed from the
 * servers themselves (a real @modelcontextprotocol/server-filesystem over stdio, started for the purpose and
 * stopped again) before the file is compiled, so policies, test cases and summaries naming their tools are checked
 * by the same import, and `npm run policy:test` checks them with no database. A server that cannot be reached
 * explains the unknown tools and nothing is saved.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { closeUpstreams } from "../lib/gateway/connections";
import { exportPolicyFile, importPolicyFile, previewPolicyFile } from "../lib/policy/file";
import { callTool } from "../lib/tasks/call";
import { principal, resetDb } from "./support/db";
import { policyTestCli } from "./support/policy-test-cli";

const root = path.resolve(import.meta.dirname, "..");
const FS_SERVER = path.join(root, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");

const POLICIES = `
@id("docs-writes")
permit (principal, action == Action::"docs__write_file", resource);

@id("docs-protected-writes")
@reason("Writes under protected/ in docs need an SRE approval.")
@approvers("sre")
@quorum("1")
forbid (principal, action == Action::"docs__write_file", resource)
when { resource.path == "protected" || resource.path like "protected/*" };
`;

let folder: string;
let dir: string;

beforeAll(async () => {
  folder = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "cs-new-server-")));
  await fs.mkdir(path.join(folder, "protected"));
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "cs-new-server-file-"));
  await resetDb();
});
afterAll(async () => {
  await closeUpstreams();
  await fs.rm(folder, { recursive: true, force: true });
  await fs.rm(dir, { recursive: true, force: true });
});

/** The exported policy with a server added, its policies, and a test case that maps its resource from the call. */
async function fileWith(server: Record<string, unknown>, extraPolicies: string): Promise<string> {
  const doc = YAML.parse(await exportPolicyFile()) as Record<string, any>;
  doc.servers = [...(doc.servers ?? []), server];
  doc.policies = `${doc.policies}\n${extraPolicies}`;
  doc.tests = [
    ...doc.tests,
    {
      name: "a write under protected/ in docs needs an SRE",
      call: { tool: "docs__write_file", arguments: { path: "protected/plan.txt", content: "x" } },
      principal: { agent: "ops-bot", user: "otto.ops@countersign.test", role: "requester", groups: [] },
      expect: "requestable",
      by: "docs-protected-writes",
    },
  ];
  return YAML.stringify(doc);
}

const docsServer = () => ({
  name: "docs",
  transport: "stdio",
  command: process.execPath,
  args: [FS_SERVER, folder],
  root: folder,
  path_arguments: ["path"],
  summaries: { write_file: "write {path} in docs" },
});

async function admin(): Promise<string> {
  return (await db().user.findUniqueOrThrow({ where: { email: "admin@countersign.test" } })).id;
}

describe("a policy file that registers a new server and the policy on its tools", () => {
  it("is checked by npm run policy:test with no database: the server's tools are listed and its case mapped and passed", async () => {
    const f = path.join(dir, "docs.yaml");
    await fs.writeFile(f, await fileWith(docsServer(), POLICIES));
    const r = await policyTestCli(f);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^server docs: \d+ tools listed$/m);
    expect(r.stdout).toContain("PASS  a write under protected/ in docs needs an SRE: requestable by docs-protected-writes");
    expect(r.code).toBe(0);
  });

  it("is saved by one import: the server registered and discovered, its summary set, its policy in force", async () => {
    const text = await fileWith(docsServer(), POLICIES);
    const preview = await previewPolicyFile(text);
    expect(preview.ok, JSON.stringify(preview)).toBe(true);
    const r = await importPolicyFile(text, await admin(), new Date());
    expect(r.ok, JSON.stringify(r)).toBe(true);
    if (!r.ok) return;
    expect(r.diff.servers.added).toEqual(["docs"]);
    expect(r.discovery).toEqual([expect.stringMatching(/^docs: \d+ new, 0 changed, 0 removed, 0 unchanged tools$/)]);
    const tool = await db().upstreamTool.findFirstOrThrow({ where: { name: "write_file", server: { name: "docs" } } });
    expect(tool.summaryTemplate).toBe("write {path} in docs");
    // Set once the server's tools were found, in the name of the admin who imported.
    const summarySet = await db().auditEvent.findFirstOrThrow({ where: { type: "upstream.summary-template" } });
    expect(summarySet.actor).toBe(`user:${await admin()}`);

    const ops = await principal("ops-bot");
    const open = await callTool(ops, "docs__write_file", { path: "notes.txt", content: "hello" }, { tasks: true }, new Date());
    expect(open.kind, JSON.stringify(open)).toBe("result");
    expect(await fs.readFile(path.join(folder, "notes.txt"), "utf8")).toBe("hello");
    const gated = await callTool(ops, "docs__write_file", { path: "protected/plan.txt", content: "x" }, { tasks: true }, new Date());
    expect(gated.kind, JSON.stringify(gated)).toBe("task");
    await expect(fs.stat(path.join(folder, "protected", "plan.txt"))).rejects.toThrow();
  });

  it("a new server the file disables is not asked for its tools; an enabled one that cannot be reached is reported, quoting only a failure of its own class", async () => {
    const withServer = async (server: Record<string, unknown>) => {
      const doc = YAML.parse(await exportPolicyFile()) as Record<string, any>;
      doc.servers = [...(doc.servers ?? []), server];
      const f = path.join(dir, `${server.name}.yaml`);
      await fs.writeFile(f, YAML.stringify(doc));
      return policyTestCli(f);
    };
    const unreachable = { transport: "streamable-http", url: "http://127.0.0.1:9/mcp" };
    const disabled = await withServer({ name: "off", ...unreachable, enabled: false });
    expect(disabled.stderr).toBe("");
    expect(disabled.stdout).toMatch(/^server off: 0 tools listed$/m);
    expect(disabled.code).toBe(0);
    const enabled = await withServer({ name: "on", ...unreachable });
    expect(enabled.stderr).toMatch(/on: its tools could not be listed \(Version negotiation probe failed: fetch failed\)/);
    // A failure without a class of its own (here the operating system's, naming the path) is not quoted.
    const missing = await withServer({ name: "missing", transport: "stdio", command: "/nonexistent/countersign-test-command" });
    expect(missing.stderr).toMatch(/missing: its tools could not be listed \(the server could not be reached\)/);
    expect(missing.stderr).not.toContain("ENOENT");
  });

  it("a new server that cannot be reached and that nothing names is saved, the import saying it was not discovered and why", async () => {
    const doc = YAML.parse(await exportPolicyFile()) as Record<string, any>;
    doc.servers = [...(doc.servers ?? []), { name: "missing", transport: "stdio", command: "/nonexistent/countersign-test-command" }];
    const r = await importPolicyFile(YAML.stringify(doc), await admin(), new Date());
    expect(r.ok, JSON.stringify(r)).toBe(true);
    if (!r.ok) return;
    expect(r.diff.servers.added).toEqual(["missing"]);
    // The gateway's own words for it, not the operating system's (which name the path).
    expect(r.discovery).toEqual(["missing: not discovered (The upstream server could not be reached.)"]);
    expect(await db().upstreamServer.findUnique({ where: { name: "missing" } })).not.toBeNull();
  });

  it("naming the tools of a server that cannot be reached is refused with the reason beside the problem, saving nothing", async () => {
    const before = await db().policyDocument.count();
    const text = await fileWith(
      { name: "gone", transport: "streamable-http", url: "http://127.0.0.1:9/mcp" },
      POLICIES.replaceAll("docs__write_file", "gone__write_file").replaceAll("docs-", "gone-"),
    ).then((t) => t.replaceAll("docs__write_file", "gone__write_file").replace("by: docs-protected-writes", "by: gone-protected-writes"));
    const r = await importPolicyFile(text, await admin(), new Date());
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const messages = r.problems.map((p) => p.message);
    expect(messages.some((m) => m.includes("gone__write_file")), messages.join("\n")).toBe(true);
    expect(messages).toContainEqual(expect.stringMatching(/^servers\[\d+\]: gone: its tools could not be listed \(.*\), so nothing in this file may name them yet$/));
    // At the server's entry in the file.
    const entry = text.split("\n").findIndex((l) => l === "  - name: gone") + 1;
    expect(r.problems.find((p) => p.message.includes("its tools could not be listed"))).toMatchObject({ line: entry, column: 5 });
    expect(await db().upstreamServer.findUnique({ where: { name: "gone" } })).toBeNull();
    expect(await db().policyDocument.count()).toBe(before);
  });
});
