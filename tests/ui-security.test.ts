/**
 * Authorization of the browser side, checked inside every server action and route handler: each one is called
 * directly — without a session, with the wrong role, with another user's object id, and cross-site (a forged
 * Origin, a missing Origin) — and must refuse without changing anything. A positive control per entry point shows
 * the same call succeeds when it should, so a refusal is the check at work, not a broken fixture.
 *
 * How: only the edges that need a running Next.js server are replaced. `auth()` (Auth.js reading the session
 * cookie) returns the session this test chooses; `headers()` returns the request headers this test chooses;
 * `revalidatePath` is a no-op. Everything else is the real code: the actions and handlers as exported from app/,
 * `authorize*` in lib/auth/session.ts (which re-reads the user from the database on every call), the domain verbs,
 * and the database. Next's own Origin-vs-Host check in front of server actions is exercised over HTTP by
 * e2e/security.spec.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const state = vi.hoisted(() => ({
  session: null as null | { user: { id: string; signedInAt: number; seenAt: number } },
  headers: new Headers(),
}));

vi.mock("@/lib/auth/auth", async () => {
  const { z } = await import("zod");
  return {
    auth: vi.fn(async () => state.session),
    signIn: vi.fn(async () => undefined),
    signOut: vi.fn(async () => undefined),
    handlers: {},
    credentialsSchema: z.object({ email: z.string().email(), password: z.string().min(1) }),
  };
});
// Auth.js's package imports Next's server internals, which load only inside Next; the login action needs its error class.
vi.mock("next-auth", () => ({ AuthError: class AuthError extends Error {} }));
vi.mock("next/headers", () => ({ headers: async () => state.headers, cookies: async () => new Map() }));
vi.mock("next/cache", () => ({ revalidatePath: vi.fn(), revalidateTag: vi.fn() }));

import { askAction, decideAction } from "../app/requests/[id]/actions";
import { saveRuleAction } from "../app/admin/policy/actions";
import { createAgentAction, enableAgentAction, endSessionsAction, revokeAgentAction, updateUserAction } from "../app/admin/people/actions";
import { createWebhookAction, deactivateWebhookAction } from "../app/admin/webhooks/actions";
import { signInWithPassword, signOutAction, signOutEverywhereAction } from "../app/login/actions";
import { setEmailPreferenceAction } from "../app/profile/actions";
import { GET as inboxGET } from "../app/api/inbox/route";
import { POST as previewPOST } from "../app/api/admin/policy/preview/route";
import { GET as exportGET } from "../app/admin/audit/export/route";
import { signIn, signOut } from "../lib/auth/auth";
import { authenticateAgent } from "../lib/auth/agents";
import { createAgent } from "../lib/admin/agents";
import { db } from "../lib/db/client";
import { callTool } from "../lib/tasks/call";
import { createWebhook } from "../lib/webhooks/admin";
import { activeRuleFields, principal, requestIdOf, resetDb, userId } from "./support/db";
import { newSessionTimes } from "../lib/auth/session-lifetime";

const HOST = "countersign.test";
const ORIGIN = `http://${HOST}`;
const EVIL = "https://evil.example";

type Who = "nobody" | "admin" | "lena" | "tara" | "theo" | "rita";
const EMAIL: Record<Exclude<Who, "nobody">, string> = {
  admin: "admin@countersign.test",
  lena: "lena.lead@countersign.test",
  tara: "tara.treasury@countersign.test",
  theo: "theo.treasury@countersign.test",
  rita: "rita.requester@countersign.test",
};

/** Signs `who` in (the session only names the user; role and groups are re-read from the database). */
async function as(who: Who, origin: string | null = ORIGIN): Promise<void> {
  // A session as Auth.js hands it over: signed in and last used now.
  state.session = who === "nobody" ? null : { user: { id: await userId(EMAIL[who]), ...newSessionTimes(new Date()) } };
  state.headers = new Headers({ host: HOST, ...(origin ? { origin } : {}) });
}

function form(fields: Record<string, string | string[]>): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) f.append(k, x);
  return f;
}

const IDLE = { status: "idle" } as const;

function expectRefused(result: { status: string; message?: string }, pattern: RegExp): void {
  expect(result.status).toBe("error");
  expect(result.message).toMatch(pattern);
}

const NOT_SIGNED_IN = /not signed in/;
const WRONG_ROLE = /may not do this/;
const CROSS_SITE = /Cross-site requests are refused/;

/** A request the treasury must approve (two approvals), made by the ops-bot for Otto (policy keeps the support-bot to refunds). */
async function treasuryRequest(amount = 30_000): Promise<{ taskId: string; requestId: string }> {
  const out = await callTool(await principal("ops-bot"), "wire_transfer", { to: `acct-sec-${amount}`, amount }, { tasks: true }, new Date());
  if (out.kind !== "task") throw new Error(`expected a task, got ${out.kind}`);
  return { taskId: out.task.taskId, requestId: await requestIdOf(out.task.taskId) };
}

async function reviewsOf(requestId: string): Promise<number> {
  return db().review.count({ where: { requestId } });
}

beforeEach(async () => {
  await resetDb();
  state.session = null;
  state.headers = new Headers();
});
afterEach(() => vi.clearAllMocks());

describe("decideAction (approve / deny) refuses", () => {
  it("without a session, with the wrong role, cross-site (forged and missing Origin); a treasury reviewer succeeds", async () => {
    const { requestId } = await treasuryRequest();
    const approve = () => form({ requestId, decision: "approve", comment: "", confirm: "30000", tool: "wire_transfer" });

    await as("nobody");
    expectRefused(await decideAction(IDLE, approve()), NOT_SIGNED_IN);
    await as("admin");
    expectRefused(await decideAction(IDLE, approve()), WRONG_ROLE);
    await as("rita");
    expectRefused(await decideAction(IDLE, approve()), WRONG_ROLE);
    await as("tara", EVIL);
    expectRefused(await decideAction(IDLE, approve()), CROSS_SITE);
    await as("tara", null);
    expectRefused(await decideAction(IDLE, approve()), CROSS_SITE);
    expect(await reviewsOf(requestId)).toBe(0);

    await as("tara");
    const ok = await decideAction(IDLE, approve());
    expect(ok).toMatchObject({ status: "done", decision: "approve" });
    expect(await reviewsOf(requestId)).toBe(1);
  });

  it("another group's request: a support lead cannot decide a treasury request", async () => {
    const { requestId } = await treasuryRequest();
    await as("lena");
    expectRefused(await decideAction(IDLE, form({ requestId, decision: "deny", comment: "not mine to decide" })), /Only active treasury reviewers/);
    expect(await reviewsOf(requestId)).toBe(0);
  });

  it("the reviewer's own request (their agent asked): refused, even with the confirmation typed", async () => {
    const tara = await userId(EMAIL.tara);
    const { token } = await createAgent({ name: "tara-own-bot", userId: tara }, await userId(EMAIL.admin), new Date());
    const own = await authenticateAgent(token);
    const out = await callTool(own!, "wire_transfer", { to: "acct-own", amount: 40_000 }, { tasks: true }, new Date());
    if (out.kind !== "task") throw new Error("expected a task");
    const requestId = await requestIdOf(out.task.taskId);
    await as("tara");
    expectRefused(await decideAction(IDLE, form({ requestId, decision: "approve", comment: "", confirm: "40000" })), /cannot review your own request/);
    expect(await reviewsOf(requestId)).toBe(0);
  });

  it("a second review by the same reviewer, and a high-risk approval without the typed amount", async () => {
    const { requestId } = await treasuryRequest();
    // The first of two approvals runs nothing: no typed confirmation.
    await as("tara");
    expect(await decideAction(IDLE, form({ requestId, decision: "approve", comment: "" }))).toMatchObject({ status: "done" });
    // The second completes the quorum: the amount must be typed.
    await as("theo");
    expectRefused(await decideAction(IDLE, form({ requestId, decision: "approve", comment: "" })), /your approval runs it: type the amount \(30000\.00\)/);
    expectRefused(await decideAction(IDLE, form({ requestId, decision: "approve", comment: "", confirm: "3000" })), /type the amount/);
    expect(await decideAction(IDLE, form({ requestId, decision: "approve", comment: "", confirm: "30,000.00" }))).toMatchObject({ status: "done" });
    expectRefused(await decideAction(IDLE, form({ requestId, decision: "approve", comment: "", confirm: "30000" })), /already/);
    expectRefused(await decideAction(IDLE, form({ requestId, decision: "deny", comment: "changed my mind" })), /already/);
    expect(await reviewsOf(requestId)).toBe(2);
  });
});

describe("askAction refuses", () => {
  it("without a session, with the wrong role, on another group's request, cross-site; an eligible reviewer succeeds", async () => {
    const { requestId, taskId } = await treasuryRequest();
    const ask = () => form({ requestId, question: "Which invoice does this pay?" });
    await as("nobody");
    expectRefused(await askAction(IDLE, ask()), NOT_SIGNED_IN);
    await as("admin");
    expectRefused(await askAction(IDLE, ask()), WRONG_ROLE);
    await as("lena");
    expectRefused(await askAction(IDLE, ask()), /Only active treasury reviewers/);
    await as("theo", EVIL);
    expectRefused(await askAction(IDLE, ask()), CROSS_SITE);
    await as("theo", null);
    expectRefused(await askAction(IDLE, ask()), CROSS_SITE);
    expect(await db().clarification.count({ where: { requestId } })).toBe(0);

    await as("theo");
    expect(await askAction(IDLE, ask())).toMatchObject({ status: "done" });
    expect((await db().task.findUniqueOrThrow({ where: { id: taskId } })).status).toBe("input_required");
  });
});

describe("admin actions refuse everyone but an admin, and cross-site calls", () => {
  async function refundRuleForm(value: string) {
    const r = await db().policyRule.findFirstOrThrow({ where: { ruleKey: "refund-over-limit", active: true } });
    return form({
      ruleKey: r.ruleKey,
      tool: r.tool,
      description: r.description,
      field: r.field,
      operator: r.operator,
      value,
      effect: r.effect,
      approverGroup: r.approverGroup ?? "",
      approvalsRequired: String(r.approvalsRequired),
      requestDeadlineSec: String(r.requestDeadlineSec),
      approvalValiditySec: String(r.approvalValiditySec),
      reason: r.reason,
      active: "on",
    });
  }
  const versions = () => db().policyRule.count({ where: { ruleKey: "refund-over-limit" } });

  /** Runs `call` as nobody, a reviewer, a requester, an admin cross-site (forged and missing Origin): all refused. */
  async function refusedForAllButAdmin(call: () => Promise<{ status: string; message?: string }>) {
    await as("nobody");
    expectRefused(await call(), NOT_SIGNED_IN);
    for (const who of ["lena", "tara", "rita"] as const) {
      await as(who);
      expectRefused(await call(), WRONG_ROLE);
    }
    await as("admin", EVIL);
    expectRefused(await call(), CROSS_SITE);
    await as("admin", null);
    expectRefused(await call(), CROSS_SITE);
  }

  it("saveRuleAction", async () => {
    await refusedForAllButAdmin(async () => saveRuleAction(IDLE, await refundRuleForm("16000")));
    expect(await versions()).toBe(1);
    await as("admin");
    const bad = await saveRuleAction(IDLE, await refundRuleForm("lots"));
    expect(bad).toMatchObject({ status: "error", fieldErrors: { value: expect.stringMatching(/number/) } });
    expect(await saveRuleAction(IDLE, await refundRuleForm("16000"))).toMatchObject({ status: "done", version: 2 });
    expect(await versions()).toBe(2);
  });

  it("updateUserAction on another user's account", async () => {
    const theo = await userId(EMAIL.theo);
    const promote = () => updateUserAction(IDLE, form({ userId: theo, role: "admin", groups: "treasury", active: "on" }));
    await refusedForAllButAdmin(promote);
    expect((await db().user.findUniqueOrThrow({ where: { id: theo } })).role).toBe("reviewer");
    await as("admin");
    expect(await updateUserAction(IDLE, form({ userId: theo, role: "reviewer", groups: "treasury, sre", active: "on" }))).toMatchObject({ status: "done" });
    expect((await db().user.findUniqueOrThrow({ where: { id: theo } })).groups).toEqual(["treasury", "sre"]);
  });

  it("createAgentAction for another user", async () => {
    const rita = await userId(EMAIL.rita);
    await refusedForAllButAdmin(() => createAgentAction(IDLE, form({ name: "sneaky-bot", userId: rita })));
    expect(await db().agent.count({ where: { name: "sneaky-bot" } })).toBe(0);
    await as("admin");
    const made = await createAgentAction(IDLE, form({ name: "billing-bot", userId: rita }));
    expect(made).toMatchObject({ status: "done", name: "billing-bot", token: expect.stringMatching(/^cs_/) });
  });

  it("revokeAgentAction on another user's agent", async () => {
    const agent = await db().agent.findFirstOrThrow({ where: { name: "support-bot" } });
    await refusedForAllButAdmin(() => revokeAgentAction(IDLE, form({ agentId: agent.id })));
    expect((await db().agent.findUniqueOrThrow({ where: { id: agent.id } })).revokedAt).toBeNull();
    await as("admin");
    // The first press only asks, saying what revoking ends; the confirming press revokes.
    expect(await revokeAgentAction(IDLE, form({ agentId: agent.id }))).toMatchObject({ status: "confirm", message: expect.stringMatching(/^Its next request is refused\. This ends (no pending request|\d+ pending requests?)\.$/) });
    expect((await db().agent.findUniqueOrThrow({ where: { id: agent.id } })).revokedAt).toBeNull();
    expect(await revokeAgentAction(IDLE, form({ agentId: agent.id, confirmed: "yes" }))).toMatchObject({ status: "done" });
    expect((await db().agent.findUniqueOrThrow({ where: { id: agent.id } })).revokedAt).not.toBeNull();
  });

  it("enableAgentAction on a pending OAuth agent", async () => {
    const admin = await userId(EMAIL.admin);
    const agent = await db().agent.create({
      data: { name: "oauth-ci", tokenHash: "oauth-test-hash", tokenPrefix: "oauth", userId: admin, oauthIssuer: "https://auth.example.com", oauthClientId: "ci", pendingSince: new Date() },
    });
    const rita = await userId(EMAIL.rita);
    await refusedForAllButAdmin(() => enableAgentAction(IDLE, form({ agentId: agent.id, userId: rita })));
    expect((await db().agent.findUniqueOrThrow({ where: { id: agent.id } })).pendingSince).not.toBeNull();
    await as("admin");
    expect(await enableAgentAction(IDLE, form({ agentId: agent.id, userId: rita }))).toMatchObject({ status: "done" });
    expect(await db().agent.findUniqueOrThrow({ where: { id: agent.id } })).toMatchObject({ pendingSince: null, userId: rita });
    expect(await db().auditEvent.count({ where: { type: "agent.enabled", actor: `user:${admin}` } })).toBe(1);
    expect(await enableAgentAction(IDLE, form({ agentId: agent.id, userId: rita }))).toMatchObject({ status: "error" });
  });

  it("createWebhookAction and deactivateWebhookAction", async () => {
    await refusedForAllButAdmin(() => createWebhookAction(IDLE, form({ url: "https://hooks.example/x", events: ["request.created"] })));
    expect(await db().webhook.count()).toBe(0);
    const { webhook } = await createWebhook({ url: "https://hooks.example/y", events: ["task.completed"] }, await userId(EMAIL.admin), new Date());
    await refusedForAllButAdmin(() => deactivateWebhookAction(IDLE, form({ webhookId: webhook.id })));
    expect((await db().webhook.findUniqueOrThrow({ where: { id: webhook.id } })).active).toBe(true);
    await as("admin");
    expect(await createWebhookAction(IDLE, form({ url: "https://hooks.example/z", events: ["request.created"] }))).toMatchObject({
      status: "done",
      secret: expect.stringMatching(/^whsec_/),
    });
    expect(await deactivateWebhookAction(IDLE, form({ webhookId: webhook.id }))).toMatchObject({ status: "done" });
  });
});

describe("sign-in and sign-out refuse cross-site posts", () => {
  it("a forged or missing Origin never reaches Auth.js", async () => {
    const creds = () => form({ email: EMAIL.lena, password: "countersign-demo" });
    for (const origin of [EVIL, null]) {
      await as("nobody", origin);
      expect(await signInWithPassword({}, creds())).toMatchObject({ error: expect.stringMatching(CROSS_SITE) });
      await as("lena", origin);
      await signOutAction();
    }
    expect(signIn).not.toHaveBeenCalled();
    expect(signOut).not.toHaveBeenCalled();
    await as("nobody");
    await signInWithPassword({}, creds());
    expect(signIn).toHaveBeenCalledTimes(1);
  });
});

describe("ending sessions", () => {
  const epochOf = async (email: string) => (await db().user.findUniqueOrThrow({ where: { email } })).sessionEpoch;

  it("an admin ends another user's sessions; nobody else may, nor cross-site; each refusal changes nothing", async () => {
    const lena = await userId(EMAIL.lena);
    await as("nobody");
    expectRefused(await endSessionsAction(IDLE, form({ userId: lena })), NOT_SIGNED_IN);
    await as("tara");
    expectRefused(await endSessionsAction(IDLE, form({ userId: lena })), WRONG_ROLE);
    await as("admin", EVIL);
    expectRefused(await endSessionsAction(IDLE, form({ userId: lena })), CROSS_SITE);
    await as("admin", null);
    expectRefused(await endSessionsAction(IDLE, form({ userId: lena })), CROSS_SITE);
    expect(await epochOf(EMAIL.lena)).toBe(0);
    await as("admin");
    expect(await endSessionsAction(IDLE, form({ userId: lena }))).toMatchObject({ status: "done" });
    expect(await epochOf(EMAIL.lena)).toBe(1);
    expect(await db().auditEvent.count({ where: { type: "user.sessions-ended", actor: `user:${await userId(EMAIL.admin)}` } })).toBe(1);
    // Lena's session (signed in under epoch 0) is refused at her next request.
    await as("lena");
    expectRefused(await endSessionsAction(IDLE, form({ userId: lena })), NOT_SIGNED_IN);
  });

  it("signing out everywhere needs the person's own session from this site; then ends all of theirs and this one", async () => {
    for (const origin of [EVIL, null]) {
      await as("lena", origin);
      await signOutEverywhereAction();
    }
    await as("nobody");
    await signOutEverywhereAction();
    expect(signOut).not.toHaveBeenCalled();
    expect(await epochOf(EMAIL.lena)).toBe(0);
    await as("lena");
    await signOutEverywhereAction();
    expect(await epochOf(EMAIL.lena)).toBe(1);
    expect(signOut).toHaveBeenCalledWith({ redirectTo: "/login" });
  });
});

describe("sign-in returns to the page asked for, never to another site", () => {
  it("a same-origin path is followed; another site, a protocol-relative or a backslash path falls back to the inbox", async () => {
    await as("nobody");
    const cases: [string, string][] = [
      ["/requests/5b1e6f0a-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "/requests/5b1e6f0a-1c2d-4e5f-8a9b-0c1d2e3f4a5b"],
      ["https://evil.example/requests/1", "/inbox"],
      ["//evil.example", "/inbox"],
      ["/\\evil.example", "/inbox"],
    ];
    for (const [next, expected] of cases) {
      vi.mocked(signIn).mockClear();
      await signInWithPassword({}, form({ email: EMAIL.lena, password: "countersign-demo", next }));
      expect(vi.mocked(signIn).mock.calls[0]?.[1], next).toMatchObject({ redirectTo: expected });
    }
  });
});

describe("the profile's notification preference", () => {
  it("changes only the signed-in person's own preference, and refuses a cross-site post or no session", async () => {
    const lena = await userId(EMAIL.lena);
    await as("nobody");
    expect(await setEmailPreferenceAction({ status: "idle" }, form({ email: "off" }))).toMatchObject({ status: "error" });
    await as("lena", EVIL);
    expect(await setEmailPreferenceAction({ status: "idle" }, form({ email: "off" }))).toMatchObject({ status: "error" });
    expect((await db().user.findUniqueOrThrow({ where: { id: lena } })).emailNotifications).toBe(true);
    await as("lena");
    expect(await setEmailPreferenceAction({ status: "idle" }, form({ email: "maybe" }))).toMatchObject({ status: "error" });
    expect(await setEmailPreferenceAction({ status: "idle" }, form({ email: "off" }))).toEqual({ status: "done", message: "Notification emails are off." });
    expect((await db().user.findUniqueOrThrow({ where: { id: lena } })).emailNotifications).toBe(false);
    expect(await db().user.count({ where: { emailNotifications: false } })).toBe(1);
    expect(await db().auditEvent.count({ where: { type: "notifications.email-off", actor: `user:${lena}` } })).toBe(1);
  });
});

describe("route handlers refuse", () => {
  function get(path: string, headers: Record<string, string> = {}): Request {
    return new Request(`${ORIGIN}${path}`, { headers: { host: HOST, ...headers } });
  }
  function post(path: string, body: unknown, headers: Record<string, string> = { origin: ORIGIN }): Request {
    return new Request(`${ORIGIN}${path}`, { method: "POST", body: JSON.stringify(body), headers: { host: HOST, "content-type": "application/json", ...headers } });
  }

  it("GET /api/inbox: no session 401, wrong role 403, cross-site 403; another group's requests never listed", async () => {
    const { requestId } = await treasuryRequest();
    await as("nobody");
    expect((await inboxGET(get("/api/inbox"))).status).toBe(401);
    await as("admin");
    expect((await inboxGET(get("/api/inbox"))).status).toBe(403);
    await as("rita");
    expect((await inboxGET(get("/api/inbox"))).status).toBe(403);
    await as("tara");
    expect((await inboxGET(get("/api/inbox", { origin: EVIL }))).status).toBe(403);
    expect((await inboxGET(get("/api/inbox", { "sec-fetch-site": "cross-site" }))).status).toBe(403);
    // A same-origin GET carries no Origin header: allowed. Tara sees the treasury request ...
    const mine = await (await inboxGET(get("/api/inbox", { "sec-fetch-site": "same-origin" }))).json();
    expect(mine.items.map((i: { id: string }) => i.id)).toContain(requestId);
    // ... Lena (support-leads) does not, even when she asks for the treasury group by name.
    await as("lena");
    const theirs = await (await inboxGET(get("/api/inbox?group=treasury"))).json();
    expect(theirs.items).toEqual([]);
    expect((await (await inboxGET(get("/api/inbox"))).json()).items).toEqual([]);
  });

  it("POST /api/admin/policy/preview: no session 401, wrong role 403, forged or missing Origin 403", async () => {
    const body = { draft: { ...(await activeRuleFields("refund-over-limit")), value: "20000" }, arguments: { order_id: "O-2289" } };
    await as("nobody");
    expect((await previewPOST(post("/api/admin/policy/preview", body))).status).toBe(401);
    await as("lena");
    expect((await previewPOST(post("/api/admin/policy/preview", body))).status).toBe(403);
    await as("admin");
    expect((await previewPOST(post("/api/admin/policy/preview", body, { origin: EVIL }))).status).toBe(403);
    expect((await previewPOST(post("/api/admin/policy/preview", body, {}))).status).toBe(403);
    const ok = await previewPOST(post("/api/admin/policy/preview", body));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ current: { decision: "requestable" }, draft: { decision: "allow" } });
  });

  it("GET /admin/audit/export: no session 401, wrong role 403, cross-site 403", async () => {
    await as("nobody");
    expect((await exportGET(get("/admin/audit/export?format=jsonl"))).status).toBe(401);
    await as("tara");
    expect((await exportGET(get("/admin/audit/export?format=jsonl"))).status).toBe(403);
    await as("admin");
    expect((await exportGET(get("/admin/audit/export?format=jsonl", { origin: EVIL }))).status).toBe(403);
    expect((await exportGET(get("/admin/audit/export?format=csv", { "sec-fetch-site": "cross-site" }))).status).toBe(403);
    const ok = await exportGET(get("/admin/audit/export?format=csv"));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-disposition")).toMatch(/attachment; filename="countersign-audit-.*\.csv"/);
    expect((await ok.text()).split("\n")[0]).toBe("seq,at,type,actor,taskId,requestId,data,prevHash,hash");
  });
});
