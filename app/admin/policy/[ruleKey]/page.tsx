import type { Metadata } from "next";
import Link from "next/link";
import { Notice } from "@/components/Notice";
import { formatDurationSec } from "@/components/when";
import { LocalTime } from "@/components/LocalTime";
import { ruleVersions, userNames } from "@/lib/admin/read";
import { requireRole } from "@/lib/auth/session";
import { conditionText } from "@/lib/inbox/rule-words";

export const metadata: Metadata = { title: "Rule versions" };
export const dynamic = "force-dynamic";

export default async function RuleVersionsPage({ params }: { params: Promise<{ ruleKey: string }> }) {
  const admin = await requireRole("admin");
  if (!admin) return <Notice title="Admins only">Only admins can read the policy history.</Notice>;
  const { ruleKey } = await params;
  const versions = /^[a-z0-9][a-z0-9-]{1,60}$/.test(ruleKey) ? await ruleVersions(ruleKey) : [];
  if (versions.length === 0) return <Notice title="No such rule">There is no rule with this key.</Notice>;
  const names = await userNames(versions.map((v) => v.createdBy ?? "").filter(Boolean));

  return (
    <section aria-labelledby="versions-heading" className="space-y-4">
      <Link href="/admin/policy" className="text-sm text-slate-700 underline-offset-2 hover:underline">
        ← Policy
      </Link>
      <h1 id="versions-heading" className="text-xl font-semibold tracking-tight">
        <span className="font-mono">{ruleKey}</span>: every version
      </h1>
      <ol className="space-y-2">
        {versions.map((v) => (
          <li key={v.id} className="rounded-lg border border-slate-200 bg-white p-4 text-sm shadow-sm" data-testid="rule-version">
            <p className="font-medium text-slate-900">
              v{v.version} {v.active ? <span className="ml-1 rounded-full bg-emerald-50 px-2 py-0.5 text-xs text-emerald-900">current</span> : <span className="ml-1 rounded-full bg-slate-100 px-2 py-0.5 text-xs text-slate-800">retired</span>}
            </p>
            <dl className="mt-2 grid gap-x-6 gap-y-1 sm:grid-cols-2">
              <div><dt className="inline text-slate-600">Condition: </dt><dd className="inline font-mono text-xs">{conditionText(v)}</dd></div>
              <div><dt className="inline text-slate-600">Effect: </dt><dd className="inline">{v.effect}</dd></div>
              <div><dt className="inline text-slate-600">Approvers: </dt><dd className="inline">{v.effect === "requestable" ? `${v.approvalsRequired} from ${v.approverGroup}` : "—"}</dd></div>
              <div><dt className="inline text-slate-600">Request deadline: </dt><dd className="inline">{formatDurationSec(v.requestDeadlineSec)}</dd></div>
              <div><dt className="inline text-slate-600">Approval validity: </dt><dd className="inline">{formatDurationSec(v.approvalValiditySec)}</dd></div>
              <div><dt className="inline text-slate-600">Justification: </dt><dd className="inline">{v.requireJustification ? "required" : "not required"}</dd></div>
              <div className="sm:col-span-2"><dt className="inline text-slate-600">Reason: </dt><dd className="inline">{v.reason}</dd></div>
              <div className="sm:col-span-2"><dt className="inline text-slate-600">Saved: </dt><dd className="inline"><LocalTime iso={v.createdAt.toISOString()} /> by {v.createdBy === "seed" ? "the demo seed" : (names.get(v.createdBy ?? "") ?? v.createdBy ?? "unknown")}</dd></div>
            </dl>
          </li>
        ))}
      </ol>
    </section>
  );
}
