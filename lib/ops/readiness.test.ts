/** Readiness from the migrations a database applied against the ones this version ships. */
import { describe, expect, it } from "vitest";
import { migrationsState } from "./readiness";

const shipped = ["20260101000000_a", "20260102000000_b"];
const done = (name: string) => ({ name, finished: true });

describe("migrations state", () => {
  it("ready only when the applied set is exactly the shipped one", () => {
    expect(migrationsState(shipped.map(done), shipped)).toEqual({ ready: true });
    expect(migrationsState("no-table", shipped)).toEqual({ ready: false, reason: "database schema not migrated" });
    expect(migrationsState([done(shipped[0])], shipped)).toEqual({ ready: false, reason: "1 migration not applied" });
    expect(migrationsState([], shipped)).toEqual({ ready: false, reason: "2 migrations not applied" });
    expect(migrationsState([...shipped.map(done), done("20270101000000_c")], shipped)).toEqual({ ready: false, reason: "database has 1 migration this version does not ship" });
    expect(migrationsState([done(shipped[0]), { name: shipped[1], finished: false }], shipped)).toEqual({ ready: false, reason: "a migration did not finish" });
  });
});
