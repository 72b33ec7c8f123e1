import { describe, expect, it } from "vitest";
import { localTime, relativeTime } from "./relative-time";

const NOW = Date.parse("2026-12-02T12:00:00Z");
const ago = (ms: number) => NOW - ms;

describe("times as reviewers read them", () => {
  it("recent moments read as how long ago they were", () => {
    expect(relativeTime(ago(10_000), NOW)).toBe("just now");
    expect(relativeTime(ago(3 * 60_000), NOW)).toBe("3 min ago");
    expect(relativeTime(ago(59 * 60_000), NOW)).toBe("59 min ago");
    expect(relativeTime(ago(2 * 3_600_000), NOW)).toBe("2 h ago");
    expect(relativeTime(ago(30 * 3_600_000), NOW)).toBe("yesterday");
    expect(relativeTime(ago(4 * 86_400_000), NOW)).toBe("4 days ago");
  });

  it("future moments read as how soon, and moments over a month away give way to the date", () => {
    expect(relativeTime(NOW + 5 * 60_000, NOW)).toBe("in 5 min");
    expect(relativeTime(NOW + 3 * 3_600_000, NOW)).toBe("in 3 h");
    expect(relativeTime(ago(45 * 86_400_000), NOW)).toBeNull();
  });

  it("the absolute time is shown in the reader's time zone, named", () => {
    expect(localTime("2026-12-02T12:00:00Z", "Europe/Berlin")).toBe("2 Dec 2026, 13:00 CET");
    expect(localTime("2026-12-02T12:00:00Z", "UTC")).toBe("2 Dec 2026, 12:00 UTC");
    expect(localTime("2026-07-01T12:00:00Z", "America/New_York")).toBe("1 Jul 2026, 08:00 GMT-4");
  });
});
