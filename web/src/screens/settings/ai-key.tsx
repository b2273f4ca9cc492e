// Settings → AI: the workspace's own provider key (PUT and DELETE /v1/ai/key). Its calls go to
// the workspace's own account at the provider and cost nothing here. The key is never shown again:
// the screen shows its last 4 characters and its status; a key the provider refused is turned off
// (admins are notified, ai_key_failed) and the screen says why, until it is replaced or removed.
import { type FormEvent, useState } from 'react';
import { type AiConfig, aiErrorText, useRemoveAiKey, useSetAiKey } from '../../data/ai';
import { ApiError } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { ConfirmButton, fieldError, SelectField, TextField } from '../../ui/form';

type Provider = 'openai' | 'anthropic';

export function OwnKey({ config }: { config: AiConfig }) {
  const ws = useWorkspace();
  const setKey = useSetAiKey(ws);
  const removeKey = useRemoveAiKey(ws);
  const key = config.own_key;
  const [provider, setProvider] = useState<Provider>(key?.provider ?? 'openai');
  const [baseUrl, setBaseUrl] = useState(key?.base_url ?? '');
  const [apiKey, setApiKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setSaved(null);
    if (!apiKey.trim()) {
      setError(
        new ApiError(422, 'validation_failed', 'Paste the key.', null, [
          { location: 'body.api_key', message: 'Paste the key.' },
        ]),
      );
      return;
    }
    try {
      const k = await setKey.mutateAsync({ provider, api_key: apiKey.trim(), base_url: baseUrl.trim() || null });
      setApiKey('');
      setSaved(`Key ending in ${k.last4} saved: the workspace's AI calls use it now.`);
    } catch (err) {
      setError(err);
    }
  };

  const fieldErrors = ['api_key', 'base_url', 'provider'].some((f) => fieldError(error, f));
  return (
    <section className="ai-box" aria-labelledby="ai-key-title">
      <h2 id="ai-key-title">Your own provider key</h2>
      <p className="hint">
        With a key of your own, the workspace's AI calls go to your account at the provider and cost nothing here. It is
        stored encrypted and never shown again.
      </p>
      {key && (
        <dl className="ai-status">
          <div>
            <dt>Key</dt>
            <dd>
              {key.provider === 'anthropic' ? 'Anthropic' : 'OpenAI-compatible'}, ending in <code>{key.last4}</code>
              {key.base_url ? (
                <>
                  {' '}
                  at <code>{key.base_url}</code>
                </>
              ) : null}
            </dd>
          </div>
          <div>
            <dt>Status</dt>
            <dd className={key.status === 'active' ? 'ai-on' : 'ai-off'}>
              {key.status === 'active'
                ? 'In use'
                : `Turned off: the provider refused it${key.error ? ` (${key.error})` : ''}. Replace it with a working key, or remove it to use the server's provider.`}
            </dd>
          </div>
        </dl>
      )}
      <form onSubmit={(e) => void submit(e)} aria-label={key ? 'Replace the key' : 'Add a key'} noValidate>
        <SelectField
          label="Provider"
          value={provider}
          onChange={(e) => setProvider(e.target.value as Provider)}
          options={[
            ['openai', 'OpenAI or an OpenAI-compatible server'],
            ['anthropic', 'Anthropic'],
          ]}
          error={fieldError(error, 'provider')}
        />
        <TextField
          label="Server address (optional)"
          type="url"
          value={baseUrl}
          placeholder={provider === 'openai' ? 'https://api.openai.com/v1' : 'https://api.anthropic.com'}
          onChange={(e) => setBaseUrl(e.target.value)}
          hint="Only for Azure OpenAI, a vLLM or Ollama server, or a proxy: the API's address."
          error={fieldError(error, 'base_url')}
        />
        <TextField
          label="API key"
          type="password"
          autoComplete="off"
          value={apiKey}
          onChange={(e) => setApiKey(e.target.value)}
          hint={key ? 'The new key replaces the one in use.' : undefined}
          error={fieldError(error, 'api_key')}
        />
        <div className="ai-key-actions">
          <button type="submit" className="primary" disabled={setKey.isPending}>
            {setKey.isPending ? 'Saving…' : key ? 'Replace the key' : 'Save the key'}
          </button>
          {key && (
            <ConfirmButton
              title="Remove your own key?"
              description="The workspace's AI calls go to the server's provider again (charged), or AI stops when the server has none."
              confirm="Remove the key"
              onConfirm={async () => {
                await removeKey.mutateAsync();
                setSaved('Key removed.');
              }}
            >
              Remove the key
            </ConfirmButton>
          )}
        </div>
        {error && !fieldErrors ? (
          <p className="error" role="alert">
            Could not save the key: {aiErrorText(error)}
          </p>
        ) : null}
        <p className="sent" role="status">
          {saved}
        </p>
      </form>
    </section>
  );
}
