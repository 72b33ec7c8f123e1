/** Walks the audit chain in order and reports the first event whose hash or link does not hold, or a missing end. */
import { db } from "../db/client";
import { GENESIS, eventHash } from "./append";

export type ChainReport = { ok: true; events: number } | { ok: false; events: number; brokenAt: number; why: string };

export async function verifyAuditChain(): Promise<ChainReport> {
  let prev = GENESIS;
  let cursor = 0;
  let count = 0;
  for (;;) {
    const page = await db().auditEvent.findMany({ where: { seq: { gt: cursor } }, orderBy: { seq: "asc" }, take: 1000 });
    if (page.length === 0) {
      // The head names the newest event appended: a trail whose last events were removed ends before it.
      const head = await db().auditHead.findUnique({ where: { id: 1 } });
      if (head && head.hash !== prev) return { ok: false, events: count, brokenAt: cursor + 1, why: "the trail ends before its head: its newest events are missing" };
      return { ok: true, events: count };
    }
    for (const e of page) {
      count++;
      if (e.prevHash !== prev) return { ok: false, events: count, brokenAt: e.seq, why: "link to the previous event does not match" };
      if (eventHash(prev, e) !== e.hash) return { ok: false, events: count, brokenAt: e.seq, why: "event content does not match its hash" };
      prev = e.hash;
      cursor = e.seq;
    }
  }
}
