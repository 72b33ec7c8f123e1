/** A LIKE pattern that matches `q` literally anywhere (\, % and _ escaped). */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
