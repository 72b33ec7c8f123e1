export function formatMoney(cents: number, currency: string): string {
  return `${currency} ${(cents / 100).toFixed(2)}`;
}

/** A positive amount in major units with at most two decimals, as integer cents. */
export function toCents(amount: number): number {
  const cents = Math.round(amount * 100);
  if (!Number.isFinite(amount) || cents <= 0 || Math.abs(cents - amount * 100) > 1e-6) {
    throw new RangeError("amount must be positive with at most two decimals");
  }
  return cents;
}
