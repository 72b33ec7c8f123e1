/**
 * Policy as code against the database: the current policy exports to one file that passes its own test cases and
 * imports back saving nothing new; an import saves, in one transaction, a version per changed or new rule key, a
 * retirement per removed rule, a document version and one audit event; a file import that fails leaves the current
 * version untouched, also when the failure is found late; concurrent imports and saves serialize. Saving a rule or
 * the document runs the document's test cases and refuses a version that breaks one. `npm run policy:test` runs a
 * file's cases from the command line, without a database.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { digest } from "../lib/canonical";
import { db } from "../lib/db/client";
import { describeDiff, exportPolicyFile, importPolicyFile, parsePolicyFile, checkPolicyFile, previewPolicyFile } from "../lib/policy/file";
import { recordSnapshots, setSummaryTemplate } from "../lib/gateway/discover";
import { connectionOf, saveUpstream } from "../lib/gateway/servers";
import { saveRuleVersion, RuleRejected } from "../lib/policy/save-rule";
import { currentDocument, currentRules, saveDocument } from "../lib/policy/store";
import { policyTools } from "../lib/tools/catalog";
import { callTool } from "../lib/tasks/call";
import { activeRuleFields, principal, resetDb, userId } from "./support/db";
import { edited } from "./support/edit";
import { policyTestCli } from "./support/policy-test-cli";
import { T0 } from "./support/proof";

const failAudit = vi.hoisted(() => ({ on: false }));
vi.mock("../lib/audit/append", async (importOriginal) => {
  const real = await importOriginal<typeof import("../lib/audit/append")>();
  return {
    ...real,
    appendAudit: async (tx: Parameters<typeof real.appendAudit>[0], input: Parameters<typeof real.appendAudit>[1]) => {
      if (failAudit.on && input.type === "policy.imported") throw new Error("the audit trail is unavailable");
      return real.appendAudit(tx, input);
    },
  };
});

beforeEach(async () => {
  failAudit.on = false;
  await resetDb();
});

/** Everything an import could write, and which version of each rule key and of the document is current. */
async function policyState() {
  const [rules, documents, audit, active, head] = await Promise.all([
    db().policyRule.count(),
    db().policyDocument.count(),
    db().auditEvent.count(),
    db().policyRule.findMany({ where: { active: true }, orderBy: { ruleKey: "asc" }, select: { ruleKey: true, version: true } }),
    db().policyDocument.findFirst({ orderBy: { version: "desc" }, select: { version: true } }),
  ]);
  return { rules, documents, audit, active: active.map((r) => `${r.ruleKey}@${r.version}`), document: head?.version ?? 0 };
}

async function admin() {
  return userId("admin@countersign.test");
}

describe("export and import of the whole policy", () => {
  it("the exported policy is stable, passes its own test cases, and importing it saves nothing new", async () => {
    const text = await exportPolicyFile();
    expect(await exportPolicyFile()).toBe(text);
    const parsed = parsePolicyFile(text);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const checked = await checkPolicyFile(parsed.file, policyTools());
    expect(checked.ok).toBe(true);
    expect(checked.outcomes.length).toBeGreaterThan(0);

    const before = await policyState();
    const r = await importPolicyFile(text, await admin(), T0);
    expect(r).toMatchObject({ ok: true, unchanged: true, versions: { rules: [], document: null } });
    expect(await policyState()).toEqual(before);
    expect(await db().auditEvent.count({ where: { type: "policy.imported" } })).toBe(0);
  });

  it("an import of rules alone: a retired rule's last version keeps that rule's own fields, and the document gets no version", async () => {
    const text = (await exportPolicyFile()).replace("    value: EUR 150.00\n", "    value: EUR 200.00\n").replace(/  - key: wire-over-1m\n(    .*\n)+?(?=  - key:)/, "");
    const retiring = await activeRuleFields("wire-over-1m");
    const before = await policyState();
    const r = await importPolicyFile(text, await admin(), T0);
    expect(r).toMatchObject({ ok: true, unchanged: false, versions: { document: null } });
    if (!r.ok) return;
    expect(r.diff.rules.removed).toEqual(["wire-over-1m"]);
    const retired = await db().policyRule.findFirstOrThrow({ where: { ruleKey: "wire-over-1m" }, orderBy: { version: "desc" } });
    expect(retired).toMatchObject({ ...retiring, version: 2, active: false });
    expect((await policyState()).documents).toBe(before.documents);
    // A file without servers leaves them alone, and its audit event says none were touched.
    const imported = await db().auditEvent.findFirstOrThrow({ where: { type: "policy.imported" } });
    expect(imported.data).toMatchObject({ servers: [] });
  });

  it("an import saves a version per changed or new rule key, retires removed rules, saves the document, and audits once", async () => {
    const actor = await admin();
    const text = (await exportPolicyFile())
      .replace("    value: EUR 150.00\n", "    value: EUR 200.00\n")
      .replace(/  - key: delete-prod\n(    .*\n)+?(?=  - key:)/, "")
      .replace("rules:\n", "rules:\n  - key: wire-any\n    tool: wire_transfer\n    description: Every transfer above USD 5,000,000 is refused\n    field: amount_cents\n    operator: gt\n    value: 500000000\n    effect: deny\n    reason: Transfers this large are not allowed.\n    active: true\n")
      .replace("time_zones:\n  - Europe/Berlin\n", "time_zones:\n  - Europe/Berlin\n  - America/New_York\n");
    const before = await policyState();
    const r = await importPolicyFile(text, actor, T0);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.diff.rules).toEqual({ added: ["wire-any"], changed: [{ key: "refund-over-limit", fields: ["value"] }], removed: ["delete-prod"] });
    expect(r.versions).toEqual({
      rules: [
        { ruleKey: "delete-prod", version: 2, previous: 1, active: false },
        { ruleKey: "refund-over-limit", version: 2, previous: 1, active: true },
        { ruleKey: "wire-any", version: 1, previous: null, active: true },
      ],
      document: { version: before.document + 1, previous: before.document },
    });
    const after = await policyState();
    expect(after.rules).toBe(before.rules + 3);
    expect(after.documents).toBe(before.documents + 1);
    expect(after.active).toEqual(["deploy-production@1", "refund-over-limit@2", "wire-any@1", "wire-over-1m@1", "wire-over-25k@1"]);
    expect((await currentRules("issue_refund"))[0]).toMatchObject({ value: "20000", currency: "EUR", createdBy: actor });
    expect((await currentDocument()).body.timeZones).toEqual(["Europe/Berlin", "America/New_York"]);
    expect((await db().policyDocument.findFirstOrThrow({ orderBy: { version: "desc" } })).note).toBe("Imported from a policy file.");
    const events = await db().auditEvent.findMany({ where: { type: "policy.imported" } });
    expect(events).toHaveLength(1);
    // The event names the versions and the file itself, by its digest.
    expect(events[0]).toMatchObject({ actor: `user:${actor}`, data: expect.objectContaining({ rules: r.versions.rules, document: r.versions.document, digest: digest(text) }) });
    // The retired rule no longer gates: deleting under prod/ is decided by the rest of the policy.
    expect(await exportPolicyFile()).not.toContain("delete-prod");
    // Importing the same file again saves nothing.
    const again = await importPolicyFile(text, actor, T0);
    expect(again).toMatchObject({ ok: true, unchanged: true });
    expect(await policyState()).toEqual(after);
  });

  it("into a database with no policy document yet, the imported document is version 1", async () => {
    const text = await exportPolicyFile();
    await db().policyDocument.deleteMany();
    const r = await importPolicyFile(text, await admin(), T0);
    expect(r).toMatchObject({ ok: true, unchanged: false, versions: { rules: [], document: { version: 1, previous: null } } });
    expect(await currentDocument()).toMatchObject({ version: 1 });
  });

  it("a file import that fails a test case leaves the current version untouched, and says which test at which line", async () => {
    const text = (await exportPolicyFile()).replace("    value: EUR 150.00\n", "    value: EUR 10.00\n");
    const before = await policyState();
    const r = await importPolicyFile(text, await admin(), T0);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems[0].message).toContain('the test "a refund within the limit runs at once" fails: expected allow, got requestable by rule:refund-over-limit');
    expect(r.problems[0].line).toBe(text.split("\n").findIndex((l) => l.includes("- name: a refund within the limit")) + 1);
    expect(await policyState()).toEqual(before);
  });

  it("a file import with a Cedar error or a broken file leaves the current version untouched", async () => {
    const good = await exportPolicyFile();
    const before = await policyState();
    const cedar = good.replace('principal.name == "support-bot"', "principal.nickname == 1");
    const r1 = await importPolicyFile(cedar, await admin(), T0);
    expect(r1.ok).toBe(false);
    if (!r1.ok) expect(r1.problems[0].line).toBe(cedar.split("\n").findIndex((l) => l.includes("principal.nickname")) + 1);
    const r2 = await importPolicyFile(good.replace("rules:\n", "rules: [\n"), await admin(), T0);
    expect(r2.ok).toBe(false);
    expect(await policyState()).toEqual(before);
  });

  it("a failure discovered late, after the rule versions were written inside the transaction, saves nothing", async () => {
    const text = (await exportPolicyFile()).replace("    value: EUR 150.00\n", "    value: EUR 200.00\n").replace("  - Europe/Berlin\n", "  - Europe/Berlin\n  - Asia/Tokyo\n");
    const before = await policyState();
    failAudit.on = true;
    await expect(importPolicyFile(text, await admin(), T0)).rejects.toThrow("the audit trail is unavailable");
    expect(await policyState()).toEqual(before);
    failAudit.on = false;
    // The guard above is what failed: the same import goes through once the audit trail is back.
    expect(await importPolicyFile(text, await admin(), T0)).toMatchObject({ ok: true, unchanged: false });
  });

  it("concurrent imports and rule saves serialize: each takes the next version, none is lost", async () => {
    const actor = await admin();
    const base = await exportPolicyFile();
    const files = ["160.00", "170.00", "180.00"].map((v) => base.replace("    value: EUR 150.00\n", `    value: EUR ${v}\n`));
    const fields = await activeRuleFields("refund-over-limit");
    const results = await Promise.all([
      ...files.map((f) => importPolicyFile(f, actor, T0)),
      saveRuleVersion({ ...fields, value: "19000" }, actor, T0),
    ]);
    expect(results.slice(0, 3).every((r) => "ok" in r && r.ok)).toBe(true);
    const versions = await db().policyRule.findMany({ where: { ruleKey: "refund-over-limit" }, orderBy: { version: "asc" } });
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
    expect(versions.filter((v) => v.active)).toHaveLength(1);
    expect(versions.slice(1).map((v) => v.value).sort()).toEqual(["16000", "17000", "18000", "19000"]);
  });
});

describe("previewing an import", () => {
  it("says what the import would change and saves nothing; a file that is not one, or fails its cases, gets its problems alone", async () => {
    const exported = await exportPolicyFile();
    const before = await policyState();
    expect(await previewPolicyFile(exported)).toMatchObject({ ok: true, diff: { unchanged: true } });
    // A servers section that lists none is read as no change to the servers.
    expect(await previewPolicyFile(exported.replace("rules:\n", "servers: []\nrules:\n"))).toMatchObject({ ok: true, diff: { unchanged: true } });
    const raised = exported.replace("    value: EUR 150.00\n", "    value: EUR 200.00\n");
    expect(await previewPolicyFile(raised)).toMatchObject({ ok: true, diff: { unchanged: false, rules: { added: [], changed: [{ key: "refund-over-limit", fields: ["value"] }], removed: [] } } });
    expect(await policyState()).toEqual(before);

    const unclosed = exported.replace("    quorum: 2\n", "    quorum: [2\n");
    const notYaml = await previewPolicyFile(unclosed);
    expect(notYaml.ok).toBe(false);
    expect(!notYaml.ok && notYaml.problems[0]).toMatchObject({ message: expect.stringMatching(/^Flow sequence/), line: expect.any(Number) });
    const lowered = exported.replace("    value: EUR 150.00\n", "    value: EUR 10.00\n");
    const failing = await previewPolicyFile(lowered);
    expect(failing.ok).toBe(false);
    if (failing.ok) return;
    expect(failing.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/^the test "a refund within the limit runs at once" fails: expected allow, got requestable by rule:refund-over-limit/),
      expect.stringMatching(/^the test .* fails/),
    ]);
    expect(await policyState()).toEqual(before);
  });
});

describe("an import's test cases", () => {
  it("that give no resource are mapped from the current state, as the call itself would be", async () => {
    const mapped = [
      "  - name: a refund of EUR 180.00 on O-2289 waits for a lead",
      "    call:",
      "      tool: issue_refund",
      "      arguments:",
      "        amount: 180",
      "        order_id: O-2289",
      "    principal:",
      "      agent: support-bot",
      "      user: rita.requester@countersign.test",
      "      role: requester",
      "      groups: []",
      "    expect: requestable",
      "",
    ].join("\n");
    const text = `${await exportPolicyFile()}${mapped}`;
    const r = await importPolicyFile(text, await admin(), T0);
    expect(r, JSON.stringify(r)).toMatchObject({ ok: true, unchanged: false, diff: { tests: { added: ["a refund of EUR 180.00 on O-2289 waits for a lead"] } } });
  });
});

describe("concurrent document changes", () => {
  it("imports that change the document and document saves made at once each take the next document version (PostgreSQL shows the race)", async () => {
    const actor = await admin();
    const base = await exportPolicyFile();
    for (let round = 0; round < 4; round++) {
      const before = await currentDocument();
      const files = ["Asia/Tokyo", "Europe/Paris"].map((z) => base.replace(/^time_zones:\n((?:  - .*\n)*)/m, `time_zones:\n$1  - ${z}\n  - Etc/GMT+${round + 1}\n`));
      expect(files.every((f) => f !== base)).toBe(true);
      const saves = ["Africa/Lagos", "Asia/Dubai", "Europe/Oslo"].map((z) => ({ ...before.body, timeZones: [...before.body.timeZones, z, `Etc/GMT-${round + 1}`] }));
      const results = await Promise.all([...files.map((f) => importPolicyFile(f, actor, T0)), ...saves.map((b) => saveDocument(b, `user:${actor}`, T0, { check: async () => [] }))]);
      expect(results.map((r) => r.ok)).toEqual([true, true, true, true, true]);
      const versions = await db().policyDocument.findMany({ where: { version: { gt: before.version } }, orderBy: { version: "asc" } });
      expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4, 5].map((i) => before.version + i));
    }
  });
});

describe("saving a version runs the document's test cases", () => {
  it("saving a form rule that breaks a test case is refused with a message naming the test, and saves nothing", async () => {
    const fields = await activeRuleFields("refund-over-limit");
    const before = await policyState();
    const save = saveRuleVersion({ ...fields, value: "1000" }, await admin(), T0);
    await expect(save).rejects.toBeInstanceOf(RuleRejected);
    await expect(saveRuleVersion({ ...fields, value: "1000" }, await admin(), T0)).rejects.toThrow(
      'With this rule in place, the test "a refund within the limit runs at once" fails: expected allow, got requestable by rule:refund-over-limit (and 1 more test).',
    );
    expect(await policyState()).toEqual(before);
    // The rule in force still decides as before.
    expect((await callTool(await principal(), "issue_refund", { order_id: "O-1021", amount: 20 }, { tasks: true }, T0)).kind).toBe("result");
  });

  it("saving a document whose own test case fails is refused, and saves nothing", async () => {
    const { body } = await currentDocument();
    const before = await policyState();
    const broken = { ...body, tests: [...body.tests, { ...body.tests[0], name: "a refund is refused", expect: "deny" as const }] };
    const r = await saveDocument(broken, await admin(), T0);
    expect(r).toMatchObject({ ok: false, problems: [{ message: expect.stringContaining('the test "a refund is refused" fails: expected deny, got allow by demo-tools') }] });
    expect(await policyState()).toEqual(before);
    expect(await saveDocument({ ...body, timeZones: ["Europe/Berlin", "Asia/Tokyo"] }, await admin(), T0)).toMatchObject({ ok: true, unchanged: false });
  });
});

describe("npm run policy:test", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "policy-test-"));
  const root = path.resolve(import.meta.dirname, "..");

  async function written(name: string, text: string): Promise<string> {
    const f = path.join(dir, name);
    writeFileSync(f, text);
    return f;
  }

  it("a passing file: one line per case and a summary, exit 0, with no database", async () => {
    const r = await policyTestCli(path.join(root, "policy/countersign.policy.yaml"));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines.slice(0, -1).every((l) => l.startsWith("PASS  "))).toBe(true);
    expect(lines.at(-1)).toBe(`${lines.length - 1} test cases: ${lines.length - 1} passed, 0 failed`);
  });

  it("a file with a failing case: FAIL with the reason and its line, exit 1", async () => {
    const text = await exportPolicyFile();
    const f = await written("failing.yaml", text.replace("    value: EUR 150.00\n", "    value: EUR 10.00\n"));
    const r = await policyTestCli(f);
    expect(r.code).toBe(1);
    const line = text.split("\n").findIndex((l) => l.includes("- name: a refund within the limit")) + 1;
    expect(r.stdout).toContain(`FAIL  a refund within the limit runs at once: expected allow, got requestable by rule:refund-over-limit (${f}:${line})`);
    // The second refund case now meets the form rule first (as strict as the per-order total, and a form rule decides first).
    expect(r.stdout).toContain("FAIL  a second refund that takes the order's total above 150.00 needs a lead: expected requestable by refund-order-total, got requestable by rule:refund-over-limit");
    expect(r.stdout.trim().split("\n").at(-1)).toBe("5 test cases: 3 passed, 2 failed");
  });

  it("a policy problem exits 1 with the line in the file; a broken or unreadable file exits 2", async () => {
    const text = await exportPolicyFile();
    const cedar = await written("cedar.yaml", text.replace('principal.name == "support-bot"', "principal.nickname == 1"));
    const r1 = await policyTestCli(cedar);
    expect(r1.code).toBe(1);
    expect(r1.stderr).toContain(`${cedar}:${text.split("\n").findIndex((l) => l.includes('principal.name == "support-bot"')) + 1}:`);
    const broken = await written("broken.yaml", text.replace("rules:\n", "rules: [\n"));
    const r2 = await policyTestCli(broken);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(new RegExp(`${broken.replace(/[.]/g, "\\.")}:\\d+:\\d+: `));
    const r3 = await policyTestCli(path.join(dir, "missing.yaml"));
    expect(r3.code).toBe(2);
    expect(r3.stderr).toContain("cannot be read");
  });
});

describe("upstream servers in the policy file", () => {
  const TOKEN = "s3cr3t-bearer-token-value";
  const ENV_VALUE = "literal-env-value-entered-in-the-console";
  const snapshot = { description: "Write a file", inputSchema: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path"] }, annotations: {} };

  async function registerServers() {
    await saveUpstream({ name: "tickets", transport: "streamable-http", url: "https://tickets.example.test/mcp", credentials: { bearer: TOKEN } }, "user:admin", T0);
    const files = await saveUpstream(
      { name: "files", transport: "stdio", command: "node", args: ["server.js", "/srv"], env: { API_KEY: "${env:FILES_KEY}", MODE: ENV_VALUE }, root: "/srv", pathArgs: ["path"] },
      "user:admin",
      T0,
    );
    await recordSnapshots(files.id, "files", [{ name: "write_file", snapshot }], T0);
    await setSummaryTemplate("files", "write_file", "write {path}", "user:admin", T0);
    return files;
  }

  async function serverState() {
    const rows = await db().upstreamServer.findMany({ orderBy: { name: "asc" }, include: { tools: { select: { name: true, summaryTemplate: true } } } });
    return rows.map((r) => ({ name: r.name, url: r.url, command: r.command, enabled: r.enabled, credentials: r.credentials, env: r.env, tools: r.tools }));
  }

  it("export writes the registered servers with references, never a secret; importing it back changes nothing", async () => {
    await registerServers();
    const text = await exportPolicyFile();
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(ENV_VALUE);
    expect(text).toContain("servers:\n  - name: files\n    transport: stdio\n    command: node\n");
    expect(text).toContain("    env:\n      API_KEY: ${env:FILES_KEY}\n      MODE: ${stored}\n");
    expect(text).toContain("    summaries:\n      write_file: write {path}\n");
    expect(text).toContain("    credentials:\n      bearer: ${stored}\n");
    const before = [await policyState(), await serverState()];
    expect(await importPolicyFile(text, await admin(), T0)).toMatchObject({ ok: true, unchanged: true });
    expect([await policyState(), await serverState()]).toEqual(before);
  });

  it("an import registers and updates servers in the same transaction as the rules, keeping ${stored} secrets", async () => {
    const files = await registerServers();
    const registered = (await db().auditEvent.findFirstOrThrow({ orderBy: { seq: "desc" } })).seq;
    const text = (await exportPolicyFile())
      .replace("https://tickets.example.test/mcp", "https://tickets.example.test/v2/mcp")
      .replace("write {path}", "write {content} to {path}")
      .replace("servers:\n", "servers:\n  - name: wiki\n    transport: streamable-http\n    url: http://127.0.0.1:9/mcp\n    credentials:\n      header: X-Api-Key\n      value: ${env:WIKI_KEY}\n")
      .replace("    value: EUR 150.00\n", "    value: EUR 200.00\n");
    const r = await importPolicyFile(text, await admin(), T0);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    if (!r.ok) return;
    expect(r.diff.servers).toEqual({ added: ["wiki"], changed: [{ name: "files", fields: ["summaries"] }, { name: "tickets", fields: ["url"] }] });
    expect(describeDiff(r.diff)).toContain("+ server wiki\n~ server files (summaries)\n~ server tickets (url)\n~ rule refund-over-limit (value)");
    expect(r.discovery).toEqual(expect.arrayContaining([expect.stringMatching(/^wiki: not discovered/)]));
    // One note per server added or changed, in name order.
    expect((r.discovery ?? []).map((n) => n.slice(0, n.indexOf(":")))).toEqual(["files", "tickets", "wiki"]);
    const tickets = await db().upstreamServer.findUniqueOrThrow({ where: { name: "tickets" } });
    expect(tickets.url).toBe("https://tickets.example.test/v2/mcp");
    expect((await connectionOf(tickets.id))!.headers).toEqual({ Authorization: `Bearer ${TOKEN}` });
    expect((await db().upstreamTool.findFirstOrThrow({ where: { serverId: files.id } })).summaryTemplate).toBe("write {content} to {path}");
    // A reference is resolved when the gateway connects, from Countersign's environment.
    const wiki = await db().upstreamServer.findUniqueOrThrow({ where: { name: "wiki" } });
    // Exported again, the header credential is the reference it was given.
    expect(await exportPolicyFile()).toContain("  - name: wiki\n    transport: streamable-http\n    url: http://127.0.0.1:9/mcp\n    credentials:\n      header: X-Api-Key\n      value: ${env:WIKI_KEY}\n");
    await expect(connectionOf(wiki.id)).rejects.toThrow("The environment variable WIKI_KEY the server's settings refer to is not set.");
    vi.stubEnv("WIKI_KEY", "from-the-environment");
    try {
      expect((await connectionOf(wiki.id))!.headers).toEqual({ "X-Api-Key": "from-the-environment" });
    } finally {
      vi.unstubAllEnvs();
    }
    const imported = await db().auditEvent.findFirstOrThrow({ where: { type: "policy.imported" } });
    expect(imported.data).toMatchObject({ servers: ["files", "tickets", "wiki"] });
    expect(await db().auditEvent.count({ where: { type: "upstream.registered", data: { path: ["server"], equals: "wiki" } } })).toBe(1);
    // In the name of the admin who imported, like the import itself.
    const serverEvents = await db().auditEvent.findMany({ where: { type: { in: ["upstream.registered", "upstream.updated", "upstream.summary-template"] }, seq: { gt: registered } } });
    expect(serverEvents.length).toBeGreaterThanOrEqual(3);
    expect(new Set(serverEvents.map((e) => e.actor))).toEqual(new Set([imported.actor]));
    expect(JSON.stringify(await db().auditEvent.findMany())).not.toContain(TOKEN);
  });

  it("an import that disables a registered server saves it disabled, and the file that enables it again saves it enabled", async () => {
    await registerServers();
    const exported = await exportPolicyFile();
    const off = edited(exported, "  - name: tickets\n    transport: streamable-http\n", "  - name: tickets\n    transport: streamable-http\n    enabled: false\n");
    const r = await importPolicyFile(off, await admin(), T0);
    expect(r.ok && r.diff.servers).toEqual({ added: [], changed: [{ name: "tickets", fields: ["enabled"] }] });
    // A server saved disabled is not asked for its tools.
    expect(r.ok && !r.unchanged && r.discovery).toEqual([]);
    expect((await db().upstreamServer.findUniqueOrThrow({ where: { name: "tickets" } })).enabled).toBe(false);
    expect(await exportPolicyFile()).toBe(off);
    expect(await importPolicyFile(exported, await admin(), T0)).toMatchObject({ ok: true, diff: { servers: { changed: [{ name: "tickets", fields: ["enabled"] }] } } });
    expect((await db().upstreamServer.findUniqueOrThrow({ where: { name: "tickets" } })).enabled).toBe(true);
  });

  it("a summary the file no longer gives is cleared", async () => {
    const files = await registerServers();
    const exported = await exportPolicyFile();
    const text = edited(exported, "    summaries:\n      write_file: write {path}\n", "");
    const r = await importPolicyFile(text, await admin(), T0);
    expect(r.ok && r.diff.servers).toEqual({ added: [], changed: [{ name: "files", fields: ["summaries"] }] });
    expect((await db().upstreamTool.findFirstOrThrow({ where: { serverId: files.id, name: "write_file" } })).summaryTemplate).toBeNull();
    expect(await exportPolicyFile()).toBe(text);
  });

  it("a failure found late, a literal secret, an unknown placeholder or a ${stored} with nothing stored changes nothing", async () => {
    await registerServers();
    const good = (await exportPolicyFile()).replace("https://tickets.example.test/mcp", "https://tickets.example.test/v3/mcp");
    const before = [await policyState(), await serverState()];

    failAudit.on = true;
    await expect(importPolicyFile(good, await admin(), T0)).rejects.toThrow("the audit trail is unavailable");
    failAudit.on = false;
    expect([await policyState(), await serverState()]).toEqual(before);

    const literal = good.replace("bearer: ${stored}", "bearer: ghp_0123456789");
    const r1 = await importPolicyFile(literal, await admin(), T0);
    expect(!r1.ok && r1.problems[0]).toMatchObject({ line: literal.split("\n").findIndex((l) => l.includes("bearer: ghp_")) + 1, message: expect.stringContaining("a literal secret is refused") });

    const placeholder = good.replace("write {path}", "write {file}");
    const r2 = await importPolicyFile(placeholder, await admin(), T0);
    // That problem alone: the registered servers are not started or asked for their tools to check the file.
    expect(!r2.ok && r2.problems).toEqual([
      {
        line: placeholder.split("\n").findIndex((l) => l.includes("write {file}")) + 1,
        column: 19,
        message: "servers[0].summaries.write_file: The tool has no argument {file}; its arguments are {content}, {path}.",
      },
    ]);

    const noTool = good.replace("      write_file: write {path}\n", "      write_file: write {path}\n      delete_file: delete {path}\n");
    const r4 = await importPolicyFile(noTool, await admin(), T0);
    expect(!r4.ok && r4.problems).toEqual([
      { line: noTool.split("\n").findIndex((l) => l.includes("delete_file: delete")) + 1, column: 20, message: "servers[0].summaries.delete_file: files has no tool delete_file" },
    ]);

    // A tool of the same name on another server is not this server's tool.
    const otherServer = edited(good, "      bearer: ${stored}\n", "      bearer: ${stored}\n    summaries:\n      write_file: write {path}\n");
    const r5 = await importPolicyFile(otherServer, await admin(), T0);
    expect(!r5.ok && r5.problems.map((p) => p.message)).toEqual(["servers[1].summaries.write_file: tickets has no tool write_file"]);

    const nothingStored = good.replace("MODE: ${stored}", "MODE: ${stored}\n      OTHER: ${stored}");
    const r3 = await importPolicyFile(nothingStored, await admin(), T0);
    expect(!r3.ok && r3.problems[0].message).toBe("Invalid upstream server: env.OTHER: files has no stored value of OTHER to keep.");
    expect([await policyState(), await serverState()]).toEqual(before);
  });
});
