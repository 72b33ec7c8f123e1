/**
 * The words of a denial that did not run: the cause's sentence, then the real reason when one is known, ended as a
 * sentence, then what the caller may do. The body and the disposition say the same thing.
 */
import { describe, expect, it } from "vitest";
import { deniedNotExecuted } from "./outcomes";

describe("deniedNotExecuted", () => {
  it("puts the detail, trimmed and ended with a full stop, between the cause and the advice", () => {
    expect(deniedNotExecuted("binding", "  The order has EUR 20.00 left to refund  ").text).toBe(
      "The tool, its arguments or the resource changed while the request was pending, so the approval no longer applies. " +
        "The order has EUR 20.00 left to refund. The tool did not run, so no side effect occurred. Do not retry this task.",
    );
  });

  it("keeps a detail's own ending punctuation and adds none", () => {
    for (const detail of ["Frozen for the release.", "Refused!", "Is the service frozen?"]) {
      expect(deniedNotExecuted("policy", detail).text).toContain(` ${detail} The tool did not run`);
    }
  });

  it("without a detail, reads the cause and the advice alone", () => {
    expect(deniedNotExecuted("approval-expired")).toEqual({
      text: "The approval expired before the call could be executed. The tool did not run, so no side effect occurred. Do not retry this task.",
      isError: true,
      disposition: "denied-not-executed",
    });
  });
});
