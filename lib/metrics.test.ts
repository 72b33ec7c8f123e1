/** The metrics module on its own: names, bounded labels, the one registry per process, state gauges, the pool. */
import { describe, expect, it, vi } from "vitest";
import { countCall, countClaimLost, countDeliveryFailure, countDisposition, metricValue, observePool, observeTimeToDecision, renderMetrics, sweepSucceeded } from "./metrics";

const series = (text: string) => text.split("\n").filter((l) => l && !l.startsWith("#"));

describe("metrics", () => {
  it("every series is named countersign_*", async () => {
    countCall("issue_refund", "allow");
    observeTimeToDecision("approved", 42);
    const text = await renderMetrics({ tasksByStatus: [], pendingByGroupAge: [] });
    expect(series(text).length).toBeGreaterThan(20);
    for (const l of series(text)) expect(l).toMatch(/^countersign_[a-z_]+(\{[^}]*\})? -?[\d.e+-]+$|^countersign_[a-z_]+(\{[^}]*\})? (NaN|\+Inf)$/);
  });

  it("a call without a catalog tool is labelled unknown; the label never holds what the agent sent", async () => {
    const before = await metricValue("countersign_tool_calls_total", { tool: "unknown", decision: "deny" });
    countCall(null, "deny");
    expect(await metricValue("countersign_tool_calls_total", { tool: "unknown", decision: "deny" })).toBe(before + 1);
  });

  it("counts into the one registry of the process, whichever module instance increments it", async () => {
    const before = await metricValue("countersign_claims_lost_total");
    vi.resetModules();
    const other = await import("./metrics");
    other.countClaimLost();
    countClaimLost();
    expect(await metricValue("countersign_claims_lost_total")).toBe(before + 2);
    expect(await other.metricValue("countersign_claims_lost_total")).toBe(before + 2);
  });

  it("sets the state gauges from the snapshot, zero for a status with no tasks, and leaves them out without one", async () => {
    let text = await renderMetrics({ tasksByStatus: [{ status: "working", count: 3 }], pendingByGroupAge: [{ group: "leads", age: "1h-1d", count: 2 }] });
    expect(text).toContain('countersign_tasks{status="working"} 3');
    expect(text).toContain('countersign_tasks{status="cancelled"} 0');
    expect(text).toContain('countersign_pending_approval_requests{approver_group="leads",age="1h-1d"} 2');
    text = await renderMetrics({ tasksByStatus: [], pendingByGroupAge: [] });
    expect(text).not.toContain('approver_group="leads"');
    const failures = await metricValue("countersign_state_read_failures_total");
    text = await renderMetrics(null);
    expect(series(text).some((l) => l.startsWith("countersign_tasks{"))).toBe(false);
    expect(await metricValue("countersign_state_read_failures_total")).toBe(failures + 1);
  });

  it("counts dispositions and delivery failures by fixed words, and the pool and sweeper at scrape time", async () => {
    const d = await metricValue("countersign_task_dispositions_total", { disposition: "outcome-unknown" });
    countDisposition("outcome-unknown");
    expect(await metricValue("countersign_task_dispositions_total", { disposition: "outcome-unknown" })).toBe(d + 1);
    const w = await metricValue("countersign_webhook_delivery_failures_total", { result: "retry" });
    countDeliveryFailure("webhook", "retry");
    countDeliveryFailure("notification", "failed");
    expect(await metricValue("countersign_webhook_delivery_failures_total", { result: "retry" })).toBe(w + 1);
    observePool({ totalCount: 4, idleCount: 1, waitingCount: 7, options: { max: 8 } });
    sweepSucceeded(0.25, Date.now() - 3_000);
    const text = await renderMetrics({ tasksByStatus: [], pendingByGroupAge: [] });
    expect(text).toContain('countersign_db_pool_connections{state="waiting"} 7');
    expect(text).toContain('countersign_db_pool_connections{state="max"} 8');
    expect(text).toContain("countersign_sweep_last_duration_seconds 0.25");
    const lag = Number(/^countersign_sweep_seconds_since_success (\S+)$/m.exec(text)![1]);
    expect(lag).toBeGreaterThanOrEqual(3);
    expect(lag).toBeLessThan(60);
    observePool(null);
  });
});
