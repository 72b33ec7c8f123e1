"use server";

import { revalidatePath } from "next/cache";
import { ADMIN_ROLES, authorizeAction } from "@/lib/auth/session";
import { RuleInput, RuleRejected, saveRuleVersion } from "@/lib/policy/save-rule";

export type RuleFormState =
  | { status: "idle" }
  | { status: "error"; message: string; fieldErrors: Record<string, string> }
  | { status: "done"; ruleKey: string; version: number };

const str = (f: FormData, k: string) => {
  const v = f.get(k);
  return typeof v === "string" ? v.trim() : "";
};
const int = (f: FormData, k: string) => {
  const v = str(f, k);
  return /^-?\d+$/.test(v) ? Number(v) : Number.NaN;
};

/** The rule form's fields as `RuleInput` (validated by its zod schema, the same the domain verb applies). */
function ruleFromForm(f: FormData): unknown {
  const effect = str(f, "effect");
  return {
    ruleKey: str(f, "ruleKey"),
    tool: str(f, "tool"),
    description: str(f, "description"),
    field: str(f, "field"),
    operator: str(f, "operator"),
    value: str(f, "value"),
    effect,
    approverGroup: str(f, "approverGroup") || null,
    approvalsRequired: int(f, "approvalsRequired"),
    requestDeadlineSec: int(f, "requestDeadlineSec"),
    approvalValiditySec: int(f, "approvalValiditySec"),
    requireJustification: f.get("requireJustification") === "on",
    reason: str(f, "reason"),
    currency: str(f, "currency") || null,
    active: f.get("active") === "on",
  };
}

/** Saves the form as the next version of its rule key (admins only). The previous version is retired, not changed. */
export async function saveRuleAction(_prev: RuleFormState, formData: FormData): Promise<RuleFormState> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) return { status: "error", message: who.error, fieldErrors: {} };
  const parsed = RuleInput.safeParse(ruleFromForm(formData));
  if (!parsed.success) {
    const fieldErrors: Record<string, string> = {};
    for (const issue of parsed.error.issues) {
      const k = String(issue.path[0] ?? "form");
      fieldErrors[k] ??= issue.code === "invalid_type" && k.endsWith("Sec") ? "a whole number of seconds" : issue.message;
    }
    return { status: "error", message: "The rule was not saved: correct the fields marked below.", fieldErrors };
  }
  let saved;
  try {
    saved = await saveRuleVersion(parsed.data, who.user.id, new Date());
  } catch (e) {
    if (e instanceof RuleRejected) return { status: "error", message: `The rule was not saved: ${e.message}.`, fieldErrors: { [e.field]: e.message } };
    throw e;
  }
  revalidatePath("/admin/policy");
  revalidatePath(`/admin/policy/${saved.ruleKey}`);
  return { status: "done", ruleKey: saved.ruleKey, version: saved.version };
}
