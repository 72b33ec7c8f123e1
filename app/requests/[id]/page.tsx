import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { ArgumentsTable } from "@/components/ArgumentsTable";
import { AskPanel } from "@/components/AskPanel";
import { AutoRefresh } from "@/components/AutoRefresh";
import { Countdown } from "@/components/Countdown";
import { DecisionPanel } from "@/components/DecisionPanel";
import { KeyboardShortcuts } from "@/components/KeyboardShortcuts";
import { NextRequestLink } from "@/components/NextRequestLink";
import { Notice } from "@/components/Notice";
import { OutcomeBanner } from "@/components/OutcomeBanner";
import { hasFacts, RequestFacts } from "@/components/RequestFacts";
import { Field, Section } from "@/components/Section";
import { StatusBadge } from "@/components/StatusBadge";
import { Timeline } from "@/components/Timeline";
import { formatDurationSec, formatWhen } from "@/components/when";
import { LocalTime } from "@/components/LocalTime";
import { hasRole, requireUser, VIEW_ROLES } from "@/lib/auth/session";
import { SealedRecordError } from "@/lib/crypto/seal";
import { requestFor } from "@/lib/inbox/queries";
import { conditionText } from "@/lib/inbox/rule-words";
import { askAction, decideAction, passkeyChallengeAction } from "./actions";
import { listPasskeys } from "@/lib/passkeys/registration";

export const metadata: Metadata = { title: "Approval request" };
export const dynamic = "force-dynamic";

const UNREADABLE = Symbol("unreadable");
/** A sealed record that does not open (lib/db/sealed.ts) is an error on the page, never wrong data. */
function unreadable(e: unknown): typeof UNREADABLE {
  if (e instanceof SealedRecordError) return UNREADABLE;
  throw e;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export default async function RequestPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await requireUser();
  if (!hasRole(user, VIEW_ROLES)) {
    return <Notice title="You cannot view approval requests">Only reviewers and admins can open approval requests.</Notice>;
  }
  const now = new Date();
  const serverNow = now.toISOString();
  const req = UUID.test(id) ? await requestFor(id, user, now).catch(unreadable) : null;
  if (req === UNREADABLE) {
    return (
      <Notice title="This request cannot be shown">
        Its stored record failed its integrity check, so nothing from it is shown and it cannot be decided. The call will not
        run. Tell an administrator.
      </Notice>
    );
  }
  // Unknown, malformed and foreign ids alike: 404 with the same page (./not-found.tsx).
  if (!req) notFound();
  const remaining = Math.max(req.approvalsRequired - req.approvals, 0);

  return (
    <div className={`space-y-4 ${req.cannotAct === null ? "pb-36 lg:pb-0" : ""}`}>
      <AutoRefresh active={!req.settled} ms={3_000} />
      <div className="flex items-baseline justify-between gap-4">
        <Link href={req.status === "pending" ? "/inbox" : "/history"} className="text-sm text-slate-700 underline-offset-2 hover:underline">
          ← {req.status === "pending" ? "Inbox" : "History"}
        </Link>
        {user.role === "reviewer" && <KeyboardShortcuts scope="request" requestId={req.id} />}
      </div>

      <header className="space-y-1">
        <div className="flex flex-wrap items-center gap-2">
          <h1 dir="auto" className="text-xl font-semibold tracking-tight [overflow-wrap:anywhere]" data-testid="request-summary">
            {req.summary}
          </h1>
          <StatusBadge status={req.badge} />
        </div>
        <p className="text-sm text-slate-700">
          <span className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-800">{req.tool}</span>
          <span className="ml-2">
            asked by <strong className="font-medium text-slate-900">{req.requesterName}</strong> via{" "}
            <strong className="font-medium text-slate-900">{req.agentName}</strong>, <LocalTime iso={req.createdAt} />
          </span>
        </p>
      </header>

      <OutcomeBanner outcome={req.outcome} testId="request-outcome" />

      {req.toolStanding && (
        <p role="status" className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950" data-testid="tool-standing">
          {req.toolStanding}
        </p>
      )}

      <div className="grid gap-4 lg:grid-cols-[3fr_2fr]">
        {/*
          On a phone the sections stack as: the facts that decide, the call, the decision (its buttons stay in a bar
          at the bottom of the screen), clocks, policy, approvals, questions, timeline, record; digests and ids are folded.
        */}
        <div className="contents lg:block lg:min-w-0 lg:space-y-4">
          {req.status === "pending" && hasFacts(req.facts) && (
            <Section title="As it is now" id="facts-heading" className="order-1" testId="facts">
              <RequestFacts facts={req.facts} />
            </Section>
          )}
          <Section title="What the agent wants to run" id="args-heading" className="order-2">
            {req.redacted ? (
              <p className="text-sm text-slate-700">The arguments were deleted at the end of the task&apos;s retention; the digest below remains.</p>
            ) : (
              <ArgumentsTable args={req.arguments} />
            )}
            {req.digestMatches === false && (
              <p className="mt-3 rounded-md bg-red-50 px-3 py-2 text-sm text-red-900 ring-1 ring-red-600/20 ring-inset" data-testid="digest-mismatch">
                The recorded digest does not match the arguments shown — do not approve.
              </p>
            )}
            <details className="mt-4 rounded-md border border-slate-200 px-3 py-2" data-testid="digest-details">
              <summary className="cursor-pointer text-sm text-slate-700">
                Canonical JSON and digest
                {req.digestMatches === true && <span className="ml-2 text-xs text-emerald-900">(matches the arguments shown)</span>}
              </summary>
              <div className="mt-2 space-y-1">
                {!req.redacted && (
                  <>
                    <h3 className="text-xs font-medium text-slate-600">Canonical JSON (RFC 8785)</h3>
                    <pre
                      className="rounded-md bg-slate-900 px-3 py-2 font-mono text-xs break-all whitespace-pre-wrap text-slate-100"
                      data-testid="canonical-json"
                    >
                      {req.canonicalArguments}
                    </pre>
                  </>
                )}
                <p className="text-xs text-slate-700">
                  <span className="font-mono break-all" data-testid="arguments-digest">
                    {req.argumentsDigest ?? "no digest recorded"}
                  </span>
                </p>
              </div>
            </details>
            {req.toolInfo && (
              <div className="mt-4 rounded-md border border-slate-200 p-3" data-testid="tool-description">
                <h3 className="text-xs font-semibold tracking-wide text-slate-600 uppercase">What the tool says it does</h3>
                <p className="mt-1 text-xs text-slate-600">
                  {req.toolInfo.title !== req.tool ? <>{req.toolInfo.title}: </> : null}
                  in the tool&apos;s own words when the call was made, not checked by Countersign.
                </p>
                <p className="mt-1 text-sm whitespace-pre-wrap text-slate-900 [overflow-wrap:anywhere]">
                  {req.toolInfo.description}
                </p>
              </div>
            )}
            {req.input && (
              <div className="mt-4 rounded-md border border-slate-200 bg-slate-50 p-3" data-testid="submission-input">
                <h3 className="text-xs font-semibold tracking-wide text-slate-600 uppercase">The requester&apos;s justification</h3>
                {req.input.justification && (
                  <p dir="auto" className="mt-1 text-sm whitespace-pre-wrap text-slate-900 [overflow-wrap:anywhere]">{req.input.justification}</p>
                )}
                {req.input.ticket && (
                  <p className="mt-1 text-sm text-slate-700">
                    Ticket: <span className="font-mono">{req.input.ticket}</span>
                  </p>
                )}
              </div>
            )}
          </Section>

          <Section title="Your decision" id="decision-heading" className="order-3">
            <DecisionPanel
              requestId={req.id}
              tool={req.tool}
              cannotAct={req.cannotAct}
              confirmation={req.confirmation}
              consequence={req.consequence}
              decidedAt={req.decidedBy ? req.decidedBy.at : null}
              action={decideAction}
              after={<NextRequestLink from={req.id} />}
              passkey={req.requirePasskey ? { registered: (await listPasskeys(user.id)).length > 0, challenge: passkeyChallengeAction } : null}
            />
          </Section>

          <Section title="Questions to the requester" id="questions-heading" className="order-7" testId="questions">
            {req.clarifications.length === 0 ? (
              <p className="text-sm text-slate-600">No questions asked.</p>
            ) : (
              <ol className="mb-3 space-y-3">
                {req.clarifications.map((c) => (
                  <li key={c.id} className="text-sm">
                    <p className="text-slate-900 [overflow-wrap:anywhere] whitespace-pre-wrap">
                      <span className="font-medium">{c.askedBy}</span> asked: <bdi>{c.question}</bdi>
                    </p>
                    <p className="text-xs text-slate-600"><LocalTime iso={c.askedAt} /></p>
                    {c.answer !== null ? (
                      <p className="mt-1 border-l-2 border-sky-300 pl-2 whitespace-pre-wrap text-slate-900 [overflow-wrap:anywhere]" data-testid="answer">
                        Answer: <bdi>{c.answer}</bdi>
                        {c.answeredAt && <LocalTime iso={c.answeredAt} className="block text-xs text-slate-600" />}
                      </p>
                    ) : (
                      <p className="mt-1 text-xs text-amber-800">Waiting for the agent to answer.</p>
                    )}
                  </li>
                ))}
              </ol>
            )}
            {(req.canAsk || (req.cannotAct === null && req.questionOpen)) && <AskPanel requestId={req.id} canAskNow={req.canAsk} action={askAction} />}
          </Section>

          <Section title="Timeline" id="timeline-heading" className="order-8">
            <Timeline entries={req.timeline} />
          </Section>
        </div>

        <div className="contents lg:block lg:min-w-0 lg:space-y-4">
          <Section title="Clocks" id="clocks-heading" className="order-4">
            <dl>
              <Field label="Request deadline">
                <LocalTime iso={req.deadline} />
                {req.status === "pending" && (
                  <span className="block text-xs text-slate-700">
                    <Countdown until={req.deadline} serverNow={serverNow} passed="deadline passed" testId="deadline-countdown" />
                  </span>
                )}
              </Field>
              <Field label="Approval validity">
                {req.approvalExpiresAt ? (
                  <>
                    until <LocalTime iso={req.approvalExpiresAt} />
                    {!req.settled && (
                      <span className="block text-xs text-slate-700">
                        <Countdown until={req.approvalExpiresAt} serverNow={serverNow} passed="approval expired" testId="validity-countdown" />
                      </span>
                    )}
                  </>
                ) : (
                  <>{formatDurationSec(req.approvalValiditySec)} once approved</>
                )}
              </Field>
              {req.claimedAt && <Field label="Execution claimed"><LocalTime iso={req.claimedAt} /></Field>}
              {req.decidedAt && <Field label="Decided"><LocalTime iso={req.decidedAt} /></Field>}
            </dl>
          </Section>

          <Section title="Why it needs approval" id="policy-heading" className="order-5">
            <p className="text-sm text-slate-900">{req.reason || "No reason recorded."}</p>
            <dl className="mt-2">
              <Field label="Policy rule">
                {req.ruleKey ? (
                  <span className="font-mono text-xs" data-testid="rule-version">
                    {req.ruleKey} v{req.ruleVersion}
                  </span>
                ) : (
                  "—"
                )}
                {req.rule?.currentVersion && (
                  <span className="block text-xs text-slate-700">The rule has since changed (now v{req.rule.currentVersion}).</span>
                )}
              </Field>
              {req.rule && <Field label="Condition">{conditionText(req.rule)}</Field>}
              {req.taskRule && (req.taskRule.ruleKey !== req.ruleKey || req.taskRule.version !== req.ruleVersion) && (
                <Field label="Task decided under">
                  <span className="font-mono text-xs">
                    {req.taskRule.ruleKey} v{req.taskRule.version}
                  </span>
                </Field>
              )}
              <Field label="Approvers">
                {req.approvalsRequired} distinct from {req.approverGroup}
              </Field>
              {req.escalation && (
                <Field label="Escalation">
                  <span data-testid="escalation">
                    {req.escalation.escalatedAt
                      ? `escalated to ${req.escalation.fallbackGroup} ${formatWhen(req.escalation.escalatedAt)}: its reviewers may decide too`
                      : `to ${req.escalation.fallbackGroup} if undecided by ${formatWhen(req.escalation.escalateAt)}`}
                  </span>
                </Field>
              )}
              {req.requirePasskey && <Field label="Passkey">each approval is confirmed with the reviewer&apos;s passkey</Field>}
              {req.statusNote && <Field label="Note">{req.statusNote}</Field>}
            </dl>
          </Section>

          <Section title={`Approvals ${req.approvals} of ${req.approvalsRequired}`} id="reviews-heading" className="order-6">
            <div
              className="mb-3 flex gap-1"
              role="img"
              aria-label={`${req.approvals} of ${req.approvalsRequired} approvals`}
              data-testid="four-eyes-progress"
            >
              {Array.from({ length: req.approvalsRequired }, (_, i) => (
                <span key={i} className={`h-2 flex-1 rounded-full ${i < req.approvals ? "bg-emerald-600" : "bg-slate-200"}`} />
              ))}
            </div>
            {req.reviews.length === 0 ? (
              <p className="text-sm text-slate-600">No one has reviewed this request yet.</p>
            ) : (
              <ol className="space-y-3" data-testid="reviews">
                {req.reviews.map((r) => (
                  <li key={r.id} className="text-sm">
                    <div className="flex flex-wrap items-center gap-2">
                      <span className="font-medium text-slate-900">{r.reviewerName}</span>
                      <StatusBadge status={r.decision} />
                      <LocalTime iso={r.at} className="text-xs text-slate-600" />
                    </div>
                    {r.comment && <p className="mt-1 whitespace-pre-wrap break-words text-slate-800">{r.comment}</p>}
                  </li>
                ))}
              </ol>
            )}
            {req.status === "pending" && remaining > 0 && (
              <p className="mt-3 text-xs text-slate-700">
                Waiting for {remaining} more {req.approverGroup} approver{remaining === 1 ? "" : "s"} (never the requester, each once).
              </p>
            )}
          </Section>

          <Section title="Record" id="record-heading" className="order-9">
            <dl>
              <Field label="Task status">
                <span data-testid="task-status">
                  {req.taskStatus ?? "—"}
                  {req.disposition && <span className="ml-1 font-mono text-xs">({req.disposition})</span>}
                </span>
              </Field>
              {req.resultText && (
                <Field label="Result">
                  <span className="whitespace-pre-wrap [overflow-wrap:anywhere]" data-testid="task-result">
                    {req.resultText}
                  </span>
                </Field>
              )}
            </dl>
            <details className="mt-2" data-testid="record-details">
              <summary className="cursor-pointer text-sm text-slate-700">Ids and digests</summary>
              <dl>
                <Field label="Request">
                  <span className="font-mono text-xs break-all">{req.id}</span>
                </Field>
                <Field label="Task">
                  <span className="font-mono text-xs break-all">{req.taskId}</span>
                </Field>
                <Field label="Body digest">
                  <span className="font-mono text-xs break-all">{req.bodyDigest}</span>
                </Field>
              </dl>
            </details>
          </Section>
        </div>
      </div>
    </div>
  );
}
