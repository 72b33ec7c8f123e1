/**
 * Money as people read it, in one place: the currency, then the amount with thousands separators and two decimals
 * ("USD 30,000.00"). Tool summaries and results, the inbox, the request page, rule texts, email and Slack all print
 * amounts through `formatMoney` (or `readableAmounts`, for text written before amounts had separators).
 */
const AMOUNT = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** Minor units (cents) as an amount with separators: 3000000 -> "30,000.00". */
export function formatAmount(cents: number): string {
  return AMOUNT.format(cents / 100);
}

/** Minor units (cents) with their currency: (3000000, "USD") -> "USD 30,000.00". */
export function formatMoney(cents: number, currency: string): string {
  return `${currency} ${formatAmount(cents)}`;
}

/**
 * Every "<CUR> <amount>" in a text as `formatMoney` prints it: "USD 30000.00" and "USD 30,000.00" both read
 * "USD 30,000.00". For summaries stored before amounts had separators; other numbers are left alone.
 */
export function readableAmounts(text: string): string {
  return text.replace(/\b([A-Z]{3}) (-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{1,2})?)(?![\d,.]*\d)/g, (_m, cur: string, n: string) =>
    formatMoney(Math.round(Number(n.replace(/,/g, "")) * 100), cur),
  );
}

/** A positive amount in major units with at most two decimals, as integer cents. */
export function toCents(amount: number): number {
  const cents = Math.round(amount * 100);
  if (!Number.isFinite(amount) || cents <= 0 || Math.abs(cents - amount * 100) > 1e-6) {
    throw new RangeError("amount must be positive with at most two decimals");
  }
  return cents;
}
