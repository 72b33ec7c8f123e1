import { describe, expect, it } from "vitest";
import { formatAmount, formatMoney, readableAmounts, toCents } from "./money";
import { moneyText } from "../inbox/rule-words";
import { wireTransfer } from "./wire-transfer";

describe("money as people read it", () => {
  it("formatMoney prints the currency, thousands separators and two decimals", () => {
    expect(formatMoney(3_000_000, "USD")).toBe("USD 30,000.00");
    expect(formatMoney(18_000, "EUR")).toBe("EUR 180.00");
    expect(formatMoney(123_456_750, "USD")).toBe("USD 1,234,567.50");
    expect(formatMoney(5, "EUR")).toBe("EUR 0.05");
    expect(formatAmount(100_000_000_00)).toBe("100,000,000.00");
  });

  it("a rule's threshold and a tool's summary print amounts through the same formatter", async () => {
    expect(moneyText(2_500_000, "USD")).toBe(formatMoney(2_500_000, "USD"));
    expect(moneyText(2_500_000, null)).toBe("25,000.00");
    expect(wireTransfer.summary({ to: "acct-991", amount: 30000 } as never, {} as never)).toBe("USD 30,000.00 wire transfer to acct-991");
    expect(wireTransfer.summary({ to: "acct-991", amount: 2.5e4 } as never, {} as never)).toBe("USD 25,000.00 wire transfer to acct-991");
  });

  it("readableAmounts: text stored before separators reads like formatMoney, and formatted text is left as it is", () => {
    expect(readableAmounts("EUR 180.00 refund; USD 30000.00 and USD 1000000.5")).toBe("EUR 180.00 refund; USD 30,000.00 and USD 1,000,000.50");
    expect(readableAmounts("USD 30,000.00 wire transfer to acct-991")).toBe("USD 30,000.00 wire transfer to acct-991");
    expect(readableAmounts("USD 1,234,567.5.")).toBe("USD 1,234,567.50.");
    expect(readableAmounts("order O-2289 for 3 items, EUR 12")).toBe("order O-2289 for 3 items, EUR 12.00");
    expect(readableAmounts("Order O-2289 has EUR 30.00 left")).toBe("Order O-2289 has EUR 30.00 left");
  });

  it("toCents takes at most two decimals", () => {
    expect(toCents(25000.01)).toBe(2_500_001);
    expect(() => toCents(1.001)).toThrow(RangeError);
  });
});
