/**
 * Submission input (SEP "Collecting submission input"): the question a rule with requireJustification asks before
 * anything is submitted, and the check of the agent's answer, held at each bound. An answer that does not fit is
 * refused (null, so the call asks again), never trimmed into fitting.
 */
import { describe, expect, it } from "vitest";
import { checkAnswer } from "./answers";
import { SUBMISSION_INPUT_KEY, parseSubmissionInput, submissionQuestion } from "./call";

const just = (n: number) => "j".repeat(n);

describe("the submission-input question", () => {
  it("asks for a justification of 10 to 500 characters and an optional ticket of up to 40, after the rule's reason", () => {
    const q = submissionQuestion("Refunds over USD 100 need approval.");
    expect(SUBMISSION_INPUT_KEY).toBe("approval_request");
    expect(q.message).toBe(
      "Refunds over USD 100 need approval. Before the request goes to reviewers, give a justification (and a ticket reference if there is one).",
    );
    expect(q.requestedSchema).toMatchObject({
      type: "object",
      // The labels and hints the requester's form shows.
      properties: {
        justification: { type: "string", title: "Justification", description: "Why this call is needed", minLength: 10, maxLength: 500 },
        ticket: { type: "string", title: "Ticket reference", description: "For example SUP-1234 (optional)", maxLength: 40 },
      },
      required: ["justification"],
    });
    // The form the client shows checks what the server checks.
    expect(checkAnswer(q, { justification: just(9) }).ok).toBe(false);
    expect(checkAnswer(q, { justification: just(10), ticket: "SUP-1" }).ok).toBe(true);
    expect(checkAnswer(q, { ticket: "SUP-1" }).ok).toBe(false);
  });
});

describe("parseSubmissionInput", () => {
  it("needs an object with a string justification", () => {
    for (const c of [null, undefined, "a justification of length", 42, {}, { justification: 1234567890123 }, { ticket: "SUP-1" }]) {
      expect(parseSubmissionInput(c)).toBeNull();
    }
  });

  it("holds the justification at 10 characters after trimming and 500 as given", () => {
    expect(parseSubmissionInput({ justification: just(9) })).toBeNull();
    expect(parseSubmissionInput({ justification: `   ${just(9)}   ` })).toBeNull();
    expect(parseSubmissionInput({ justification: just(10) })).toEqual({ justification: just(10) });
    expect(parseSubmissionInput({ justification: `  ${just(10)}  ` })).toEqual({ justification: just(10) });
    expect(parseSubmissionInput({ justification: just(500) })).toEqual({ justification: just(500) });
    expect(parseSubmissionInput({ justification: just(501) })).toBeNull();
    // Blanks count toward the 500: what arrives is bounded, not what is left after trimming.
    expect(parseSubmissionInput({ justification: ` ${just(499)} ` })).toBeNull();
  });

  it("takes an optional ticket of at most 40 characters, trimmed, and drops a blank one", () => {
    const j = "Customer double-charged, see ticket.";
    expect(parseSubmissionInput({ justification: j, ticket: " SUP-1234 " })).toEqual({ justification: j, ticket: "SUP-1234" });
    expect(parseSubmissionInput({ justification: j, ticket: "t".repeat(40) })).toEqual({ justification: j, ticket: "t".repeat(40) });
    expect(parseSubmissionInput({ justification: j, ticket: "t".repeat(41) })).toBeNull();
    expect(parseSubmissionInput({ justification: j, ticket: 1234 })).toBeNull();
    expect(parseSubmissionInput({ justification: j, ticket: null })).toBeNull();
    expect(parseSubmissionInput({ justification: j, ticket: "   " })).toEqual({ justification: j });
    expect(parseSubmissionInput({ justification: j, ticket: "" })).toEqual({ justification: j });
    expect(parseSubmissionInput({ justification: j, ticket: undefined })).toEqual({ justification: j });
  });
});
