import type { Metadata } from "next";
import Link from "next/link";
import { RuleEditor } from "@/components/admin/RuleEditor";
import { Notice } from "@/components/Notice";
import { LocalTime } from "@/components/LocalTime";
import { currentPolicy } from "@/lib/admin/read";
import { requireRole } from "@/lib/auth/session";
import { approverGroups } from "@/lib/inbox/groups";
import { conditionText } from "@/lib/inbox/rule-words";
import { saveRuleAction } from "./actions";

export const metadata: Metadata = { title: "Policy" };
export const dynamic = "force-dynamic";

export default async function PolicyPage() {
  const admin = await requireRole("admin");
  if (!admin) return <Notice title="Admins only">Only admins can edit the policy.</Notice>;
  const [rules, groups] = await Promise.all([currentPolicy(), approverGroups()]);
  const tools = [...new Set(rules.map((r) => r.tool))];

  return (
    <section aria-labelledby="policy-heading" className="space-y-4">
      <div>
        <h1 id="policy-heading" className="text-xl font-semibold tracking-tight">
          Policy
        </h1>
        <p className="mt-1 text-sm text-slate-700">
          Rules are data and versioned: saving a rule makes a new version and retires the previous one, which stays readable.
          Each task keeps the version it was decided under. The whole policy, as Cedar text, is in the{" "}
          <Link href="/admin/policy/advanced" className="text-indigo-800 underline">
            advanced editor
          </Link>
          ; the whole policy as one file, to export or import, on the{" "}
          <Link href="/admin/policy/file" className="text-indigo-800 underline">
            policy file
          </Link>{" "}
          page.
        </p>
      </div>
      {tools.map((tool) => (
        <section key={tool} aria-labelledby={`tool-${tool}`} className="space-y-2">
          <h2 id={`tool-${tool}`} className="font-mono text-sm font-semibold text-slate-800">
            {tool}
          </h2>
          <ul className="space-y-2">
            {rules
              .filter((r) => r.tool === tool)
              .map((r) => (
                <li key={r.ruleKey} className="rounded-lg border border-slate-200 bg-white p-4 shadow-sm" data-testid={`rule-${r.ruleKey}`}>
                  <div className="flex flex-wrap items-baseline justify-between gap-2">
                    <p className="font-medium text-slate-900">
                      {r.description}{" "}
                      <span className="font-mono text-xs text-slate-700" data-testid="rule-current-version">
                        {r.ruleKey} v{r.version}
                      </span>
                      {!r.active && <span className="ml-2 rounded-full bg-slate-100 px-2 py-0.5 text-xs text-slate-800">retired</span>}
                    </p>
                    <Link href={`/admin/policy/${r.ruleKey}`} className="text-sm text-indigo-800 underline">
                      {r.versions} version{r.versions === 1 ? "" : "s"}
                    </Link>
                  </div>
                  <p className="mt-1 text-sm text-slate-700">
                    When <span className="font-mono text-xs">{conditionText(r)}</span>:{" "}
                    {r.effect === "requestable"
                      ? `${r.approvalsRequired} approval${r.approvalsRequired === 1 ? "" : "s"} from ${r.approverGroup}`
                      : "refused"}
                    {r.requireJustification && ", justification required"}. Saved <LocalTime iso={r.createdAt.toISOString()} />.
                  </p>
                  <details className="mt-2">
                    <summary className="cursor-pointer text-sm font-medium text-indigo-800">Edit {r.ruleKey}</summary>
                    <div className="mt-3">
                      <RuleEditor
                        rule={{
                          ruleKey: r.ruleKey,
                          tool: r.tool,
                          version: r.version,
                          description: r.description,
                          field: r.field,
                          operator: r.operator,
                          value: r.value,
                          currency: r.currency ?? null,
                          effect: r.effect,
                          approverGroup: r.approverGroup,
                          approvalsRequired: r.approvalsRequired,
                          requestDeadlineSec: r.requestDeadlineSec,
                          approvalValiditySec: r.approvalValiditySec,
                          requireJustification: r.requireJustification,
                          requirePasskey: r.requirePasskey,
                          escalateAfterSec: r.escalateAfterSec,
                          fallbackGroup: r.fallbackGroup,
                          reason: r.reason,
                          active: r.active,
                        }}
                        groups={groups}
                        action={saveRuleAction}
                      />
                    </div>
                  </details>
                </li>
              ))}
          </ul>
        </section>
      ))}
    </section>
  );
}
