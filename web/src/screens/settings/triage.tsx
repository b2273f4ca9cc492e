// Settings → Triage (docs/app.md "Triage"): what AI triage sets on its own and from which
// confidence (GET/PATCH /v1/triage: auto_triage, fields, threshold, assign_after_triage), and the
// engine that decides: provider, model, whether it is connected and, for the dedicated engine, its
// training (engine.training: learning until it has `needed` solved tickets, then ready, with its
// accuracy per field on the workspace's own held-out tickets). Owners and admins change it; others
// see it read-only. Every refusal of the API is shown at its field.
import { type FormEvent, useState } from 'react';
import {
  percent,
  type TriageField,
  type TriageSettings,
  type TriageTraining,
  useSaveTriage,
  useTriageSettings,
} from '../../data/triage';
import { errorText } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { when } from '../../lib/format';
import { isAdmin, useRole } from '../../lib/role';
import { CheckboxField, fieldError } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import type { SectionProps } from './section';
import './ai.css';

const FIELDS: Array<[TriageField, string]> = [
  ['priority', 'Priority (only ever raised)'],
  ['severity', 'Severity (set when empty, else only raised)'],
  ['labels', 'Labels (only added)'],
  ['team', 'Team (only when the ticket has none)'],
];

export default function TriageSection(_: SectionProps) {
  const ws = useWorkspace();
  const role = useRole();
  const admin = isAdmin(role);
  const triage = useTriageSettings(ws);
  const t = triage.data;
  return (
    <>
      <PageTitle>Triage</PageTitle>
      <p className="hint">
        AI triage decides a new ticket's priority, severity, labels and team. What it is sure enough of is set; the rest
        is suggested on the ticket, where an agent accepts or dismisses it.
      </p>
      {triage.error ? <ErrorNote error={triage.error} what="Could not load the triage settings" /> : null}
      {!t ? (
        !triage.error && <Loading />
      ) : (
        <>
          <Engine settings={t} />
          {role !== null && !admin && <ReadOnlyNote what="change triage" />}
          <TriageForm initial={t} readOnly={!admin} />
        </>
      )}
    </>
  );
}

const PROVIDER: Record<string, string> = {
  dedicated: "The workspace's own engine, trained on its solved tickets",
  llm: 'The language model',
  none: 'None',
};

function Engine({ settings: s }: { settings: TriageSettings }) {
  const e = s.engine;
  return (
    <section className="ai-box" aria-labelledby="triage-engine-title">
      <h2 id="triage-engine-title">Engine</h2>
      <dl className="ai-status">
        <div>
          <dt>Decides</dt>
          <dd>{PROVIDER[e.provider] ?? e.provider}</dd>
        </div>
        {e.provider !== 'none' && (
          <div>
            <dt>Model</dt>
            <dd>{e.model || 'none'}</dd>
          </div>
        )}
        <div>
          <dt>Status</dt>
          <dd className={e.connected ? 'ai-on' : 'ai-off'}>
            {e.connected
              ? 'Connected'
              : e.provider === 'none'
                ? 'No engine: triage is off'
                : 'Configured, not reached yet (the first run connects)'}
          </dd>
        </div>
      </dl>
      {e.training && <Training t={e.training} />}
    </section>
  );
}

const FIELD_NAME: Record<string, string> = {
  priority: 'Priority',
  severity: 'Severity',
  type_label: 'Type',
  label: 'Label',
  team: 'Team',
  spam: 'Spam',
  language: 'Language',
  sentiment: 'Sentiment',
  category: 'Category',
  needs_human: 'Needs a person',
  sla_risk: 'SLA risk',
};

function Training({ t }: { t: TriageTraining }) {
  const accuracy = Object.entries(t.accuracy ?? {});
  return (
    <section aria-labelledby="triage-training-title">
      <h3 id="triage-training-title">Learning from your tickets</h3>
      {t.status === 'learning' ? (
        <>
          <p>
            Learning: {t.solved} of {t.needed} solved tickets. It decides once {t.needed} tickets are solved; until then
            the language model decides, if there is one.
          </p>
          <progress max={t.needed} value={Math.min(t.solved, t.needed)} aria-label="Solved tickets learned from">
            {t.solved} of {t.needed}
          </progress>
        </>
      ) : (
        <p>
          Ready: learned from {t.trained_on.toLocaleString('en')} of {t.solved.toLocaleString('en')} solved tickets
          {t.trained_at ? (
            <>
              , trained <time dateTime={t.trained_at}>{when(t.trained_at)}</time>
            </>
          ) : null}
          .
        </p>
      )}
      {accuracy.length > 0 && (
        <table className="triage-accuracy">
          <caption>Accuracy on your own held-out tickets (tickets it did not learn from)</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Right</th>
            </tr>
          </thead>
          <tbody>
            {accuracy.map(([field, a]) => (
              <tr key={field}>
                <th scope="row">{FIELD_NAME[field] ?? field}</th>
                <td>{percent(a)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function TriageForm({ initial, readOnly }: { initial: TriageSettings; readOnly: boolean }) {
  const ws = useWorkspace();
  const save = useSaveTriage(ws);
  const [auto, setAuto] = useState(initial.auto_triage);
  const [fields, setFields] = useState<TriageField[]>(initial.fields);
  const [threshold, setThreshold] = useState(String(Math.round(initial.threshold * 100)));
  const [assign, setAssign] = useState(initial.assign_after_triage);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (readOnly) return;
    setError(null);
    setSaved(null);
    try {
      await save.mutateAsync({
        auto_triage: auto,
        fields,
        assign_after_triage: assign,
        threshold: Number(threshold) / 100,
      });
      setSaved('Saved.');
    } catch (err) {
      setError(err);
    }
  };
  const thresholdError = fieldError(error, 'threshold');
  const toggle = (f: TriageField, on: boolean) =>
    setFields(on ? FIELDS.map(([x]) => x).filter((x) => x === f || fields.includes(x)) : fields.filter((x) => x !== f));

  return (
    <form className="ai-box" onSubmit={(e) => void submit(e)} aria-labelledby="triage-settings-title" noValidate>
      <h2 id="triage-settings-title">Settings</h2>
      <fieldset disabled={readOnly} className="ai-fields triage-fieldset">
        <CheckboxField
          label="Triage new tickets automatically"
          checked={auto}
          onChange={(e) => setAuto(e.target.checked)}
          hint="As each ticket arrives. Agents can always run triage on a ticket (Shift+T)."
        />
        <fieldset className="ai-fields">
          <legend>What triage may set on its own</legend>
          {FIELDS.map(([f, label]) => (
            <CheckboxField
              key={f}
              label={label}
              checked={fields.includes(f)}
              onChange={(e) => toggle(f, e.target.checked)}
            />
          ))}
          <p className="hint">The rest is suggested on the ticket. Spam is only ever suggested.</p>
        </fieldset>
        <div className="field">
          <label htmlFor="triage-threshold">Confidence needed to set a field (%)</label>
          <input
            id="triage-threshold"
            type="number"
            inputMode="numeric"
            min={50}
            max={99}
            step={1}
            value={threshold}
            onChange={(e) => setThreshold(e.target.value)}
            aria-describedby={`triage-threshold-hint${thresholdError ? ' triage-threshold-error' : ''}`}
            aria-invalid={thresholdError ? true : undefined}
          />
          <p id="triage-threshold-hint" className="hint">
            50 to 99. Below it, a decision is a suggestion. The language model's decisions have no confidence and apply
            as they are.
          </p>
          {thresholdError && (
            <p id="triage-threshold-error" className="field-error">
              {thresholdError}
            </p>
          )}
        </div>
        <CheckboxField
          label="Assign after triage"
          checked={assign}
          onChange={(e) => setAssign(e.target.checked)}
          hint="When triage set the team, the assignment mode picks an agent of that team."
        />
      </fieldset>
      {!readOnly && (
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save'}
        </button>
      )}
      {error && !thresholdError ? (
        <p className="error" role="alert">
          Could not save the triage settings: {errorText(error)}
        </p>
      ) : null}
      <p className="sent" role="status">
        {saved}
      </p>
    </form>
  );
}
