/** The groups a request is offered to: its approver group, and its fallback group once escalated, each named once. */
import { describe, expect, it } from "vitest";
import { offeredGroups, offeredGroupsWords } from "./eligibility";

const offer = (fallbackGroup: string | null, escalatedAt: Date | null) => ({ approverGroup: "sre", fallbackGroup, escalatedAt, requesterUserId: "u-1" });

describe("offeredGroups", () => {
  it.each([
    ["not escalated", offer("oncall", null), ["sre"], "sre"],
    ["escalated to its fallback group", offer("oncall", new Date(0)), ["sre", "oncall"], "sre or oncall"],
    ["escalated without a fallback group", offer(null, new Date(0)), ["sre"], "sre"],
    ["escalated to a fallback group that is its own group", offer("sre", new Date(0)), ["sre"], "sre"],
  ])("%s", (_, o, groups, words) => {
    expect(offeredGroups(o)).toEqual(groups);
    expect(offeredGroupsWords(o)).toBe(words);
  });
});
