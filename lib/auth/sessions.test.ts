import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../db/client";
import { resetDb } from "../../tests/support/db";
import { endSessions, sessionEpochOf, sessionStillValid } from "./sessions";

beforeEach(async () => {
  await resetDb();
});

describe("ending sessions", () => {
  it("a session is valid only under the user's epoch of now; one from before epochs counts as epoch 0", () => {
    expect(sessionStillValid(0, 0)).toBe(true);
    expect(sessionStillValid(undefined, 0)).toBe(true);
    expect(sessionStillValid(undefined, 1)).toBe(false);
    expect(sessionStillValid(1, 1)).toBe(true);
    expect(sessionStillValid(0, 1)).toBe(false);
    expect(sessionStillValid(2, 1)).toBe(false);
    expect(sessionStillValid("1", 1)).toBe(false);
    expect(sessionStillValid(1.5, 1)).toBe(false);
  });

  it("raises the user's epoch, so every session signed in before is refused, and audits who did it", async () => {
    const sam = await db().user.findUniqueOrThrow({ where: { email: "sam.lead@countersign.test" } });
    const before = await sessionEpochOf(sam.id);
    const at = new Date("2026-12-01T12:00:00Z");
    expect(await endSessions(sam.id, "user:admin-id", at)).toBe(true);
    const after = await sessionEpochOf(sam.id);
    expect(after).toBe(before + 1);
    expect(sessionStillValid(before, after)).toBe(false);
    const event = await db().auditEvent.findFirstOrThrow({ where: { type: "user.sessions-ended" } });
    expect(event).toMatchObject({ actor: "user:admin-id", data: { userId: sam.id } });
    // Another user's sessions are untouched.
    const sid = await db().user.findUniqueOrThrow({ where: { email: "sid.sre@countersign.test" } });
    expect(sid.sessionEpoch).toBe(0);
  });

  it("says so when there is no such user, and records nothing", async () => {
    expect(await endSessions("00000000-0000-4000-8000-000000000000", "user:x", new Date())).toBe(false);
    expect(await db().auditEvent.count({ where: { type: "user.sessions-ended" } })).toBe(0);
  });
});
