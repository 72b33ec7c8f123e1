/** Policy rules are data and versioned: the current set is the active version of each rule key. */
import { db } from "../db/client";
import type { Rule } from "./evaluate";

export async function currentRules(tool?: string): Promise<Rule[]> {
  return db().policyRule.findMany({ where: { active: true, ...(tool ? { tool } : {}) }, orderBy: { ruleKey: "asc" } });
}
