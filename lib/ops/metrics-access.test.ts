/** Who may read /metrics: the bearer token (constant-time), open only by choice and only without a token, else 404. */
import { describe, expect, it } from "vitest";
import { metricsAccess as access, sameSecret } from "./metrics-access";

const metricsAccess = (h: string | null, env: Record<string, string>) => access(h, env as NodeJS.ProcessEnv);

const TOKEN = "0123456789abcdef-token";

describe("metrics access", () => {
  it("with a token: the exact bearer token is allowed, anything else unauthorized, OPEN does not widen it", () => {
    const env = { COUNTERSIGN_METRICS_TOKEN: TOKEN, COUNTERSIGN_METRICS_OPEN: "1" };
    expect(metricsAccess(`Bearer ${TOKEN}`, env)).toBe("allowed");
    for (const h of [null, "", TOKEN, `Bearer ${TOKEN} `, `Bearer  ${TOKEN}`, `bearer ${TOKEN}`, `Bearer ${TOKEN.toUpperCase()}`, `Bearer ${TOKEN}0`]) {
      expect(metricsAccess(h, env)).toBe("unauthorized");
    }
  });

  it("without a token: 404 unless COUNTERSIGN_METRICS_OPEN is exactly 1; a token shorter than 16 characters keeps it closed", () => {
    expect(metricsAccess(null, {})).toBe("not-found");
    expect(metricsAccess(null, { COUNTERSIGN_METRICS_OPEN: "true" })).toBe("not-found");
    expect(metricsAccess(null, { COUNTERSIGN_METRICS_OPEN: "1" })).toBe("allowed");
    expect(metricsAccess(null, { COUNTERSIGN_METRICS_TOKEN: "", COUNTERSIGN_METRICS_OPEN: "1" })).toBe("allowed");
    expect(metricsAccess("Bearer short-token", { COUNTERSIGN_METRICS_TOKEN: "short-token", COUNTERSIGN_METRICS_OPEN: "1" })).toBe("not-found");
  });

  it("compares secrets of any lengths", () => {
    expect(sameSecret("a", "a")).toBe(true);
    expect(sameSecret("a", "ab")).toBe(false);
    expect(sameSecret("", "")).toBe(true);
  });
});
