// The model and usage columns the AI report tables share (patrol reports,
// investigations): model, tokens, cost and duration.
import { count, seconds, usd } from './kpis';

export function UsageHeads() {
  return (
    <>
      <th scope="col">Model</th>
      <th scope="col" className="num">
        Tokens
      </th>
      <th scope="col" className="num">
        Cost
      </th>
      <th scope="col" className="num">
        Duration
      </th>
    </>
  );
}

/** `pending`: a run still under way, whose figures come when it ends (not 0 tokens, $0.00 and 0.0 s, a run that did nothing). */
export function UsageCells({
  model,
  row,
  pending = false,
}: {
  model: string;
  row: { total_tokens: number; cost_usd: number; duration_seconds: number };
  pending?: boolean;
}) {
  if (pending)
    return (
      <>
        <td className="muted">—</td>
        <td className="num muted">—</td>
        <td className="num muted">—</td>
        <td className="num muted">—</td>
      </>
    );
  return (
    <>
      <td className="ai-model">{model}</td>
      <td className="num">{count(row.total_tokens)}</td>
      <td className="num">{usd(row.cost_usd)}</td>
      <td className="num">{seconds(row.duration_seconds)}</td>
    </>
  );
}
