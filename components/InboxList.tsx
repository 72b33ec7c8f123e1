"use client";

import Link from "next/link";
import { useEffect, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import type { InboxItem, InboxPage } from "@/lib/inbox/inbox";
import { toQuery, type InboxParams } from "@/lib/inbox/params";
import { TimeLeft } from "./TimeLeft";
import { FilterSelect } from "@/components/FilterSelect";
import { DesktopNotifications } from "./DesktopNotifications";
import { inboxTitle, useArrivals } from "./inbox-arrivals";
import { BulkApproval } from "./BulkApproval";
import { KeyboardShortcuts } from "./KeyboardShortcuts";
import { LocalTime } from "./LocalTime";
import type { BulkState } from "@/lib/tasks/approve-many";

export type { InboxItem, InboxPage };

class HttpError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

type Props = {
  initial: InboxPage;
  params: InboxParams;
  tools: string[];
  groups: string[];
  pollMs?: number;
  /** Approves the selected single-approver requests, each on its own (offered when given). */
  bulkApprove?: (items: { requestId: string; argumentsDigest: string }[]) => Promise<BulkState>;
};

const STATUS_LABELS: Record<InboxParams["status"], string> = {
  all: "Any status",
  new: "No approvals yet",
  "partly-approved": "Partly approved",
  "question-open": "Question to requester open",
};

/** The reviewer's inbox: filters, search, sort, keyset pages, refreshed every few seconds from /api/inbox. */
export function InboxList({ initial, params, tools, groups, pollMs = 3_000, bulkApprove }: Props) {
  const query = toQuery(params);
  const { data, error, isFetching, dataUpdatedAt } = useQuery({
    queryKey: ["inbox", query],
    queryFn: async (): Promise<InboxPage> => {
      const res = await fetch(`/api/inbox${query}`, { cache: "no-store", headers: { accept: "application/json" } });
      if (!res.ok) throw new HttpError(res.status);
      return res.json();
    },
    initialData: initial,
    refetchInterval: (q) => (q.state.error instanceof HttpError && q.state.error.status === 401 ? false : pollMs),
    refetchIntervalInBackground: false,
  });

  const signedOut = error instanceof HttpError && error.status === 401;
  const fresh = useArrivals(query, data.items);
  // On every refresh: the page's metadata may set the title again after the first render.
  useEffect(() => {
    document.title = inboxTitle(data.total, data.totalCapped);
  }, [data.total, data.totalCapped, dataUpdatedAt]);
  // Selected for approving together, by id; only rows still on the page count.
  const [chosen, setChosen] = useState<Set<string>>(() => new Set());
  const selected = data.items.filter((i) => i.bulk && chosen.has(i.id));
  const toggle = (id: string, on: boolean) =>
    setChosen((prev) => {
      const next = new Set(prev);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const offerBulk = !!bulkApprove && data.items.some((i) => i.bulk);
  const filtered = !!(params.tool || params.group || params.q || params.status !== "all");
  const base = { tool: params.tool, group: params.group, status: params.status, q: params.q, sort: params.sort };
  const later = params.sort === "expiring" ? "Later deadlines" : "Older";
  const earlier = params.sort === "expiring" ? "Sooner deadlines" : "Newer";

  return (
    <section aria-labelledby="inbox-heading" aria-busy={isFetching}>
      <div className="mb-3 flex flex-wrap items-baseline justify-between gap-2">
        <h1 id="inbox-heading" className="text-xl font-semibold tracking-tight">
          Waiting for you
          <span className="ml-2 text-sm font-normal text-slate-600" data-testid="inbox-total">
            ({data.total}
            {data.totalCapped ? "+" : ""})
          </span>
        </h1>
        <div className="flex flex-wrap items-baseline gap-3">
          <KeyboardShortcuts scope="inbox" />
          <DesktopNotifications />
          <p className="text-xs text-slate-600" aria-live="polite">
            {signedOut ? "" : error ? "Could not refresh; retrying…" : fresh.size > 0 ? `${fresh.size} new since you opened this page` : "Updates automatically"}
          </p>
        </div>
      </div>

      <form method="get" action="/inbox" role="search" aria-label="Filter the inbox" className="mb-4 grid grid-cols-2 gap-2 rounded-lg border border-slate-200 bg-white p-3 sm:grid-cols-[2fr_1fr_1fr_1fr_1fr_auto] sm:items-end">
        <div className="col-span-2 sm:col-span-1">
          <label htmlFor="inbox-q" className="block text-xs font-medium text-slate-700">
            Search
          </label>
          <input
            id="inbox-q"
            name="q"
            type="search"
            defaultValue={params.q ?? ""}
            maxLength={100}
            placeholder="order, account, requester…"
            className="mt-0.5 block w-full rounded-md border border-slate-300 px-2 py-1.5 text-sm"
          />
        </div>
        <FilterSelect id="inbox-tool" name="tool" label="Tool" value={params.tool} anyLabel="All tools" options={tools} />
        <FilterSelect id="inbox-group" name="group" label="Group" value={params.group} anyLabel="All my groups" options={groups} />
        <FilterSelect id="inbox-status" name="status" label="Status" value={params.status} options={Object.entries(STATUS_LABELS)} />
        <FilterSelect id="inbox-sort" name="sort" label="Sort" value={params.sort} options={[["newest", "Newest first"], ["expiring", "Soonest deadline first"]]} />
        <div className="col-span-2 flex gap-2 sm:col-span-1">
          <button type="submit" className="rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-800">
            Apply
          </button>
          {filtered && (
            <Link href={toQuery({ sort: params.sort }) || "/inbox"} className="self-center text-sm text-slate-700 underline">
              Clear
            </Link>
          )}
        </div>
      </form>

      {signedOut && (
        <p role="alert" className="mb-4 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
          Your session has ended.{" "}
          <Link href="/login" className="underline">
            Sign in again
          </Link>{" "}
          to keep reviewing.
        </p>
      )}

      {bulkApprove && <BulkApproval selected={selected} onDone={() => setChosen(new Set())} action={bulkApprove} />}

      {data.items.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 bg-white px-6 py-10 text-center" data-testid="inbox-empty">
          {filtered ? (
            <>
              <p className="font-medium text-slate-800">No waiting requests match these filters.</p>
              <p className="mt-1 text-sm text-slate-700">Clear the filters to see everything waiting for you.</p>
            </>
          ) : (
            <>
              <p className="font-medium text-slate-800">Nothing is waiting for your approval.</p>
              <p className="mt-1 text-sm text-slate-700">
                When an agent asks to run a tool that needs sign-off from one of your groups ({groups.join(", ")}), the request
                appears here by itself — with what it wants to do, who asked, how many approvals it has, and how long is left to
                decide.
              </p>
            </>
          )}
        </div>
      ) : (
        <ul className="space-y-2" aria-label="Approval requests">
          {data.items.map((item) => (
            <li key={item.id} className={offerBulk ? "flex items-start gap-2" : undefined}>
              {offerBulk && (
                <span className="flex w-5 shrink-0 justify-center pt-4">
                  {item.bulk && (
                    <input
                      type="checkbox"
                      checked={chosen.has(item.id)}
                      onChange={(e) => toggle(item.id, e.target.checked)}
                      aria-label={`Select to approve together: ${item.summary}`}
                      className="h-4 w-4 accent-emerald-800"
                      data-testid="bulk-select"
                    />
                  )}
                </span>
              )}
              <Link
                href={`/requests/${item.id}`}
                className={`block min-w-0 flex-1 rounded-lg border px-4 py-3 shadow-sm transition hover:border-indigo-300 hover:shadow focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-700 ${
                  fresh.has(item.id) ? "border-amber-400 bg-amber-50 ring-1 ring-amber-400" : "border-slate-200 bg-white"
                }`}
                data-testid="inbox-item"
                data-new={fresh.has(item.id) ? "true" : undefined}
              >
                <div className="flex flex-wrap items-start justify-between gap-x-4 gap-y-1">
                  <div className="min-w-0">
                    <p className="font-medium text-slate-900 [overflow-wrap:anywhere]">
                      {fresh.has(item.id) && <span className="mr-2 rounded-full bg-amber-200 px-2 py-0.5 text-xs font-semibold text-amber-950">New</span>}
                      <span dir="auto">{item.summary}</span>
                    </p>
                    {item.facts && <p className="mt-0.5 text-sm text-slate-700" data-testid="inbox-facts">{item.facts}</p>}
                    <p className="mt-0.5 text-sm text-slate-700">
                      <span className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-800">{item.tool}</span>
                      <span className="ml-2">
                        asked by <span dir="auto">{item.requesterName}</span> via <span dir="auto">{item.agentName}</span>,{" "}
                        <LocalTime iso={item.createdAt} />
                      </span>
                      <span className="ml-2 text-xs text-slate-600">· {item.approverGroup}</span>
                      {item.escalatedTo && <span className="ml-2 text-xs text-amber-900">escalated to {item.escalatedTo}</span>}
                      {item.taskStatus === "input_required" && (
                        <span className="ml-2 rounded-full bg-sky-50 px-2 py-0.5 text-xs text-sky-900 ring-1 ring-sky-600/20 ring-inset">question open</span>
                      )}
                    </p>
                  </div>
                  <div className="flex shrink-0 items-baseline gap-3 text-sm text-slate-700 sm:block sm:text-right">
                    <p>
                      <span className="font-medium text-slate-900">
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

      {(data.prev || data.next) && (
        <nav aria-label="Inbox pages" className="mt-4 flex flex-wrap items-center justify-between gap-2 text-sm">
          <span className="flex gap-3">
            {data.prev && (
              <>
                <Link href={`/inbox${toQuery(base)}`} className="text-indigo-800 underline">
                  First page
                </Link>
                <Link href={`/inbox${toQuery(base, { before: data.prev })}`} className="text-indigo-800 underline" rel="prev">
                  ← {earlier}
                </Link>
              </>
            )}
          </span>
          {data.next && (
            <Link href={`/inbox${toQuery(base, { after: data.next })}`} className="text-indigo-800 underline" rel="next" data-testid="inbox-next">
              {later} →
            </Link>
          )}
        </nav>
      )}
    </section>
  );
}
