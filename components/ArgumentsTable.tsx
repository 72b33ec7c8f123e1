/** The tool's arguments, one row each. Values are rendered as text, never as markup. */
export function ArgumentsTable({ args }: { args: unknown }) {
  const entries =
    args && typeof args === "object" && !Array.isArray(args) ? Object.entries(args as Record<string, unknown>) : null;
  if (!entries) {
    return <p dir="auto" className="font-mono text-sm [overflow-wrap:anywhere]">{JSON.stringify(args)}</p>;
  }
  if (entries.length === 0) return <p className="text-sm text-slate-600">No arguments.</p>;
  return (
    <table className="w-full text-sm">
      <caption className="sr-only">Tool arguments</caption>
      <thead>
        <tr className="border-b border-slate-200 text-left text-xs tracking-wide text-slate-500 uppercase">
          <th scope="col" className="py-1.5 pr-4 font-medium">
            Argument
          </th>
          <th scope="col" className="py-1.5 font-medium">
            Value
          </th>
        </tr>
      </thead>
      <tbody>
        {entries.map(([key, value]) => (
          <tr key={key} className="border-b border-slate-100 align-top last:border-0">
            <th scope="row" className="py-2 pr-4 text-left font-mono text-xs font-medium whitespace-nowrap text-slate-700">
              {key}
            </th>
            <td dir="auto" className="py-2 whitespace-pre-wrap text-slate-900 [overflow-wrap:anywhere]">
              {typeof value === "string" ? (
                value
              ) : (
                <span className="font-mono text-xs">{JSON.stringify(value, null, 2)}</span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
