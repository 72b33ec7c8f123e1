"use client";

import { useMutation } from "@tanstack/react-query";
import { useActionState, useId, useState, type ReactNode } from "react";
import type { RuleFormState } from "@/app/admin/policy/actions";
import type { Rule } from "@/lib/policy/evaluate";
import { isMoneyField, moneyText, parseMoney, ruleReason } from "@/lib/inbox/rule-words";
import { ImpactPanel } from "./ImpactPanel";

/** A rule version as the editor shows it: the policy's own rule, plus its description and whether it is current. */
export type EditableRule = Omit<Rule, "id"> & { description: string; active: boolean };

type Draft = Record<keyof Omit<EditableRule, "version" | "requireJustification" | "requirePasskey" | "active">, string> & {
  requireJustification: boolean;
  requirePasskey: boolean;
  active: boolean;
};

type PreviewAnswer = {
  resource: { type: string; id: string; properties: Record<string, unknown> };
  draftVersion: number;
  current: { decision: string; text: string };
  draft: { decision: string; text: string };
};

const EXAMPLE_ARGS: Record<string, unknown> = {
  issue_refund: { order_id: "O-2289" },
  wire_transfer: { to: "acct-991", amount: 30000 },
  delete_path: { path: "prod/logs/app-2026-11-29.log" },
  deploy_service: { service: "checkout-api", environment: "production", version: "1.4.2" },
};

function toDraft(r: EditableRule): Draft {
  return {
    ruleKey: r.ruleKey,
    tool: r.tool,
    description: r.description,
    field: r.field,
    operator: r.operator,
    // A money threshold is shown as money: "EUR 200.00" (stored as minor units and a currency).
    value: isMoneyField(r.field) && r.operator !== "prefix" && /^\d+$/.test(r.value) ? moneyText(Number(r.value), r.currency) : r.value,
    currency: r.currency ?? "",
    effect: r.effect,
    approverGroup: r.approverGroup ?? "",
    approvalsRequired: String(r.approvalsRequired),
    requestDeadlineSec: String(r.requestDeadlineSec),
    approvalValiditySec: String(r.approvalValiditySec),
    reason: r.reason,
    requireJustification: r.requireJustification,
    requirePasskey: r.requirePasskey ?? false,
    escalateAfterSec: r.escalateAfterSec ? String(r.escalateAfterSec) : "",
    fallbackGroup: r.fallbackGroup ?? "",
    active: r.active,
  };
}

/** The draft as the routes take it: a money threshold as typed ("money"), anything else as "value". */
function asFields(d: Draft): Record<string, string | boolean> {
  const { value, currency: _currency, ...rest } = d;
  void _currency;
  return isMoneyField(d.field) && d.operator !== "prefix" ? { ...rest, money: value } : { ...rest, value };
}

/** The reason written from the draft's fields (the money typed as money). */
function reasonOf(d: Draft): string {
  const typed = isMoneyField(d.field) && d.operator !== "prefix" ? parseMoney(d.value) : null;
  return ruleReason({
    ...d,
    value: typed?.ok ? String(typed.minor) : d.value,
    currency: typed?.ok ? typed.currency : null,
  });
}

function human(secText: string): string {
  const sec = Number(secText);
  if (!Number.isInteger(sec) || sec <= 0) return "";
  const d = Math.floor(sec / 86400);
  const h = Math.floor((sec % 86400) / 3600);
  const m = Math.floor((sec % 3600) / 60);
  return `= ${[d && `${d}d`, h && `${h}h`, m && `${m}m`, sec % 60 && `${sec % 60}s`].filter(Boolean).join(" ")}`;
}

function Input({
  id,
  label,
  hint,
  error,
  children,
}: {
  id: string;
  label: string;
  hint?: ReactNode;
  error?: string;
  children: (props: { id: string; "aria-describedby": string; "aria-invalid"?: true }) => ReactNode;
}) {
  return (
    <div className="space-y-0.5">
      <label htmlFor={id} className="block text-xs font-medium text-slate-700">
        {label}
      </label>
      {children({ id, "aria-describedby": `${id}-msg`, ...(error ? { "aria-invalid": true as const } : {}) })}
      <p id={`${id}-msg`} className={`text-xs ${error ? "text-red-800" : "text-slate-600"}`}>
        {error ?? hint ?? ""}
      </p>
    </div>
  );
}

const inputClass = "block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm";

/** Edit one rule: every save is a new version (the previous one stays readable); preview before saving. */
export function RuleEditor({
  rule,
  groups,
  action,
}: {
  rule: EditableRule;
  groups: string[];
  action: (prev: RuleFormState, formData: FormData) => Promise<RuleFormState>;
}) {
  const uid = useId();
  const id = (k: string) => `${uid}-${k}`;
  const [state, formAction, saving] = useActionState(action, { status: "idle" } as RuleFormState);
  const [draft, setDraft] = useState<Draft>(() => toDraft(rule));
  const [args, setArgs] = useState(() => JSON.stringify(EXAMPLE_ARGS[rule.tool] ?? {}, null, 0));
  // A field's error from the last save stays until that field is edited.
  const [edited, setEdited] = useState<ReadonlySet<string>>(new Set());
  // The reason is written from the fields and follows them, until the admin writes it by hand.
  const [reasonByHand, setReasonByHand] = useState(false);
  const set = (k: keyof Draft) => (e: { target: { value: string; checked?: boolean; type?: string } }) => {
    const v = e.target.type === "checkbox" ? !!e.target.checked : e.target.value;
    setDraft((d) => {
      const next = { ...d, [k]: v };
      if (k !== "reason" && k !== "description" && !reasonByHand) next.reason = reasonOf(next);
      return next;
    });
    if (k === "reason") setReasonByHand(true);
    setEdited((s) => new Set(s).add(k));
  };
  const err = state.status === "error" ? Object.fromEntries(Object.entries(state.fieldErrors).filter(([k]) => !edited.has(k))) : {};

  const preview = useMutation({
    mutationFn: async (): Promise<PreviewAnswer> => {
      let parsedArgs: unknown;
      try {
        parsedArgs = JSON.parse(args);
      } catch {
        throw new Error("The arguments are not valid JSON.");
      }
      const body = { draft: asFields(draft), arguments: parsedArgs };
      const res = await fetch("/api/admin/policy/preview", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body),
      });
      const json = await res.json().catch(() => ({}));
      if (!res.ok) throw new Error(json.error ?? `Preview failed (HTTP ${res.status}).`);
      return json as PreviewAnswer;
    },
  });

  const money = isMoneyField(draft.field) && draft.operator !== "prefix";
  const typed = money ? parseMoney(draft.value) : null;

  return (
    <div className="space-y-4">
      <form action={formAction} onSubmit={() => setEdited(new Set())} className="space-y-3" aria-label={`Edit rule ${rule.ruleKey}`}>
        <input type="hidden" name="ruleKey" value={draft.ruleKey} />
        <input type="hidden" name="tool" value={draft.tool} />
        <div className="grid gap-3 sm:grid-cols-2">
          <Input id={id("description")} label="Description" error={err.description}>
            {(p) => <input {...p} name="description" value={draft.description} onChange={set("description")} className={inputClass} />}
          </Input>
          <Input id={id("effect")} label="Effect" error={err.effect} hint="requestable: can be approved; deny: refused outright">
            {(p) => (
              <select {...p} name="effect" value={draft.effect} onChange={set("effect")} className={inputClass}>
                <option value="requestable">requestable (needs approval)</option>
                <option value="deny">deny (cannot be approved)</option>
              </select>
            )}
          </Input>
          <Input id={id("field")} label="Threshold field" error={err.field} hint="A property of the tool's resource, e.g. amount_cents or path">
            {(p) => <input {...p} name="field" value={draft.field} onChange={set("field")} className={`${inputClass} font-mono`} />}
          </Input>
          <div className="grid grid-cols-[7rem_1fr] gap-2">
            <Input id={id("operator")} label="Operator" error={err.operator}>
              {(p) => (
                <select {...p} name="operator" value={draft.operator} onChange={set("operator")} className={inputClass}>
                  <option value="gt">&gt; (gt)</option>
                  <option value="gte">≥ (gte)</option>
                  <option value="eq">= (eq)</option>
                  <option value="prefix">starts with</option>
                </select>
              )}
            </Input>
            <Input
              id={id("value")}
              label="Threshold value"
              error={err.value ?? (typed && !typed.ok && edited.has("value") ? typed.message : undefined)}
              hint={
                typed
                  ? typed.ok
                    ? `= ${moneyText(typed.minor, typed.currency)}. A call in another currency always matches (it needs this rule's approval).`
                    : "Money: the currency and the amount, e.g. EUR 200.00"
                  : draft.operator === "prefix" && draft.value.endsWith("/")
                    ? `A folder: covers ${draft.value.slice(0, -1) || "/"} itself and everything in it`
                    : undefined
              }
            >
              {(p) => <input {...p} name={money ? "money" : "value"} value={draft.value} onChange={set("value")} inputMode={money ? "decimal" : undefined} placeholder={money ? "EUR 200.00" : undefined} className={`${inputClass} font-mono`} />}
            </Input>
          </div>
          <Input id={id("approverGroup")} label="Approver group" error={err.approverGroup}>
            {(p) => (
              <>
                <input {...p} name="approverGroup" list={id("groups")} value={draft.approverGroup} onChange={set("approverGroup")} className={inputClass} />
                <datalist id={id("groups")}>
                  {groups.map((g) => (
                    <option key={g} value={g} />
                  ))}
                </datalist>
              </>
            )}
          </Input>
          <Input id={id("approvalsRequired")} label="Approvals needed" error={err.approvalsRequired} hint="Distinct reviewers; 2 or more makes approvals high-risk (typed confirmation)">
            {(p) => <input {...p} name="approvalsRequired" type="number" min={0} max={10} value={draft.approvalsRequired} onChange={set("approvalsRequired")} className={inputClass} />}
          </Input>
          <Input id={id("requestDeadlineSec")} label="Request deadline (seconds)" error={err.requestDeadlineSec} hint={human(draft.requestDeadlineSec)}>
            {(p) => <input {...p} name="requestDeadlineSec" type="number" min={0} value={draft.requestDeadlineSec} onChange={set("requestDeadlineSec")} className={inputClass} />}
          </Input>
          <Input id={id("approvalValiditySec")} label="Approval validity (seconds)" error={err.approvalValiditySec} hint={human(draft.approvalValiditySec)}>
            {(p) => <input {...p} name="approvalValiditySec" type="number" min={0} value={draft.approvalValiditySec} onChange={set("approvalValiditySec")} className={inputClass} />}
          </Input>
          <Input id={id("escalateAfterSec")} label="Escalate after (seconds, optional)" error={err.escalateAfterSec} hint={human(draft.escalateAfterSec) || "Without a decision by then, the fallback group may decide too"}>
            {(p) => <input {...p} name="escalateAfterSec" type="number" min={60} value={draft.escalateAfterSec} onChange={set("escalateAfterSec")} className={inputClass} />}
          </Input>
          <Input id={id("fallbackGroup")} label="Fallback group (optional)" error={err.fallbackGroup} hint="Offered the request after the escalation time; the admins are told">
            {(p) => <input {...p} name="fallbackGroup" list={id("groups")} value={draft.fallbackGroup} onChange={set("fallbackGroup")} className={inputClass} />}
          </Input>
        </div>
        <Input
          id={id("reason")}
          label="Reason shown to the agent and reviewers"
          error={err.reason}
          hint={reasonByHand ? "Written by hand; it no longer follows the fields." : "Written from the fields as they change; edit it to write your own."}
        >
          {(p) => <textarea {...p} name="reason" rows={2} value={draft.reason} onChange={set("reason")} className={inputClass} data-testid="rule-reason" />}
        </Input>
        {reasonByHand && (
          <button
            type="button"
            onClick={() => {
              setReasonByHand(false);
              setDraft((d) => ({ ...d, reason: reasonOf(d) }));
            }}
            className="text-sm text-indigo-800 underline"
          >
            Write the reason from the fields again
          </button>
        )}
        <div className="flex flex-wrap gap-x-6 gap-y-2 text-sm">
          <label className="flex items-center gap-2">
            <input type="checkbox" name="requireJustification" checked={draft.requireJustification} onChange={set("requireJustification")} />
            Require a justification from the requester
          </label>
          <label className="flex items-center gap-2">
            <input type="checkbox" name="requirePasskey" checked={draft.requirePasskey} onChange={set("requirePasskey")} />
            Require the reviewer&apos;s passkey to approve
          </label>
          <label className="flex items-center gap-2">
            <input type="checkbox" name="active" checked={draft.active} onChange={set("active")} />
            Active (unchecked retires the rule)
          </label>
        </div>
        {state.status === "error" && (Object.keys(state.fieldErrors).length === 0 || Object.keys(err).length > 0) && (
          <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800">
            {state.message}
          </p>
        )}
        {state.status === "done" && (
          <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-900" data-testid="rule-saved">
            Saved as {state.ruleKey} v{state.version}. New calls are decided by it; tasks keep the version they were decided under.
          </p>
        )}
        <button type="submit" disabled={saving} className="rounded-md bg-indigo-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-indigo-800 disabled:opacity-60">
          {saving ? "Saving…" : `Save as v${rule.version + 1}`}
        </button>
      </form>

      <div className="rounded-md border border-slate-200 bg-slate-50 p-3">
        <h3 className="text-sm font-medium text-slate-800">Preview this draft</h3>
        <Input id={id("args")} label={`Arguments for ${rule.tool} (JSON)`} hint="Nothing runs; the resource is read as a call would read it.">
          {(p) => <textarea {...p} rows={2} value={args} onChange={(e) => setArgs(e.target.value)} className={`${inputClass} font-mono`} />}
        </Input>
        <button
          type="button"
          onClick={() => preview.mutate()}
          disabled={preview.isPending}
          className="mt-1 rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-800 hover:bg-slate-100 disabled:opacity-60"
        >
          {preview.isPending ? "Evaluating…" : "Preview"}
        </button>
        <div aria-live="polite" className="mt-2 text-sm" data-testid="rule-preview">
          {preview.isError && <p className="text-red-800">{preview.error.message}</p>}
          {preview.data && (
            <dl className="space-y-1">
              <div>
                <dt className="text-xs text-slate-600">Resource</dt>
                <dd className="font-mono text-xs break-all text-slate-800">
                  {preview.data.resource.type} {preview.data.resource.id} {JSON.stringify(preview.data.resource.properties)}
                </dd>
              </div>
              <div>
                <dt className="text-xs text-slate-600">Current version decides</dt>
                <dd className="text-slate-900">{preview.data.current.text}</dd>
              </div>
              <div>
                <dt className="text-xs text-slate-600">This draft (v{preview.data.draftVersion}) would decide</dt>
                <dd className="font-medium text-slate-900" data-testid="draft-decision">
                  {preview.data.draft.text}
                </dd>
              </div>
            </dl>
          )}
        </div>
      </div>

      <ImpactPanel body={() => ({ rule: asFields(draft) })} />
    </div>
  );
}
