"use client";

import { useActionState } from "react";
import type { SlackLinkState } from "@/app/profile/actions";
import { ActionMessage } from "./ActionMessage";

type Action = (prev: SlackLinkState, formData: FormData) => Promise<SlackLinkState>;
type Props = { linkAction: Action; unlinkAction: Action; linkedAs: string | null; configured: boolean };

/** Linking the reviewer's Slack account: a one-time code to send from Slack, or unlinking the account linked. */
export function SlackLinkForm({ linkAction, unlinkAction, linkedAs, configured }: Props) {
  const [linkState, linkFormAction, linking] = useActionState(linkAction, { status: "idle" });
  const [unlinkState, unlinkFormAction, unlinking] = useActionState(unlinkAction, { status: "idle" });
  const state = unlinkState.status !== "idle" ? unlinkState : linkState;
  return (
    <section aria-labelledby="slack-heading" className="space-y-2 rounded-lg border border-slate-200 bg-white p-4 text-sm">
      <h2 id="slack-heading" className="font-medium text-slate-900">
        Slack
      </h2>
      <p className="text-slate-700">
        {linkedAs ? `Your Slack account (${linkedAs}) is linked: its Approve and Deny buttons act as you.` : "Link your Slack account to approve and deny requests from the approvals channel."}
        {!configured && " Slack is not set up on this server yet."}
      </p>
      <div className="flex gap-2">
        <form action={linkFormAction}>
          <button type="submit" disabled={linking} className="rounded-md bg-indigo-700 px-3 py-1.5 font-medium text-white hover:bg-indigo-800 disabled:opacity-60">
            {linkedAs ? "Link another Slack account" : "Get a link code"}
          </button>
        </form>
        {linkedAs && (
          <form action={unlinkFormAction}>
            <button type="submit" disabled={unlinking} className="rounded-md border border-slate-300 bg-white px-3 py-1.5 font-medium text-slate-800 hover:bg-slate-50">
              Unlink Slack
            </button>
          </form>
        )}
      </div>
      {state.status === "code" && (
        <p role="status" className="text-slate-800">
          In Slack, send <code className="rounded bg-slate-100 px-1 font-mono" data-testid="slack-link-command">/countersign link {state.code}</code> before{" "}
          {new Date(state.expiresAt).toLocaleTimeString()}. The code works once.
        </p>
      )}
      <ActionMessage state={state} />
    </section>
  );
}
