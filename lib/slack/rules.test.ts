/** The pure rules of the Slack integration: which requests are decided in chat, mrkdwn escaping, signatures. */
import { describe, expect, it } from "vitest";
import { decidableInChat, storedRequirements } from "./decidable";
import { APPROVE_ACTION, DENY_ACTION, escapeMrkdwn, requestMessage } from "./message";
import { slackSignature, verifySlackSignature } from "./signature";
import { describeSlackSettings } from "./settings";
import type { RequestFacts } from "../notify/render";

const NOW = new Date("2100-11-30T10:00:00Z");
const facts = (over: Partial<RequestFacts> = {}): RequestFacts => ({
  id: "req-1",
  summary: "USD 30,000.00 wire transfer to <@U999|boss> & <!channel>",
  tool: "wire_transfer",
  arguments: { to: "acct-991", memo: "<https://evil.example|click here> <!here>" },
  approverGroup: "treasury",
  approvalsRequired: 1,
  requirePasskey: false,
  approvals: 0,
  status: "pending",
  deadline: new Date(NOW.getTime() + 3_600_000),
  agentName: "ops-bot",
  requesterName: "Otto <Ops>",
  reviews: [],
  link: "https://countersign.example.com/requests/req-1",
  ...over,
});
const actionIds = (m: ReturnType<typeof requestMessage>) =>
  m.blocks.filter((b) => b.type === "actions").flatMap((b) => (b.elements as { action_id: string }[]).map((e) => e.action_id));

describe("decidableInChat", () => {
  it("a request that needs one approval is decided in chat; one that needs more than one approver is not", () => {
    expect(decidableInChat({ approvalsRequired: 1 })).toBe(true);
    expect(decidableInChat({ approvalsRequired: 2 })).toBe(false);
    expect(decidableInChat({ approvalsRequired: 3 })).toBe(false);
  });

  it("a request whose approvals are confirmed with a passkey is not approved in chat, whatever its quorum", () => {
    expect(decidableInChat({ approvalsRequired: 1, requirePasskey: true })).toBe(false);
    expect(decidableInChat({ approvalsRequired: 1, requirePasskey: false })).toBe(true);
  });

  it("judges the stored request: its approvalsRequired column wins over what its body says", () => {
    const body = { requirements: { approverGroup: "treasury", approvalsRequired: 1 } };
    expect(storedRequirements({ approvalsRequired: 2, requirePasskey: false }, body)).toEqual({ approverGroup: "treasury", approvalsRequired: 2, requirePasskey: false });
    expect(decidableInChat(storedRequirements({ approvalsRequired: 2, requirePasskey: false }, body))).toBe(false);
    expect(decidableInChat(storedRequirements({ approvalsRequired: 1, requirePasskey: false }, {}))).toBe(true);
    // The column wins over a body that says no passkey.
    expect(decidableInChat(storedRequirements({ approvalsRequired: 1, requirePasskey: true }, { requirements: { requirePasskey: false } }))).toBe(false);
  });
});

describe("the request's Slack message", () => {
  it("untrusted text is escaped for mrkdwn: no link, mention or channel ping can be injected", () => {
    expect(escapeMrkdwn("a & <b> <!channel> <@U1>")).toBe("a &amp; &lt;b&gt; &lt;!channel&gt; &lt;@U1&gt;");
    const all = JSON.stringify(requestMessage(facts(), true, NOW));
    expect(all).not.toMatch(/<[@!h]/);
    expect(all).toContain("&lt;https://evil.example|click here&gt; &lt;!here&gt;");
    expect(all).toContain("USD 30,000.00 wire transfer to &lt;@U999|boss&gt; &amp; &lt;!channel&gt;");
    expect(all).toContain("Otto &lt;Ops&gt;");
  });

  it("a request decidable in chat has Approve and Deny; one that needs two approvals shows Open in Countersign instead of Approve", () => {
    expect(actionIds(requestMessage(facts(), true, NOW))).toEqual([APPROVE_ACTION, DENY_ACTION, "countersign_open"]);
    const quorum = requestMessage(facts({ approvalsRequired: 2 }), false, NOW);
    expect(actionIds(quorum)).toEqual([DENY_ACTION, "countersign_open"]);
    expect(JSON.stringify(quorum)).toContain('"url":"https://countersign.example.com/requests/req-1"');
  });

  it("a decided request has no buttons but the link, and says the outcome with the reason", () => {
    const m = requestMessage(facts({ status: "denied", reviews: [{ name: "Tara", decision: "deny", comment: "No <invoice>" }] }), true, NOW);
    expect(actionIds(m)).toEqual(["countersign_open"]);
    expect(m.text).toMatch(/^Denied: /);
    expect(JSON.stringify(m)).toContain("*Denied* by Tara: No &lt;invoice&gt;");
  });
});

describe("Slack request signatures", () => {
  const secret = "8f742231b10e8888abcd99yyyzzz85a5";
  const body = "payload=%7B%7D";
  const ts = String(Math.floor(NOW.getTime() / 1000));
  const sig = slackSignature(secret, ts, body);

  it("Slack's documented example signature verifies", () => {
    // From Slack's "Verifying requests from Slack" page.
    const raw =
      "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    expect(slackSignature(secret, "1531420618", raw)).toBe("v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503");
  });

  it("a matching signature inside five minutes passes; a forged one, a stale or future timestamp, or none fails", () => {
    expect(verifySlackSignature({ secret, timestamp: ts, signature: sig, rawBody: body }, NOW)).toEqual({ ok: true });
    expect(verifySlackSignature({ secret, timestamp: ts, signature: sig, rawBody: body }, new Date(NOW.getTime() + 300_000))).toEqual({ ok: true });
    expect(verifySlackSignature({ secret, timestamp: ts, signature: sig, rawBody: `${body}x` }, NOW)).toEqual({ ok: false, reason: "bad signature" });
    expect(verifySlackSignature({ secret: "other", timestamp: ts, signature: sig, rawBody: body }, NOW)).toEqual({ ok: false, reason: "bad signature" });
    expect(verifySlackSignature({ secret, timestamp: ts, signature: "v0=00", rawBody: body }, NOW)).toEqual({ ok: false, reason: "bad signature" });
    expect(verifySlackSignature({ secret, timestamp: ts, signature: sig, rawBody: body }, new Date(NOW.getTime() + 301_000))).toEqual({ ok: false, reason: "stale timestamp" });
    expect(verifySlackSignature({ secret, timestamp: ts, signature: sig, rawBody: body }, new Date(NOW.getTime() - 301_000))).toEqual({ ok: false, reason: "stale timestamp" });
    expect(verifySlackSignature({ secret, timestamp: null, signature: sig, rawBody: body }, NOW)).toEqual({ ok: false, reason: "missing signature" });
    expect(verifySlackSignature({ secret, timestamp: "1e9", signature: sig, rawBody: body }, NOW)).toEqual({ ok: false, reason: "stale timestamp" });
  });
});

describe("Slack settings", () => {
  const withEnv = <T>(vars: Record<string, string | undefined>, f: () => T): T => {
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
    for (const [k, v] of Object.entries(vars)) v === undefined ? delete process.env[k] : (process.env[k] = v);
    try {
      return f();
    } finally {
      for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v);
    }
  };
  const ALL = ["COUNTERSIGN_SLACK_BOT_TOKEN", "COUNTERSIGN_SLACK_CHANNEL", "COUNTERSIGN_SLACK_SIGNING_SECRET", "COUNTERSIGN_SLACK_API_URL"];
  const unset = Object.fromEntries(ALL.map((k) => [k, undefined]));

  it("off when unset; on says what is on without the token or the signing secret; a bad API URL is named", () => {
    expect(withEnv(unset, describeSlackSettings)).toMatch(/^Slack off/);
    const on = withEnv({ ...unset, COUNTERSIGN_SLACK_BOT_TOKEN: "xoxb-secret-token", COUNTERSIGN_SLACK_CHANNEL: "C1", COUNTERSIGN_SLACK_SIGNING_SECRET: "shh-secret" }, describeSlackSettings);
    expect(on).toBe("Slack messages on to channel C1 via slack.com, interactions on");
    expect(on).not.toMatch(/secret/);
    expect(() => withEnv({ ...unset, COUNTERSIGN_SLACK_API_URL: "ftp://x" }, describeSlackSettings)).toThrow(/COUNTERSIGN_SLACK_API_URL/);
  });
});
