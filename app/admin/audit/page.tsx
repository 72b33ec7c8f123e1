import type { Metadata } from "next";
import Link from "next/link";
import { FilterProblems } from "@/components/admin/FilterProblems";
import { Notice } from "@/components/Notice";
import { LocalTime } from "@/components/LocalTime";
import { requireRole } from "@/lib/auth/session";
import { auditFilterFrom } from "@/lib/audit/filter-params";
import { auditEventTypes, listAuditEvents } from "@/lib/audit/list-events";
import { verifyAuditChain } from "@/lib/audit/verify";
import { actorNames } from "@/lib/inbox/timeline";

export const metadata: Metadata = { title: "Audit" };
export const dynamic = "force-dynamic";

function qs(params: Record<string, string | undefined>): string {
  const s = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => !!e[1])).toString();
  return s ? `?${s}` : "";
}

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const admin = await requireRole("admin");
  if (!admin) return <Notice title="Admins only">Only admins can read the audit trail.</Notice>;
  const sp = await searchParams;
  const { raw, problems, ...filter } = await auditFilterFrom(sp);
  const beforeRaw = Array.isArray(sp.before) ? sp.before[0] : sp.before;
  const before = beforeRaw && /^\d{1,12}$/.test(beforeRaw) ? Number(beforeRaw) : undefined;
  const [chain, page, types] = await Promise.all([
    verifyAuditChain(),
    problems.length ? { events: [], nextBefore: null } : listAuditEvents(filter, { before }),
    auditEventTypes(),
  ]);
  const names = await actorNames(page.events.map((e) => e.actor));

  return (
    <section aria-labelledby="audit-heading" className="space-y-4">
      <h1 id="audit-heading" className="text-xl font-semibold tracking-tight">
        Audit trail
      </h1>
      <div
        className={`rounded-lg border px-4 py-3 text-sm ${chain.ok ? "border-emerald-200 bg-emerald-50 text-emerald-950" : "border-red-300 bg-red-50 text-red-950"}`}
        data-testid="chain-status"
      >
        {chain.ok ? (
          <p>
            <strong>The hash chain verifies:</strong> {chain.events} events, each linked to the one before; no event was changed or removed.
          </p>
        ) : (
          <p>
            <strong>The hash chain is broken at event #{chain.brokenAt}:</strong> {chain.why}. Events from there on cannot be trusted as recorded.
          </p>
        )}
      </div>

      <form method="get" action="/admin/audit" role="search" aria-label="Filter the audit trail" className="grid grid-cols-2 gap-2 rounded-lg border border-slate-200 bg-white p-3 sm:grid-cols-[1fr_1fr_1fr_auto_auto_auto] sm:items-end">
        <div>
          <label htmlFor="audit-type" className="block text-xs font-medium text-slate-700">Event type</label>
          <select id="audit-type" name="type" defaultValue={raw.type ?? ""} className="mt-0.5 block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm">
            <option value="">All types</option>
            {types.map((t) => (
              <option key={t} value={t}>{t}</option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="audit-actor" className="block text-xs font-medium text-slate-700">Actor (name, email or agent)</label>
          <input id="audit-actor" name="actor" defaultValue={raw.actor ?? ""} placeholder="Tara Treasury, sam@…, ops-bot, system" className="mt-0.5 block w-full rounded-md border border-slate-300 px-2 py-1.5 text-sm" />
        </div>
        <div>
          <label htmlFor="audit-task" className="block text-xs font-medium text-slate-700">Task id</label>
          <input id="audit-task" name="taskId" defaultValue={raw.taskId ?? ""} className="mt-0.5 block w-full rounded-md border border-slate-300 px-2 py-1.5 font-mono text-sm" />
        </div>
        <div>
          <label htmlFor="audit-from" className="block text-xs font-medium text-slate-700">From (UTC)</label>
          <input id="audit-from" name="from" type="date" defaultValue={raw.from ?? ""} className="mt-0.5 block w-full rounded-md border border-slate-300 px-2 py-1.5 text-sm" />
        </div>
        <div>
          <label htmlFor="audit-to" className="block text-xs font-medium text-slate-700">To (UTC)</label>
          <input id="audit-to" name="to" type="date" defaultValue={raw.to ?? ""} className="mt-0.5 block w-full rounded-md border border-slate-300 px-2 py-1.5 text-sm" />
        </div>
        <div className="flex gap-2">
          <button type="submit" className="rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-800">Apply</button>
          {Object.keys(raw).length > 0 && <Link href="/admin/audit" className="self-center text-sm text-slate-700 underline">Clear</Link>}
        </div>
      </form>

      <FilterProblems problems={problems} />

      {problems.length === 0 && (
      <p className="flex flex-wrap gap-3 text-sm">
        <span className="text-slate-700">Export {Object.keys(raw).length ? "the filtered events" : "every event"}:</span>
        <a href={`/admin/audit/export${qs({ ...raw, format: "csv" })}`} download className="font-medium text-indigo-800 underline">
          CSV
        </a>
        <a href={`/admin/audit/export${qs({ ...raw, format: "jsonl" })}`} download className="font-medium text-indigo-800 underline">
          JSON Lines
        </a>
      </p>
      )}

      {problems.length > 0 ? null : page.events.length === 0 ? (
        <p className="rounded-lg border border-dashed border-slate-300 bg-white px-6 py-8 text-center text-sm text-slate-700">No events match these filters.</p>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white" role="region" aria-label="Audit events" tabIndex={0}>
          <table className="w-full min-w-[52rem] text-sm">
            <caption className="sr-only">Audit events, newest first</caption>
            <thead>
              <tr className="border-b border-slate-200 text-left text-xs tracking-wide text-slate-600 uppercase">
                <th scope="col" className="px-3 py-2 font-medium">#</th>
                <th scope="col" className="px-3 py-2 font-medium">When</th>
                <th scope="col" className="px-3 py-2 font-medium">Event</th>
                <th scope="col" className="px-3 py-2 font-medium">Actor</th>
                <th scope="col" className="px-3 py-2 font-medium">Task / request</th>
                <th scope="col" className="px-3 py-2 font-medium">Data</th>
              </tr>
            </thead>
            <tbody>
              {page.events.map((e) => (
                <tr key={e.seq} className="border-b border-slate-100 align-top last:border-0" data-testid="audit-row">
                  <td className="px-3 py-2 font-mono text-xs text-slate-700">{e.seq}</td>
                  <td className="px-3 py-2 text-xs whitespace-nowrap text-slate-700"><LocalTime iso={e.at.toISOString()} /></td>
                  <td className="px-3 py-2 font-mono text-xs text-slate-900">{e.type}</td>
                  <td className="px-3 py-2 text-xs text-slate-800">
                    {names.get(e.actor) ?? e.actor}
                    <span className="block font-mono text-slate-600">{e.actor}</span>
                  </td>
                  <td className="px-3 py-2 font-mono text-xs">
                    {e.requestId ? (
                      <Link href={`/requests/${e.requestId}`} className="text-indigo-800 underline">
                        {e.requestId.slice(0, 8)}
                      </Link>
                    ) : e.taskId ? (
                      <Link href={`/tasks/${e.taskId}`} className="text-indigo-800 underline">
                        {e.taskId.slice(0, 8)}
                      </Link>
                    ) : (
                      "—"
                    )}
                  </td>
                  <td className="max-w-md px-3 py-2">
                    <code className="block font-mono text-xs break-all whitespace-pre-wrap text-slate-800">{JSON.stringify(e.data)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav aria-label="Audit pages" className="flex justify-between text-sm">
        {before ? <Link href={`/admin/audit${qs(raw)}`} className="text-indigo-800 underline">Newest events</Link> : <span />}
        {page.nextBefore && (
          <Link href={`/admin/audit${qs({ ...raw, before: String(page.nextBefore) })}`} className="text-indigo-800 underline" rel="next">
            Older events →
          </Link>
        )}
      </nav>
    </section>
  );
}
