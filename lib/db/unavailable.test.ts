/** Which failures mean "the database is unavailable" (retry later, nothing said about the request) and which do not. */
import { describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "./unavailable";

describe("isDatabaseUnavailable", () => {
  it.each([
    ["a dropped connection (pg)", new Error("Connection terminated unexpectedly")],
    ["a refused connection", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })],
    ["a terminated backend", Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" })],
    ["a connection exception class 08", Object.assign(new Error("x"), { code: "08006" })],
    ["Prisma's unreachable server", Object.assign(new Error("x"), { code: "P1001" })],
    ["a driver adapter error", Object.assign(new Error("x"), { cause: { kind: "ConnectionClosed" } })],
    ["a wrapped cause", new Error("query failed", { cause: Object.assign(new Error("socket"), { code: "ECONNRESET" }) })],
  ])("%s: unavailable", (_label, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it.each([
    ["a unique violation", Object.assign(new Error("Unique constraint failed"), { code: "P2002" })],
    ["a programming error", new TypeError("x is not a function")],
    ["a serialization failure", Object.assign(new Error("could not serialize access"), { code: "40001" })],
    ["not an error", "Connection"],
    ["nothing", undefined],
  ])("%s: not unavailable", (_label, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });
});
