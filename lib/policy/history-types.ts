/** Measured recent history, per history window the policy declares: total (minor units of the call's currency) and count. */
export type HistoryValues = Record<string, { total: number; count: number }>;
