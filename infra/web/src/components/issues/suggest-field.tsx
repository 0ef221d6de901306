// A free-text field with suggestions (triage status, disposition): the list
// filters and the triage form use the same control.

export function SuggestField({
  label,
  value,
  onChange,
  listId,
  suggestions,
  placeholder,
}: {
  label: string;
  value: string;
  onChange: (e: { target: { value: string } }) => void;
  listId: string;
  suggestions: readonly string[];
  placeholder?: string;
}) {
  return (
    <label>
      {label}
      <input value={value} onChange={onChange} list={listId} maxLength={64} placeholder={placeholder} />
      <datalist id={listId}>
        {suggestions.map((v) => (
          <option key={v} value={v} />
        ))}
      </datalist>
    </label>
  );
}
