import type { ReactNode } from "react";

/** A credential the server returns once (an agent token, a webhook secret): shown for copying, never again. */
export function ShownOnce({ title, value, testId, children }: { title: ReactNode; value: string; testId: string; children?: ReactNode }) {
  return (
    <div role="status" className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950">
      <p className="font-medium">{title}</p>
      <p className="mt-2 rounded bg-white px-2 py-1 font-mono text-xs break-all text-slate-900 select-all" data-testid={testId}>
        {value}
      </p>
      {children}
    </div>
  );
}
