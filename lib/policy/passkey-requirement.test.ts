/**
 * The passkey requirement as policy states it: a form rule's requirePasskey, a Cedar forbid's @passkey("required")
 * and a posture's passkey: true each give requestable requirements with requirePasskey; without them the
 * requirements are exactly what they were (no requirePasskey key), so existing policies read unchanged.
 */
import { describe, expect, it } from "vitest";
import { DEMO_RULES } from "../db/seed";
import { policyTools } from "../tools/catalog";
import { compilePolicy } from "./compile";
import { DEMO_DOCUMENT } from "./demo-policy";
import { PolicyDocument, requirementsOf, RequestableSpec } from "./document";
import { evaluate, type CompiledPolicy, type Rule } from "./evaluate";
import { formRuleToCedar } from "./form-rules";

const T0 = new Date("2100-11-30T10:00:00.000Z");
const RULES: Rule[] = DEMO_RULES.map((r, i) => ({ ...r, id: `rule-${i}`, version: 1, currency: null, requireJustification: false }));

function compiled(body: unknown, rules: Rule[] = RULES): CompiledPolicy {
  const r = compilePolicy({ rules, document: { id: "doc-1", version: 1, body: PolicyDocument.parse(body) }, tools: policyTools() }, { strict: true });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.policy;
}

function wire(policy: CompiledPolicy, usd: number) {
  const to = "acct-1";
  return evaluate(
    {
      subject: { agentId: "a", agentName: "ops-bot", user: { id: "u", email: "u@countersign.test", name: "u", role: "requester", groups: [] } },
      action: { name: "wire_transfer" },
      resource: { type: "account", id: to, properties: { amount_cents: Math.round(usd * 100), currency: "USD" } },
      context: { args: { to, amount: usd }, history: Object.fromEntries(policy.document.history.filter((h) => h.tool === "wire_transfer").map((h) => [h.name, { total: 0, count: 0 }])) },
    },
    policy,
    T0,
  );
}

describe("the passkey requirement in policy", () => {
  it('a Cedar forbid with @passkey("required") asks for approvals confirmed with a passkey', () => {
    const policies = `${DEMO_DOCUMENT.policies ?? ""}\n\n@id("wire-passkey")\n@reason("This transfer needs a passkey-confirmed approval.")\n@approvers("treasury")\n@quorum("1")\n@passkey("required")\nforbid (principal, action == Action::"wire_transfer", resource)\nwhen { resource.amount_cents == 1234567 };\n`;
    const p = compiled({ ...DEMO_DOCUMENT, policies });
    expect(wire(p, 12_345.67)).toMatchObject({ decision: "requestable", requirements: { approverGroup: "treasury", requirePasskey: true } });
    const plain = wire(p, 30_000);
    expect(plain).toMatchObject({ decision: "requestable" });
    expect(plain.decision === "requestable" && "requirePasskey" in plain.requirements).toBe(false);
  });

  it("@passkey takes required or optional only", () => {
    const policies = `@id("bad")\n@reason("A passkey rule with a typo.")\n@approvers("treasury")\n@passkey("yes")\nforbid (principal, action == Action::"wire_transfer", resource);\n`;
    const r = compilePolicy({ rules: RULES, document: { id: "d", version: 1, body: PolicyDocument.parse({ ...DEMO_DOCUMENT, policies, tests: [] }) }, tools: policyTools() }, { strict: true });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.map((x) => x.message).join(" ")).toMatch(/@passkey is "required" or "optional"/);
  });

  it("a form rule with requirePasskey writes @passkey and asks for a passkey; the demo rules do not", () => {
    const rule: Rule = { ...RULES.find((r) => r.ruleKey === "wire-over-25k")!, requirePasskey: true };
    const tool = policyTools().find((t) => t.name === "wire_transfer");
    expect(formRuleToCedar(rule, tool).text).toContain('@passkey("required")');
    expect(formRuleToCedar({ ...rule, requirePasskey: false }, tool).text).not.toContain("@passkey");
    const p = compiled(DEMO_DOCUMENT, RULES.map((r) => (r.ruleKey === "wire-over-25k" ? rule : r)));
    expect(wire(p, 30_000)).toMatchObject({ decision: "requestable", requirements: { requirePasskey: true } });
  });

  it("a posture's passkey: true carries into its requirements; absent, the requirements have no passkey key", () => {
    const spec = RequestableSpec.parse({ approvers: "sre", reason: "Needs an SRE approval." });
    expect(requirementsOf(spec)).not.toHaveProperty("requirePasskey");
    expect(requirementsOf(RequestableSpec.parse({ approvers: "sre", reason: "Needs an SRE approval.", passkey: true }))).toMatchObject({ requirePasskey: true });
  });
});
