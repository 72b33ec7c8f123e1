import type { Metadata } from "next";
import Link from "next/link";
import { Notice } from "@/components/Notice";
import { OUTCOME_LABELS, OutcomeBadge } from "@/components/OutcomeBadge";
import { LocalTime } from "@/components/LocalTime";
import { hasRole, requireUser, VIEW_ROLES } from "@/lib/auth/session";
import { historyPage } from "@/lib/inbox/history";
import { OUTCOMES, toQuery } from "@/lib/inbox/params";
import { historyFiltersFrom } from "@/lib/admin/filters";
import { FilterProblems } from "@/components/admin/FilterProblems";
import { listTools } from "@/lib/tools/catalog";
import { approverGroups } from "@/lib/inbox/groups";
import { FilterSelect } from "@/components/FilterSelect";

export const metadata: Metadata = { title: "History" };
export const dynamic = "force-dynamic";

export default async function HistoryPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const user = await requireUser();
  if (!hasRole(user, VIEW_ROLES)) {
    return <Notice title="No history for this account">Only reviewers and admins can read decided requests.</Notice>;
  }
  const sp = await searchParams;
  const { filters: params, problems } = await historyFiltersFrom(sp);
  const text = (k: string) => {
    const v = sp[k];
    return (Array.isArray(v) ? v[0] : v)?.trim() || undefined;
  };
  const raw = { reviewer: text("reviewer"), from: text("from"), to: text("to") };
  const page = problems.length ? { items: [], next: null, prev: null } : await historyPage(user, params);
  const tools = listTools().map((t) => t.name);
  const groups = user.role === "admin" ? await approverGroups() : user.groups;
  const base = { tool: params.tool, group: params.group, outcome: params.outcome, q: params.q, ...raw };
  const filtered = Object.values(base).some(Boolean) || problems.length > 0;

  return (
    <section aria-labelledby="history-heading" className="space-y-4">
      <h1 id="history-heading" className="text-xl font-semibold tracking-tight">
        History
      </h1>
      <p className="text-sm text-slate-700">
        Decided requests {user.role === "admin" ? "of every group" : `of your groups (${user.groups.join(", ") || "none"})`}, newest decision first, and what came of them.
      </p>

      <form method="get" action="/history" role="search" aria-label="Filter the history" className="grid grid-cols-2 gap-2 rounded-lg border border-slate-200 bg-white p-3 sm:grid-cols-4 sm:items-end">
        <div className="col-span-2 sm:col-span-1">
          <label htmlFor="history-q" className="block text-xs font-medium text-slate-700">
            Search
          </label>
          <input id="history-q" name="q" type="search" maxLength={100} defaultValue={params.q ?? ""} className="mt-0.5 block w-full rounded-md border border-slate-300 px-2 py-1.5 text-sm" />
        </div>
        <FilterSelect id="history-tool" name="tool" label="Tool" value={params.tool} anyLabel="All tools" options={tools} />
        <FilterSelect id="history-group" name="group" label="Group" value={params.group} anyLabel="All groups" options={groups} />
        <FilterSelect id="history-outcome" name="outcome" label="Outcome" value={params.outcome} anyLabel="Any outcome" options={OUTCOMES.map((o) => [o, OUTCOME_LABELS[o]] as const)} />
        <div className="col-span-2 sm:col-span-1">
          <label htmlFor="history-reviewer" className="block text-xs font-medium text-slate-700">
            Reviewer (name or email)
          </label>
          <input id="history-reviewer" name="reviewer" maxLength={100} defaultValue={raw.reviewer ?? ""} className="mt-0.5 block w-full rounded-md border border-slate-300 px-2 py-1.5 text-sm" />
        </div>
        {(["from", "to"] as const).map((k) => (
          <div key={k}>
            <label htmlFor={`history-${k}`} className="block text-xs font-medium text-slate-700">
              Decided {k} (UTC)
            </label>
            <input id={`history-${k}`} name={k} type="date" defaultValue={raw[k] ?? ""} className="mt-0.5 block w-full rounded-md border border-slate-300 px-2 py-1.5 text-sm" />
          </div>
        ))}
        <div className="col-span-2 flex gap-2 sm:col-span-1">
          <button type="submit" className="rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-800">
            Apply
          </button>
          {filtered && (
            <Link href="/history" className="self-center text-sm text-slate-700 underline">
              Clear
            </Link>
          )}
        </div>
      </form>

      <FilterProblems problems={problems} />

      {problems.length > 0 ? null : page.items.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 bg-white px-6 py-10 text-center" data-testid="history-empty">
          <p className="font-medium text-slate-800">{filtered ? "No decided requests match these filters." : "No request has been decided yet."}</p>
          <p className="mt-1 text-sm text-slate-700">Requests appear here once they are approved, denied, expired or cancelled.</p>
        </div>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white" role="region" aria-label="Decided requests" tabIndex={0}>
          <table className="w-full min-w-[44rem] text-sm">
            <caption className="sr-only">Decided requests, newest decision first</caption>
            <thead>
              <tr className="border-b border-slate-200 text-left text-xs tracking-wide text-slate-600 uppercase">
                <th scope="col" className="px-3 py-2 font-medium">Decided</th>
                <th scope="col" className="px-3 py-2 font-medium">Request</th>
                <th scope="col" className="px-3 py-2 font-medium">Requester</th>
                <th scope="col" className="px-3 py-2 font-medium">Rule</th>
                <th scope="col" className="px-3 py-2 font-medium">Approvals</th>
                <th scope="col" className="px-3 py-2 font-medium">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((r) => (
                <tr key={r.id} className="border-b border-slate-100 align-top last:border-0" data-testid="history-item">
                  <td className="px-3 py-2 text-xs text-slate-700"><LocalTime iso={r.decidedAt} /></td>
                  <td className="px-3 py-2">
                    <Link href={`/requests/${r.id}`} className="font-medium text-indigo-800 underline-offset-2 hover:underline [overflow-wrap:anywhere]">
                      <bdi>{r.summary}</bdi>
                    </Link>
                    <span className="block font-mono text-xs text-slate-600">{r.tool}</span>
                  </td>
                  <td className="px-3 py-2 text-slate-800">
                    <bdi>{r.requesterName}</bdi>
                    <span className="block text-xs text-slate-600">via {r.agentName}</span>
                  </td>
                  <td className="px-3 py-2 font-mono text-xs text-slate-800">{r.ruleKey ? `${r.ruleKey} v${r.ruleVersion}` : "—"}</td>
                  <td className="px-3 py-2 text-slate-800">
                    {r.approvals} / {r.approvalsRequired}
                    <span className="block text-xs text-slate-600">{r.approverGroup}</span>
                  </td>
                  <td className="px-3 py-2">
                    <OutcomeBadge outcome={r.outcome} />
                    {r.disposition && <span className="mt-0.5 block font-mono text-xs text-slate-600">{r.disposition}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      {(page.prev || page.next) && (
        <nav aria-label="History pages" className="flex flex-wrap items-center justify-between gap-2 text-sm">
          <span className="flex gap-3">
            {page.prev && (
              <>
                <Link href={`/history${toQuery(base)}`} className="text-indigo-800 underline">
                  First page
                </Link>
                <Link href={`/history${toQuery(base, { before: page.prev })}`} className="text-indigo-800 underline" rel="prev">
                  ← Newer
                </Link>
              </>
            )}
          </span>
          {page.next && (
            <Link href={`/history${toQuery(base, { after: page.next })}`} className="text-indigo-800 underline" rel="next">
              Older →
            </Link>
          )}
        </nav>
      )}
    </section>
  );
}
