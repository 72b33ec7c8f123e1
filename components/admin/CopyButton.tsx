"use client";

import { useState } from "react";

/** Copies `value` to the clipboard and says so (or says that the browser refused, so the admin selects it by hand). */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [said, setSaid] = useState("");
  return (
    <span className="mt-2 inline-flex items-center gap-2">
      <button
        type="button"
        onClick={() =>
          navigator.clipboard.writeText(value).then(
            () => setSaid("Copied."),
            () => setSaid("The browser did not allow copying: select the text and copy it."),
          )
        }
        className="rounded-md border border-amber-400 bg-white px-2.5 py-1 text-xs font-medium text-slate-900 hover:bg-amber-100"
      >
        {label}
      </button>
      <span role="status" className="text-xs">
        {said}
      </span>
    </span>
  );
}
