/**
 * A reviewer's free-text question to the requester: its length is held at both edges after trimming, text the
 * model must not receive (unpaired surrogates, control characters) is refused before anything is looked up, and
 * the question asks for one answer of up to 1,000 characters.
 */
import { describe, expect, it } from "vitest";
import { checkAnswer } from "./answers";
import { askRequester, clarificationQuestion } from "./ask";

const NOW = new Date("2100-01-01T00:00:00Z");
// No such request: a question that passes the checks reaches the look-up and is refused there.
const ask = (question: string) => askRequester({ requestId: "no-such-request", reviewerId: "no-such-reviewer", question }, NOW);

describe("askRequester", () => {
  it("needs 5 to 500 characters after trimming", async () => {
    const tooShort = { ok: false, error: "A question needs 5 to 500 characters." };
    expect(await ask("abcd")).toEqual(tooShort);
    expect(await ask("   abcd   ")).toEqual(tooShort);
    expect(await ask("q".repeat(501))).toEqual(tooShort);
    expect(await ask("abcde")).toEqual({ ok: false, error: "No such request." });
    expect(await ask(`  ${"q".repeat(500)}  `)).toEqual({ ok: false, error: "No such request." });
  });

  it("refuses text a model must not receive, and says why", async () => {
    const r = await ask("Which order is this? \ud800");
    expect(r.ok).toBe(false);
    expect((r as { error: string }).error).toMatch(/^The question cannot be sent: question: the text /);
  });
});

describe("clarificationQuestion", () => {
  it("carries the reviewer's words and asks for one answer of up to 1,000 characters", () => {
    const q = clarificationQuestion("Which ticket is this for?");
    expect(q.message).toBe("A reviewer needs more information before deciding: Which ticket is this for?");
    expect(q.requestedSchema).toEqual({
      type: "object",
      properties: { answer: { type: "string", title: "Answer", maxLength: 1000 } },
      required: ["answer"],
    });
    expect(checkAnswer(q, { answer: "a".repeat(1000) }).ok).toBe(true);
    expect(checkAnswer(q, { answer: "a".repeat(1001) }).ok).toBe(false);
    expect(checkAnswer(q, {}).ok).toBe(false);
  });
});
