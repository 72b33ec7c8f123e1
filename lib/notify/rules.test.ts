import { describe, expect, it } from "vitest";
import { dueReminder } from "./reminders";
import { renderNotification, type RequestFacts } from "./render";
import { describeNotifySettings, parseReminders, reminderKind, SettingError } from "./settings";

const T0 = new Date("2100-01-01T00:00:00Z");
const at = (h: number) => new Date(T0.getTime() + h * 3600_000);

describe("reminder settings and timing", () => {
  it("COUNTERSIGN_REMINDERS defaults to 50% and 90%, accepts a list, 'none', and refuses what is not a fraction", () => {
    expect(parseReminders(undefined)).toEqual([0.5, 0.9]);
    expect(parseReminders(" 0.9, 0.25,0.9")).toEqual([0.25, 0.9]);
    expect(parseReminders("none")).toEqual([]);
    expect(() => parseReminders("0.5,1.5")).toThrow(SettingError);
    expect(() => parseReminders("half")).toThrow(/"half" is not a fraction/);
    expect(reminderKind(0.5)).toBe("reminder-50");
    expect(reminderKind(0.125)).toBe("reminder-12.5");
  });

  it("the reminder due is the latest fraction of the window that has passed, none before the first or after the deadline", () => {
    const f = [0.5, 0.9];
    expect(dueReminder(T0, at(10), at(4.99), f)).toBeNull();
    expect(dueReminder(T0, at(10), at(5), f)).toBe("reminder-50");
    expect(dueReminder(T0, at(10), at(8.99), f)).toBe("reminder-50");
    expect(dueReminder(T0, at(10), at(9), f)).toBe("reminder-90");
    expect(dueReminder(T0, at(10), at(10), f)).toBeNull();
    expect(dueReminder(T0, at(10), at(9), [])).toBeNull();
  });
});

describe("notification settings at start-up", () => {
  const keep = { ...process.env };
  const withEnv = (env: Record<string, string | undefined>, f: () => unknown) => {
    Object.assign(process.env, env);
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete process.env[k];
    try {
      return f();
    } finally {
      for (const k of Object.keys(env)) {
        if (keep[k] === undefined) delete process.env[k];
        else process.env[k] = keep[k];
      }
    }
  };

  it("say email is off when COUNTERSIGN_SMTP_URL is unset, and what is on without the credentials", () => {
    expect(withEnv({ COUNTERSIGN_SMTP_URL: undefined, COUNTERSIGN_REMINDERS: undefined }, describeNotifySettings)).toBe("email notifications off (COUNTERSIGN_SMTP_URL unset)");
    const on = withEnv(
      { COUNTERSIGN_SMTP_URL: "smtp://mailer:p%40ss-word@mail.example:2525", COUNTERSIGN_PUBLIC_URL: "https://cs.example/", COUNTERSIGN_MAIL_FROM: undefined, COUNTERSIGN_REMINDERS: "0.75" },
      describeNotifySettings,
    );
    expect(on).toBe("email notifications on via smtp://mail.example:2525 from Countersign <countersign@localhost>, links to https://cs.example, reminders at 75% of the deadline");
    expect(on).not.toContain("ss-word");
  });

  it("refuse a wrong scheme, a URL that is not one, or wrong reminder fractions, naming the variable", () => {
    expect(() => withEnv({ COUNTERSIGN_SMTP_URL: "http://mail.example" }, describeNotifySettings)).toThrow(/COUNTERSIGN_SMTP_URL must start with smtp:\/\//);
    expect(() => withEnv({ COUNTERSIGN_SMTP_URL: "not a url" }, describeNotifySettings)).toThrow(/COUNTERSIGN_SMTP_URL is not a URL/);
    expect(() => withEnv({ COUNTERSIGN_SMTP_URL: undefined, COUNTERSIGN_REMINDERS: "0.5,2" }, describeNotifySettings)).toThrow(/COUNTERSIGN_REMINDERS/);
  });
});

describe("what a notification says", () => {
  const facts: RequestFacts = {
    id: "r-1",
    summary: "USD 1,234,567.50 wire transfer to acct-9 </p><img src=x onerror=alert(1)>",
    tool: "wire_transfer",
    arguments: { to: "acct-9", amount: 1234567.5, memo: "line one\r\nBcc: evil@example.com" },
    approverGroup: "treasury",
    approvalsRequired: 2,
    requirePasskey: false,
    approvals: 0,
    status: "pending",
    deadline: at(2),
    agentName: "ops-bot",
    requesterName: "Otto <Ops>",
    reviews: [],
    link: "https://cs.example/requests/r-1",
  };

  it("untrusted text is escaped in the HTML and cannot break out of the subject line", () => {
    const r = renderNotification("created", { ...facts, summary: `${facts.summary}\r\nBcc: evil@example.com` }, { name: "Tara" }, T0);
    expect(r.subject).not.toMatch(/[\r\n]/);
    expect(r.subject.startsWith("[Countersign] Approval needed: USD 1,234,567.50 wire transfer")).toBe(true);
    expect(r.html).not.toContain("<img");
    expect(r.html).toContain("&lt;/p&gt;&lt;img src=x onerror=alert(1)&gt;");
    expect(r.html).toContain("Otto &lt;Ops&gt;");
    expect(r.text).toContain("Deadline: 1 Jan 2100, 02:00 UTC (in 2 hours)");
  });

  it("an escalation says the request is now offered to the fallback group too, with the link to it", () => {
    const r = renderNotification("escalated", { ...facts, escalatedTo: "sre", approvals: 1 }, { name: "Ada" }, T0);
    expect(r.subject.startsWith("[Countersign] Escalated: USD 1,234,567.50 wire transfer")).toBe(true);
    expect(r.text).toContain("No decision came in time, so this request is now offered to sre too.");
    expect(r.text).toContain("needs 2 approvals from treasury. 1 of 2 approvals recorded so far.");
    expect(r.text).toContain("Open the request: https://cs.example/requests/r-1");
  });
});
