import Link from "next/link";
import type { RequestFacts as Facts } from "@/lib/inbox/facts";
import { Field } from "./Section";

/**
 * The facts that decide a request: the resource as it is now, a flag when the call can no longer run as asked (or
 * not together with the other pending requests), and those other pending requests on the same resource.
 */
export function RequestFacts({ facts }: { facts: Facts }) {
  return (
    <div className="space-y-3" data-testid="request-facts">
      {facts.blocked && (
        <p className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900" data-testid="facts-blocked">
          <strong className="font-semibold">Cannot run as asked:</strong> {facts.blocked}
        </p>
      )}
      {facts.caution && (
        <p className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950" data-testid="facts-caution">
          {facts.caution}
        </p>
      )}
      {facts.facts.length > 0 && (
        <dl>
          {facts.facts.map((f) => (
            <Field key={f.label} label={f.label}>
              {f.value}
            </Field>
          ))}
        </dl>
      )}
      {facts.related.length > 0 && (
        <div data-testid="related-requests">
          <h3 className="text-xs font-semibold tracking-wide text-slate-600 uppercase">Also waiting on the same resource</h3>
          <ul className="mt-1 space-y-1 text-sm">
            {facts.related.map((r) => (
              <li key={r.requestId}>
                <Link href={`/requests/${r.requestId}`} className="text-indigo-800 underline underline-offset-2 [overflow-wrap:anywhere]">
                  {r.summary}
                </Link>
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

/** Whether there is anything to show. */
export function hasFacts(f: Facts | null): f is Facts {
  return !!f && (f.facts.length > 0 || !!f.blocked || !!f.caution || f.related.length > 0);
}
