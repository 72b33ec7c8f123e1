/**
 * Keyset-pagination cursors: the sort key and id of the last (or first) row of a page, opaque to the browser.
 * A cursor that does not decode is ignored (first page), never trusted into SQL: both parts are re-validated.
 */
export type Cursor = { at: Date; id: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function encodeCursor(c: Cursor): string {
  return Buffer.from(`${c.at.toISOString()}|${c.id}`, "utf8").toString("base64url");
}

export function decodeCursor(raw: string | null | undefined): Cursor | null {
  if (!raw || raw.length > 200) return null;
  const text = Buffer.from(raw, "base64url").toString("utf8");
  const [iso, id] = text.split("|");
  if (!iso || !id || !UUID.test(id)) return null;
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return null;
  return { at, id };
}
