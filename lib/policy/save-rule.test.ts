/**
 * Editing a policy rule inserts its next version and retires the previous one of that rule key only: every other
 * rule keeps gating its calls, so an edit can never switch off the approval a different rule requires.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../db/client";
import { callTool } from "../tasks/call";
import { currentDocument, currentRules, saveDocument } from "./store";
import { RuleRejected, ruleProblem, saveRuleVersion, type RuleInput } from "./save-rule";
import { activeRuleFields, principal, resetDb, userId } from "../../tests/support/db";
import { digest } from "../canonical";
import { recordSnapshots } from "../gateway/discover";
import { saveUpstream } from "../gateway/servers";
import { PolicyDocument } from "./document";

const T0 = new Date("2026-11-30T10:00:00Z");
beforeEach(resetDb);

const current = activeRuleFields;

const activeKeys = async () => (await db().policyRule.findMany({ where: { active: true }, orderBy: { ruleKey: "asc" } })).map((r) => `${r.ruleKey}@${r.version}`);

describe("saving a rule version", () => {
  it("retires only the previous version of the same rule key: every other rule stays active and still gates its calls", async () => {
    const before = await activeKeys();
    expect(before.length).toBeGreaterThan(1);
    await saveRuleVersion({ ...(await current("refund-over-limit")), value: "20000" }, await userId("admin@countersign.test"), T0);
    expect(await activeKeys()).toEqual(before.map((k) => (k === "refund-over-limit@1" ? "refund-over-limit@2" : k)));
    const deploy = await callTool(await principal("ops-bot"), "deploy_service", { service: "checkout-api", environment: "production", version: "1.4.2" }, { tasks: true }, T0);
    expect(deploy.kind).toBe("task");
  });

  it("each edit takes the version after the highest one, and the audit event names the version it replaced", async () => {
    const admin = await userId("admin@countersign.test");
    const base = await current("refund-over-limit");
    const versions = [];
    for (const value of ["20000", "25000", "30000"]) versions.push((await saveRuleVersion({ ...base, value }, admin, T0)).version);
    expect(versions).toEqual([2, 3, 4]);
    expect((await currentRules("issue_refund")).filter((r) => r.ruleKey === "refund-over-limit").map((r) => [r.version, r.value])).toEqual([[4, "30000"]]);
    const events = await db().auditEvent.findMany({ where: { type: "policy.rule-saved" } });
    events.sort((a, b) => (a.data as { version: number }).version - (b.data as { version: number }).version);
    expect(events.map((e) => e.data)).toEqual([
      expect.objectContaining({ ruleKey: "refund-over-limit", version: 2, previous: 1, active: true }),
      expect.objectContaining({ version: 3, previous: 2 }),
      expect.objectContaining({ version: 4, previous: 3 }),
    ]);
    expect(events.every((e) => e.actor === `user:${admin}`)).toBe(true);
  });

  it("edits of one rule key made at once each take the next version: none is lost or refused (PostgreSQL shows the race)", async () => {
    const admin = await userId("admin@countersign.test");
    const base = await current("refund-over-limit");
    const values = ["16000", "17000", "18000", "19000", "20000", "21000"];
    for (let round = 0; round < 3; round++) {
      const before = (await db().policyRule.findFirstOrThrow({ where: { ruleKey: base.ruleKey }, orderBy: { version: "desc" } })).version;
      const saved = await Promise.all(values.map((value) => saveRuleVersion({ ...base, value }, admin, T0)));
      expect(saved.map((r) => r.version).sort((a, b) => a - b)).toEqual(values.map((_, i) => before + 1 + i));
      // One version is active: the one saved last.
      const active = await db().policyRule.findMany({ where: { ruleKey: base.ruleKey, active: true } });
      expect(active.map((r) => r.version)).toEqual([before + values.length]);
    }
  });

  it("a new rule key starts at version 1 with no previous version, and applies at once", async () => {
    const admin = await userId("admin@countersign.test");
    const saved = await saveRuleVersion(
      // Above EUR 20.00 and less strict than the per-order total: the document's test cases still pass with it in place.
      { ...(await current("refund-over-limit")), ruleKey: "refund-any-amount", value: "2000", approvalValiditySec: 7200, reason: "Every refund needs a lead for now." },
      admin,
      T0,
    );
    expect(saved).toMatchObject({ ruleKey: "refund-any-amount", version: 1, active: true, createdBy: admin });
    const event = await db().auditEvent.findFirstOrThrow({ where: { type: "policy.rule-saved" } });
    expect(event.data).toMatchObject({ ruleKey: "refund-any-amount", version: 1, previous: null });
    const small = await callTool(await principal(), "issue_refund", { order_id: "O-2289", amount: 25 }, { tasks: true }, T0);
    expect(small.kind).toBe("task");
  });
});

describe("a rule that cannot be saved says which field is at fault and why, and nothing is saved", () => {
  async function refused(input: RuleInput): Promise<{ field: string; message: string }> {
    const versions = await db().policyRule.count();
    const err = await saveRuleVersion(input, await userId("admin@countersign.test"), T0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RuleRejected);
    expect(await db().policyRule.count()).toBe(versions);
    expect(await db().auditEvent.count({ where: { type: "policy.rule-saved" } })).toBe(0);
    return { field: (err as RuleRejected).field, message: (err as RuleRejected).message };
  }

  it("a tool the catalog does not have", async () => {
    expect(await refused({ ...(await current("refund-over-limit")), tool: "refund_everything" })).toEqual({ field: "tool", message: "there is no tool refund_everything" });
  });

  it("an attribute the tool's resource does not have, with the attributes a rule can compare (not the money ones)", async () => {
    expect(await refused({ ...(await current("refund-over-limit")), field: "customer", currency: null })).toEqual({
      field: "field",
      message: "issue_refund has no attribute customer (it has amount_cents, currency, refundable_cents, total_cents)",
    });
  });

  it("a value the attribute cannot be compared with: a whole number by prefix, text by a threshold", async () => {
    expect(await refused({ ...(await current("refund-over-limit")), operator: "prefix", value: "15", currency: null })).toEqual({
      field: "value",
      message: "amount_cents is a whole number; prefix 15 does not fit it",
    });
    expect(await refused({ ...(await current("deploy-production")), operator: "gt", value: "3" })).toEqual({
      field: "value",
      message: "environment is text; gt 3 does not fit it",
    });
  });

  it("a rule the policy's own test cases fail with: the first failing test, and how many more", async () => {
    // Every refund above EUR 10.00 would need a lead, and the document says one of EUR 20.00 runs at once.
    expect(await refused({ ...(await current("refund-over-limit")), value: "1000" })).toEqual({
      field: "form",
      message:
        'With this rule in place, the test "a refund within the limit runs at once" fails: expected allow, got requestable by rule:refund-over-limit (and 1 more test).',
    });
    const { message } = await refused({ ...(await current("deploy-production")), effect: "deny", approverGroup: null, approvalsRequired: 0, requestDeadlineSec: 0, approvalValiditySec: 0, operator: "prefix", value: "s" });
    expect(message).toMatch(/^With this rule in place, the test "a staging deploy at night runs at once" fails: expected allow, got deny by rule:deploy-production\.$/);
    expect(message).not.toMatch(/more test/);
  });

  it("a test case that gives no resource is mapped from the current state, as the call itself would be", async () => {
    const admin = await userId("admin@countersign.test");
    const base = (await currentDocument()).body;
    // Order O-2289's refund of EUR 180.00: its amount, refundable and total are read from the order, not the case.
    const mapped = {
      name: "a refund of EUR 180.00 on O-2289 runs at once",
      call: { tool: "issue_refund", arguments: { order_id: "O-2289", amount: 180 } },
      principal: { agent: "support-bot", user: "rita.requester@countersign.test", role: "requester", groups: [] },
      history: {},
      expect: "allow" as const,
    };
    const saved = await saveDocument({ ...base, tests: [...base.tests, mapped] }, admin, T0, { check: async () => [] });
    if (!saved.ok) throw new Error(JSON.stringify(saved.problems));
    // A threshold of EUR 180.00 lets the refund run; one of EUR 170.00 fails the case, named with what the mapped call got.
    expect(await ruleProblem({ ...(await current("refund-over-limit")), value: "18000" })).toBeNull();
    expect(await refused({ ...(await current("refund-over-limit")), value: "17000" })).toEqual({
      field: "form",
      message: `With this rule in place, the test "${mapped.name}" fails: expected allow, got requestable by rule:refund-over-limit.`,
    });
    // Three cases fail at EUR 10.00: the first is named and the others counted.
    expect((await refused({ ...(await current("refund-over-limit")), value: "1000" })).message).toMatch(/ \(and 2 more tests\)\.$/);
  });

  it("a rule saved inactive is checked without it: retiring a rule the test cases could not live with is allowed", async () => {
    const input = { ...(await current("refund-over-limit")), value: "1000" };
    expect(await ruleProblem({ ...input, active: false })).toBeNull();
    const saved = await saveRuleVersion({ ...input, active: false }, await userId("admin@countersign.test"), T0);
    expect(saved).toMatchObject({ ruleKey: "refund-over-limit", version: 2, active: false });
    expect((await currentRules("issue_refund")).map((r) => r.ruleKey)).not.toContain("refund-over-limit");
  });

  it("a stored rule that no longer compiles blocks every save, named with its problem, until it is fixed", async () => {
    // Written past the checks (an older version's tool removed since): the whole policy no longer compiles strictly.
    await db().policyRule.create({ data: { ...(await current("deploy-production")), ruleKey: "deploy-gone", tool: "deploy_gone", createdBy: "seed", createdAt: T0, version: 1 } });
    expect(await refused({ ...(await current("refund-over-limit")), value: "20000" })).toEqual({ field: "form", message: "rule deploy-gone: there is no tool deploy_gone" });
  });

  it("a list of paths compared by a threshold, with how such a list can be compared", async () => {
    const files = await saveUpstream({ name: "files", transport: "stdio", command: "node", args: ["server.js"], root: "/srv/files", pathArgs: ["paths"] }, "user:admin", T0);
    const readMany = { description: "Read several files", inputSchema: { type: "object", properties: { paths: { type: "array", items: { type: "string" } } }, required: ["paths"] }, annotations: { readOnlyHint: true } };
    await recordSnapshots(files.id, "files", [{ name: "read_multiple_files", snapshot: readMany }], T0);
    const base = { ...(await current("deploy-production")), ruleKey: "files-secret", tool: "files__read_multiple_files", field: "paths" };
    expect(await refused({ ...base, operator: "gt", value: "3" })).toEqual({
      field: "value",
      message: 'paths is a list of paths: it can be compared with eq (one of them is the value) or prefix with a folder ending in "/" (one of them is in it); gt 3 does not fit it',
    });
    expect(await ruleProblem({ ...base, operator: "prefix", value: "secret/" })).toBeNull();
  });

  it("a stored policy document that no longer compiles blocks every save, named with its problem at its line and column", async () => {
    // Written past the checks, as a migration of old data would: a forbid reading an argument the tool no longer has.
    const last = await db().policyDocument.findFirstOrThrow({ orderBy: { version: "desc" } });
    const stale = (last.body as { policies: string }).policies + '\n@id("gone-argument")\nforbid (principal, action == Action::"wire_transfer", resource)\nwhen { context.args.beneficiary == "x" };\n';
    const body = PolicyDocument.parse({ ...(last.body as object), policies: stale });
    await db().policyDocument.create({ data: { version: last.version + 1, body: body as object, digest: digest(body), createdBy: "migration", createdAt: T0 } });
    const line = stale.split("\n").findIndex((l) => l.startsWith("when { context.args.beneficiary")) + 1;
    const { field, message } = await refused({ ...(await current("refund-over-limit")), value: "20000" });
    expect(field).toBe("form");
    expect(message).toMatch(new RegExp(`beneficiary.* \\(line ${line}, column \\d+\\)$`));
  });

  it("an edit is judged without the version it replaces: a rule the test cases fail with can be fixed or retired", async () => {
    // Written past the checks: every refund above EUR 10.00 waits, which the document's test cases say is wrong.
    await db().policyRule.updateMany({ where: { ruleKey: "refund-over-limit", active: true }, data: { value: "1000" } });
    const broken = await current("refund-over-limit");
    expect(await ruleProblem({ ...broken, value: "15000" })).toBeNull();
    expect(await ruleProblem({ ...broken, active: false })).toBeNull();
    const fixed = await saveRuleVersion({ ...(await current("refund-over-limit")), value: "15000" }, await userId("admin@countersign.test"), T0);
    expect(fixed).toMatchObject({ ruleKey: "refund-over-limit", version: 2, value: "15000", active: true });
  });
});
