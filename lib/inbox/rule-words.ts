import { formatAmount, formatMoney } from "../tools/money";

/** A rule's condition in words, e.g. "amount_cents > EUR 25,000.00" or "path starts with "prod/"". */
const OPS: Record<string, string> = { gt: ">", gte: "≥", eq: "=", prefix: "starts with" };

/** The resource attributes a threshold compares as money (integer minor units, with the call's currency). */
export const MONEY_FIELDS = ["amount_cents", "refundable_cents", "total_cents"] as const;

export function isMoneyField(field: string): boolean {
  return (MONEY_FIELDS as readonly string[]).includes(field);
}

/** Minor units as money, e.g. (2500000, "USD") -> "USD 25,000.00"; without a currency just the amount. */
export function moneyText(minor: number, currency: string | null | undefined): string {
  return currency ? formatMoney(minor, currency) : formatAmount(minor);
}

export type ParsedMoney = { ok: true; minor: number; currency: string } | { ok: false; message: string };

/**
 * Money as an admin types it: a three-letter currency and an amount with at most two decimals, thousands
 * separators allowed ("EUR 200.00", "EUR 200", "USD 25,000.50", "200.00 EUR").
 */
export function parseMoney(text: string): ParsedMoney {
  const t = text.trim().replace(/\s+/g, " ");
  if (!t) return { ok: false, message: "give an amount with its currency, e.g. EUR 200.00" };
  const m = /^(?:([A-Za-z]{3}) ?)?([0-9][0-9,]*(?:\.[0-9]*)?)(?: ?([A-Za-z]{3}))?$/.exec(t);
  if (!m) return { ok: false, message: `"${text.trim().slice(0, 40)}" is not an amount: write the currency and the amount, e.g. EUR 200.00` };
  const currency = (m[1] ?? m[3] ?? "").toUpperCase();
  if (!currency) return { ok: false, message: "give the currency too, e.g. EUR 200.00 (a call in another currency always needs the rule's approval)" };
  if (m[1] && m[3]) return { ok: false, message: "give the currency once, e.g. EUR 200.00" };
  const digits = m[2];
  if (digits.includes(",") && !/^[0-9]{1,3}(,[0-9]{3})*(\.[0-9]*)?$/.test(digits)) return { ok: false, message: "thousands separators go every three digits, e.g. EUR 25,000.00" };
  const [whole, frac = ""] = digits.replace(/,/g, "").split(".");
  if (frac.length > 2) return { ok: false, message: "at most two decimals (cents), e.g. EUR 200.50" };
  const minor = Number(whole) * 100 + Number(frac.padEnd(2, "0") || "0");
  if (!Number.isSafeInteger(minor) || whole.length > 13) return { ok: false, message: "the amount is too large" };
  return { ok: true, minor, currency };
}

export function conditionText(rule: { field: string; operator: string; value: string; currency?: string | null }): string {
  const op = OPS[rule.operator] ?? rule.operator;
  // A prefix that names a folder covers the folder itself too (lib/policy/form-rules.ts).
  if (rule.operator === "prefix" && rule.value.length > 1 && rule.value.endsWith("/")) {
    return `${rule.field} is "${rule.value.slice(0, -1)}" or ${op} "${rule.value}"`;
  }
  if (rule.field.endsWith("_cents") && /^\d+$/.test(rule.value)) {
    if (rule.currency) return `${rule.field} ${op} ${moneyText(Number(rule.value), rule.currency)} (any other currency matches)`;
    return `${rule.field} ${op} ${rule.value} (${moneyText(Number(rule.value), null)} in the call's currency)`;
  }
  return `${rule.field} ${op} ${rule.operator === "prefix" || rule.operator === "eq" ? `"${rule.value}"` : rule.value}`;
}

const CALLS: Record<string, string> = { issue_refund: "Refunds", wire_transfer: "Transfers", delete_path: "Deletions", deploy_service: "Deploys" };
const COMPARE: Record<string, string> = { gt: "above", gte: "of at least", eq: "of exactly" };

/**
 * The reason reviewers and the agent read, written from a rule's fields, e.g. "Refunds above EUR 200.00 need 1
 * approval from support-leads." or "Deploys where environment is "production" are refused."
 */
export function ruleReason(rule: {
  tool: string;
  field: string;
  operator: string;
  value: string;
  currency?: string | null;
  effect: string;
  approverGroup?: string | null;
  approvalsRequired: number | string;
  requireJustification?: boolean;
}): string {
  const calls = CALLS[rule.tool] ?? `Calls of ${rule.tool}`;
  let when: string;
  if (isMoneyField(rule.field) && /^\d+$/.test(rule.value) && COMPARE[rule.operator]) {
    const what = rule.field === "amount_cents" ? "" : `${rule.field === "refundable_cents" ? "with a refundable remainder" : "on a total"} `;
    when = `${calls} ${what}${COMPARE[rule.operator]} ${moneyText(Number(rule.value), rule.currency)}`;
  } else if (rule.operator === "prefix") {
    when = `${calls} where ${rule.field} starts with "${rule.value}"`;
  } else if (rule.operator === "eq") {
    when = `${calls} where ${rule.field} is "${rule.value}"`;
  } else {
    when = `${calls} where ${rule.field} ${OPS[rule.operator] ?? rule.operator} ${rule.value}`;
  }
  if (rule.effect !== "requestable") return `${when} are refused.`;
  const n = Number(rule.approvalsRequired);
  const who = `${Number.isInteger(n) && n > 0 ? n : "?"} approval${n === 1 ? "" : "s"} from ${rule.approverGroup || "the approver group"}`;
  return `${when} need ${who}${rule.requireJustification ? " and a justification" : ""}.`;
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
