/**
 * Reviewers are told by email that a request is waiting, reminded before its deadline and told its outcome,
 * through a real SMTP server this test starts (smtp-server, with authentication), each message parsed back
 * (mailparser). The outbox is written with the change that causes it and delivered at least once, with bounded
 * retries and no duplicate per (request, kind, recipient).
 */
import type { AddressInfo } from "node:net";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { sweep } from "../lib/execution/sweep";
import { deliverNotifications, NOTIFY_LEASE_MS, NOTIFY_RETRY_DELAYS_MS } from "../lib/notify/deliver";
import { enqueueNotifications } from "../lib/notify/outbox";
import { decide } from "../lib/tasks/decide";
import { purgeExpiredTasks } from "../lib/tasks/retention";
import { approveOnly, at, DAY, gatedCall, HOUR, LEADS, MIN, startWorker, T0, TREASURY } from "./support/proof";
import { principal, requestIdOf, resetDb, userId } from "./support/db";

type Mail = { envelopeTo: string[]; parsed: ParsedMail };
let server: SMTPServer | null = null;
let mails: Mail[] = [];
/** Refuse the next n messages with a temporary failure, as a busy SMTP server does. */
let refuseNext = 0;

async function startSmtp(): Promise<void> {
  mails = [];
  refuseNext = 0;
  server = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    onAuth(auth, _session, cb) {
      if (auth.username === "mailer" && auth.password === "s3cret-pass") return cb(null, { user: "mailer" });
      cb(new Error("Invalid username or password"));
    },
    onData(stream, session, cb) {
      simpleParser(stream).then(
        (parsed) => {
          if (refuseNext > 0) {
            refuseNext--;
            const err = Object.assign(new Error("Try again later"), { responseCode: 451 });
            return cb(err);
          }
          mails.push({ envelopeTo: session.envelope.rcptTo.map((r) => r.address), parsed });
          cb();
        },
        (e) => cb(e),
      );
    },
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
  const port = (server.server.address() as AddressInfo).port;
  process.env.COUNTERSIGN_SMTP_URL = `smtp://mailer:s3cret-pass@127.0.0.1:${port}`;
  process.env.COUNTERSIGN_MAIL_FROM = "Countersign <approvals@countersign.test>";
  process.env.COUNTERSIGN_PUBLIC_URL = "https://countersign.example.com";
}

beforeEach(async () => {
  await resetDb();
  await startSmtp();
});
afterEach(async () => {
  delete process.env.COUNTERSIGN_SMTP_URL;
  delete process.env.COUNTERSIGN_REMINDERS;
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
});

const to = (m: Mail) => m.envelopeTo.join(",");
const recipients = (list: Mail[]) => list.map(to).sort();
const byKind = (kind: string) => mails.filter((m) => m.parsed.headers.get("x-countersign-kind") === kind);

async function refund(now = T0) {
  const taskId = await gatedCall(await principal("support-bot"), "issue_refund", { order_id: "O-2289" }, now);
  return { taskId, requestId: await requestIdOf(taskId) };
}

async function transfer(now = T0, memo = "Q4 supplier <b>invoice</b> & <script>alert(1)</script>") {
  const taskId = await gatedCall(await principal("ops-bot"), "wire_transfer", { to: "acct-991", amount: 30000, memo }, now);
  return { taskId, requestId: await requestIdOf(taskId) };
}

describe("email notifications through an SMTP server", () => {
  it("a new request is emailed to the eligible reviewers of its group only: never the requester, never an inactive or other-group user", async () => {
    // An inactive support lead and a support lead who is also the requester's user are not eligible.
    await db().user.create({ data: { email: "old.lead@countersign.test", name: "Old Lead", passwordHash: "x", role: "reviewer", groups: ["support-leads"], active: false } });
    await db().user.update({ where: { email: "rita.requester@countersign.test" }, data: { role: "reviewer", groups: ["support-leads"] } });
    const { requestId } = await refund();
    const rows = await db().notification.findMany({ where: { requestId } });
    expect(rows.map((r) => r.kind)).toEqual(["created", "created"]);

    expect(await deliverNotifications(at(1000))).toEqual({ sent: 2, retried: 0, failed: 0, skipped: 0 });
    expect(recipients(mails)).toEqual([...LEADS].sort());
    expect(mails.some((m) => to(m).includes("rita.requester"))).toBe(false);
    expect(mails.some((m) => to(m).includes("old.lead"))).toBe(false);

    const m = mails.find((x) => to(x) === "lena.lead@countersign.test")!.parsed;
    expect(m.from?.value).toEqual([{ name: "Countersign", address: "approvals@countersign.test" }]);
    expect(m.subject).toBe("[Countersign] Approval needed: EUR 180.00 refund on order O-2289");
    expect(m.text).toContain("Hello Lena Lead,");
    expect(m.text).toContain("support-bot (acting for Rita Requester) asks to run issue_refund and needs 1 approval from support-leads.");
    expect(m.text).toContain("Deadline: 1 Dec 2100, 10:00 UTC (in 24 hours)");
    expect(m.text).toContain(`https://countersign.example.com/requests/${requestId}`);
    expect(m.html).toContain(`href="https://countersign.example.com/requests/${requestId}"`);
    expect(m.messageId).toMatch(/^<[0-9a-f-]{36}@countersign\.example\.com>$/);
  });

  it("amounts read as people read them, and untrusted text is escaped in the HTML; no credential appears", async () => {
    const { requestId } = await transfer();
    await deliverNotifications(at(1000));
    expect(recipients(mails)).toEqual([...TREASURY].sort());
    const m = mails[0].parsed;
    expect(m.subject).toBe("[Countersign] Approval needed: USD 30,000.00 wire transfer to acct-991");
    const html = String(m.html);
    expect(html).toContain("USD 30,000.00 wire transfer to acct-991");
    expect(html).toContain("Q4 supplier &lt;b&gt;invoice&lt;/b&gt; &amp; &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<b>invoice");
    expect(m.text).toContain("memo: Q4 supplier <b>invoice</b> & <script>alert(1)</script>");
    expect(m.text).toContain("needs 2 approvals from treasury");
    for (const part of [m.text, html, m.subject]) expect(part).not.toContain("s3cret-pass");
    const row = await db().notification.findFirstOrThrow({ where: { requestId } });
    expect(JSON.stringify(row)).not.toContain("acct-991");
  });

  it("reminders go at 50% and 90% of the deadline (passed-in clock), only to reviewers who have not reviewed yet", async () => {
    process.env.COUNTERSIGN_REMINDERS = "0.5,0.9";
    const { taskId, requestId } = await transfer(); // 48 h to decide
    await deliverNotifications(at(1000));
    mails = [];
    await approveOnly(taskId, "tara.treasury@countersign.test", at(HOUR));

    expect(await sweep(at(24 * HOUR - MIN))).toMatchObject({ reminders: 0 });
    expect(byKind("reminder-50")).toHaveLength(0);
    expect(await sweep(at(24 * HOUR))).toMatchObject({ reminders: 1, notifications: { sent: 1 } });
    expect(recipients(byKind("reminder-50"))).toEqual(["theo.treasury@countersign.test"]);
    const r = byKind("reminder-50")[0].parsed;
    expect(r.subject).toBe("[Countersign] Reminder: USD 30,000.00 wire transfer to acct-991 (deadline in 24 hours)");
    expect(r.text).toContain("1 of 2 approvals recorded so far.");
    // Once per fraction: later sweeps before 90% send nothing more.
    expect(await sweep(at(40 * HOUR))).toMatchObject({ reminders: 0, notifications: { sent: 0 } });
    expect(await sweep(at(0.9 * 48 * HOUR))).toMatchObject({ reminders: 1 });
    expect(recipients(byKind("reminder-90"))).toEqual(["theo.treasury@countersign.test"]);
    expect(byKind("reminder-90")[0].parsed.subject).toContain("(deadline in 5 hours)");
    expect(await db().notification.count({ where: { requestId, kind: { startsWith: "reminder" } } })).toBe(2);
  });

  it("a sweeper that was down past both fractions sends only the latest reminder; a decided request is never reminded", async () => {
    const a = await refund(); // 24 h
    const b = await transfer();
    await decide({ requestId: b.requestId, reviewerId: await userId("tara.treasury@countersign.test"), decision: "deny", comment: "No invoice" }, at(MIN));
    await sweep(at(23 * HOUR));
    expect(await db().notification.findMany({ where: { kind: { startsWith: "reminder" } }, select: { requestId: true, kind: true } })).toEqual(
      [LEADS[0], LEADS[1]].map(() => ({ requestId: a.requestId, kind: "reminder-90" })),
    );
  });

  it("the outcome goes to the reviewers who were asked and the requester's user", async () => {
    const { requestId } = await refund();
    await deliverNotifications(at(1000));
    mails = [];
    const r = await decide({ requestId, reviewerId: await userId("lena.lead@countersign.test"), decision: "deny", comment: "Customer already <refunded>" }, at(MIN));
    expect(r).toMatchObject({ ok: true, requestStatus: "denied" });
    expect(await deliverNotifications(at(2 * MIN))).toMatchObject({ sent: 3 });
    expect(recipients(mails)).toEqual([...LEADS, "rita.requester@countersign.test"].sort());
    const m = mails.find((x) => to(x) === "lena.lead@countersign.test")!.parsed;
    expect(m.subject).toBe("[Countersign] Denied: EUR 180.00 refund on order O-2289");
    expect(m.text).toContain("It was denied by Lena Lead: Customer already <refunded>");
    expect(String(m.html)).toContain("Customer already &lt;refunded&gt;");
    expect(m.text).toContain(`See the request: https://countersign.example.com/requests/${requestId}`);
    // The requester's user is told the outcome, without a link to a page only reviewers open.
    const toRequester = mails.find((x) => to(x) === "rita.requester@countersign.test")!.parsed;
    expect(toRequester.subject).toBe(m.subject);
    expect(toRequester.text).not.toContain("/requests/");
  });

  it("an approval's outcome goes to the same people, once the approval decides the request", async () => {
    const { requestId } = await refund();
    await deliverNotifications(at(1000));
    mails = [];
    const r = await decide({ requestId, reviewerId: await userId("lena.lead@countersign.test"), decision: "approve" }, at(MIN));
    expect(r).toMatchObject({ ok: true, requestStatus: "approved" });
    await deliverNotifications(at(2 * MIN));
    expect(byKind("outcome").map((m) => to(m)).sort()).toEqual([...LEADS, "rita.requester@countersign.test"].sort());
    expect(byKind("outcome").map((m) => m.parsed.subject)).toEqual(Array(3).fill("[Countersign] Approved: EUR 180.00 refund on order O-2289"));
  });

  it("an expired request's outcome says it expired, to the reviewers asked and the requester", async () => {
    const { requestId } = await refund();
    await deliverNotifications(at(1000));
    mails = [];
    await sweep(at(DAY + 1000));
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).toMatchObject({ status: "expired" });
    expect(byKind("outcome").map((m) => m.parsed.subject)).toEqual(Array(3).fill("[Countersign] Expired: EUR 180.00 refund on order O-2289"));
  });

  it("retries after the SMTP server refused once, with backoff, and ends as failed after the last attempt", async () => {
    await refund();
    refuseNext = 1;
    expect(await deliverNotifications(at(1000))).toEqual({ sent: 1, retried: 1, failed: 0, skipped: 0 });
    const retried = await db().notification.findFirstOrThrow({ where: { status: "pending" } });
    expect(retried).toMatchObject({ attempts: 1, lastError: "the SMTP server refused the message (451 after DATA)" });
    expect(await deliverNotifications(at(1000 + NOTIFY_RETRY_DELAYS_MS[0] - 1))).toEqual({ sent: 0, retried: 0, failed: 0, skipped: 0 });
    expect(await deliverNotifications(at(1000 + NOTIFY_RETRY_DELAYS_MS[0]))).toEqual({ sent: 1, retried: 0, failed: 0, skipped: 0 });
    expect(recipients(mails)).toEqual([...LEADS].sort());
    expect(await db().notification.count({ where: { status: "sent" } })).toBe(2);

    // A server that keeps refusing: bounded attempts, then failed.
    const { requestId } = await transfer();
    refuseNext = 1000;
    let t = at(HOUR).getTime();
    for (let i = 0; i <= NOTIFY_RETRY_DELAYS_MS.length; i++) {
      await deliverNotifications(new Date(t));
      t += NOTIFY_RETRY_DELAYS_MS[i] ?? 0;
    }
    const ended = await db().notification.findMany({ where: { requestId } });
    expect(ended.map((n) => [n.status, n.attempts])).toEqual(ended.map(() => ["failed", NOTIFY_RETRY_DELAYS_MS.length + 1]));
  });

  it("no duplicate: the outbox is idempotent per (request, kind, recipient), and racing deliverers send each message once", async () => {
    const { requestId } = await refund();
    expect(await db().$transaction((tx) => enqueueNotifications(tx, requestId, "created", at(1)))).toBe(0);
    const reports = await Promise.all([deliverNotifications(at(1000)), deliverNotifications(at(1000)), deliverNotifications(at(1000))]);
    expect(reports.reduce((n, r) => n + r.sent, 0)).toBe(2);
    expect(await deliverNotifications(at(5 * MIN))).toEqual({ sent: 0, retried: 0, failed: 0, skipped: 0 });
    expect(recipients(mails)).toEqual([...LEADS].sort());
  });

  it("a reviewer who turned email off is not emailed; with email off nothing is written and pending rows are skipped", async () => {
    await db().user.update({ where: { email: "sam.lead@countersign.test" }, data: { emailNotifications: false } });
    await refund();
    await deliverNotifications(at(1000));
    expect(recipients(mails)).toEqual(["lena.lead@countersign.test"]);

    const { requestId } = await transfer();
    delete process.env.COUNTERSIGN_SMTP_URL;
    expect(await deliverNotifications(at(2000))).toEqual({ sent: 0, retried: 0, failed: 0, skipped: 2 });
    expect((await db().notification.findMany({ where: { requestId } })).map((n) => n.lastError)).toEqual(Array(2).fill("the email channel is not configured"));
    await refund(at(HOUR)).catch(() => undefined);
    const before = await db().notification.count();
    await transfer(at(2 * HOUR), "another");
    expect(await db().notification.count()).toBe(before);
  });

  it("nothing lost on a crash: a request committed by a process killed right after is announced, and a send the process died after is sent again under the same Message-ID", async () => {
    // The creating process dies by SIGKILL after the backend committed the request (before its task is bound).
    const creator = startWorker("crash-worker.ts", ["call", "support-bot", "issue_refund", JSON.stringify({ order_id: "O-2289" }), T0.toISOString()], { COUNTERSIGN_FAULT: "after-submit", APPROVAL_BACKEND: "apart" });
    expect(await creator.exited).toEqual({ code: null, signal: "SIGKILL" });
    const req = await db().approvalRequest.findFirstOrThrow();
    expect((await db().notification.findMany({ where: { requestId: req.id } })).map((n) => n.kind)).toEqual(["created", "created"]);

    // A deliverer dies by SIGKILL after the SMTP server accepted a message, before marking it sent.
    const deliverer = startWorker("crash-worker.ts", ["deliver-notifications", at(1000).toISOString()], { COUNTERSIGN_FAULT: "after-notification-sent" });
    expect(await deliverer.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(mails).toHaveLength(1);
    const first = mails[0];
    // The restarted deliverer sends the other one now, and the interrupted one once its lease has passed.
    expect(await deliverNotifications(at(2000))).toMatchObject({ sent: 1 });
    expect(await deliverNotifications(at(1000 + NOTIFY_LEASE_MS))).toMatchObject({ sent: 1 });
    expect(await db().notification.count({ where: { status: "sent" } })).toBe(2);
    const again = mails.filter((m) => to(m) === to(first));
    expect(again).toHaveLength(2);
    expect(again[1].parsed.messageId).toBe(first.parsed.messageId);
    expect(recipients(mails)).toEqual([...LEADS, to(first)].sort());
  });

  it("a task's notifications go with its purge at the end of retention", async () => {
    const { requestId } = await refund();
    await decide({ requestId, reviewerId: await userId("lena.lead@countersign.test"), decision: "deny", comment: "No" }, at(MIN));
    await deliverNotifications(at(2 * MIN));
    expect(await db().notification.count({ where: { requestId } })).toBe(5);
    expect(await purgeExpiredTasks(at(60 * DAY))).toBe(1);
    expect(await db().notification.count({ where: { requestId } })).toBe(0);
  });
});

