const STYLES: Record<string, string> = {
  pending: "bg-amber-50 text-amber-800 ring-amber-600/20",
  approved: "bg-emerald-50 text-emerald-800 ring-emerald-600/20",
  denied: "bg-red-50 text-red-800 ring-red-600/20",
  expired: "bg-slate-100 text-slate-700 ring-slate-500/20",
  cancelled: "bg-slate-100 text-slate-700 ring-slate-500/20",
  failed: "bg-red-50 text-red-800 ring-red-600/20",
  approve: "bg-emerald-50 text-emerald-800 ring-emerald-600/20",
  deny: "bg-red-50 text-red-800 ring-red-600/20",
  "not run": "bg-orange-50 text-orange-900 ring-orange-600/20",
  "outcome unknown": "bg-orange-50 text-orange-900 ring-orange-600/20",
};

const LABELS: Record<string, string> = { approve: "approved", deny: "denied" };

/** A small status pill; the text always carries the meaning, the colour only repeats it. */
export function StatusBadge({ status }: { status: string }) {
  const style = STYLES[status] ?? "bg-slate-100 text-slate-700 ring-slate-500/20";
  return (
    <span className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${style}`}>
      {LABELS[status] ?? status}
    </span>
  );
}
