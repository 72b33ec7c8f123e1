/**
 * A replica killed (SIGKILL) in the middle of a burst: several agents' gated deploy calls and two SREs' approvals
 * spread over four replicas of one deployment. The fourth, D, runs with COUNTERSIGN_FAULT=hang-after-claim: a call
 * that claims an execution there stops right after the claim (lib/faults.ts), so D holds the claim. Once such a
 * claim is in the database, D is killed, while calls and approvals go on on the others.
 *
 * Nothing is lost: every call an agent saw answered has its task, every approval a reviewer saw recorded is in the
 * database. Nothing runs twice: at most one deployment and one claim per task. The survivors finish what D left:
 * the approved tasks it never claimed run once, and every claim it held ends, past its execution deadline, as
 * outcome-unknown, with no deployment.
 */
import { spawnSync } from "node:child_process";
import { expect, test, type BrowserContext, type Page } from "@playwright/test";
import { DISPOSITION_KEY, OPS_BOT, signIn, unique, user } from "../e2e/support";
import { BURST_AGENTS } from "./tokens";
import { killPid, mcpAt, publishedEnvironment, publishedReplicas, startReplica, stopReplica, until, waitReady, withDb, type Replica } from "./replicas";

const SASHA = user("sasha.sre@countersign.test");
const SID = user("sid.sre@countersign.test");
const AGENTS = [OPS_BOT, ...BURST_AGENTS.map((a) => a.token)];

type Seen = { taskId: string; agent: string };

const started = Date.now();
const step = (what: string) => console.log(`[replicas] ${((Date.now() - started) / 1000).toFixed(1)}s ${what}`);

test("a replica SIGKILLed mid-burst while it holds a claim: nothing lost, nothing run twice, the survivors finish, its claim ends outcome-unknown", async ({ browser }) => {
  test.setTimeout(300_000);
  const survivors = publishedReplicas();
  const env = publishedEnvironment();
  let victim: Replica | null = startReplica("replica-d", Number(process.env.REPLICAS_NEXT_PORT), { ...env, COUNTERSIGN_FAULT: "hang-after-claim" }, process.env.REPLICAS_LOG_DIR!);
  const contexts: BrowserContext[] = [];
  try {
    await waitReady(victim);
    const D = victim.url;
    const all = [...survivors.map((r) => r.url), D];
    let killed = false;
    const live = () => (killed ? all.filter((u) => u !== D) : all);
    const service = `svc-${unique()}`;

    // Wave 1: five agents, three gated production deploys each, spread round-robin over the four replicas.
    const call = async (i: number, wave: number): Promise<Seen | null> => {
      const agent = AGENTS[i % AGENTS.length];
      const urls = live();
      try {
        const r = await mcpAt(urls[i % urls.length], agent, "tools/call", { name: "deploy_service", arguments: { service, environment: "production", version: `${wave}.${i}.0` } });
        const result = r.message?.result;
        if (r.status === 200 && result?.resultType === "task") return { taskId: String(result.taskId), agent };
        step(`call ${wave}.${i} answered ${r.status}: ${JSON.stringify(r.message).slice(0, 300)}`);
        return null;
      } catch (e) {
        step(`call ${wave}.${i} got no answer: ${(e as Error).message}`);
        return null; // the replica was killed under this call: the client saw no answer
      }
    };
    const wave1 = (await Promise.all(Array.from({ length: 12 }, (_, i) => call(i, 1)))).filter((s): s is Seen => s !== null);
    expect(wave1).toHaveLength(12); // nothing was killed yet: every call was answered
    step("wave 1 answered");

    // Two SREs, each signed in once (on survivors); their approvals go round-robin over the four replicas.
    const reviewers = await Promise.all(
      [SASHA, SID].map(async (who, i) => {
        const context = await browser.newContext({ baseURL: survivors[i].url });
        contexts.push(context);
        const page = await context.newPage();
        await signIn(page, who.email);
        return { who, context };
      }),
    );
    const seenRecorded: { taskId: string; reviewer: string }[] = [];
    let victimClaimed: string | null = null;
    const killedSignal = new Promise<void>((resolve) => {
      // D is killed once the burst is under way (a few approvals recorded) and a claim it holds is in the
      // database: the state, not a timer.
      void until(
        "a claim held by replica-d, with the burst under way",
        async () =>
          seenRecorded.length < 4
            ? undefined
            : withDb(async (c) => (await c.query(`SELECT id FROM "Task" WHERE phase = 'claimed' AND "claimedBy" LIKE 'replica-d.%' LIMIT 1`)).rows[0]?.id as string | undefined),
        120_000,
        100,
      ).then(async (taskId) => {
        victimClaimed = taskId;
        step(`replica-d holds the claim of ${taskId}: SIGKILL`);
        await killPid(victim!.child.pid!, "SIGKILL");
        killed = true;
        resolve();
      }, () => resolve());
    });

    // A reviewer's first approval goes through the page (a real click in Chromium); the browser's request is kept,
    // and the next ones are that same request (same session cookie, same server action) for another request id,
    // sent to the replica whose turn it is: the reviewer's HTTP surface without waiting for pages to render.
    type Posted = { requestId: string; url: string; headers: Record<string, string>; body: Buffer };
    const approveInPage = async (context: BrowserContext, url: string, taskId: string): Promise<Posted> => {
      const page: Page = await context.newPage();
      try {
        await page.goto(`${url}/tasks/${taskId}`);
        await expect(page).toHaveURL(/\/requests\/[0-9a-f-]{36}$/);
        await expect(page.locator("html")).toHaveAttribute("data-hydrated", "true");
        const posted = page.waitForRequest((r) => r.method() === "POST" && r.url().includes("/requests/"));
        await page.getByRole("button", { name: "Approve" }).click();
        const req = await posted;
        await expect(page.getByTestId("decision-result")).toBeVisible({ timeout: 60_000 });
        return { requestId: page.url().split("/").pop()!, url, headers: await req.allHeaders(), body: req.postDataBuffer() ?? Buffer.alloc(0) };
      } finally {
        await page.close().catch(() => {});
      }
    };
    const swap = (text: string, from: Posted, requestId: string, url: string) => text.split(from.requestId).join(requestId).split(from.url).join(url);
    const approveOverHttp = async (context: BrowserContext, from: Posted, url: string, requestId: string): Promise<"recorded" | "refused" | "lost"> => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(from.headers)) {
        if (["next-action", "next-router-state-tree", "content-type", "accept", "origin", "referer"].includes(k)) headers[k] = swap(v, from, requestId, url);
      }
      const body = Buffer.from(swap(from.body.toString("latin1"), from, requestId, url), "latin1");
      const answered = context.request.post(`${url}/requests/${requestId}`, { headers, data: body, timeout: 60_000 }).then(
        async (res) => (res.ok() && (await res.text()).includes('"status":"done"') ? ("recorded" as const) : ("refused" as const)),
        () => "lost" as const, // the replica died under the request
      );
      // On D the action may never answer (its call hangs after the claim): then D's death ends the wait.
      return Promise.race([answered, ...(url === D ? [killedSignal.then(() => "lost" as const)] : [])]);
    };
    const requestOf = (taskId: string) => withDb(async (c) => (await c.query(`SELECT handle FROM "Task" WHERE id = $1`, [taskId])).rows[0].handle as string);

    // Wave 2 of calls runs while the approvals do, D included until it dies.
    // (two streams of four calls, one after another, so calls are in flight all through the approvals)
    const stream = async (k: number) => {
      const out: (Seen | null)[] = [];
      for (let i = k; i < 8; i += 2) out.push(await call(i, 2));
      return out;
    };
    const wave2Run = Promise.all([stream(0), stream(1)]).then((x) => x.flat());
    const lost: string[] = [];
    let next = 0;
    await Promise.all(
      reviewers.map(async ({ who, context }, r) => {
        const mine = wave1.filter((_, i) => i % 2 === r);
        const first = await approveInPage(context, survivors[r].url, mine[0].taskId);
        seenRecorded.push({ taskId: mine[0].taskId, reviewer: who.email });
        step(`${who.email} approved in the page on ${first.url}`);
        for (const s of mine.slice(1)) {
          const urls = live();
          const url = urls[next++ % urls.length];
          const outcome = await approveOverHttp(context, first, url, await requestOf(s.taskId));
          step(`${who.email} on ${url}: ${outcome}`);
          expect(outcome).not.toBe("refused");
          if (outcome === "recorded") seenRecorded.push({ taskId: s.taskId, reviewer: who.email });
          else lost.push(s.taskId);
        }
      }),
    );
    const wave2 = (await wave2Run).filter((s): s is Seen => s !== null);
    await killedSignal;
    expect(victimClaimed, "replica-d held a claim and was killed").not.toBeNull();
    expect(killed).toBe(true);

    // A reviewer whose approval got no answer approves again elsewhere, unless it was recorded after all.
    for (const taskId of lost) {
      const recorded = await withDb(async (c) => (await c.query(`SELECT count(*)::int AS n FROM "Review" v JOIN "Task" t ON t.handle = v."requestId" WHERE t.id = $1`, [taskId])).rows[0].n);
      if (!recorded) {
        const from = await approveInPage(reviewers[0].context, survivors[0].url, taskId);
        seenRecorded.push({ taskId, reviewer: reviewers[0].who.email });
        step(`approved again in the page on ${from.url}: ${taskId}`);
      }
    }

    // Every approval a reviewer saw recorded is in the database.
    await withDb(async (c) => {
      for (const s of seenRecorded) {
        const rows = await c.query(
          `SELECT v.decision FROM "Review" v JOIN "Task" t ON t.handle = v."requestId" JOIN "User" u ON u.id = v."reviewerId" WHERE t.id = $1 AND u.email = $2`,
          [s.taskId, s.reviewer],
        );
        expect(rows.rows, `approval of ${s.taskId}`).toEqual([{ decision: "approve" }]);
      }
    });

    step("approvals done");
    // The agents poll round-robin over the survivors until every approved task is terminal.
    const finals = new Map<string, any>();
    let poll = 0;
    await until(
      "every approved task to end",
      async () => {
        for (const s of wave1) {
          if (finals.has(s.taskId)) continue;
          const r = await mcpAt(survivors[poll++ % survivors.length].url, s.agent, "tasks/get", { taskId: s.taskId });
          expect(r.status).toBe(200);
          if (r.message.result.status !== "working") finals.set(s.taskId, r.message.result);
        }
        return finals.size === wave1.length ? true : undefined;
      },
      90_000,
      500,
    );

    await withDb(async (c) => {
      // Nothing lost: every task an agent saw created is in the database.
      const seenIds = [...wave1, ...wave2].map((s) => s.taskId);
      const tasks = await c.query(`SELECT id, status, disposition, "claimedBy" FROM "Task" WHERE id = ANY($1)`, [seenIds]);
      expect(tasks.rows).toHaveLength(seenIds.length);
      // Nothing ran twice, over every task of the burst (also those a call D died under may have left).
      const perTask = await c.query(`
        SELECT t.id, t.status, t.disposition, t."claimedBy",
          (SELECT count(*)::int FROM "Deployment" d WHERE d."taskId" = t.id) AS deployments,
          (SELECT count(*)::int FROM "AuditEvent" e WHERE e."taskId" = t.id AND e.type = 'execution.claimed') AS claims,
          (SELECT count(*)::int FROM "AuditEvent" e WHERE e."taskId" = t.id AND e.type = 'execution.completed') AS results,
          (SELECT count(*)::int FROM "AuditEvent" e WHERE e."taskId" = t.id AND e.type = 'execution.outcome-unknown') AS unknown
        FROM "Task" t WHERE t.tool = 'deploy_service'`);
      for (const t of perTask.rows) {
        expect(t.deployments, `deployments of ${t.id}`).toBeLessThanOrEqual(1);
        expect(t.claims, `claims of ${t.id}`).toBeLessThanOrEqual(1);
      }
      const byId = new Map(perTask.rows.map((t) => [t.id as string, t]));
      const held = wave1.filter((s) => String(byId.get(s.taskId).claimedBy).startsWith("replica-d."));
      expect(held.map((s) => s.taskId)).toContain(victimClaimed);
      for (const s of wave1) {
        const t = byId.get(s.taskId);
        const seen = finals.get(s.taskId);
        if (held.includes(s)) {
          // The claim D held: it may have run, so it is never run again; past its deadline, outcome-unknown.
          expect(t, s.taskId).toMatchObject({ status: "completed", disposition: "outcome-unknown", deployments: 0, claims: 1, results: 0, unknown: 1 });
          expect(seen.result._meta[DISPOSITION_KEY]).toBe("outcome-unknown");
        } else {
          expect(t, s.taskId).toMatchObject({ status: "completed", disposition: "approved-executed", deployments: 1, claims: 1, results: 1, unknown: 0 });
          expect(seen.result._meta[DISPOSITION_KEY]).toBe("approved-executed");
        }
      }
      // The calls of the second wave were never approved: still waiting, each with its pending request.
      for (const s of wave2) expect(byId.get(s.taskId), s.taskId).toMatchObject({ status: "working", deployments: 0, claims: 0 });
      console.log(
        `[replicas] burst: ${wave1.length} approved calls (${held.length} claimed by the killed replica), ${wave2.length} of 8 second-wave calls answered, ` +
          `${seenRecorded.length} approvals seen recorded, ${lost.length} lost with the replica`,
      );
    });

    // The audit trail is one unbroken chain, though four processes appended to it and one died.
    const chain = spawnSync(process.execPath, ["node_modules/tsx/dist/cli.mjs", "e2e-replicas/verify-chain.ts"], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000 });
    expect(JSON.parse(chain.stdout.trim().split("\n").pop()!)).toMatchObject({ ok: true });
  } finally {
    for (const c of contexts) await c.close().catch(() => {});
    if (victim) await stopReplica(victim.child);
    victim = null;
  }
});
