/**
 * Slack approvals end to end, against a local Slack Web API this test starts (it records every call and answers in
 * Slack's shapes) and with interactions and slash commands signed as Slack signs them: one channel message per
 * request, updated for everyone when anyone decides, or when the request expires; decisions from Slack by the
 * linked reviewer only, through the same review verb as the browser; forged, stale and replayed requests refused,
 * nothing changed, audited; a Slack outage retried by the outbox.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { sweep } from "../lib/execution/sweep";
import { deliverNotifications, NOTIFY_RETRY_DELAYS_MS } from "../lib/notify/deliver";
import { cancelTask } from "../lib/tasks/cancel";
import { decide } from "../lib/tasks/decide";
import { handleSlackCommand, handleSlackInteraction, SLACK_DENIAL_REASON } from "../lib/slack/interactions";
import { issueSlackLinkCode } from "../lib/slack/link";
import { APPROVE_ACTION, DENY_ACTION } from "../lib/slack/message";
import { slackSignature } from "../lib/slack/signature";
import { POST as interactionsPOST } from "../app/api/slack/interactions/route";
import { at, DAY, gatedCall, MIN, T0 } from "./support/proof";
import { principal, requestIdOf, resetDb, userId } from "./support/db";

const TOKEN = "xoxb-test-bot-token-0000";
const SECRET = "slack-signing-secret-for-tests";
const CHANNEL = "C0APPROVALS";
const TEAM = "T0TEAM";

type Call = { method: string; auth: string | undefined; args: Record<string, unknown> };
let api: Server | null = null;
let calls: Call[] = [];
/** While true the Web API answers 503, as Slack does in an outage. */
let down = false;
let nextTs = 1;

function readForm(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const out: Record<string, unknown> = {};
      if ((req.headers["content-type"] ?? "").includes("json")) return resolve(raw ? JSON.parse(raw) : {});
      for (const [k, v] of new URLSearchParams(raw)) {
        try {
          out[k] = k === "blocks" ? JSON.parse(v) : v;
        } catch {
          out[k] = v;
        }
      }
      resolve(out);
    });
    req.on("error", reject);
  });
}

async function startSlack(): Promise<void> {
  calls = [];
  down = false;
  nextTs = 1;
  api = createServer(async (req, res) => {
    const args = await readForm(req);
    const method = (req.url ?? "").replace(/^\/api\//, "").split("?")[0];
    if (down) {
      res.writeHead(503, { "content-type": "text/plain" }).end("service unavailable");
      return;
    }
    calls.push({ method, auth: req.headers.authorization, args });
    const json = (body: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return json({ ok: false, error: "invalid_auth" });
    if (method === "chat.postMessage") return json({ ok: true, channel: args.channel, ts: `1700000000.${String(nextTs++).padStart(6, "0")}`, message: { text: args.text } });
    if (method === "chat.update") return json({ ok: true, channel: args.channel, ts: args.ts, text: args.text });
    if (method === "chat.postEphemeral") return json({ ok: true, message_ts: "1700000001.000001" });
    return json({ ok: false, error: "unknown_method" });
  });
  await new Promise<void>((r) => api!.listen(0, "127.0.0.1", () => r()));
  const port = (api.address() as AddressInfo).port;
  process.env.COUNTERSIGN_SLACK_API_URL = `http://127.0.0.1:${port}/api/`;
  process.env.COUNTERSIGN_SLACK_BOT_TOKEN = TOKEN;
  process.env.COUNTERSIGN_SLACK_SIGNING_SECRET = SECRET;
  process.env.COUNTERSIGN_SLACK_CHANNEL = CHANNEL;
  process.env.COUNTERSIGN_PUBLIC_URL = "https://countersign.example.com";
}

beforeEach(async () => {
  await resetDb();
  await startSlack();
});
afterEach(async () => {
  for (const k of ["COUNTERSIGN_SLACK_API_URL", "COUNTERSIGN_SLACK_BOT_TOKEN", "COUNTERSIGN_SLACK_SIGNING_SECRET", "COUNTERSIGN_SLACK_CHANNEL"]) delete process.env[k];
  await new Promise<void>((r) => (api ? api.close(() => r()) : r()));
  api = null;
});

const posts = () => calls.filter((c) => c.method === "chat.postMessage");
const updates = () => calls.filter((c) => c.method === "chat.update");
const ephemerals = () => calls.filter((c) => c.method === "chat.postEphemeral");
const actionIds = (c: Call) =>
  (c.args.blocks as { type: string; elements?: { action_id: string }[] }[]).filter((b) => b.type === "actions").flatMap((b) => b.elements!.map((e) => e.action_id));

function signed(body: string, now: Date, secret = SECRET): Headers {
  const ts = String(Math.floor(now.getTime() / 1000));
  return new Headers({ "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": ts, "x-slack-signature": slackSignature(secret, ts, body) });
}

/** Slack's block_actions payload for a button press in the request's message. */
function buttonPress(slackUser: string, actionId: string, requestId: string): string {
  const payload = {
    type: "block_actions",
    user: { id: slackUser, username: slackUser.toLowerCase(), team_id: TEAM },
    api_app_id: "A0APP",
    token: "verification-token-unused",
    container: { type: "message", message_ts: "1700000000.000001", channel_id: CHANNEL, is_ephemeral: false },
    trigger_id: "123.456.abc",
    team: { id: TEAM, domain: "example" },
    channel: { id: CHANNEL, name: "approvals" },
    response_url: "https://hooks.slack.com/actions/T0TEAM/1/abc",
    actions: [{ action_id: actionId, block_id: `countersign:${requestId}`, text: { type: "plain_text", text: "Approve" }, value: requestId, type: "button", action_ts: "1700000002.000001" }],
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

/** A button pressed, answered, and its decision and private reply finished (they may outlast the answer). */
async function press(slackUser: string, actionId: string, requestId: string, now: Date) {
  const body = buttonPress(slackUser, actionId, requestId);
  const { settled, ...answer } = await handleSlackInteraction(signed(body, now), body, now);
  await settled;
  return answer;
}

/** Links a Countersign user to a Slack user the way a person does: a code from the profile page, sent as a signed command. */
async function link(email: string, slackUser: string, now: Date) {
  const { code } = await issueSlackLinkCode(await userId(email), now);
  const body = new URLSearchParams({ command: "/countersign", text: `link ${code}`, user_id: slackUser, team_id: TEAM, channel_id: "D0DM" }).toString();
  return handleSlackCommand(signed(body, now), body, now);
}

async function refund(now = T0) {
  const taskId = await gatedCall(await principal("support-bot"), "issue_refund", { order_id: "O-2289" }, now);
  return { taskId, requestId: await requestIdOf(taskId) };
}
async function transfer(now = T0) {
  const taskId = await gatedCall(await principal("ops-bot"), "wire_transfer", { to: "acct-991", amount: 30000, memo: "<!channel> pay <https://evil.example|now>" }, now);
  return { taskId, requestId: await requestIdOf(taskId) };
}
const status = async (requestId: string) => (await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).status;
const auditTypes = async () => (await db().auditEvent.findMany({ orderBy: { seq: "asc" }, select: { type: true } })).map((e) => e.type);

describe("Slack approvals", () => {
  it("a new request is one channel message with Approve and Deny, the summary, deadline and a link; untrusted text escaped", async () => {
    const { requestId } = await refund();
    expect(await db().notification.findMany({ where: { requestId, channel: "slack" }, select: { kind: true, recipientUserId: true } })).toEqual([{ kind: "created", recipientUserId: "channel" }]);
    expect(await deliverNotifications(at(1000))).toMatchObject({ sent: 1, retried: 0 });
    expect(posts()).toHaveLength(1);
    const m = posts()[0];
    expect(m.auth).toBe(`Bearer ${TOKEN}`);
    expect(m.args.channel).toBe(CHANNEL);
    expect(m.args.text).toBe("Approval needed: EUR 180.00 refund on order O-2289");
    expect(actionIds(m)).toEqual([APPROVE_ACTION, DENY_ACTION, "countersign_open"]);
    const all = JSON.stringify(m.args.blocks);
    expect(all).toContain("Deadline");
    expect(all).toContain("1 Dec 2100, 10:00 UTC (in 24 hours)");
    expect(all).toContain(`https://countersign.example.com/requests/${requestId}`);
    expect(await db().slackMessage.findUniqueOrThrow({ where: { requestId } })).toMatchObject({ channel: CHANNEL, ts: "1700000000.000001" });

    await transfer();
    await deliverNotifications(at(2000));
    const t = JSON.stringify(posts()[1].args.blocks);
    expect(t).toContain("USD 30,000.00 wire transfer to acct-991");
    expect(t).toContain("&lt;!channel&gt; pay &lt;https://evil.example|now&gt;");
    expect(t).not.toContain("<!channel>");
  });

  it("approve from Slack by the linked reviewer, in one click and no page load: the request is approved through the review verb, the message updated, the reviewer told", async () => {
    expect((await link("lena.lead@countersign.test", "U0LENA", at(0))).body).toMatchObject({ response_type: "ephemeral", text: "Linked: you act in Slack as Lena Lead." });
    const { taskId, requestId } = await refund();
    await deliverNotifications(at(1000));
    // Measured: from the channel message to a recorded decision is one button press (one signed interaction).
    expect(await press("U0LENA", APPROVE_ACTION, requestId, at(MIN))).toEqual({ status: 200, body: null });
    expect(await status(requestId)).toBe("approved");
    const review = await db().review.findFirstOrThrow({ where: { requestId } });
    expect(review.reviewerId).toBe(await userId("lena.lead@countersign.test"));
    // The same verb as the browser: the task moved on and the refund ran.
    expect((await db().task.findUniqueOrThrow({ where: { id: taskId } })).status).toBe("completed");
    expect(ephemerals().map((c) => [c.args.user, c.args.text])).toEqual([["U0LENA", "You approved “EUR 180.00 refund on order O-2289”. The request is approved."]]);

    expect(await deliverNotifications(at(2 * MIN))).toMatchObject({ sent: 1 });
    expect(updates()).toHaveLength(1);
    expect(updates()[0].args).toMatchObject({ channel: CHANNEL, ts: "1700000000.000001", text: "Approved: EUR 180.00 refund on order O-2289" });
    expect(actionIds(updates()[0])).toEqual(["countersign_open"]);
    expect(JSON.stringify(updates()[0].args.blocks)).toContain("*Approved* by Lena Lead");
  });

  it("a decision in the browser updates the Slack message for everyone too; a denial from Slack stands", async () => {
    const a = await refund();
    await deliverNotifications(at(1000));
    await decide({ requestId: a.requestId, reviewerId: await userId("sam.lead@countersign.test"), decision: "deny", comment: "Already refunded" }, at(MIN));
    await deliverNotifications(at(2 * MIN));
    expect(updates()[0].args.text).toBe("Denied: EUR 180.00 refund on order O-2289");
    expect(JSON.stringify(updates()[0].args.blocks)).toContain("*Denied* by Sam Lead: Already refunded");

    await link("theo.treasury@countersign.test", "U0THEO", at(3 * MIN));
    const b = await transfer(at(3 * MIN));
    expect(await press("U0THEO", DENY_ACTION, b.requestId, at(4 * MIN))).toMatchObject({ status: 200 });
    expect(await status(b.requestId)).toBe("denied");
    expect((await db().review.findFirstOrThrow({ where: { requestId: b.requestId } })).comment).toBe(SLACK_DENIAL_REASON);
  });

  it("the requester's own Slack user is refused: you cannot review your own request", async () => {
    await db().user.update({ where: { email: "rita.requester@countersign.test" }, data: { role: "reviewer", groups: ["support-leads"] } });
    await link("rita.requester@countersign.test", "U0RITA", at(0));
    const { requestId } = await refund();
    await press("U0RITA", APPROVE_ACTION, requestId, at(MIN));
    expect(await status(requestId)).toBe("pending");
    expect(await db().review.count()).toBe(0);
    expect(ephemerals().map((c) => c.args.text)).toEqual(["Not recorded: You cannot review your own request."]);
  });

  it("an unlinked Slack user is refused and audited; a reviewer of another group is refused by eligibility", async () => {
    const { requestId } = await refund();
    await press("U0STRANGER", APPROVE_ACTION, requestId, at(MIN));
    expect(await status(requestId)).toBe("pending");
    expect(ephemerals()[0].args.text).toMatch(/^Your Slack account is not linked to a Countersign reviewer/);
    expect(await auditTypes()).toContain("slack.review.refused");

    await link("tara.treasury@countersign.test", "U0TARA", at(2 * MIN));
    await press("U0TARA", APPROVE_ACTION, requestId, at(3 * MIN));
    expect(await status(requestId)).toBe("pending");
    expect(ephemerals()[1].args.text).toBe("Not recorded: Only active support-leads reviewers can review this request.");
  });

  it("a forged signature, a stale timestamp and a replay are refused, change nothing, and are audited", async () => {
    await link("lena.lead@countersign.test", "U0LENA", at(0));
    const { requestId } = await refund();
    const body = buttonPress("U0LENA", APPROVE_ACTION, requestId);
    const before = await db().auditEvent.count();

    expect(await handleSlackInteraction(signed(body, at(MIN), "not-the-secret"), body, at(MIN))).toMatchObject({ status: 401 });
    expect(await handleSlackInteraction(signed(body, at(MIN)), body.replace("U0LENA", "U0LENB"), at(MIN))).toMatchObject({ status: 401 });
    expect(await handleSlackInteraction(signed(body, at(MIN)), body, at(MIN + 5 * MIN + 1000))).toMatchObject({ status: 401 });
    expect(await status(requestId)).toBe("pending");
    expect(await db().review.count()).toBe(0);

    // A genuine press decides once; the same signed request again, inside the window, is a replay.
    const headers = signed(body, at(2 * MIN));
    const genuine = await handleSlackInteraction(headers, body, at(2 * MIN));
    expect(genuine).toMatchObject({ status: 200 });
    await genuine.settled;
    expect(await status(requestId)).toBe("approved");
    const reviews = await db().review.count();
    expect(await handleSlackInteraction(headers, body, at(2 * MIN + 1000))).toMatchObject({ status: 401 });
    expect(await db().review.count()).toBe(reviews);
    expect(ephemerals()).toHaveLength(1);

    const refused = await db().auditEvent.findMany({ where: { type: "slack.request.refused" }, orderBy: { seq: "asc" } });
    expect(refused.map((e) => (e.data as { reason: string }).reason)).toEqual(["bad signature", "bad signature", "stale timestamp", "replayed"]);
    expect(await db().auditEvent.count()).toBeGreaterThan(before);
    for (const e of await db().auditEvent.findMany()) expect(JSON.stringify(e)).not.toContain(SECRET);
  });

  it("the seen-signature memory is bounded: entries older than the window are forgotten", async () => {
    const { requestId } = await refund();
    for (let i = 0; i < 3; i++) await press("U0X", DENY_ACTION, requestId, at(i * 1000));
    expect(await db().slackSeenRequest.count()).toBe(3);
    await press("U0X", DENY_ACTION, requestId, at(11 * MIN));
    expect(await db().slackSeenRequest.count()).toBe(1);
  });

  it("a request that needs two approvals shows Open in Countersign instead of Approve, and an approve interaction is refused", async () => {
    await link("tara.treasury@countersign.test", "U0TARA", at(0));
    const { requestId } = await transfer();
    await deliverNotifications(at(1000));
    expect(actionIds(posts()[0])).toEqual([DENY_ACTION, "countersign_open"]);
    await press("U0TARA", APPROVE_ACTION, requestId, at(MIN));
    expect(await db().review.count()).toBe(0);
    expect(await status(requestId)).toBe("pending");
    expect(ephemerals()[0].args.text).toBe("This request cannot be approved in Slack: it needs more than one approver. Open it in Countersign to approve it.");
  });

  it("an expired request's message is updated to say so", async () => {
    const { requestId } = await refund();
    await deliverNotifications(at(1000));
    await sweep(at(DAY + 1000));
    expect(await status(requestId)).toBe("expired");
    expect(updates()).toHaveLength(1);
    expect(updates()[0].args.text).toBe("Expired without a decision: EUR 180.00 refund on order O-2289");
    expect(actionIds(updates()[0])).toEqual(["countersign_open"]);
  });

  it("a withdrawn request's message is updated to say so, and a button pressed after that is refused in words", async () => {
    await link("lena.lead@countersign.test", "U0LENA", at(0));
    const { taskId, requestId } = await refund();
    await deliverNotifications(at(1000));
    expect(await cancelTask(await principal("support-bot"), taskId, at(MIN))).toMatchObject({ ok: true });
    expect(await status(requestId)).toBe("cancelled");
    await deliverNotifications(at(2 * MIN));
    expect(updates().map((c) => c.args.text)).toEqual(["Withdrawn before a decision: EUR 180.00 refund on order O-2289"]);
    await press("U0LENA", APPROVE_ACTION, requestId, at(3 * MIN));
    expect(ephemerals()[0].args.text).toBe("Not recorded: This request is already cancelled.");
    expect(await db().review.count()).toBe(0);
  });

  it("a request decided before its message went out is posted once, as decided", async () => {
    const { requestId } = await refund();
    await decide({ requestId, reviewerId: await userId("sam.lead@countersign.test"), decision: "approve" }, at(MIN));
    expect(await deliverNotifications(at(2 * MIN))).toMatchObject({ sent: 1, skipped: 1 });
    expect(posts().map((c) => c.args.text)).toEqual(["Approved: EUR 180.00 refund on order O-2289"]);
    expect(updates()).toHaveLength(0);
  });

  it("while the Slack API is down the outbox retries later and loses nothing; no token in what is stored", async () => {
    const { requestId } = await refund();
    down = true;
    expect(await deliverNotifications(at(1000))).toMatchObject({ sent: 0, retried: 1 });
    const row = await db().notification.findFirstOrThrow({ where: { requestId, channel: "slack" } });
    expect(row).toMatchObject({ status: "pending", attempts: 1, lastError: "Slack answered HTTP 503" });
    expect(JSON.stringify(row)).not.toContain(TOKEN);
    down = false;
    expect(await deliverNotifications(at(1000 + NOTIFY_RETRY_DELAYS_MS[0] - 1))).toMatchObject({ sent: 0 });
    expect(await deliverNotifications(at(1000 + NOTIFY_RETRY_DELAYS_MS[0]))).toMatchObject({ sent: 1 });
    expect(posts()).toHaveLength(1);
  });

  it("linking is safe: a code links the Slack user who sent it, once; another person's Slack id cannot be claimed; unlink", async () => {
    const { code } = await issueSlackLinkCode(await userId("lena.lead@countersign.test"), at(0));
    const send = (text: string, user: string, now: Date) => {
      const body = new URLSearchParams({ command: "/countersign", text, user_id: user, team_id: TEAM }).toString();
      return handleSlackCommand(signed(body, now), body, now);
    };
    expect((await send(`link ${code}`, "U0LENA", at(MIN))).body?.text).toBe("Linked: you act in Slack as Lena Lead.");
    // The code is spent.
    expect((await send(`link ${code}`, "U0MALLORY", at(MIN + 1000))).body?.text).toMatch(/not valid or has expired/);
    // Sam's code cannot take a Slack user already linked to Lena.
    const sam = await issueSlackLinkCode(await userId("sam.lead@countersign.test"), at(2 * MIN));
    expect((await send(`link ${sam.code}`, "U0LENA", at(2 * MIN))).body?.text).toMatch(/already linked to another Countersign user/);
    // An expired code does nothing.
    const late = await issueSlackLinkCode(await userId("sam.lead@countersign.test"), at(3 * MIN));
    expect((await send(`link ${late.code}`, "U0SAM", at(14 * MIN))).body?.text).toMatch(/not valid or has expired/);
    expect(await db().slackLink.findMany({ select: { slackUserId: true } })).toEqual([{ slackUserId: `${TEAM}:U0LENA` }]);
    expect((await send("unlink", "U0LENA", at(15 * MIN))).body?.text).toBe("Unlinked: this Slack account no longer acts in Countersign.");
    expect(await db().slackLink.count()).toBe(0);
    const types = await auditTypes();
    expect(types.filter((t) => t.startsWith("slack."))).toEqual(["slack.linked", "slack.link.refused", "slack.link.refused", "slack.link.refused", "slack.unlinked"]);
  });

  it("the route handler answers a signed interaction and refuses an unsigned one", async () => {
    await link("lena.lead@countersign.test", "U0LENA", new Date());
    const { requestId } = await refund();
    const body = buttonPress("U0LENA", APPROVE_ACTION, requestId);
    const unsigned = await interactionsPOST(new Request("http://localhost/api/slack/interactions", { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded" } }));
    expect(unsigned.status).toBe(401);
    const now = new Date();
    const ok = await interactionsPOST(new Request("http://localhost/api/slack/interactions", { method: "POST", body, headers: signed(body, now) }));
    expect(ok.status).toBe(200);
    // The decision may finish after the answer (a slow tool): wait for the state, bounded.
    for (let i = 0; i < 200 && (await status(requestId)) !== "approved"; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await status(requestId)).toBe("approved");
  });

  it("the answer to Slack does not wait for a slow decision: Slack is answered in time, the decision and the reply follow", async () => {
    await link("lena.lead@countersign.test", "U0LENA", at(0));
    const { requestId } = await refund();
    let release!: () => void;
    const replies: string[] = [];
    const held = new Promise<void>((r) => (release = r));
    const api = {
      postMessage: async () => ({ channel: CHANNEL, ts: "1" }),
      update: async () => {},
      // The private reply is held until the test lets it go: the work outlasts Slack's window.
      postEphemeral: async (_c: string, _u: string, text: string) => {
        await held;
        replies.push(text);
      },
    };
    const body = buttonPress("U0LENA", APPROVE_ACTION, requestId);
    // Answered while the reply is still held: the answer did not wait for the work.
    const answer = await handleSlackInteraction(signed(body, at(MIN)), body, at(MIN), api);
    expect(answer).toMatchObject({ status: 200, body: null });
    expect(replies).toEqual([]);
    release();
    await answer.settled;
    expect(replies).toEqual(["You approved “EUR 180.00 refund on order O-2289”. The request is approved."]);
    expect(await status(requestId)).toBe("approved");
  });
});
