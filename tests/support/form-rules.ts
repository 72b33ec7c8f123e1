/**
 * Form rules compiled over a document whose default posture allows, so a call no rule matches runs: the shape the
 * decision tests of form rules judge against.
 */
import { compilePolicy } from "../../lib/policy/compile";
import { PolicyDocument } from "../../lib/policy/document";
import type { CompiledPolicy, Rule } from "../../lib/policy/evaluate";
import type { PolicyTool } from "../../lib/policy/schema";
import { policyTools } from "../../lib/tools/catalog";

export function compiledFormRules(rules: Rule[], tools: PolicyTool[] = policyTools()): CompiledPolicy {
  const r = compilePolicy(
    { rules, document: { id: "doc-1", version: 1, body: PolicyDocument.parse({ defaults: { posture: "allow" } }) }, tools },
    { strict: false },
  );
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join("; "));
  return r.policy;
}
