/** The extra agents the multi-replica tests call with (test data only, created by prepare.ts in a scratch database). */
export const BURST_AGENTS = [1, 2, 3, 4].map((n) => ({ name: `burst-bot-${n}`, token: `cs_replicas-burst-bot-${n}-test-token-0000000000` }));
