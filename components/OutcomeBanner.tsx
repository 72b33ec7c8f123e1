import type { Outcome } from "@/lib/inbox/outcome";

const TONES: Record<Outcome["tone"], string> = {
  pending: "border-amber-200 bg-amber-50 text-amber-900",
  success: "border-emerald-200 bg-emerald-50 text-emerald-900",
  danger: "border-red-200 bg-red-50 text-red-900",
  warning: "border-orange-200 bg-orange-50 text-orange-900",
  neutral: "border-slate-200 bg-slate-100 text-slate-800",
};

/** Where the request stands, in words. `live` announces changes to screen readers. */
export function OutcomeBanner({ outcome, live = false, testId }: { outcome: Outcome; live?: boolean; testId?: string }) {
  return (
    <div
      className={`rounded-lg border px-4 py-3 ${TONES[outcome.tone]}`}
      role={live ? "status" : undefined}
      aria-live={live ? "polite" : undefined}
      data-testid={testId}
    >
      <p className="font-medium">{outcome.title}</p>
      {outcome.detail && <p className="mt-0.5 text-sm opacity-90">{outcome.detail}</p>}
    </div>
  );
}
