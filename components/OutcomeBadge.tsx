import type { Outcome } from "@/lib/inbox/params";

const STYLES: Record<Outcome, string> = {
  executed: "bg-emerald-50 text-emerald-900 ring-emerald-600/30",
  denied: "bg-red-50 text-red-900 ring-red-600/30",
  expired: "bg-slate-100 text-slate-800 ring-slate-500/30",
  cancelled: "bg-slate-100 text-slate-800 ring-slate-500/30",
  error: "bg-red-50 text-red-900 ring-red-600/30",
  unknown: "bg-orange-50 text-orange-900 ring-orange-600/30",
  "in-progress": "bg-amber-50 text-amber-900 ring-amber-600/30",
};

export const OUTCOME_LABELS: Record<Outcome, string> = {
  executed: "executed",
  denied: "denied",
  expired: "expired",
  cancelled: "cancelled",
  error: "error",
  unknown: "outcome unknown",
  "in-progress": "approved, running",
};

/** What came of a decided request; the text carries the meaning, the colour only repeats it. */
export function OutcomeBadge({ outcome }: { outcome: Outcome }) {
  return (
    <span className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset ${STYLES[outcome]}`} data-testid="outcome">
      {OUTCOME_LABELS[outcome]}
    </span>
  );
}
