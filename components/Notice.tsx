import type { ReactNode } from "react";

export function Notice({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="rounded-lg border border-slate-200 bg-white px-6 py-8 text-center">
      <h1 className="font-semibold text-slate-900">{title}</h1>
      {children && <p className="mt-1 text-sm text-slate-600">{children}</p>}
    </div>
  );
}
