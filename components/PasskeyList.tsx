"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { startRegistration } from "@simplewebauthn/browser";
import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/browser";
import { LocalTime } from "./LocalTime";

type Passkey = { id: string; name: string; createdAt: string; lastUsedAt: string | null };

type Props = {
  passkeys: Passkey[];
  begin: () => Promise<{ ok: true; nonce: string; options: PublicKeyCredentialCreationOptionsJSON } | { ok: false; error: string }>;
  finish: (input: { nonce: string; name: string; response: unknown }) => Promise<{ ok: true } | { ok: false; error: string }>;
  remove: (formData: FormData) => Promise<void>;
};

/** The reviewer's passkeys (for approvals that need one): listed, added with the browser's WebAuthn, removed. */
export function PasskeyList({ passkeys, begin, finish, remove }: Props) {
  const router = useRouter();
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ tone: "error" | "done"; text: string } | null>(null);

  async function add() {
    setBusy(true);
    setMessage(null);
    try {
      const started = await begin();
      if (!started.ok) return setMessage({ tone: "error", text: started.error });
      let response;
      try {
        response = await startRegistration({ optionsJSON: started.options });
      } catch {
        return setMessage({ tone: "error", text: "The passkey was not created. Try again." });
      }
      const done = await finish({ nonce: started.nonce, name: name.trim() || "Passkey", response });
      if (!done.ok) return setMessage({ tone: "error", text: done.error });
      setName("");
      setMessage({ tone: "done", text: "Passkey added." });
      router.refresh();
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4 text-sm" aria-labelledby="passkeys-heading">
      <h2 id="passkeys-heading" className="font-medium text-slate-900">
        Passkeys
      </h2>
      <p className="mt-1 text-slate-700">Some approvals must be confirmed with your passkey. The confirmation is kept in the audit trail.</p>
      {passkeys.length === 0 ? (
        <p className="mt-2 text-slate-600" data-testid="no-passkeys">
          You have no passkeys yet.
        </p>
      ) : (
        <ul className="mt-2 divide-y divide-slate-100" data-testid="passkey-list">
          {passkeys.map((k) => (
            <li key={k.id} className="flex flex-wrap items-center justify-between gap-2 py-2">
              <span>
                <span className="font-medium text-slate-900">{k.name}</span>
                <span className="block text-xs text-slate-600">
                  Added <LocalTime iso={k.createdAt} /> · {k.lastUsedAt ? <>last used <LocalTime iso={k.lastUsedAt} /></> : "never used"}
                </span>
              </span>
              <form action={remove}>
                <input type="hidden" name="passkeyId" value={k.id} />
                <button type="submit" className="rounded-md border border-slate-300 bg-white px-3 py-1 text-slate-800 hover:bg-slate-50" aria-label={`Remove passkey ${k.name}`}>
                  Remove
                </button>
              </form>
            </li>
          ))}
        </ul>
      )}
      <div className="mt-3 flex flex-wrap items-end gap-2">
        <label className="space-y-1">
          <span className="block text-slate-700">Name</span>
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            maxLength={60}
            placeholder="e.g. Work laptop"
            className="block rounded-md border border-slate-300 bg-white px-3 py-1.5"
          />
        </label>
        <button
          type="button"
          onClick={add}
          disabled={busy}
          className="rounded-md bg-slate-900 px-3 py-1.5 font-medium text-white hover:bg-slate-800 disabled:opacity-60"
        >
          Add a passkey
        </button>
      </div>
      {message && (
        <p role={message.tone === "error" ? "alert" : "status"} className={`mt-2 ${message.tone === "error" ? "text-red-800" : "text-emerald-800"}`} data-testid="passkey-message">
          {message.text}
        </p>
      )}
    </section>
  );
}
