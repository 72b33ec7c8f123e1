"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

export type NavLink = { href: string; label: string };

/** The main navigation; the current page's link carries aria-current. */
export function NavLinks({ links, label }: { links: NavLink[]; label: string }) {
  const path = usePathname();
  return (
    <nav aria-label={label}>
      <ul className="flex flex-wrap items-center gap-x-4 gap-y-1">
        {links.map((l) => {
          const current = path === l.href || path.startsWith(`${l.href}/`);
          return (
            <li key={l.href}>
              <Link
                href={l.href}
                aria-current={current ? "page" : undefined}
                className={`text-sm underline-offset-4 hover:text-slate-950 ${current ? "font-medium text-slate-950 underline" : "text-slate-700"}`}
              >
                {l.label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
