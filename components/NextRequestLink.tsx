import Link from "next/link";

/** After a decision: on to the next request in the reviewer's inbox (chosen when followed; the inbox when none). */
export function NextRequestLink({ from }: { from: string }) {
  return (
    <Link
      href={`/inbox/next?from=${from}`}
      prefetch={false}
      className="inline-block rounded-md bg-indigo-700 px-4 py-2 text-sm font-medium text-white hover:bg-indigo-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-indigo-700"
      data-testid="next-request"
    >
      Next request →
    </Link>
  );
}
