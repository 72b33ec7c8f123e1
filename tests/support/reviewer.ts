/**
 * A reviewer's decision as the race tests make it: decide(), clicked again (bounded) when the database could not
 * even start the transaction in time, as happens on a heavily loaded machine. Such a failure recorded nothing, so
 * clicking again is what a reviewer would do, and it does not change what the race proves. No vitest imports:
 * the race's child processes use it too.
 */
import { decide, type DecideResult } from "../../lib/tasks/decide";
import type { ReviewInput } from "../../lib/approvals/review";

const ATTEMPTS = 5;

export async function reviewerDecides(input: ReviewInput, now: Date): Promise<DecideResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await decide(input, now);
    } catch (e) {
      if (attempt >= ATTEMPTS || !/Unable to start a transaction/.test(String((e as Error).message))) throw e;
    }
  }
}
