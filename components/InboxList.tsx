"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { TimeLeft } from "./TimeLeft";

export type InboxItem = {
  id: string;
  tool: string;
  summary: string;
  requesterName: string;
  agentName: string;
  approverGroup: string;
  approvals: number;
  approvalsRequired: number;
  createdAt: string;
  deadline: string;
};

export type InboxData = { now: string; items: InboxItem[] };

class HttpError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

async function fetchInbox(): Promise<InboxData> {
  const res = await fetch("/api/inbox", { cache: "no-store", headers: { accept: "application/json" } });
  if (!res.ok) throw new HttpError(res.status);
  return res.json();
}

/** The reviewer's inbox, refreshed every few seconds from /api/inbox. */
export function InboxList({ initial, pollMs = 3_000 }: { initial: InboxData; pollMs?: number }) {
  const { data, error, isFetching } = useQuery({
    queryKey: ["inbox"],
    queryFn: fetchInbox,
    initialData: initial,
    refetchInterval: (q) => (q.state.error instanceof HttpError && q.state.error.status === 401 ? false : pollMs),
    refetchIntervalInBackground: false,
  });

  const signedOut = error instanceof HttpError && error.status === 401;

  return (
    <section aria-labelledby="inbox-heading" aria-busy={isFetching}>
      <div className="mb-4 flex items-baseline justify-between gap-2">
        <h1 id="inbox-heading" className="text-xl font-semibold tracking-tight">
          Waiting for you
          <span className="ml-2 text-sm font-normal text-slate-500">({data.items.length})</span>
        </h1>
        <p className="text-xs text-slate-500" aria-live="polite">
          {signedOut ? "" : error ? "Could not refresh; retrying…" : "Updates automatically"}
        </p>
      </div>

      {signedOut && (
        <p role="alert" className="mb-4 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
          Your session has ended. <Link href="/login" className="underline">Sign in again</Link> to keep reviewing.
        </p>
      )}

      {data.items.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 bg-white px-6 py-10 text-center" data-testid="inbox-empty">
          <p className="font-medium text-slate-800">Nothing is waiting for your approval.</p>
          <p className="mt-1 text-sm text-slate-600">
            When an agent asks to run a tool that needs sign-off from one of your groups, the request appears here —
            with what it wants to do, who asked, and how long is left to decide.
          </p>
        </div>
      ) : (
        <ul className="space-y-2" aria-label="Approval requests">
          {data.items.map((item) => (
            <li key={item.id}>
              <Link
                href={`/requests/${item.id}`}
                className="block rounded-lg border border-slate-200 bg-white px-4 py-3 shadow-sm transition hover:border-indigo-300 hover:shadow"
                data-testid="inbox-item"
              >
                <div className="flex flex-wrap items-start justify-between gap-x-4 gap-y-1">
                  <div className="min-w-0">
                    <p className="truncate font-medium text-slate-900">{item.summary}</p>
                    <p className="mt-0.5 text-sm text-slate-600">
                      <span className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-700">{item.tool}</span>
                      <span className="ml-2">
                        asked by {item.requesterName} via {item.agentName}
                      </span>
                    </p>
                  </div>
                  <div className="flex shrink-0 items-baseline gap-3 text-sm text-slate-600 sm:block sm:text-right">
                    <p>
                      <span className="font-medium text-slate-800">
                        {item.approvals} / {item.approvalsRequired}
                      </span>{" "}
                      approvals
                    </p>
                    <p className="text-xs">
                      <TimeLeft deadline={item.deadline} serverNow={data.now} />
                    </p>
                  </div>
                </div>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
