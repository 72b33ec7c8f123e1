/** Small wording helpers shared by the tools' `facts` hooks. */

/** "1 refund", "3 refunds". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** The sum of the pending requests' amounts in `currency` (others are left out), in minor units. */
export function pendingSum(pending: { amountMinor: number | null; currency: string | null }[], currency: string): number {
  return pending.reduce((n, p) => n + (p.currency === currency && p.amountMinor !== null ? p.amountMinor : 0), 0);
}
