// Settings → AI (docs/app.md "AI"), owners and admins: whether AI is on and through which
// provider and models (GET /v1/ai/config); the choices (PATCH /v1/ai/settings): the models, each
// with its typical cost (GET /v1/ai/models), tone, instructions, reply language, the feature
// switches and the widget's monthly cap; the workspace's own provider key (ai-key.tsx). Every
// refusal of the API is shown at its field. Others see the status only.
import { type FormEvent, useId, useState } from 'react';
import {
  type AiConfig,
  type AiModel,
  type AiSettings,
  aiErrorText,
  LANGUAGES,
  languageName,
  useAiConfig,
  useAiModels,
  useAiSettings,
  useSaveAiSettings,
} from '../../data/ai';
import { useWorkspace } from '../../lib/context';
import { isAdmin, useRole } from '../../lib/role';
import { CheckboxField, fieldError, SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle } from '../../ui/page';
import { OwnKey } from './ai-key';
import './ai.css';

export default function AiSection() {
  const ws = useWorkspace();
  const role = useRole();
  const admin = isAdmin(role);
  const config = useAiConfig(ws);
  const c = config.data;
  const settings = useAiSettings(ws, admin && !!c?.provider);
  return (
    <>
      <PageTitle>AI</PageTitle>
      <p className="hint">
        Drafted replies, summaries, answers about a ticket, rewrites and translations for agents, on the ticket page and
        in the knowledge base.
      </p>
      {config.error ? <ErrorNote error={config.error} what="Could not load the AI settings" /> : null}
      {!c ? (
        !config.error && <Loading />
      ) : (
        <>
          <Status config={c} />
          {role !== null && !admin ? (
            <p className="hint">Only owners and admins can change the AI settings.</p>
          ) : (
            <>
              {c.provider &&
                (settings.error ? (
                  <ErrorNote error={settings.error} what="Could not load the AI settings" />
                ) : settings.data ? (
                  <SettingsForm initial={settings.data} config={c} />
                ) : (
                  <Loading />
                ))}
              <OwnKey config={c} />
            </>
          )}
        </>
      )}
    </>
  );
}

const PROVIDER: Record<string, string> = { openai: 'OpenAI-compatible', anthropic: 'Anthropic' };

function Status({ config: c }: { config: AiConfig }) {
  return (
    <section className="ai-box" aria-labelledby="ai-status-title">
      <h2 id="ai-status-title">Status</h2>
      {!c.provider ? (
        <p>
          No AI provider: the server has none set up (its operator sets <code>AI_PROVIDER</code>,{' '}
          <code>AI_BASE_URL</code> and <code>AI_API_KEY</code>), and the workspace has no key of its own. Add your own
          key below to turn AI on.
        </p>
      ) : (
        <dl className="ai-status">
          <div>
            <dt>AI</dt>
            <dd className={c.enabled ? 'ai-on' : 'ai-off'}>{c.enabled ? 'On' : 'Off in this workspace'}</dd>
          </div>
          <div>
            <dt>Provider</dt>
            <dd>
              {PROVIDER[c.provider] ?? c.provider}
              {c.own_key?.status === 'active' ? ', your own key' : ", the server's"}
            </dd>
          </div>
          <div>
            <dt>Models</dt>
            <dd>
              {c.models.default ?? 'none'} for drafts and answers; {c.models.fast ?? 'none'} for the rest
            </dd>
          </div>
          <div>
            <dt>Costs</dt>
            <dd>
              {c.metered
                ? `Charged per call: a drafted reply about ${usd(c.costs.draft_reply)}, a summary about ${usd(c.costs.summarize)}.`
                : 'Nothing is charged here: calls go to your own key.'}
            </dd>
          </div>
        </dl>
      )}
    </section>
  );
}

const money = new Intl.NumberFormat('en', { style: 'currency', currency: 'USD', maximumSignificantDigits: 2 });
/** Dollars, two significant digits ($0.0042, $0.03). */
export const usd = (n: number) => money.format(n);

/** A model choice: its name and what a typical reply costs on it. */
function modelOption(m: AiModel): [string, string] {
  const cost = m.typical_reply_usd === null ? 'price not known' : `about ${usd(m.typical_reply_usd)} a reply`;
  return [m.id, `${m.name} (${m.vendor}): ${cost}`];
}

const TONES = ['friendly', 'professional', 'concise'];
const FEATURES: Array<[keyof AiSettings['features'], string, string]> = [
  ['auto_triage', 'Triage new tickets', 'Priority, labels and team set as tickets arrive.'],
  ['auto_summarize', 'Summarize tickets as they change', 'Otherwise agents ask for a summary on the ticket page.'],
  [
    'widget_answers',
    'Answer chat visitors from the knowledge base',
    'Published articles only; a person takes over when none fits.',
  ],
  ['assistant', 'The assistant', 'Agents ask it to find and change tickets; it asks before every change.'],
];

function SettingsForm({ initial, config }: { initial: AiSettings; config: AiConfig }) {
  const ws = useWorkspace();
  const models = useAiModels(ws, true);
  const save = useSaveAiSettings(ws);
  const f = initial.features;
  const [enabled, setEnabled] = useState(f.enabled);
  const [switches, setSwitches] = useState({
    auto_triage: f.auto_triage,
    auto_summarize: f.auto_summarize,
    widget_answers: f.widget_answers,
    assistant: f.assistant,
  });
  const [choice, setChoice] = useState({
    model: initial.model,
    fast_model: initial.fast_model,
    widget_model: initial.widget_model,
  });
  const [tone, setTone] = useState(TONES.includes(f.tone) ? f.tone : 'other');
  const [toneText, setToneText] = useState(TONES.includes(f.tone) ? '' : f.tone);
  const [instructions, setInstructions] = useState(f.instructions);
  const [language, setLanguage] = useState(f.reply_language);
  const [cap, setCap] = useState(String(initial.widget_monthly_cap_usd));
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const instructionsId = useId();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setSaved(null);
    try {
      await save.mutateAsync({
        enabled,
        ...switches,
        ...choice,
        tone: tone === 'other' ? toneText : tone,
        instructions,
        reply_language: language,
        widget_monthly_cap_usd: cap.trim() === '' ? 0 : Number(cap),
      });
      setSaved('Saved.');
    } catch (err) {
      setError(err);
    }
  };

  const list = models.data?.data ?? [];
  const defaults = { model: models.data?.default, fast_model: models.data?.fast, widget_model: models.data?.default };
  const modelField = (key: keyof typeof choice, label: string, hint: string) => (
    <SelectField
      label={label}
      value={choice[key]}
      onChange={(e) => setChoice({ ...choice, [key]: e.target.value })}
      options={[
        ['', `The server's default${defaults[key] ? ` (${defaults[key]})` : ''}`],
        ...(list.some((m) => m.id === choice[key]) || !choice[key]
          ? []
          : [[choice[key], choice[key]] as [string, string]]),
        ...list.map(modelOption),
      ]}
      hint={hint}
      error={fieldError(error, key)}
    />
  );
  const languages: Array<[string, string]> = [
    ['auto', "The customer's language"],
    ...(language !== 'auto' && !LANGUAGES.includes(language) ? [language] : []).map((l): [string, string] => [
      l,
      languageName(l),
    ]),
    ...LANGUAGES.map((l): [string, string] => [l, languageName(l)]),
  ];
  const known = new Set([
    'tone',
    'instructions',
    'reply_language',
    'model',
    'fast_model',
    'widget_model',
    'widget_monthly_cap_usd',
  ]);
  const elsewhere =
    error &&
    !(error as { fields?: Array<{ location: string }> }).fields?.some((x) =>
      known.has(x.location.replace(/^body\./, '')),
    );

  return (
    <form className="ai-box" onSubmit={(e) => void submit(e)} aria-labelledby="ai-settings-title" noValidate>
      <h2 id="ai-settings-title">Settings</h2>
      <CheckboxField
        label="AI on in this workspace"
        checked={enabled}
        onChange={(e) => setEnabled(e.target.checked)}
        hint="Off, agents see no AI actions and nothing is sent to the provider."
      />
      <fieldset className="ai-fields">
        <legend>Models</legend>
        {models.error ? <ErrorNote error={models.error} what="Could not load the models" /> : null}
        {modelField('model', 'Drafts and answers', 'Drafted replies, answers about a ticket, articles.')}
        {modelField('fast_model', 'Summaries, rewrites and translations', 'Short tasks: a faster, cheaper model does.')}
        {modelField('widget_model', 'Chat widget', 'Answers to website visitors.')}
        {config.own_key?.status === 'active' && <p className="hint">On your own key, prices are your provider's.</p>}
      </fieldset>
      <fieldset className="ai-fields">
        <legend>Replies</legend>
        <SelectField
          label="Tone"
          value={tone}
          onChange={(e) => setTone(e.target.value)}
          options={[
            ['friendly', 'Friendly'],
            ['professional', 'Professional'],
            ['concise', 'Concise'],
            ['other', 'In your own words…'],
          ]}
          error={tone === 'other' ? undefined : fieldError(error, 'tone')}
        />
        {tone === 'other' && (
          <TextField
            label="Tone in your own words"
            value={toneText}
            maxLength={200}
            onChange={(e) => setToneText(e.target.value)}
            hint="Up to 200 characters, such as “warm and brief, no exclamation marks”."
            error={fieldError(error, 'tone')}
          />
        )}
        <div className="field">
          <label htmlFor={instructionsId}>Instructions</label>
          <textarea
            id={instructionsId}
            rows={5}
            value={instructions}
            onChange={(e) => setInstructions(e.target.value)}
            aria-describedby={`${instructionsId}-hint${fieldError(error, 'instructions') ? ` ${instructionsId}-error` : ''}`}
            aria-invalid={fieldError(error, 'instructions') ? true : undefined}
          />
          <p id={`${instructionsId}-hint`} className="hint">
            What every draft should know: your products, policies, how you sign off.{' '}
            {instructions.length.toLocaleString('en')} of 2,000 characters.
          </p>
          {fieldError(error, 'instructions') && (
            <p id={`${instructionsId}-error`} className="field-error">
              {fieldError(error, 'instructions')}
            </p>
          )}
        </div>
        <SelectField
          label="Reply language"
          value={language}
          onChange={(e) => setLanguage(e.target.value)}
          options={languages}
          hint="The language drafted replies are written in."
          error={fieldError(error, 'reply_language')}
        />
      </fieldset>
      <fieldset className="ai-fields">
        <legend>Features</legend>
        {FEATURES.map(([key, label, hint]) => (
          <CheckboxField
            key={key}
            label={key === 'assistant' ? `${label} (${config.assistant_name})` : label}
            checked={switches[key as keyof typeof switches]}
            onChange={(e) => setSwitches({ ...switches, [key]: e.target.checked })}
            hint={hint}
          />
        ))}
        <TextField
          label="Chat widget's monthly limit (US dollars)"
          type="number"
          inputMode="decimal"
          min={0}
          max={10000}
          step="0.01"
          value={cap}
          onChange={(e) => setCap(e.target.value)}
          hint="0 for no limit. The widget stops answering for the rest of the month (UTC) once it is reached."
          error={fieldError(error, 'widget_monthly_cap_usd')}
        />
      </fieldset>
      <button type="submit" className="primary" disabled={save.isPending}>
        {save.isPending ? 'Saving…' : 'Save'}
      </button>
      {error && elsewhere ? (
        <p className="error" role="alert">
          Could not save the AI settings: {aiErrorText(error)}
        </p>
      ) : error ? (
        <p className="error" role="alert">
          Could not save: see the fields above.
        </p>
      ) : null}
      <p className="sent" role="status">
        {saved}
      </p>
    </form>
  );
}
