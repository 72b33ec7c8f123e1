/**
 * The policy document's own rules (document.ts): how durations are read and written, the bounds of a requestable
 * denial's settings, when an escalation is complete and sound, and history windows named once.
 */
import { describe, expect, it } from "vitest";
import { escalationProblem, formatDuration, HistoryDef, parseDuration, PolicyDocument, requirementsOf, RequestableSpec } from "./document";

describe("durations", () => {
  it("read seconds, minutes, hours and days, with or without a unit and spaces around", () => {
    expect(["90s", "30m", "8h", "2d", "45", " 3 h ", "0"].map(parseDuration)).toEqual([90, 1800, 28800, 172800, 45, 10800, 0]);
  });

  it("refuse anything else: other units, fractions, signs, more than seven digits, nothing", () => {
    for (const text of ["1w", "1.5h", "-1h", "+1h", "1 2h", "12345678", "", "h", "1hh", "1H"]) expect(parseDuration(text)).toBeNull();
    expect(parseDuration("9999999")).toBe(9999999);
  });

  it("are written in the largest unit that divides them, and read back the same", () => {
    const cases: [number, string][] = [[86400, "1d"], [172800, "2d"], [90000, "25h"], [3600, "1h"], [5400, "90m"], [60, "1m"], [90, "90s"], [59, "59s"], [0, "0s"]];
    for (const [sec, text] of cases) {
      expect(formatDuration(sec)).toBe(text);
      expect(parseDuration(text)).toBe(sec);
    }
  });
});

describe("a requestable denial's settings", () => {
  const spec = (over: Record<string, unknown> = {}) => RequestableSpec.safeParse({ approvers: "treasury", reason: "Treasury looks first.", ...over });
  const refusedAt = (over: Record<string, unknown>) => {
    const r = spec(over);
    expect(r.success).toBe(false);
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  };

  it("default to one approval, a day to decide and an hour to run, no justification, no passkey", () => {
    const r = spec();
    if (!r.success) throw new Error(r.error.message);
    expect(requirementsOf(r.data)).toEqual({ approverGroup: "treasury", approvalsRequired: 1, requestDeadlineSec: 86400, approvalValiditySec: 3600, requireJustification: false });
  });

  it("a quorum from one to ten", () => {
    expect(spec({ quorum: 10 }).success).toBe(true);
    for (const quorum of [0, 11, 1.5]) expect(refusedAt({ quorum })).toEqual([expect.stringMatching(/^quorum: /)]);
  });

  it("a deadline and a validity from a minute to thirty days, with the bounds in the message", () => {
    for (const ok of ["60s", "1m", "30d", "720h"]) for (const k of ["deadline", "validity"]) expect(spec({ [k]: ok }).success).toBe(true);
    for (const bad of ["59s", "31d", "2592001", "soon"]) {
      expect(refusedAt({ deadline: bad })).toEqual(["deadline: a duration such as 30m, 8h or 2d, between 1m and 30d"]);
      expect(refusedAt({ validity: bad })).toEqual(["validity: a duration such as 30m, 8h or 2d, between 1m and 30d"]);
    }
  });

  it("a reason of five to three hundred characters; an approver group's name; nothing unknown", () => {
    expect(spec({ reason: "Five." }).success).toBe(true);
    expect(spec({ reason: "x".repeat(300) }).success).toBe(true);
    for (const reason of ["Four", "x".repeat(301)]) expect(refusedAt({ reason })).toEqual([expect.stringMatching(/^reason: /)]);
    for (const approvers of ["Treasury", "t", "-treasury", "tre asury", "a".repeat(41)]) expect(refusedAt({ approvers })).toEqual(["approvers: an approver group: lowercase letters, digits and dashes"]);
    expect(spec({ approvers: "a".repeat(40) }).success).toBe(true);
    expect(refusedAt({ approver: "sre" })).toEqual([expect.stringMatching(/approver/)]);
  });

  it("carry a passkey and a complete escalation into the requirements, and nothing of a passkey not asked for", () => {
    const r = spec({ passkey: true, escalate: "2h", fallback: "sre", justification: true, quorum: 2, deadline: "8h", validity: "10m" });
    if (!r.success) throw new Error(r.error.message);
    expect(requirementsOf(r.data)).toEqual({ approverGroup: "treasury", approvalsRequired: 2, requestDeadlineSec: 28800, approvalValiditySec: 600, requireJustification: true, requirePasskey: true, escalateAfterSec: 7200, fallbackGroup: "sre" });
    const plain = spec({ passkey: false });
    if (!plain.success) throw new Error(plain.error.message);
    expect(requirementsOf(plain.data)).not.toHaveProperty("requirePasskey");
  });
});

describe("an escalation", () => {
  const base = { approverGroup: "treasury", fallbackGroup: "sre", escalateAfterSec: 3600, requestDeadlineSec: 86400 };

  it("is sound with a time and another group before the deadline, or absent altogether", () => {
    expect(escalationProblem(base)).toBeNull();
    expect(escalationProblem({ ...base, fallbackGroup: null, escalateAfterSec: null })).toBeNull();
    expect(escalationProblem({ ...base, requestDeadlineSec: null })).toBeNull();
    expect(escalationProblem({ ...base, escalateAfterSec: 86399 })).toBeNull();
  });

  it("names the field at fault: a missing half, the approvers' own group, a time at or after the deadline", () => {
    expect(escalationProblem({ ...base, fallbackGroup: null })).toEqual({ field: "fallbackGroup", message: "an escalation needs a fallback group" });
    expect(escalationProblem({ ...base, fallbackGroup: "" })).toEqual({ field: "fallbackGroup", message: "an escalation needs a fallback group" });
    expect(escalationProblem({ ...base, escalateAfterSec: null })).toEqual({ field: "escalateAfterSec", message: "a fallback group needs an escalation time" });
    expect(escalationProblem({ ...base, fallbackGroup: "treasury" })).toEqual({ field: "fallbackGroup", message: "the fallback group must differ from the approver group" });
    expect(escalationProblem({ ...base, escalateAfterSec: 86400 })).toEqual({ field: "escalateAfterSec", message: "escalation must come before the request deadline" });
  });

  it("is checked on a requestable denial's settings too, at the annotation at fault", () => {
    const r = RequestableSpec.safeParse({ approvers: "treasury", reason: "Treasury looks first.", fallback: "sre" });
    expect(r.success ? [] : r.error.issues.map((i) => [i.path, i.message])).toEqual([[["escalate"], "a fallback group needs an escalation time"]]);
    const same = RequestableSpec.safeParse({ approvers: "treasury", reason: "Treasury looks first.", fallback: "treasury", escalate: "1h" });
    expect(same.success ? [] : same.error.issues.map((i) => [i.path, i.message])).toEqual([[["fallback"], "the fallback group must differ from the approver group"]]);
    const late = RequestableSpec.safeParse({ approvers: "treasury", reason: "Treasury looks first.", fallback: "sre", escalate: "2d", deadline: "1d" });
    expect(late.success ? [] : late.error.issues.map((i) => [i.path, i.message])).toEqual([[["escalate"], "escalation must come before the request deadline"]]);
  });
});

describe("the document", () => {
  it("defaults to denying every call, with no policies, windows, zones or tests", () => {
    expect(PolicyDocument.parse({})).toEqual({ policies: "", defaults: { posture: "deny", tools: {}, agents: {} }, history: [], timeZones: [], tests: [] });
    expect(PolicyDocument.parse({ defaults: { tools: { wire_transfer: "allow" } } }).defaults).toEqual({ posture: "deny", tools: { wire_transfer: "allow" }, agents: {} });
  });

  it("names each history window once, by a lowercase name, over a window of a minute to 400 days", () => {
    const w = (name: string, window = "1d") => ({ name, tool: "wire_transfer", window, per: "resource" });
    expect(PolicyDocument.safeParse({ history: [w("a"), w("b")] }).success).toBe(true);
    const twice = PolicyDocument.safeParse({ history: [w("a"), w("b"), w("a")] });
    expect(twice.success ? [] : twice.error.issues.map((i) => [i.path, i.message])).toEqual([[["history", 2, "name"], "two history windows are named a"]]);
    for (const name of ["A", "1a", "a-b", `a${"b".repeat(40)}`]) expect(HistoryDef.safeParse(w(name)).success).toBe(false);
    expect(HistoryDef.safeParse(w(`a${"b".repeat(39)}`)).success).toBe(true);
    expect(HistoryDef.safeParse(w("a", "400d")).success).toBe(true);
    for (const window of ["59s", "401d"]) expect(HistoryDef.safeParse(w("a", window)).success).toBe(false);
  });

  it("reads local time only in IANA zones", () => {
    expect(PolicyDocument.safeParse({ timeZones: ["Europe/Berlin", "UTC"] }).success).toBe(true);
    const bad = PolicyDocument.safeParse({ timeZones: ["Mars/Olympus"] });
    expect(bad.success ? [] : bad.error.issues.map((i) => i.message)).toEqual(["an IANA time zone such as Europe/Berlin"]);
  });
});
