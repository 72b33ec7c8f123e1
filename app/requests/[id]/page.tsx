import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { ArgumentsTable } from "@/components/ArgumentsTable";
import { AutoRefresh } from "@/components/AutoRefresh";
import { DecisionPanel } from "@/components/DecisionPanel";
import { Notice } from "@/components/Notice";
import { OutcomeBanner } from "@/components/OutcomeBanner";
import { StatusBadge } from "@/components/StatusBadge";
import { TimeLeft } from "@/components/TimeLeft";
import { hasRole, requireUser, VIEW_ROLES } from "@/lib/auth/session";
import { requestFor } from "@/lib/inbox/queries";
import { decideAction } from "./actions";

export const metadata: Metadata = { title: "Approval request" };
export const dynamic = "force-dynamic";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function when(iso: string): string {
  return new Date(iso).toLocaleString("en-GB", {
    timeZone: "UTC",
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
  }) + " UTC";
}

function Section({ title, children, id, className = "" }: { title: string; children: ReactNode; id: string; className?: string }) {
  return (
    <section aria-labelledby={id} className={`min-w-0 rounded-lg border border-slate-200 bg-white p-4 shadow-sm ${className}`}>
      <h2 id={id} className="mb-3 text-sm font-semibold tracking-wide text-slate-500 uppercase">
        {title}
      </h2>
      {children}
    </section>
  );
}

function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="grid grid-cols-[8rem_1fr] gap-2 py-1 text-sm">
      <dt className="text-slate-500">{label}</dt>
      <dd className="min-w-0 break-words text-slate-900">{children}</dd>
    </div>
  );
}

export default async function RequestPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await requireUser();
  if (!hasRole(user, VIEW_ROLES)) {
    return <Notice title="You cannot view approval requests">Only reviewers and admins can open approval requests.</Notice>;
  }
  const now = new Date();
  const req = UUID.test(id) ? await requestFor(id, user, now) : null;
  if (!req) {
    return (
      <Notice title="Request not found">
        It does not exist, or it is addressed to a group you are not in. <Link href="/inbox" className="underline">Back to the inbox</Link>
      </Notice>
    );
  }
  const settled = req.status !== "pending" && (req.status !== "approved" || req.disposition !== null || req.taskStatus === "cancelled" || req.taskStatus === "failed");

  return (
    <div className="space-y-4">
      <AutoRefresh active={!settled} />
      <Link href="/inbox" className="text-sm text-slate-600 hover:text-slate-900">
        ← Inbox
      </Link>

      <header className="space-y-1">
        <div className="flex flex-wrap items-center gap-2">
          <h1 className="text-xl font-semibold tracking-tight" data-testid="request-summary">
            {req.summary}
          </h1>
          <StatusBadge status={req.status} />
        </div>
        <p className="text-sm text-slate-600">
          <span className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-700">{req.tool}</span>
          <span className="ml-2">
            asked by <strong className="font-medium text-slate-800">{req.requesterName}</strong> via{" "}
            <strong className="font-medium text-slate-800">{req.agentName}</strong>, {when(req.createdAt)}
          </span>
        </p>
      </header>

      <OutcomeBanner outcome={req.outcome} testId="request-outcome" />

      <div className="grid gap-4 lg:grid-cols-[3fr_2fr]">
        {/* On a phone the sections stack as: arguments, policy, approvals, decision, record. */}
        <div className="contents lg:block lg:min-w-0 lg:space-y-4">
          <Section title="What the agent wants to run" id="args-heading" className="order-1">
            <ArgumentsTable args={req.arguments} />
            <div className="mt-4 space-y-1">
              <h3 className="text-xs font-medium text-slate-500">Canonical JSON (RFC 8785)</h3>
              <pre
                className="rounded-md bg-slate-900 px-3 py-2 font-mono text-xs break-all whitespace-pre-wrap text-slate-100"
                data-testid="canonical-json"
              >
                {req.canonicalArguments}
              </pre>
              <p className="flex flex-wrap items-center gap-2 text-xs text-slate-600">
                <span className="font-mono break-all" data-testid="arguments-digest">
                  {req.argumentsDigest ?? "no digest recorded"}
                </span>
                {req.digestMatches === true && (
                  <span className="rounded-full bg-emerald-50 px-2 py-0.5 text-emerald-800 ring-1 ring-emerald-600/20 ring-inset">
                    matches the arguments shown
                  </span>
                )}
                {req.digestMatches === false && (
                  <span className="rounded-full bg-red-50 px-2 py-0.5 text-red-800 ring-1 ring-red-600/20 ring-inset">
                    does not match the arguments shown — do not approve
                  </span>
                )}
              </p>
            </div>
          </Section>

          <Section title="Your decision" id="decision-heading" className="order-4">
            <DecisionPanel requestId={req.id} tool={req.tool} cannotAct={req.cannotAct} action={decideAction} />
          </Section>
        </div>

        <div className="contents lg:block lg:min-w-0 lg:space-y-4">
          <Section title="Why it needs approval" id="policy-heading" className="order-2">
            <p className="text-sm text-slate-900">{req.reason || "No reason recorded."}</p>
            <dl className="mt-2">
              <Field label="Policy rule">
                {req.ruleKey ? (
                  <span className="font-mono text-xs">
                    {req.ruleKey} v{req.ruleVersion}
                  </span>
                ) : (
                  "—"
                )}
              </Field>
              <Field label="Approvers">{req.approverGroup}</Field>
              <Field label="Deadline">
                {when(req.deadline)}
                {req.status === "pending" && (
                  <span className="block text-xs text-slate-600">
                    <TimeLeft deadline={req.deadline} serverNow={now.toISOString()} />
                  </span>
                )}
              </Field>
              {req.decidedAt && <Field label="Decided">{when(req.decidedAt)}</Field>}
              {req.statusNote && <Field label="Note">{req.statusNote}</Field>}
            </dl>
          </Section>

          <Section title={`Approvals ${req.approvals} of ${req.approvalsRequired}`} id="reviews-heading" className="order-3">
            {req.reviews.length === 0 ? (
              <p className="text-sm text-slate-600">No one has reviewed this request yet.</p>
            ) : (
              <ol className="space-y-3" data-testid="reviews">
                {req.reviews.map((r) => (
                  <li key={r.id} className="text-sm">
                    <div className="flex flex-wrap items-center gap-2">
                      <span className="font-medium text-slate-900">{r.reviewerName}</span>
                      <StatusBadge status={r.decision} />
                      <span className="text-xs text-slate-500">{when(r.at)}</span>
                    </div>
                    {r.comment && <p className="mt-1 whitespace-pre-wrap break-words text-slate-700">{r.comment}</p>}
                  </li>
                ))}
              </ol>
            )}
          </Section>

          <Section title="Record" id="record-heading" className="order-5">
            <dl>
              <Field label="Request">
                <span className="font-mono text-xs break-all">{req.id}</span>
              </Field>
              <Field label="Task">
                <span className="font-mono text-xs break-all">{req.taskId}</span>
              </Field>
              <Field label="Task status">
                {req.taskStatus ?? "—"}
                {req.disposition && <span className="ml-1 font-mono text-xs">({req.disposition})</span>}
              </Field>
              <Field label="Body digest">
                <span className="font-mono text-xs break-all">{req.bodyDigest}</span>
              </Field>
            </dl>
          </Section>
        </div>
      </div>
    </div>
  );
}
