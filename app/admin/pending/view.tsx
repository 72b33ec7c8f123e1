import { PendingTable } from "@/components/admin/PendingTable";
import { pendingAcrossGroups } from "@/lib/admin/pending";

/** The all-pending view (a server component): where admins land, at /admin/pending and in place of an inbox. */
export async function AllPending() {
  const { rows, more } = await pendingAcrossGroups(new Date());
  const items = rows.map(({ waitingOn, createdAt: _c, taskId: _t, deadline, ...r }) => ({ ...r, ...waitingOn, deadline: deadline.toISOString() }));
  const groups = new Set(rows.map((r) => r.waitingOn.approverGroup));
  return (
    <section aria-labelledby="pending-heading" className="space-y-4">
      <h1 id="pending-heading" className="text-xl font-semibold tracking-tight">
        Pending requests
      </h1>
      <p className="text-sm text-slate-700" data-testid="pending-summary">
        {rows.length === 0
          ? "Every group's requests waiting for a decision appear here."
          : `${rows.length}${more ? "+" : ""} request${rows.length === 1 ? "" : "s"} waiting in ${groups.size} group${groups.size === 1 ? "" : "s"}, soonest deadline first, with whom each waits on.`}
      </p>
      <PendingTable items={items} />
    </section>
  );
}
