/**
 * After a decision: on to the next request in the reviewer's inbox (chosen by /inbox/next when followed; the inbox
 * when none). A plain link: it is a redirect, not a page the client router could render.
 */
export function NextRequestLink({ from }: { from: string }) {
  return (
    <a
      href={`/inbox/next?from=${from}`}
      className="inline-block rounded-md bg-indigo-700 px-4 py-2 text-sm font-medium text-white hover:bg-indigo-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-700"
      data-testid="next-request"
    >
      Next request →
    </a>
  );
}
