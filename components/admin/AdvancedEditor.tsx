"use client";

import { useRouter } from "next/navigation";
import { useEffect, useId, useRef, useState } from "react";
import { ImpactPanel } from "./ImpactPanel";
import { ProblemList } from "./ProblemList";

type Problem = { where: "policies" | "settings"; message: string; line?: number; column?: number; policyId?: string };
type Check = { state: "idle" | "checking" | "checked" | "failed"; problems: Problem[]; document: unknown };

const DEBOUNCE_MS = 300;

/** A text area with line numbers; the lines that have problems are highlighted in the gutter and named in the list. */
function CodeArea({
  id,
  label,
  value,
  onChange,
  problems,
  rows,
  testId,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  problems: Problem[];
  rows: number;
  testId: string;
}) {
  const gutter = useRef<HTMLPreElement>(null);
  const bad = new Set(problems.map((p) => p.line).filter((l): l is number => typeof l === "number"));
  const lines = value.split("\n").length;
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium text-slate-800">
        {label}
      </label>
      <div className="flex rounded-md border border-slate-300 bg-white">
        <pre ref={gutter} aria-hidden="true" className="m-0 overflow-hidden border-r border-slate-200 py-1.5 text-right font-mono text-xs leading-5 text-slate-600 select-none" style={{ height: `${rows * 1.25 + 0.75}rem` }}>
          {Array.from({ length: lines }, (_, i) => (
            <span key={i} data-bad-line={bad.has(i + 1) ? i + 1 : undefined} className={`block px-2 ${bad.has(i + 1) ? "bg-red-200 font-semibold text-red-900" : ""}`}>
              {i + 1}
            </span>
          ))}
        </pre>
        <textarea
          id={id}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          onScroll={(e) => {
            if (gutter.current) gutter.current.scrollTop = e.currentTarget.scrollTop;
          }}
          rows={rows}
          spellCheck={false}
          wrap="off"
          aria-invalid={problems.length > 0 ? true : undefined}
          aria-describedby={`${id}-problems`}
          data-testid={testId}
          className="block w-full resize-y rounded-r-md px-2 py-1.5 font-mono text-xs leading-5 text-slate-900"
        />
      </div>
      <div id={`${id}-problems`} role="status" aria-live="polite" data-testid={`${testId}-problems`}>
        {problems.length === 0 ? (
          <p className="text-xs text-emerald-900">No problems.</p>
        ) : (
          <ProblemList problems={problems} className="space-y-0.5 text-xs text-red-800" />
        )}
      </div>
    </div>
  );
}

/** Edit the policy document: validated on every keystroke (strict compilation on the server), saved as a new version. */
export function AdvancedEditor({ version, policies: initialPolicies, settings: initialSettings }: { version: number; policies: string; settings: string }) {
  const uid = useId();
  const router = useRouter();
  const [policies, setPolicies] = useState(initialPolicies);
  const [settings, setSettings] = useState(initialSettings);
  const [check, setCheck] = useState<Check>({ state: "idle", problems: [], document: null });
  const [save, setSave] = useState<{ state: "idle" | "saving" | "saved" | "refused"; message?: string; problems?: Problem[] }>({ state: "idle" });
  const seq = useRef(0);

  useEffect(() => {
    const mine = ++seq.current;
    const timer = setTimeout(async () => {
      setCheck((c) => ({ ...c, state: "checking" }));
      try {
        const res = await fetch("/api/admin/policy/validate", {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ policies, settings }),
        });
        const json = await res.json();
        if (mine !== seq.current) return;
        if (!res.ok) setCheck({ state: "failed", problems: [{ where: "policies", message: json.error ?? `The check failed (HTTP ${res.status}).` }], document: null });
        else setCheck({ state: "checked", problems: json.problems, document: json.document });
      } catch {
        if (mine === seq.current) setCheck({ state: "failed", problems: [{ where: "policies", message: "The check could not reach the server." }], document: null });
      }
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [policies, settings]);

  const changed = policies !== initialPolicies || settings !== initialSettings;
  const of = (where: Problem["where"]) => check.problems.filter((p) => p.where === where);

  async function onSave() {
    setSave({ state: "saving" });
    const res = await fetch("/api/admin/policy/document", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ policies, settings }),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) {
      setSave({ state: "refused", message: json.error ?? `Not saved (HTTP ${res.status}).`, problems: json.problems ?? [] });
      return;
    }
    setSave({ state: "saved", message: json.unchanged ? `Nothing changed: version ${json.version} stays current.` : `Saved as version ${json.version}.` });
    router.refresh();
  }

  return (
    <div className="space-y-4">
      <p className="text-sm text-slate-700">
        Editing version {version}.{" "}
        <span data-testid="check-state">
          {check.state === "checking" ? "Checking…" : check.state === "checked" ? (check.problems.length === 0 ? "The draft compiles." : `${check.problems.length} problem${check.problems.length === 1 ? "" : "s"}.`) : ""}
        </span>
      </p>
      <CodeArea id={`${uid}-policies`} label="Cedar policies" value={policies} onChange={setPolicies} problems={of("policies")} rows={18} testId="cedar-text" />
      <CodeArea id={`${uid}-settings`} label="Defaults, history windows, time zones and test cases (YAML)" value={settings} onChange={setSettings} problems={of("settings")} rows={14} testId="settings-yaml" />

      <ImpactPanel body={() => ({ document: check.document })} label="Preview this draft against the last 30 days" headingLevel={2} />

      <div className="space-y-2">
        <button
          type="button"
          onClick={onSave}
          disabled={save.state === "saving" || !changed}
          className="rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-800 disabled:opacity-60"
        >
          {save.state === "saving" ? "Saving…" : `Save as version ${version + 1}`}
        </button>
        {save.state === "refused" && (
          <div role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800" data-testid="save-refused">
            <p>{save.message} Nothing was saved.</p>
            <ul className="list-disc pl-5">
              {save.problems?.map((p, i) => (
                <li key={i}>
                  {p.line ? `${p.where === "settings" ? "YAML line" : "Line"} ${p.line}, column ${p.column ?? 1}: ` : ""}
                  {p.message}
                </li>
              ))}
            </ul>
          </div>
        )}
        {save.state === "saved" && (
          <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-900" data-testid="document-saved">
            {save.message}
          </p>
        )}
      </div>
    </div>
  );
}
