/** A rule's condition in words, e.g. "amount_cents > 2500000 (25,000.00)". */
const OPS: Record<string, string> = { gt: ">", gte: "≥", eq: "=", prefix: "starts with" };

export function conditionText(rule: { field: string; operator: string; value: string }): string {
  const op = OPS[rule.operator] ?? rule.operator;
  // A prefix that names a folder covers the folder itself too (lib/policy/evaluate.ts).
  if (rule.operator === "prefix" && rule.value.length > 1 && rule.value.endsWith("/")) {
    return `${rule.field} is "${rule.value.slice(0, -1)}" or ${op} "${rule.value}"`;
  }
  const base = `${rule.field} ${op} ${rule.operator === "prefix" || rule.operator === "eq" ? `"${rule.value}"` : rule.value}`;
  if (rule.field.endsWith("_cents") && /^\d+$/.test(rule.value)) {
    const major = (Number(rule.value) / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    return `${base} (${major} in the call's currency)`;
  }
  return base;
}

function duration(sec: number): string {
  if (sec >= 86400 && sec % 86400 === 0) return `${sec / 86400}d`;
  if (sec >= 3600 && sec % 3600 === 0) return `${sec / 3600}h`;
  if (sec >= 60 && sec % 60 === 0) return `${sec / 60}m`;
  return `${sec}s`;
}

type DecisionLike =
  | { decision: "allow"; rule: { ruleKey: string; version: number } | null }
  | { decision: "deny"; rule: { ruleKey: string; version: number }; reason: string }
  | {
      decision: "requestable";
      rule: { ruleKey: string; version: number };
      reason: string;
      requirements: { approverGroup: string; approvalsRequired: number; requestDeadlineSec: number; approvalValiditySec: number; requireJustification: boolean };
    };

/** A policy decision in one sentence, for the preview. */
export function decisionText(d: DecisionLike): string {
  const by = (r: { ruleKey: string; version: number }) => `${r.ruleKey} v${r.version}`;
  switch (d.decision) {
    case "allow":
      return d.rule ? `Runs at once (allowed by ${by(d.rule)})` : "Runs at once: no rule applies";
    case "deny":
      return `Refused, cannot be approved (${by(d.rule)}): ${d.reason}`;
    case "requestable": {
      const q = d.requirements;
      return (
        `Needs ${q.approvalsRequired} approval${q.approvalsRequired === 1 ? "" : "s"} from ${q.approverGroup} (${by(d.rule)}); ` +
        `request deadline ${duration(q.requestDeadlineSec)}, approval valid ${duration(q.approvalValiditySec)}` +
        (q.requireJustification ? "; the requester must give a justification first" : "")
      );
    }
  }
}
