/** One labelled filter of a GET filter form: a select whose first option (value "") means "no filter". */
export function FilterSelect({
  id,
  name,
  label,
  value,
  anyLabel,
  options,
}: {
  id: string;
  name: string;
  label: string;
  value: string | undefined;
  /** Label of the "" option; omit when the filter always has a value. */
  anyLabel?: string;
  options: readonly (string | readonly [value: string, label: string])[];
}) {
  return (
    <div>
      <label htmlFor={id} className="block text-xs font-medium text-slate-700">
        {label}
      </label>
      <select id={id} name={name} defaultValue={value ?? ""} className="mt-0.5 block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm">
        {anyLabel !== undefined && <option value="">{anyLabel}</option>}
        {options.map((o) => {
          const [v, text] = typeof o === "string" ? [o, o] : o;
          return (
            <option key={v} value={v}>
              {text}
            </option>
          );
        })}
      </select>
    </div>
  );
}
