"use client";

import { useMutation } from "@tanstack/react-query";
import type { Impact } from "@/lib/policy/impact";

type ImpactOk = Extract<Impact, { ok: true }>;
type Problem = { message: string; line?: number; column?: number };

class ImpactError extends Error {
  constructor(
    message: string,
    readonly problems: Problem[] = [],
  ) {
    super(message);
  }
}

const OUTCOME: Record<string, string> = { allow: "runs at once", requestable: "needs approval", deny: "refused" };

/**
 * Preview against reality: what the draft would have decided for the calls of the last 30 days and for every
 * pending request, beside what the current version decides. `body` is what /api/admin/policy/impact takes.
 */
export function ImpactPanel({ body, label = "Preview against the last 30 days", headingLevel = 3 }: { body: () => unknown; label?: string; headingLevel?: 2 | 3 }) {
  const Heading = headingLevel === 2 ? "h2" : "h3";
  const impact = useMutation({
    mutationFn: async (): Promise<ImpactOk> => {
      const res = await fetch("/api/admin/policy/impact", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body()),
      });
      const json = await res.json().catch(() => ({}));
      if (!res.ok) throw new ImpactError(json.error ?? `Preview failed (HTTP ${res.status}).`, json.problems ?? []);
      return json as ImpactOk;
    },
  });
  const d = impact.data;
  return (
    <div className="rounded-md border border-slate-200 bg-slate-50 p-3">
      <Heading className="text-sm font-medium text-slate-800">Against reality</Heading>
      <p className="text-xs text-slate-700">
        What this draft would have decided for the calls of the last 30 days and for every pending request, compared with the current version. Nothing is saved.
      </p>
      <button
        type="button"
        onClick={() => impact.mutate()}
        disabled={impact.isPending}
        className="mt-2 rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-800 hover:bg-slate-100 disabled:opacity-60"
      >
        {impact.isPending ? "Checking…" : label}
      </button>
      <div aria-live="polite" className="mt-2 text-sm" data-testid="impact">
        {impact.isError && (
          <div className="text-red-800">
            <p>{impact.error.message}</p>
            {impact.error instanceof ImpactError && impact.error.problems.length > 0 && (
              <ul className="list-disc pl-5">
                {impact.error.problems.map((p, i) => (
                  <li key={i}>
                    {p.line ? `Line ${p.line}, column ${p.column}: ` : ""}
                    {p.message}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        {d && (
          <div className="space-y-2">
            <p className="font-medium text-slate-900" data-testid="impact-sentence">
              {d.sentence}
            </p>
            {(d.calls.skipped > 0 || d.pending.skipped > 0) && (
              <p className="text-xs text-slate-700">
                Left out: {d.calls.skipped} call{d.calls.skipped === 1 ? "" : "s"} and {d.pending.skipped} pending request{d.pending.skipped === 1 ? "" : "s"} (recorded
                before previews, a tool no longer offered, a revoked agent, or a resource that no longer reads).
              </p>
            )}
            {d.changes.length > 0 && (
              <table className="w-full text-left text-xs">
                <caption className="sr-only">Calls and pending requests this draft decides differently</caption>
                <thead>
                  <tr className="text-slate-700">
                    <th scope="col" className="py-1 pr-2 font-medium">
                      What
                    </th>
                    <th scope="col" className="py-1 pr-2 font-medium">
                      Tool
                    </th>
                    <th scope="col" className="py-1 pr-2 font-medium">
                      Summary
                    </th>
                    <th scope="col" className="py-1 font-medium">
                      Before → after
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {d.changes.map((c) => (
                    <tr key={`${c.source}-${c.id}`} className="border-t border-slate-200" data-testid="impact-change">
                      <td className="py-1 pr-2">{c.source === "call" ? `call, ${new Date(c.at).toISOString().slice(0, 16).replace("T", " ")} UTC` : "pending request"}</td>
                      <td className="py-1 pr-2 font-mono">{c.tool}</td>
                      <td className="py-1 pr-2 break-all">{c.summary}</td>
                      <td className="py-1">
                        <span title={c.beforeText}>{OUTCOME[c.before]}</span> → <span title={c.afterText}>{c.afterText}</span>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {!d.listedAll && <p className="text-xs text-slate-700">Only the first {d.changes.length} changes are listed.</p>}
          </div>
        )}
      </div>
    </div>
  );
}
