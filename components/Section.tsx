import type { ReactNode } from "react";

export function Section({ title, children, id, className = "", testId }: { title: ReactNode; children: ReactNode; id: string; className?: string; testId?: string }) {
  return (
    <section aria-labelledby={id} className={`min-w-0 rounded-lg border border-slate-200 bg-white p-4 shadow-sm ${className}`} data-testid={testId}>
      <h2 id={id} className="mb-3 text-sm font-semibold tracking-wide text-slate-600 uppercase">
        {title}
      </h2>
      {children}
    </section>
  );
}

export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="grid grid-cols-[9rem_1fr] gap-2 py-1 text-sm">
      <dt className="text-slate-600">{label}</dt>
      <dd className="min-w-0 break-words text-slate-900">{children}</dd>
    </div>
  );
}
