"use client";

import { useActionState, useState } from "react";
import type { AskState } from "@/lib/inbox/outcome";

type Props = {
  requestId: string;
  /** False while a question is already open: the agent must answer it first. */
  canAskNow: boolean;
  action: (prev: AskState, formData: FormData) => Promise<AskState>;
};

/** "Ask the requester": a question the agent sees on its next poll; the task waits for the answer. */
export function AskPanel({ requestId, canAskNow, action }: Props) {
  const [state, formAction, pending] = useActionState(action, { status: "idle" } as AskState);
  const [question, setQuestion] = useState("");
  if (state.status === "done") {
    return (
      <p role="status" className="rounded-md bg-sky-50 px-3 py-2 text-sm text-sky-900" data-testid="ask-result">
        {state.message}
      </p>
    );
  }
  if (!canAskNow) {
    return <p className="text-sm text-slate-700">A question is open; you can ask another once the agent has answered.</p>;
  }
  return (
    <form action={formAction} className="space-y-2" aria-label="Ask the requester">
      <input type="hidden" name="requestId" value={requestId} />
      <label htmlFor="question" className="block text-sm font-medium text-slate-700">
        Ask the requester
      </label>
      <textarea
        id="question"
        name="question"
        rows={2}
        maxLength={500}
        value={question}
        onChange={(e) => setQuestion(e.target.value)}
        aria-describedby="question-hint"
        className="block w-full rounded-md border border-slate-300 bg-white px-3 py-2 text-sm shadow-sm"
      />
      <p id="question-hint" aria-live="polite" className={`text-xs ${state.status === "error" ? "text-red-700" : "text-slate-600"}`}>
        {state.status === "error"
          ? state.message
          : "The agent is asked to answer before anyone decides. The tool does not run meanwhile."}
      </p>
      <button
        type="submit"
        disabled={pending}
        className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-800 hover:bg-slate-100 disabled:opacity-60"
      >
        {pending ? "Sending…" : "Send question"}
      </button>
    </form>
  );
}
