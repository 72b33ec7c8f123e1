"use server";

import { revalidatePath } from "next/cache";
import { ADMIN_ROLES, authorizeAction } from "@/lib/auth/session";
import { RuleRejected, saveRuleVersion } from "@/lib/policy/save-rule";
import { describeFieldErrors, FIELD_LABELS, ruleFromFields, type RuleFields } from "@/lib/policy/preview";

export type RuleFormState =
  | { status: "idle" }
  | { status: "error"; message: string; fieldErrors: Record<string, string> }
  | { status: "done"; ruleKey: string; version: number };

/** The form's fields as they were typed (strings; checkboxes as "on"). */
function fieldsOf(f: FormData): RuleFields {
  const out: RuleFields = {};
  for (const [k, v] of f.entries()) if (typeof v === "string" && !k.startsWith("$")) out[k] = v;
  out.requireJustification = f.get("requireJustification") === "on";
  out.requirePasskey = f.get("requirePasskey") === "on";
  out.active = f.get("active") === "on";
  return out;
}

/** Saves the form as the next version of its rule key (admins only). The previous version is retired, not changed. */
export async function saveRuleAction(_prev: RuleFormState, formData: FormData): Promise<RuleFormState> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) return { status: "error", message: who.error, fieldErrors: {} };
  const parsed = ruleFromFields(fieldsOf(formData));
  if (!parsed.ok) {
    return { status: "error", message: `The rule was not saved: ${describeFieldErrors(parsed.fieldErrors)}.`, fieldErrors: parsed.fieldErrors };
  }
  let saved;
  try {
    saved = await saveRuleVersion(parsed.rule, who.user.id, new Date());
  } catch (e) {
    if (e instanceof RuleRejected) return { status: "error", message: `The rule was not saved: ${FIELD_LABELS[e.field] ?? e.field}: ${e.message}.`, fieldErrors: { [e.field]: e.message } };
    throw e;
  }
  revalidatePath("/admin/policy");
  revalidatePath(`/admin/policy/${saved.ruleKey}`);
  return { status: "done", ruleKey: saved.ruleKey, version: saved.version };
}
