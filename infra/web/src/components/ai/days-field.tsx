// The whole-days window field of the AI report lists (patrol, investigations):
// a draft committed after a pause, and only when valid. `prefix` names the
// page's own id and styles.
import { useDraft } from '../use-draft';

/** 1..365 whole days (the contract's `days` for these lists). */
export const validWholeDays = (v: string) => /^\d+$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= 365;

export function WholeDaysField({ value, commit, prefix }: { value: string; commit: (days: string) => void; prefix: 'patrol' | 'inv' }) {
  const [days, setDays] = useDraft(value, commit, validWholeDays, 400);
  const invalid = !validWholeDays(days);
  return (
    <label>
      Window (days)
      <input
        type="number"
        min={1}
        max={365}
        value={days}
        onChange={(e) => setDays(e.target.value)}
        aria-invalid={invalid}
        aria-describedby={`${prefix}-days-help`}
        className={`${prefix}-days`}
      />
      <span id={`${prefix}-days-help`} className={invalid ? `error ${prefix}-help` : `muted ${prefix}-help`}>
        {invalid ? 'A whole number from 1 to 365' : '1 to 365'}
      </span>
    </label>
  );
}
