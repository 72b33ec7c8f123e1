/**
 * The stored policy: an older document version read back as it was saved, and the compiled policy kept only while
 * the tool catalog it was compiled for stays the same, down to each tool's input schema.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { resetDb, userId } from "../../tests/support/db";
import { db } from "../db/client";
import { LEGACY_DOCUMENT } from "./document";
import { currentDocument, currentPolicy, currentRules, documentVersion, saveDocument } from "./store";

beforeEach(resetDb);

const T0 = new Date("2100-11-30T10:00:00Z");

describe("document versions", () => {
  it("each version reads back as it was saved; a version never saved is null", async () => {
    const admin = await userId("admin@countersign.test");
    const base = (await currentDocument()).body;
    const first = await saveDocument({ ...base, timeZones: ["Europe/Berlin", "Asia/Tokyo"] }, admin, T0, { check: async () => [] });
    const second = await saveDocument({ ...base, timeZones: ["Europe/Berlin", "America/New_York"] }, admin, T0, { check: async () => [] });
    if (!first.ok || !second.ok) throw new Error("not saved");
    expect(second.version).toBe(first.version + 1);
    expect((await documentVersion(first.version))?.body.timeZones).toEqual(["Europe/Berlin", "Asia/Tokyo"]);
    expect((await documentVersion(second.version))?.body.timeZones).toEqual(["Europe/Berlin", "America/New_York"]);
    expect(await documentVersion(second.version + 1)).toBeNull();
  });
});

describe("saving a document", () => {
  it("saves made at once each take the next version: none is lost or refused (PostgreSQL shows the race)", async () => {
    const admin = await userId("admin@countersign.test");
    const zones = ["Asia/Tokyo", "Europe/Paris", "America/Chicago", "Africa/Lagos", "Asia/Dubai", "Europe/Oslo"];
    for (let round = 0; round < 3; round++) {
      const { body, version } = await currentDocument();
      const results = await Promise.all(zones.map((z) => saveDocument({ ...body, timeZones: [z, `Etc/GMT+${round + 1}`] }, admin, T0, { check: async () => [] })));
      const versions = results.map((r) => (r.ok && !r.unchanged ? r.version : null));
      expect(versions.sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(zones.map((_, i) => version + 1 + i));
      expect(await db().policyDocument.count({ where: { version: { gt: version } } })).toBe(zones.length);
    }
  });

  it("a check given by the caller replaces the run of the body's own test cases: its failures refuse the save, nothing else does", async () => {
    const admin = await userId("admin@countersign.test");
    const base = (await currentDocument()).body;
    const before = await db().policyDocument.count();
    const refusedByCheck = await saveDocument({ ...base, timeZones: ["Asia/Tokyo"] }, admin, T0, { check: async () => [{ message: "refused by the check" }] });
    expect(refusedByCheck).toEqual({ ok: false, problems: [{ message: "refused by the check" }] });
    expect(await db().policyDocument.count()).toBe(before);
    // A test case the policy fails: refused by the body's own tests, saved when the caller's check passes it.
    const failing = { ...base, tests: [{ ...base.tests[0], name: "a refund is refused", expect: "deny" as const, by: undefined }] };
    const byOwnTests = await saveDocument(failing, admin, T0);
    expect(byOwnTests).toMatchObject({ ok: false, problems: [{ message: expect.stringMatching(/^the test "a refund is refused" fails: expected deny/) }] });
    expect(await saveDocument(failing, admin, T0, { check: async () => [] })).toMatchObject({ ok: true, version: before + 1, unchanged: false });
  });

  it("a body that is not a document names the field at fault, or the document; a test case without a resource reads it through the tool's mapping", async () => {
    const admin = await userId("admin@countersign.test");
    expect(await saveDocument("not a document", admin, T0)).toMatchObject({ ok: false, problems: [{ message: expect.stringMatching(/^document: /) }] });
    expect(await saveDocument({ defaults: { posture: "maybe" } }, admin, T0)).toMatchObject({ ok: false, problems: [{ message: expect.stringMatching(/^defaults\.posture: /) }] });
    const base = (await currentDocument()).body;
    const { resource: _resource, ...mapped } = base.tests[0];
    void _resource;
    expect(await saveDocument({ ...base, tests: [mapped] }, admin, T0)).toMatchObject({ ok: true, unchanged: false });
  });
});

describe("document versions, saved", () => {
  it("a body equal to the current version saves nothing; a changed one is the next version with its note and its audit event", async () => {
    const admin = await userId("admin@countersign.test");
    const base = (await currentDocument()).body;
    const first = await saveDocument({ ...base, timeZones: ["Asia/Tokyo"] }, admin, T0, { check: async () => [], note: "Tokyo office" });
    if (!first.ok) throw new Error("not saved");
    expect(await saveDocument({ ...base, timeZones: ["Asia/Tokyo"] }, admin, T0, { check: async () => [] })).toEqual({ ok: true, version: first.version, unchanged: true });
    expect(await db().policyDocument.findUniqueOrThrow({ where: { version: first.version } })).toMatchObject({ note: "Tokyo office", createdBy: admin });
    expect(await db().policyDocument.count({ where: { version: { gt: first.version } } })).toBe(0);
    const events = await db().auditEvent.findMany({ where: { type: "policy.document-saved" } });
    expect(events).toMatchObject([{ actor: `user:${admin}`, data: { version: first.version, previous: first.version - 1 } }]);
  });

  it("the first version is 1, with no previous one; an actor that names its kind is kept as it is", async () => {
    await db().policyDocument.deleteMany();
    const saved = await saveDocument({ defaults: { posture: "allow" } }, "system:seed", T0, { check: async () => [] });
    expect(saved).toEqual({ ok: true, version: 1, unchanged: false });
    expect(await db().policyDocument.findUniqueOrThrow({ where: { version: 1 } })).toMatchObject({ note: null, createdBy: "system:seed" });
    expect(await db().auditEvent.findMany({ where: { type: "policy.document-saved" } })).toMatchObject([{ actor: "system:seed", data: { version: 1, previous: null } }]);
  });
});

describe("the compiled policy and the tool catalog", () => {
  it("a tool whose accepted input schema changes under the same name is compiled afresh with its new schema", async () => {
    await db().$executeRaw`INSERT INTO "UpstreamServer" ("id", "name", "transport", "url") VALUES ('srv-1', 'lookup', 'streamable-http', 'http://127.0.0.1:9/mcp')`;
    const snapshot = (type: string) => ({ description: "Looks a record up.", inputSchema: { type: "object", properties: { id: { type } } }, annotations: {} });
    await db().upstreamTool.create({ data: { id: "t-1", serverId: "srv-1", name: "find", accepted: snapshot("string"), acceptedDigest: "d1" } });
    const toolOf = (p: Awaited<ReturnType<typeof currentPolicy>>) => [...p.tools.values()].find((t) => t.name.endsWith("find"));
    const first = await currentPolicy();
    expect(toolOf(first)?.inputSchema).toMatchObject({ properties: { id: { type: "string" } } });
    expect(await currentPolicy()).toBe(first);
    await db().upstreamTool.update({ where: { id: "t-1" }, data: { accepted: snapshot("integer"), acceptedDigest: "d2" } });
    const next = await currentPolicy();
    expect(next).not.toBe(first);
    expect(toolOf(next)?.inputSchema).toMatchObject({ properties: { id: { type: "integer" } } });
  });
});

describe("the current rules and document", () => {
  it("the active rules, a tool's alone when asked, in the order of their keys whatever order they were written in", async () => {
    const rule = (ruleKey: string, tool: string, active = true) => ({
      ruleKey,
      version: 1,
      tool,
      description: ruleKey,
      field: "amount_cents",
      operator: "gt",
      value: "1",
      effect: "requestable",
      reason: ruleKey,
      active,
    });
    await db().policyRule.deleteMany();
    for (const r of [rule("zz-last", "issue_refund"), rule("mm-other-tool", "deploy_service"), rule("aa-first", "issue_refund"), rule("bb-inactive", "issue_refund", false)]) {
      await db().policyRule.create({ data: r });
    }
    expect((await currentRules()).map((r) => r.ruleKey)).toEqual(["aa-first", "mm-other-tool", "zz-last"]);
    expect((await currentRules("issue_refund")).map((r) => r.ruleKey)).toEqual(["aa-first", "zz-last"]);
  });

  it("with no document version saved, the legacy document (version 0) is current, and the policy is compiled from it", async () => {
    await db().policyDocument.deleteMany();
    expect(await currentDocument()).toEqual({ id: "legacy", version: 0, body: LEGACY_DOCUMENT });
    const policy = await currentPolicy();
    expect(policy.document.ref).toMatchObject({ id: "legacy", version: 0 });
    // Its default posture (allow) decides a tool no policy names.
    expect(policy.posture("support-bot", "no_policy_names_this")).toMatchObject({ posture: { effect: "allow" }, ref: { id: "legacy", ruleKey: "default" } });
  });
});
