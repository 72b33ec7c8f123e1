"use client";

import { useRouter } from "next/navigation";
import { useId, useState } from "react";
import { ProblemList, type PositionedProblem } from "./ProblemList";

type Problem = PositionedProblem;
type State =
  | { step: "edit" }
  | { step: "busy" }
  | { step: "diff"; diff: string; unchanged: boolean }
  | { step: "problems"; message: string; problems: Problem[] }
  | { step: "imported"; diff: string; unchanged: boolean };

/** Paste or upload a policy file, see the difference, confirm to import. */
export function PolicyFileForm() {
  const uid = useId();
  const router = useRouter();
  const [text, setText] = useState("");
  const [state, setState] = useState<State>({ step: "edit" });

  async function send(confirm: boolean) {
    setState({ step: "busy" });
    const res = await fetch("/api/admin/policy/file", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ text, confirm }),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) return setState({ step: "problems", message: json.error ?? `Failed (HTTP ${res.status}).`, problems: json.problems ?? [] });
    if (confirm) {
      setState({ step: "imported", diff: json.diff, unchanged: json.unchanged });
      router.refresh();
    } else setState({ step: "diff", diff: json.diff, unchanged: json.unchanged });
  }

  return (
    <div className="space-y-3">
      <div className="space-y-1">
        <label htmlFor={`${uid}-upload`} className="block text-sm font-medium text-slate-800">
          Upload a policy file
        </label>
        <input
          id={`${uid}-upload`}
          type="file"
          accept=".yaml,.yml,text/yaml,application/yaml,text/plain"
          onChange={async (e) => {
            const file = e.target.files?.[0];
            if (file) {
              setText(await file.text());
              setState({ step: "edit" });
            }
          }}
          className="block text-sm"
        />
      </div>
      <div className="space-y-1">
        <label htmlFor={`${uid}-text`} className="block text-sm font-medium text-slate-800">
          Or paste it
        </label>
        <textarea
          id={`${uid}-text`}
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setState({ step: "edit" });
          }}
          rows={16}
          spellCheck={false}
          wrap="off"
          data-testid="policy-file-text"
          className="block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 font-mono text-xs text-slate-900"
        />
      </div>
      <button
        type="button"
        onClick={() => send(false)}
        disabled={!text.trim() || state.step === "busy"}
        className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-800 hover:bg-slate-100 disabled:opacity-60"
      >
        Show the difference
      </button>
      <div aria-live="polite" data-testid="policy-file-result" className="text-sm">
        {state.step === "busy" && <p>Checking…</p>}
        {state.step === "problems" && (
          <div role="alert" className="rounded-md bg-red-50 px-3 py-2 text-red-800" data-testid="policy-file-problems">
            <p>{state.message}</p>
            <ProblemList problems={state.problems} className="list-disc pl-5" />
          </div>
        )}
        {state.step === "diff" && (
          <div className="space-y-2">
            <h2 className="font-medium text-slate-900">Difference from the current policy</h2>
            <pre className="overflow-x-auto rounded bg-white p-2 font-mono text-xs text-slate-900" data-testid="policy-file-diff">
              {state.diff}
            </pre>
            {!state.unchanged && (
              <button type="button" onClick={() => send(true)} className="rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-800">
                Import as new versions
              </button>
            )}
          </div>
        )}
        {state.step === "imported" && (
          <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-emerald-900" data-testid="policy-file-imported">
            {state.unchanged ? "Nothing changed." : "Imported as new versions."}
          </p>
        )}
      </div>
    </div>
  );
}
