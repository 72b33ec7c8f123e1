"use client";

import { startTransition, useActionState, useEffect, useRef, useState, type ReactNode } from "react";
import { startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import type { Consequence } from "@/lib/inbox/consequence";
import type { Confirmation } from "@/lib/inbox/high-risk";
import type { DecisionState } from "@/lib/inbox/outcome";
import { OutcomeBanner } from "./OutcomeBanner";
import { formatWhen } from "./when";

type Props = {
  requestId: string;
  tool: string;
  /** Null when this reviewer may decide now; otherwise why not. */
  cannotAct: string | null;
  /** For a high-risk request: what to type before approving (checked again on the server). */
  confirmation: Confirmation | null;
  /** What approving does: whether this approval completes the quorum, and the Approve button's words. */
  consequence?: Consequence | null;
  /** When the request was decided (shown with `cannotAct` once someone decided it). */
  decidedAt?: string | null;
  action: (prev: DecisionState, formData: FormData) => Promise<DecisionState>;
  /** For a request whose rule requires a passkey: whether this reviewer has one, and how to get a challenge. */
  passkey?: {
    registered: boolean;
    challenge: (requestId: string) => Promise<{ ok: true; nonce: string; options: PublicKeyCredentialRequestOptionsJSON } | { ok: false; error: string }>;
  } | null;
  /** Shown under the outcome once this reviewer decided (the link to the next request). */
  after?: ReactNode;
};

/** Approve / Deny for a reviewer who may act, the reason why not otherwise, and what happened after acting. */
export function DecisionPanel({ requestId, tool, cannotAct, confirmation, consequence = null, decidedAt = null, action, passkey, after }: Props) {
  const [state, formAction, pending] = useActionState(action, { status: "idle" } as DecisionState);
  const formRef = useRef<HTMLFormElement>(null);
  const [confirming, setConfirming] = useState(false);
  const [passkeyError, setPasskeyError] = useState<string | null>(null);

  /** Approve with the passkey: a challenge bound to this request, the browser's assertion, then the decision. */
  async function approveWithPasskey() {
    if (!passkey || !formRef.current) return;
    setPasskeyError(null);
    setConfirming(true);
    try {
      const c = await passkey.challenge(requestId);
      if (!c.ok) return setPasskeyError(c.error);
      let response;
      try {
        response = await startAuthentication({ optionsJSON: c.options });
      } catch {
        return setPasskeyError("The passkey confirmation was cancelled or failed. Try again.");
      }
      const fd = new FormData(formRef.current);
      fd.set("decision", "approve");
      fd.set("passkeyNonce", c.nonce);
      fd.set("passkeyResponse", JSON.stringify(response));
      startTransition(() => formAction(fd));
    } finally {
      setConfirming(false);
    }
  }
  const [comment, setComment] = useState("");
  const [confirm, setConfirm] = useState("");
  const confirmErrorRef = useRef<HTMLParagraphElement>(null);
  const commentErrorRef = useRef<HTMLParagraphElement>(null);
  const errorRef = useRef<HTMLParagraphElement>(null);

  // A refusal moves focus to its words, so a keyboard or screen reader user lands on what to fix.
  useEffect(() => {
    if (state.status !== "error") return;
    const target = state.field === "confirm" ? confirmErrorRef : state.field === "comment" ? commentErrorRef : errorRef;
    target.current?.focus();
  }, [state]);

  if (state.status === "done") {
    return (
      <div className="space-y-3">
        <OutcomeBanner outcome={state.outcome} live testId="decision-result" />
        {after}
      </div>
    );
  }
  const commentError = state.status === "error" && state.field === "comment" ? state.message : null;
  const confirmError = state.status === "error" && state.field === "confirm" ? state.message : null;
  const otherError = state.status === "error" && !state.field ? state.message : null;

  if (cannotAct) {
    // A refusal just returned by the server (e.g. the other tab won) stays visible above why the buttons are gone,
    // and a comment the reviewer was typing when someone else decided is kept, to copy.
    return (
      <div className="space-y-2">
        {otherError && (
          <p ref={errorRef} tabIndex={-1} role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800" data-testid="decision-error">
            {otherError}
          </p>
        )}
        <p className="rounded-lg border border-slate-200 bg-slate-50 px-4 py-3 text-sm text-slate-700" data-testid="cannot-act">
          {cannotAct}
          {decidedAt && (
            <span className="block text-xs text-slate-700" data-testid="decided-at">
              Decided {formatWhen(decidedAt)}.
            </span>
          )}
        </p>
        {comment.trim() && (
          <div className="space-y-1" data-testid="unsent-draft">
            <label htmlFor="unsent-comment" className="block text-sm font-medium text-slate-700">
              Your comment was not sent; it is kept here to copy
            </label>
            <textarea
              id="unsent-comment"
              readOnly
              rows={3}
              value={comment}
              className="block w-full rounded-md border border-slate-300 bg-slate-50 px-3 py-2 text-sm"
            />
          </div>
        )}
      </div>
    );
  }

  return (
    <form ref={formRef} action={formAction} className="space-y-3" aria-label="Decide this request">
      <input type="hidden" name="requestId" value={requestId} />
      <input type="hidden" name="tool" value={tool} />
      {consequence && (
        <p
          className={`rounded-md border px-3 py-2 text-sm ${consequence.final ? "border-indigo-300 bg-indigo-50 text-indigo-950" : "border-slate-200 bg-slate-50 text-slate-800"}`}
          data-testid="consequence"
        >
          {consequence.message}
        </p>
      )}
      <div className="space-y-1">
        <label htmlFor="comment" className="block text-sm font-medium text-slate-700">
          Comment
        </label>
        <textarea
          id="comment"
          name="comment"
          rows={3}
          maxLength={1000}
          value={comment}
          onChange={(e) => setComment(e.target.value)}
          aria-describedby="comment-hint"
          aria-invalid={commentError ? true : undefined}
          className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 text-sm shadow-sm"
        />
        <p id="comment-hint" ref={commentErrorRef} tabIndex={-1} aria-live="polite" className={`text-xs ${commentError ? "text-red-700" : "text-slate-600"}`}>
          {commentError ?? "Optional when approving. Required when denying: the reason is recorded in the audit trail."}
        </p>
      </div>
      {confirmation && (
        <div className="space-y-1 rounded-md border border-amber-300 bg-amber-50 p-3">
          <label htmlFor="confirm" className="block text-sm font-medium text-amber-950">
            High-risk request: type {confirmation.words} to approve
          </label>
          <p id="confirm-hint" className="text-xs text-amber-950">
            Your approval runs it, so type <span className="font-mono font-semibold break-all">{confirmation.expected}</span> exactly. Not needed to deny.
          </p>
          <input
            id="confirm"
            name="confirm"
            autoComplete="off"
            spellCheck={false}
            value={confirm}
            onChange={(e) => setConfirm(e.target.value)}
            aria-describedby="confirm-hint confirm-error"
            aria-invalid={confirmError ? true : undefined}
            className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 font-mono text-sm shadow-sm"
          />
          <p id="confirm-error" ref={confirmErrorRef} tabIndex={-1} aria-live="polite" className="text-xs text-red-800" data-testid="confirm-error">
            {confirmError ?? ""}
          </p>
        </div>
      )}
      {passkey && (
        <p className="rounded-md border border-indigo-200 bg-indigo-50 px-3 py-2 text-sm text-indigo-950" data-testid="passkey-needed">
          {passkey.registered
            ? "This approval needs your passkey: approving asks your device to confirm it, for this request and these arguments."
            : "This approval needs a passkey: register a passkey on your profile page first."}{" "}
          {!passkey.registered && (
            <a href="/profile" className="underline">
              Go to your profile
            </a>
          )}
        </p>
      )}
      {(otherError || passkeyError) && (
        <p ref={errorRef} tabIndex={-1} role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800" data-testid="decision-error">
          {passkeyError ?? otherError}
        </p>
      )}
      {/* On a phone the decision stays on screen: a bar fixed to the bottom (the page leaves room for it). */}
      <div
        className="fixed inset-x-0 bottom-0 z-20 flex flex-wrap items-center gap-2 border-t border-slate-200 bg-white px-4 py-3 shadow-[0_-2px_8px_rgba(15,23,42,0.08)] lg:static lg:z-auto lg:border-0 lg:bg-transparent lg:p-0 lg:shadow-none"
        data-testid="decision-bar"
      >
        <button
          type={passkey ? "button" : "submit"}
          name="decision"
          value="approve"
          onClick={passkey ? () => void approveWithPasskey() : undefined}
          disabled={pending || confirming || (passkey ? !passkey.registered : false)}
          className="min-w-28 rounded-md bg-emerald-800 px-4 py-2 text-sm font-medium text-white hover:bg-emerald-900 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-emerald-800 disabled:opacity-60"
        >
          {consequence?.approveLabel ?? "Approve"}
        </button>
        <button
          type="submit"
          name="decision"
          value="deny"
          disabled={pending}
          className="min-w-28 rounded-md border border-red-300 bg-white px-4 py-2 text-sm font-medium text-red-700 hover:bg-red-50 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-red-700 disabled:opacity-60"
        >
          Deny
        </button>
        {confirming && (
          <span className="self-center text-sm text-slate-600" role="status">
            Confirm with your passkey…
          </span>
        )}
        {pending && (
          <span className="self-center text-sm text-slate-600" role="status">
            Recording your decision…
          </span>
        )}
      </div>
    </form>
  );
}
