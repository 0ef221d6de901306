// LLM cost (/llm-cost, superadmins only; the navigation hides it from others and the
// API refuses them): daily cost and tokens over the period as charts, split by source
// (chat, agent) or by model; the period's totals and monthly projection; usage by model
// and the price list the cost is computed from. Period and split live in the URL.
import { useMemo } from 'react';
import { endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import type { Answer } from '../api/types';
import { LineChart, type LineSeries } from '../components/line-chart';
import { ScrollRegion } from '../components/scroll-region';
import { Empty, Loading, Problem } from '../components/states';
import { useUrlState } from '../components/url-state';
import './llm-cost.css';
import { compact, count, seconds, usd } from '../components/format';

const summaryEp = endpoint<'llm-usage', 'summary'>('GET', '/api/llm-usage/summary');
const byModelEp = endpoint<'llm-usage', 'byModel'>('GET', '/api/llm-usage/by-model');
const pricingEp = endpoint<'llm-usage', 'pricing'>('GET', '/api/llm-usage/pricing');

type Summary = Answer<'llm-usage', 'summary'>;
type Split = 'source' | 'model';

const DEFAULTS = { days: '30', split: 'source' };
const PERIODS = ['7', '14', '30', '60', '90'];

// In English, as every page writes numbers (components/format.ts).
const tokens = count;

/** Every day of the period, oldest first, as 'YYYY-MM-DD' ending on the answer's day. */
function periodDays(summary: Summary): string[] {
  const end = new Date(summary.generated_at);
  const last = Number.isNaN(end.getTime()) ? Date.now() : end.getTime();
  const lastDay = Date.UTC(new Date(last).getUTCFullYear(), new Date(last).getUTCMonth(), new Date(last).getUTCDate());
  return Array.from({ length: Math.max(1, summary.period_days) }, (_, i) =>
    new Date(lastDay - (summary.period_days - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
}

/** Per day and per source or model: cost and tokens, zero on days without calls. */
function buildSeries(summary: Summary, split: Split) {
  const days = periodDays(summary);
  const index = new Map(days.map((d, i) => [d, i]));
  const keys = [...new Set(summary.daily_usage.map((r) => r[split]))].sort();
  const cost = new Map(keys.map((k) => [k, days.map(() => 0)]));
  const tok = new Map(keys.map((k) => [k, days.map(() => 0)]));
  for (const r of summary.daily_usage) {
    const i = index.get(r.day);
    if (i === undefined) continue;
    cost.get(r[split])![i]! += r.cost_usd;
    tok.get(r[split])![i]! += r.total_tokens;
  }
  const x = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
  const toSeries = (m: Map<string, number[]>): LineSeries[] => keys.map((k) => ({ label: k, values: m.get(k)! }));
  return { x, cost: toSeries(cost), tokens: toSeries(tok) };
}

export default function LlmCostPage() {
  const [filters, setFilters] = useUrlState(DEFAULTS);
  const days = PERIODS.includes(filters.days as string) ? Number(filters.days) : 30;
  const split: Split = filters.split === 'model' ? 'model' : 'source';
  const summary = useApi(summaryEp, { query: { days } }, { placeholderData: (p) => p });
  const byModel = useApi(byModelEp, { query: { days } }, { placeholderData: (p) => p });
  const pricing = useApi(pricingEp);

  return (
    <section className="llm-cost-page" aria-labelledby="llm-cost-title">
      <h1 id="llm-cost-title">LLM cost</h1>
      <p className="muted">
        What the chat and the agents (patrol, investigations, AI grouping) spent on model calls, from the usage ledger and the price list below. A period is
        whole UTC days, today's so far included (the issue and patrol lists count back 24 hours a day from now).
      </p>
      <div className="toolbar">
        <label>
          Period
          <select value={String(days)} onChange={(e) => setFilters({ days: e.target.value })}>
            {PERIODS.map((p) => (
              <option key={p} value={p}>
                Last {p} days
              </option>
            ))}
          </select>
        </label>
        <label>
          Charts split by
          <select value={split} onChange={(e) => setFilters({ split: e.target.value })}>
            <option value="source">Source (chat, agent)</option>
            <option value="model">Model</option>
          </select>
        </label>
      </div>

      {summary.isPending ? (
        <Loading what="LLM usage" />
      ) : summary.isError ? (
        <Problem error={summary.error} retry={() => void summary.refetch()} />
      ) : (
        <SummaryView summary={summary.data} split={split} />
      )}

      <h2 id="by-model-title">By model</h2>
      {byModel.isPending ? (
        <Loading what="usage by model" />
      ) : byModel.isError ? (
        <Problem error={byModel.error} retry={() => void byModel.refetch()} />
      ) : byModel.data.by_model.length === 0 ? (
        <Empty>No model calls in the last {days} days.</Empty>
      ) : (
        <ScrollRegion label="Usage by model">
          <table className="llm-table">
            <caption className="visually-hidden">Usage by model over the last {days} days</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" className="num">
                  Runs
                </th>
                <th scope="col" className="num">
                  Input tokens
                </th>
                <th scope="col" className="num">
                  Output tokens
                </th>
                <th scope="col" className="num">
                  Total tokens
                </th>
                <th scope="col" className="num">
                  Cost
                </th>
                <th scope="col" className="num">
                  Avg duration
                </th>
              </tr>
            </thead>
            <tbody>
              {byModel.data.by_model.map((m) => (
                <tr key={m.model}>
                  <th scope="row">{m.model}</th>
                  <td className="num">{count(m.runs)}</td>
                  <td className="num">{tokens(m.input_tokens)}</td>
                  <td className="num">{tokens(m.output_tokens)}</td>
                  <td className="num">{tokens(m.total_tokens)}</td>
                  <td className="num">{usd(m.cost_usd)}</td>
                  <td className="num">{seconds(m.avg_duration_s)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}

      <h2 id="pricing-title">Pricing</h2>
      {pricing.isPending ? (
        <Loading what="the price list" />
      ) : pricing.isError ? (
        <Problem error={pricing.error} retry={() => void pricing.refetch()} />
      ) : pricing.data.pricing.length === 0 ? (
        <Empty>No prices configured: every call counts as $0 until the model's price is set.</Empty>
      ) : (
        <ScrollRegion label="Model prices">
          <table className="llm-table">
            <caption className="visually-hidden">Model prices in US dollars per million tokens</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" className="num">
                  Input per 1M tokens
                </th>
                <th scope="col" className="num">
                  Output per 1M tokens
                </th>
              </tr>
            </thead>
            <tbody>
              {pricing.data.pricing.map((p) => (
                <tr key={p.model}>
                  <th scope="row">{p.model}</th>
                  <td className="num">{usd(p.input_per_mtok)}</td>
                  <td className="num">{usd(p.output_per_mtok)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
    </section>
  );
}

/** The AI workers' day against AGENT_DAILY_BUDGET_USD: reached, the patrol, investigations and AI grouping run their rules engines. */
function AgentBudgetTile({ budget }: { budget: Summary['agent_budget'] }) {
  const reached = budget.daily_usd > 0 && budget.spent_today_usd >= budget.daily_usd;
  return (
    <li className={`tile${reached ? ' tone-warning' : ''}`}>
      <span className="value">{usd(budget.spent_today_usd)}</span>
      <span className="label">
        {budget.daily_usd === 0
          ? 'Agents today (UTC): no daily budget is set'
          : reached
            ? `Agents today (UTC): the ${usd(budget.daily_usd)} daily budget is reached, so the patrol, investigations and AI grouping run their rules until 00:00 UTC`
            : `Agents today (UTC), of a ${usd(budget.daily_usd)} daily budget`}
      </span>
    </li>
  );
}

function SummaryView({ summary, split }: { summary: Summary; split: Split }) {
  const t = summary.totals;
  const series = useMemo(() => buildSeries(summary, split), [summary, split]);
  return (
    <>
      <ul className="tiles llm-tiles" aria-label="Totals">
        <li className="tile">
          <span className="value">{usd(t.cost_usd)}</span>
          <span className="label">Cost, last {summary.period_days} days</span>
        </li>
        <li className="tile">
          <span className="value">{usd(summary.monthly_projection_usd)}</span>
          <span className="label">Monthly projection (30 × the daily cost since the period's first call)</span>
        </li>
        <li className="tile">
          <span className="value">{count(t.runs)}</span>
          {/* No run, no average: "$0.00 each" would read as runs that cost nothing. */}
          <span className="label">{t.runs > 0 ? `Runs (${usd(t.avg_cost_per_run)} each on average)` : 'Runs'}</span>
        </li>
        <li className="tile">
          <span className="value">{compact(t.total_tokens)}</span>
          <span className="label">
            Tokens ({compact(t.input_tokens)} in, {compact(t.output_tokens)} out)
          </span>
        </li>
        <li className="tile">
          <span className="value">{count(t.errors)}</span>
          <span className="label">Failed calls</span>
        </li>
        <AgentBudgetTile budget={summary.agent_budget} />
      </ul>
      {summary.unpriced_models.length > 0 && (
        <p className="notice" role="note">
          No price is set for {summary.unpriced_models.join(', ')}: their calls count as $0 in these figures.
        </p>
      )}
      {summary.daily_usage.length === 0 ? (
        <Empty>No model calls in the last {summary.period_days} days. Usage is recorded when the chat answers or an agent (patrol, investigation) runs.</Empty>
      ) : (
        <div className="grid-2 llm-charts">
          <LineChart title={`Daily cost by ${split}`} x={series.x} series={series.cost} formatY={usd} formatTick={usd} />
          <LineChart title={`Daily tokens by ${split}`} x={series.x} series={series.tokens} formatY={compact} />
        </div>
      )}
    </>
  );
}
