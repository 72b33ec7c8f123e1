import { describe, expect, it } from "vitest";
import { loginPathFor, safeReturnPath } from "./return-path";

describe("the page to land on after sign-in", () => {
  it("follows a same-origin relative path, with its query", () => {
    expect(safeReturnPath("/requests/5b1e6f0a-1c2d-4e5f-8a9b-0c1d2e3f4a5b")).toBe("/requests/5b1e6f0a-1c2d-4e5f-8a9b-0c1d2e3f4a5b");
    expect(safeReturnPath("/inbox?q=O-2289&sort=expiring")).toBe("/inbox?q=O-2289&sort=expiring");
    expect(safeReturnPath("/history/../requests/x")).toBe("/requests/x");
  });

  it("refuses an open redirect to another site and anything that is not a plain path", () => {
    for (const bad of [
      "https://evil.example/requests/1",
      "//evil.example/x",
      "/\\evil.example",
      "\\\\evil.example",
      "javascript:alert(1)",
      "/requests/1\r\nLocation: https://evil.example",
      "requests/1",
      "",
      "/login?next=/inbox",
      "/api/inbox",
      "/" + "a".repeat(2_001),
      42,
      undefined,
    ]) {
      expect(safeReturnPath(bad), String(bad)).toBeNull();
    }
  });

  it("the sign-in address carries the path, escaped, and none for the inbox, the home page or a refused one", () => {
    expect(loginPathFor("/requests/abc?x=1")).toBe("/login?next=%2Frequests%2Fabc%3Fx%3D1");
    expect(loginPathFor("/inbox")).toBe("/login");
    expect(loginPathFor("/")).toBe("/login");
    expect(loginPathFor("//evil.example")).toBe("/login");
    expect(loginPathFor(null)).toBe("/login");
  });
});
