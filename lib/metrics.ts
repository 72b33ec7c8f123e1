/**
 * The server's metrics (Prometheus, prom-client), all named countersign_*. Counters and histograms are in-memory
 * increments made where the event happens in lib/; nothing here touches the database. Gauges of stored state
 * (tasks by status, pending requests by group and age) are set at scrape time from a snapshot the caller read
 * (lib/ops/state.ts), and the connection pool is read from the pool lib/db registered.
 *
 * The registry lives on globalThis: Next.js may load this module in several bundles of one process (the MCP
 * route, the /metrics route, instrumentation), and all of them must count into the one registry /metrics serves.
 * Label values are bounded: tool names come from the catalog (else "unknown"), the rest are fixed words.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";

export type CallDecision = "allow" | "deny" | "requestable";
export type DeliveryResult = "retry" | "failed";
export const DISPOSITIONS = ["approved-executed", "denied-not-executed", "execution-error", "outcome-unknown"] as const;
export const TASK_STATUSES = ["working", "input_required", "completed", "cancelled", "failed"] as const;
/** Age buckets of pending approval requests, by their upper bound in seconds (the last is unbounded). */
export const PENDING_AGE_BUCKETS = [
  { label: "0-5m", maxSec: 300 },
  { label: "5m-1h", maxSec: 3_600 },
  { label: "1h-1d", maxSec: 86_400 },
  { label: "1d+", maxSec: Infinity },
] as const;

/** What a scrape reads from the database (one grouped query each). */
export type StateSnapshot = {
  tasksByStatus: { status: string; count: number }[];
  pendingByGroupAge: { group: string; age: string; count: number }[];
};

/** What lib/db exposes of its pg pool. */
export type PoolLike = { totalCount: number; idleCount: number; waitingCount: number; options?: { max?: number } };

function build() {
  const registry = new Registry();
  const r = [registry];
  const sweep = { lastSuccessMs: 0, startedMs: Date.now(), lastDurationSec: 0 };
  const pools: { pool: PoolLike | null } = { pool: null };
  const m = {
    registry,
    sweep,
    pools,
    calls: new Counter({ name: "countersign_tool_calls_total", help: "tools/call requests by tool and policy decision.", labelNames: ["tool", "decision"], registers: r }),
    executions: new Counter({ name: "countersign_task_dispositions_total", help: "Tasks completed, by disposition.", labelNames: ["disposition"], registers: r }),
    claimsLost: new Counter({ name: "countersign_claims_lost_total", help: "Execution claims that did not win (another caller won, or a fence held).", registers: r }),
    decisionSeconds: new Histogram({
      name: "countersign_time_to_decision_seconds",
      help: "Time from an approval request's creation to its decision by reviewers.",
      labelNames: ["decision"],
      buckets: [10, 60, 300, 900, 3_600, 4 * 3_600, 24 * 3_600, 3 * 24 * 3_600],
      registers: r,
    }),
    webhookFailures: new Counter({ name: "countersign_webhook_delivery_failures_total", help: "Failed webhook delivery attempts (retry: another attempt is scheduled; failed: the last).", labelNames: ["result"], registers: r }),
    notificationFailures: new Counter({ name: "countersign_notification_delivery_failures_total", help: "Failed notification delivery attempts (retry: another attempt is scheduled; failed: the last).", labelNames: ["result"], registers: r }),
    sweepFailures: new Counter({ name: "countersign_sweep_failures_total", help: "Sweeper passes that threw.", registers: r }),
    sweepDuration: new Histogram({ name: "countersign_sweep_duration_seconds", help: "Duration of successful sweeper passes.", buckets: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30], registers: r }),
    sweepLag: new Gauge({
      name: "countersign_sweep_seconds_since_success",
      help: "Seconds since this process's last successful sweeper pass (since start when none succeeded yet).",
      registers: r,
      collect() {
        this.set((Date.now() - (sweep.lastSuccessMs || sweep.startedMs)) / 1000);
      },
    }),
    sweepLast: new Gauge({
      name: "countersign_sweep_last_duration_seconds",
      help: "Duration of this process's last successful sweeper pass.",
      registers: r,
      collect() {
        this.set(sweep.lastDurationSec);
      },
    }),
    stateReadFailures: new Counter({ name: "countersign_state_read_failures_total", help: "Scrapes whose read of stored state failed (the state gauges were left out).", registers: r }),
    tasks: new Gauge({ name: "countersign_tasks", help: "Stored tasks by status.", labelNames: ["status"], registers: r }),
    pending: new Gauge({ name: "countersign_pending_approval_requests", help: "Pending approval requests by approver group and age bucket.", labelNames: ["approver_group", "age"], registers: r }),
    pool: new Gauge({
      name: "countersign_db_pool_connections",
      help: "The database pool of this process: total and idle connections, queued requests waiting for one, the maximum.",
      labelNames: ["state"],
      registers: r,
      collect() {
        const p = pools.pool;
        if (!p) return;
        this.set({ state: "total" }, p.totalCount);
        this.set({ state: "idle" }, p.idleCount);
        this.set({ state: "waiting" }, p.waitingCount);
        if (p.options?.max) this.set({ state: "max" }, p.options.max);
      },
    }),
  };
  for (const d of DISPOSITIONS) m.executions.inc({ disposition: d }, 0);
  m.claimsLost.inc(0);
  m.sweepFailures.inc(0);
  m.stateReadFailures.inc(0);
  for (const result of ["retry", "failed"] as const) {
    m.webhookFailures.inc({ result }, 0);
    m.notificationFailures.inc({ result }, 0);
  }
  return m;
}

type Metrics = ReturnType<typeof build>;
const holder = globalThis as unknown as { __countersignMetrics?: Metrics };

function metrics(): Metrics {
  return (holder.__countersignMetrics ??= build());
}

/** A policy decision on a tools/call. `tool` is the catalog's name of the tool, or null when none is known. */
export function countCall(tool: string | null, decision: CallDecision): void {
  metrics().calls.inc({ tool: tool ?? "unknown", decision });
}

export function countDisposition(disposition: (typeof DISPOSITIONS)[number]): void {
  metrics().executions.inc({ disposition });
}

export function countClaimLost(): void {
  metrics().claimsLost.inc();
}

export function observeTimeToDecision(decision: "approved" | "denied", seconds: number): void {
  metrics().decisionSeconds.observe({ decision }, Math.max(0, seconds));
}

export function countDeliveryFailure(kind: "webhook" | "notification", result: DeliveryResult): void {
  (kind === "webhook" ? metrics().webhookFailures : metrics().notificationFailures).inc({ result });
}

/** A sweeper pass that finished, with its duration in seconds. */
export function sweepSucceeded(seconds: number, at = Date.now()): void {
  const m = metrics();
  m.sweep.lastSuccessMs = at;
  m.sweep.lastDurationSec = seconds;
  m.sweepDuration.observe(seconds);
}

export function sweepFailed(): void {
  metrics().sweepFailures.inc();
}

/** The pool of the process's database client (lib/db/client.ts), read at scrape time. */
export function observePool(pool: PoolLike | null): void {
  metrics().pools.pool = pool;
}

export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * The exposition text: the state gauges set from `state`, everything else as counted. Without a snapshot (the
 * database did not answer) the state gauges are left out rather than reported as zero.
 */
export async function renderMetrics(state: StateSnapshot | null): Promise<string> {
  const m = metrics();
  m.tasks.reset();
  m.pending.reset();
  if (state) {
    for (const s of TASK_STATUSES) m.tasks.set({ status: s }, 0);
    for (const { status, count } of state.tasksByStatus) m.tasks.set({ status }, count);
    for (const { group, age, count } of state.pendingByGroupAge) m.pending.set({ approver_group: group, age }, count);
  } else {
    m.stateReadFailures.inc();
  }
  return m.registry.metrics();
}

/** The current value of a counter or gauge series, for tests. */
export async function metricValue(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = metrics().registry.getSingleMetric(name);
  if (!metric) return NaN;
  const { values } = await metric.get();
  const hit = values.find((v) => Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want));
  return hit ? hit.value : 0;
}
