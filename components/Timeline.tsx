import type { TimelineEntry } from "@/lib/inbox/timeline";
import { LocalTime } from "./LocalTime";

const DOT: Record<TimelineEntry["tone"], string> = {
  neutral: "bg-slate-400",
  pending: "bg-amber-500",
  success: "bg-emerald-600",
  danger: "bg-red-600",
};

/** The task's audit trail in words, oldest first. Quoted text is rendered as text only. */
export function Timeline({ entries }: { entries: TimelineEntry[] }) {
  if (entries.length === 0) return <p className="text-sm text-slate-600">No audit events recorded for this task.</p>;
  return (
    <ol className="space-y-3" data-testid="timeline">
      {entries.map((e) => (
        <li key={e.seq} className="relative pl-5 text-sm">
          <span aria-hidden className={`absolute top-1.5 left-0 h-2.5 w-2.5 rounded-full ${DOT[e.tone]}`} />
          <p className="text-slate-900" dir="auto">{e.title}</p>
          {e.quote && <p dir="auto" className="mt-0.5 border-l-2 border-slate-200 pl-2 whitespace-pre-wrap text-slate-700 [overflow-wrap:anywhere]">{e.quote}</p>}
          <p className="text-xs text-slate-600">
            <LocalTime iso={e.at} /> · <span className="font-mono">{e.type}</span> · #{e.seq}
          </p>
        </li>
      ))}
    </ol>
  );
}
