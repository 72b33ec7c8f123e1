import Link from "next/link";

/** The inbox's two views: what waits for you, and what you approved that waits for others. */
export function InboxTabs({ current }: { current: "waiting" | "awaiting" }) {
  const tab = (view: "waiting" | "awaiting", href: string, label: string) => (
    <Link
      href={href}
      aria-current={current === view ? "page" : undefined}
      className={`rounded-t-md border-b-2 px-3 py-1.5 text-sm font-medium ${
        current === view ? "border-indigo-700 text-indigo-900" : "border-transparent text-slate-700 hover:text-slate-900"
      }`}
    >
      {label}
    </Link>
  );
  return (
    <nav aria-label="Inbox views" className="mb-4 flex gap-1 border-b border-slate-200">
      {tab("waiting", "/inbox", "Waiting for you")}
      {tab("awaiting", "/inbox?view=awaiting", "Awaiting others")}
    </nav>
  );
}
