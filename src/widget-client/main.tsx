// GET /widget.js (docs/widget.md "Embedding the widget"): embedded as
//   <script src="https://help.example.com/widget.js" data-key="wk_…" async></script>
// it adds one element, <helpdesk-chat-widget>, at the end of the page's body, whose shadow root
// holds the widget (ui.tsx), and the host page's API, window.HelpdeskWidget:
//   open(), close(), toggle(), identify({user_id, user_hash, email, name, avatar_url}),
//   on(event, fn) → a function that removes fn; off(event, fn). Events: 'message' (a new message,
//   the visitor's or an agent's, in the widget's message shape), 'unread' ({count}), 'open',
//   'close', 'ready'.
// Calls made before the script ran can wait in window.HelpdeskWidget = {q: [['identify', {...}]]}:
// they are made in order once it runs. The service's address is where the script came from.
import { render } from 'preact';
import { Controller } from './controller.js';
import { adoptStyles } from './styles.js';
import type { Identity } from './types.js';
import { App } from './ui.js';

const TAG = 'helpdesk-chat-widget';

interface HostApi {
  open(): void;
  close(): void;
  toggle(): void;
  identify(identity: Identity): Promise<void>;
  on(event: string, fn: (payload: unknown) => void): () => void;
  off(event: string, fn: (payload: unknown) => void): void;
}

declare global {
  interface Window {
    HelpdeskWidget?: HostApi | { q?: Array<[string, ...unknown[]]> };
  }
}

function ourScript(): HTMLScriptElement | null {
  const current = document.currentScript;
  if (current instanceof HTMLScriptElement && current.dataset.key) return current;
  return document.querySelector<HTMLScriptElement>('script[data-key][src*="widget"]');
}

function start(): void {
  const script = ourScript();
  const key = script?.dataset.key;
  if (!script || !key) {
    console.error('HelpdeskWidget: add data-key="wk_…" (your widget key) to the widget.js script tag.');
    return;
  }
  if (customElements.get(TAG)) return; // already on this page
  // /widget.js or /widget.<hash>.js under PUBLIC_URL: the service's base address.
  const base = new URL(script.src, location.href).href.replace(/\/widget(?:\.[0-9a-f]{16})?\.js(?:[?#].*)?$/, '');
  const c = new Controller(base, key);
  // A page whose policy allows scripts by nonce gives ours one: the styles fallback takes it too.
  const nonce = script.nonce ?? '';

  class WidgetElement extends HTMLElement {
    connectedCallback(): void {
      if (this.shadowRoot) return;
      const root = this.attachShadow({ mode: 'open' });
      adoptStyles(root, nonce);
      // Preact renders into a container of its own (render() would take the root's other children).
      const mount = document.createElement('div');
      root.appendChild(mount);
      render(<App c={c} />, mount);
    }
  }
  customElements.define(TAG, WidgetElement);

  const api: HostApi = {
    open: () => c.open(),
    close: () => c.close(),
    toggle: () => c.toggle(),
    identify: (identity) => c.identify(identity ?? {}),
    on: (event, fn) => c.on(event, fn),
    off: (event, fn) => c.off(event, fn),
  };
  const queued = (window.HelpdeskWidget as { q?: Array<[string, ...unknown[]]> } | undefined)?.q ?? [];
  window.HelpdeskWidget = api;
  for (const [method, ...args] of queued) {
    const f = (api as unknown as Record<string, (...a: unknown[]) => unknown>)[method];
    if (typeof f === 'function') f(...args);
  }

  const mount = () => {
    document.body.appendChild(document.createElement(TAG));
    void c.init();
  };
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount, { once: true });
  window.dispatchEvent(new CustomEvent('helpdesk-widget:ready'));
}

start();
