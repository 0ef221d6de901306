// How an AI issue was grouped: `rules` (no LLM provider, or its answer was
// unusable) is marked plainly so nobody mistakes it for the model's judgement;
// `llm:<model>` names the model.
import './ai.css';

export function isRuleBased(groupedBy: string): boolean {
  return !groupedBy.startsWith('llm:');
}

export function GroupedBy({ value }: { value: string }) {
  if (isRuleBased(value)) {
    return (
      <span className="badge ai-grouping rules" title="Grouped by the rules engine (no language model was used)">
        Rule-based grouping
      </span>
    );
  }
  const model = value.slice('llm:'.length);
  return (
    <span className="badge ai-grouping llm" title={`Grouped by the language model ${model}`}>
      AI · {model}
    </span>
  );
}
