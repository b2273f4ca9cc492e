// The widget's stylesheet, inside its shadow root: nothing here reaches the host page, and the
// host page's rules do not reach in. What the host element inherits (font, colour, line height,
// alignment…) would still flow in, so :host resets everything and .root sets each of them.
//
// Under any Content-Security-Policy (docs/widget.md "Content-Security-Policy"): the sheet is a
// constructed stylesheet adopted by the shadow root, which a policy without 'unsafe-inline' does
// not block (a <style> element it does), and the only style set from script is the brand colour,
// through the CSSOM (not a style attribute). Browsers without constructed stylesheets (Safari
// before 16.4) get a <style> element carrying the script tag's nonce.
//
// Colours are variables with a dark set for visitors whose system is dark (prefers-color-scheme).

/** Puts the stylesheet into the shadow root. */
export function adoptStyles(root: ShadowRoot, nonce: string): void {
  if ('adoptedStyleSheets' in root && 'replaceSync' in CSSStyleSheet.prototype) {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    root.adoptedStyleSheets = [sheet];
    return;
  }
  const style = document.createElement('style');
  if (nonce) style.nonce = nonce;
  style.textContent = CSS;
  root.appendChild(style);
}

/** The colour text needs on the brand colour: white or near-black, whichever contrasts more. */
export function onBrand(hex: string): string {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex.trim());
  if (!m) return '#ffffff';
  const n = Number.parseInt(m[1]!, 16);
  const lin = (c: number) => {
    const v = c / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  const l = 0.2126 * lin((n >> 16) & 255) + 0.7152 * lin((n >> 8) & 255) + 0.0722 * lin(n & 255);
  const withWhite = 1.05 / (l + 0.05);
  const withDark = (l + 0.05) / 0.0625; // #111827's luminance ≈ 0.0125
  return withWhite >= withDark ? '#ffffff' : '#111827';
}

export const CSS = `
:host{all:initial;display:block}
.root{--brand:#2563eb;--on-brand:#fff;--fg:#111827;--strong:#374151;--muted:#4b5563;--bg:#fff;--bg-soft:#f9fafb;--line:#e5e7eb;--field:#9ca3af;--chip:#f3f4f6;--link:#1e40af;--warn-bg:#fef3c7;--warn-fg:#78350f;--warn-line:#fde68a;--err-bg:#fee2e2;--err-fg:#7f1d1d;--err:#b91c1c;color-scheme:light;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:var(--fg);text-align:left;letter-spacing:normal;word-spacing:normal;text-transform:none;font-style:normal;font-weight:400;direction:ltr;visibility:visible}
@media (prefers-color-scheme:dark){.root{--fg:#f3f4f6;--strong:#e5e7eb;--muted:#cbd5e1;--bg:#1f2937;--bg-soft:#111827;--line:#374151;--field:#6b7280;--chip:#374151;--link:#93c5fd;--warn-bg:#422006;--warn-fg:#fde68a;--warn-line:#713f12;--err-bg:#450a0a;--err-fg:#fecaca;--err:#fca5a5;color-scheme:dark}}
.root *,.root *::before,.root *::after{box-sizing:border-box}
button,input,textarea{font:inherit;color:inherit;margin:0}
button{cursor:pointer}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.sr{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.launcher{position:fixed;right:20px;bottom:20px;z-index:2147483000;width:56px;height:56px;border-radius:50%;border:0;background:var(--brand);color:var(--on-brand);box-shadow:0 4px 14px rgba(0,0,0,.25);display:flex;align-items:center;justify-content:center}
.launcher svg{width:28px;height:28px}
.badge{position:absolute;top:-4px;right:-4px;min-width:22px;height:22px;padding:0 6px;border-radius:11px;background:#b91c1c;color:#fff;font-size:12px;font-weight:700;line-height:22px;text-align:center}
.panel{position:fixed;right:20px;bottom:88px;z-index:2147483000;width:370px;max-width:calc(100vw - 24px);height:580px;max-height:calc(100vh - 110px);background:var(--bg);border-radius:14px;box-shadow:0 10px 40px rgba(0,0,0,.28);display:flex;flex-direction:column;overflow:hidden}
.panel.drop{outline:3px dashed var(--brand);outline-offset:-6px}
@media (max-width:480px){.panel{right:0;bottom:0;width:100vw;max-width:100vw;height:100%;max-height:100%;border-radius:0}}
.head{background:var(--brand);color:var(--on-brand);padding:12px 12px 12px 16px;display:flex;align-items:center;gap:8px}
.head h2{font-size:16px;font-weight:700;margin:0;flex:1;min-width:0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.head p{margin:2px 0 0;font-size:12px}
.head .titles{flex:1;min-width:0}
.icon{background:transparent;border:0;color:inherit;width:36px;height:36px;border-radius:8px;display:flex;align-items:center;justify-content:center;flex:none}
.icon:hover{background:rgba(127,127,127,.2)}
.icon svg{width:20px;height:20px}
.agents{display:flex;margin-top:4px}
.avatar{width:28px;height:28px;border-radius:50%;flex:none;object-fit:cover;background:var(--line);color:var(--strong);font-size:12px;font-weight:700;display:flex;align-items:center;justify-content:center}
.agents .avatar{width:22px;height:22px;font-size:10px;border:2px solid var(--brand);margin-right:-6px}
.banner{padding:8px 16px;font-size:13px;background:var(--warn-bg);color:var(--warn-fg);border-bottom:1px solid var(--warn-line)}
.alert{padding:8px 12px 8px 16px;font-size:13px;background:var(--err-bg);color:var(--err-fg);display:flex;gap:8px;align-items:flex-start}
.alert p{margin:0;flex:1}
.alert button{background:transparent;border:0;text-decoration:underline;padding:0}
.body{flex:1;overflow-y:auto;padding:16px;background:var(--bg-soft)}
.greeting{background:var(--bg);border:1px solid var(--line);border-radius:12px;padding:12px 14px;margin:0 0 16px;white-space:pre-wrap}
.primary{background:var(--brand);color:var(--on-brand);border:0;border-radius:10px;padding:10px 16px;font-weight:600}
.primary[disabled]{opacity:.6;cursor:default}
.list{list-style:none;margin:16px 0 0;padding:0}
.list h3{font-size:13px;color:var(--muted);margin:0 0 8px}
.conv{width:100%;text-align:left;background:var(--bg);border:1px solid var(--line);border-radius:10px;padding:10px 12px;margin-bottom:8px;display:flex;gap:8px;align-items:center}
.conv:hover{border-color:var(--brand)}
.conv .s{flex:1;min-width:0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;font-weight:600}
.conv .d{font-size:12px;color:var(--muted)}
.dot{min-width:20px;height:20px;border-radius:10px;background:#b91c1c;color:#fff;font-size:11px;font-weight:700;line-height:20px;text-align:center;padding:0 5px}
.log{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:10px}
.msg{display:flex;gap:8px;align-items:flex-end;max-width:88%}
.msg.me{align-self:flex-end;flex-direction:row-reverse}
.bubble{background:var(--bg);border:1px solid var(--line);border-radius:14px 14px 14px 4px;padding:8px 12px;min-width:0}
.me .bubble{background:var(--brand);color:var(--on-brand);border-color:transparent;border-radius:14px 14px 4px 14px}
.who{font-size:12px;font-weight:600;color:var(--strong);margin:0 0 2px}
.text{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
.time{font-size:11px;color:var(--muted);margin:4px 0 0}
.me .time{color:inherit}
.files{list-style:none;margin:6px 0 0;padding:0}
.files a{color:inherit;text-decoration:underline;overflow-wrap:anywhere}
.files img{display:block;max-width:200px;max-height:160px;border-radius:8px;margin-top:4px}
.failed{font-size:12px;color:var(--err);margin:4px 0 0}
.me .failed{color:inherit;font-weight:700}
.failed button{background:transparent;border:0;color:inherit;text-decoration:underline;padding:0;margin-left:6px;font-weight:700}
.typing{font-size:12px;color:var(--muted);min-height:18px;margin:8px 0 0}
.rate{font-size:14px;margin:8px 0 0;padding:8px 12px;border:1px solid var(--line);border-radius:8px}
.rate a{color:var(--link)}
.foot{border-top:1px solid var(--line);background:var(--bg);padding:10px 12px}
.suggest{margin:0 0 8px;padding:0;list-style:none}
.suggest h3{font-size:12px;color:var(--muted);margin:0 0 4px;font-weight:600}
.suggest a{display:block;color:var(--link);text-decoration:underline;padding:3px 0}
.composer{display:flex;gap:6px;align-items:flex-end}
.composer textarea{flex:1;resize:none;min-height:40px;max-height:120px;border:1px solid var(--field);border-radius:10px;padding:9px 10px;background:var(--bg)}
.composer .icon{color:var(--strong)}
.chips{display:flex;flex-wrap:wrap;gap:6px;list-style:none;margin:0 0 8px;padding:0}
.chip{display:flex;align-items:center;gap:4px;background:var(--chip);border-radius:8px;padding:2px 4px 2px 8px;font-size:12px;max-width:100%}
.chip span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.chip .err{color:var(--err)}
.chip .icon{width:24px;height:24px}
.email label{display:block;font-weight:600;margin:0 0 4px}
.email p{margin:0 0 8px;font-size:13px;color:var(--strong)}
.email input{width:100%;border:1px solid var(--field);border-radius:10px;padding:9px 10px;margin:0 0 8px;background:var(--bg)}
.brand{font-size:11px;color:var(--muted);text-align:center;margin:6px 0 0}
`;
