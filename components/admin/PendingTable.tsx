import Link from "next/link";
import { LocalTime } from "@/components/LocalTime";
import type { PendingRow, WaitingOn } from "@/lib/admin/pending";

/** One pending request as the table shows it: the row, whom it waits on, and its deadline as an ISO string. */
export type PendingItem = Omit<PendingRow, "waitingOn" | "createdAt" | "taskId" | "deadline"> & WaitingOn & { deadline: string };

/** Every request still waiting, across groups, and whom each waits on: the group, approvals still needed, eligible people. */
export function PendingTable({ items }: { items: PendingItem[] }) {
  if (items.length === 0) {
    return (
      <p className="rounded-lg border border-dashed border-slate-300 bg-white px-6 py-8 text-center text-sm text-slate-700" data-testid="pending-empty">
        Nothing is waiting for a decision.
      </p>
    );
  }
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white" role="region" aria-label="Pending requests" tabIndex={0}>
      <table className="w-full min-w-[52rem] text-sm">
        <caption className="sr-only">Pending requests of every group, soonest deadline first</caption>
        <thead>
          <tr className="border-b border-slate-200 text-left text-xs tracking-wide text-slate-600 uppercase">
            <th scope="col" className="px-3 py-2 font-medium">Request</th>
            <th scope="col" className="px-3 py-2 font-medium">Requester</th>
            <th scope="col" className="px-3 py-2 font-medium">Waits on</th>
            <th scope="col" className="px-3 py-2 font-medium">Who may approve</th>
            <th scope="col" className="px-3 py-2 font-medium">Deadline</th>
          </tr>
        </thead>
        <tbody>
          {items.map((r) => (
            <tr key={r.id} className="border-b border-slate-100 align-top last:border-0" data-testid="pending-item">
              <td className="px-3 py-2">
                <Link href={`/requests/${r.id}`} dir="auto" className="font-medium text-indigo-800 underline-offset-2 hover:underline [overflow-wrap:anywhere]">
                  {r.summary}
                </Link>
                <span className="block font-mono text-xs text-slate-600">{r.tool}</span>
                {r.questionOpen && <span className="block text-xs text-amber-900">question to the requester open</span>}
              </td>
              <td className="px-3 py-2 text-slate-800">
                <span dir="auto">{r.requesterName}</span>
                <span className="block text-xs text-slate-600">via {r.agentName}</span>
              </td>
              <td className="px-3 py-2 text-slate-800" data-testid="waits-on">
                <span className="font-medium">{r.offeredTo.join(" or ")}</span>
                {r.offeredTo.length > 1 && <span className="block text-xs text-slate-600">escalated to {r.offeredTo.slice(1).join(", ")}</span>}
                <span className="block text-xs text-slate-700">
                  {r.stillNeeded} more approval{r.stillNeeded === 1 ? "" : "s"} needed ({r.approvals} of {r.approvalsRequired} given)
                </span>
              </td>
              <td className="px-3 py-2 text-slate-800" data-testid="eligible">
                {r.eligible.length === 0 ? (
                  <span className="font-medium text-red-800">Nobody can approve it</span>
                ) : (
                  <ul className="space-y-0.5">
                    {r.eligible.map((p) => (
                      <li key={p.email}>
                        {p.name} <span className="text-xs text-slate-600">{p.email}</span>
                      </li>
                    ))}
                  </ul>
                )}
                {r.stuck && r.eligible.length > 0 && <span className="mt-1 block text-xs font-medium text-red-800">Fewer people may approve than approvals are needed</span>}
              </td>
              <td className="px-3 py-2 text-xs text-slate-700"><LocalTime iso={r.deadline} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
