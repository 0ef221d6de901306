// General settings (/settings): how health scores and alert criticality are decided, by the
// rule sets or by AI. Every role reads them (they say where the scores it sees come from);
// a superadmin changes them, saved with PUT /api/settings/general.
import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { MAY_CHANGE_SETTINGS } from '../api/access';
import { ApiProblem, call, endpoint } from '../api/client';
import { useApiTagged } from '../api/hooks';
import type { Answer } from '../api/types';
import { Loading, Problem } from '../components/states';
import { useSession } from '../session';
import './general-settings.css';
import { Button } from '../components/button';

const getGeneral = endpoint<'settings', 'getGeneral'>('GET', '/api/settings/general');
const putGeneral = endpoint<'settings', 'putGeneral'>('PUT', '/api/settings/general');

type General = Answer<'settings', 'getGeneral'>;
type Method = General['health_scoring_method'];

const FIELDS: { key: keyof General; label: string; help: Record<Method, string> }[] = [
  {
    key: 'health_scoring_method',
    label: 'Health scoring method',
    help: {
      rules: 'Scores come from the health rule set (thresholds, weights, alert bands).',
      ai: 'Recorded only: scores still come from the health rule set, as scoring with the AI provider is not built yet.',
    },
  },
  {
    key: 'alert_criticality_method',
    label: 'Alert criticality method',
    help: {
      rules: 'Alert severity follows the issue rule set’s severity patterns; the patrol weighs the rule-grouped issues.',
      ai: 'The patrol weighs the AI-grouped issues (AI issues) instead of the rule-grouped ones.',
    },
  },
];
const METHODS: { value: Method; label: string }[] = [
  { value: 'rules', label: 'Rules' },
  { value: 'ai', label: 'AI' },
];

export default function GeneralSettingsPage() {
  const general = useApiTagged(getGeneral);
  const mayChange = useSession().can(...MAY_CHANGE_SETTINGS);
  return (
    <section className="settings-page" aria-labelledby="settings-title">
      <h1 id="settings-title">General settings</h1>
      <p className="muted">
        How the service decides health scores and alert criticality. The rule sets themselves are edited on the <Link to="/rules">Rules</Link> page.
        {!mayChange && ' Only a superadmin changes these settings.'}
      </p>
      {general.isPending ? (
        <Loading what="the settings" />
      ) : general.isError ? (
        <Problem error={general.error} retry={() => void general.refetch()} />
      ) : (
        <SettingsForm saved={general.data} etag={general.data.etag} refetch={() => void general.refetch()} readOnly={!mayChange} />
      )}
    </section>
  );
}

function SettingsForm({ saved, etag, refetch, readOnly }: { saved: General; etag: string | null; refetch(): void; readOnly: boolean }) {
  const client = useQueryClient();
  // The choices made here, per setting; the rest follow what is stored (a refetch never drops a choice not saved yet).
  const [chosen, setChosen] = useState<Partial<General>>({});
  const values: General = { ...saved, ...chosen };
  const setValues = (next: General | ((v: General) => General)) => {
    const full = typeof next === 'function' ? next(values) : next;
    setChosen(Object.fromEntries(Object.entries(full).filter(([k, v]) => saved[k as keyof General] !== v)));
  };
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);
  const dirty = values.health_scoring_method !== saved.health_scoring_method || values.alert_criticality_method !== saved.alert_criticality_method;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setDone(false);
    try {
      // If-Match: another superadmin's save since this page read the settings is a 409, never silently undone.
      const body = { health_scoring_method: values.health_scoring_method, alert_criticality_method: values.alert_criticality_method };
      await call(putGeneral, { body, headers: etag ? { 'if-match': etag } : {} });
      setChosen({});
      await client.invalidateQueries({ predicate: (q) => q.queryKey[1] === getGeneral.path });
      setDone(true);
    } catch (e) {
      setError(e);
      if (e instanceof ApiProblem && e.status === 409) refetch(); // shows what is stored now, the choices kept
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card settings-form" onSubmit={(e) => void submit(e)}>
      {FIELDS.map((field) => (
        <fieldset key={field.key} disabled={readOnly}>
          <legend>{field.label}</legend>
          {METHODS.map((m) => (
            <label key={m.value} className="settings-choice">
              <input
                type="radio"
                name={field.key}
                value={m.value}
                checked={values[field.key] === m.value}
                onChange={() => {
                  setDone(false);
                  setValues((v) => ({ ...v, [field.key]: m.value }));
                }}
              />{' '}
              <span>
                <strong>{m.label}</strong>
                {saved[field.key] === m.value && !readOnly && <span className="muted"> (saved)</span>}
                <br />
                <span className="muted">{field.help[m.value]}</span>
              </span>
            </label>
          ))}
        </fieldset>
      ))}
      {!readOnly && (
        <div className="settings-actions">
          <Button type="submit" className="primary" disabled={busy || !dirty}>
            {busy ? 'Saving…' : 'Save settings'}
          </Button>
          <Button type="button" disabled={busy || !dirty} onClick={() => setValues(saved)}>
            Undo changes
          </Button>
        </div>
      )}
      {done && (
        <p className="notice" role="status">
          Saved.
        </p>
      )}
      {Boolean(error) && (
        <Problem error={error}>
          {error instanceof ApiProblem && error.status === 409 && error.body.current_etag !== undefined && (
            <p className="muted">The form now shows what is stored (marked “saved”), with your choices kept: check them and save again.</p>
          )}
        </Problem>
      )}
    </form>
  );
}
