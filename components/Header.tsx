import Link from "next/link";
import { NavLinks, type NavLink } from "./NavLinks";

export type HeaderUser = { name: string; email: string; role: string; groups: string[] };

function linksFor(user: HeaderUser): NavLink[] {
  const links: NavLink[] = [];
  if (user.role === "reviewer") links.push({ href: "/inbox", label: "Inbox" });
  if (user.role === "admin") links.push({ href: "/admin/pending", label: "Pending" });
  if (user.role === "reviewer" || user.role === "admin") links.push({ href: "/history", label: "History" });
  if (user.role === "admin") {
    links.push(
      { href: "/admin/policy", label: "Policy" },
      { href: "/admin/people", label: "People & agents" },
      { href: "/admin/audit", label: "Audit" },
      { href: "/admin/webhooks", label: "Webhooks" },
      { href: "/admin/servers", label: "Servers" },
    );
  }
  links.push({ href: "/profile", label: "Profile" });
  return links;
}

/** The narrow top bar: product name, the pages this role uses, who is signed in, and sign out. */
export function Header({ user, signOutAction }: { user: HeaderUser | null; signOutAction: () => Promise<void> }) {
  return (
    <header className="border-b border-slate-200 bg-white">
      <div className="mx-auto flex max-w-6xl flex-wrap items-center justify-between gap-x-4 gap-y-2 px-4 py-2.5">
        <div className="flex flex-wrap items-center gap-x-5 gap-y-1">
          <Link href={user ? (user.role === "admin" ? "/admin/pending" : "/inbox") : "/login"} className="flex items-center gap-2 font-semibold tracking-tight">
            <span aria-hidden className="inline-block h-5 w-5 rounded bg-indigo-600 text-center text-xs leading-5 text-white">
              ✓
            </span>
            Countersign
          </Link>
          {user && <NavLinks links={linksFor(user)} label="Main" />}
        </div>
        {user && (
          <div className="ml-auto flex items-center gap-3 text-sm">
            <span className="text-right leading-tight" data-testid="signed-in-user">
              <span className="block font-medium text-slate-800">{user.name}</span>
              <span className="block text-xs text-slate-600">
                {user.role}
                {user.groups.length > 0 && ` · ${user.groups.join(", ")}`}
              </span>
            </span>
            <form action={signOutAction}>
              <button type="submit" className="rounded-md border border-slate-300 px-2.5 py-1 text-slate-700 hover:bg-slate-100">
                Sign out
              </button>
            </form>
          </div>
        )}
      </div>
    </header>
  );
}
