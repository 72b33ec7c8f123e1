/**
 * A rule's escalation (time and fallback group) flows like its other approval settings: written to and read from
 * the policy file, carried by the compiled policy's requirements (which the request stores at creation), and
 * declared on a Cedar policy with @escalate and @fallback.
 */
import { describe, expect, it } from "vitest";
import { DEMO_RULES } from "../db/seed";
import { policyTools } from "../tools/catalog";
import { DEMO_DOCUMENT } from "./demo-policy";
import { compilePolicy, requirementsFromAnnotations } from "./compile";
import { PolicyDocument } from "./document";
import { formatPolicyFile, parsePolicyFile, storedRule } from "./file";
import { ruleFromFields } from "./preview";

const rules = () =>
  DEMO_RULES.map((r) =>
    storedRule({ requireJustification: false, currency: null, ...r, id: r.ruleKey, version: 1, ...(r.ruleKey === "refund-over-limit" ? { escalateAfterSec: 7200, fallbackGroup: "treasury" } : {}) }),
  );

describe("a rule's escalation", () => {
  it("is written to the policy file as escalate and fallback, and read back the same", () => {
    const text = formatPolicyFile({ rules: rules(), document: PolicyDocument.parse(DEMO_DOCUMENT) });
    expect(text).toContain("    escalate: 2h\n    fallback: treasury\n");
    const read = parsePolicyFile(text);
    if (!read.ok) throw new Error(JSON.stringify(read.problems));
    expect(read.file.rules.find((r) => r.ruleKey === "refund-over-limit")).toMatchObject({ escalateAfterSec: 7200, fallbackGroup: "treasury" });
    expect(read.file.rules.find((r) => r.ruleKey === "wire-over-25k")).toMatchObject({ escalateAfterSec: null, fallbackGroup: null });
  });

  it("is carried by the compiled requirements of the rule, and absent from a rule without one", () => {
    const compiled = compilePolicy({ rules: rules().map((r, i) => ({ ...r, id: `r${i}`, version: 1 })), document: { id: "d", version: 1, body: PolicyDocument.parse(DEMO_DOCUMENT) }, tools: policyTools() } as never, { strict: true });
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
    const requirements = [...compiled.policy.meta.values()].map((m) => m.requirements).filter((r) => r !== null);
    expect(requirements.find((r) => r!.approverGroup === "support-leads")).toMatchObject({ escalateAfterSec: 7200, fallbackGroup: "treasury" });
    expect(requirements.find((r) => r!.approverGroup === "treasury")).not.toHaveProperty("fallbackGroup");
  });

  it("is declared on a Cedar policy with @escalate and @fallback, both or neither", () => {
    const policy = (annotations: Record<string, string>) =>
      ({ effect: "forbid", annotations: { approvers: "sre", reason: "Deploys need an SRE.", ...annotations } }) as never;
    expect(requirementsFromAnnotations(policy({ escalate: "30m", fallback: "treasury" }))).toMatchObject({ requirements: { approverGroup: "sre", escalateAfterSec: 1800, fallbackGroup: "treasury" } });
    expect(requirementsFromAnnotations(policy({ escalate: "30m" }))).toEqual({ problem: expect.stringMatching(/a fallback group/) });
    expect(requirementsFromAnnotations(policy({ fallback: "sre", escalate: "30m" }))).toEqual({ problem: expect.stringMatching(/must differ from the approver group/) });
  });
});

describe("the policy form's escalation fields", () => {
  // The deploy rule as the form sends it: every value a string, checkboxes as "on".
  const fields = {
    ruleKey: "deploy-production", tool: "deploy_service", description: "Production deploys", field: "environment", operator: "eq",
    value: "production", effect: "requestable", approverGroup: "sre", approvalsRequired: "1", requestDeadlineSec: "86400",
    approvalValiditySec: "3600", reason: "Production deploys need an SRE's approval.", active: "on",
  };

  it("empty fields mean no escalation; both filled make one; one without the other names the missing field", () => {
    expect(ruleFromFields({ ...fields, escalateAfterSec: "", fallbackGroup: "" })).toMatchObject({ ok: true, rule: { escalateAfterSec: null, fallbackGroup: null } });
    expect(ruleFromFields({ ...fields, escalateAfterSec: "3600", fallbackGroup: "treasury" })).toMatchObject({ ok: true, rule: { escalateAfterSec: 3600, fallbackGroup: "treasury" } });
    expect(ruleFromFields({ ...fields, escalateAfterSec: "", fallbackGroup: "treasury" })).toEqual({ ok: false, fieldErrors: { escalateAfterSec: "a fallback group needs an escalation time" } });
    expect(ruleFromFields({ ...fields, escalateAfterSec: "90000", fallbackGroup: "treasury" })).toEqual({ ok: false, fieldErrors: { escalateAfterSec: "escalation must come before the request deadline" } });
  });
});
