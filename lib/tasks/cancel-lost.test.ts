/**
 * A cancel that read the task still waiting but lost the transition to something else that ended it first: when
 * the approved call ran meanwhile, the cancel is a no-op and the task completes as it ran; when another cancel or
 * a backend failure ended it, the cancel is refused as terminal. The other end is made to happen exactly between
 * the cancel's read and its transition.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { principal, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { LEADS, MIN, at, auditCount, gatedRefund, sideEffects } from "../../tests/support/proof";

const between = vi.hoisted(() => ({ run: null as null | (() => Promise<unknown>) }));
vi.mock("../execution/terminalize", async (original) => {
  const real = await original<typeof import("../execution/terminalize")>();
  return {
    ...real,
    terminalize: async (...args: Parameters<typeof real.terminalize>) => {
      const other = between.run;
      between.run = null;
      if (other) await other();
      return real.terminalize(...args);
    },
  };
});
const { cancelTask } = await import("./cancel");
const { decide } = await import("./decide");
const { recordBackendFailure } = await import("./backend-failure");
const { advanceTask } = await import("../execution/advance");

beforeEach(async () => {
  between.run = null;
  await resetDb();
});

describe("a cancel that loses to another end", () => {
  it("to the approved call's execution: a no-op, and the task reads completed as it ran", async () => {
    const taskId = await gatedRefund("O-2289");
    const requestId = await requestIdOf(taskId);
    between.run = async () => decide({ requestId, reviewerId: await userId(LEADS[0]), decision: "approve" }, at(MIN));
    const r = await cancelTask(await principal(), taskId, at(MIN));
    expect(r).toMatchObject({ ok: true, task: { status: "completed", result: { disposition: "approved-executed" } } });
    expect(await sideEffects(taskId)).toBe(1);
    expect(await auditCount(taskId, "task.cancelled")).toBe(0);
  });

  it("to another cancel: refused as terminal, one cancellation recorded", async () => {
    const taskId = await gatedRefund("O-2289");
    const agent = await principal();
    between.run = () => cancelTask(agent, taskId, at(MIN));
    expect(await cancelTask(agent, taskId, at(MIN))).toEqual({ ok: false, reason: "terminal" });
    expect(await auditCount(taskId, "task.cancelled")).toBe(1);
  });

  it("to a backend failure: refused as terminal, and the tool never ran", async () => {
    const taskId = await gatedRefund("O-2289");
    const requestId = await requestIdOf(taskId);
    between.run = async () => {
      await recordBackendFailure(requestId, "backend lost it", at(MIN));
      await advanceTask(taskId, at(MIN));
    };
    expect(await cancelTask(await principal(), taskId, at(MIN))).toEqual({ ok: false, reason: "terminal" });
    expect(await sideEffects(taskId)).toBe(0);
    expect(await auditCount(taskId, "task.cancelled")).toBe(0);
  });
});
