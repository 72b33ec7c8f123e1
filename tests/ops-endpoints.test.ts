/**
 * The operator's endpoints through their route handlers, in process, on the test database: /metrics counts what
 * happened on /mcp (through the real MCP route, loaded as a separate module instance as Next.js bundles it),
 * reports stored state from grouped queries kept a few seconds, and is closed without its token; /healthz answers
 * without a database; /readyz says ready only when the database answers and its migrations are this version's.
 */
import pg from "pg";
import { afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { config as proxyConfig } from "../proxy";
import { GET as health } from "../app/healthz/route";
import { GET as ready } from "../app/readyz/route";
import { closeDb, db } from "../lib/db/client";
import { startEmbedded } from "../lib/db/embedded";
import { applyMigrations } from "../lib/db/migrate";
import { migrationNames } from "../lib/db/migration-names";
import { claim } from "../lib/execution/claim";
import { sweep } from "../lib/execution/sweep";
import { call, OPS_BOT } from "../lib/mcp/testing";
import { forgetStateSnapshot, stateSnapshot } from "../lib/ops/state";
import { decide } from "../lib/tasks/decide";
import { LEADS } from "./support/proof";
import { requestIdOf, resetDb, userId } from "./support/db";

const TOKEN = "metrics-token-0123456789abcdef";
const kind = inject("databaseKind");

/** /metrics from a fresh module instance of the route and everything it imports (another bundle, as in Next.js). */
async function scrape(headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) {
  vi.resetModules();
  const { GET } = await import("../app/metrics/route");
  const res = await GET(new Request("http://localhost/metrics", { headers }));
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The value of one series in exposition text (0 when absent). */
function value(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

beforeEach(async () => {
  await resetDb();
  forgetStateSnapshot();
  vi.stubEnv("COUNTERSIGN_METRICS_TOKEN", TOKEN);
});
afterEach(() => vi.unstubAllEnvs());

describe(`/metrics (${kind})`, () => {
  it("counts calls made through the MCP route by tool and decision, in the registry /metrics serves", async () => {
    const before = (await scrape()).text;
    const allow = 'countersign_tool_calls_total{tool="issue_refund",decision="allow"}';
    const requestable = 'countersign_tool_calls_total{tool="issue_refund",decision="requestable"}';
    const deny = 'countersign_tool_calls_total{tool="wire_transfer",decision="deny"}';
    const unknown = 'countersign_tool_calls_total{tool="unknown",decision="deny"}';
    expect((await call("issue_refund", { order_id: "O-1021" })).body.result).toMatchObject({ resultType: "complete", isError: false });
    expect((await call("issue_refund", { order_id: "O-2289" })).body.result.resultType).toBe("task");
    await call("wire_transfer", { to: "acct-9", amount: 10 });
    // A tool name the catalog does not know (here the inner tool of request_access) never becomes a label value.
    const r = await call("request_access", { tool: "no_such_tool_mk7f3a9c", arguments: {}, justification: "needed for the month-end close" }, { caps: {} });
    expect(r.body.result).toMatchObject({ isError: true });
    const after = (await scrape()).text;
    expect(value(after, allow) - value(before, allow)).toBe(1);
    expect(value(after, requestable) - value(before, requestable)).toBe(1);
    expect(value(after, deny) - value(before, deny)).toBe(1);
    expect(value(after, unknown) - value(before, unknown)).toBe(1);
    expect(after).not.toContain("no_such_tool");
    for (const line of after.split("\n").filter((l) => l && !l.startsWith("#"))) expect(line).toMatch(/^countersign_/);
  });

  it("reports tasks by status and pending requests by approver group and age bucket, dispositions, time to decision and lost claims", async () => {
    const t1 = (await call("issue_refund", { order_id: "O-2289" })).body.result.taskId as string;
    const t2 = (await call("issue_refund", { order_id: "O-1145" })).body.result.taskId as string;
    const before = (await scrape()).text;
    expect(value(before, 'countersign_tasks{status="working"}')).toBe(2);
    expect(value(before, 'countersign_tasks{status="completed"}')).toBe(0);
    const group = (await db().approvalRequest.findFirstOrThrow()).approverGroup;
    expect(value(before, `countersign_pending_approval_requests{approver_group="${group}",age="0-5m"}`)).toBe(2);

    const task = await db().task.findUniqueOrThrow({ where: { id: t1 } });
    const now = new Date(task.createdAt.getTime() + 90_000);
    for (const lead of LEADS) await decide({ requestId: await requestIdOf(t1), reviewerId: await userId(lead), decision: "approve" }, now);
    expect(await db().task.findUniqueOrThrow({ where: { id: t1 } })).toMatchObject({ disposition: "approved-executed" });
    // A second claim of the executed task loses.
    expect(await claim(t1, task.generation, now)).toBeNull();
    forgetStateSnapshot();
    const after = (await scrape()).text;
    const executed = 'countersign_task_dispositions_total{disposition="approved-executed"}';
    expect(value(after, executed) - value(before, executed)).toBe(1);
    expect(value(after, "countersign_claims_lost_total") - value(before, "countersign_claims_lost_total")).toBe(1);
    const decided = 'countersign_time_to_decision_seconds_count{decision="approved"}';
    expect(value(after, decided) - value(before, decided)).toBe(1);
    // 90 s after the request was created: in the 300 s bucket, not in the 60 s one.
    const le = (b: string) => value(after, `countersign_time_to_decision_seconds_bucket{le="${b}",decision="approved"}`) - value(before, `countersign_time_to_decision_seconds_bucket{le="${b}",decision="approved"}`);
    expect([le("60"), le("300")]).toEqual([0, 1]);
    expect(value(after, 'countersign_tasks{status="working"}')).toBe(1);
    expect(value(after, 'countersign_tasks{status="completed"}')).toBe(1);
    expect(value(after, `countersign_pending_approval_requests{approver_group="${group}",age="0-5m"}`)).toBe(1);
    expect(t2).toBeTruthy();
  });

  it("reads stored state at most once per 5 s: a scrape within the window serves the kept snapshot", async () => {
    const t0 = Date.now();
    const first = await stateSnapshot(t0);
    await call("issue_refund", { order_id: "O-2289" });
    const kept = await stateSnapshot(t0 + 4_000);
    expect(kept).toBe(first);
    expect(kept.tasksByStatus).toEqual([]);
    const fresh = await stateSnapshot(t0 + 5_000);
    expect(fresh.tasksByStatus).toEqual([{ status: "working", count: 1 }]);
    expect(fresh.pendingByGroupAge).toEqual([{ group: expect.any(String), age: "0-5m", count: 1 }]);
  });

  it("reports the sweeper's last pass and the database pool of this process", async () => {
    const started = performance.now();
    await sweep(new Date());
    const took = (performance.now() - started) / 1000;
    const text = (await scrape()).text;
    // The pass's own duration, in seconds: no longer than the call around it.
    expect(value(text, "countersign_sweep_last_duration_seconds")).toBeGreaterThan(0);
    expect(value(text, "countersign_sweep_last_duration_seconds")).toBeLessThanOrEqual(took);
    expect(value(text, "countersign_sweep_seconds_since_success")).toBeGreaterThanOrEqual(0);
    expect(value(text, "countersign_sweep_seconds_since_success")).toBeLessThan(60);
    expect(value(text, "countersign_sweep_duration_seconds_count")).toBeGreaterThanOrEqual(1);
    expect(value(text, 'countersign_db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'countersign_db_pool_connections{state="max"}')).toBe(Number(process.env.DB_POOL_MAX));
    expect(text).toContain('countersign_db_pool_connections{state="waiting"}');
  });

  it("counts a sweeper pass that fails and lets its error through; a pass that succeeds adds nothing to it", async () => {
    const failures = async () => value((await scrape()).text, "countersign_sweep_failures_total");
    const before = await failures();
    vi.spyOn(db().task, "findMany").mockRejectedValueOnce(new Error("connection lost"));
    await expect(sweep(new Date())).rejects.toThrow("connection lost");
    vi.restoreAllMocks();
    expect(await failures()).toBe(before + 1);
    await sweep(new Date());
    expect(await failures()).toBe(before + 1);
  });

  it("needs the bearer token when one is set; without a token it is 404 unless COUNTERSIGN_METRICS_OPEN=1", async () => {
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.headers.get("cache-control")).toBe("no-store");
    for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${TOKEN}x` }, { authorization: `Bearer ${TOKEN.slice(0, -1)}` }, { authorization: TOKEN }, { authorization: `Basic ${TOKEN}` }]) {
      const r = await scrape(headers);
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toMatch(/^Bearer /);
      expect(r.text).not.toContain("countersign_");
    }
    vi.stubEnv("COUNTERSIGN_METRICS_OPEN", "1");
    expect((await scrape({})).status).toBe(401);
    vi.stubEnv("COUNTERSIGN_METRICS_TOKEN", "");
    expect((await scrape({})).status).toBe(200);
    vi.stubEnv("COUNTERSIGN_METRICS_OPEN", "");
    expect((await scrape({ authorization: `Bearer ${TOKEN}` })).status).toBe(404);
    // A token too short to be a secret keeps the endpoint closed.
    vi.stubEnv("COUNTERSIGN_METRICS_TOKEN", "short");
    expect((await scrape({ authorization: "Bearer short" })).status).toBe(404);
  });
});

describe(`/healthz and /readyz (${kind})`, () => {
  it("/healthz is 200 {status: ok}, not cached, with a request id, without touching the database", async () => {
    vi.stubEnv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none");
    await closeDb();
    const r = await health(new Request("http://localhost/healthz"));
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: "ok" });
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("the page proxy leaves /healthz, /readyz and /metrics alone (no sign-in, no page headers), and still serves pages", () => {
    const matcher = new RegExp(`^${proxyConfig.matcher[0]}$`);
    for (const p of ["/healthz", "/readyz", "/metrics"]) expect(matcher.test(p)).toBe(false);
    for (const p of ["/inbox", "/admin/people", "/"]) expect(matcher.test(p)).toBe(true);
  });

  it("/readyz is 200 on the migrated test database", async () => {
    const r = await ready(new Request("http://localhost/readyz"));
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: "ready" });
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  describe("on another database", () => {
    let url: string;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      if (kind === "embedded") {
        const server = await startEmbedded({ dataDir: null });
        url = server.url;
        drop = () => server.stop();
      } else {
        const name = `cs_ops_ready_${process.pid}`;
        const admin = new pg.Client({ connectionString: inject("databaseUrl") });
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS ${name}`);
        await admin.query(`CREATE DATABASE ${name}`);
        await admin.end();
        const u = new URL(inject("databaseUrl"));
        u.pathname = `/${name}`;
        url = u.toString();
        drop = async () => {
          const c = new pg.Client({ connectionString: inject("databaseUrl") });
          await c.connect();
          await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          await c.end();
        };
      }
      return async () => {
        await closeDb();
        await drop();
      };
    });
    beforeEach(async () => {
      await closeDb();
      vi.stubEnv("DATABASE_URL", url);
    });
    afterEach(() => closeDb());

    const readyz = async () => {
      await closeDb();
      const r = await ready(new Request("http://localhost/readyz"));
      return { status: r.status, body: await r.json() };
    };

    it("is 503 on a fresh database, 200 once migrated, 503 again when a migration is behind or unknown: a short reason, no stack", async () => {
      expect(await readyz()).toEqual({ status: 503, body: { status: "not ready", reason: "database schema not migrated" } });
      await applyMigrations(url);
      expect(await readyz()).toEqual({ status: 200, body: { status: "ready" } });
      const last = migrationNames().at(-1)!;
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`UPDATE "_prisma_migrations" SET migration_name = 'hidden' WHERE migration_name = $1`, [last]);
        expect(await readyz()).toEqual({ status: 503, body: { status: "not ready", reason: "1 migration not applied" } });
        await c.query(`UPDATE "_prisma_migrations" SET migration_name = $1 WHERE migration_name = 'hidden'`, [last]);
        await c.query(`INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count) VALUES ('x', 'x', '29991231000000_newer', now(), now(), 1)`);
        expect(await readyz()).toEqual({ status: 503, body: { status: "not ready", reason: "database has 1 migration this version does not ship" } });
      } finally {
        await c.end();
      }
    });

    it("is 503 'database unavailable' when the database does not answer", async () => {
      vi.stubEnv("DATABASE_URL", "postgres://postgres@127.0.0.1:1/none");
      const r = await readyz();
      expect(r).toEqual({ status: 503, body: { status: "not ready", reason: "database unavailable" } });
    });
  });
});
